// RUN: xtc-opt %s -p graph-simplify-inference,dce | filecheck %s
// RUN: xtc-opt %s -p graph-simplify-inference,graph-fold-constants,dce | filecheck %s --check-prefix=FOLD

// conv2d -> batch_norm: the batch norm disappears into new weights and a bias.
// CHECK-LABEL: func.func @conv_bn
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{.*}}> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<[{{.*}}]> : tensor<2xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %[[W]]{{.*}} : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.bias_add %[[C]], %[[B]] {axis = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %[[R]]
// CHECK-NOT:   graph.batch_norm
func.func @conv_bn(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %gamma = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %beta = graph.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = graph.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.batch_norm %c, %gamma, %beta, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// conv2d -> bias_add -> dropout -> batch_norm: the dropout goes, the old bias joins the new one.
// CHECK-LABEL: func.func @conv_bias_dropout_bn
// CHECK:         graph.conv2d
// CHECK-NEXT:    graph.bias_add
// CHECK-NEXT:    func.return
func.func @conv_bias_dropout_bn(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %gamma = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %beta = graph.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = graph.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %cb = graph.bias_add %c, %b {axis = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %d = graph.dropout %cb : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.batch_norm %d, %gamma, %beta, %mean, %var : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// dense -> batch_norm over the features.
// CHECK-LABEL: func.func @dense_bn
// CHECK:         %[[D:.*]] = graph.dense %x, %{{.*}} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    graph.bias_add %[[D]], %{{.*}} {axis = 1 : i64}
// CHECK-NOT:   graph.batch_norm
func.func @dense_bn(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %gamma = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %beta = graph.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = graph.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %d = graph.dense %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %y = graph.batch_norm %d, %gamma, %beta, %mean, %var : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// A batch norm on an argument (nothing to fold into) becomes x * scale + shift;
// the conv feeding two users is not folded either. Identity disappears.
// CHECK-LABEL: func.func @expand
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<{{.*}}> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[T:.*]] = graph.constant dense<{{.*}}> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.mul %x, %[[S]] : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.add %[[M]], %[[T]] : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %[[A]]
func.func @expand(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %gamma = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %beta = graph.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = graph.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %i = graph.identity %x : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.batch_norm %i, %gamma, %beta, %mean, %var : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @shared_conv
// CHECK:         graph.conv2d
// CHECK:         graph.mul
// CHECK:         graph.add
// CHECK:         graph.relu
func.func @shared_conv(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = graph.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %gamma = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %beta = graph.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = graph.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.batch_norm %c, %gamma, %beta, %mean, %var : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %r = graph.relu %c : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %y, %r : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// A batch norm whose parameters are arguments stays.
// CHECK-LABEL: func.func @dynamic_parameters
// CHECK:         graph.batch_norm
func.func @dynamic_parameters(%x: tensor<1x2x3x3xf32>, %p: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %y = graph.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// With constant folding after it, nothing but the conv, the bias and the constants remain.
// FOLD-LABEL: func.func @conv_bn
// FOLD-NEXT:    graph.constant dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}6.000000e+00]]]]> : tensor<2x1x1x1xf32>
// FOLD-NEXT:    graph.constant dense<[0.000000e+00, -5.000000e-01]> : tensor<2xf32>
