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
