// RUN: xtc-opt %s -p graph-sink-slice,dce | filecheck %s

// What graph-pad-conv-channels leaves: the slice moves past the bias, the
// relu and the global pool, the bias padded with a zero.
// CHECK-LABEL: func.func @conv_epilogue
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %w
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00, 9.000000e+00, 1.000000e+01, 0.000000e+00]> : tensor<11xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.bias_add %[[C]], %[[B]] {axis = 1 : i64} : (tensor<1x11x3x3xf32>, tensor<11xf32>) -> tensor<1x11x3x3xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[A]] : (tensor<1x11x3x3xf32>) -> tensor<1x11x3x3xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.global_avg_pool2d %[[R]] : (tensor<1x11x3x3xf32>) -> tensor<1x11x1x1xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.slice %[[P]] {starts = array<i64: 0>, ends = array<i64: 10>, axes = array<i64: 1>} : (tensor<1x11x1x1xf32>) -> tensor<1x10x1x1xf32>
// CHECK-NEXT:    func.return %[[S]]
func.func @conv_epilogue(%x: tensor<1x1x3x3xf32>, %w: tensor<11x1x1x1xf32>) -> tensor<1x10x1x1xf32> {
  %b = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]> : tensor<10xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<11x1x1x1xf32>) -> tensor<1x11x3x3xf32>
  %s = graph.slice %c {starts = array<i64: 0>, ends = array<i64: 10>, axes = array<i64: 1>} : (tensor<1x11x3x3xf32>) -> tensor<1x10x3x3xf32>
  %a = graph.bias_add %s, %b {axis = 1 : i64} : (tensor<1x10x3x3xf32>, tensor<10xf32>) -> tensor<1x10x3x3xf32>
  %r = graph.relu %a : (tensor<1x10x3x3xf32>) -> tensor<1x10x3x3xf32>
  %p = graph.global_avg_pool2d %r : (tensor<1x10x3x3xf32>) -> tensor<1x10x1x1xf32>
  func.return %p : tensor<1x10x1x1xf32>
}

// A slice that does not start at 0 pads the bias on both sides.
// CHECK-LABEL: func.func @bias_inside
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00, 9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01, 1.300000e+01, 1.400000e+01, 0.000000e+00]> : tensor<16xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.bias_add %x, %[[B]] {axis = 0 : i64} : (tensor<16x2xf32>, tensor<16xf32>) -> tensor<16x2xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.slice %[[A]] {starts = array<i64: 1>, ends = array<i64: 15>, axes = array<i64: 0>} : (tensor<16x2xf32>) -> tensor<14x2xf32>
// CHECK-NEXT:    func.return %[[S]]
func.func @bias_inside(%x: tensor<16x2xf32>) -> tensor<14x2xf32> {
  %b = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0]> : tensor<14xf32>
  %s = graph.slice %x {starts = array<i64: 1>, ends = array<i64: -1>, axes = array<i64: 0>} : (tensor<16x2xf32>) -> tensor<14x2xf32>
  %a = graph.bias_add %s, %b {axis = 0 : i64} : (tensor<14x2xf32>, tensor<14xf32>) -> tensor<14x2xf32>
  func.return %a : tensor<14x2xf32>
}

// Kept: a slice that drops more than 1/8 of its input, one with another
// user, one with a step of 2, a bias along another axis than the slice's,
// a bias that is no constant, a global pool over a sliced H.
// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    graph.slice %x
// CHECK-NEXT:    graph.relu
// CHECK-NEXT:    graph.slice %x
// CHECK-NEXT:    graph.relu
// CHECK-NEXT:    graph.slice %x
// CHECK-NEXT:    graph.relu
// CHECK-NEXT:    graph.slice %x
// CHECK-NEXT:    graph.bias_add
// CHECK-NEXT:    graph.slice %x
// CHECK-NEXT:    graph.bias_add
// CHECK-NEXT:    graph.slice %x
// CHECK-NEXT:    graph.global_max_pool2d
// CHECK-NEXT:    func.return
func.func @kept(%x: tensor<1x10x10x10xf32>, %v: tensor<9xf32>) -> (tensor<1x5x10x10xf32>, tensor<1x9x10x10xf32>, tensor<1x9x10x10xf32>, tensor<1x5x10x10xf32>, tensor<1x10x9x10xf32>, tensor<1x9x10x10xf32>, tensor<1x10x1x1xf32>) {
  %b = graph.constant dense<1.0> : tensor<10xf32>
  %s1 = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 5>, axes = array<i64: 1>} : (tensor<1x10x10x10xf32>) -> tensor<1x5x10x10xf32>
  %r1 = graph.relu %s1 : (tensor<1x5x10x10xf32>) -> tensor<1x5x10x10xf32>
  %s2 = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 9>, axes = array<i64: 1>} : (tensor<1x10x10x10xf32>) -> tensor<1x9x10x10xf32>
  %r2 = graph.relu %s2 : (tensor<1x9x10x10xf32>) -> tensor<1x9x10x10xf32>
  %s3 = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 10>, axes = array<i64: 1>, steps = array<i64: 2>} : (tensor<1x10x10x10xf32>) -> tensor<1x5x10x10xf32>
  %r3 = graph.relu %s3 : (tensor<1x5x10x10xf32>) -> tensor<1x5x10x10xf32>
  %s4 = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 9>, axes = array<i64: 2>} : (tensor<1x10x10x10xf32>) -> tensor<1x10x9x10xf32>
  %a4 = graph.bias_add %s4, %b {axis = 1 : i64} : (tensor<1x10x9x10xf32>, tensor<10xf32>) -> tensor<1x10x9x10xf32>
  %s5 = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 9>, axes = array<i64: 1>} : (tensor<1x10x10x10xf32>) -> tensor<1x9x10x10xf32>
  %a5 = graph.bias_add %s5, %v {axis = 1 : i64} : (tensor<1x9x10x10xf32>, tensor<9xf32>) -> tensor<1x9x10x10xf32>
  %s6 = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 9>, axes = array<i64: 2>} : (tensor<1x10x10x10xf32>) -> tensor<1x10x9x10xf32>
  %p6 = graph.global_max_pool2d %s6 : (tensor<1x10x9x10xf32>) -> tensor<1x10x1x1xf32>
  func.return %r1, %r2, %s2, %r3, %a4, %a5, %p6 : tensor<1x5x10x10xf32>, tensor<1x9x10x10xf32>, tensor<1x9x10x10xf32>, tensor<1x5x10x10xf32>, tensor<1x10x9x10xf32>, tensor<1x9x10x10xf32>, tensor<1x10x1x1xf32>
}
