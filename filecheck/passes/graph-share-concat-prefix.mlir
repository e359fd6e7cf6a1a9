// RUN: xtc-opt %s -p graph-share-concat-prefix | filecheck %s

// DenseNet's dense block: each concat reads the one before it and adds one
// feature map; the block's last concat too. The first concat stays.
// CHECK-LABEL: func.func @dense_block
// CHECK-NEXT:    %[[C2:.*]] = graph.concat %x0, %f1 {axis = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x3x3x3xf32>
// CHECK-NEXT:    %[[N2:.*]] = graph.relu %[[C2]]
// CHECK-NEXT:    %[[C3:.*]] = graph.concat %[[C2]], %f2 {axis = 1 : i64} : (tensor<1x3x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:    %[[N3:.*]] = graph.relu %[[C3]]
// CHECK-NEXT:    %[[C4:.*]] = graph.concat %[[C3]], %f3 {axis = 1 : i64} : (tensor<1x4x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x5x3x3xf32>
// CHECK-NEXT:    func.return %[[N2]], %[[N3]], %[[C4]]
func.func @dense_block(%x0: tensor<1x2x3x3xf32>, %f1: tensor<1x1x3x3xf32>, %f2: tensor<1x1x3x3xf32>, %f3: tensor<1x1x3x3xf32>) -> (tensor<1x3x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x5x3x3xf32>) {
  %c2 = graph.concat %x0, %f1 {axis = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x3x3x3xf32>
  %n2 = graph.relu %c2 : (tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %c3 = graph.concat %x0, %f1, %f2 {axis = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  %n3 = graph.relu %c3 : (tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %c4 = graph.concat %x0, %f1, %f2, %f3 {axis = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x5x3x3xf32>
  func.return %n2, %n3, %c4 : tensor<1x3x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x5x3x3xf32>
}

// The longest earlier prefix is the one read, and the axis may be written
// negative: -1 and 1 are the same axis of a rank-2 tensor.
// CHECK-LABEL: func.func @longest_prefix
// CHECK-NEXT:    %[[AB:.*]] = graph.concat %a, %b {axis = 1 : i64}
// CHECK-NEXT:    %[[ABC:.*]] = graph.concat %[[AB]], %c {axis = -1 : i64}
// CHECK-NEXT:    %[[ABCD:.*]] = graph.concat %[[ABC]], %d {axis = 1 : i64}
// CHECK-NEXT:    func.return %[[AB]], %[[ABC]], %[[ABCD]]
func.func @longest_prefix(%a: tensor<2x1xf32>, %b: tensor<2x1xf32>, %c: tensor<2x1xf32>, %d: tensor<2x1xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x4xf32>) {
  %ab = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  %abc = graph.concat %a, %b, %c {axis = -1 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %abcd = graph.concat %a, %b, %c, %d {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  func.return %ab, %abc, %abcd : tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x4xf32>
}

// Left alone: an earlier concat along another axis, one of a single
// operand, one whose operands are not the first ones (or not in order),
// and one that comes later in the block.
// CHECK-LABEL: func.func @no_prefix
// CHECK-NEXT:    graph.concat %a, %b {axis = 0 : i64}
// CHECK-NEXT:    graph.concat %a {axis = 1 : i64}
// CHECK-NEXT:    graph.concat %b, %c {axis = 1 : i64}
// CHECK-NEXT:    graph.concat %b, %a {axis = 1 : i64}
// CHECK-NEXT:    graph.concat %a, %b, %c {axis = 1 : i64}
// CHECK-NEXT:    graph.concat %a, %b {axis = 1 : i64}
// CHECK-NEXT:    func.return
func.func @no_prefix(%a: tensor<2x1xf32>, %b: tensor<2x1xf32>, %c: tensor<2x1xf32>) -> (tensor<4x1xf32>, tensor<2x1xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x2xf32>) {
  %rows = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<4x1xf32>
  %one = graph.concat %a {axis = 1 : i64} : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %bc = graph.concat %b, %c {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  %ba = graph.concat %b, %a {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  %abc = graph.concat %a, %b, %c {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %ab = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  func.return %rows, %one, %bc, %ba, %abc, %ab : tensor<4x1xf32>, tensor<2x1xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x2xf32>
}
