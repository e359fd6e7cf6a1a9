// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=matmul loop=r0 factor=4},tir-cache-write{func=matmul loop=i1_o},tir-hoist-reduction{func=matmul loop=r0_o outside=i0}' | filecheck %s
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=matmul loop=r0 factor=4},tir-cache-write{func=matmul loop=i1_o},tir-hoist-reduction{func=matmul loop=r0_o outside=i1_o}' | filecheck %s --check-prefix=TILE
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=matmul loop=r0 factor=4},tir-hoist-reduction{func=matmul loop=r0_o outside=i0}' | filecheck %s --check-prefix=UNCACHED
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=matmul loop=r0 factor=4},tir-cache-write{func=matmul loop=i1_o},tir-unroll{func=matmul loop=r0_o},tir-hoist-reduction{func=matmul loop=r0_o outside=i0}' | filecheck %s --check-prefix=UNROLLED
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=matmul loop=r0 factor=4},tir-cache-write{func=matmul loop=i1_o},tir-hoist-reduction{func=matmul loop=r0_o outside=i1_i_init}' | filecheck %s --check-prefix=NOTAROUND
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=accumulate loop=r0 factor=4},tir-cache-write{func=accumulate loop=i0},tir-hoist-reduction{func=accumulate loop=r0_o outside=i0}' | filecheck %s --check-prefix=READS
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=narrow loop=r0 factor=4},tir-cache-write{func=narrow loop=i0},tir-hoist-reduction{func=narrow loop=r0_o outside=i0}' | filecheck %s --check-prefix=NARROW
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=counted loop=r0 factor=4},tir-cache-write{func=counted loop=i0},tir-hoist-reduction{func=counted loop=r0_o outside=o}' | filecheck %s --check-prefix=IMPERFECT
// RUN: not xtc-opt %s -p 'tir-hoist-reduction{func=matmul loop=r9 outside=i0}' 2>&1 | filecheck %s --check-prefix=NOLOOP

// A 1x3 tile of a matmul with a bias and a relu, its reduction in two
// blocks of 4: the block loop r0_o around i0; the init nest starts from
// the identity at the first block, else from the partial sum the output
// holds; the write-back stores the epilogue's value (bias, relu) at the
// last block only, else the partial sum.
// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT:    tir.for %[[RO:.*]] = 0 to 2 step 1 {name = "r0_o", kind = "serial"} {
// CHECK-NEXT:      tir.for %[[I0:.*]] = 0 to 4 step 1 {name = "i0", kind = "serial"} {
// CHECK-NEXT:        tir.for %[[I1O:.*]] = 0 to 2 step 1 {name = "i1_o", kind = "serial"} {
// CHECK-NEXT:          %[[ACC:.*]] = memref.alloca() {alignment = 64 : i64} : memref<3xf32>
// CHECK-NEXT:          tir.for %[[IN:.*]] = 0 to 3 step 1 {name = "i1_i_init", kind = "serial"} {
// CHECK-NEXT:            %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:            %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:            %[[M1:.*]] = arith.muli %[[I1O]], %[[C3]] : index
// CHECK-NEXT:            %[[I1:.*]] = arith.addi %[[M1]], %[[IN]] : index
// CHECK-NEXT:            %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:            %[[FIRST:.*]] = arith.cmpi eq, %[[RO]], %[[C0]] : index
// CHECK-NEXT:            %[[OLD:.*]] = memref.load %c[%[[I0]], %[[I1]]] : memref<4x6xf32>
// CHECK-NEXT:            %[[START:.*]] = arith.select %[[FIRST]], %[[ZERO]], %[[OLD]] : f32
// CHECK-NEXT:            memref.store %[[START]], %[[ACC]][%[[IN]]] : memref<3xf32>
// CHECK-NEXT:          }
// CHECK-NEXT:          tir.for %[[RI:.*]] = 0 to 4 step 1 {name = "r0_i", kind = "serial"} {
// CHECK-NEXT:            tir.for %[[II:.*]] = 0 to 3 step 1 {name = "i1_i", kind = "serial"} {
// CHECK:                   %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:              %[[M:.*]] = arith.muli %[[RO]], %[[C4]] : index
// CHECK-NEXT:              %[[R0:.*]] = arith.addi %[[M]], %[[RI]] : index
// CHECK-NEXT:              memref.load %a[%[[I0]], %[[R0]]] : memref<4x8xf32>
// CHECK:                   memref.store %{{.*}}, %[[ACC]][%[[II]]] : memref<3xf32>
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:          tir.for %[[IW:.*]] = 0 to 3 step 1 {name = "i1_i_wb", kind = "serial"} {
// CHECK:                 %[[I1W:.*]] = arith.addi %{{.*}}, %[[IW]] : index
// CHECK-NEXT:            %[[V:.*]] = memref.load %[[ACC]][%[[IW]]] : memref<3xf32>
// CHECK-NEXT:            %[[B:.*]] = memref.load %bias[%[[I1W]]] : memref<6xf32>
// CHECK-NEXT:            %[[SUM:.*]] = arith.addf %[[V]], %[[B]] : f32
// CHECK-NEXT:            %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:            %[[RELU:.*]] = arith.maximumf %[[SUM]], %[[Z]] : f32
// CHECK-NEXT:            %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:            %[[LAST:.*]] = arith.cmpi eq, %[[RO]], %[[C1]] : index
// CHECK-NEXT:            %[[OUT:.*]] = arith.select %[[LAST]], %[[RELU]], %[[V]] : f32
// CHECK-NEXT:            memref.store %[[OUT]], %c[%[[I0]], %[[I1W]]] : memref<4x6xf32>
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// Hoisted above the tile's own loop only.
// TILE-LABEL: func.func @matmul(
// TILE-NEXT:    tir.for %{{.*}} = 0 to 4 step 1 {name = "i0", kind = "serial"} {
// TILE-NEXT:      tir.for %{{.*}} = 0 to 2 step 1 {name = "r0_o", kind = "serial"} {
// TILE-NEXT:        tir.for %{{.*}} = 0 to 2 step 1 {name = "i1_o", kind = "serial"} {
// TILE-NEXT:          memref.alloca() {alignment = 64 : i64} : memref<3xf32>

// UNCACHED: error: tir-hoist-reduction: loop 'r0_o' in @matmul is not between an init nest and a write-back nest in loop 'i1_i' (run tir-cache-write at that loop first)
// UNROLLED: error: tir-hoist-reduction: loop 'r0_o' in @matmul is unrolled; only a serial reduction loop moves out
// NOTAROUND: error: tir-hoist-reduction: loop 'i1_i_init' in @matmul does not hold loop 'i1_o' of the tile
// NOLOOP: error: tir-hoist-reduction: no loop named 'r9' in @matmul
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x6xf32>, %bias: memref<6xf32>, %c: memref<4x6xf32>) {
  tir.for %i0 = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1o = 0 to 2 step 1 {name = "i1_o", kind = "serial"} {
      tir.for %i1i = 0 to 3 step 1 {name = "i1_i", kind = "serial"} {
        %c3 = arith.constant 3 : index
        %m1 = arith.muli %i1o, %c3 : index
        %i1 = arith.addi %m1, %i1i : index
        %acc = memref.alloca() : memref<f32>
        %zero = arith.constant 0.000000e+00 : f32
        memref.store %zero, %acc[] : memref<f32>
        tir.for %r0 = 0 to 8 step 1 {name = "r0", kind = "serial"} {
          %x = memref.load %a[%i0, %r0] : memref<4x8xf32>
          %y = memref.load %b[%r0, %i1] : memref<8x6xf32>
          %p = arith.mulf %x, %y : f32
          %s = memref.load %acc[] : memref<f32>
          %t = arith.addf %s, %p : f32
          memref.store %t, %acc[] : memref<f32>
        }
        %v = memref.load %acc[] : memref<f32>
        %w = memref.load %bias[%i1] : memref<6xf32>
        %sum = arith.addf %v, %w : f32
        %relu0 = arith.constant 0.000000e+00 : f32
        %r = arith.maximumf %sum, %relu0 : f32
        memref.store %r, %c[%i0, %i1] : memref<4x6xf32>
      }
    }
  }
  func.return
}

// -----

// An epilogue reading the output (an in-place accumulation) would read a
// partial sum: refused.
// READS: error: tir-hoist-reduction: loop 'i1_wb' in @accumulate reads the output it writes: it would read a partial sum
func.func @accumulate(%a: memref<4x8xf32>, %b: memref<8x6xf32>, %c: memref<4x6xf32>) {
  tir.for %i0 = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 6 step 1 {name = "i1", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[] : memref<f32>
      tir.for %r0 = 0 to 8 step 1 {name = "r0", kind = "serial"} {
        %x = memref.load %a[%i0, %r0] : memref<4x8xf32>
        %y = memref.load %b[%r0, %i1] : memref<8x6xf32>
        %p = arith.mulf %x, %y : f32
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %p : f32
        memref.store %t, %acc[] : memref<f32>
      }
      %v = memref.load %acc[] : memref<f32>
      %old = memref.load %c[%i0, %i1] : memref<4x6xf32>
      %sum = arith.addf %v, %old : f32
      memref.store %sum, %c[%i0, %i1] : memref<4x6xf32>
    }
  }
  func.return
}

// -----

// An f16 output cannot hold the f32 partial sums: refused.
// NARROW: error: tir-hoist-reduction: loop 'i1_wb' in @narrow stores f16 from f32 accumulators; the output cannot hold the partial sums
func.func @narrow(%a: memref<4x8xf32>, %b: memref<8x6xf32>, %c: memref<4x6xf16>) {
  tir.for %i0 = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 6 step 1 {name = "i1", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[] : memref<f32>
      tir.for %r0 = 0 to 8 step 1 {name = "r0", kind = "serial"} {
        %x = memref.load %a[%i0, %r0] : memref<4x8xf32>
        %y = memref.load %b[%r0, %i1] : memref<8x6xf32>
        %p = arith.mulf %x, %y : f32
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %p : f32
        memref.store %t, %acc[] : memref<f32>
      }
      %v = memref.load %acc[] : memref<f32>
      %h = arith.truncf %v : f32 to f16
      memref.store %h, %c[%i0, %i1] : memref<4x6xf16>
    }
  }
  func.return
}

// -----

// A store beside the loops it would move past: refused.
// IMPERFECT: error: tir-hoist-reduction: loop 'o' in @counted is not perfectly nested: its body holds 'memref.store' beside loop 'i0'
func.func @counted(%a: memref<4x8xf32>, %b: memref<8x6xf32>, %c: memref<4x6xf32>, %n: memref<1xf32>) {
  tir.for %o = 0 to 1 step 1 {name = "o", kind = "serial"} {
    %one = arith.constant 1.000000e+00 : f32
    memref.store %one, %n[%o] : memref<1xf32>
    tir.for %i0 = 0 to 4 step 1 {name = "i0", kind = "serial"} {
      tir.for %i1 = 0 to 6 step 1 {name = "i1", kind = "serial"} {
        %acc = memref.alloca() : memref<f32>
        %zero = arith.constant 0.000000e+00 : f32
        memref.store %zero, %acc[] : memref<f32>
        tir.for %r0 = 0 to 8 step 1 {name = "r0", kind = "serial"} {
          %x = memref.load %a[%i0, %r0] : memref<4x8xf32>
          %y = memref.load %b[%r0, %i1] : memref<8x6xf32>
          %p = arith.mulf %x, %y : f32
          %s = memref.load %acc[] : memref<f32>
          %t = arith.addf %s, %p : f32
          memref.store %t, %acc[] : memref<f32>
        }
        %v = memref.load %acc[] : memref<f32>
        memref.store %v, %c[%i0, %i1] : memref<4x6xf32>
      }
    }
  }
  func.return
}
