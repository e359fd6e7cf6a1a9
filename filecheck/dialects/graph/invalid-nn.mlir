// RUN: xtc-opt %s --split-input-file --verify-diagnostics

func.func @conv2d_input_rank(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'graph.conv2d' op input must be 4-D (N×C×H×W), got tensor<1x3x8xf32>}}
  %0 = graph.conv2d %x, %w : (tensor<1x3x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x5x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'graph.conv2d' op input tensor<1x3x8x8xf32> has 3 channels but weight tensor<4x5x3x3xf32> expects 5 (groups=1)}}
  %0 = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x5x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_output_channels_not_grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32> {
  // expected-error @+1 {{'graph.conv2d' op weight tensor<3x2x3x3xf32> has 3 output channels, not a multiple of groups=2}}
  %0 = graph.conv2d %x, %w {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  func.return %0 : tensor<1x3x6x6xf32>
}

// -----

func.func @conv2d_groups_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'graph.conv2d' op groups must be positive, got 0}}
  %0 = graph.conv2d %x, %w {groups = 0 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_strides_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'graph.conv2d' op strides must have 2 values, got 3}}
  %0 = graph.conv2d %x, %w {strides = array<i64: 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_dilation_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'graph.conv2d' op dilation must be positive, got [0, 1]}}
  %0 = graph.conv2d %x, %w {dilation = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_negative_padding(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'graph.conv2d' op padding must be non-negative, got [0, -1, 0, 0]}}
  %0 = graph.conv2d %x, %w {padding = array<i64: 0, -1, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_kernel_too_large(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32> {
  // expected-error @+1 {{'graph.conv2d' op kernel 3x3 with dilation 2x2 spans 5x5, larger than the padded input 4x4 of tensor<1x3x4x4xf32>}}
  %0 = graph.conv2d %x, %w {dilation = array<i64: 2, 2>} : (tensor<1x3x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>
  func.return %0 : tensor<1x4x1x1xf32>
}

// -----

func.func @conv2d_empty_kernel(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x0x3xf32>) -> tensor<1x4x4x2xf32> {
  // expected-error @+1 {{'graph.conv2d' op kernel 0x3 is empty}}
  %0 = graph.conv2d %x, %w : (tensor<1x3x4x4xf32>, tensor<4x3x0x3xf32>) -> tensor<1x4x4x2xf32>
  func.return %0 : tensor<1x4x4x2xf32>
}

// -----

func.func @conv2d_element_types(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x3x3xf16>) -> tensor<1x4x2x2xf32> {
  // expected-error @+1 {{'graph.conv2d' op operand element types differ: tensor<1x3x4x4xf32>, tensor<4x3x3x3xf16>}}
  %0 = graph.conv2d %x, %w : (tensor<1x3x4x4xf32>, tensor<4x3x3x3xf16>) -> tensor<1x4x2x2xf32>
  func.return %0 : tensor<1x4x2x2xf32>
}

// -----

func.func @conv2d_wrong_result(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32> {
  // expected-error @+1 {{'graph.conv2d' op result type tensor<1x4x4x4xf32> does not match the type inferred from its operands tensor<1x4x2x2xf32> (operands: tensor<1x3x4x4xf32>, tensor<4x3x3x3xf32>)}}
  %0 = graph.conv2d %x, %w : (tensor<1x3x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  func.return %0 : tensor<1x4x4x4xf32>
}

// -----

func.func @conv2d_transpose_channels(%x: tensor<1x3x4x4xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // expected-error @+1 {{'graph.conv2d_transpose' op input tensor<1x3x4x4xf32> has 3 channels but weight tensor<4x2x3x3xf32> expects 4}}
  %0 = graph.conv2d_transpose %x, %w : (tensor<1x3x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @conv2d_transpose_groups(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'graph.conv2d_transpose' op input tensor<1x3x4x4xf32> has 3 channels, not a multiple of groups=2}}
  %0 = graph.conv2d_transpose %x, %w {groups = 2 : i64} : (tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_transpose_weight_rank(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x2x6x6xf32> {
  // expected-error @+1 {{'graph.conv2d_transpose' op weight must be 4-D (C×O/groups×KH×KW), got tensor<3x2x3xf32>}}
  %0 = graph.conv2d_transpose %x, %w : (tensor<1x3x4x4xf32>, tensor<3x2x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @conv2d_transpose_output_padding(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // expected-error @+1 {{'graph.conv2d_transpose' op output_padding must be non-negative, got [-1, 0]}}
  %0 = graph.conv2d_transpose %x, %w {output_padding = array<i64: -1, 0>} : (tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @conv2d_transpose_empty_output(%x: tensor<1x3x1x1xf32>, %w: tensor<3x2x1x1xf32>) -> tensor<1x2x1x1xf32> {
  // expected-error @+1 {{'graph.conv2d_transpose' op output shape 1x2x0x1 is not positive (operands: tensor<1x3x1x1xf32>, tensor<3x2x1x1xf32>)}}
  %0 = graph.conv2d_transpose %x, %w {padding = array<i64: 1, 0, 0, 0>} : (tensor<1x3x1x1xf32>, tensor<3x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  func.return %0 : tensor<1x2x1x1xf32>
}

// -----

func.func @dense_k(%x: tensor<2x5xf32>, %w: tensor<4x3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.dense' op input tensor<2x5xf32> must end in K=3 to match weight tensor<4x3xf32>}}
  %0 = graph.dense %x, %w : (tensor<2x5xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @matmul_rank0(%a: tensor<f32>, %b: tensor<4x5xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'graph.matmul' op operands must have rank >= 1, got tensor<f32> and tensor<4x5xf32>}}
  %0 = graph.matmul %a, %b : (tensor<f32>, tensor<4x5xf32>) -> tensor<5xf32>
  func.return %0 : tensor<5xf32>
}

// -----

func.func @matmul_k(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'graph.matmul' op contraction sizes differ: tensor<2x3xf32> has K=3, tensor<4x5xf32> has K=4}}
  %0 = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

func.func @matmul_batch(%a: tensor<2x2x3xf32>, %b: tensor<3x3x5xf32>) -> tensor<3x2x5xf32> {
  // expected-error @+1 {{'graph.matmul' op batch dimensions of tensor<2x2x3xf32> and tensor<3x3x5xf32> are not broadcast-compatible}}
  %0 = graph.matmul %a, %b : (tensor<2x2x3xf32>, tensor<3x3x5xf32>) -> tensor<3x2x5xf32>
  func.return %0 : tensor<3x2x5xf32>
}

// -----

func.func @batch_matmul_batch(%a: tensor<2x2x3xf32>, %b: tensor<3x3x5xf32>) -> tensor<3x2x5xf32> {
  // expected-error @+1 {{'graph.batch_matmul' op batch sizes 2 of tensor<2x2x3xf32> and 3 of tensor<3x3x5xf32> differ and neither is 1}}
  %0 = graph.batch_matmul %a, %b : (tensor<2x2x3xf32>, tensor<3x3x5xf32>) -> tensor<3x2x5xf32>
  func.return %0 : tensor<3x2x5xf32>
}

// -----

func.func @batch_matmul_k(%a: tensor<2x2x3xf32>, %b: tensor<2x2x5xf32>) -> tensor<2x2x2xf32> {
  // expected-error @+1 {{'graph.batch_matmul' op contraction sizes differ: tensor<2x2x3xf32> has K=3, tensor<2x2x5xf32> has K=5}}
  %0 = graph.batch_matmul %a, %b {transpose_b = true} : (tensor<2x2x3xf32>, tensor<2x2x5xf32>) -> tensor<2x2x2xf32>
  func.return %0 : tensor<2x2x2xf32>
}

// -----

func.func @bias_add_size(%x: tensor<2x3x4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'graph.bias_add' op bias tensor<4xf32> must be 1-D of size 3, the axis 1 of input tensor<2x3x4xf32>}}
  %0 = graph.bias_add %x, %b : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @bias_add_axis(%x: tensor<2x3x4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'graph.bias_add' op axis 3 is out of range for rank 3}}
  %0 = graph.bias_add %x, %b {axis = 3 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @batch_norm_mean(%x: tensor<2x3x4xf32>, %c: tensor<3xf32>, %m: tensor<4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'graph.batch_norm' op mean tensor<4xf32> must be 1-D of size 3, the axis 1 of input tensor<2x3x4xf32>}}
  %0 = graph.batch_norm %x, %c, %c, %m, %c : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @batch_norm_integer(%x: tensor<2x3xi32>, %c: tensor<3xi32>) -> tensor<2x3xi32> {
  // expected-error @+1 {{'graph.batch_norm' op input tensor<2x3xi32> must have a float element type}}
  %0 = graph.batch_norm %x, %c, %c, %c, %c : (tensor<2x3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  func.return %0 : tensor<2x3xi32>
}

// -----

func.func @layer_norm_gamma(%x: tensor<2x3x4xf32>, %g: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'graph.layer_norm' op gamma tensor<3xf32> does not broadcast to the normalised dims 4 of input tensor<2x3x4xf32> (axis=2)}}
  %0 = graph.layer_norm %x, %g, %b : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @max_pool2d_kernel_length(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32> {
  // expected-error @+1 {{'graph.max_pool2d' op kernel must have 2 values, got 1}}
  %0 = graph.max_pool2d %x {kernel = array<i64: 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32>
  func.return %0 : tensor<1x1x3x3xf32>
}

// -----

func.func @max_pool2d_kernel_too_large(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x1x4xf32> {
  // expected-error @+1 {{'graph.max_pool2d' op kernel 5x1 with dilation 1x1 spans 5x1, larger than the padded input 4x4 of tensor<1x1x4x4xf32>}}
  %0 = graph.max_pool2d %x {kernel = array<i64: 5, 1>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x1x4xf32>
  func.return %0 : tensor<1x1x1x4xf32>
}

// -----

func.func @max_pool2d_padding(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x5x3xf32> {
  // expected-error @+1 {{'graph.max_pool2d' op padding [2, 0, 0, 0] must be smaller than kernel 2x2}}
  %0 = graph.max_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 2, 0, 0, 0>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x5x3xf32>
  func.return %0 : tensor<1x1x5x3xf32>
}

// -----

func.func @max_pool2d_window_in_padding(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'graph.max_pool2d' op the window of output row 0 covers only padding (kernel 2x1, dilation 2x1, padding [1, 0, 1, 0], input tensor<1x1x1x1xf32>)}}
  %0 = graph.max_pool2d %x {kernel = array<i64: 2, 1>, dilation = array<i64: 2, 1>, padding = array<i64: 1, 0, 1, 0>} : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  func.return %0 : tensor<1x1x1x1xf32>
}

// -----

func.func @avg_pool2d_strides(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32> {
  // expected-error @+1 {{'graph.avg_pool2d' op strides must be positive, got [0, 1]}}
  %0 = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 0, 1>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32>
  func.return %0 : tensor<1x1x3x3xf32>
}

// -----

func.func @avg_pool2d_integer(%x: tensor<1x1x4x4xi32>) -> tensor<1x1x3x3xi32> {
  // expected-error @+1 {{'graph.avg_pool2d' op input tensor<1x1x4x4xi32> must have a float element type}}
  %0 = graph.avg_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x1x4x4xi32>) -> tensor<1x1x3x3xi32>
  func.return %0 : tensor<1x1x3x3xi32>
}

// -----

func.func @global_avg_pool2d_rank(%x: tensor<1x1x4xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'graph.global_avg_pool2d' op input must be 4-D (N×C×H×W), got tensor<1x1x4xf32>}}
  %0 = graph.global_avg_pool2d %x : (tensor<1x1x4xf32>) -> tensor<1x1x1x1xf32>
  func.return %0 : tensor<1x1x1x1xf32>
}

// -----

func.func @global_max_pool2d_wrong_result(%x: tensor<1x2x4x4xf32>) -> tensor<1x2xf32> {
  // expected-error @+1 {{'graph.global_max_pool2d' op result type tensor<1x2xf32> does not match the type inferred from its operands tensor<1x2x1x1xf32> (operands: tensor<1x2x4x4xf32>)}}
  %0 = graph.global_max_pool2d %x : (tensor<1x2x4x4xf32>) -> tensor<1x2xf32>
  func.return %0 : tensor<1x2xf32>
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.softmax' op axis 2 is out of range for rank 2}}
  %0 = graph.softmax %x {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @log_softmax_integer(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // expected-error @+1 {{'graph.log_softmax' op input tensor<2x3xi32> must have a float element type}}
  %0 = graph.log_softmax %x : (tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return %0 : tensor<2x3xi32>
}

// -----

func.func @pad_length(%x: tensor<2x3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'graph.pad' op pads must have 4 values, got 2}}
  %0 = graph.pad %x {pads = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @pad_mode(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.pad' op property 'mode' is "wrap", expected one of "constant", "reflect", "edge"}}
  %0 = graph.pad %x {pads = array<i64: 0, 0, 0, 0>, mode = "wrap"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @pad_reflect_too_wide(%x: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'graph.pad' op reflect pads 3, 0 on axis 1 must be smaller than its size 3 in tensor<2x3xf32>}}
  %0 = graph.pad %x {pads = array<i64: 0, 3, 0, 0>, mode = "reflect"} : (tensor<2x3xf32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}

// -----

func.func @pad_crops_everything(%x: tensor<2x3xf32>) -> tensor<0x3xf32> {
  // expected-error @+1 {{'graph.pad' op output shape 0x3 is not positive (operands: tensor<2x3xf32>)}}
  %0 = graph.pad %x {pads = array<i64: -2, 0, 0, 0>} : (tensor<2x3xf32>) -> tensor<0x3xf32>
  func.return %0 : tensor<0x3xf32>
}

// -----

func.func @resize_size_length(%x: tensor<2x3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.resize' op size must have 2 values, got 1}}
  %0 = graph.resize %x {size = array<i64: 4>} : (tensor<2x3xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @resize_empty_input(%x: tensor<2x0xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'graph.resize' op input tensor<2x0xf32> has an empty dimension}}
  %0 = graph.resize %x {size = array<i64: 4, 4>} : (tensor<2x0xf32>) -> tensor<4x4xf32>
  func.return %0 : tensor<4x4xf32>
}

// -----

func.func @resize_coordinate_mode(%x: tensor<2x3xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'graph.resize' op property 'coordinate_transformation_mode' is "tf_half_pixel_for_nn", expected one of "half_pixel", "half_pixel_symmetric", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_crop_and_resize"}}
  %0 = graph.resize %x {size = array<i64: 4, 4>, coordinate_transformation_mode = "tf_half_pixel_for_nn"} : (tensor<2x3xf32>) -> tensor<4x4xf32>
  func.return %0 : tensor<4x4xf32>
}

// -----

func.func @resize_scales(%x: tensor<2x3xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{'graph.resize' op scales must be 2 positive values, got [2.0, 0.0]}}
  %0 = graph.resize %x {size = array<i64: 4, 6>, scales = array<f64: 2.0, 0.0>} : (tensor<2x3xf32>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}

// -----

func.func @resize_roi(%x: tensor<2x3xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{'graph.resize' op roi must have 4 values, got 2}}
  %0 = graph.resize %x {size = array<i64: 4, 6>, coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.0, 1.0>} : (tensor<2x3xf32>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}

// -----

func.func @pad_crops_past_the_start(%x: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.pad' op pads -3, 5 on axis 0 crop more than its size 2 in tensor<2xf32>}}
  %0 = graph.pad %x {pads = array<i64: -3, 5>} : (tensor<2xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @conv2d_unknown_kernel_layout(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'graph.conv2d' op property 'kernel_layout' is "HWIO", expected "OIHW", "IHWO" or "OIHW<b>o" (b a positive integer, as in "OIHW16o")}}
  %0 = graph.conv2d %x, %w {kernel_layout = "HWIO"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_ihwo_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x6x6xf32> {
  // expected-error @+1 {{'graph.conv2d' op input tensor<1x3x8x8xf32> has 3 channels but weight tensor<4x3x3x3xf32> expects 4 (groups=1)}}
  %0 = graph.conv2d %x, %w {kernel_layout = "IHWO"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x6x6xf32>
  func.return %0 : tensor<1x3x6x6xf32>
}

// -----

func.func @conv2d_blocked_weight_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'graph.conv2d' op weight must be 5-D (O/4×C/groups×KH×KW×4), got tensor<4x3x3x3xf32>}}
  %0 = graph.conv2d %x, %w {kernel_layout = "OIHW4o"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_blocked_weight_block(%x: tensor<1x3x8x8xf32>, %w: tensor<1x3x3x3x8xf32>) -> tensor<1x8x6x6xf32> {
  // expected-error @+1 {{'graph.conv2d' op weight tensor<1x3x3x3x8xf32> in layout OIHW4o must have 4 as its last dimension}}
  %0 = graph.conv2d %x, %w {kernel_layout = "OIHW4o"} : (tensor<1x3x8x8xf32>, tensor<1x3x3x3x8xf32>) -> tensor<1x8x6x6xf32>
  func.return %0 : tensor<1x8x6x6xf32>
}

// -----

func.func @resize_antialias_nearest(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.resize' op antialias applies to linear and cubic, not nearest}}
  %0 = graph.resize %x {size = array<i64: 2, 4>, antialias = true} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @resize_mode(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.resize' op property 'mode' is "area", expected one of "nearest", "linear", "cubic"}}
  %0 = graph.resize %x {size = array<i64: 2, 4>, mode = "area"} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @grid_sample_grid_rank(%x: tensor<1x2x4x4xf32>, %grid: tensor<1x5x5x3xf32>) -> tensor<1x2x5x5xf32> {
  // expected-error @+1 {{'graph.grid_sample' op grid tensor<1x5x5x3xf32> must be N×O1×…×O2×2 for input tensor<1x2x4x4xf32>}}
  %0 = graph.grid_sample %x, %grid : (tensor<1x2x4x4xf32>, tensor<1x5x5x3xf32>) -> tensor<1x2x5x5xf32>
  func.return %0 : tensor<1x2x5x5xf32>
}

// -----

func.func @grid_sample_batch(%x: tensor<1x2x4x4xf32>, %grid: tensor<2x5x5x2xf32>) -> tensor<1x2x5x5xf32> {
  // expected-error @+1 {{'graph.grid_sample' op grid tensor<2x5x5x2xf32> and input tensor<1x2x4x4xf32> differ in batch size}}
  %0 = graph.grid_sample %x, %grid : (tensor<1x2x4x4xf32>, tensor<2x5x5x2xf32>) -> tensor<1x2x5x5xf32>
  func.return %0 : tensor<1x2x5x5xf32>
}

// -----

func.func @grid_sample_mode(%x: tensor<1x2x4x4xf32>, %grid: tensor<1x5x5x2xf32>) -> tensor<1x2x5x5xf32> {
  // expected-error @+1 {{'graph.grid_sample' op property 'mode' is "bicubic", expected one of "linear", "nearest", "cubic"}}
  %0 = graph.grid_sample %x, %grid {mode = "bicubic"} : (tensor<1x2x4x4xf32>, tensor<1x5x5x2xf32>) -> tensor<1x2x5x5xf32>
  func.return %0 : tensor<1x2x5x5xf32>
}

// -----

func.func @grid_sample_padding_mode(%x: tensor<1x2x4x4xf32>, %grid: tensor<1x5x5x2xf32>) -> tensor<1x2x5x5xf32> {
  // expected-error @+1 {{'graph.grid_sample' op property 'padding_mode' is "wrap", expected one of "zeros", "border", "reflection"}}
  %0 = graph.grid_sample %x, %grid {padding_mode = "wrap"} : (tensor<1x2x4x4xf32>, tensor<1x5x5x2xf32>) -> tensor<1x2x5x5xf32>
  func.return %0 : tensor<1x2x5x5xf32>
}

// -----

func.func @grid_sample_integer_input(%x: tensor<1x2x4x4xi32>, %grid: tensor<1x5x5x2xf32>) -> tensor<1x2x5x5xi32> {
  // expected-error @+1 {{'graph.grid_sample' op input tensor<1x2x4x4xi32> must have a float element type}}
  %0 = graph.grid_sample %x, %grid : (tensor<1x2x4x4xi32>, tensor<1x5x5x2xf32>) -> tensor<1x2x5x5xi32>
  func.return %0 : tensor<1x2x5x5xi32>
}

// -----

func.func @grid_sample_result(%x: tensor<1x2x4x4xf32>, %grid: tensor<1x5x5x2xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{'graph.grid_sample' op result type tensor<1x2x4x4xf32> does not match the type inferred from its operands tensor<1x2x5x5xf32>}}
  %0 = graph.grid_sample %x, %grid : (tensor<1x2x4x4xf32>, tensor<1x5x5x2xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @conv2d_u8s8_channel_blocks(%x: tensor<1x6x7x8xui8>, %w: tensor<1x3x3x3x16x4xi8>) -> tensor<1x4x5x16xi32> {
  // expected-error-re @+1 {{'graph.conv2d_u8s8' op weight tensor<1x3x3x3x16x4xi8> must end in 16×4 and hold the {{[0-9]+}} channels of input tensor<1x6x7x8xui8> in blocks of 4}}
  %0 = graph.conv2d_u8s8 %x, %w : (tensor<1x6x7x8xui8>, tensor<1x3x3x3x16x4xi8>) -> tensor<1x4x5x16xi32>
  func.return %0 : tensor<1x4x5x16xi32>
}

// -----

func.func @layout_transform_channels(%x: tensor<1x6x4x4xf32>) -> tensor<1x2x4x4x4xf32> {
  // expected-error @+1 {{'graph.layout_transform' op input tensor<1x6x4x4xf32> has 6 channels, not a multiple of the block of NCHW4c}}
  %0 = graph.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW4c"} : (tensor<1x6x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  func.return %0 : tensor<1x2x4x4x4xf32>
}

// -----

func.func @conv2d_blocked_input_unblocked_output_grouped(%x: tensor<1x2x4x4x4xf32>, %w: tensor<2x4x1x1x4xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{'graph.conv2d' op data_layout NCHW4c with out_layout NCHW: a blocked input needs an output blocked alike, or an NCHW output with groups=1}}
  %0 = graph.conv2d %x, %w {kernel_layout = "OIHW4o", data_layout = "NCHW4c", groups = 2 : i64} : (tensor<1x2x4x4x4xf32>, tensor<2x4x1x1x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @winograd_unblocked(%x: tensor<1x8x8x8xf32>, %u: tensor<6x6x3x8x4xf32>, %bt: tensor<6x6xf32>, %at: tensor<4x6xf32>) -> tensor<1x12x8x8xf32> {
  // expected-error @+1 {{'graph.winograd_conv2d' op data_layout must be "NCHW<b>c" (b a positive integer), got "NCHW"}}
  %0 = graph.winograd_conv2d %x, %u, %bt, %at {padding = array<i64: 1, 1, 1, 1>, data_layout = "NCHW"} : (tensor<1x8x8x8xf32>, tensor<6x6x3x8x4xf32>, tensor<6x6xf32>, tensor<4x6xf32>) -> tensor<1x12x8x8xf32>
  func.return %0 : tensor<1x12x8x8xf32>
}

// -----

func.func @winograd_transforms(%x: tensor<1x2x8x8x4xf32>, %u: tensor<6x6x3x8x4xf32>, %bt: tensor<6x6xf32>, %at: tensor<4x4xf32>) -> tensor<1x3x8x8x4xf32> {
  // expected-error @+1 {{'graph.winograd_conv2d' op input_transform tensor<6x6xf32> must be α×α and output_transform tensor<4x4xf32> m×α, 0 < m <= α}}
  %0 = graph.winograd_conv2d %x, %u, %bt, %at {padding = array<i64: 1, 1, 1, 1>, data_layout = "NCHW4c"} : (tensor<1x2x8x8x4xf32>, tensor<6x6x3x8x4xf32>, tensor<6x6xf32>, tensor<4x4xf32>) -> tensor<1x3x8x8x4xf32>
  func.return %0 : tensor<1x3x8x8x4xf32>
}

// -----

func.func @winograd_weight(%x: tensor<1x2x8x8x4xf32>, %u: tensor<4x4x3x8x4xf32>, %bt: tensor<6x6xf32>, %at: tensor<4x6xf32>) -> tensor<1x3x8x8x4xf32> {
  // expected-error @+1 {{'graph.winograd_conv2d' op weight tensor<4x4x3x8x4xf32> must be 6×6×K/4×8×4 for input tensor<1x2x8x8x4xf32> and input_transform tensor<6x6xf32>}}
  %0 = graph.winograd_conv2d %x, %u, %bt, %at {padding = array<i64: 1, 1, 1, 1>, data_layout = "NCHW4c"} : (tensor<1x2x8x8x4xf32>, tensor<4x4x3x8x4xf32>, tensor<6x6xf32>, tensor<4x6xf32>) -> tensor<1x3x8x8x4xf32>
  func.return %0 : tensor<1x3x8x8x4xf32>
}
