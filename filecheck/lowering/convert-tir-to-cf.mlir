// RUN: xtc-opt %s -p convert-tir-to-cf --split-input-file | filecheck %s
// RUN: xtc-opt %s -p convert-tir-to-cf --split-input-file | xtc-opt --split-input-file | filecheck %s

// Each tir.for becomes a header block whose argument is the induction
// variable, compared with the upper bound; the body block steps it and
// branches back. Bounds and step are index constants; names and kinds go.
// CHECK-LABEL: func.func @copy_rows(
// CHECK-NEXT:    %[[L0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[U0:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[S0:.*]] = arith.constant 1 : index
// CHECK-NEXT:    cf.br ^[[I:[a-z0-9]+]](%[[L0]] : index)
// CHECK-NEXT:  ^[[I]](%i: index):
// CHECK-NEXT:    %[[MORE_I:.*]] = arith.cmpi slt, %i, %[[U0]] : index
// CHECK-NEXT:    cf.cond_br %[[MORE_I]], ^[[OUTER:[a-z0-9]+]], ^[[DONE:[a-z0-9]+]]
// CHECK-NEXT:  ^[[OUTER]]:
// CHECK-NEXT:    %[[L1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[U1:.*]] = arith.constant 7 : index
// CHECK-NEXT:    %[[S1:.*]] = arith.constant 2 : index
// CHECK-NEXT:    cf.br ^[[J:[a-z0-9]+]](%[[L1]] : index)
// CHECK-NEXT:  ^[[J]](%j: index):
// CHECK-NEXT:    %[[MORE_J:.*]] = arith.cmpi slt, %j, %[[U1]] : index
// CHECK-NEXT:    cf.cond_br %[[MORE_J]], ^[[BODY:[a-z0-9]+]], ^[[NEXT_I:[a-z0-9]+]]
// CHECK-NEXT:  ^[[BODY]]:
// CHECK-NEXT:    %v = memref.load %x[%i, %j] : memref<4x8xf32>
// CHECK-NEXT:    memref.store %v, %y[%i, %j] : memref<4x8xf32>
// CHECK-NEXT:    %[[J2:.*]] = arith.addi %j, %[[S1]] : index
// CHECK-NEXT:    cf.br ^[[J]](%[[J2]] : index)
// CHECK-NEXT:  ^[[NEXT_I]]:
// CHECK-NEXT:    %[[I2:.*]] = arith.addi %i, %[[S0]] : index
// CHECK-NEXT:    cf.br ^[[I]](%[[I2]] : index)
// CHECK-NEXT:  ^[[DONE]]:
// CHECK-NEXT:    func.return
func.func @copy_rows(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    tir.for %j = 1 to 7 step 2 {name = "j", kind = "serial"} {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      memref.store %v, %y[%i, %j] : memref<4x8xf32>
    }
  }
  func.return
}

// -----

// An scf.if becomes a conditional branch too; scf.for (from
// tir-lower-parallel's chunk loops) as tir.for.
// CHECK-LABEL: func.func @clamp(
// CHECK:         cf.cond_br %negative, ^[[THEN:[a-z0-9]+]], ^[[JOIN:[a-z0-9]+]]
// CHECK-NEXT:  ^[[THEN]]:
// CHECK-NEXT:    memref.store %zero, %x[%i] : memref<4xf32>
// CHECK-NEXT:    cf.br ^[[JOIN]]
// CHECK-NOT:     scf.
func.func @clamp(%x: memref<4xf32>, %begin: index, %end: index) {
  %one = arith.constant 1 : index
  scf.for %i = %begin to %end step %one {
    %v = memref.load %x[%i] : memref<4xf32>
    %zero = arith.constant 0.000000e+00 : f32
    %negative = arith.cmpf olt, %v, %zero : f32
    scf.if %negative {
      memref.store %zero, %x[%i] : memref<4xf32>
    }
  }
  func.return
}
