// RUN: xtc-opt %s -p graph-sink-transpose,dce | filecheck %s

// A u8 conv's NHWC output transposed to NCHW, its epilogue (a per-channel
// constant, a bias_add along the channels, a scalar), a pad, and the next
// conv's NCHW-to-NHWC transpose: the epilogue and pad run on NHWC, the two
// transposes cancel.
// CHECK-LABEL: func.func @cancel_through_epilogue_and_pad
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[F:.*]] = graph.cast %x {to = f32} : (tensor<1x2x3x4xi32>) -> tensor<1x2x3x4xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]]]> : tensor<1x1x1x4xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.mul %[[F]], %[[C]] : (tensor<1x2x3x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x3x4xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.bias_add %[[M]], %b {axis = 3 : i64} : (tensor<1x2x3x4xf32>, tensor<4xf32>) -> tensor<1x2x3x4xf32>
// CHECK-NEXT:    %[[D:.*]] = graph.div %[[B]], %[[S]] : (tensor<1x2x3x4xf32>, tensor<f32>) -> tensor<1x2x3x4xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.pad %[[D]] {pads = array<i64: 0, 1, 1, 0, 0, 1, 1, 0>, value = 0.000000e+00 : f32} : (tensor<1x2x3x4xf32>) -> tensor<1x4x5x4xf32>
// CHECK-NEXT:    func.return %[[P]] : tensor<1x4x5x4xf32>
func.func @cancel_through_epilogue_and_pad(%x: tensor<1x2x3x4xi32>, %b: tensor<4xf32>) -> tensor<1x4x5x4xf32> {
  %s = graph.constant dense<2.0> : tensor<f32>
  %c = graph.constant dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]> : tensor<4x1x1xf32>
  %t = graph.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x2x3x4xi32>) -> tensor<1x4x2x3xi32>
  %f = graph.cast %t {to = f32} : (tensor<1x4x2x3xi32>) -> tensor<1x4x2x3xf32>
  %m = graph.mul %f, %c : (tensor<1x4x2x3xf32>, tensor<4x1x1xf32>) -> tensor<1x4x2x3xf32>
  %bb = graph.bias_add %m, %b {axis = 1 : i64} : (tensor<1x4x2x3xf32>, tensor<4xf32>) -> tensor<1x4x2x3xf32>
  %d = graph.div %bb, %s : (tensor<1x4x2x3xf32>, tensor<f32>) -> tensor<1x4x2x3xf32>
  %p = graph.pad %d {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 0.0 : f32} : (tensor<1x4x2x3xf32>) -> tensor<1x4x4x5xf32>
  %n = graph.transpose %p {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x4x5xf32>) -> tensor<1x4x5x4xf32>
  func.return %n : tensor<1x4x5x4xf32>
}

// Two users (a residual add of two transposed values, and the next
// transpose): both move, the add runs on the untransposed values.
// CHECK-LABEL: func.func @residual
// CHECK-NEXT:    %[[A:.*]] = graph.add %x, %y : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %[[A]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    func.return %[[T]], %x
func.func @residual(%x: tensor<1x2x3x4xf32>, %y: tensor<1x2x3x4xf32>) -> (tensor<1x4x2x3xf32>, tensor<1x2x3x4xf32>) {
  %tx = graph.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %ty = graph.transpose %y {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %a = graph.add %tx, %ty : (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32>
  %back = graph.transpose %tx {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x2x3xf32>) -> tensor<1x2x3x4xf32>
  func.return %a, %back : tensor<1x4x2x3xf32>, tensor<1x2x3x4xf32>
}

// A user it can't move below (a pool; an add of a non-constant value not
// transposed alike) keeps the transpose where it is, for every user.
// CHECK-LABEL: func.func @stays
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %x {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[T]]
// CHECK-NEXT:    %[[P:.*]] = graph.max_pool2d %[[T]]
// CHECK:         %[[U:.*]] = graph.transpose %y {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    %[[A:.*]] = graph.add %[[U]], %z
// CHECK-NEXT:    func.return %[[R]], %[[P]], %[[A]]
func.func @stays(%x: tensor<1x2x2x4xf32>, %y: tensor<1x2x2x4xf32>, %z: tensor<1x4x2x2xf32>) -> (tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>, tensor<1x4x2x2xf32>) {
  %t = graph.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x2x2x4xf32>) -> tensor<1x4x2x2xf32>
  %r = graph.relu %t : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %p = graph.max_pool2d %t {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x2x2xf32>) -> tensor<1x4x1x1xf32>
  %u = graph.transpose %y {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x2x2x4xf32>) -> tensor<1x4x2x2xf32>
  %a = graph.add %u, %z : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  func.return %r, %p, %a : tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>, tensor<1x4x2x2xf32>
}

// Two transposes that don't undo each other compose into one.
// CHECK-LABEL: func.func @compose
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @compose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %a = graph.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %b = graph.transpose %a {perm = array<i64: 1, 2, 0>} : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  func.return %b : tensor<4x2x3xf32>
}
