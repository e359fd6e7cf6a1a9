// RUN: %roundtrip | filecheck %s
// RUN: %generic-roundtrip | filecheck %s

// CHECK-LABEL: func.func @reductions
func.func @reductions(%a: tensor<2x3x4xf32>) -> tensor<1x1x1xf32> {
  // CHECK: graph.reduce_sum %{{.*}} {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %0 = graph.reduce_sum %a {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  // CHECK: graph.reduce_mean %{{.*}} {axes = array<i64: 0, -1>} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  %1 = graph.reduce_mean %a {axes = array<i64: 0, -1>} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  // CHECK: graph.reduce_max %{{.*}} {axes = array<i64>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  %2 = graph.reduce_max %a {axes = array<i64>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  // CHECK: graph.reduce_min %{{.*}} {keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  %3 = graph.reduce_min %a {keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  // CHECK: graph.reduce_prod %{{.*}} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  %4 = graph.reduce_prod %a : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  func.return %4 : tensor<1x1x1xf32>
}

// CHECK-LABEL: func.func @integer_reductions
func.func @integer_reductions(%a: tensor<5x2xi32>) -> tensor<2xi32> {
  // CHECK: graph.reduce_sum %{{.*}} {axes = array<i64: 0>, keepdims = false} : (tensor<5x2xi32>) -> tensor<2xi32>
  %0 = graph.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<5x2xi32>) -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}

// CHECK-LABEL: func.func @arg_reductions
func.func @arg_reductions(%a: tensor<2x3x4xf32>) -> tensor<2x4xi64> {
  // CHECK: graph.argmax %{{.*}} {axis = 1 : i64, keepdims = false, select_last_index = true} : (tensor<2x3x4xf32>) -> tensor<2x4xi64>
  %0 = graph.argmax %a {axis = 1 : i64, keepdims = false, select_last_index = true} : (tensor<2x3x4xf32>) -> tensor<2x4xi64>
  // CHECK: graph.argmin %{{.*}} : (tensor<2x3x4xf32>) -> tensor<1x3x4xi64>
  %1 = graph.argmin %a : (tensor<2x3x4xf32>) -> tensor<1x3x4xi64>
  // CHECK: graph.argmin %{{.*}} {axis = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x1xi64>
  %2 = graph.argmin %a {axis = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x1xi64>
  func.return %0 : tensor<2x4xi64>
}

// CHECK-LABEL: func.func @scans_and_selections
func.func @scans_and_selections(%a: tensor<2x5xf32>, %b: tensor<4xi32>) -> tensor<2x2xi64> {
  // CHECK: graph.cumsum %{{.*}} {axis = 1 : i64, exclusive = true, reverse = true} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %0 = graph.cumsum %a {axis = 1 : i64, exclusive = true, reverse = true} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  // CHECK: graph.cumsum %{{.*}} {axis = 0 : i64} : (tensor<4xi32>) -> tensor<4xi32>
  %1 = graph.cumsum %b {axis = 0 : i64} : (tensor<4xi32>) -> tensor<4xi32>
  // CHECK: graph.cumprod %{{.*}} {axis = 1 : i64, reverse = true} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %p = graph.cumprod %a {axis = 1 : i64, reverse = true} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  // CHECK: %{{.*}}, %{{.*}} = graph.topk %{{.*}} {k = 2 : i64} : (tensor<2x5xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
  %2:2 = graph.topk %a {k = 2 : i64} : (tensor<2x5xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
  // CHECK: graph.topk %{{.*}} {k = 1 : i64, axis = 0 : i64, largest = false} : (tensor<2x5xf32>) -> (tensor<1x5xf32>, tensor<1x5xi64>)
  %3:2 = graph.topk %a {k = 1 : i64, axis = 0 : i64, largest = false} : (tensor<2x5xf32>) -> (tensor<1x5xf32>, tensor<1x5xi64>)
  func.return %2#1 : tensor<2x2xi64>
}
