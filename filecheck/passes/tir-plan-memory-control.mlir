// RUN: xtc-opt %s -p tir-plan-memory | filecheck %s

// convert-te-to-tir allocates the buffers of an scf.if's branches (and of an
// scf.while's body) before it and frees them after it, so each is live
// across the whole region: %a (used inside) and %b (a branch's) never share
// bytes, while %d, allocated after the region, reuses %a's.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    attributes {tir.arena_bytes = 512 : i64, tir.unplanned_bytes = 768 : i64}
// CHECK-NEXT:    %arena = memref.alloc() {alignment = 64 : i64} : memref<512xi8>
// CHECK-NEXT:    %[[OA:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[A:.*]] = memref.view %arena[%[[OA]]][] : memref<512xi8> to memref<64xf32>
// CHECK-NEXT:    func.call @k(%x, %[[A]])
// CHECK-NEXT:    %[[OB:.*]] = arith.constant 256 : index
// CHECK-NEXT:    %[[B:.*]] = memref.view %arena[%[[OB]]][] : memref<512xi8> to memref<64xf32>
// CHECK:         scf.if
// CHECK-NEXT:      func.call @k(%[[A]], %[[B]])
// CHECK-NEXT:      func.call @k(%[[B]], %out0)
// CHECK-NEXT:    } else {
// CHECK-NEXT:      func.call @k(%[[A]], %out0)
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[OD:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[D:.*]] = memref.view %arena[%[[OD]]][] : memref<512xi8> to memref<64xf32>
// CHECK-NEXT:    func.call @k(%out0, %[[D]])
func.func private @k(memref<64xf32>, memref<64xf32>) -> ()
func.func @main(%c: memref<i1>, %x: memref<64xf32>, %out0: memref<64xf32> {graph.output = 0 : i64}) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  func.call @k(%x, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  %b = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  %flag = memref.load %c[] : memref<i1>
  scf.if %flag {
    func.call @k(%a, %b) : (memref<64xf32>, memref<64xf32>) -> ()
    func.call @k(%b, %out0) : (memref<64xf32>, memref<64xf32>) -> ()
  } else {
    func.call @k(%a, %out0) : (memref<64xf32>, memref<64xf32>) -> ()
  }
  memref.dealloc %b : memref<64xf32>
  memref.dealloc %a : memref<64xf32>
  %d = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  func.call @k(%out0, %d) : (memref<64xf32>, memref<64xf32>) -> ()
  func.call @k(%d, %out0) : (memref<64xf32>, memref<64xf32>) -> ()
  memref.dealloc %d : memref<64xf32>
  func.return
}
