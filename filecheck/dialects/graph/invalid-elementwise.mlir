// RUN: xtc-opt %s --split-input-file --verify-diagnostics

func.func @add_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.add' op shapes tensor<2x3xf32> and tensor<4xf32> are not broadcast-compatible}}
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @relu_wrong_result(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'graph.relu' op result type tensor<3x2xf32> does not match the type inferred from its operands tensor<2x3xf32> (operands: tensor<2x3xf32>)}}
  %0 = graph.relu %a : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @where_not_broadcastable(%c: tensor<2x1xi1>, %x: tensor<3xf32>, %y: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.where' op shapes tensor<2x1xi1> and tensor<3xf32> and tensor<4xf32> are not broadcast-compatible}}
  %0 = graph.where %c, %x, %y : (tensor<2x1xi1>, tensor<3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @mul_element_types_differ(%a: tensor<3xf32>, %b: tensor<3xf16>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.mul' op operand element types differ: tensor<3xf32>, tensor<3xf16>}}
  %0 = graph.mul %a, %b : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @where_branch_types_differ(%c: tensor<3xi1>, %x: tensor<3xf32>, %y: tensor<3xi32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.where' op operand element types differ: tensor<3xf32>, tensor<3xi32>}}
  %0 = graph.where %c, %x, %y : (tensor<3xi1>, tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @where_condition_not_i1(%c: tensor<3xf32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.where' op condition tensor<3xf32> must have element type i1}}
  %0 = graph.where %c, %x, %x : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @and_not_i1(%a: tensor<3xi8>) -> tensor<3xi8> {
  // expected-error @+1 {{'graph.and' op operand tensor<3xi8> must have element type i1}}
  %0 = graph.and %a, %a : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  func.return %0 : tensor<3xi8>
}

// -----

func.func @not_not_i1(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.not' op operand tensor<3xf32> must have element type i1}}
  %0 = graph.not %a : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @exp_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.exp' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.exp %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @gelu_of_integers(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error @+1 {{'graph.gelu' op operand tensor<3xi64> must have a float element type}}
  %0 = graph.gelu %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}

// -----

func.func @add_of_i1(%a: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.add' op operand tensor<3xi1> must have an integer or float element type other than i1}}
  %0 = graph.add %a, %a : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @less_of_i1(%a: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.less' op operand tensor<3xi1> must have an integer or float element type other than i1}}
  %0 = graph.less %a, %a : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @comparison_result_not_i1(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.equal' op result type tensor<3xf32> does not match the type inferred from its operands tensor<3xi1> (operands: tensor<3xf32>, tensor<3xf32>)}}
  %0 = graph.equal %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @pow_base_i1(%a: tensor<3xi1>, %e: tensor<3xf32>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.pow' op base tensor<3xi1> must have an integer or float element type other than i1}}
  %0 = graph.pow %a, %e : (tensor<3xi1>, tensor<3xf32>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @pow_exponent_i1(%a: tensor<3xf32>, %e: tensor<3xi1>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.pow' op exponent tensor<3xi1> must have an integer or float element type other than i1}}
  %0 = graph.pow %a, %e : (tensor<3xf32>, tensor<3xi1>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @pow_result_is_not_the_base_type(%a: tensor<3xi32>, %e: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.pow' op result type tensor<3xf32> does not match the type inferred from its operands tensor<3xi32> (operands: tensor<3xi32>, tensor<3xf32>)}}
  %0 = graph.pow %a, %e : (tensor<3xi32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @gelu_unknown_approximation(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.gelu' op property 'approximate' is "fast", expected one of "none", "tanh"}}
  %0 = graph.gelu %a {approximate = "fast"} : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @dropout_ratio_out_of_range(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.dropout' op ratio 1.5 is outside [0, 1)}}
  %0 = graph.dropout %a {ratio = 1.5 : f32} : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @leaky_relu_alpha_not_float(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{1 : i64 should be of base attribute float}}
  %0 = graph.leaky_relu %a {alpha = 1 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @bitcast_of_another_width(%a: tensor<3xf32>) -> tensor<3xi64> {
  // expected-error @+1 {{'graph.bitcast' op f32 and i64 have different widths (32 and 64 bits)}}
  %0 = graph.bitcast %a {to = i64} : (tensor<3xf32>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}

// -----

func.func @cast_to_index(%a: tensor<3xf32>) -> tensor<3xindex> {
  // expected-error @+1 {{'graph.cast' op target type index is not an integer or float type}}
  %0 = graph.cast %a {to = index} : (tensor<3xf32>) -> tensor<3xindex>
  func.return %0 : tensor<3xindex>
}

// -----

func.func @cast_saturating_to_an_integer(%a: tensor<3xf32>) -> tensor<3xi8> {
  // expected-error @+1 {{'graph.cast' op 'saturate' needs a float target type, got i8}}
  %0 = graph.cast %a {to = i8, saturate = true} : (tensor<3xf32>) -> tensor<3xi8>
  func.return %0 : tensor<3xi8>
}

// -----

func.func @cast_rounding_to_f16(%a: tensor<3xf32>) -> tensor<3xf16> {
  // expected-error @+1 {{'graph.cast' op 'round_mode' needs target type f8E8M0FNU, got f16}}
  %0 = graph.cast %a {to = f16, round_mode = "up"} : (tensor<3xf32>) -> tensor<3xf16>
  func.return %0 : tensor<3xf16>
}

// -----

func.func @cast_to_e8m0_rounding_sideways(%a: tensor<3xf32>) -> tensor<3xf8E8M0FNU> {
  // expected-error @+1 {{property 'round_mode' is "sideways", expected one of "up", "down", "nearest"}}
  %0 = graph.cast %a {to = f8E8M0FNU, round_mode = "sideways"} : (tensor<3xf32>) -> tensor<3xf8E8M0FNU>
  func.return %0 : tensor<3xf8E8M0FNU>
}

// -----

func.func @cast_without_target(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{property 'to' expected in operation 'graph.cast'}}
  %0 = graph.cast %a : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @cast_result_shape(%a: tensor<3xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'graph.cast' op result type tensor<4xf16> does not match the type inferred from its operands tensor<3xf16> (operands: tensor<3xf32>)}}
  %0 = graph.cast %a {to = f16} : (tensor<3xf32>) -> tensor<4xf16>
  func.return %0 : tensor<4xf16>
}

// -----

func.func @sigmoid_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.sigmoid' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.sigmoid %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @tanh_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.tanh' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.tanh %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @erf_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.erf' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.erf %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @log_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.log' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.log %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @sqrt_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.sqrt' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.sqrt %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @floor_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.floor' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.floor %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @ceil_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.ceil' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.ceil %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @round_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.round' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.round %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @reciprocal_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.reciprocal' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.reciprocal %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @sin_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.sin' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.sin %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @cos_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.cos' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.cos %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @softplus_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.softplus' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.softplus %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @hard_sigmoid_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.hard_sigmoid' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.hard_sigmoid %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @abs_of_i1(%a: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.abs' op operand tensor<3xi1> must have an integer or float element type other than i1}}
  %0 = graph.abs %a : (tensor<3xi1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @neg_of_i1(%a: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.neg' op operand tensor<3xi1> must have an integer or float element type other than i1}}
  %0 = graph.neg %a : (tensor<3xi1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @sign_of_i1(%a: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.sign' op operand tensor<3xi1> must have an integer or float element type other than i1}}
  %0 = graph.sign %a : (tensor<3xi1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @clip_of_i1(%a: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.clip' op operand tensor<3xi1> must have an integer or float element type other than i1}}
  %0 = graph.clip %a : (tensor<3xi1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @max_of_i1(%a: tensor<3xi1>, %b: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.max' op operand tensor<3xi1> must have an integer or float element type other than i1}}
  %0 = graph.max %a, %b : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @min_of_i1(%a: tensor<3xi1>, %b: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.min' op operand tensor<3xi1> must have an integer or float element type other than i1}}
  %0 = graph.min %a, %b : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @div_of_i1(%a: tensor<3xi1>, %b: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.div' op operand tensor<3xi1> must have an integer or float element type other than i1}}
  %0 = graph.div %a, %b : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @sub_not_broadcastable(%a: tensor<2x3xi32>, %b: tensor<2xi32>) -> tensor<2x3xi32> {
  // expected-error @+1 {{'graph.sub' op shapes tensor<2x3xi32> and tensor<2xi32> are not broadcast-compatible}}
  %0 = graph.sub %a, %b : (tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x3xi32>
  func.return %0 : tensor<2x3xi32>
}

// -----

func.func @mod_element_types_differ(%a: tensor<3xi32>, %b: tensor<3xi64>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.mod' op operand element types differ: tensor<3xi32>, tensor<3xi64>}}
  %0 = graph.mod %a, %b : (tensor<3xi32>, tensor<3xi64>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @greater_element_types_differ(%a: tensor<3xf32>, %b: tensor<3xf64>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.greater' op operand element types differ: tensor<3xf32>, tensor<3xf64>}}
  %0 = graph.greater %a, %b : (tensor<3xf32>, tensor<3xf64>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @greater_equal_of_i1(%a: tensor<3xi1>, %b: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.greater_equal' op operand tensor<3xi1> must have an integer or float element type other than i1}}
  %0 = graph.greater_equal %a, %b : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @less_equal_not_broadcastable(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.less_equal' op shapes tensor<2xf32> and tensor<3xf32> are not broadcast-compatible}}
  %0 = graph.less_equal %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @not_equal_result_not_i1(%a: tensor<3xi32>, %b: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.not_equal' op result type tensor<3xi32> does not match the type inferred from its operands tensor<3xi1> (operands: tensor<3xi32>, tensor<3xi32>)}}
  %0 = graph.not_equal %a, %b : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @or_not_i1(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.or' op operand tensor<3xf32> must have element type i1}}
  %0 = graph.or %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @xor_not_broadcastable(%a: tensor<2xi1>, %b: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.xor' op shapes tensor<2xi1> and tensor<3xi1> are not broadcast-compatible}}
  %0 = graph.xor %a, %b : (tensor<2xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @identity_wrong_result(%a: tensor<3xf32>) -> tensor<3xf16> {
  // expected-error @+1 {{'graph.identity' op result type tensor<3xf16> does not match the type inferred from its operands tensor<3xf32> (operands: tensor<3xf32>)}}
  %0 = graph.identity %a : (tensor<3xf32>) -> tensor<3xf16>
  func.return %0 : tensor<3xf16>
}

// -----

func.func @tan_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.tan' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.tan %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @asin_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.asin' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.asin %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @acos_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.acos' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.acos %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @atan_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.atan' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.atan %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @sinh_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.sinh' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.sinh %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @cosh_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.cosh' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.cosh %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @asinh_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.asinh' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.asinh %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @acosh_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.acosh' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.acosh %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @atanh_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.atanh' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.atanh %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @bitwise_not_of_floats(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.bitwise_not' op operand tensor<3xf32> must have an integer element type other than i1}}
  %0 = graph.bitwise_not %a : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @bitwise_and_of_i1(%a: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'graph.bitwise_and' op operand tensor<3xi1> must have an integer element type other than i1}}
  %0 = graph.bitwise_and %a, %a : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @bitwise_or_element_types_differ(%a: tensor<3xi32>, %b: tensor<3xi64>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.bitwise_or' op operand element types differ: tensor<3xi32>, tensor<3xi64>}}
  %0 = graph.bitwise_or %a, %b : (tensor<3xi32>, tensor<3xi64>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @bitwise_xor_not_broadcastable(%a: tensor<2xui8>, %b: tensor<3xui8>) -> tensor<3xui8> {
  // expected-error @+1 {{'graph.bitwise_xor' op shapes tensor<2xui8> and tensor<3xui8> are not broadcast-compatible}}
  %0 = graph.bitwise_xor %a, %b : (tensor<2xui8>, tensor<3xui8>) -> tensor<3xui8>
  func.return %0 : tensor<3xui8>
}

// -----

func.func @shift_left_of_floats(%a: tensor<3xf16>) -> tensor<3xf16> {
  // expected-error @+1 {{'graph.shift_left' op operand tensor<3xf16> must have an integer element type other than i1}}
  %0 = graph.shift_left %a, %a : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  func.return %0 : tensor<3xf16>
}

// -----

func.func @shift_right_wrong_result(%a: tensor<3xui32>, %b: tensor<1xui32>) -> tensor<1xui32> {
  // expected-error @+1 {{'graph.shift_right' op result type tensor<1xui32> does not match the type inferred from its operands tensor<3xui32> (operands: tensor<3xui32>, tensor<1xui32>)}}
  %0 = graph.shift_right %a, %b : (tensor<3xui32>, tensor<1xui32>) -> tensor<1xui32>
  func.return %0 : tensor<1xui32>
}

// -----

func.func @swish_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'graph.swish' op operand tensor<3xi32> must have a float element type}}
  %0 = graph.swish %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}
