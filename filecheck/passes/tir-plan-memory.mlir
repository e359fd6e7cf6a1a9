// RUN: xtc-opt %s -p tir-plan-memory --split-input-file | filecheck %s
// Planning twice is planning once.
// RUN: xtc-opt %s -p tir-plan-memory,tir-plan-memory --split-input-file | filecheck %s

// Four buffers, live (alloc to dealloc) over positions a [0,4], b [2,7],
// c [5,10], d [8,12]: a (256 bytes) goes first at 0, b (128) overlaps a so it
// goes above it at 256, c (100 bytes, 128 rounded) shares a's bytes, d
// (32 bytes, 64 rounded) sits above c. 384 bytes instead of 576.
// CHECK-LABEL: func.func @main(%x: memref<64xf32>, %out0: memref<4x4xf16> {graph.output = 0 : i64})
// CHECK-SAME:      attributes {tir.arena_bytes = 384 : i64, tir.unplanned_bytes = 576 : i64} {
// CHECK-NEXT:    %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<384xi8>
// CHECK-NEXT:    %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[A:.*]] = memref.view %[[ARENA]][%[[OFF_A]]][] : memref<384xi8> to memref<64xf32>
// CHECK-NEXT:    func.call @xa(%x, %[[A]])
// CHECK-NEXT:    %[[OFF_B:.*]] = arith.constant 256 : index
// CHECK-NEXT:    %[[B:.*]] = memref.view %[[ARENA]][%[[OFF_B]]][] : memref<384xi8> to memref<32xf32>
// CHECK-NEXT:    func.call @ab(%[[A]], %[[B]])
// CHECK-NEXT:    %[[OFF_C:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C:.*]] = memref.view %[[ARENA]][%[[OFF_C]]][] : memref<384xi8> to memref<100xi8>
// CHECK-NEXT:    func.call @bc(%[[B]], %[[C]])
// CHECK-NEXT:    %[[OFF_D:.*]] = arith.constant 128 : index
// CHECK-NEXT:    %[[D:.*]] = memref.view %[[ARENA]][%[[OFF_D]]][] : memref<384xi8> to memref<4x4xf16>
// CHECK-NEXT:    func.call @cd(%[[C]], %[[D]])
// CHECK-NEXT:    func.call @d_out(%[[D]], %out0)
// CHECK-NEXT:    memref.dealloc %[[ARENA]] : memref<384xi8>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// Declarations have no body: nothing to plan.
// CHECK:       func.func private @xa(memref<64xf32>, memref<64xf32>) -> ()
func.func @main(%x: memref<64xf32>, %out0: memref<4x4xf16> {graph.output = 0 : i64}) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  func.call @xa(%x, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  %b = memref.alloc() {alignment = 64 : i64} : memref<32xf32>
  func.call @ab(%a, %b) : (memref<64xf32>, memref<32xf32>) -> ()
  memref.dealloc %a : memref<64xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<100xi8>
  func.call @bc(%b, %c) : (memref<32xf32>, memref<100xi8>) -> ()
  memref.dealloc %b : memref<32xf32>
  %d = memref.alloc() {alignment = 64 : i64} : memref<4x4xf16>
  func.call @cd(%c, %d) : (memref<100xi8>, memref<4x4xf16>) -> ()
  memref.dealloc %c : memref<100xi8>
  func.call @d_out(%d, %out0) : (memref<4x4xf16>, memref<4x4xf16>) -> ()
  memref.dealloc %d : memref<4x4xf16>
  func.return
}
func.func private @xa(memref<64xf32>, memref<64xf32>) -> ()
func.func private @ab(memref<64xf32>, memref<32xf32>) -> ()
func.func private @bc(memref<32xf32>, memref<100xi8>) -> ()
func.func private @cd(memref<100xi8>, memref<4x4xf16>) -> ()
func.func private @d_out(memref<4x4xf16>, memref<4x4xf16>) -> ()

// -----

// No alloc: the function is left as it is, without attributes.
// CHECK-LABEL: func.func @no_allocs(%x: memref<4xf32>, %out0: memref<4xf32> {graph.output = 0 : i64}) {
// CHECK-NEXT:    func.call @copy(%x, %out0) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @no_allocs(%x: memref<4xf32>, %out0: memref<4xf32> {graph.output = 0 : i64}) {
  func.call @copy(%x, %out0) : (memref<4xf32>, memref<4xf32>) -> ()
  func.return
}
func.func private @copy(memref<4xf32>, memref<4xf32>) -> ()

// -----

// Only %planned goes into the arena: %nested is freed inside a loop,
// %leaked is never freed; both stay allocs, and so do their deallocs.
// CHECK-LABEL: func.func @mixed(%x: memref<4xf32>, %out0: memref<4xf32> {graph.output = 0 : i64})
// CHECK-SAME:      attributes {tir.arena_bytes = 64 : i64, tir.unplanned_bytes = 64 : i64} {
// CHECK-NEXT:    %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xi8>
// CHECK-NEXT:    %nested = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    %leaked = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    %[[OFF:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[P:.*]] = memref.view %[[ARENA]][%[[OFF]]][] : memref<64xi8> to memref<4xf32>
// CHECK-NEXT:    func.call @copy(%x, %[[P]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    func.call @copy(%[[P]], %nested) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    tir.for
// CHECK-NEXT:      memref.dealloc %nested : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.call @copy(%[[P]], %out0) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    memref.dealloc %[[ARENA]] : memref<64xi8>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @mixed(%x: memref<4xf32>, %out0: memref<4xf32> {graph.output = 0 : i64}) {
  %nested = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %leaked = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %planned = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  func.call @copy(%x, %planned) : (memref<4xf32>, memref<4xf32>) -> ()
  func.call @copy(%planned, %nested) : (memref<4xf32>, memref<4xf32>) -> ()
  tir.for %i = 0 to 1 step 1 {name = "i0", kind = "serial"} {
    memref.dealloc %nested : memref<4xf32>
  }
  func.call @copy(%planned, %out0) : (memref<4xf32>, memref<4xf32>) -> ()
  memref.dealloc %planned : memref<4xf32>
  func.return
}
func.func private @copy(memref<4xf32>, memref<4xf32>) -> ()

// -----

// Sizes round up to 64 bytes (an i1 takes a byte); a zero-size buffer is
// at offset 0 and takes no room. Buffers live together stack up.
// CHECK-LABEL: func.func @sizes()
// CHECK-SAME:      attributes {tir.arena_bytes = 128 : i64, tir.unplanned_bytes = 128 : i64} {
// CHECK-NEXT:    %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128xi8>
// CHECK-NEXT:    %[[OFF_E:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %{{.*}} = memref.view %[[ARENA]][%[[OFF_E]]][] : memref<128xi8> to memref<0xf32>
// CHECK-NEXT:    %[[OFF_M:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %{{.*}} = memref.view %[[ARENA]][%[[OFF_M]]][] : memref<128xi8> to memref<3xi1>
// CHECK-NEXT:    %[[OFF_S:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %{{.*}} = memref.view %[[ARENA]][%[[OFF_S]]][] : memref<128xi8> to memref<f64>
// CHECK-NEXT:    memref.dealloc %[[ARENA]] : memref<128xi8>
// CHECK-NEXT:    func.return
func.func @sizes() {
  %empty = memref.alloc() {alignment = 64 : i64} : memref<0xf32>
  %mask = memref.alloc() {alignment = 64 : i64} : memref<3xi1>
  %scalar = memref.alloc() {alignment = 64 : i64} : memref<f64>
  memref.dealloc %scalar : memref<f64>
  memref.dealloc %mask : memref<3xi1>
  memref.dealloc %empty : memref<0xf32>
  func.return
}
