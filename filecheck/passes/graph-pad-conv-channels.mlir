// RUN: xtc-opt %s -p 'graph-pad-conv-channels{multiple=4},dce' | filecheck %s
// RUN: xtc-opt %s -p graph-pad-conv-channels,dce | filecheck %s --check-prefix=SIXTEEN
// RUN: not xtc-opt %s -p 'graph-pad-conv-channels{multiple=0}' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: not xtc-opt %s -p 'graph-pad-conv-channels{block=0}' 2>&1 | filecheck %s --check-prefix=NOBLOCK

// ZERO: error: graph-pad-conv-channels: multiple must be at least 1, got 0
// NOBLOCK: error: graph-pad-conv-channels: block must be at least 1, got 0

// 11 output channels computed as 12 (one zero channel: at most 1/8 of 11),
// the 12th sliced off; strides and padding kept.
// CHECK-LABEL: func.func @conv_padded
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<[{{\[\[\[}}1.000000e+00]]], {{\[\[\[}}2.000000e+00]]], {{.*}}, {{\[\[\[}}1.100000e+01]]], {{\[\[\[}}0.000000e+00]]]]> : tensor<12x1x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %[[W]] {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x3x3xf32>, tensor<12x1x1x1xf32>) -> tensor<1x12x3x3xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.slice %[[C]] {starts = array<i64: 0>, ends = array<i64: 11>, axes = array<i64: 1>} : (tensor<1x12x3x3xf32>) -> tensor<1x11x3x3xf32>
// CHECK-NEXT:    func.return %[[S]]
// With the default multiple (16), 11 channels would take 5 zero ones: kept.
// SIXTEEN-LABEL: func.func @conv_padded
// SIXTEEN-NEXT:    graph.constant
// SIXTEEN-NEXT:    graph.conv2d %x, %{{.*}} {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x3x3xf32>, tensor<11x1x1x1xf32>)
func.func @conv_padded(%x: tensor<1x1x3x3xf32>) -> tensor<1x11x3x3xf32> {
  %w = graph.constant dense<[[[[1.0]]], [[[2.0]]], [[[3.0]]], [[[4.0]]], [[[5.0]]], [[[6.0]]], [[[7.0]]], [[[8.0]]], [[[9.0]]], [[[10.0]]], [[[11.0]]]]> : tensor<11x1x1x1xf32>
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x3x3xf32>, tensor<11x1x1x1xf32>) -> tensor<1x11x3x3xf32>
  func.return %c : tensor<1x11x3x3xf32>
}

// Channels the multiple divides are kept.
// CHECK-LABEL: func.func @conv_even
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    graph.conv2d %x, %{{.*}} : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return
func.func @conv_even(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  func.return %c : tensor<1x2x3x3xf32>
}

// So are 3 channels (a 4th would be 1/3 more work: 11 is the fewest that
// one zero channel pads), a grouped conv and a weight that is no constant.
// CHECK-LABEL: func.func @conv_kept
// CHECK-NOT:     graph.slice
// CHECK:         func.return
func.func @conv_kept(%x: tensor<1x2x3x3xf32>, %v: tensor<11x2x1x1xf32>) -> (tensor<1x3x3x3xf32>, tensor<1x18x3x3xf32>, tensor<1x11x3x3xf32>) {
  %w = graph.constant dense<1.0> : tensor<3x2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x2x3x3xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x3x3xf32>
  %g = graph.constant dense<1.0> : tensor<18x1x1x1xf32>
  %d = graph.conv2d %x, %g {groups = 2 : i64} : (tensor<1x2x3x3xf32>, tensor<18x1x1x1xf32>) -> tensor<1x18x3x3xf32>
  %e = graph.conv2d %x, %v : (tensor<1x2x3x3xf32>, tensor<11x2x1x1xf32>) -> tensor<1x11x3x3xf32>
  func.return %c, %d, %e : tensor<1x3x3x3xf32>, tensor<1x18x3x3xf32>, tensor<1x11x3x3xf32>
}

// 1000 channels take a whole activation block, 1024 (24 zero channels: at
// most 1/32 of 1000), whatever the multiple.
// CHECK-LABEL: func.func @conv_block
// CHECK-NEXT:    %[[W:.*]] = graph.constant {{.*}} : tensor<1024x1x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %[[W]] : (tensor<1x1x2x2xf32>, tensor<1024x1x1x1xf32>) -> tensor<1x1024x2x2xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.slice %[[C]] {starts = array<i64: 0>, ends = array<i64: 1000>, axes = array<i64: 1>} : (tensor<1x1024x2x2xf32>) -> tensor<1x1000x2x2xf32>
// CHECK-NEXT:    func.return %[[S]]
// SIXTEEN-LABEL: func.func @conv_block
// SIXTEEN:         graph.conv2d {{.*}} -> tensor<1x1024x2x2xf32>
func.func @conv_block(%x: tensor<1x1x2x2xf32>) -> tensor<1x1000x2x2xf32> {
  %w = graph.constant dense<1.5> : tensor<1000x1x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x2x2xf32>, tensor<1000x1x1x1xf32>) -> tensor<1x1000x2x2xf32>
  func.return %c : tensor<1x1000x2x2xf32>
}

// 200 channels would take 24 zero ones for a block (more than 1/32): with
// the default multiple, 208 (8 zero ones, at most 1/8); 4 divides 200.
// CHECK-LABEL: func.func @conv_vector
// CHECK-NOT:     graph.slice
// CHECK:         func.return
// SIXTEEN-LABEL: func.func @conv_vector
// SIXTEEN:         graph.conv2d {{.*}} -> tensor<1x208x2x2xf32>
// SIXTEEN-NEXT:    graph.slice {{.*}} -> tensor<1x200x2x2xf32>
func.func @conv_vector(%x: tensor<1x1x2x2xf32>) -> tensor<1x200x2x2xf32> {
  %w = graph.constant dense<2.5> : tensor<200x1x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x2x2xf32>, tensor<200x1x1x1xf32>) -> tensor<1x200x2x2xf32>
  func.return %c : tensor<1x200x2x2xf32>
}
