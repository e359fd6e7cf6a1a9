// RUN: xtc-opt %s --split-input-file --verify-diagnostics

func.func @reduce_axis_range(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.reduce_sum' op axis 2 is out of range for rank 2}}
  %0 = graph.reduce_sum %a {axes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @reduce_repeated_axes(%a: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'graph.reduce_max' op axes [1, -1] name axis 1 more than once}}
  %0 = graph.reduce_max %a {axes = array<i64: 1, -1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return %0 : tensor<2x1xf32>
}

// -----

func.func @reduce_wrong_result(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'graph.reduce_mean' op result type tensor<2xf32> does not match the type inferred from its operands tensor<2x1xf32> (operands: tensor<2x3xf32>)}}
  %0 = graph.reduce_mean %a {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @reduce_keepdims_not_bool(%a: tensor<2x3xf32>) -> tensor<1x1xf32> {
  // expected-error @+1 {{Expected attribute i1 but got i64}}
  %0 = graph.reduce_prod %a {keepdims = 1 : i64} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  func.return %0 : tensor<1x1xf32>
}

// -----

func.func @reduce_min_keepdims_result(%a: tensor<2x3xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{'graph.reduce_min' op result type tensor<1x3xf32> does not match the type inferred from its operands tensor<3xf32> (operands: tensor<2x3xf32>)}}
  %0 = graph.reduce_min %a {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  func.return %0 : tensor<1x3xf32>
}

// -----

func.func @argmax_axis_range(%a: tensor<2x3xf32>) -> tensor<1x3xi64> {
  // expected-error @+1 {{'graph.argmax' op axis -3 is out of range for rank 2}}
  %0 = graph.argmax %a {axis = -3 : i64} : (tensor<2x3xf32>) -> tensor<1x3xi64>
  func.return %0 : tensor<1x3xi64>
}

// -----

func.func @argmin_empty_axis(%a: tensor<2x0xf32>) -> tensor<2x1xi64> {
  // expected-error @+1 {{'graph.argmin' op axis 1 of tensor<2x0xf32> is empty, it has no extreme value}}
  %0 = graph.argmin %a {axis = 1 : i64} : (tensor<2x0xf32>) -> tensor<2x1xi64>
  func.return %0 : tensor<2x1xi64>
}

// -----

func.func @argmax_result_not_i64(%a: tensor<2x3xf32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.argmax' op result type tensor<3xi32> does not match the type inferred from its operands tensor<3xi64> (operands: tensor<2x3xf32>)}}
  %0 = graph.argmax %a {keepdims = false} : (tensor<2x3xf32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @cumsum_axis_range(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.cumsum' op axis 2 is out of range for rank 2}}
  %0 = graph.cumsum %a {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @cumsum_bool(%a: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.cumsum' op cannot sum the i1 elements of tensor<3xi1>}}
  %0 = graph.cumsum %a {axis = 0 : i64} : (tensor<3xi1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @cumprod_bool(%a: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.cumprod' op cannot multiply the i1 elements of tensor<3xi1>}}
  %0 = graph.cumprod %a {axis = 0 : i64} : (tensor<3xi1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @cumsum_missing_axis(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{property 'axis' expected in operation 'graph.cumsum'}}
  %0 = graph.cumsum %a : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @topk_axis_range(%a: tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x1xi64>) {
  // expected-error @+1 {{'graph.topk' op axis -3 is out of range for rank 2}}
  %0:2 = graph.topk %a {k = 1 : i64, axis = -3 : i64} : (tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x1xi64>)
  func.return %0#0, %0#1 : tensor<2x1xf32>, tensor<2x1xi64>
}

// -----

func.func @topk_k_range(%a: tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xi64>) {
  // expected-error @+1 {{'graph.topk' op k 4 must be in 0..3, the size of axis 1 of tensor<2x3xf32>}}
  %0:2 = graph.topk %a {k = 4 : i64} : (tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xi64>)
  func.return %0#0, %0#1 : tensor<2x4xf32>, tensor<2x4xi64>
}

// -----

func.func @topk_indices_not_i64(%a: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>) {
  // expected-error @+1 {{'graph.topk' op result type tensor<2x2xf32>, tensor<2x2xi32> does not match the type inferred from its operands tensor<2x2xf32>, tensor<2x2xi64> (operands: tensor<2x3xf32>)}}
  %0:2 = graph.topk %a {k = 2 : i64} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>)
  func.return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x2xi32>
}
