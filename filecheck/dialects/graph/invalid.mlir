// RUN: xtc-opt %s --split-input-file --verify-diagnostics

func.func @blob_of_the_wrong_size() -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.constant' op dense_resource<short_blob> holds 8 bytes, tensor<2x3xf32> needs 24}}
  %0 = graph.constant dense_resource<short_blob> : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      short_blob: "0x040000000000803F00000040"
    }
  }
#-}

// -----

func.func @not_a_tensor() -> vector<2xf32> {
  // expected-error @+1 {{graph.constant: the value's type vector<2xf32> is not a tensor}}
  %0 = graph.constant dense<1.0> : vector<2xf32>
  func.return %0 : vector<2xf32>
}

// -----

func.func @not_a_constant_attribute() -> tensor<2xf32> {
  // expected-error @+1 {{expected dense<...> or dense_resource<...> constant}}
  %0 = graph.constant 1.0 : f32
  func.return %0 : tensor<2xf32>
}
