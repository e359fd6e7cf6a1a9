// RUN: xtc-opt %s -p tir-concat-in-place --split-input-file | filecheck %s
// RUN: xtc-opt %s -p tir-concat-in-place --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// Then planned: the byte buffer is one buffer of the arena.
// RUN: xtc-opt %s -p tir-concat-in-place,tir-plan-memory --split-input-file | filecheck %s --check-prefix=PLAN

// Two 1x16x4x4 inputs (1024 bytes each) concatenated along axis 1: one
// 2048-byte buffer from the first input's alloc to the output's dealloc, the
// output a view of it at 0, the inputs at 0 and 1024; no concat call. The
// second input is still read after the concat (from its view). The concat
// kernel, no longer called, is erased: it is never compiled.
// CHECK-LABEL: func.func @main(%x: memref<1x8x4x4xf32>, %out0: memref<1x8x4x4xf32> {graph.output = 0 : i64}) {
// CHECK-NEXT:    %[[RAW:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2048xi8>
// CHECK-DAG:     %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[A:.*]] = memref.view %[[RAW]][%[[OFF_A]]][] : memref<2048xi8> to memref<1x16x4x4xf32>
// CHECK-DAG:     %[[OFF_B:.*]] = arith.constant 1024 : index
// CHECK-DAG:     %[[B:.*]] = memref.view %[[RAW]][%[[OFF_B]]][] : memref<2048xi8> to memref<1x16x4x4xf32>
// CHECK-DAG:     %[[OFF_C:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C:.*]] = memref.view %[[RAW]][%[[OFF_C]]][] : memref<2048xi8> to memref<1x32x4x4xf32>
// CHECK:         func.call @conv_a(%x, %[[A]])
// CHECK-NEXT:    func.call @conv_b(%x, %[[B]])
// CHECK-NEXT:    func.call @squeeze(%[[C]], %[[B]], %out0)
// CHECK-NEXT:    memref.dealloc %[[RAW]] : memref<2048xi8>
// CHECK-NEXT:    func.return
// CHECK-NOT:   @concat_0
// REMARK-NOT:  concat-copied
// PLAN-LABEL:  func.func @main
// PLAN-SAME:       tir.arena_bytes = 2048 : i64
// PLAN-NOT:        func.call @concat_0
func.func @main(%x: memref<1x8x4x4xf32>, %out0: memref<1x8x4x4xf32> {graph.output = 0 : i64}) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<1x16x4x4xf32>
  func.call @conv_a(%x, %a) : (memref<1x8x4x4xf32>, memref<1x16x4x4xf32>) -> ()
  %b = memref.alloc() {alignment = 64 : i64} : memref<1x16x4x4xf32>
  func.call @conv_b(%x, %b) : (memref<1x8x4x4xf32>, memref<1x16x4x4xf32>) -> ()
  %c = memref.alloc() {alignment = 64 : i64} : memref<1x32x4x4xf32>
  func.call @concat_0(%a, %b, %c) : (memref<1x16x4x4xf32>, memref<1x16x4x4xf32>, memref<1x32x4x4xf32>) -> ()
  memref.dealloc %a : memref<1x16x4x4xf32>
  func.call @squeeze(%c, %b, %out0) : (memref<1x32x4x4xf32>, memref<1x16x4x4xf32>, memref<1x8x4x4xf32>) -> ()
  memref.dealloc %b : memref<1x16x4x4xf32>
  memref.dealloc %c : memref<1x32x4x4xf32>
  func.return
}
func.func private @conv_a(memref<1x8x4x4xf32>, memref<1x16x4x4xf32>) -> ()
func.func private @conv_b(memref<1x8x4x4xf32>, memref<1x16x4x4xf32>) -> ()
func.func private @concat_0(memref<1x16x4x4xf32>, memref<1x16x4x4xf32>, memref<1x32x4x4xf32>) -> () attributes {tir.concat_axis = 1 : i64}
func.func private @squeeze(memref<1x32x4x4xf32>, memref<1x16x4x4xf32>, memref<1x8x4x4xf32>) -> ()

// -----

// Along axis 2 of a 1x2x... output each input is two runs, not one: the
// concat stays, and says why.
// CHECK-LABEL: func.func @strided_places
// CHECK:         func.call @concat_1(
// REMARK:      @concat_1 stays a copy: the dimensions before its axis are not all 1 [tir-concat-in-place]
func.func @strided_places(%x: memref<1x2x4x4xf32>, %out0: memref<1x2x8x4xf32> {graph.output = 0 : i64}) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<1x2x4x4xf32>
  func.call @relu(%x, %a) : (memref<1x2x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  %c = memref.alloc() {alignment = 64 : i64} : memref<1x2x8x4xf32>
  func.call @concat_1(%a, %a, %c) : (memref<1x2x4x4xf32>, memref<1x2x4x4xf32>, memref<1x2x8x4xf32>) -> ()
  memref.dealloc %a : memref<1x2x4x4xf32>
  func.call @copy(%c, %out0) : (memref<1x2x8x4xf32>, memref<1x2x8x4xf32>) -> ()
  memref.dealloc %c : memref<1x2x8x4xf32>
  func.return
}
func.func private @relu(memref<1x2x4x4xf32>, memref<1x2x4x4xf32>) -> ()
func.func private @concat_1(memref<1x2x4x4xf32>, memref<1x2x4x4xf32>, memref<1x2x8x4xf32>) -> () attributes {tir.concat_axis = 2 : i64}
func.func private @copy(memref<1x2x8x4xf32>, memref<1x2x8x4xf32>) -> ()

// -----

// An input concatenated twice (DenseNet's feature maps) can sit in one
// output only: both concats stay. An input whose place is not 64-byte
// aligned (3 floats) stays a copy too; so does the model's own output.
// CHECK-LABEL: func.func @kept
// CHECK:         func.call @concat_2(%[[A:.*]], %[[B:.*]], %[[C:.*]])
// CHECK:         func.call @concat_2(%[[A]], %[[B]], %[[D:.*]])
// CHECK:         func.call @concat_3(
// CHECK:         func.call @concat_4(
// The calls are taken from the last (see @chain): the remarks come last first.
// REMARK:      @concat_4 stays a copy: a buffer is not allocated in the function's body [tir-concat-in-place]
// REMARK:      @concat_3 stays a copy: an input's place in the output is not 64-byte aligned [tir-concat-in-place]
// REMARK:      @concat_2 stays a copy: an input is concatenated more than once [tir-concat-in-place]
// REMARK:      @concat_2 stays a copy: an input is concatenated more than once [tir-concat-in-place]
func.func @kept(%x: memref<1x16xf32>, %y: memref<1x3xf32>, %out0: memref<1x32xf32> {graph.output = 0 : i64}) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<1x16xf32>
  func.call @f(%x, %a) : (memref<1x16xf32>, memref<1x16xf32>) -> ()
  %b = memref.alloc() {alignment = 64 : i64} : memref<1x16xf32>
  func.call @f(%x, %b) : (memref<1x16xf32>, memref<1x16xf32>) -> ()
  %c = memref.alloc() {alignment = 64 : i64} : memref<1x32xf32>
  func.call @concat_2(%a, %b, %c) : (memref<1x16xf32>, memref<1x16xf32>, memref<1x32xf32>) -> ()
  %d = memref.alloc() {alignment = 64 : i64} : memref<1x32xf32>
  func.call @concat_2(%a, %b, %d) : (memref<1x16xf32>, memref<1x16xf32>, memref<1x32xf32>) -> ()
  memref.dealloc %a : memref<1x16xf32>
  memref.dealloc %b : memref<1x16xf32>
  %y3 = memref.alloc() {alignment = 64 : i64} : memref<1x3xf32>
  func.call @g(%y, %y3) : (memref<1x3xf32>, memref<1x3xf32>) -> ()
  %e = memref.alloc() {alignment = 64 : i64} : memref<1x6xf32>
  %y4 = memref.alloc() {alignment = 64 : i64} : memref<1x3xf32>
  func.call @g(%y, %y4) : (memref<1x3xf32>, memref<1x3xf32>) -> ()
  func.call @concat_3(%y3, %y4, %e) : (memref<1x3xf32>, memref<1x3xf32>, memref<1x6xf32>) -> ()
  memref.dealloc %y3 : memref<1x3xf32>
  memref.dealloc %y4 : memref<1x3xf32>
  func.call @h(%c, %d, %e, %out0) : (memref<1x32xf32>, memref<1x32xf32>, memref<1x6xf32>, memref<1x32xf32>) -> ()
  memref.dealloc %c : memref<1x32xf32>
  memref.dealloc %d : memref<1x32xf32>
  memref.dealloc %e : memref<1x6xf32>
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x16xf32>
  func.call @f(%x, %p) : (memref<1x16xf32>, memref<1x16xf32>) -> ()
  func.call @concat_4(%x, %p, %out0) : (memref<1x16xf32>, memref<1x16xf32>, memref<1x32xf32>) -> ()
  memref.dealloc %p : memref<1x16xf32>
  func.return
}
func.func private @f(memref<1x16xf32>, memref<1x16xf32>) -> ()
func.func private @g(memref<1x3xf32>, memref<1x3xf32>) -> ()
func.func private @h(memref<1x32xf32>, memref<1x32xf32>, memref<1x6xf32>, memref<1x32xf32>) -> ()
func.func private @concat_2(memref<1x16xf32>, memref<1x16xf32>, memref<1x32xf32>) -> () attributes {tir.concat_axis = 1 : i64}
func.func private @concat_3(memref<1x3xf32>, memref<1x3xf32>, memref<1x6xf32>) -> () attributes {tir.concat_axis = 1 : i64}
func.func private @concat_4(memref<1x16xf32>, memref<1x16xf32>, memref<1x32xf32>) -> () attributes {tir.concat_axis = 1 : i64}

// -----

// A chain (DenseNet's dense block once graph-share-concat-prefix has run):
// c1 = concat(a, b), c2 = concat(c1, c), c3 = concat(c2, d), each read
// besides. Taken from the last, all are views of c3's one 256-byte buffer:
// each c at 0 (the prefix of the next), d at 192, c at 128, b at 64, a at
// 0; one alloc before a's, one dealloc after the last use; no concat call,
// and the three concat kernels erased.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[RAW:.*]] = memref.alloc() {alignment = 64 : i64} : memref<256xi8>
// CHECK-DAG:     %[[OFF_B:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[B:.*]] = memref.view %[[RAW]][%[[OFF_B]]][] : memref<256xi8> to memref<1x16xf32>
// CHECK-DAG:     %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[A:.*]] = memref.view %[[RAW]][%[[OFF_A]]][] : memref<256xi8> to memref<1x16xf32>
// CHECK:         func.call @f(%x, %[[A]])
// CHECK-NEXT:    func.call @f(%x, %[[B]])
// CHECK-DAG:     %[[OFF_C:.*]] = arith.constant 128 : index
// CHECK-DAG:     %[[C:.*]] = memref.view %[[RAW]][%[[OFF_C]]][] : memref<256xi8> to memref<1x16xf32>
// CHECK-DAG:     %[[OFF_C1:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = memref.view %[[RAW]][%[[OFF_C1]]][] : memref<256xi8> to memref<1x32xf32>
// CHECK:         func.call @g(%[[C1]], %[[C]])
// CHECK-DAG:     %[[OFF_D:.*]] = arith.constant 192 : index
// CHECK-DAG:     %[[D:.*]] = memref.view %[[RAW]][%[[OFF_D]]][] : memref<256xi8> to memref<1x16xf32>
// CHECK-DAG:     %[[OFF_C2:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C2:.*]] = memref.view %[[RAW]][%[[OFF_C2]]][] : memref<256xi8> to memref<1x48xf32>
// CHECK-DAG:     %[[OFF_C3:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C3:.*]] = memref.view %[[RAW]][%[[OFF_C3]]][] : memref<256xi8> to memref<1x64xf32>
// CHECK:         func.call @h(%[[C2]], %[[D]])
// CHECK-NEXT:    func.call @k(%[[C3]], %out0)
// CHECK-NEXT:    memref.dealloc %[[RAW]] : memref<256xi8>
// CHECK-NEXT:    func.return
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     @concat_
// REMARK-NOT:  concat-copied
// PLAN-LABEL:  func.func @chain
// PLAN-SAME:       tir.arena_bytes = 256 : i64
func.func @chain(%x: memref<1x16xf32>, %out0: memref<1x16xf32> {graph.output = 0 : i64}) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<1x16xf32>
  func.call @f(%x, %a) : (memref<1x16xf32>, memref<1x16xf32>) -> ()
  %b = memref.alloc() {alignment = 64 : i64} : memref<1x16xf32>
  func.call @f(%x, %b) : (memref<1x16xf32>, memref<1x16xf32>) -> ()
  %c1 = memref.alloc() {alignment = 64 : i64} : memref<1x32xf32>
  func.call @concat_ab(%a, %b, %c1) : (memref<1x16xf32>, memref<1x16xf32>, memref<1x32xf32>) -> ()
  memref.dealloc %a : memref<1x16xf32>
  memref.dealloc %b : memref<1x16xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<1x16xf32>
  func.call @g(%c1, %c) : (memref<1x32xf32>, memref<1x16xf32>) -> ()
  %c2 = memref.alloc() {alignment = 64 : i64} : memref<1x48xf32>
  func.call @concat_c1c(%c1, %c, %c2) : (memref<1x32xf32>, memref<1x16xf32>, memref<1x48xf32>) -> ()
  memref.dealloc %c1 : memref<1x32xf32>
  memref.dealloc %c : memref<1x16xf32>
  %d = memref.alloc() {alignment = 64 : i64} : memref<1x16xf32>
  func.call @h(%c2, %d) : (memref<1x48xf32>, memref<1x16xf32>) -> ()
  %c3 = memref.alloc() {alignment = 64 : i64} : memref<1x64xf32>
  func.call @concat_c2d(%c2, %d, %c3) : (memref<1x48xf32>, memref<1x16xf32>, memref<1x64xf32>) -> ()
  memref.dealloc %c2 : memref<1x48xf32>
  memref.dealloc %d : memref<1x16xf32>
  func.call @k(%c3, %out0) : (memref<1x64xf32>, memref<1x16xf32>) -> ()
  memref.dealloc %c3 : memref<1x64xf32>
  func.return
}
func.func private @f(memref<1x16xf32>, memref<1x16xf32>) -> ()
func.func private @g(memref<1x32xf32>, memref<1x16xf32>) -> ()
func.func private @h(memref<1x48xf32>, memref<1x16xf32>) -> ()
func.func private @k(memref<1x64xf32>, memref<1x16xf32>) -> ()
func.func private @concat_ab(memref<1x16xf32>, memref<1x16xf32>, memref<1x32xf32>) -> () attributes {tir.concat_axis = 1 : i64}
func.func private @concat_c1c(memref<1x32xf32>, memref<1x16xf32>, memref<1x48xf32>) -> () attributes {tir.concat_axis = 1 : i64}
func.func private @concat_c2d(memref<1x48xf32>, memref<1x16xf32>, memref<1x64xf32>) -> () attributes {tir.concat_axis = 1 : i64}

// -----

// A chain whose middle link is refused: c2 = concat(c1, c) would put c at
// byte 96 of c2. c3 = concat(c2, d) is views of one 192-byte buffer (d at
// 128), c1 = concat(a, b) of another (96 bytes: b at 64); the middle stays
// a copy from c1's buffer into c2's place, and its kernel stays.
// CHECK-LABEL: func.func @chain_misaligned
// CHECK-NEXT:    %[[RAW1:.*]] = memref.alloc() {alignment = 64 : i64} : memref<96xi8>
// CHECK-DAG:     %[[OFF_B:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[B:.*]] = memref.view %[[RAW1]][%[[OFF_B]]][] : memref<96xi8> to memref<1x8xf32>
// CHECK-DAG:     %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[A:.*]] = memref.view %[[RAW1]][%[[OFF_A]]][] : memref<96xi8> to memref<1x16xf32>
// CHECK-DAG:     %[[OFF_C1:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = memref.view %[[RAW1]][%[[OFF_C1]]][] : memref<96xi8> to memref<1x24xf32>
// CHECK:         func.call @f(%x, %[[A]])
// CHECK-NEXT:    func.call @e(%y, %[[B]])
// CHECK-NEXT:    %[[C:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x8xf32>
// CHECK-NEXT:    func.call @e(%y, %[[C]])
// CHECK-NEXT:    %[[RAW3:.*]] = memref.alloc() {alignment = 64 : i64} : memref<192xi8>
// CHECK-DAG:     %[[OFF_D:.*]] = arith.constant 128 : index
// CHECK-DAG:     %[[D:.*]] = memref.view %[[RAW3]][%[[OFF_D]]][] : memref<192xi8> to memref<1x16xf32>
// CHECK-DAG:     %[[OFF_C2:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C2:.*]] = memref.view %[[RAW3]][%[[OFF_C2]]][] : memref<192xi8> to memref<1x32xf32>
// CHECK-DAG:     %[[OFF_C3:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C3:.*]] = memref.view %[[RAW3]][%[[OFF_C3]]][] : memref<192xi8> to memref<1x48xf32>
// CHECK:         func.call @concat_c1c(%[[C1]], %[[C]], %[[C2]])
// CHECK-NEXT:    memref.dealloc %[[C]] : memref<1x8xf32>
// CHECK-NEXT:    func.call @f(%x, %[[D]])
// CHECK-NEXT:    func.call @k(%[[C1]], %[[C2]], %[[C3]], %out0)
// CHECK-NEXT:    memref.dealloc %[[RAW1]] : memref<96xi8>
// CHECK-NEXT:    memref.dealloc %[[RAW3]] : memref<192xi8>
// CHECK-NEXT:    func.return
// CHECK-NOT:     @concat_ab
// CHECK:         func.func private @concat_c1c(
// CHECK-NOT:     @concat_c2d
// REMARK:      @concat_c1c stays a copy: an input's place in the output is not 64-byte aligned [tir-concat-in-place]
// REMARK-NOT:  concat-copied
func.func @chain_misaligned(%x: memref<1x16xf32>, %y: memref<1x8xf32>, %out0: memref<1x16xf32> {graph.output = 0 : i64}) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<1x16xf32>
  func.call @f(%x, %a) : (memref<1x16xf32>, memref<1x16xf32>) -> ()
  %b = memref.alloc() {alignment = 64 : i64} : memref<1x8xf32>
  func.call @e(%y, %b) : (memref<1x8xf32>, memref<1x8xf32>) -> ()
  %c1 = memref.alloc() {alignment = 64 : i64} : memref<1x24xf32>
  func.call @concat_ab(%a, %b, %c1) : (memref<1x16xf32>, memref<1x8xf32>, memref<1x24xf32>) -> ()
  memref.dealloc %a : memref<1x16xf32>
  memref.dealloc %b : memref<1x8xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<1x8xf32>
  func.call @e(%y, %c) : (memref<1x8xf32>, memref<1x8xf32>) -> ()
  %c2 = memref.alloc() {alignment = 64 : i64} : memref<1x32xf32>
  func.call @concat_c1c(%c1, %c, %c2) : (memref<1x24xf32>, memref<1x8xf32>, memref<1x32xf32>) -> ()
  memref.dealloc %c : memref<1x8xf32>
  %d = memref.alloc() {alignment = 64 : i64} : memref<1x16xf32>
  func.call @f(%x, %d) : (memref<1x16xf32>, memref<1x16xf32>) -> ()
  %c3 = memref.alloc() {alignment = 64 : i64} : memref<1x48xf32>
  func.call @concat_c2d(%c2, %d, %c3) : (memref<1x32xf32>, memref<1x16xf32>, memref<1x48xf32>) -> ()
  memref.dealloc %d : memref<1x16xf32>
  func.call @k(%c1, %c2, %c3, %out0) : (memref<1x24xf32>, memref<1x32xf32>, memref<1x48xf32>, memref<1x16xf32>) -> ()
  memref.dealloc %c1 : memref<1x24xf32>
  memref.dealloc %c2 : memref<1x32xf32>
  memref.dealloc %c3 : memref<1x48xf32>
  func.return
}
func.func private @f(memref<1x16xf32>, memref<1x16xf32>) -> ()
func.func private @e(memref<1x8xf32>, memref<1x8xf32>) -> ()
func.func private @k(memref<1x24xf32>, memref<1x32xf32>, memref<1x48xf32>, memref<1x16xf32>) -> ()
func.func private @concat_ab(memref<1x16xf32>, memref<1x8xf32>, memref<1x24xf32>) -> () attributes {tir.concat_axis = 1 : i64}
func.func private @concat_c1c(memref<1x24xf32>, memref<1x8xf32>, memref<1x32xf32>) -> () attributes {tir.concat_axis = 1 : i64}
func.func private @concat_c2d(memref<1x32xf32>, memref<1x16xf32>, memref<1x48xf32>) -> () attributes {tir.concat_axis = 1 : i64}
