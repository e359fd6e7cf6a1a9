// RUN: %roundtrip | filecheck %s
// RUN: %generic-roundtrip | filecheck %s

// CHECK-LABEL: func.func @random
func.func @random(%s: tensor<i64>) -> (tensor<2x3xf32>, tensor<4xf64>) {
  // CHECK: graph.random_uniform %{{.*}} {shape = array<i64: 2, 3>, dtype = f32, seed = 0 : i64, stream = 9 : i64} : (tensor<i64>) -> tensor<2x3xf32>
  %0 = graph.random_uniform %s {shape = array<i64: 2, 3>, dtype = f32, seed = 0 : i64, stream = 9 : i64} : (tensor<i64>) -> tensor<2x3xf32>
  // CHECK: graph.random_uniform {shape = array<i64: 4>, dtype = f64, seed = -5 : i64} : () -> tensor<4xf64>
  %1 = graph.random_uniform {shape = array<i64: 4>, dtype = f64, seed = -5 : i64} : () -> tensor<4xf64>
  func.return %0, %1 : tensor<2x3xf32>, tensor<4xf64>
}

// CHECK-LABEL: func.func @fresh_seed
func.func @fresh_seed() -> tensor<i64> {
  // CHECK: graph.fresh_seed : tensor<i64>
  %s = graph.fresh_seed : tensor<i64>
  func.return %s : tensor<i64>
}
