// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reorder{func=transpose order=i2,i0,i1}' | filecheck %s --check-prefix=TRANSPOSE
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reorder{func=transpose order=i0,i1,i2}' | filecheck %s --check-prefix=SAME
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reorder{order=r1,r0}' | filecheck %s --check-prefix=REDUCTION
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reorder{func=matmul order=r0,i1}' | filecheck %s --check-prefix=ACCUMULATOR
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=matmul loop=i1 factor=4},tir-split{func=matmul loop=i0 factor=3},tir-reorder{func=matmul order=i0_o,i1_o,i0_i,i1_i}' | filecheck %s --check-prefix=PEELED
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=matmul loop=i1 factor=3},tir-split{func=matmul loop=i0 factor=4},tir-reorder{func=matmul order=i0_o,i1_o,i0_i,i1_i}' | filecheck %s --check-prefix=TILED
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reorder{func=siblings order=a,b}' | filecheck %s --check-prefix=SIBLINGS
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reorder{func=conv order=r2,r0}' | filecheck %s --check-prefix=BETWEEN
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reorder{func=impure order=i1,i0}' | filecheck %s --check-prefix=IMPURE
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reorder{func=vector order=j,i}' | filecheck %s --check-prefix=VECTOR
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reorder{func=transpose order=i0,i0}' | filecheck %s --check-prefix=TWICE
// RUN: not xtc-opt %s -p 'tir-reorder{func=transpose order=i0,i9}' 2>&1 | filecheck %s --check-prefix=NOLOOP
// RUN: not xtc-opt %s -p 'tir-reorder{func=nowhere order=i0,i1}' 2>&1 | filecheck %s --check-prefix=NOFUNC

// The loops keep their bounds and kinds; the index arithmetic of i0's body
// moves to the start of the innermost body.
// TRANSPOSE-LABEL: func.func @transpose(
// TRANSPOSE-NEXT:    tir.for %[[I2:.*]] = 0 to 4 step 1 {name = "i2", kind = "unrolled"} {
// TRANSPOSE-NEXT:      tir.for %[[I0:.*]] = 0 to 2 step 1 {name = "i0", kind = "parallel"} {
// TRANSPOSE-NEXT:        tir.for %[[I1:.*]] = 0 to 3 step 1 {name = "i1", kind = "serial"} {
// TRANSPOSE-NEXT:          %[[C1:.*]] = arith.constant 1 : index
// TRANSPOSE-NEXT:          %[[J0:.*]] = arith.addi %[[I0]], %[[C1]] : index
// TRANSPOSE-NEXT:          %[[V:.*]] = memref.load %x[%[[J0]], %[[I1]], %[[I2]]] : memref<3x3x4xf32>
// TRANSPOSE-NEXT:          memref.store %[[V]], %y[%[[I2]], %[[I0]], %[[I1]]] : memref<4x2x3xf32>
// TRANSPOSE-NEXT:        }
// TRANSPOSE-NEXT:      }
// TRANSPOSE-NEXT:    }
// TRANSPOSE-NEXT:    func.return

// The order they already have: nothing moves.
// SAME-LABEL: func.func @transpose(
// SAME-NEXT:    tir.for %{{.*}} = 0 to 2 step 1 {name = "i0", kind = "parallel"} {
// SAME-NEXT:      arith.constant 1 : index
// SAME-NEXT:      arith.addi
// SAME-NEXT:      tir.for %{{.*}} = 0 to 3 step 1 {name = "i1", kind = "serial"} {
// SAME-NEXT:        tir.for %{{.*}} = 0 to 4 step 1 {name = "i2", kind = "unrolled"} {
func.func @transpose(%x: memref<3x3x4xf32>, %y: memref<4x2x3xf32>) {
  tir.for %i0 = 0 to 2 step 1 {name = "i0", kind = "parallel"} {
    %c1 = arith.constant 1 : index
    %j0 = arith.addi %i0, %c1 : index
    tir.for %i1 = 0 to 3 step 1 {name = "i1", kind = "serial"} {
      tir.for %i2 = 0 to 4 step 1 {name = "i2", kind = "unrolled"} {
        %v = memref.load %x[%j0, %i1, %i2] : memref<3x3x4xf32>
        memref.store %v, %y[%i2, %i0, %i1] : memref<4x2x3xf32>
      }
    }
  }
  func.return
}

// -----

// Reduction loops reorder among themselves inside their accumulator's loop;
// every function with a loop r1 is reordered when `func` is empty.
// REDUCTION-LABEL: func.func @conv(
// REDUCTION:         %[[ACC:.*]] = memref.alloca() : memref<f32>
// REDUCTION:         tir.for %[[R1:.*]] = 0 to 3 step 1 {name = "r1", kind = "serial"} {
// REDUCTION-NEXT:      tir.for %[[R0:.*]] = 0 to 2 step 1 {name = "r0", kind = "serial"} {
// REDUCTION-NEXT:        %[[H:.*]] = arith.addi %i2, %[[R1]] : index
// REDUCTION-NEXT:        tir.for %[[R2:.*]] = 0 to 3 step 1 {name = "r2", kind = "serial"} {
// REDUCTION-NEXT:          %[[W:.*]] = arith.addi %i3, %[[R2]] : index
// REDUCTION-NEXT:          memref.load %x[%[[R0]], %[[H]], %[[W]]] : memref<2x6x6xf32>
// REDUCTION-NEXT:          memref.load %w[%i1, %[[R0]], %[[R1]], %[[R2]]] : memref<4x2x3x3xf32>
// REDUCTION:               memref.store %{{.*}}, %[[ACC]][] : memref<f32>
// REDUCTION-NEXT:        }
// REDUCTION-NEXT:      }
// REDUCTION-NEXT:    }
// REDUCTION-NEXT:    %[[V:.*]] = memref.load %[[ACC]][] : memref<f32>

// BETWEEN: error: tir-reorder: loop 'r1' in @conv lies between 'r0' and the other loops named, which must be directly nested
func.func @conv(%x: memref<2x6x6xf32>, %w: memref<4x2x3x3xf32>, %y: memref<4x4x4xf32>) {
  tir.for %i1 = 0 to 4 step 1 {name = "i1", kind = "serial"} {
    tir.for %i2 = 0 to 4 step 1 {name = "i2", kind = "serial"} {
      tir.for %i3 = 0 to 4 step 1 {name = "i3", kind = "serial"} {
        %acc = memref.alloca() : memref<f32>
        %zero = arith.constant 0.000000e+00 : f32
        memref.store %zero, %acc[] : memref<f32>
        tir.for %r0 = 0 to 2 step 1 {name = "r0", kind = "serial"} {
          tir.for %r1 = 0 to 3 step 1 {name = "r1", kind = "serial"} {
            %h = arith.addi %i2, %r1 : index
            tir.for %r2 = 0 to 3 step 1 {name = "r2", kind = "serial"} {
              %ww = arith.addi %i3, %r2 : index
              %a = memref.load %x[%r0, %h, %ww] : memref<2x6x6xf32>
              %b = memref.load %w[%i1, %r0, %r1, %r2] : memref<4x2x3x3xf32>
              %p = arith.mulf %a, %b : f32
              %s = memref.load %acc[] : memref<f32>
              %t = arith.addf %s, %p : f32
              memref.store %t, %acc[] : memref<f32>
            }
          }
        }
        %v = memref.load %acc[] : memref<f32>
        memref.store %v, %y[%i1, %i2, %i3] : memref<4x4x4xf32>
      }
    }
  }
  func.return
}

// -----

// ACCUMULATOR: reorder.mlir:[[# @LINE + 21]]:5: error: tir-reorder: loop 'i1' in @matmul holds the accumulator of reduction loop 'r0': moving 'r0' out of it would break the reduction (tir-cache-write moves reduction loops out)

// Splitting i0 around the peeled split of i1 leaves i0_i holding two loops.
// PEELED: error: tir-reorder: loop 'i0_i' in @matmul is not perfectly nested: its body holds 2 loops ('i1_o', 'i1_tail')

// With factors that divide, the same schedule tiles the nest.
// TILED-LABEL: func.func @matmul(
// TILED-NEXT:    tir.for %[[I0O:.*]] = 0 to 2 step 1 {name = "i0_o", kind = "serial"} {
// TILED-NEXT:      tir.for %[[I1O:.*]] = 0 to 2 step 1 {name = "i1_o", kind = "serial"} {
// TILED-NEXT:        tir.for %[[I0I:.*]] = 0 to 4 step 1 {name = "i0_i", kind = "serial"} {
// TILED-NEXT:          tir.for %[[I1I:.*]] = 0 to 3 step 1 {name = "i1_i", kind = "serial"} {
// TILED-NEXT:            %[[F0:.*]] = arith.constant 4 : index
// TILED-NEXT:            %[[M0:.*]] = arith.muli %[[I0O]], %[[F0]] : index
// TILED-NEXT:            %[[I0:.*]] = arith.addi %[[M0]], %[[I0I]] : index
// TILED-NEXT:            %[[F1:.*]] = arith.constant 3 : index
// TILED-NEXT:            %[[M1:.*]] = arith.muli %[[I1O]], %[[F1]] : index
// TILED-NEXT:            %[[I1:.*]] = arith.addi %[[M1]], %[[I1I]] : index
// TILED-NEXT:            memref.alloca() : memref<f32>
// TILED:                 memref.store %{{.*}}, %c[%[[I0]], %[[I1]]] : memref<8x6xf32>
func.func @matmul(%a: memref<8x4xf32>, %b: memref<4x6xf32>, %c: memref<8x6xf32>) {
  tir.for %i0 = 0 to 8 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 6 step 1 {name = "i1", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[] : memref<f32>
      tir.for %r0 = 0 to 4 step 1 {name = "r0", kind = "serial"} {
        %x = memref.load %a[%i0, %r0] : memref<8x4xf32>
        %y = memref.load %b[%r0, %i1] : memref<4x6xf32>
        %p = arith.mulf %x, %y : f32
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %p : f32
        memref.store %t, %acc[] : memref<f32>
      }
      %v = memref.load %acc[] : memref<f32>
      memref.store %v, %c[%i0, %i1] : memref<8x6xf32>
    }
  }
  func.return
}

// -----

// SIBLINGS: error: tir-reorder: loops 'a', 'b' in @siblings are not nested in one another
func.func @siblings(%x: memref<4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "a", kind = "serial"} {
  }
  tir.for %j = 0 to 4 step 1 {name = "b", kind = "serial"} {
  }
  func.return
}

// -----

// IMPURE: error: tir-reorder: loop 'i0' in @impure is not perfectly nested: its body holds 'memref.store' beside loop 'i1'
func.func @impure(%x: memref<4x4xf32>) {
  tir.for %i0 = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    %zero = arith.constant 0.000000e+00 : f32
    %c0 = arith.constant 0 : index
    memref.store %zero, %x[%i0, %c0] : memref<4x4xf32>
    tir.for %i1 = 0 to 4 step 1 {name = "i1", kind = "serial"} {
      %v = memref.load %x[%i0, %i1] : memref<4x4xf32>
      memref.store %v, %x[%i1, %i0] : memref<4x4xf32>
    }
  }
  func.return
}

// -----

// VECTOR: error: tir-reorder: loop 'j' in @vector is vectorized and would hold another loop in this order
func.func @vector(%x: memref<4x4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    tir.for %j = 0 to 4 step 1 {name = "j", kind = "vectorized"} {
      %v = memref.load %x[%i, %j] : memref<4x4xf32>
      memref.store %v, %x[%i, %j] : memref<4x4xf32>
    }
  }
  func.return
}

// TWICE: error: tir-reorder: loop 'i0' is named twice
// NOLOOP: error: tir-reorder: no loop named 'i9' in @transpose
// NOFUNC: error: tir-reorder: no function @nowhere in the module
