// RUN: xtc-opt %s -p tir-cse --split-input-file | filecheck %s

// Constants are one op per value and type, at the start of the function
// (0.0 and -0.0 stay two); in a block, a pure op equal to an earlier one is
// that one (the second `%i * 8`), an op with effects (a load) is not, and
// an equal op in another block (the loop body) is not either.
// CHECK-LABEL: func.func @copies(%x: memref<64xf32>, %y: memref<64xf32>, %i: index) {
// CHECK-NEXT:    %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[MZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK-NEXT:    %[[ROW:.*]] = arith.muli %i, %[[EIGHT]] : index
// CHECK-NEXT:    %[[AT:.*]] = arith.addi %[[ROW]], %[[ONE]] : index
// CHECK-NEXT:    %a = memref.load %x[%[[AT]]] : memref<64xf32>
// CHECK-NEXT:    %[[AT2:.*]] = arith.addi %[[ROW]], %[[EIGHT]] : index
// CHECK-NEXT:    %b = memref.load %x[%[[AT2]]] : memref<64xf32>
// CHECK-NEXT:    %c = memref.load %x[%[[AT2]]] : memref<64xf32>
// CHECK-NEXT:    %s = arith.addf %a, %b : f32
// CHECK-NEXT:    %t = arith.addf %s, %c : f32
// CHECK-NEXT:    %u = arith.addf %t, %[[ZERO]] : f32
// CHECK-NEXT:    %v = arith.addf %u, %[[MZERO]] : f32
// CHECK-NEXT:    memref.store %v, %y[%[[AT]]] : memref<64xf32>
// CHECK-NEXT:    tir.for %j = 0 to 4 step 1 {name = "j", kind = "serial"} {
// CHECK-NEXT:      %[[INNER:.*]] = arith.muli %i, %[[EIGHT]] : index
// CHECK-NEXT:      %[[AT3:.*]] = arith.addi %[[INNER]], %j : index
// CHECK-NEXT:      memref.store %v, %y[%[[AT3]]] : memref<64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @copies(%x: memref<64xf32>, %y: memref<64xf32>, %i: index) {
  %c8 = arith.constant 8 : index
  %row = arith.muli %i, %c8 : index
  %c1 = arith.constant 1 : index
  %at = arith.addi %row, %c1 : index
  %a = memref.load %x[%at] : memref<64xf32>
  %c8_again = arith.constant 8 : index
  %row_again = arith.muli %i, %c8_again : index
  %at2 = arith.addi %row_again, %c8_again : index
  %b = memref.load %x[%at2] : memref<64xf32>
  %c = memref.load %x[%at2] : memref<64xf32>
  %s = arith.addf %a, %b : f32
  %t = arith.addf %s, %c : f32
  %zero = arith.constant 0.0 : f32
  %u = arith.addf %t, %zero : f32
  %minus_zero = arith.constant -0.0 : f32
  %v = arith.addf %u, %minus_zero : f32
  %c1_again = arith.constant 1 : index
  %at_again = arith.addi %row, %c1_again : index
  memref.store %v, %y[%at_again] : memref<64xf32>
  tir.for %j = 0 to 4 step 1 {name = "j", kind = "serial"} {
    %eight = arith.constant 8 : index
    %inner = arith.muli %i, %eight : index
    %at3 = arith.addi %inner, %j : index
    memref.store %v, %y[%at3] : memref<64xf32>
  }
  func.return
}

// -----

// Each function has its own constants.
// CHECK-LABEL: func.func @first(
// CHECK-NEXT:    %[[A:.*]] = arith.constant 3 : i32
// CHECK-NEXT:    func.return %[[A]] : i32
// CHECK-LABEL: func.func @second(
// CHECK-NEXT:    %[[B:.*]] = arith.constant 3 : i32
// CHECK-NEXT:    func.return %[[B]] : i32
func.func @first() -> i32 {
  %a = arith.constant 3 : i32
  func.return %a : i32
}
func.func @second() -> i32 {
  %b = arith.constant 3 : i32
  func.return %b : i32
}
