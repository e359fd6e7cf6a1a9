// RUN: %verify | filecheck %s

func.func @add_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // CHECK: invalid-elementwise.mlir:5:3: error: 'graph.add' op shapes tensor<2x3xf32> and tensor<4xf32> are not broadcast-compatible
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @relu_wrong_result(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // CHECK: invalid-elementwise.mlir:13:3: error: 'graph.relu' op result type tensor<3x2xf32> does not match the type inferred from its operands tensor<2x3xf32>
  %0 = graph.relu %a : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}
