// RUN: %verify | filecheck %s

func.func @reduce_axis_range(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: invalid-reduce.mlir:5:3: error: 'graph.reduce_sum' op axis 2 is out of range for rank 2
  %0 = graph.reduce_sum %a {axes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @reduce_repeated_axes(%a: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // CHECK: invalid-reduce.mlir:13:3: error: 'graph.reduce_max' op axes [1, -1] name axis 1 more than once
  %0 = graph.reduce_max %a {axes = array<i64: 1, -1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return %0 : tensor<2x1xf32>
}

// -----

func.func @reduce_wrong_result(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // CHECK: invalid-reduce.mlir:21:3: error: 'graph.reduce_mean' op result type tensor<2xf32> does not match the type inferred from its operands tensor<2x1xf32> (operands: tensor<2x3xf32>)
  %0 = graph.reduce_mean %a {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @reduce_keepdims_not_bool(%a: tensor<2x3xf32>) -> tensor<1x1xf32> {
  // CHECK: invalid-reduce.mlir:29:3: error: Expected attribute i1 but got i64
  %0 = graph.reduce_prod %a {keepdims = 1 : i64} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  func.return %0 : tensor<1x1xf32>
}

// -----

func.func @reduce_min_keepdims_result(%a: tensor<2x3xf32>) -> tensor<1x3xf32> {
  // CHECK: invalid-reduce.mlir:37:3: error: 'graph.reduce_min' op result type tensor<1x3xf32> does not match the type inferred from its operands tensor<3xf32> (operands: tensor<2x3xf32>)
  %0 = graph.reduce_min %a {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  func.return %0 : tensor<1x3xf32>
}

// -----

func.func @argmax_axis_range(%a: tensor<2x3xf32>) -> tensor<1x3xi64> {
  // CHECK: invalid-reduce.mlir:45:3: error: 'graph.argmax' op axis -3 is out of range for rank 2
  %0 = graph.argmax %a {axis = -3 : i64} : (tensor<2x3xf32>) -> tensor<1x3xi64>
  func.return %0 : tensor<1x3xi64>
}

// -----

func.func @argmin_empty_axis(%a: tensor<2x0xf32>) -> tensor<2x1xi64> {
  // CHECK: invalid-reduce.mlir:53:3: error: 'graph.argmin' op axis 1 of tensor<2x0xf32> is empty, it has no extreme value
  %0 = graph.argmin %a {axis = 1 : i64} : (tensor<2x0xf32>) -> tensor<2x1xi64>
  func.return %0 : tensor<2x1xi64>
}

// -----

func.func @argmax_result_not_i64(%a: tensor<2x3xf32>) -> tensor<3xi32> {
  // CHECK: invalid-reduce.mlir:61:3: error: 'graph.argmax' op result type tensor<3xi32> does not match the type inferred from its operands tensor<3xi64> (operands: tensor<2x3xf32>)
  %0 = graph.argmax %a {keepdims = false} : (tensor<2x3xf32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}
