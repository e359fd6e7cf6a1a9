// RUN: xtc-opt %s -p graph-fuse-ops | filecheck %s
// RUN: xtc-opt %s -p graph-fuse-ops | xtc-opt | filecheck %s
// RUN: xtc-opt %s -p graph-fuse-ops --print-op-generic | xtc-opt | filecheck %s
// A second run finds nothing more to fuse.
// RUN: xtc-opt %s -p graph-fuse-ops,graph-fuse-ops | filecheck %s

// conv2d + bias_add + relu: one group, one call; the group's operands are
// the function's arguments.
// CHECK-LABEL: func.func @conv_bias_relu(
// CHECK-NEXT:    %[[R:.*]] = func.call @fused_conv2d_bias_add_relu_0(%x, %w, %b) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<1x4x8x8xf32>
// CHECK-NEXT:  }
func.func @conv_bias_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %y = graph.bias_add %c, %b {axis = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.relu %y : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %r : tensor<1x4x8x8xf32>
}

// conv2d + batch norm as mul/add by constants + a residual add whose other
// operand (%x) comes from outside + relu: one group; the constants stay here.
// CHECK-LABEL: func.func @conv_bn_residual(
// CHECK-NEXT:    %[[SCALE:.*]] = graph.constant
// CHECK-NEXT:    %[[SHIFT:.*]] = graph.constant
// CHECK-NEXT:    %[[R:.*]] = func.call @fused_conv2d_mul_add_add_relu_1(%x, %w, %[[SCALE]], %[[SHIFT]])
// CHECK-NEXT:    func.return %[[R]]
func.func @conv_bn_residual(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32> {
  %scale = graph.constant dense<[[[0.5]], [[1.5]], [[2.0]], [[0.25]]]> : tensor<4x1x1xf32>
  %shift = graph.constant dense<[[[0.1]], [[0.2]], [[0.3]], [[0.4]]]> : tensor<4x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %m = graph.mul %c, %scale : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %a = graph.add %m, %shift : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %s = graph.add %a, %x : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.relu %s : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %r : tensor<1x4x8x8xf32>
}

// dense + bias add + gelu.
// CHECK-LABEL: func.func @dense_gelu(
// CHECK-NEXT:    %[[G:.*]] = func.call @fused_dense_add_gelu_2(%x, %w, %b)
// CHECK-NEXT:    func.return %[[G]]
func.func @dense_gelu(%x: tensor<2x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<2x16xf32> {
  %d = graph.dense %x, %w : (tensor<2x8xf32>, tensor<16x8xf32>) -> tensor<2x16xf32>
  %a = graph.add %d, %b : (tensor<2x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  %g = graph.gelu %a : (tensor<2x16xf32>) -> tensor<2x16xf32>
  func.return %g : tensor<2x16xf32>
}

// Injective and elementwise ops fuse together, across a concat of two chains.
// CHECK-LABEL: func.func @injective_chain(
// CHECK-NEXT:    %[[E:.*]] = func.call @fused_reshape_transpose_neg_concat_exp_3(%x, %y)
// CHECK-NEXT:    func.return %[[E]]
func.func @injective_chain(%x: tensor<2x3x4xf32>, %y: tensor<4x6xf32>) -> tensor<4x12xf32> {
  %r = graph.reshape %x {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %t = graph.transpose %r : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %n = graph.neg %y : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %c = graph.concat %t, %n {axis = 1 : i64} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x12xf32>
  %e = graph.exp %c : (tensor<4x12xf32>) -> tensor<4x12xf32>
  func.return %e : tensor<4x12xf32>
}

// %r has two users: its group ends there (it is the group's output); the two
// branches that read it and meet again fuse on their own.
// CHECK-LABEL: func.func @two_uses(
// CHECK-NEXT:    %[[R:.*]] = func.call @fused_dense_relu_4(%x, %w)
// CHECK-NEXT:    %[[M:.*]] = func.call @fused_sigmoid_tanh_mul_5(%[[R]])
// CHECK-NEXT:    func.return %[[M]]
func.func @two_uses(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>) -> tensor<2x8xf32> {
  %d = graph.dense %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %r = graph.relu %d : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = graph.sigmoid %r : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %t = graph.tanh %r : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %m = graph.mul %s, %t : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %m : tensor<2x8xf32>
}

// A value returned by the function is never fused across.
// CHECK-LABEL: func.func @returned(
// CHECK-NEXT:    %[[D:.*]] = graph.dense %x, %w
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[D]]
// CHECK-NEXT:    func.return %[[D]], %[[R]]
func.func @returned(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %d = graph.dense %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %r = graph.relu %d : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %d, %r : tensor<2x8xf32>, tensor<2x8xf32>
}

// softmax (a reduction) takes an elementwise epilogue.
// CHECK-LABEL: func.func @softmax_epilogue(
// CHECK-NEXT:    %[[HALF:.*]] = graph.constant
// CHECK-NEXT:    %[[M:.*]] = func.call @fused_softmax_mul_6(%x, %[[HALF]])
// CHECK-NEXT:    func.return %[[M]]
func.func @softmax_epilogue(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %half = graph.constant dense<0.5> : tensor<f32>
  %s = graph.softmax %x : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %m = graph.mul %s, %half : (tensor<2x5xf32>, tensor<f32>) -> tensor<2x5xf32>
  func.return %m : tensor<2x5xf32>
}

// Two anchors never share a group: the add joins the first operand's
// dense, the other dense's group is an operand; a dense never joins a group.
// CHECK-LABEL: func.func @two_anchors(
// CHECK-NEXT:    %[[F:.*]] = func.call @fused_dense_relu_7(%x, %v)
// CHECK-NEXT:    %[[S:.*]] = func.call @fused_dense_add_8(%x, %w, %[[F]])
// CHECK-NEXT:    %[[G:.*]] = graph.dense %[[S]], %w
// CHECK-NEXT:    func.return %[[G]]
func.func @two_anchors(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>, %v: tensor<8x8xf32>) -> tensor<2x8xf32> {
  %d = graph.dense %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %e = graph.dense %x, %v : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %f = graph.relu %e : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = graph.add %d, %f : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %g = graph.dense %s, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  func.return %g : tensor<2x8xf32>
}

// An injective op is no anchor's epilogue; it starts its own chain.
// CHECK-LABEL: func.func @no_injective_epilogue(
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %w
// CHECK-NEXT:    %[[S:.*]] = func.call @fused_reshape_sqrt_9(%[[C]])
// CHECK-NEXT:    func.return %[[S]]
func.func @no_injective_epilogue(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<4x64xf32> {
  %c = graph.conv2d %x, %w : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.reshape %c {shape = array<i64: 4, 64>} : (tensor<1x4x8x8xf32>) -> tensor<4x64xf32>
  %s = graph.sqrt %r : (tensor<4x64xf32>) -> tensor<4x64xf32>
  func.return %s : tensor<4x64xf32>
}

// A reduction followed by elementwise ops.
// CHECK-LABEL: func.func @reduction_epilogue(
// CHECK-NEXT:    %[[N:.*]] = func.call @fused_reduce_mean_sqrt_neg_10(%x)
// CHECK-NEXT:    func.return %[[N]]
func.func @reduction_epilogue(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  %m = graph.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %s = graph.sqrt %m : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %n = graph.neg %s : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %n : tensor<2x4xf32>
}

// The outlined functions follow, private, marked graph.primitive, holding the
// group's ops in order and returning its output.
// CHECK-LABEL: func.func private @fused_conv2d_bias_add_relu_0(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> attributes {graph.primitive} {
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT:    %[[Y:.*]] = graph.bias_add %[[C]], %b {axis = 1 : i64}
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[Y]]
// CHECK-NEXT:    func.return %[[R]] : tensor<1x4x8x8xf32>
// CHECK-NEXT:  }

// CHECK-LABEL: func.func private @fused_conv2d_mul_add_add_relu_1(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>, %scale: tensor<4x1x1xf32>, %shift: tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32> attributes {graph.primitive} {
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %w
// CHECK-NEXT:    %[[M:.*]] = graph.mul %[[C]], %scale
// CHECK-NEXT:    %[[A:.*]] = graph.add %[[M]], %shift
// CHECK-NEXT:    %[[S:.*]] = graph.add %[[A]], %x
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[S]]
// CHECK-NEXT:    func.return %[[R]]

// CHECK-LABEL: func.func private @fused_dense_add_gelu_2(
// CHECK-NEXT:    graph.dense
// CHECK-NEXT:    graph.add
// CHECK-NEXT:    graph.gelu
// CHECK-NEXT:    func.return

// CHECK-LABEL: func.func private @fused_reshape_transpose_neg_concat_exp_3(
// CHECK-LABEL: func.func private @fused_dense_relu_4(
// CHECK-LABEL: func.func private @fused_sigmoid_tanh_mul_5(%r: tensor<2x8xf32>)
// CHECK-LABEL: func.func private @fused_softmax_mul_6(%x: tensor<2x5xf32>, %half: tensor<f32>)
// CHECK-NEXT:    %[[S:.*]] = graph.softmax %x
// CHECK-NEXT:    %[[M:.*]] = graph.mul %[[S]], %half
// CHECK-NEXT:    func.return %[[M]]
// CHECK-LABEL: func.func private @fused_dense_relu_7(
// CHECK-LABEL: func.func private @fused_dense_add_8(
// CHECK-LABEL: func.func private @fused_reshape_sqrt_9(
// CHECK-LABEL: func.func private @fused_reduce_mean_sqrt_neg_10(
// CHECK-NOT:   func.func
