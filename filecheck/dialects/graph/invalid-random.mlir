// RUN: xtc-opt %s --split-input-file --verify-diagnostics

func.func @random_uniform_of_integers() -> tensor<3xi32> {
  // expected-error @+1 {{'graph.random_uniform' op draws f16, bf16, f32 or f64 values, not i32}}
  %0 = graph.random_uniform {shape = array<i64: 3>, dtype = i32, seed = 1 : i64} : () -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @random_uniform_entropy_of_another_type(%e: tensor<2xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.random_uniform' op entropy is tensor<2xi64>, not tensor<i64>}}
  %0 = graph.random_uniform %e {shape = array<i64: 3>, dtype = f32, seed = 1 : i64} : (tensor<2xi64>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @random_uniform_result_of_another_shape() -> tensor<4xf32> {
  // expected-error @+1 {{'graph.random_uniform' op result type tensor<4xf32> does not match the type inferred from its operands tensor<3xf32> (operands: )}}
  %0 = graph.random_uniform {shape = array<i64: 3>, dtype = f32, seed = 1 : i64} : () -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @fresh_seed_of_another_type() -> tensor<2xi64> {
  // expected-error @+1 {{'graph.fresh_seed' op result type tensor<2xi64> does not match the type inferred from its operands tensor<i64> (operands: )}}
  %0 = graph.fresh_seed : tensor<2xi64>
  func.return %0 : tensor<2xi64>
}
