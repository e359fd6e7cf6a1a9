// RUN: xtc-opt %s -p graph-alter-layout,dce | filecheck %s
// RUN: xtc-opt %s -p 'graph-alter-layout{block=2},dce' | filecheck %s --check-prefix=TWO
// RUN: not xtc-opt %s -p 'graph-alter-layout{block=0}' 2>&1 | filecheck %s --check-prefix=ZERO

// With block=2, O = 4 and O = 2 both get blocks of 2.
// TWO-LABEL: func.func @conv_blocked
// TWO:         graph.conv2d %x, %{{.*}} {kernel_layout = "OIHW2o"} : (tensor<1x1x2x2xf32>, tensor<2x1x1x2x2xf32>)
// TWO-LABEL: func.func @conv
// TWO:         graph.conv2d %x, %{{.*}} {padding = array<i64: 0, 0, 0, 1>, kernel_layout = "OIHW2o"} : (tensor<1x1x2x2xf32>, tensor<1x1x1x2x2xf32>)
// ZERO: error: graph-alter-layout: block must be at least 1, got 0

// A constant conv2d weight whose O a block size divides (32, else 16, 8 or 4)
// becomes O/b×C×KH×KW×b: element [o, c, i, j] moves to [o / b, c, i, j, o mod b].
// CHECK-LABEL: func.func @conv_blocked
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[\[\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]]]]]> : tensor<1x1x1x2x4xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %[[W]] {kernel_layout = "OIHW4o"} : (tensor<1x1x2x2xf32>, tensor<1x1x1x2x4xf32>) -> tensor<1x4x2x1xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @conv_blocked(%x: tensor<1x1x2x2xf32>) -> tensor<1x4x2x1xf32> {
  %w = graph.constant dense<[[[[1.0, 5.0]]], [[[2.0, 6.0]]], [[[3.0, 7.0]]], [[[4.0, 8.0]]]]> : tensor<4x1x1x2xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x2x2xf32>, tensor<4x1x1x2xf32>) -> tensor<1x4x2x1xf32>
  func.return %c : tensor<1x4x2x1xf32>
}

// Where no block size divides O, the weight becomes C×KH×KW×O: element [o, c, i, j] moves to [c, i, j, o].
// CHECK-LABEL: func.func @conv
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %[[W]] {padding = array<i64: 0, 0, 0, 1>, kernel_layout = "IHWO"} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @conv(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]]]> : tensor<2x1x1x2xf32>
  %c = graph.conv2d %x, %w {padding = array<i64: 0, 0, 0, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %c : tensor<1x2x2x2xf32>
}

// A grouped conv's weight is blocked by a b that divides the output channels
// of one group (8 of 16 with groups = 2: one block per group), the same
// O/b×C/groups×KH×KW×b reshape.
// CHECK-LABEL: func.func @conv_grouped
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[\[\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]]]], {{\[\[\[\[}}9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01, 1.300000e+01, 1.400000e+01, 1.500000e+01, 1.600000e+01]]]]]> : tensor<2x1x1x1x8xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %[[W]] {groups = 2 : i64, kernel_layout = "OIHW8o"} : (tensor<1x2x4x4xf32>, tensor<2x1x1x1x8xf32>) -> tensor<1x16x4x4xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @conv_grouped(%x: tensor<1x2x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %w = graph.constant dense<[[[[1.0]]], [[[2.0]]], [[[3.0]]], [[[4.0]]], [[[5.0]]], [[[6.0]]], [[[7.0]]], [[[8.0]]], [[[9.0]]], [[[10.0]]], [[[11.0]]], [[[12.0]]], [[[13.0]]], [[[14.0]]], [[[15.0]]], [[[16.0]]]]> : tensor<16x1x1x1xf32>
  %c = graph.conv2d %x, %w {groups = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<16x1x1x1xf32>) -> tensor<1x16x4x4xf32>
  func.return %c : tensor<1x16x4x4xf32>
}

// A block under 8 output channels is taken by a grouped conv only when its
// window moves more than one column at a time (here stride 2 along W) or is
// an unpadded 1x1 window (its schedule then vectorizes the output row, the
// rows within one block); a padded 3x3 window at stride 1 along W (even if 2
// along H), or a padded 1x1 one, keeps OIHW.
// CHECK-LABEL: func.func @conv_grouped_small_block
// CHECK:         graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<8x1x3x3xf32>)
// CHECK:         graph.conv2d %x, %{{.*}} {padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64, strides = array<i64: 2, 2>, kernel_layout = "OIHW4o"} : (tensor<1x2x4x4xf32>, tensor<2x1x3x3x4xf32>)
// CHECK:         graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64, strides = array<i64: 2, 1>} : (tensor<1x2x4x4xf32>, tensor<8x1x3x3xf32>)
// CHECK:         graph.conv2d %x, %{{.*}} {groups = 2 : i64, kernel_layout = "OIHW4o"} : (tensor<1x2x4x4xf32>, tensor<2x1x1x1x4xf32>)
// CHECK:         graph.conv2d %x, %p {padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<8x1x1x1xf32>)
func.func @conv_grouped_small_block(%x: tensor<1x2x4x4xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x2x2xf32>, tensor<1x8x2x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x6x6xf32>) {
  %w = graph.constant dense<1.0> : tensor<8x1x3x3xf32>
  %a = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32>
  %b = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x2x2xf32>
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64, strides = array<i64: 2, 1>} : (tensor<1x2x4x4xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x2x4xf32>
  %p = graph.constant dense<1.0> : tensor<8x1x1x1xf32>
  %d = graph.conv2d %x, %p {groups = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<8x1x1x1xf32>) -> tensor<1x8x4x4xf32>
  %e = graph.conv2d %x, %p {padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<8x1x1x1xf32>) -> tensor<1x8x6x6xf32>
  func.return %a, %b, %c, %d, %e : tensor<1x8x4x4xf32>, tensor<1x8x2x2xf32>, tensor<1x8x2x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x6x6xf32>
}

// A grouped conv with one output channel per group (depthwise: no block
// divides), weights that are not constants and convolutions already in IHWO
// stay as they are.
// CHECK-LABEL: func.func @unchanged
// CHECK:         graph.conv2d %x, %{{.*}} {groups = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<2x1x1x1xf32>)
// CHECK-NEXT:    graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>)
// CHECK:         graph.conv2d %x, %{{.*}} {kernel_layout = "IHWO"} : (tensor<1x2x4x4xf32>, tensor<2x1x1x3xf32>)
func.func @unchanged(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) {
  %g = graph.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %a = graph.conv2d %x, %g {groups = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %b = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %k = graph.constant dense<1.0> : tensor<2x1x1x3xf32>
  %c = graph.conv2d %x, %k {kernel_layout = "IHWO"} : (tensor<1x2x4x4xf32>, tensor<2x1x1x3xf32>) -> tensor<1x3x4x4xf32>
  func.return %a, %b, %c : tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>
}

// dense with a constant N×K weight becomes matmul with the K×N transpose.
// CHECK-LABEL: func.func @dense
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.matmul %x, %[[W]] : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    func.return %[[M]]
// CHECK-NOT:     graph.dense
func.func @dense(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %y = graph.dense %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// Every dense reading one weight shares one transpose, placed after the
// weight (an unrolled recurrence reads R at each step); other readers keep
// the weight.
// CHECK-LABEL: func.func @dense_shared_weight
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    %[[T:.*]] = graph.constant dense<{{\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.matmul %x, %[[T]] : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT:    %[[H:.*]] = graph.tanh %[[Y]]
// CHECK-NEXT:    %[[Z:.*]] = graph.matmul %[[H]], %[[T]] : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.add %[[W]], %[[W]]
// CHECK-NEXT:    func.return %[[Z]], %[[S]]
func.func @dense_shared_weight(%x: tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<2x2xf32>) {
  %w = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %y = graph.dense %x, %w : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %h = graph.tanh %y : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %z = graph.dense %h, %w : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %s = graph.add %w, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %z, %s : tensor<1x2xf32>, tensor<2x2xf32>
}

// A dense of one row over K >= 1024 inputs (MIN_ROW_REDUCTION: a classifier
// at batch 1) keeps its N×K weight, each output one contiguous row; one of
// 1023 inputs is a matmul.
// CHECK-LABEL: func.func @dense_one_long_row
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<5.000000e-01> : tensor<3x1024xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.dense %x, %[[W]] : (tensor<1x1024xf32>, tensor<3x1024xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @dense_one_long_row(%x: tensor<1x1024xf32>) -> tensor<1x3xf32> {
  %w = graph.constant dense<0.5> : tensor<3x1024xf32>
  %y = graph.dense %x, %w : (tensor<1x1024xf32>, tensor<3x1024xf32>) -> tensor<1x3xf32>
  func.return %y : tensor<1x3xf32>
}

// CHECK-LABEL: func.func @dense_one_shorter_row
// CHECK:         graph.matmul %x, %{{.*}} : (tensor<1x1023xf32>, tensor<1023x3xf32>) -> tensor<1x3xf32>
// CHECK-NOT:     graph.dense
func.func @dense_one_shorter_row(%x: tensor<1x1023xf32>) -> tensor<1x3xf32> {
  %w = graph.constant dense<0.5> : tensor<3x1023xf32>
  %y = graph.dense %x, %w : (tensor<1x1023xf32>, tensor<3x1023xf32>) -> tensor<1x3xf32>
  func.return %y : tensor<1x3xf32>
}

// CHECK-LABEL: func.func @dense_variable_weight
// CHECK-NEXT:    graph.dense %x, %w
func.func @dense_variable_weight(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>) -> tensor<4x2xf32> {
  %y = graph.dense %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}
