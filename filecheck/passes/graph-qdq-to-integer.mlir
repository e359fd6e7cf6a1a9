// RUN: xtc-opt %s -p graph-qdq-to-integer,dce | filecheck %s

// dequantize -> matmul: the product runs on i32 operands (q - zero point),
// the scales (per tensor for the lhs, per column for the rhs) multiply after it.
// CHECK-LABEL: func.func @matmul
// CHECK-DAG:     %[[A:.*]] = graph.cast %a {to = i32} : (tensor<2x4xui8>) -> tensor<2x4xi32>
// CHECK-DAG:     %[[ZA:.*]] = graph.cast %za {to = i32} : (tensor<f32>) -> tensor<i32>
// CHECK-DAG:     %[[SA:.*]] = graph.sub %[[A]], %[[ZA]] : (tensor<2x4xi32>, tensor<i32>) -> tensor<2x4xi32>
// CHECK-DAG:     %[[B:.*]] = graph.cast %b {to = i32} : (tensor<4x3xi8>) -> tensor<4x3xi32>
// CHECK-DAG:     %[[S:.*]] = graph.mul %sa, %sb : (tensor<f32>, tensor<1x3xf32>) -> tensor<1x3xf32>
// CHECK:         %[[P:.*]] = graph.matmul %[[SA]], %[[B]] : (tensor<2x4xi32>, tensor<4x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %[[F:.*]] = graph.cast %[[P]] {to = f32} : (tensor<2x3xi32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.mul %[[F]], %[[S]] : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @matmul(%a: tensor<2x4xui8>, %b: tensor<4x3xi8>) -> tensor<2x3xf32> {
  %za = graph.constant dense<128.0> : tensor<f32>
  %sa = graph.constant dense<0.5> : tensor<f32>
  %sb = graph.constant dense<[[0.25, 0.5, 2.0]]> : tensor<1x3xf32>
  %af = graph.cast %a {to = f32} : (tensor<2x4xui8>) -> tensor<2x4xf32>
  %as = graph.sub %af, %za : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %ad = graph.mul %as, %sa : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %bf = graph.cast %b {to = f32} : (tensor<4x3xi8>) -> tensor<4x3xf32>
  %bd = graph.mul %bf, %sb : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  %y = graph.matmul %ad, %bd : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// dequantize -> conv2d with a per-output-channel weight scale: i32 conv2d,
// the channel scales reshaped to broadcast over N×O×H×W.
// CHECK-LABEL: func.func @conv
// CHECK:         %[[C:.*]] = graph.conv2d %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xi32>, tensor<3x2x3x3xi32>) -> tensor<1x3x4x4xi32>
// CHECK-NEXT:    %[[F:.*]] = graph.cast %[[C]] {to = f32}
// CHECK-NEXT:    %[[Y:.*]] = graph.mul %[[F]], %{{.*}} : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @conv(%x: tensor<1x2x4x4xi8>, %w: tensor<3x2x3x3xi8>) -> tensor<1x3x4x4xf32> {
  %sx = graph.constant dense<0.5> : tensor<f32>
  %sw = graph.constant dense<[[[[0.25]]], [[[0.5]]], [[[2.0]]]]> : tensor<3x1x1x1xf32>
  %xf = graph.cast %x {to = f32} : (tensor<1x2x4x4xi8>) -> tensor<1x2x4x4xf32>
  %xd = graph.mul %xf, %sx : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %wf = graph.cast %w {to = f32} : (tensor<3x2x3x3xi8>) -> tensor<3x2x3x3xf32>
  %wd = graph.mul %wf, %sw : (tensor<3x2x3x3xf32>, tensor<3x1x1x1xf32>) -> tensor<3x2x3x3xf32>
  %y = graph.conv2d %xd, %wd {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}

// A zero point that is not a whole number is no dequantize: nothing changes.
// CHECK-LABEL: func.func @fractional_zero_point
// CHECK:         graph.matmul %{{.*}}, %{{.*}} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT:     i32
func.func @fractional_zero_point(%a: tensor<2x4xui8>, %b: tensor<4x3xi8>) -> tensor<2x3xf32> {
  %za = graph.constant dense<0.5> : tensor<f32>
  %sa = graph.constant dense<0.5> : tensor<f32>
  %af = graph.cast %a {to = f32} : (tensor<2x4xui8>) -> tensor<2x4xf32>
  %as = graph.sub %af, %za : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %ad = graph.mul %as, %sa : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %bf = graph.cast %b {to = f32} : (tensor<4x3xi8>) -> tensor<4x3xf32>
  %bd = graph.mul %bf, %sa : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %y = graph.matmul %ad, %bd : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// A scale that varies along the rows of the rhs does not factor out of the sum.
// CHECK-LABEL: func.func @rhs_scale_per_row
// CHECK:         graph.matmul %{{.*}}, %{{.*}} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
func.func @rhs_scale_per_row(%a: tensor<2x4xui8>, %b: tensor<4x3xi8>) -> tensor<2x3xf32> {
  %sa = graph.constant dense<0.5> : tensor<f32>
  %sb = graph.constant dense<[[0.25], [0.5], [1.0], [2.0]]> : tensor<4x1xf32>
  %af = graph.cast %a {to = f32} : (tensor<2x4xui8>) -> tensor<2x4xf32>
  %ad = graph.mul %af, %sa : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %bf = graph.cast %b {to = f32} : (tensor<4x3xi8>) -> tensor<4x3xf32>
  %bd = graph.mul %bf, %sb : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  %y = graph.matmul %ad, %bd : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// u8 data by a constant i8 weight: the packed u8 x i8 product as a 1x1
// conv2d_u8s8 over the 6 flattened rows (K 6 padded to 8, N 5 to 16),
// its NHWC output read as rows×columns, the padded columns sliced off, minus za · Σ_k w[k, n].
// CHECK-LABEL: func.func @matmul_u8s8
// CHECK:         %[[R:.*]] = graph.reshape %a {shape = array<i64: 1, 1, 6, 6>} : (tensor<2x3x6xui8>) -> tensor<1x1x6x6xui8>
// CHECK-NEXT:    %[[P:.*]] = graph.pad %[[R]] {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 2>} : (tensor<1x1x6x6xui8>) -> tensor<1x1x6x8xui8>
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense_resource<weight_u8s8> : tensor<1x2x1x1x16x4xi8>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d_u8s8 %[[P]], %[[W]] : (tensor<1x1x6x8xui8>, tensor<1x2x1x1x16x4xi8>) -> tensor<1x1x6x16xi32>
// CHECK-NEXT:    %[[T:.*]] = graph.reshape %[[C]] {shape = array<i64: 6, 16>} : (tensor<1x1x6x16xi32>) -> tensor<6x16xi32>
// CHECK-NEXT:    %[[S:.*]] = graph.slice %[[T]] {starts = array<i64: 0>, ends = array<i64: 5>, axes = array<i64: 1>} : (tensor<6x16xi32>) -> tensor<6x5xi32>
// CHECK-NEXT:    %[[Z:.*]] = graph.constant dense<[-15744, 1024, 2304, 3072, 19456]> : tensor<5xi32>
// CHECK-NEXT:    %[[D:.*]] = graph.sub %[[S]], %[[Z]] : (tensor<6x5xi32>, tensor<5xi32>) -> tensor<6x5xi32>
// CHECK:         %[[B:.*]] = graph.reshape %[[D]] {shape = array<i64: 2, 3, 5>} : (tensor<6x5xi32>) -> tensor<2x3x5xi32>
// CHECK-NEXT:    %[[F:.*]] = graph.cast %[[B]] {to = f32}
// CHECK-NEXT:    %[[Y:.*]] = graph.mul %[[F]], %{{.*}} : (tensor<2x3x5xf32>, tensor<1x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @matmul_u8s8(%a: tensor<2x3x6xui8>) -> tensor<2x3x5xf32> {
  %za = graph.constant dense<128.0> : tensor<f32>
  %sa = graph.constant dense<0.5> : tensor<f32>
  %b = graph.constant dense<[[1, -2, 3, 4, 5], [1, 2, 3, 4, 5], [-128, 2, 3, 4, 127], [1, 2, 3, 4, 5], [1, 2, 3, 4, 5], [1, 2, 3, 4, 5]]> : tensor<6x5xi8>
  %sb = graph.constant dense<[[0.25, 0.5, 2.0, 1.0, 1.0]]> : tensor<1x5xf32>
  %af = graph.cast %a {to = f32} : (tensor<2x3x6xui8>) -> tensor<2x3x6xf32>
  %as = graph.sub %af, %za : (tensor<2x3x6xf32>, tensor<f32>) -> tensor<2x3x6xf32>
  %ad = graph.mul %as, %sa : (tensor<2x3x6xf32>, tensor<f32>) -> tensor<2x3x6xf32>
  %bf = graph.cast %b {to = f32} : (tensor<6x5xi8>) -> tensor<6x5xf32>
  %bd = graph.mul %bf, %sb : (tensor<6x5xf32>, tensor<1x5xf32>) -> tensor<6x5xf32>
  %y = graph.matmul %ad, %bd : (tensor<2x3x6xf32>, tensor<6x5xf32>) -> tensor<2x3x5xf32>
  func.return %y : tensor<2x3x5xf32>
}

// dequantize -> conv2d of u8 data by a symmetric i8 weight: conv2d_u8s8 on
// the data padded with its zero point (channels 3 to 4) and made NHWC, minus
// zx · Σ w per output channel, its NHWC output transposed back to NCHW.
// CHECK-LABEL: func.func @conv_u8s8
// CHECK:         %[[P:.*]] = graph.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 1, 1, 1>, value = 1.280000e+02 : f32} : (tensor<1x3x4x4xui8>) -> tensor<1x4x6x6xui8>
// CHECK-NEXT:    %[[N:.*]] = graph.transpose %[[P]] {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x6x6xui8>) -> tensor<1x6x6x4xui8>
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense_resource<{{.*}}> : tensor<1x1x3x3x16x4xi8>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d_u8s8 %[[N]], %[[W]] : (tensor<1x6x6x4xui8>, tensor<1x1x3x3x16x4xi8>) -> tensor<1x4x4x16xi32>
// CHECK-NEXT:    %[[Z:.*]] = graph.constant dense<10368> : tensor<16xi32>
// CHECK-NEXT:    %[[D:.*]] = graph.sub %[[C]], %[[Z]] : (tensor<1x4x4x16xi32>, tensor<16xi32>) -> tensor<1x4x4x16xi32>
// CHECK:         %[[T:.*]] = graph.transpose %[[D]] {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x16xi32>) -> tensor<1x16x4x4xi32>
// CHECK-NEXT:    %[[F:.*]] = graph.cast %[[T]] {to = f32}
// CHECK:         graph.mul %[[F]], %{{.*}} : (tensor<1x16x4x4xf32>, tensor<16x1x1xf32>) -> tensor<1x16x4x4xf32>
func.func @conv_u8s8(%x: tensor<1x3x4x4xui8>) -> tensor<1x16x4x4xf32> {
  %zx = graph.constant dense<128.0> : tensor<f32>
  %sx = graph.constant dense<0.5> : tensor<f32>
  %w = graph.constant dense<3> : tensor<16x3x3x3xi8>
  %sw = graph.constant dense<0.25> : tensor<16xf32>
  %xf = graph.cast %x {to = f32} : (tensor<1x3x4x4xui8>) -> tensor<1x3x4x4xf32>
  %xs = graph.sub %xf, %zx : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3x4x4xf32>
  %xd = graph.mul %xs, %sx : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3x4x4xf32>
  %wf = graph.cast %w {to = f32} : (tensor<16x3x3x3xi8>) -> tensor<16x3x3x3xf32>
  %sw4 = graph.reshape %sw {shape = array<i64: 16, 1, 1, 1>} : (tensor<16xf32>) -> tensor<16x1x1x1xf32>
  %wd = graph.mul %wf, %sw4 : (tensor<16x3x3x3xf32>, tensor<16x1x1x1xf32>) -> tensor<16x3x3x3xf32>
  %y = graph.conv2d %xd, %wd {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x4x4xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}
