// RUN: %roundtrip | filecheck %s
// RUN: %generic-roundtrip | filecheck %s

// CHECK-LABEL: func.func private @matmul_relu
// CHECK:         %[[C:.*]] = te.compute : tensor<4x5xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      %[[S:.*]] = te.reduce {kind = "sum", extents = array<i64: 3>} : f32 {
// CHECK-NEXT:      ^{{.*}}(%[[K:.*]]: index):
// CHECK-NEXT:        tensor.extract %{{.*}}[%[[I]], %[[K]]] : tensor<4x3xf32>
// CHECK:             te.yield %{{.*}} : f32
// CHECK:           te.yield %[[S]] : f32
// CHECK:         te.compute : tensor<4x5xf32>
func.func private @matmul_relu(%A: tensor<4x3xf32>, %B: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %c = te.compute : tensor<4x5xf32> {
  ^bb0(%i: index, %j: index):
    %s = te.reduce {kind = "sum", extents = array<i64: 3>} : f32 {
    ^bb1(%k: index):
      %a = tensor.extract %A[%i, %k] : tensor<4x3xf32>
      %b = tensor.extract %B[%k, %j] : tensor<3x5xf32>
      %m = arith.mulf %a, %b : f32
      te.yield %m : f32
    }
    te.yield %s : f32
  }
  %r = te.compute : tensor<4x5xf32> {
  ^bb0(%i: index, %j: index):
    %v = tensor.extract %c[%i, %j] : tensor<4x5xf32>
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %v, %z : f32
    te.yield %m : f32
  }
  func.return %r : tensor<4x5xf32>
}

// CHECK-LABEL: func.func private @max_over_rows
// CHECK:         te.reduce {kind = "max", extents = array<i64: 4>} : i32
func.func private @max_over_rows(%A: tensor<4x3xi32>) -> tensor<3xi32> {
  %c = te.compute : tensor<3xi32> {
  ^bb0(%j: index):
    %s = te.reduce {kind = "max", extents = array<i64: 4>} : i32 {
    ^bb1(%i: index):
      %a = tensor.extract %A[%i, %j] : tensor<4x3xi32>
      te.yield %a : i32
    }
    te.yield %s : i32
  }
  func.return %c : tensor<3xi32>
}

// A stage kept of its own (te-inline leaves it) prints its unit property.
// CHECK-LABEL: func.func private @materialized
// CHECK:         te.compute {materialize} : tensor<2x4xf32> {
func.func private @materialized(%A: tensor<2x2xf32>) -> tensor<2x4xf32> {
  %c = te.compute {materialize} : tensor<2x4xf32> {
  ^bb0(%i: index, %j: index):
    %two = arith.constant 2 : index
    %k = arith.divui %j, %two : index
    %a = tensor.extract %A[%i, %k] : tensor<2x2xf32>
    te.yield %a : f32
  }
  func.return %c : tensor<2x4xf32>
}
