// RUN: xtc-opt %s -p graph-fold-scale-axis,dce | filecheck %s

// Backward: a scale per output channel ([O,1,1]) goes into the conv2d weight.
// CHECK-LABEL: func.func @conv_scale
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<[{{\[\[\[}}1.000000e+00]]], {{\[\[\[}}1.200000e+01]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %[[W]] : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @conv_scale(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %s = graph.constant dense<[[[0.5]], [[4.0]]]> : tensor<2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.mul %c, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// Through a bias_add (an imported Conv's bias), the scale ([1,O,1,1], on
// the left) scales the bias too; strides and padding are kept.
// CHECK-LABEL: func.func @conv_bias_scale
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<[{{\[\[\[}}1.000000e+00]]], {{\[\[\[}}1.200000e+01]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %[[W]] {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<[5.000000e-01, -4.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.bias_add %[[C]], %[[B]] {axis = 1 : i64}
// CHECK-NEXT:    func.return %[[R]]
func.func @conv_bias_scale(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %s = graph.constant dense<[[[[0.5]], [[4.0]]]]> : tensor<1x2x1x1xf32>
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %cb = graph.bias_add %c, %b {axis = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.mul %s, %cb : (tensor<1x2x1x1xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// Through an add of a constant; a scalar scale.
// CHECK-LABEL: func.func @conv_add_scalar_scale
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<[{{\[\[\[}}4.000000e+00]]], {{\[\[\[}}6.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %[[W]]
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<[{{\[\[}}2.000000e+00]], {{\[\[}}-2.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.add %[[C]], %[[B]] : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @conv_add_scalar_scale(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %b = graph.constant dense<[[[1.0]], [[-1.0]]]> : tensor<2x1x1xf32>
  %s = graph.constant dense<2.0> : tensor<f32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %cb = graph.add %c, %b : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.mul %cb, %s : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// Two scales in a row fold one after the other.
// CHECK-LABEL: func.func @conv_two_scales
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<[{{\[\[\[}}2.000000e+00]]], {{\[\[\[}}2.400000e+01]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %[[W]]
// CHECK-NEXT:    func.return %[[C]]
func.func @conv_two_scales(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %s = graph.constant dense<[[[0.5]], [[4.0]]]> : tensor<2x1x1xf32>
  %t = graph.constant dense<2.0> : tensor<1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.mul %c, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %z = graph.mul %y, %t : (tensor<1x2x3x3xf32>, tensor<1xf32>) -> tensor<1x2x3x3xf32>
  func.return %z : tensor<1x2x3x3xf32>
}

// dense: W is N×K, the scale runs along the last axis, the bias_add's axis is -1.
// CHECK-LABEL: func.func @dense_bias_scale
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<[{{\[}}2.000000e+00, 4.000000e+00, 6.000000e+00], [-2.000000e+00, -2.500000e+00, -3.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT:    %[[D:.*]] = graph.dense %x, %[[W]] : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<[2.000000e+00, 5.000000e-01]> : tensor<2xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.bias_add %[[D]], %[[B]] {axis = -1 : i64}
// CHECK-NEXT:    func.return %[[R]]
func.func @dense_bias_scale(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %s = graph.constant dense<[[2.0, -0.5]]> : tensor<1x2xf32>
  %d = graph.dense %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %db = graph.bias_add %d, %b {axis = -1 : i64} : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %y = graph.mul %db, %s : (tensor<4x2xf32>, tensor<1x2xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// matmul: W is K×N, its columns scaled.
// CHECK-LABEL: func.func @matmul_scale
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<[{{\[}}2.000000e+00, -1.000000e+00], [6.000000e+00, -2.000000e+00], [1.000000e+01, -3.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.matmul %x, %[[W]] : (tensor<2x4x3xf32>, tensor<3x2xf32>) -> tensor<2x4x2xf32>
// CHECK-NEXT:    func.return %[[M]]
func.func @matmul_scale(%x: tensor<2x4x3xf32>) -> tensor<2x4x2xf32> {
  %w = graph.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %s = graph.constant dense<[2.0, -0.5]> : tensor<2xf32>
  %m = graph.matmul %x, %w : (tensor<2x4x3xf32>, tensor<3x2xf32>) -> tensor<2x4x2xf32>
  %y = graph.mul %m, %s : (tensor<2x4x2xf32>, tensor<2xf32>) -> tensor<2x4x2xf32>
  func.return %y : tensor<2x4x2xf32>
}

// Forward: a scale per input channel goes into the weight's input-channel
// axis; the zero padding is no obstacle (pad(x * s) = pad(x) * s).
// CHECK-LABEL: func.func @forward_padded
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}2.000000e+00]], {{\[\[}}-6.000000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %[[W]] {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x5x5xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @forward_padded(%x: tensor<1x2x3x3xf32>) -> tensor<1x1x5x5xf32> {
  %s = graph.constant dense<[[[[2.0]], [[-3.0]]]]> : tensor<1x2x1x1xf32>
  %w = graph.constant dense<[[[[1.0]], [[2.0]]]]> : tensor<1x2x1x1xf32>
  %xs = graph.mul %s, %x : (tensor<1x2x1x1xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %c = graph.conv2d %xs, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x5x5xf32>
  func.return %c : tensor<1x1x5x5xf32>
}

// Left alone: a scale that varies along W.
// CHECK-LABEL: func.func @spatial_scale
// CHECK:         graph.conv2d %x, %w
// CHECK-NEXT:    graph.mul
func.func @spatial_scale(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %s = graph.constant dense<[[[1.0, 2.0, 3.0]]]> : tensor<1x1x3xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.mul %c, %s : (tensor<1x2x3x3xf32>, tensor<1x1x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// Left alone: a scale that is an argument, not a constant.
// CHECK-LABEL: func.func @argument_scale
// CHECK:         graph.conv2d %x, %w
// CHECK-NEXT:    graph.mul
func.func @argument_scale(%x: tensor<1x1x3x3xf32>, %s: tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.mul %c, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// Left alone: a weight that is an argument.
// CHECK-LABEL: func.func @argument_weight
// CHECK:         graph.conv2d %x, %w
// CHECK-NEXT:    graph.mul
func.func @argument_weight(%x: tensor<1x1x3x3xf32>, %w: tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32> {
  %s = graph.constant dense<[[[0.5]], [[4.0]]]> : tensor<2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.mul %c, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// Left alone: the conv2d's result has another user (the relu), and so has
// the bias_add's (returned as well).
// CHECK-LABEL: func.func @conv_two_users
// CHECK:         %[[C:.*]] = graph.conv2d %x, %w
// CHECK-NEXT:    graph.mul %[[C]], %s
// CHECK-NEXT:    graph.relu %[[C]]
// CHECK-LABEL: func.func @bias_two_users
// CHECK:         %[[C:.*]] = graph.conv2d %x, %w
// CHECK-NEXT:    %[[B:.*]] = graph.bias_add %[[C]], %b
// CHECK-NEXT:    graph.mul %[[B]], %s
func.func @conv_two_users(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = graph.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %s = graph.constant dense<[[[0.5]], [[4.0]]]> : tensor<2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.mul %c, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %r = graph.relu %c : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %y, %r : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}
func.func @bias_two_users(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = graph.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %s = graph.constant dense<[[[0.5]], [[4.0]]]> : tensor<2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %cb = graph.bias_add %c, %b {axis = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.mul %cb, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  func.return %y, %cb : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// Left alone: a scale that widens the result (rank 5), one holding inf, a
// weight in another layout.
// CHECK-LABEL: func.func @widening_scale
// CHECK:         graph.conv2d %x, %w
// CHECK-NEXT:    graph.mul
// CHECK-LABEL: func.func @infinite_scale
// CHECK:         graph.conv2d %x, %w
// CHECK-NEXT:    graph.mul
// CHECK-LABEL: func.func @ihwo_weight
// CHECK:         graph.conv2d %x, %w {kernel_layout = "IHWO"}
// CHECK-NEXT:    graph.mul
func.func @widening_scale(%x: tensor<1x1x3x3xf32>) -> tensor<2x1x2x3x3xf32> {
  %w = graph.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %s = graph.constant dense<[[[[[0.5]]]], [[[[4.0]]]]]> : tensor<2x1x1x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.mul %c, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1x1x1xf32>) -> tensor<2x1x2x3x3xf32>
  func.return %y : tensor<2x1x2x3x3xf32>
}
func.func @infinite_scale(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %s = graph.constant dense_resource<inf_scale> : tensor<2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.mul %c, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}
func.func @ihwo_weight(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[2.0, 3.0]]]]> : tensor<1x1x1x2xf32>
  %s = graph.constant dense<[[[0.5]], [[4.0]]]> : tensor<2x1x1xf32>
  %c = graph.conv2d %x, %w {kernel_layout = "IHWO"} : (tensor<1x1x3x3xf32>, tensor<1x1x1x2xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.mul %c, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// Left alone, forward: a grouped conv2d, an add before the conv2d (it does
// not commute with the zero padding), a mul whose result has another user.
// CHECK-LABEL: func.func @forward_grouped
// CHECK:         %[[M:.*]] = graph.mul %x, %s
// CHECK-NEXT:    graph.conv2d %[[M]], %w {groups = 2 : i64}
// CHECK-LABEL: func.func @forward_add
// CHECK:         %[[A:.*]] = graph.add %x, %s
// CHECK-NEXT:    graph.conv2d %[[A]], %w
// CHECK-LABEL: func.func @forward_two_users
// CHECK:         %[[M:.*]] = graph.mul %x, %s
// CHECK-NEXT:    graph.conv2d %[[M]], %w
func.func @forward_grouped(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %s = graph.constant dense<[[[2.0]], [[-3.0]]]> : tensor<2x1x1xf32>
  %w = graph.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %xs = graph.mul %x, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %c = graph.conv2d %xs, %w {groups = 2 : i64} : (tensor<1x2x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  func.return %c : tensor<1x2x3x3xf32>
}
func.func @forward_add(%x: tensor<1x2x3x3xf32>) -> tensor<1x1x5x5xf32> {
  %s = graph.constant dense<[[[2.0]], [[-3.0]]]> : tensor<2x1x1xf32>
  %w = graph.constant dense<[[[[1.0]], [[2.0]]]]> : tensor<1x2x1x1xf32>
  %xs = graph.add %x, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %c = graph.conv2d %xs, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x5x5xf32>
  func.return %c : tensor<1x1x5x5xf32>
}
func.func @forward_two_users(%x: tensor<1x2x3x3xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>) {
  %s = graph.constant dense<[[[2.0]], [[-3.0]]]> : tensor<2x1x1xf32>
  %w = graph.constant dense<[[[[1.0]], [[2.0]]]]> : tensor<1x2x1x1xf32>
  %xs = graph.mul %x, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %c = graph.conv2d %xs, %w : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  func.return %c, %xs : tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      inf_scale: "0x040000000000807F0000803F"
    }
  }
#-}
