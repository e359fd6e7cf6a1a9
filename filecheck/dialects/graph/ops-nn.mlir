// RUN: %roundtrip | filecheck %s
// RUN: %generic-roundtrip | filecheck %s

// CHECK-LABEL: func.func @convolutions
func.func @convolutions(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %w1: tensor<4x4x1x1xf32>, %wt: tensor<4x3x2x2xf32>) -> (tensor<1x6x4x4xf32>, tensor<1x4x8x8xf32>, tensor<1x6x16x16xf32>) {
  // CHECK: graph.conv2d %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x4xf32>
  %0 = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x4xf32>
  // CHECK: graph.conv2d %{{.*}}, %{{.*}} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %1 = graph.conv2d %x, %w1 : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  // CHECK: graph.conv2d_transpose %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>, output_padding = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<4x3x2x2xf32>) -> tensor<1x6x16x16xf32>
  %2 = graph.conv2d_transpose %x, %wt {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>, output_padding = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<4x3x2x2xf32>) -> tensor<1x6x16x16xf32>
  func.return %0, %1, %2 : tensor<1x6x4x4xf32>, tensor<1x4x8x8xf32>, tensor<1x6x16x16xf32>
}

// CHECK-LABEL: func.func @blocked_activations
func.func @blocked_activations(%x: tensor<1x8x4x4xf32>, %w: tensor<2x8x3x3x4xf32>) -> tensor<1x8x2x2xf32> {
  // CHECK: graph.layout_transform %{{.*}} {src_layout = "NCHW", dst_layout = "NCHW4c"} : (tensor<1x8x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  %0 = graph.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW4c"} : (tensor<1x8x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  // CHECK: graph.conv2d %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"} : (tensor<1x2x4x4x4xf32>, tensor<2x8x3x3x4xf32>) -> tensor<1x2x4x4x4xf32>
  %1 = graph.conv2d %0, %w {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"} : (tensor<1x2x4x4x4xf32>, tensor<2x8x3x3x4xf32>) -> tensor<1x2x4x4x4xf32>
  // CHECK: graph.max_pool2d %{{.*}} {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, data_layout = "NCHW4c"} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x2x2x4xf32>
  %2 = graph.max_pool2d %1 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, data_layout = "NCHW4c"} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x2x2x4xf32>
  // CHECK: graph.layout_transform %{{.*}} {src_layout = "NCHW4c", dst_layout = "NCHW"} : (tensor<1x2x2x2x4xf32>) -> tensor<1x8x2x2xf32>
  %3 = graph.layout_transform %2 {src_layout = "NCHW4c", dst_layout = "NCHW"} : (tensor<1x2x2x2x4xf32>) -> tensor<1x8x2x2xf32>
  func.return %3 : tensor<1x8x2x2xf32>
}

// A conv whose output channels are no whole block reads blocked activations
// and writes NCHW.
// CHECK-LABEL: func.func @blocked_input_unblocked_output
func.func @blocked_input_unblocked_output(%x: tensor<1x2x4x4x4xf32>, %w: tensor<3x8x1x1xf32>) -> tensor<1x3x4x4xf32> {
  // CHECK: graph.conv2d %{{.*}}, %{{.*}} {data_layout = "NCHW4c"} : (tensor<1x2x4x4x4xf32>, tensor<3x8x1x1xf32>) -> tensor<1x3x4x4xf32>
  %0 = graph.conv2d %x, %w {data_layout = "NCHW4c"} : (tensor<1x2x4x4x4xf32>, tensor<3x8x1x1xf32>) -> tensor<1x3x4x4xf32>
  func.return %0 : tensor<1x3x4x4xf32>
}

// CHECK-LABEL: func.func @winograd
func.func @winograd(%x: tensor<1x2x8x8x4xf32>, %u: tensor<6x6x3x8x4xf32>, %bt: tensor<6x6xf32>, %at: tensor<4x6xf32>) -> tensor<1x3x8x8x4xf32> {
  // CHECK: graph.winograd_conv2d %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>, data_layout = "NCHW4c"} : (tensor<1x2x8x8x4xf32>, tensor<6x6x3x8x4xf32>, tensor<6x6xf32>, tensor<4x6xf32>) -> tensor<1x3x8x8x4xf32>
  %0 = graph.winograd_conv2d %x, %u, %bt, %at {padding = array<i64: 1, 1, 1, 1>, data_layout = "NCHW4c"} : (tensor<1x2x8x8x4xf32>, tensor<6x6x3x8x4xf32>, tensor<6x6xf32>, tensor<4x6xf32>) -> tensor<1x3x8x8x4xf32>
  func.return %0 : tensor<1x3x8x8x4xf32>
}

// CHECK-LABEL: func.func @products
func.func @products(%x: tensor<2x3x5xf32>, %w: tensor<4x5xf32>, %v: tensor<5xf32>, %a: tensor<2x3x5xf32>, %b: tensor<1x4x5xf32>) -> (tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<2x3x4xf32>) {
  // CHECK: graph.dense %{{.*}}, %{{.*}} : (tensor<2x3x5xf32>, tensor<4x5xf32>) -> tensor<2x3x4xf32>
  %0 = graph.dense %x, %w : (tensor<2x3x5xf32>, tensor<4x5xf32>) -> tensor<2x3x4xf32>
  // CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<2x3x5xf32>, tensor<5xf32>) -> tensor<2x3xf32>
  %1 = graph.matmul %x, %v : (tensor<2x3x5xf32>, tensor<5xf32>) -> tensor<2x3xf32>
  // CHECK: graph.batch_matmul %{{.*}}, %{{.*}} {transpose_a = false, transpose_b = true} : (tensor<2x3x5xf32>, tensor<1x4x5xf32>) -> tensor<2x3x4xf32>
  %2 = graph.batch_matmul %a, %b {transpose_a = false, transpose_b = true} : (tensor<2x3x5xf32>, tensor<1x4x5xf32>) -> tensor<2x3x4xf32>
  func.return %0, %1, %2 : tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @normalisation
func.func @normalisation(%x: tensor<1x3x4x4xf32>, %c: tensor<3xf32>, %g: tensor<4x4xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) {
  // CHECK: graph.bias_add %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %0 = graph.bias_add %x, %c {axis = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  // CHECK: graph.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %1 = graph.batch_norm %0, %c, %c, %c, %c {epsilon = 1.000000e-03 : f32} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  // CHECK: graph.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = -2 : i64, epsilon = 1.000000e-05 : f32} : (tensor<1x3x4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<1x3x4x4xf32>
  %2 = graph.layer_norm %1, %g, %g {axis = -2 : i64, epsilon = 1.000000e-05 : f32} : (tensor<1x3x4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %0, %1, %2 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>
}

// CHECK-LABEL: func.func @pooling
func.func @pooling(%x: tensor<1x3x5x5xf32>) -> (tensor<1x3x3x3xf32>, tensor<1x3x2x2xf32>, tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>) {
  // CHECK: graph.max_pool2d %{{.*}} {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x5x5xf32>) -> tensor<1x3x3x3xf32>
  %0 = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x5x5xf32>) -> tensor<1x3x3x3xf32>
  // CHECK: graph.avg_pool2d %{{.*}} {kernel = array<i64: 2, 2>, strides = array<i64: 3, 3>, dilation = array<i64: 1, 1>, ceil_mode = true, count_include_pad = true} : (tensor<1x3x5x5xf32>) -> tensor<1x3x2x2xf32>
  %1 = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 3, 3>, dilation = array<i64: 1, 1>, ceil_mode = true, count_include_pad = true} : (tensor<1x3x5x5xf32>) -> tensor<1x3x2x2xf32>
  // CHECK: graph.global_avg_pool2d %{{.*}} : (tensor<1x3x5x5xf32>) -> tensor<1x3x1x1xf32>
  %2 = graph.global_avg_pool2d %x : (tensor<1x3x5x5xf32>) -> tensor<1x3x1x1xf32>
  // CHECK: graph.global_max_pool2d %{{.*}} : (tensor<1x3x5x5xf32>) -> tensor<1x3x1x1xf32>
  %3 = graph.global_max_pool2d %x : (tensor<1x3x5x5xf32>) -> tensor<1x3x1x1xf32>
  func.return %0, %1, %2, %3 : tensor<1x3x3x3xf32>, tensor<1x3x2x2xf32>, tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>
}

// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) {
  // CHECK: graph.softmax %{{.*}} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %0 = graph.softmax %x : (tensor<2x5xf32>) -> tensor<2x5xf32>
  // CHECK: graph.log_softmax %{{.*}} {axis = 0 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %1 = graph.log_softmax %x {axis = 0 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %0, %1 : tensor<2x5xf32>, tensor<2x5xf32>
}

// CHECK-LABEL: func.func @pad_and_resize
func.func @pad_and_resize(%x: tensor<1x3x4x4xf32>) -> (tensor<1x3x6x5xf32>, tensor<1x3x4x6xf32>, tensor<1x3x8x8xf32>, tensor<1x3x3x7xf32>) {
  // CHECK: graph.pad %{{.*}} {pads = array<i64: 0, 0, 1, 0, 0, 0, 1, 1>, value = 5.000000e-01 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x6x5xf32>
  %0 = graph.pad %x {pads = array<i64: 0, 0, 1, 0, 0, 0, 1, 1>, value = 5.000000e-01 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x6x5xf32>
  // CHECK: graph.pad %{{.*}} {pads = array<i64: 0, 0, 0, 1, 0, 0, 0, 1>, mode = "reflect"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x6xf32>
  %1 = graph.pad %x {pads = array<i64: 0, 0, 0, 1, 0, 0, 0, 1>, mode = "reflect"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x6xf32>
  // CHECK: graph.resize %{{.*}} {size = array<i64: 1, 3, 8, 8>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  %2 = graph.resize %x {size = array<i64: 1, 3, 8, 8>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  // CHECK: graph.resize %{{.*}} {size = array<i64: 1, 3, 3, 7>, mode = "linear", coordinate_transformation_mode = "align_corners", nearest_mode = "floor"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x3x7xf32>
  %3 = graph.resize %x {size = array<i64: 1, 3, 3, 7>, mode = "linear", coordinate_transformation_mode = "align_corners", nearest_mode = "floor"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x3x7xf32>
  func.return %0, %1, %2, %3 : tensor<1x3x6x5xf32>, tensor<1x3x4x6xf32>, tensor<1x3x8x8xf32>, tensor<1x3x3x7xf32>
}

// CHECK-LABEL: func.func @resize_by_scales_and_roi
func.func @resize_by_scales_and_roi(%x: tensor<1x3x4x4xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x3x6x6xf32>) {
  // CHECK: graph.resize %{{.*}} {size = array<i64: 1, 3, 2, 2>, mode = "linear", coordinate_transformation_mode = "half_pixel_symmetric", scales = array<f64: 1.000000e+00, 1.000000e+00, 6.000000e-01, 6.000000e-01>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32>
  %0 = graph.resize %x {size = array<i64: 1, 3, 2, 2>, mode = "linear", coordinate_transformation_mode = "half_pixel_symmetric", scales = array<f64: 1.0, 1.0, 0.6, 0.6>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32>
  // CHECK: graph.resize %{{.*}} {size = array<i64: 1, 3, 6, 6>, coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.000000e+00, 0.000000e+00, 4.000000e-01, 6.000000e-01, 1.000000e+00, 1.000000e+00, 6.000000e-01, 8.000000e-01>, extrapolation_value = 1.000000e+01 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x6x6xf32>
  %1 = graph.resize %x {size = array<i64: 1, 3, 6, 6>, coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.0, 0.0, 0.4, 0.6, 1.0, 1.0, 0.6, 0.8>, extrapolation_value = 10.0 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x6x6xf32>
  func.return %0, %1 : tensor<1x3x2x2xf32>, tensor<1x3x6x6xf32>
}

// CHECK-LABEL: func.func @resize_cubic_and_antialias
func.func @resize_cubic_and_antialias(%x: tensor<1x3x8x8xf32>) -> (tensor<1x3x12x12xf32>, tensor<1x3x3x3xf32>) {
  // CHECK: graph.resize %{{.*}} {size = array<i64: 1, 3, 12, 12>, mode = "cubic", cubic_coeff_a = -5.000000e-01 : f32, exclude_outside = true} : (tensor<1x3x8x8xf32>) -> tensor<1x3x12x12xf32>
  %0 = graph.resize %x {size = array<i64: 1, 3, 12, 12>, mode = "cubic", cubic_coeff_a = -0.5 : f32, exclude_outside = true} : (tensor<1x3x8x8xf32>) -> tensor<1x3x12x12xf32>
  // CHECK: graph.resize %{{.*}} {size = array<i64: 1, 3, 3, 3>, mode = "linear", antialias = true} : (tensor<1x3x8x8xf32>) -> tensor<1x3x3x3xf32>
  %1 = graph.resize %x {size = array<i64: 1, 3, 3, 3>, mode = "linear", antialias = true} : (tensor<1x3x8x8xf32>) -> tensor<1x3x3x3xf32>
  func.return %0, %1 : tensor<1x3x12x12xf32>, tensor<1x3x3x3xf32>
}

// Sampling points in an N×O1×O2×2 grid; the output is N×C×O1×O2.
// CHECK-LABEL: func.func @grid_sample
func.func @grid_sample(%x: tensor<2x3x8x6xf32>, %grid: tensor<2x5x4x2xf32>, %x3: tensor<1x2x4x4x4xf32>, %grid3: tensor<1x2x3x7x3xf32>) -> (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<1x2x2x3x7xf32>) {
  // CHECK: graph.grid_sample %{{.*}}, %{{.*}} : (tensor<2x3x8x6xf32>, tensor<2x5x4x2xf32>) -> tensor<2x3x5x4xf32>
  %0 = graph.grid_sample %x, %grid : (tensor<2x3x8x6xf32>, tensor<2x5x4x2xf32>) -> tensor<2x3x5x4xf32>
  // CHECK: graph.grid_sample %{{.*}}, %{{.*}} {mode = "cubic", padding_mode = "reflection", align_corners = true} : (tensor<2x3x8x6xf32>, tensor<2x5x4x2xf32>) -> tensor<2x3x5x4xf32>
  %1 = graph.grid_sample %x, %grid {mode = "cubic", padding_mode = "reflection", align_corners = true} : (tensor<2x3x8x6xf32>, tensor<2x5x4x2xf32>) -> tensor<2x3x5x4xf32>
  // CHECK: graph.grid_sample %{{.*}}, %{{.*}} {mode = "nearest", padding_mode = "border"} : (tensor<1x2x4x4x4xf32>, tensor<1x2x3x7x3xf32>) -> tensor<1x2x2x3x7xf32>
  %2 = graph.grid_sample %x3, %grid3 {mode = "nearest", padding_mode = "border"} : (tensor<1x2x4x4x4xf32>, tensor<1x2x3x7x3xf32>) -> tensor<1x2x2x3x7xf32>
  func.return %0, %1, %2 : tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<1x2x2x3x7xf32>
}

// The weight in blocks of 8 output channels, O/8×C/groups×KH×KW×8 (graph-alter-layout's output).
// CHECK-LABEL: func.func @conv2d_blocked
func.func @conv2d_blocked(%x: tensor<1x3x8x8xf32>, %w: tensor<2x3x3x3x8xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: graph.conv2d %{{.*}}, %{{.*}} {kernel_layout = "OIHW8o"} : (tensor<1x3x8x8xf32>, tensor<2x3x3x3x8xf32>) -> tensor<1x16x6x6xf32>
  %0 = graph.conv2d %x, %w {kernel_layout = "OIHW8o"} : (tensor<1x3x8x8xf32>, tensor<2x3x3x3x8xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// The weight laid out C/groups×KH×KW×O (graph-alter-layout's output).
// CHECK-LABEL: func.func @conv2d_ihwo
func.func @conv2d_ihwo(%x: tensor<1x3x8x8xf32>, %w: tensor<3x3x3x16xf32>) -> tensor<1x16x4x4xf32> {
  // CHECK: graph.conv2d %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, kernel_layout = "IHWO"} : (tensor<1x3x8x8xf32>, tensor<3x3x3x16xf32>) -> tensor<1x16x4x4xf32>
  %0 = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, kernel_layout = "IHWO"} : (tensor<1x3x8x8xf32>, tensor<3x3x3x16xf32>) -> tensor<1x16x4x4xf32>
  func.return %0 : tensor<1x16x4x4xf32>
}

// An integer convolution in the packed VNNI layouts: u8 NHWC data (8
// channels), an i8 weight of 16 output channels packed by 4 input channels.
// CHECK-LABEL: func.func @integer_convolution
func.func @integer_convolution(%x: tensor<1x6x7x8xui8>, %w: tensor<1x2x3x3x16x4xi8>) -> tensor<1x2x5x16xi32> {
  // CHECK: graph.conv2d_u8s8 %{{.*}}, %{{.*}} {strides = array<i64: 2, 1>} : (tensor<1x6x7x8xui8>, tensor<1x2x3x3x16x4xi8>) -> tensor<1x2x5x16xi32>
  %0 = graph.conv2d_u8s8 %x, %w {strides = array<i64: 2, 1>} : (tensor<1x6x7x8xui8>, tensor<1x2x3x3x16x4xi8>) -> tensor<1x2x5x16xi32>
  func.return %0 : tensor<1x2x5x16xi32>
}
