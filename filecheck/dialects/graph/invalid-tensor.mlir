// RUN: xtc-opt %s --split-input-file --verify-diagnostics

func.func @reshape_count(%a: tensor<2x3xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'graph.reshape' op cannot reshape tensor<2x3xf32> (6 elements) to tensor<4x2xf32> (8 elements)}}
  %0 = graph.reshape %a {shape = array<i64: 4, 2>} : (tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}

// -----

func.func @reshape_placeholder(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.reshape' op shape [-1, 3] has a negative value}}
  %0 = graph.reshape %a {shape = array<i64: -1, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @reshape_wrong_result(%a: tensor<2x3xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{'graph.reshape' op result type tensor<6xf32> does not match the type inferred from its operands tensor<3x2xf32> (operands: tensor<2x3xf32>)}}
  %0 = graph.reshape %a {shape = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<6xf32>
  func.return %0 : tensor<6xf32>
}

// -----

func.func @reshape_missing_shape(%a: tensor<2x3xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{property 'shape' expected in operation 'graph.reshape'}}
  %0 = graph.reshape %a : (tensor<2x3xf32>) -> tensor<6xf32>
  func.return %0 : tensor<6xf32>
}

// -----

func.func @transpose_not_permutation(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.transpose' op perm [0, 0] is not a permutation of 0..1 (rank 2)}}
  %0 = graph.transpose %a {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @squeeze_not_one(%a: tensor<1x3xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{'graph.squeeze' op cannot squeeze axis 1 of tensor<1x3xf32>: its size is 3, not 1}}
  %0 = graph.squeeze %a {axes = array<i64: 1>} : (tensor<1x3xf32>) -> tensor<1xf32>
  func.return %0 : tensor<1xf32>
}

// -----

func.func @squeeze_axis_range(%a: tensor<1x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.squeeze' op axis 2 is out of range for rank 2}}
  %0 = graph.squeeze %a {axes = array<i64: 2>} : (tensor<1x3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @squeeze_repeated(%a: tensor<1x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.squeeze' op axes [0, -2] name axis 0 more than once}}
  %0 = graph.squeeze %a {axes = array<i64: 0, -2>} : (tensor<1x3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @unsqueeze_axis_range(%a: tensor<2x3xf32>) -> tensor<2x3x1xf32> {
  // expected-error @+1 {{'graph.unsqueeze' op axis 3 is out of range for rank 3}}
  %0 = graph.unsqueeze %a {axes = array<i64: 3>} : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
  func.return %0 : tensor<2x3x1xf32>
}

// -----

func.func @flatten_axis_range(%a: tensor<2x3xf32>) -> tensor<6x1xf32> {
  // expected-error @+1 {{'graph.flatten' op axis 3 is out of range for rank 2 (flatten takes -2..2)}}
  %0 = graph.flatten %a {axis = 3 : i64} : (tensor<2x3xf32>) -> tensor<6x1xf32>
  func.return %0 : tensor<6x1xf32>
}

// -----

func.func @broadcast_incompatible(%a: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'graph.broadcast_to' op tensor<2x3xf32> cannot be broadcast with shape [4, 3]}}
  %0 = graph.broadcast_to %a {shape = array<i64: 4, 3>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @broadcast_negative(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.broadcast_to' op shape [-1, 3] has a negative value}}
  %0 = graph.broadcast_to %a {shape = array<i64: -1, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @tile_rank(%a: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'graph.tile' op repeats [2] need one value per axis of tensor<2x3xf32> (rank 2)}}
  %0 = graph.tile %a {repeats = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @tile_negative(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.tile' op repeats [1, -2] has a negative value}}
  %0 = graph.tile %a {repeats = array<i64: 1, -2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @concat_off_axis(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'graph.concat' op inputs tensor<2x3xf32> and tensor<2x4xf32> differ outside axis 0}}
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'graph.concat' op inputs tensor<2x3xf32> and tensor<2x3x1xf32> differ in rank}}
  %0 = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3x1xf32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_element_types(%a: tensor<2x3xf32>, %b: tensor<2x3xi32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'graph.concat' op operand element types differ: tensor<2x3xf32>, tensor<2x3xi32>}}
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @concat_axis_range(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.concat' op axis -3 is out of range for rank 2}}
  %0 = graph.concat %a {axis = -3 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @concat_no_input() -> tensor<2xf32> {
  // expected-error @+1 {{'graph.concat' op needs at least one input}}
  %0 = graph.concat {axis = 0 : i64} : () -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @split_sum(%a: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'graph.split' op sizes [1, 1] sum to 2 but axis 1 of tensor<2x3xf32> has size 3}}
  %0:2 = graph.split %a {axis = 1 : i64, sizes = array<i64: 1, 1>} : (tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x1xf32>)
  func.return %0 : tensor<2x1xf32>
}

// -----

func.func @split_empty(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.split' op sizes must not be empty}}
  %0 = graph.split %a {sizes = array<i64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @split_negative(%a: tensor<2x3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.split' op sizes [4, -1] has a negative value}}
  %0:2 = graph.split %a {axis = 1 : i64, sizes = array<i64: 4, -1>} : (tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x0xf32>)
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @split_wrong_results(%a: tensor<2x3xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{'graph.split' op result type tensor<1x3xf32>, tensor<2x3xf32> does not match the type inferred from its operands tensor<1x3xf32>, tensor<1x3xf32> (operands: tensor<2x3xf32>)}}
  %0:2 = graph.split %a {sizes = array<i64: 1, 1>} : (tensor<2x3xf32>) -> (tensor<1x3xf32>, tensor<2x3xf32>)
  func.return %0 : tensor<1x3xf32>
}

// -----

func.func @slice_lengths(%a: tensor<2x3xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{'graph.slice' op starts has 2 values but ends has 1}}
  %0 = graph.slice %a {starts = array<i64: 0, 0>, ends = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  func.return %0 : tensor<1x3xf32>
}

// -----

func.func @slice_step_zero(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.slice' op step on axis 1 is 0}}
  %0 = graph.slice %a {starts = array<i64: 0>, ends = array<i64: 1>, axes = array<i64: 1>, steps = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @slice_axes_repeated(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.slice' op axes [1, -1] name axis 1 more than once}}
  %0 = graph.slice %a {starts = array<i64: 0, 0>, ends = array<i64: 1, 1>, axes = array<i64: 1, -1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @slice_axis_range(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.slice' op axis 2 is out of range for rank 2}}
  %0 = graph.slice %a {starts = array<i64: 0>, ends = array<i64: 1>, axes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @slice_wrong_result(%a: tensor<2x3xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{'graph.slice' op result type tensor<1x3xf32> does not match the type inferred from its operands tensor<2x3xf32> (operands: tensor<2x3xf32>)}}
  %0 = graph.slice %a {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, steps = array<i64: -1>} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  func.return %0 : tensor<1x3xf32>
}

// -----

func.func @gather_float_indices(%a: tensor<2x3xf32>, %i: tensor<4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'graph.gather' op indices must be an integer tensor, got tensor<4xf32>}}
  %0 = graph.gather %a, %i : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @gather_axis_range(%a: tensor<2x3xf32>, %i: tensor<4xi64>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'graph.gather' op axis 2 is out of range for rank 2}}
  %0 = graph.gather %a, %i {axis = 2 : i64} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @gather_elements_fit(%a: tensor<2x3xf32>, %i: tensor<3x3xi64>) -> tensor<3x3xf32> {
  // expected-error @+1 {{'graph.gather_elements' op indices tensor<3x3xi64> do not fit data tensor<2x3xf32> outside axis 1 (same rank, no larger dimension)}}
  %0 = graph.gather_elements %a, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xi64>) -> tensor<3x3xf32>
  func.return %0 : tensor<3x3xf32>
}

// -----

func.func @gather_elements_float_indices(%a: tensor<2x3xf32>, %i: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.gather_elements' op indices must be an integer tensor, got tensor<2x3xf32>}}
  %0 = graph.gather_elements %a, %i : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @scatter_updates_shape(%a: tensor<2x3xf32>, %i: tensor<1x2xi64>, %u: tensor<2x2xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.scatter_elements' op updates tensor<2x2xf32> and indices tensor<1x2xi64> differ in shape}}
  %0 = graph.scatter_elements %a, %i, %u : (tensor<2x3xf32>, tensor<1x2xi64>, tensor<2x2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @scatter_element_types(%a: tensor<2x3xf32>, %i: tensor<1x2xi64>, %u: tensor<1x2xf16>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.scatter_elements' op operand element types differ: tensor<2x3xf32>, tensor<1x2xf16>}}
  %0 = graph.scatter_elements %a, %i, %u : (tensor<2x3xf32>, tensor<1x2xi64>, tensor<1x2xf16>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @scatter_reduction(%a: tensor<2x3xf32>, %i: tensor<1x2xi64>, %u: tensor<1x2xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.scatter_elements' op property 'reduction' is "sub", expected one of "none", "add", "mul", "max", "min"}}
  %0 = graph.scatter_elements %a, %i, %u {reduction = "sub"} : (tensor<2x3xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @depth_to_space_channels(%a: tensor<1x6x2x2xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'graph.depth_to_space' op channels of tensor<1x6x2x2xf32> (6) are not a multiple of blocksize^2 (blocksize 2)}}
  %0 = graph.depth_to_space %a {blocksize = 2 : i64} : (tensor<1x6x2x2xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @depth_to_space_mode(%a: tensor<1x8x2x2xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{'graph.depth_to_space' op property 'mode' is "RDC", expected one of "DCR", "CRD"}}
  %0 = graph.depth_to_space %a {blocksize = 2 : i64, mode = "RDC"} : (tensor<1x8x2x2xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @space_to_depth_spatial(%a: tensor<1x1x3x4xf32>) -> tensor<1x4x1x2xf32> {
  // expected-error @+1 {{'graph.space_to_depth' op spatial size 3x4 of tensor<1x1x3x4xf32> is not a multiple of blocksize 2}}
  %0 = graph.space_to_depth %a {blocksize = 2 : i64} : (tensor<1x1x3x4xf32>) -> tensor<1x4x1x2xf32>
  func.return %0 : tensor<1x4x1x2xf32>
}

// -----

func.func @space_to_depth_blocksize(%a: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'graph.space_to_depth' op blocksize 0 must be positive}}
  %0 = graph.space_to_depth %a {blocksize = 0 : i64} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @space_to_depth_rank(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.space_to_depth' op input must be 4-D (NCHW), got tensor<2x3xf32>}}
  %0 = graph.space_to_depth %a {blocksize = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @gather_nd_float_indices(%a: tensor<2x3xf32>, %i: tensor<2x1xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.gather_nd' op indices must be an integer tensor, got tensor<2x1xf32>}}
  %0 = graph.gather_nd %a, %i : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @gather_nd_batch_dims(%a: tensor<2x3xf32>, %i: tensor<2x1xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{'graph.gather_nd' op batch_dims 2 must be less than the ranks of data tensor<2x3xf32> and indices tensor<2x1xi64>}}
  %0 = graph.gather_nd %a, %i {batch_dims = 2 : i64} : (tensor<2x3xf32>, tensor<2x1xi64>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @gather_nd_depth(%a: tensor<2x3xf32>, %i: tensor<2x3xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{'graph.gather_nd' op the last dimension of indices tensor<2x3xi64> (3) must be in 1..2, the rank of data tensor<2x3xf32> after 0 batch dims}}
  %0 = graph.gather_nd %a, %i : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @gather_nd_batch_mismatch(%a: tensor<2x3xf32>, %i: tensor<3x1xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.gather_nd' op the first 1 dims of data tensor<2x3xf32> and indices tensor<3x1xi64> differ}}
  %0 = graph.gather_nd %a, %i {batch_dims = 1 : i64} : (tensor<2x3xf32>, tensor<3x1xi64>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @gather_nd_wrong_result(%a: tensor<2x3xf32>, %i: tensor<4x2xi64>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'graph.gather_nd' op result type tensor<4x3xf32> does not match the type inferred from its operands tensor<4xf32> (operands: tensor<2x3xf32>, tensor<4x2xi64>)}}
  %0 = graph.gather_nd %a, %i : (tensor<2x3xf32>, tensor<4x2xi64>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @scatter_nd_reduction(%a: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'graph.scatter_nd' op property 'reduction' is "sub", expected one of "none", "add", "mul", "max", "min"}}
  %0 = graph.scatter_nd %a, %i, %u {reduction = "sub"} : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @scatter_nd_depth(%a: tensor<4x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'graph.scatter_nd' op the last dimension of indices tensor<2x3xi64> (3) must be in 1..2, the rank of data tensor<4x3xf32> after 0 batch dims}}
  %0 = graph.scatter_nd %a, %i, %u : (tensor<4x3xf32>, tensor<2x3xi64>, tensor<2xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @scatter_nd_float_indices(%a: tensor<4x3xf32>, %i: tensor<2x1xf32>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'graph.scatter_nd' op indices must be an integer tensor, got tensor<2x1xf32>}}
  %0 = graph.scatter_nd %a, %i, %u : (tensor<4x3xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @scatter_nd_element_types(%a: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xi32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'graph.scatter_nd' op operand element types differ: tensor<4x3xf32>, tensor<2x3xi32>}}
  %0 = graph.scatter_nd %a, %i, %u : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xi32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @scatter_nd_updates_shape(%a: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'graph.scatter_nd' op updates tensor<2xf32> must have shape [2, 3] (indices tensor<2x1xi64>, data tensor<4x3xf32>)}}
  %0 = graph.scatter_nd %a, %i, %u : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @space_to_depth_mode(%a: tensor<1x1x4x4xf32>) -> tensor<1x4x2x2xf32> {
  // expected-error @+1 {{'graph.space_to_depth' op property 'mode' is "RDC", expected one of "DCR", "CRD"}}
  %0 = graph.space_to_depth %a {blocksize = 2 : i64, mode = "RDC"} : (tensor<1x1x4x4xf32>) -> tensor<1x4x2x2xf32>
  func.return %0 : tensor<1x4x2x2xf32>
}
