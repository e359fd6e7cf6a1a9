// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=16},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-split{func=matmul_0 loop=i0 factor=8},tir-cache-write{func=matmul_0 loop=i0_o},tir-cache-read{func=matmul_0 loop=i1_o buffer=1}' | filecheck %s --check-prefix=MATMUL
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=conv2d_0 loop=i1 factor=16},tir-cache-read{func=conv2d_0 loop=i1_o buffer=in1}' | filecheck %s --check-prefix=CONV
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-cache-read{func=writes loop=i buffer=0}' | filecheck %s --check-prefix=WRITES
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-cache-read{func=clamped loop=i buffer=x}' | filecheck %s --check-prefix=CLAMPED
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-cache-read{func=clamped loop=i buffer=z}' | filecheck %s --check-prefix=NONAME
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-cache-read{func=clamped loop=i buffer=7}' | filecheck %s --check-prefix=NOPOSITION
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-cache-read{func=clamped loop=q buffer=0}' | filecheck %s --check-prefix=NOLOOP
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-cache-read{func=nowhere loop=i buffer=0}' | filecheck %s --check-prefix=NOFUNC

// The 8x16 register tile of a 16x4x32 matmul with column panels outermost:
// B's 4x16 panel is packed once per i1_o, before the row tiles, and the
// micro-kernel reads it at [r0, i1_i]; A's loads are not touched.
// MATMUL-LABEL: func.func private @matmul_0(
// MATMUL-NEXT:    tir.for %[[I1O:.*]] = 0 to 2 step 1 {name = "i1_o", kind = "serial"} {
// MATMUL-NEXT:      %[[LOCAL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x16xf32>
// MATMUL-NEXT:      tir.for %[[C0:.*]] = 0 to 4 step 1 {name = "i1_o_cr0", kind = "serial"} {
// MATMUL-NEXT:        tir.for %[[C1:.*]] = 0 to 16 step 1 {name = "i1_o_cr1", kind = "serial"} {
// MATMUL-NEXT:          %[[C16:.*]] = arith.constant 16 : index
// MATMUL-NEXT:          %[[BASE:.*]] = arith.muli %[[I1O]], %[[C16]] : index
// MATMUL-NEXT:          %[[COL:.*]] = arith.addi %[[BASE]], %[[C1]] : index
// MATMUL-NEXT:          %[[V:.*]] = memref.load %in1[%[[C0]], %[[COL]]] : memref<4x32xf32>
// MATMUL-NEXT:          memref.store %[[V]], %[[LOCAL]][%[[C0]], %[[C1]]] : memref<4x16xf32>
// MATMUL-NEXT:        }
// MATMUL-NEXT:      }
// MATMUL-NEXT:      tir.for %[[I0O:.*]] = 0 to 2 step 1 {name = "i0_o", kind = "serial"} {
// MATMUL:             tir.for %[[R0:.*]] = 0 to 4 step 1 {name = "r0", kind = "serial"} {
// MATMUL-NEXT:          tir.for %[[I0I:.*]] = 0 to 8 step 1 {name = "i0_i", kind = "serial"} {
// MATMUL-NEXT:            tir.for %[[I1I:.*]] = 0 to 16 step 1 {name = "i1_i", kind = "serial"} {
// MATMUL-NEXT:              %[[C8:.*]] = arith.constant 8 : index
// MATMUL-NEXT:              %[[ROW0:.*]] = arith.muli %[[I0O]], %[[C8]] : index
// MATMUL-NEXT:              %[[ROW:.*]] = arith.addi %[[ROW0]], %[[I0I]] : index
// MATMUL-NEXT:              %[[X:.*]] = memref.load %in0[%[[ROW]], %[[R0]]] : memref<16x4xf32>
// MATMUL-NEXT:              %[[Y:.*]] = memref.load %[[LOCAL]][%[[R0]], %[[I1I]]] : memref<4x16xf32>
// MATMUL-NEXT:              %{{.*}} = arith.mulf %[[X]], %[[Y]] : f32
// MATMUL-NOT:         memref.load %in1
// MATMUL:           func.return
func.func @main(%a: tensor<16x4xf32>, %b: tensor<4x32xf32>) -> tensor<16x32xf32> {
  %c = graph.matmul %a, %b : (tensor<16x4xf32>, tensor<4x32xf32>) -> tensor<16x32xf32>
  func.return %c : tensor<16x32xf32>
}

// -----

// A conv with IHWO weights: the weights of a block of 16 output channels
// (every input channel and kernel position) packed per i1_o, the weight
// named by its SSA name.
// CONV-LABEL: func.func private @conv2d_0(
// CONV:         tir.for %[[I1O:.*]] = 0 to 2 step 1 {name = "i1_o", kind = "serial"} {
// CONV-NEXT:      %[[LOCAL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x3x3x16xf32>
// CONV-NEXT:      tir.for %[[C0:.*]] = 0 to 2 step 1 {name = "i1_o_cr0", kind = "serial"} {
// CONV-NEXT:        tir.for %[[C1:.*]] = 0 to 3 step 1 {name = "i1_o_cr1", kind = "serial"} {
// CONV-NEXT:          tir.for %[[C2:.*]] = 0 to 3 step 1 {name = "i1_o_cr2", kind = "serial"} {
// CONV-NEXT:            tir.for %[[C3:.*]] = 0 to 16 step 1 {name = "i1_o_cr3", kind = "serial"} {
// CONV-NEXT:              %[[C16:.*]] = arith.constant 16 : index
// CONV-NEXT:              %[[BASE:.*]] = arith.muli %[[I1O]], %[[C16]] : index
// CONV-NEXT:              %[[OC:.*]] = arith.addi %[[BASE]], %[[C3]] : index
// CONV-NEXT:              %[[V:.*]] = memref.load %in1[%[[C0]], %[[C1]], %[[C2]], %[[OC]]] : memref<2x3x3x32xf32>
// CONV-NEXT:              memref.store %[[V]], %[[LOCAL]][%[[C0]], %[[C1]], %[[C2]], %[[C3]]] : memref<2x3x3x16xf32>
// CONV:           tir.for %[[I1I:.*]] = 0 to 16 step 1 {name = "i1_i", kind = "serial"} {
// CONV:                     tir.for %[[R0:.*]] = 0 to 2 step 1 {name = "r0", kind = "serial"} {
// CONV-NEXT:                  tir.for %[[R1:.*]] = 0 to 3 step 1 {name = "r1", kind = "serial"} {
// CONV-NEXT:                    tir.for %[[R2:.*]] = 0 to 3 step 1 {name = "r2", kind = "serial"} {
// CONV:                           memref.load %in0
// CONV-NEXT:                      memref.load %[[LOCAL]][%[[R0]], %[[R1]], %[[R2]], %[[I1I]]] : memref<2x3x3x16xf32>
// CONV-NOT:     memref.load %in1
// CONV:         func.return
func.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<2x3x3x32xf32>) -> tensor<1x32x2x2xf32> {
  %y = graph.conv2d %x, %w {kernel_layout = "IHWO"} : (tensor<1x2x4x4xf32>, tensor<2x3x3x32xf32>) -> tensor<1x32x2x2xf32>
  func.return %y : tensor<1x32x2x2xf32>
}

// -----

// WRITES: cache-read.mlir:[[# @LINE + 6]]:7: error: tir-cache-read: cannot cache %x (argument 0) in loop 'i' of @writes: the loop body writes it
func.func @writes(%x: memref<4x8xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    tir.for %j = 0 to 8 step 1 {name = "j", kind = "serial"} {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %x[%i, %j] : memref<4x8xf32>
    }
  }
  func.return
}

// -----

// A window clamped to the buffer's end: the index goes through a select,
// so the region read is not a box the pass can bound.
// CLAMPED: cache-read.mlir:[[# @LINE + 12]]:7: error: tir-cache-read: cannot cache %x (argument 0) in loop 'i' of @clamped: an index of its load is not a sum of constant multiples of loop variables: it uses the result of 'arith.select'
// NONAME: error: tir-cache-read: buffer=z: no argument of @clamped named %z (its arguments: %x, %y); name it by its position instead
// NOPOSITION: error: tir-cache-read: buffer=7: @clamped has 2 arguments; buffer is a position from 0 to 1 or an argument's name
// NOLOOP: error: tir-cache-read: no loop named 'q' in @clamped
// NOFUNC: error: tir-cache-read: no function @nowhere in the module
func.func @clamped(%x: memref<10xf32>, %y: memref<8xf32>) {
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "serial"} {
    tir.for %r = 0 to 3 step 1 {name = "r", kind = "serial"} {
      %c9 = arith.constant 9 : index
      %s = arith.addi %i, %r : index
      %big = arith.cmpi ugt, %s, %c9 : index
      %at = arith.select %big, %c9, %s : index
      %v = memref.load %x[%at] : memref<10xf32>
      memref.store %v, %y[%i] : memref<8xf32>
    }
  }
  func.return
}
