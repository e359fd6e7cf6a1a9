// RUN: xtc-opt %s -p "graph-block-activations{block=4 always=true},dce" | filecheck %s
// RUN: xtc-opt %s -p "graph-block-activations{block=4},dce" | filecheck %s --check-prefix=PAYS
// RUN: xtc-opt %s -p "graph-block-activations{block=4 winograd=false},dce" | filecheck %s --check-prefix=DIRECT

// With always=true every conv that can be is blocked (the CHECK lines); by
// default only regions that pay are (the PAYS lines): at least half their
// convs 1x1, and their edge transforms moving at most half what their
// convs write.

// A conv, its bias and relu, a second conv, a scalar scale and a residual
// add of the input: one transform into NCHW4c at the entry (shared by the
// first conv and the residual), the bias a blocked constant, one transform
// back at the exit.
// PAYS-LABEL: func.func @block_chain
// PAYS-NOT:     layout_transform
// PAYS:         func.return
// CHECK-LABEL: func.func @block_chain
// CHECK-NEXT:    %[[X:.*]] = graph.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW4c"} : (tensor<1x8x5x5xf32>) -> tensor<1x2x5x5x4xf32>
// CHECK-NEXT:    %[[C1:.*]] = graph.conv2d %[[X]], %w1 {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"} : (tensor<1x2x5x5x4xf32>, tensor<2x8x3x3x4xf32>) -> tensor<1x2x5x5x4xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<{{\[\[\[\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]], {{\[\[\[}}5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]]]]]> : tensor<1x2x1x1x4xf32>
// CHECK-NEXT:    %[[A1:.*]] = graph.add %[[C1]], %[[B]] : (tensor<1x2x5x5x4xf32>, tensor<1x2x1x1x4xf32>) -> tensor<1x2x5x5x4xf32>
// CHECK-NEXT:    %[[R1:.*]] = graph.relu %[[A1]] : (tensor<1x2x5x5x4xf32>) -> tensor<1x2x5x5x4xf32>
// CHECK-NEXT:    %[[C2:.*]] = graph.conv2d %[[R1]], %w2 {kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"}
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<5.000000e-01> : tensor<1x1x1x1x1xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.mul %[[C2]], %[[S]]
// CHECK-NEXT:    %[[SUM:.*]] = graph.add %[[M]], %[[X]] : (tensor<1x2x5x5x4xf32>, tensor<1x2x5x5x4xf32>) -> tensor<1x2x5x5x4xf32>
// CHECK-NEXT:    %[[OUT:.*]] = graph.layout_transform %[[SUM]] {src_layout = "NCHW4c", dst_layout = "NCHW"} : (tensor<1x2x5x5x4xf32>) -> tensor<1x8x5x5xf32>
// CHECK-NEXT:    func.return %[[OUT]] : tensor<1x8x5x5xf32>
func.func @block_chain(%x: tensor<1x8x5x5xf32>, %w1: tensor<2x8x3x3x4xf32>, %w2: tensor<2x8x1x1x4xf32>) -> tensor<1x8x5x5xf32> {
  %b = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %s = graph.constant dense<0.5> : tensor<f32>
  %c1 = graph.conv2d %x, %w1 {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o"} : (tensor<1x8x5x5xf32>, tensor<2x8x3x3x4xf32>) -> tensor<1x8x5x5xf32>
  %a1 = graph.bias_add %c1, %b {axis = 1 : i64} : (tensor<1x8x5x5xf32>, tensor<8xf32>) -> tensor<1x8x5x5xf32>
  %r1 = graph.relu %a1 : (tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32>
  %c2 = graph.conv2d %r1, %w2 {kernel_layout = "OIHW4o"} : (tensor<1x8x5x5xf32>, tensor<2x8x1x1x4xf32>) -> tensor<1x8x5x5xf32>
  %m = graph.mul %c2, %s : (tensor<1x8x5x5xf32>, tensor<f32>) -> tensor<1x8x5x5xf32>
  %sum = graph.add %m, %x : (tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32>
  func.return %sum : tensor<1x8x5x5xf32>
}

// The edges of the blocked region: a stem conv of 3 input channels reads
// NCHW and writes NCHW4c, its pool is blocked, the two convs reading the
// pool need no transform; a pool between blocked convs is blocked, and so
// is the global pool, the transform back moved below it (C values, not
// C×H×W). By default too: two of its four convs are 1x1, and its one
// transform moves less than half of what its convs write.
// PAYS-LABEL: func.func @edges
// PAYS-COUNT-4: graph.conv2d {{.*}}out_layout = "NCHW4c"
// PAYS:         graph.global_avg_pool2d {{.*}}data_layout = "NCHW4c"
// CHECK-LABEL: func.func @edges
// CHECK-NEXT:    %[[C1:.*]] = graph.conv2d %x, %w1 {kernel_layout = "OIHW4o", data_layout = "NCHW", out_layout = "NCHW4c"} : (tensor<1x3x6x6xf32>, tensor<2x3x1x1x4xf32>) -> tensor<1x2x6x6x4xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.max_pool2d %[[C1]] {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, data_layout = "NCHW4c"} : (tensor<1x2x6x6x4xf32>) -> tensor<1x2x3x3x4xf32>
// CHECK-NEXT:    %[[C2:.*]] = graph.conv2d %[[P]], %w2 {{.*}}data_layout = "NCHW4c", out_layout = "NCHW4c"
// CHECK-NEXT:    %[[C3:.*]] = graph.conv2d %[[P]], %w3 {{.*}}data_layout = "NCHW4c", out_layout = "NCHW4c"
// CHECK-NEXT:    %[[Q:.*]] = graph.max_pool2d %[[C3]] {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, data_layout = "NCHW4c"} : (tensor<1x2x3x3x4xf32>) -> tensor<1x2x3x3x4xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.add %[[C2]], %[[Q]]
// CHECK-NEXT:    %[[C4:.*]] = graph.conv2d %[[A]], %w2 {{.*}}data_layout = "NCHW4c", out_layout = "NCHW4c"
// CHECK-NEXT:    %[[G:.*]] = graph.global_avg_pool2d %[[C4]] {data_layout = "NCHW4c"} : (tensor<1x2x3x3x4xf32>) -> tensor<1x2x1x1x4xf32>
// CHECK-NEXT:    %[[U:.*]] = graph.layout_transform %[[G]] {src_layout = "NCHW4c", dst_layout = "NCHW"} : (tensor<1x2x1x1x4xf32>) -> tensor<1x8x1x1xf32>
// CHECK-NEXT:    func.return %[[U]]
func.func @edges(%x: tensor<1x3x6x6xf32>, %w1: tensor<2x3x1x1x4xf32>, %w2: tensor<2x8x1x1x4xf32>, %w3: tensor<2x8x3x3x4xf32>) -> tensor<1x8x1x1xf32> {
  %c1 = graph.conv2d %x, %w1 {kernel_layout = "OIHW4o"} : (tensor<1x3x6x6xf32>, tensor<2x3x1x1x4xf32>) -> tensor<1x8x6x6xf32>
  %p = graph.max_pool2d %c1 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x6x6xf32>) -> tensor<1x8x3x3xf32>
  %c2 = graph.conv2d %p, %w2 {kernel_layout = "OIHW4o"} : (tensor<1x8x3x3xf32>, tensor<2x8x1x1x4xf32>) -> tensor<1x8x3x3xf32>
  %c3 = graph.conv2d %p, %w3 {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o"} : (tensor<1x8x3x3xf32>, tensor<2x8x3x3x4xf32>) -> tensor<1x8x3x3xf32>
  %q = graph.max_pool2d %c3 {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  %a = graph.add %c2, %q : (tensor<1x8x3x3xf32>, tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  %c4 = graph.conv2d %a, %w2 {kernel_layout = "OIHW4o"} : (tensor<1x8x3x3xf32>, tensor<2x8x1x1x4xf32>) -> tensor<1x8x3x3xf32>
  %g = graph.global_avg_pool2d %c4 : (tensor<1x8x3x3xf32>) -> tensor<1x8x1x1xf32>
  func.return %g : tensor<1x8x1x1xf32>
}

// A region that pays: four 1x1 convs and a 3x3 one, with a transform in
// and one out (each the size of one conv's output).
// PAYS-LABEL: func.func @pays
// PAYS-NEXT:    %[[X:.*]] = graph.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW4c"}
// PAYS-COUNT-5: graph.conv2d {{.*}}data_layout = "NCHW4c", out_layout = "NCHW4c"
// PAYS-NEXT:    %[[OUT:.*]] = graph.layout_transform %{{.*}} {src_layout = "NCHW4c", dst_layout = "NCHW"}
// PAYS-NEXT:    func.return %[[OUT]]
// CHECK-LABEL: func.func @pays
// CHECK-COUNT-5: graph.conv2d {{.*}}data_layout = "NCHW4c", out_layout = "NCHW4c"
func.func @pays(%x: tensor<1x8x4x4xf32>, %w1: tensor<2x8x1x1x4xf32>, %w3: tensor<2x8x3x3x4xf32>) -> tensor<1x8x4x4xf32> {
  %a = graph.conv2d %x, %w1 {kernel_layout = "OIHW4o"} : (tensor<1x8x4x4xf32>, tensor<2x8x1x1x4xf32>) -> tensor<1x8x4x4xf32>
  %b = graph.conv2d %a, %w3 {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o"} : (tensor<1x8x4x4xf32>, tensor<2x8x3x3x4xf32>) -> tensor<1x8x4x4xf32>
  %c = graph.conv2d %b, %w1 {kernel_layout = "OIHW4o"} : (tensor<1x8x4x4xf32>, tensor<2x8x1x1x4xf32>) -> tensor<1x8x4x4xf32>
  %d = graph.conv2d %c, %w1 {kernel_layout = "OIHW4o"} : (tensor<1x8x4x4xf32>, tensor<2x8x1x1x4xf32>) -> tensor<1x8x4x4xf32>
  %e = graph.conv2d %d, %w1 {kernel_layout = "OIHW4o"} : (tensor<1x8x4x4xf32>, tensor<2x8x1x1x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %e : tensor<1x8x4x4xf32>
}

// Not paying: mostly 3x3 convs (as in VGG), though their transforms are small.
// PAYS-LABEL: func.func @mostly_windowed
// PAYS-NOT:     layout_transform
// PAYS:         func.return
// CHECK-LABEL: func.func @mostly_windowed
// CHECK-COUNT-4: graph.conv2d {{.*}}data_layout = "NCHW4c", out_layout = "NCHW4c"
func.func @mostly_windowed(%x: tensor<1x8x4x4xf32>, %w1: tensor<2x8x1x1x4xf32>, %w3: tensor<2x8x3x3x4xf32>) -> tensor<1x8x4x4xf32> {
  %a = graph.conv2d %x, %w3 {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o"} : (tensor<1x8x4x4xf32>, tensor<2x8x3x3x4xf32>) -> tensor<1x8x4x4xf32>
  %b = graph.conv2d %a, %w3 {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o"} : (tensor<1x8x4x4xf32>, tensor<2x8x3x3x4xf32>) -> tensor<1x8x4x4xf32>
  %c = graph.conv2d %b, %w3 {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o"} : (tensor<1x8x4x4xf32>, tensor<2x8x3x3x4xf32>) -> tensor<1x8x4x4xf32>
  %d = graph.conv2d %c, %w1 {kernel_layout = "OIHW4o"} : (tensor<1x8x4x4xf32>, tensor<2x8x1x1x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %d : tensor<1x8x4x4xf32>
}

// Left alone: a grouped conv, a conv whose weights are blocked by 8 (not
// the pass's 4), and one in ONNX's OIHW.
// PAYS-LABEL: func.func @left_alone
// PAYS-NOT:     layout_transform
// PAYS:         func.return
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     layout_transform
// CHECK-NOT:     _layout = "NCHW
// CHECK:         func.return
func.func @left_alone(%x: tensor<1x8x4x4xf32>, %wg: tensor<2x4x1x1x4xf32>, %w8: tensor<1x8x1x1x8xf32>, %w: tensor<8x8x1x1xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) {
  %g = graph.conv2d %x, %wg {groups = 2 : i64, kernel_layout = "OIHW4o"} : (tensor<1x8x4x4xf32>, tensor<2x4x1x1x4xf32>) -> tensor<1x8x4x4xf32>
  %e = graph.conv2d %x, %w8 {kernel_layout = "OIHW8o"} : (tensor<1x8x4x4xf32>, tensor<1x8x1x1x8xf32>) -> tensor<1x8x4x4xf32>
  %o = graph.conv2d %x, %w : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  func.return %g, %e, %o : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
}

// Four 3x3 convs with constant weights at 8x8: graph-winograd takes them
// once blocked, so by default the region pays like 1x1 convs (PAYS); with
// winograd=false they are windowed convs and stay NCHW (DIRECT).
// PAYS-LABEL: func.func @winograd_chain
// PAYS:         graph.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW4c"}
// PAYS-COUNT-4: data_layout = "NCHW4c", out_layout = "NCHW4c"
// DIRECT-LABEL: func.func @winograd_chain
// DIRECT-NOT:     graph.layout_transform
// DIRECT:         func.return
func.func @winograd_chain(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = graph.constant dense<0.5> : tensor<1x4x3x3x4xf32>
  %c1 = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o"} : (tensor<1x4x8x8xf32>, tensor<1x4x3x3x4xf32>) -> tensor<1x4x8x8xf32>
  %c2 = graph.conv2d %c1, %w {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o"} : (tensor<1x4x8x8xf32>, tensor<1x4x3x3x4xf32>) -> tensor<1x4x8x8xf32>
  %c3 = graph.conv2d %c2, %w {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o"} : (tensor<1x4x8x8xf32>, tensor<1x4x3x3x4xf32>) -> tensor<1x4x8x8xf32>
  %c4 = graph.conv2d %c3, %w {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o"} : (tensor<1x4x8x8xf32>, tensor<1x4x3x3x4xf32>) -> tensor<1x4x8x8xf32>
  func.return %c4 : tensor<1x4x8x8xf32>
}

// A depthwise conv (groups = C = O, its weight a constant in OIHW) between
// two 1x1 convs, as in MobileNet-v2: its weight is blocked alike (C/4 x 1 x
// 3 x 3 x 4) and it runs on the blocked activations, so the region has one
// transform in and one out. A depthwise conv counts as neither 1x1 nor
// windowed, and the convs write 4x what the transforms move: it pays (PAYS).
// PAYS-LABEL: func.func @depthwise_between_pointwise
// PAYS:         graph.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW4c"}
// PAYS-NEXT:    graph.conv2d {{.*}}data_layout = "NCHW4c", out_layout = "NCHW4c"
// PAYS-NEXT:    graph.constant
// PAYS-NEXT:    graph.conv2d {{.*}}groups = 16 : i64, kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"
// PAYS-NEXT:    graph.relu
// PAYS-NEXT:    graph.conv2d {{.*}}data_layout = "NCHW4c", out_layout = "NCHW4c"
// PAYS-NEXT:    graph.layout_transform {{.*}}src_layout = "NCHW4c", dst_layout = "NCHW"
// PAYS-NEXT:    func.return
// CHECK-LABEL: func.func @depthwise_between_pointwise
// CHECK:         %[[X:.*]] = graph.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW4c"} : (tensor<1x4x6x6xf32>) -> tensor<1x1x6x6x4xf32>
// CHECK-NEXT:    %[[E:.*]] = graph.conv2d %[[X]], %w1 {kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"} : (tensor<1x1x6x6x4xf32>, tensor<4x4x1x1x4xf32>) -> tensor<1x4x6x6x4xf32>
// CHECK-NEXT:    %[[W:.*]] = graph.constant {{.*}} : tensor<4x1x3x3x4xf32>
// CHECK-NEXT:    %[[D:.*]] = graph.conv2d %[[E]], %[[W]] {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, groups = 16 : i64, kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"} : (tensor<1x4x6x6x4xf32>, tensor<4x1x3x3x4xf32>) -> tensor<1x4x3x3x4xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[D]] : (tensor<1x4x3x3x4xf32>) -> tensor<1x4x3x3x4xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.conv2d %[[R]], %w2 {kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"} : (tensor<1x4x3x3x4xf32>, tensor<1x16x1x1x4xf32>) -> tensor<1x1x3x3x4xf32>
// CHECK-NEXT:    %[[OUT:.*]] = graph.layout_transform %[[P]] {src_layout = "NCHW4c", dst_layout = "NCHW"} : (tensor<1x1x3x3x4xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:    func.return %[[OUT]] : tensor<1x4x3x3xf32>
func.func @depthwise_between_pointwise(%x: tensor<1x4x6x6xf32>, %w1: tensor<4x4x1x1x4xf32>, %w2: tensor<1x16x1x1x4xf32>) -> tensor<1x4x3x3xf32> {
  %w = graph.constant dense<[[[[-0.75, -0.50, -0.25],   [ 0.00,  0.25,  0.50],   [ 0.75, -0.75, -0.50]]], [[[-0.25,  0.00,  0.25],   [ 0.50,  0.75, -0.75],   [-0.50, -0.25,  0.00]]], [[[ 0.25,  0.50,  0.75],   [-0.75, -0.50, -0.25],   [ 0.00,  0.25,  0.50]]], [[[ 0.75, -0.75, -0.50],   [-0.25,  0.00,  0.25],   [ 0.50,  0.75, -0.75]]], [[[-0.50, -0.25,  0.00],   [ 0.25,  0.50,  0.75],   [-0.75, -0.50, -0.25]]], [[[ 0.00,  0.25,  0.50],   [ 0.75, -0.75, -0.50],   [-0.25,  0.00,  0.25]]], [[[ 0.50,  0.75, -0.75],   [-0.50, -0.25,  0.00],   [ 0.25,  0.50,  0.75]]], [[[-0.75, -0.50, -0.25],   [ 0.00,  0.25,  0.50],   [ 0.75, -0.75, -0.50]]], [[[-0.25,  0.00,  0.25],   [ 0.50,  0.75, -0.75],   [-0.50, -0.25,  0.00]]], [[[ 0.25,  0.50,  0.75],   [-0.75, -0.50, -0.25],   [ 0.00,  0.25,  0.50]]], [[[ 0.75, -0.75, -0.50],   [-0.25,  0.00,  0.25],   [ 0.50,  0.75, -0.75]]], [[[-0.50, -0.25,  0.00],   [ 0.25,  0.50,  0.75],   [-0.75, -0.50, -0.25]]], [[[ 0.00,  0.25,  0.50],   [ 0.75, -0.75, -0.50],   [-0.25,  0.00,  0.25]]], [[[ 0.50,  0.75, -0.75],   [-0.50, -0.25,  0.00],   [ 0.25,  0.50,  0.75]]], [[[-0.75, -0.50, -0.25],   [ 0.00,  0.25,  0.50],   [ 0.75, -0.75, -0.50]]], [[[-0.25,  0.00,  0.25],   [ 0.50,  0.75, -0.75],   [-0.50, -0.25,  0.00]]]]> : tensor<16x1x3x3xf32>
  %e = graph.conv2d %x, %w1 {kernel_layout = "OIHW4o"} : (tensor<1x4x6x6xf32>, tensor<4x4x1x1x4xf32>) -> tensor<1x16x6x6xf32>
  %d = graph.conv2d %e, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, groups = 16 : i64} : (tensor<1x16x6x6xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x3x3xf32>
  %r = graph.relu %d : (tensor<1x16x3x3xf32>) -> tensor<1x16x3x3xf32>
  %p = graph.conv2d %r, %w2 {kernel_layout = "OIHW4o"} : (tensor<1x16x3x3xf32>, tensor<1x16x1x1x4xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// A depthwise conv whose weight is an argument, not a constant, stays
// NCHW: the transform back stops above it.
// CHECK-LABEL: func.func @depthwise_weight_argument
// CHECK:         graph.layout_transform %{{.*}} {src_layout = "NCHW4c", dst_layout = "NCHW"}
// CHECK-NEXT:    graph.conv2d %{{.*}}, %wd {padding = array<i64: 1, 1, 1, 1>, groups = 8 : i64} : (tensor<1x8x4x4xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32>
func.func @depthwise_weight_argument(%x: tensor<1x8x4x4xf32>, %w1: tensor<2x8x1x1x4xf32>, %wd: tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %e = graph.conv2d %x, %w1 {kernel_layout = "OIHW4o"} : (tensor<1x8x4x4xf32>, tensor<2x8x1x1x4xf32>) -> tensor<1x8x4x4xf32>
  %d = graph.conv2d %e, %wd {padding = array<i64: 1, 1, 1, 1>, groups = 8 : i64} : (tensor<1x8x4x4xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32>
  func.return %d : tensor<1x8x4x4xf32>
}

// A concat along the channels of two blocked convs' outputs (each a whole
// number of blocks) is the concat of the blocked outputs along the blocks
// (axis 1 of N x C/4 x H x W x 4, whatever the axis's spelling was), and the
// region goes on through it to the next conv.
// CHECK-LABEL: func.func @concat_of_blocked
// CHECK-NEXT:    %[[X:.*]] = graph.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW4c"}
// CHECK-NEXT:    %[[A:.*]] = graph.conv2d %[[X]], %w1 {kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"}
// CHECK-NEXT:    %[[B:.*]] = graph.conv2d %[[X]], %w2 {kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"}
// CHECK-NEXT:    %[[C:.*]] = graph.concat %[[A]], %[[B]] {axis = 1 : i64} : (tensor<1x2x4x4x4xf32>, tensor<1x1x4x4x4xf32>) -> tensor<1x3x4x4x4xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[C]] : (tensor<1x3x4x4x4xf32>) -> tensor<1x3x4x4x4xf32>
// CHECK-NEXT:    %[[D:.*]] = graph.conv2d %[[R]], %w3 {kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"}
// CHECK-NEXT:    %[[OUT:.*]] = graph.layout_transform %[[D]] {src_layout = "NCHW4c", dst_layout = "NCHW"}
// CHECK-NEXT:    func.return %[[OUT]]
func.func @concat_of_blocked(%x: tensor<1x8x4x4xf32>, %w1: tensor<2x8x1x1x4xf32>, %w2: tensor<1x8x1x1x4xf32>, %w3: tensor<2x12x1x1x4xf32>) -> tensor<1x8x4x4xf32> {
  %a = graph.conv2d %x, %w1 {kernel_layout = "OIHW4o"} : (tensor<1x8x4x4xf32>, tensor<2x8x1x1x4xf32>) -> tensor<1x8x4x4xf32>
  %b = graph.conv2d %x, %w2 {kernel_layout = "OIHW4o"} : (tensor<1x8x4x4xf32>, tensor<1x8x1x1x4xf32>) -> tensor<1x4x4x4xf32>
  %c = graph.concat %a, %b {axis = -3 : i64} : (tensor<1x8x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x12x4x4xf32>
  %r = graph.relu %c : (tensor<1x12x4x4xf32>) -> tensor<1x12x4x4xf32>
  %d = graph.conv2d %r, %w3 {kernel_layout = "OIHW4o"} : (tensor<1x12x4x4xf32>, tensor<2x12x1x1x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %d : tensor<1x8x4x4xf32>
}

// A concat along another axis, or with an input that is not blocked, stays
// NCHW: the transforms back stop above it.
// CHECK-LABEL: func.func @concat_left_alone
// CHECK:         graph.concat %{{.*}}, %y {axis = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x16x4x4xf32>
// CHECK:         graph.concat %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x8x4xf32>
func.func @concat_left_alone(%x: tensor<1x8x4x4xf32>, %y: tensor<1x8x4x4xf32>, %w1: tensor<2x8x1x1x4xf32>) -> (tensor<1x16x4x4xf32>, tensor<1x8x8x4xf32>) {
  %a = graph.conv2d %x, %w1 {kernel_layout = "OIHW4o"} : (tensor<1x8x4x4xf32>, tensor<2x8x1x1x4xf32>) -> tensor<1x8x4x4xf32>
  %c = graph.concat %a, %y {axis = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x16x4x4xf32>
  %h = graph.concat %a, %a {axis = 2 : i64} : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x8x4xf32>
  func.return %c, %h : tensor<1x16x4x4xf32>, tensor<1x8x8x4xf32>
}

// Three 1x1 convs and a 5x5 one, writing twice what the edge transforms
// move: blocked with always=true, but by default a region with a windowed
// conv wider than 3x3 on a blocked input does not pay: left NCHW.
// PAYS-LABEL: func.func @wide_window
// PAYS-NOT:     layout_transform
// PAYS:         func.return
// CHECK-LABEL: func.func @wide_window
// CHECK-COUNT-4: data_layout = "NCHW4c", out_layout = "NCHW4c"
func.func @wide_window(%x: tensor<1x8x8x8xf32>, %w1: tensor<2x8x1x1x4xf32>, %w5: tensor<2x8x5x5x4xf32>) -> tensor<1x8x8x8xf32> {
  %a = graph.conv2d %x, %w1 {kernel_layout = "OIHW4o"} : (tensor<1x8x8x8xf32>, tensor<2x8x1x1x4xf32>) -> tensor<1x8x8x8xf32>
  %b = graph.conv2d %a, %w5 {padding = array<i64: 2, 2, 2, 2>, kernel_layout = "OIHW4o"} : (tensor<1x8x8x8xf32>, tensor<2x8x5x5x4xf32>) -> tensor<1x8x8x8xf32>
  %c = graph.conv2d %b, %w1 {kernel_layout = "OIHW4o"} : (tensor<1x8x8x8xf32>, tensor<2x8x1x1x4xf32>) -> tensor<1x8x8x8xf32>
  %d = graph.conv2d %c, %w1 {kernel_layout = "OIHW4o"} : (tensor<1x8x8x8xf32>, tensor<2x8x1x1x4xf32>) -> tensor<1x8x8x8xf32>
  func.return %d : tensor<1x8x8x8xf32>
}

// A conv of 2 output channels (its weight blocked by 2: no whole block of
// 4) that is the only reader of a blocked pool reads it blocked and writes
// NCHW, the region's end without a transform back. By default too: both
// convs are 1x1, and the one transform moves less than half of what they
// write.
// CHECK-LABEL: func.func @unblocked_output_reader
// CHECK-NEXT:    %[[X:.*]] = graph.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW4c"} : (tensor<1x4x4x4xf32>) -> tensor<1x1x4x4x4xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %[[X]], %w1 {kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"}
// CHECK-NEXT:    %[[P:.*]] = graph.max_pool2d %[[C]] {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, data_layout = "NCHW4c"} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x2x2x4xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.conv2d %[[P]], %w2 {kernel_layout = "OIHW2o", data_layout = "NCHW4c"} : (tensor<1x2x2x2x4xf32>, tensor<1x8x1x1x2xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    func.return %[[S]]
// PAYS-LABEL: func.func @unblocked_output_reader
// PAYS:         graph.conv2d %{{.*}}, %w2 {kernel_layout = "OIHW2o", data_layout = "NCHW4c"}
func.func @unblocked_output_reader(%x: tensor<1x4x4x4xf32>, %w1: tensor<2x4x1x1x4xf32>, %w2: tensor<1x8x1x1x2xf32>) -> tensor<1x2x2x2xf32> {
  %c = graph.conv2d %x, %w1 {kernel_layout = "OIHW4o"} : (tensor<1x4x4x4xf32>, tensor<2x4x1x1x4xf32>) -> tensor<1x8x4x4xf32>
  %p = graph.max_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x2x2xf32>
  %s = graph.conv2d %p, %w2 {kernel_layout = "OIHW2o"} : (tensor<1x8x2x2xf32>, tensor<1x8x1x1x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %s : tensor<1x2x2x2xf32>
}

// Beside another reader it reads NCHW: blocked, it would join the other
// reader's region to its producer's (GoogLeNet's first module to its stem).
// CHECK-LABEL: func.func @unblocked_output_reader_beside_another
// CHECK:         graph.conv2d %{{.*}}, %w2 {kernel_layout = "OIHW2o"} : (tensor<1x8x2x2xf32>, tensor<1x8x1x1x2xf32>) -> tensor<1x2x2x2xf32>
func.func @unblocked_output_reader_beside_another(%x: tensor<1x4x4x4xf32>, %w1: tensor<2x4x1x1x4xf32>, %w2: tensor<1x8x1x1x2xf32>, %w3: tensor<2x8x1x1x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x8x2x2xf32>) {
  %c = graph.conv2d %x, %w1 {kernel_layout = "OIHW4o"} : (tensor<1x4x4x4xf32>, tensor<2x4x1x1x4xf32>) -> tensor<1x8x4x4xf32>
  %p = graph.max_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x2x2xf32>
  %s = graph.conv2d %p, %w2 {kernel_layout = "OIHW2o"} : (tensor<1x8x2x2xf32>, tensor<1x8x1x1x2xf32>) -> tensor<1x2x2x2xf32>
  %t = graph.conv2d %p, %w3 {kernel_layout = "OIHW4o"} : (tensor<1x8x2x2xf32>, tensor<2x8x1x1x4xf32>) -> tensor<1x8x2x2xf32>
  func.return %s, %t : tensor<1x2x2x2xf32>, tensor<1x8x2x2xf32>
}
