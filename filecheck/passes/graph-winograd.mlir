// RUN: xtc-opt %s -p graph-winograd,dce | filecheck %s
// RUN: xtc-opt %s -p 'graph-winograd{min_size=1},dce' | filecheck %s --check-prefix=SMALL
// RUN: not xtc-opt %s -p 'graph-winograd{min_size=0}' 2>&1 | filecheck %s --check-prefix=ZERO

// ZERO: error: graph-winograd: min_size must be at least 1, got 0

// A 24x24 output: F(4x4, 3x3), 36 tiles; the weight transformed to 6x6
// products per channel pair, Bᵀ (6x6) and Aᵀ (4x6) constants, the padding
// and the layout kept.
// CHECK-LABEL: func.func @winograd
// CHECK-NEXT:    %[[U:.*]] = graph.constant dense_resource<weight_winograd> : tensor<6x6x1x4x4xf32>
// CHECK-NEXT:    %[[BT:.*]] = graph.constant dense_resource<winograd_input> : tensor<6x6xf32>
// CHECK-NEXT:    %[[AT:.*]] = graph.constant dense_resource<winograd_output> : tensor<4x6xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.winograd_conv2d %x, %[[U]], %[[BT]], %[[AT]] {padding = array<i64: 1, 1, 1, 1>, data_layout = "NCHW4c"} : (tensor<1x1x24x24x4xf32>, tensor<6x6x1x4x4xf32>, tensor<6x6xf32>, tensor<4x6xf32>) -> tensor<1x1x24x24x4xf32>
// CHECK-NEXT:    func.return %[[Y]]
// SMALL-LABEL: func.func @winograd
// SMALL:         graph.winograd_conv2d
func.func @winograd(%x: tensor<1x1x24x24x4xf32>) -> tensor<1x1x24x24x4xf32> {
  %w = graph.constant dense<0.5> : tensor<1x4x3x3x4xf32>
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"} : (tensor<1x1x24x24x4xf32>, tensor<1x4x3x3x4xf32>) -> tensor<1x1x24x24x4xf32>
  func.return %c : tensor<1x1x24x24x4xf32>
}

// An 8x8 output makes four F(4x4) tiles, too few to use their weights well
// (MIN_GEMM_ROWS): F(2x2, 3x3), 16 tiles of 4x4 products.
// CHECK-LABEL: func.func @few_tiles
// CHECK:         graph.constant dense_resource<weight_winograd{{.*}}> : tensor<4x4x1x4x4xf32>
// CHECK:         graph.winograd_conv2d {{.*}} -> tensor<1x1x8x8x4xf32>
func.func @few_tiles(%x: tensor<1x1x8x8x4xf32>) -> tensor<1x1x8x8x4xf32> {
  %w = graph.constant dense<0.5> : tensor<1x4x3x3x4xf32>
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"} : (tensor<1x1x8x8x4xf32>, tensor<1x4x3x3x4xf32>) -> tensor<1x1x8x8x4xf32>
  func.return %c : tensor<1x1x8x8x4xf32>
}

// A 2x2 output stays direct by default (below min_size 8); with min_size=1
// it takes F(2x2, 3x3): one tile of 4x4 products where F(4x4) would compute
// 6x6 for the same 4 outputs.
// CHECK-LABEL: func.func @small
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    graph.conv2d
// SMALL-LABEL: func.func @small
// SMALL-NEXT:    %[[U:.*]] = graph.constant dense_resource<weight_winograd{{.*}}> : tensor<4x4x2x8x4xf32>
// SMALL-NEXT:    %[[BT:.*]] = graph.constant dense<{{\[\[}}1.000000e+00, 0.000000e+00, -1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00, 1.000000e+00, 0.000000e+00], [0.000000e+00, -1.000000e+00, 1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00, 0.000000e+00, -1.000000e+00]]> : tensor<4x4xf32>
// SMALL-NEXT:    %[[AT:.*]] = graph.constant dense<{{\[\[}}1.000000e+00, 1.000000e+00, 1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00, -1.000000e+00, -1.000000e+00]]> : tensor<2x4xf32>
// SMALL-NEXT:    graph.winograd_conv2d %x, %[[U]], %[[BT]], %[[AT]] {padding = array<i64: 0, 0, 0, 0>, data_layout = "NCHW4c"} : (tensor<1x2x4x4x4xf32>, tensor<4x4x2x8x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<1x2x2x2x4xf32>
func.func @small(%x: tensor<1x2x4x4x4xf32>) -> tensor<1x2x2x2x4xf32> {
  %w = graph.constant dense<0.25> : tensor<2x8x3x3x4xf32>
  %c = graph.conv2d %x, %w {kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"} : (tensor<1x2x4x4x4xf32>, tensor<2x8x3x3x4xf32>) -> tensor<1x2x2x2x4xf32>
  func.return %c : tensor<1x2x2x2x4xf32>
}

// Kept: a strided conv, a 1x1 conv, an unblocked conv and a weight that is
// no constant.
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     graph.winograd_conv2d
// CHECK:         func.return
// SMALL-LABEL: func.func @kept
// SMALL-NOT:     graph.winograd_conv2d
// SMALL:         func.return
func.func @kept(%x: tensor<1x1x16x16x4xf32>, %y: tensor<1x4x16x16xf32>, %v: tensor<1x4x3x3x4xf32>) -> (tensor<1x1x8x8x4xf32>, tensor<1x1x16x16x4xf32>, tensor<1x4x16x16xf32>, tensor<1x1x16x16x4xf32>) {
  %w = graph.constant dense<0.5> : tensor<1x4x3x3x4xf32>
  %s = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"} : (tensor<1x1x16x16x4xf32>, tensor<1x4x3x3x4xf32>) -> tensor<1x1x8x8x4xf32>
  %w1 = graph.constant dense<0.5> : tensor<1x4x1x1x4xf32>
  %p = graph.conv2d %x, %w1 {kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"} : (tensor<1x1x16x16x4xf32>, tensor<1x4x1x1x4xf32>) -> tensor<1x1x16x16x4xf32>
  %wu = graph.constant dense<0.5> : tensor<4x4x3x3xf32>
  %u = graph.conv2d %y, %wu {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x16x16xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x16x16xf32>
  %d = graph.conv2d %x, %v {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"} : (tensor<1x1x16x16x4xf32>, tensor<1x4x3x3x4xf32>) -> tensor<1x1x16x16x4xf32>
  func.return %s, %p, %u, %d : tensor<1x1x8x8x4xf32>, tensor<1x1x16x16x4xf32>, tensor<1x4x16x16xf32>, tensor<1x1x16x16x4xf32>
}

// A transformed input past 16 MiB stays direct: 32 channels at 256x256 are
// 64x64 tiles of 36 values per channel, 18 MiB in f32.
// CHECK-LABEL: func.func @too_large
// CHECK-NOT:     graph.winograd_conv2d
// CHECK:         func.return
func.func @too_large(%x: tensor<1x1x256x256x32xf32>) -> tensor<1x1x256x256x32xf32> {
  %w = graph.constant dense<0.5> : tensor<1x32x3x3x32xf32>
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW32o", data_layout = "NCHW32c", out_layout = "NCHW32c"} : (tensor<1x1x256x256x32xf32>, tensor<1x32x3x3x32xf32>) -> tensor<1x1x256x256x32xf32>
  func.return %c : tensor<1x1x256x256x32xf32>
}

// The transforms of F(4x4, 3x3): Bᵀ's first row is 4, 0, -5, 0, 1, 0 and
// Aᵀ's 1, 1, 1, 1, 1, 0 (f32, little endian, after the 4-byte alignment).
// CHECK:      winograd_input: "0x0400000000008040000000000000A0C0000000000000803F00000000
// CHECK:      winograd_output: "0x040000000000803F0000803F0000803F0000803F0000803F00000000
