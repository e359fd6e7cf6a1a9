// RUN: %roundtrip | filecheck %s
// RUN: %generic-roundtrip | filecheck %s

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[S:.*]] = graph.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.relu %[[S]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.relu %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %1 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @float_unary
func.func @float_unary(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[A:.*]] = graph.sigmoid %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = graph.sigmoid %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = graph.tanh %[[A]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.tanh %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.erf %[[B]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.erf %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.exp %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = graph.exp %2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.log %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = graph.log %3 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.sqrt %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = graph.sqrt %4 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.floor %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = graph.floor %5 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.ceil %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = graph.ceil %6 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.round %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %8 = graph.round %7 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.reciprocal %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = graph.reciprocal %8 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.sin %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %10 = graph.sin %9 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.cos %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %11 = graph.cos %10 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.softplus %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %12 = graph.softplus %11 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %12 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @float_unary_with_properties
func.func @float_unary_with_properties(%x: tensor<4xf16>) -> tensor<4xf16> {
  // CHECK: graph.gelu %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %0 = graph.gelu %x : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: graph.gelu %{{.*}} {approximate = "tanh"} : (tensor<4xf16>) -> tensor<4xf16>
  %1 = graph.gelu %0 {approximate = "tanh"} : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: graph.leaky_relu %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %2 = graph.leaky_relu %1 : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: graph.leaky_relu %{{.*}} {alpha = 1.000000e-01 : f32} : (tensor<4xf16>) -> tensor<4xf16>
  %3 = graph.leaky_relu %2 {alpha = 0.1 : f32} : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: graph.hard_sigmoid %{{.*}} {alpha = 2.500000e-01 : f32, beta = 5.000000e-01 : f32} : (tensor<4xf16>) -> tensor<4xf16>
  %4 = graph.hard_sigmoid %3 {alpha = 0.25 : f32, beta = 0.5 : f32} : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: graph.clip %{{.*}} {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<4xf16>) -> tensor<4xf16>
  %5 = graph.clip %4 {min = 0.0 : f32, max = 6.0 : f32} : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: graph.dropout %{{.*}} {ratio = 1.000000e-01 : f32} : (tensor<4xf16>) -> tensor<4xf16>
  %6 = graph.dropout %5 {ratio = 0.1 : f32} : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: graph.identity %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %7 = graph.identity %6 : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: graph.swish %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %8 = graph.swish %7 : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: graph.swish %{{.*}} {alpha = 5.000000e-01 : f32} : (tensor<4xf16>) -> tensor<4xf16>
  %9 = graph.swish %8 {alpha = 0.5 : f32} : (tensor<4xf16>) -> tensor<4xf16>
  func.return %9 : tensor<4xf16>
}

// CHECK-LABEL: func.func @integer_unary
func.func @integer_unary(%x: tensor<5xi32>) -> tensor<5xi32> {
  // CHECK: graph.abs %{{.*}} : (tensor<5xi32>) -> tensor<5xi32>
  %0 = graph.abs %x : (tensor<5xi32>) -> tensor<5xi32>
  // CHECK: graph.neg %{{.*}} : (tensor<5xi32>) -> tensor<5xi32>
  %1 = graph.neg %0 : (tensor<5xi32>) -> tensor<5xi32>
  // CHECK: graph.sign %{{.*}} : (tensor<5xi32>) -> tensor<5xi32>
  %2 = graph.sign %1 : (tensor<5xi32>) -> tensor<5xi32>
  // CHECK: graph.relu %{{.*}} : (tensor<5xi32>) -> tensor<5xi32>
  %3 = graph.relu %2 : (tensor<5xi32>) -> tensor<5xi32>
  // CHECK: graph.clip %{{.*}} {max = 3.000000e+00 : f32} : (tensor<5xi32>) -> tensor<5xi32>
  %4 = graph.clip %3 {max = 3.0 : f32} : (tensor<5xi32>) -> tensor<5xi32>
  func.return %4 : tensor<5xi32>
}

// CHECK-LABEL: func.func @arithmetic
func.func @arithmetic(%a: tensor<2x1xi64>, %b: tensor<3xi64>) -> tensor<2x3xi64> {
  // CHECK: graph.sub %{{.*}}, %{{.*}} : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %0 = graph.sub %a, %b : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  // CHECK: graph.mul %{{.*}}, %{{.*}} : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %1 = graph.mul %0, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  // CHECK: graph.div %{{.*}}, %{{.*}} : (tensor<2x3xi64>, tensor<2x1xi64>) -> tensor<2x3xi64>
  %2 = graph.div %1, %a : (tensor<2x3xi64>, tensor<2x1xi64>) -> tensor<2x3xi64>
  // CHECK: graph.max %{{.*}}, %{{.*}} : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %3 = graph.max %2, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  // CHECK: graph.min %{{.*}}, %{{.*}} : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %4 = graph.min %3, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  // CHECK: graph.mod %{{.*}}, %{{.*}} : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %5 = graph.mod %4, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  // CHECK: graph.mod %{{.*}}, %{{.*}} {fmod = true} : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %6 = graph.mod %5, %b {fmod = true} : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  func.return %6 : tensor<2x3xi64>
}

// CHECK-LABEL: func.func @pow_takes_the_base_type
func.func @pow_takes_the_base_type(%a: tensor<4x1xf32>, %e: tensor<3xi32>) -> tensor<4x3xf32> {
  // CHECK: graph.pow %{{.*}}, %{{.*}} : (tensor<4x1xf32>, tensor<3xi32>) -> tensor<4x3xf32>
  %0 = graph.pow %a, %e : (tensor<4x1xf32>, tensor<3xi32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @comparisons_and_logic
func.func @comparisons_and_logic(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  // CHECK: %[[EQ:.*]] = graph.equal %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %0 = graph.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: graph.not_equal %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %1 = graph.not_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: graph.less %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %2 = graph.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: graph.less_equal %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %3 = graph.less_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: graph.greater %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %4 = graph.greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: graph.greater_equal %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %5 = graph.greater_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: graph.and %[[EQ]], %{{.*}} : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %6 = graph.and %0, %1 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: graph.or %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %7 = graph.or %6, %2 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: graph.xor %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %8 = graph.xor %7, %3 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: graph.not %{{.*}} : (tensor<2x3xi1>) -> tensor<2x3xi1>
  %9 = graph.not %8 : (tensor<2x3xi1>) -> tensor<2x3xi1>
  func.return %9 : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @where_broadcasts_three_ways
func.func @where_broadcasts_three_ways(%c: tensor<2x1x1xi1>, %x: tensor<3x1xf32>, %y: tensor<4xf32>) -> tensor<2x3x4xf32> {
  // CHECK: graph.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x1x1xi1>, tensor<3x1xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %0 = graph.where %c, %x, %y : (tensor<2x1x1xi1>, tensor<3x1xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @bitcast
func.func @bitcast(%x: tensor<2x3xf32>, %b: tensor<4xi1>) -> tensor<2x3xi32> {
  // CHECK: graph.bitcast %{{.*}} {to = i32} : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %0 = graph.bitcast %x {to = i32} : (tensor<2x3xf32>) -> tensor<2x3xi32>
  // CHECK: graph.bitcast %{{.*}} {to = ui8} : (tensor<4xi1>) -> tensor<4xui8>
  %1 = graph.bitcast %b {to = ui8} : (tensor<4xi1>) -> tensor<4xui8>
  func.return %0 : tensor<2x3xi32>
}

// CHECK-LABEL: func.func @cast
func.func @cast(%x: tensor<2x3xf32>) -> tensor<2x3xi1> {
  // CHECK: %[[H:.*]] = graph.cast %{{.*}} {to = f16} : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %0 = graph.cast %x {to = f16} : (tensor<2x3xf32>) -> tensor<2x3xf16>
  // CHECK: graph.cast %[[H]] {to = i64} : (tensor<2x3xf16>) -> tensor<2x3xi64>
  %1 = graph.cast %0 {to = i64} : (tensor<2x3xf16>) -> tensor<2x3xi64>
  // CHECK: graph.cast %{{.*}} {to = ui8} : (tensor<2x3xi64>) -> tensor<2x3xui8>
  %2 = graph.cast %1 {to = ui8} : (tensor<2x3xi64>) -> tensor<2x3xui8>
  // CHECK: graph.cast %{{.*}} {to = i1} : (tensor<2x3xui8>) -> tensor<2x3xi1>
  %3 = graph.cast %2 {to = i1} : (tensor<2x3xui8>) -> tensor<2x3xi1>
  func.return %3 : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @cast_to_e8m0
func.func @cast_to_e8m0(%x: tensor<4xf32>) -> tensor<4xf8E8M0FNU> {
  // CHECK: graph.cast %{{.*}} {to = f8E8M0FNU, saturate = true, round_mode = "nearest"} : (tensor<4xf32>) -> tensor<4xf8E8M0FNU>
  %0 = graph.cast %x {to = f8E8M0FNU, saturate = true, round_mode = "nearest"} : (tensor<4xf32>) -> tensor<4xf8E8M0FNU>
  func.return %0 : tensor<4xf8E8M0FNU>
}

// CHECK-LABEL: func.func @cast_to_narrow_types
func.func @cast_to_narrow_types(%x: tensor<4xf32>) -> (tensor<4xf8E4M3FN>, tensor<4xbf16>, tensor<4xi4>) {
  // CHECK: graph.cast %{{.*}} {to = f8E4M3FN, saturate = true} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  %0 = graph.cast %x {to = f8E4M3FN, saturate = true} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  // CHECK: graph.cast %{{.*}} {to = bf16} : (tensor<4xf32>) -> tensor<4xbf16>
  %1 = graph.cast %x {to = bf16} : (tensor<4xf32>) -> tensor<4xbf16>
  // CHECK: graph.cast %{{.*}} {to = i4} : (tensor<4xf32>) -> tensor<4xi4>
  %2 = graph.cast %x {to = i4} : (tensor<4xf32>) -> tensor<4xi4>
  func.return %0, %1, %2 : tensor<4xf8E4M3FN>, tensor<4xbf16>, tensor<4xi4>
}

// CHECK-LABEL: func.func @trigonometric
func.func @trigonometric(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: graph.tan %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = graph.tan %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.asin %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.asin %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.acos %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.acos %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.atan %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = graph.atan %2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.sinh %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = graph.sinh %3 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.cosh %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = graph.cosh %4 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.asinh %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = graph.asinh %5 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.acosh %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = graph.acosh %6 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.atanh %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %8 = graph.atanh %7 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %8 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @bitwise
func.func @bitwise(%a: tensor<2x3xui16>, %b: tensor<3xui16>) -> tensor<2x3xui16> {
  // CHECK: graph.bitwise_and %{{.*}}, %{{.*}} : (tensor<2x3xui16>, tensor<3xui16>) -> tensor<2x3xui16>
  %0 = graph.bitwise_and %a, %b : (tensor<2x3xui16>, tensor<3xui16>) -> tensor<2x3xui16>
  // CHECK: graph.bitwise_or %{{.*}}, %{{.*}} : (tensor<2x3xui16>, tensor<3xui16>) -> tensor<2x3xui16>
  %1 = graph.bitwise_or %0, %b : (tensor<2x3xui16>, tensor<3xui16>) -> tensor<2x3xui16>
  // CHECK: graph.bitwise_xor %{{.*}}, %{{.*}} : (tensor<2x3xui16>, tensor<3xui16>) -> tensor<2x3xui16>
  %2 = graph.bitwise_xor %1, %b : (tensor<2x3xui16>, tensor<3xui16>) -> tensor<2x3xui16>
  // CHECK: graph.shift_left %{{.*}}, %{{.*}} : (tensor<2x3xui16>, tensor<3xui16>) -> tensor<2x3xui16>
  %3 = graph.shift_left %2, %b : (tensor<2x3xui16>, tensor<3xui16>) -> tensor<2x3xui16>
  // CHECK: graph.shift_right %{{.*}}, %{{.*}} : (tensor<2x3xui16>, tensor<3xui16>) -> tensor<2x3xui16>
  %4 = graph.shift_right %3, %b : (tensor<2x3xui16>, tensor<3xui16>) -> tensor<2x3xui16>
  // CHECK: graph.bitwise_not %{{.*}} : (tensor<2x3xui16>) -> tensor<2x3xui16>
  %5 = graph.bitwise_not %4 : (tensor<2x3xui16>) -> tensor<2x3xui16>
  func.return %5 : tensor<2x3xui16>
}
