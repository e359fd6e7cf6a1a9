// RUN: xtc-opt %s -p tir-lower-unrolled --split-input-file | filecheck %s

// An unrolled loop becomes one copy of its body per iteration, the
// induction variable a constant in each (lower + k * step).
// CHECK-LABEL: func.func @triple(
// CHECK-NOT:     tir.for
// CHECK:         %[[I0:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[V0:.*]] = memref.load %x[%[[I0]]] : memref<8xf32>
// CHECK-NEXT:    memref.store %[[V0]], %y[%[[I0]]] : memref<8xf32>
// CHECK-NEXT:    %[[I1:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[V1:.*]] = memref.load %x[%[[I1]]] : memref<8xf32>
// CHECK-NEXT:    memref.store %[[V1]], %y[%[[I1]]] : memref<8xf32>
// CHECK-NEXT:    %[[I2:.*]] = arith.constant 5 : index
// CHECK-NEXT:    %[[V2:.*]] = memref.load %x[%[[I2]]] : memref<8xf32>
// CHECK-NEXT:    memref.store %[[V2]], %y[%[[I2]]] : memref<8xf32>
// CHECK-NEXT:    func.return
func.func @triple(%x: memref<8xf32>, %y: memref<8xf32>) {
  tir.for %i = 1 to 7 step 2 {name = "i", kind = "unrolled"} {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %y[%i] : memref<8xf32>
  }
  func.return
}

// -----

// Inner loops go first: an unrolled loop around a vectorized one becomes
// copies of the vectorized loop (each widened later by
// tir-lower-vectorized); an unrolled loop inside a serial one is unrolled
// in place; other loops stay.
// CHECK-LABEL: func.func @nest(
// CHECK:         %[[R0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    tir.for %j = 0 to 4 step 1 {name = "j", kind = "vectorized"} {
// CHECK-NEXT:      memref.load %x[%[[R0]], %j]
// CHECK:         %[[R1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    tir.for %j{{.*}} = 0 to 4 step 1 {name = "j", kind = "vectorized"} {
// CHECK:         tir.for %k = 0 to 2 step 1 {name = "k", kind = "serial"} {
// CHECK-NEXT:      %[[L0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      memref.load %x[%k, %[[L0]]]
// CHECK:           %[[L3:.*]] = arith.constant 3 : index
// CHECK-NEXT:      memref.load %x[%k, %[[L3]]]
// CHECK-NOT:     kind = "unrolled"
func.func @nest(%x: memref<2x4xf32>, %y: memref<2x4xf32>) {
  tir.for %r = 0 to 2 step 1 {name = "r", kind = "unrolled"} {
    tir.for %j = 0 to 4 step 1 {name = "j", kind = "vectorized"} {
      %v = memref.load %x[%r, %j] : memref<2x4xf32>
      memref.store %v, %y[%r, %j] : memref<2x4xf32>
    }
  }
  tir.for %k = 0 to 2 step 1 {name = "k", kind = "serial"} {
    tir.for %l = 0 to 4 step 1 {name = "l", kind = "unrolled"} {
      %v = memref.load %x[%k, %l] : memref<2x4xf32>
      memref.store %v, %y[%k, %l] : memref<2x4xf32>
    }
  }
  func.return
}

// -----

// Before copying, the body's invariant values move in front of the loop:
// `%row` (an outer variable times a constant) and the constant, from the
// body and from the vectorized loop in it, are computed once for all
// copies; what depends on the unrolled variable stays in each copy, and
// so does an invariant value inside a serial loop of the body.
// CHECK-LABEL: func.func @invariants(
// CHECK:         tir.for %n = 0 to 2 step 1 {name = "n", kind = "serial"} {
// CHECK-NEXT:      %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.muli %n, %[[C8]] : index
// CHECK-NEXT:      %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[BASE:.*]] = arith.addi %[[ROW]], %[[C4]] : index
// CHECK-NEXT:      %[[U0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      tir.for %j = 0 to 4 step 1 {name = "j", kind = "vectorized"} {
// CHECK-NEXT:        %[[A0:.*]] = arith.addi %[[BASE]], %[[U0]] : index
// CHECK-NEXT:        memref.load %x[%j] : memref<4xf32>
// CHECK-NEXT:        memref.store {{.*}}, %y[%[[A0]], %j] : memref<20x4xf32>
// CHECK:           tir.for %k = 0 to 3 step 1 {name = "k", kind = "serial"} {
// CHECK-NEXT:        arith.constant 2 : index
// CHECK:           %[[U1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      tir.for %j{{.*}} = 0 to 4 step 1 {name = "j", kind = "vectorized"} {
// CHECK-NEXT:        arith.addi %[[BASE]], %[[U1]] : index
// CHECK:           tir.for %k{{.*}} = 0 to 3 step 1 {name = "k", kind = "serial"} {
// CHECK-NEXT:        arith.constant 2 : index
// CHECK-NOT:     arith.muli
// CHECK-NOT:     kind = "unrolled"
func.func @invariants(%x: memref<4xf32>, %y: memref<20x4xf32>, %z: memref<3xf32>) {
  tir.for %n = 0 to 2 step 1 {name = "n", kind = "serial"} {
    tir.for %u = 0 to 2 step 1 {name = "u", kind = "unrolled"} {
      %c8 = arith.constant 8 : index
      %row = arith.muli %n, %c8 : index
      tir.for %j = 0 to 4 step 1 {name = "j", kind = "vectorized"} {
        %c4 = arith.constant 4 : index
        %base = arith.addi %row, %c4 : index
        %at = arith.addi %base, %u : index
        %v = memref.load %x[%j] : memref<4xf32>
        memref.store %v, %y[%at, %j] : memref<20x4xf32>
      }
      tir.for %k = 0 to 3 step 1 {name = "k", kind = "serial"} {
        %c2 = arith.constant 2 : index
        %w = memref.load %z[%c2] : memref<3xf32>
        memref.store %w, %z[%k] : memref<3xf32>
      }
    }
  }
  func.return
}

// -----

// An unrolled loop that never runs leaves nothing, its invariant values
// included: hoisted, the division by %d (zero, perhaps) would run where it
// never did. So does a vectorized loop that never runs in a body.
// CHECK-LABEL: func.func @never_runs(
// CHECK-NOT:     arith.divsi %[[C8:.*]], %d
// CHECK:         tir.for %u = 0 to 1 step 1 {name = "u", kind = "serial"} {
// CHECK-NEXT:      arith.constant 0 : index
// CHECK-NEXT:      tir.for %j = 0 to 0 step 1 {name = "j", kind = "vectorized"} {
// CHECK-NEXT:        arith.constant 8 : index
// CHECK-NEXT:        arith.divsi
func.func @never_runs(%x: memref<4xindex>, %d: index) {
  tir.for %v = 0 to 0 step 1 {name = "v", kind = "unrolled"} {
    %c8 = arith.constant 8 : index
    %q = arith.divsi %c8, %d : index
    memref.store %q, %x[%v] : memref<4xindex>
  }
  tir.for %u = 0 to 1 step 1 {name = "u", kind = "serial"} {
    tir.for %w = 0 to 1 step 1 {name = "w", kind = "unrolled"} {
      tir.for %j = 0 to 0 step 1 {name = "j", kind = "vectorized"} {
        %c8 = arith.constant 8 : index
        %q = arith.divsi %c8, %d : index
        memref.store %q, %x[%j] : memref<4xindex>
      }
    }
  }
  func.return
}
