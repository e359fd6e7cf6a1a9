// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{loop=i1 factor=4}' | filecheck %s
// Quoted names read the same as bare ones.
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func="matmul" loop="i1" factor=4}' | filecheck %s --check-prefix=QUOTED
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=matmul loop=i1 factor=6}' | filecheck %s --check-prefix=WHOLE
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=matmul loop=i1 factor=1}' | filecheck %s --check-prefix=ONE
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=matmul loop=i1 factor=0}' | filecheck %s --check-prefix=BADFACTOR
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=matmul loop=i9 factor=2}' | filecheck %s --check-prefix=NOLOOP
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{loop=i9 factor=2}' | filecheck %s --check-prefix=NOWHERE
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=matmul loop=i1 factor=4},tir-split{func=matmul loop=i0 factor=3}' | filecheck %s --check-prefix=TWICE
// A refusal exits non-zero with the diagnostic on stderr.
// RUN: not xtc-opt %s -p 'tir-split{func=nowhere loop=i1 factor=2}' 2>&1 | filecheck %s --check-prefix=NOFUNC

// Extent 6 by 4: i1_o (1) around i1_i (4), the body using i1 = i1_o * 4 +
// i1_i, then the peeled tail i1_tail (2) with i1 = 4 + i1_tail and its
// inner loop renamed r0_i1_tail.
// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT:    tir.for %[[I0:.*]] = 0 to 8 step 1 {name = "i0", kind = "serial"} {
// CHECK-NEXT:      tir.for %[[O:.*]] = 0 to 1 step 1 {name = "i1_o", kind = "serial"} {
// CHECK-NEXT:        tir.for %[[I:.*]] = 0 to 4 step 1 {name = "i1_i", kind = "serial"} {
// CHECK-NEXT:          %[[F:.*]] = arith.constant 4 : index
// CHECK-NEXT:          %[[M:.*]] = arith.muli %[[O]], %[[F]] : index
// CHECK-NEXT:          %[[I1:.*]] = arith.addi %[[M]], %[[I]] : index
// CHECK-NEXT:          %[[ACC:.*]] = memref.alloca() : memref<f32>
// CHECK-NEXT:          %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:          memref.store %[[ZERO]], %[[ACC]][] : memref<f32>
// CHECK-NEXT:          tir.for %[[R0:.*]] = 0 to 4 step 1 {name = "r0", kind = "serial"} {
// CHECK-NEXT:            memref.load %a[%[[I0]], %[[R0]]] : memref<8x4xf32>
// CHECK-NEXT:            memref.load %b[%[[R0]], %[[I1]]] : memref<4x6xf32>
// CHECK:                 memref.store %{{.*}}, %[[ACC]][] : memref<f32>
// CHECK-NEXT:          }
// CHECK-NEXT:          %[[V:.*]] = memref.load %[[ACC]][] : memref<f32>
// CHECK-NEXT:          memref.store %[[V]], %c[%[[I0]], %[[I1]]] : memref<8x6xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      tir.for %[[T:.*]] = 0 to 2 step 1 {name = "i1_tail", kind = "serial"} {
// CHECK-NEXT:        %[[BASE:.*]] = arith.constant 4 : index
// CHECK-NEXT:        %[[I1T:.*]] = arith.addi %[[BASE]], %[[T]] : index
// CHECK-NEXT:        %[[ACCT:.*]] = memref.alloca() : memref<f32>
// CHECK-NEXT:        arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        memref.store %{{.*}}, %[[ACCT]][] : memref<f32>
// CHECK-NEXT:        tir.for %[[R0T:.*]] = 0 to 4 step 1 {name = "r0_i1_tail", kind = "serial"} {
// CHECK-NEXT:          memref.load %a[%[[I0]], %[[R0T]]] : memref<8x4xf32>
// CHECK-NEXT:          memref.load %b[%[[R0T]], %[[I1T]]] : memref<4x6xf32>
// CHECK:             }
// CHECK-NEXT:        %[[VT:.*]] = memref.load %[[ACCT]][] : memref<f32>
// CHECK-NEXT:        memref.store %[[VT]], %c[%[[I0]], %[[I1T]]] : memref<8x6xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// QUOTED-LABEL: func.func @matmul(
// QUOTED:         {name = "i1_o", kind = "serial"}
// QUOTED:         {name = "i1_tail", kind = "serial"}

// A factor equal to the extent: i1_o of one iteration, no tail.
// WHOLE-LABEL: func.func @matmul(
// WHOLE:         tir.for %{{.*}} = 0 to 1 step 1 {name = "i1_o", kind = "serial"} {
// WHOLE-NEXT:      tir.for %{{.*}} = 0 to 6 step 1 {name = "i1_i", kind = "serial"} {
// WHOLE-NOT:     i1_tail
// WHOLE:         func.return

// ONE-LABEL: func.func @matmul(
// ONE:         tir.for %{{.*}} = 0 to 6 step 1 {name = "i1_o", kind = "serial"} {
// ONE-NEXT:      tir.for %{{.*}} = 0 to 1 step 1 {name = "i1_i", kind = "serial"} {
// ONE-NOT:     i1_tail
// ONE:         func.return

// Splitting i0 around the peeled split of i1: i0_i holds i1_o and i1_tail;
// the loops of i0's tail get "_i0_tail" appended, so names stay unique.
// TWICE-LABEL: func.func @matmul(
// TWICE-NEXT:    tir.for %{{.*}} = 0 to 2 step 1 {name = "i0_o", kind = "serial"} {
// TWICE-NEXT:      tir.for %{{.*}} = 0 to 3 step 1 {name = "i0_i", kind = "serial"} {
// TWICE:             {name = "i1_o", kind = "serial"}
// TWICE:             {name = "i1_i", kind = "serial"}
// TWICE:             {name = "r0", kind = "serial"}
// TWICE:             {name = "i1_tail", kind = "serial"}
// TWICE:             {name = "r0_i1_tail", kind = "serial"}
// TWICE:         tir.for %{{.*}} = 0 to 2 step 1 {name = "i0_tail", kind = "serial"} {
// TWICE:           {name = "i1_o_i0_tail", kind = "serial"}
// TWICE:           {name = "i1_i_i0_tail", kind = "serial"}
// TWICE:           {name = "r0_i0_tail", kind = "serial"}
// TWICE:           {name = "i1_tail_i0_tail", kind = "serial"}
// TWICE:           {name = "r0_i1_tail_i0_tail", kind = "serial"}
// TWICE:         func.return

// BADFACTOR: error: tir-split: factor 0 is not in [1, 6], the extent of loop 'i1' in @matmul
// NOLOOP: error: tir-split: no loop named 'i9' in @matmul
// NOWHERE: error: tir-split: no function has a loop named 'i9'
// NOFUNC: error: tir-split: no function @nowhere in the module

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

// An elementwise nest, extent 8 by 4: no tail. Every function with a loop
// named i1 is split when `func` is empty.
// CHECK-LABEL: func.func @relu(
// CHECK-NEXT:    tir.for %[[I0:.*]] = 0 to 3 step 1 {name = "i0", kind = "serial"} {
// CHECK-NEXT:      tir.for %[[O:.*]] = 0 to 2 step 1 {name = "i1_o", kind = "serial"} {
// CHECK-NEXT:        tir.for %[[I:.*]] = 0 to 4 step 1 {name = "i1_i", kind = "serial"} {
// CHECK-NEXT:          %[[F:.*]] = arith.constant 4 : index
// CHECK-NEXT:          %[[M:.*]] = arith.muli %[[O]], %[[F]] : index
// CHECK-NEXT:          %[[I1:.*]] = arith.addi %[[M]], %[[I]] : index
// CHECK-NEXT:          %[[X:.*]] = memref.load %x[%[[I0]], %[[I1]]] : memref<3x8xf32>
// CHECK-NEXT:          %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:          %[[Y:.*]] = arith.maximumf %[[X]], %[[ZERO]] : f32
// CHECK-NEXT:          memref.store %[[Y]], %y[%[[I0]], %[[I1]]] : memref<3x8xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @other(
// CHECK:         {name = "i1_o", kind = "serial"}
func.func @relu(%x: memref<3x8xf32>, %y: memref<3x8xf32>) {
  tir.for %i0 = 0 to 3 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 8 step 1 {name = "i1", kind = "serial"} {
      %v = memref.load %x[%i0, %i1] : memref<3x8xf32>
      %zero = arith.constant 0.000000e+00 : f32
      %r = arith.maximumf %v, %zero : f32
      memref.store %r, %y[%i0, %i1] : memref<3x8xf32>
    }
  }
  func.return
}
func.func @other(%x: memref<8xf32>) {
  tir.for %i1 = 0 to 8 step 1 {name = "i1", kind = "serial"} {
    %v = memref.load %x[%i1] : memref<8xf32>
    memref.store %v, %x[%i1] : memref<8xf32>
  }
  func.return
}

// -----

func.func @step_two(%x: memref<8xf32>) {
  // CHECK: error: tir-split: loop 'i1' in @step_two runs from 0 with step 2; tir-split needs a loop from 0 with step 1
  tir.for %i = 0 to 8 step 2 {name = "i1", kind = "serial"} {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %x[%i] : memref<8xf32>
  }
  func.return
}

// -----

func.func @from_one(%x: memref<8xf32>) {
  // CHECK: error: tir-split: loop 'i1' in @from_one runs from 1 with step 1; tir-split needs a loop from 0 with step 1
  tir.for %i = 1 to 8 step 1 {name = "i1", kind = "serial"} {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %x[%i] : memref<8xf32>
  }
  func.return
}

// -----

func.func @annotated(%x: memref<8xf32>) {
  // CHECK: error: tir-split: loop 'i1' in @annotated is parallel; split a loop before setting its kind
  tir.for %i = 0 to 8 step 1 {name = "i1", kind = "parallel"} {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %x[%i] : memref<8xf32>
  }
  func.return
}

// -----

func.func @too_short(%x: memref<3xf32>) {
  // CHECK: split.mlir:[[# @LINE + 1]]:3: error: tir-split: factor 4 is not in [1, 3], the extent of loop 'i1' in @too_short
  tir.for %i = 0 to 3 step 1 {name = "i1", kind = "serial"} {
    %v = memref.load %x[%i] : memref<3xf32>
    memref.store %v, %x[%i] : memref<3xf32>
  }
  func.return
}

// -----

func.func @twin_names(%x: memref<8xf32>) {
  tir.for %i = 0 to 8 step 1 {name = "i1", kind = "serial"} {
  }
  // CHECK: error: tir-split: 2 loops are named 'i1' in @twin_names; a schedule needs loop names that are unique in their function
  tir.for %j = 0 to 8 step 1 {name = "i1", kind = "serial"} {
  }
  func.return
}

// -----

func.func @name_taken(%x: memref<8xf32>) {
  // CHECK: error: tir-split: the new loop name 'i1_o' is already used in @name_taken
  tir.for %i = 0 to 8 step 1 {name = "i1", kind = "serial"} {
  }
  tir.for %j = 0 to 8 step 1 {name = "i1_o", kind = "serial"} {
  }
  func.return
}

// -----

func.func @tail_name_taken(%x: memref<6xf32>) {
  // CHECK: error: tir-split: the new loop name 'r0_i1_tail' is already used in @tail_name_taken
  tir.for %i = 0 to 6 step 1 {name = "i1", kind = "serial"} {
    tir.for %r = 0 to 2 step 1 {name = "r0", kind = "serial"} {
    }
  }
  tir.for %j = 0 to 8 step 1 {name = "r0_i1_tail", kind = "serial"} {
  }
  func.return
}

// -----

// Splitting by 4 the variable of a read in blocks of 4: `i1 floordiv 4`
// becomes i1_o and `i1 rem 4` becomes i1_i; a division by 3 stays.
// CHECK-LABEL: func.func @blocked(
// CHECK-NEXT:    tir.for %[[O:.*]] = 0 to 2 step 1 {name = "i1_o", kind = "serial"} {
// CHECK-NEXT:      tir.for %[[I:.*]] = 0 to 4 step 1 {name = "i1_i", kind = "serial"} {
// CHECK:             %[[I1:.*]] = arith.addi %{{.*}}, %[[I]] : index
// CHECK-NEXT:        %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:        %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:        %[[Q3:.*]] = arith.floordivsi %[[I1]], %[[C3]] : index
// CHECK-NEXT:        %[[V:.*]] = memref.load %w[%[[O]], %[[I]]] : memref<2x4xf32>
// CHECK-NEXT:        memref.store %[[V]], %y[%[[Q3]]] : memref<8xf32>
func.func @blocked(%w: memref<2x4xf32>, %y: memref<8xf32>) {
  tir.for %i1 = 0 to 8 step 1 {name = "i1", kind = "serial"} {
    %c4 = arith.constant 4 : index
    %q = arith.floordivsi %i1, %c4 : index
    %r = arith.remsi %i1, %c4 : index
    %c3 = arith.constant 3 : index
    %q3 = arith.floordivsi %i1, %c3 : index
    %v = memref.load %w[%q, %r] : memref<2x4xf32>
    memref.store %v, %y[%q3] : memref<8xf32>
  }
  func.return
}
