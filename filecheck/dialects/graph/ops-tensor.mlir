// RUN: %roundtrip | filecheck %s
// RUN: %generic-roundtrip | filecheck %s

// CHECK-LABEL: func.func @reshaping
func.func @reshaping(%a: tensor<2x3x4xf32>, %b: tensor<1x3x1xf32>) -> tensor<24xf32> {
  // CHECK: graph.reshape %{{.*}} {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %0 = graph.reshape %a {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK: graph.transpose %{{.*}} {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %1 = graph.transpose %a {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  // CHECK: graph.transpose %{{.*}} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %2 = graph.transpose %a : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  // CHECK: graph.squeeze %{{.*}} {axes = array<i64: -1>} : (tensor<1x3x1xf32>) -> tensor<1x3xf32>
  %3 = graph.squeeze %b {axes = array<i64: -1>} : (tensor<1x3x1xf32>) -> tensor<1x3xf32>
  // CHECK: graph.squeeze %{{.*}} : (tensor<1x3x1xf32>) -> tensor<3xf32>
  %4 = graph.squeeze %b : (tensor<1x3x1xf32>) -> tensor<3xf32>
  // CHECK: graph.unsqueeze %{{.*}} {axes = array<i64: 0, -1>} : (tensor<3xf32>) -> tensor<1x3x1xf32>
  %5 = graph.unsqueeze %4 {axes = array<i64: 0, -1>} : (tensor<3xf32>) -> tensor<1x3x1xf32>
  // CHECK: graph.flatten %{{.*}} {axis = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %6 = graph.flatten %a {axis = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK: graph.flatten %{{.*}} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %7 = graph.flatten %a : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  // CHECK: graph.broadcast_to %{{.*}} {shape = array<i64: 2, 1, 1>} : (tensor<1x3x1xf32>) -> tensor<2x3x1xf32>
  %8 = graph.broadcast_to %b {shape = array<i64: 2, 1, 1>} : (tensor<1x3x1xf32>) -> tensor<2x3x1xf32>
  // CHECK: graph.tile %{{.*}} {repeats = array<i64: 2, 1, 3>} : (tensor<1x3x1xf32>) -> tensor<2x3x3xf32>
  %9 = graph.tile %b {repeats = array<i64: 2, 1, 3>} : (tensor<1x3x1xf32>) -> tensor<2x3x3xf32>
  %r = graph.reshape %a {shape = array<i64: 24>} : (tensor<2x3x4xf32>) -> tensor<24xf32>
  func.return %r : tensor<24xf32>
}

// CHECK-LABEL: func.func @joining
func.func @joining(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  // CHECK: %[[C:.*]] = graph.concat %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %0 = graph.concat %a, %b {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = graph.split %[[C]] {axis = 1 : i64, sizes = array<i64: 2, 0, 6>} : (tensor<2x8xf32>) -> (tensor<2x2xf32>, tensor<2x0xf32>, tensor<2x6xf32>)
  %1:3 = graph.split %0 {axis = 1 : i64, sizes = array<i64: 2, 0, 6>} : (tensor<2x8xf32>) -> (tensor<2x2xf32>, tensor<2x0xf32>, tensor<2x6xf32>)
  // CHECK: graph.split %{{.*}} {sizes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.split %a {sizes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @slicing
func.func @slicing(%a: tensor<4x6xf32>) -> tensor<4x3xf32> {
  // CHECK: graph.slice %{{.*}} {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, axes = array<i64: 1>, steps = array<i64: -2>} : (tensor<4x6xf32>) -> tensor<4x3xf32>
  %0 = graph.slice %a {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, axes = array<i64: 1>, steps = array<i64: -2>} : (tensor<4x6xf32>) -> tensor<4x3xf32>
  // CHECK: graph.slice %{{.*}} {starts = array<i64: 1, 2>, ends = array<i64: 9223372036854775807, 4>} : (tensor<4x6xf32>) -> tensor<3x2xf32>
  %1 = graph.slice %a {starts = array<i64: 1, 2>, ends = array<i64: 9223372036854775807, 4>} : (tensor<4x6xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @indexing
func.func @indexing(%a: tensor<4x6xf32>, %i: tensor<2x3xi64>, %j: tensor<5xi32>, %u: tensor<2x3xf32>) -> tensor<4x6xf32> {
  // CHECK: graph.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<4x6xf32>, tensor<2x3xi64>) -> tensor<4x2x3xf32>
  %0 = graph.gather %a, %i {axis = 1 : i64} : (tensor<4x6xf32>, tensor<2x3xi64>) -> tensor<4x2x3xf32>
  // CHECK: graph.gather %{{.*}}, %{{.*}} : (tensor<4x6xf32>, tensor<5xi32>) -> tensor<5x6xf32>
  %1 = graph.gather %a, %j : (tensor<4x6xf32>, tensor<5xi32>) -> tensor<5x6xf32>
  // CHECK: graph.gather_elements %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<4x6xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  %2 = graph.gather_elements %a, %i {axis = -1 : i64} : (tensor<4x6xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  // CHECK: graph.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, reduction = "add"} : (tensor<4x6xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<4x6xf32>
  %3 = graph.scatter_elements %a, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<4x6xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<4x6xf32>
  func.return %3 : tensor<4x6xf32>
}

// CHECK-LABEL: func.func @blocks
func.func @blocks(%a: tensor<1x8x2x3xf32>) -> tensor<1x8x2x3xf32> {
  // CHECK: %[[D:.*]] = graph.depth_to_space %{{.*}} {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x8x2x3xf32>) -> tensor<1x2x4x6xf32>
  %0 = graph.depth_to_space %a {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x8x2x3xf32>) -> tensor<1x2x4x6xf32>
  // CHECK: graph.space_to_depth %[[D]] {blocksize = 2 : i64} : (tensor<1x2x4x6xf32>) -> tensor<1x8x2x3xf32>
  %1 = graph.space_to_depth %0 {blocksize = 2 : i64} : (tensor<1x2x4x6xf32>) -> tensor<1x8x2x3xf32>
  func.return %1 : tensor<1x8x2x3xf32>
}

// CHECK-LABEL: func.func @nd_indexing
func.func @nd_indexing(%a: tensor<2x3x4xf32>, %i: tensor<5x2xi64>, %j: tensor<2x5x1xi32>, %u: tensor<5x4xf32>) -> tensor<2x3x4xf32> {
  // CHECK: graph.gather_nd %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<5x2xi64>) -> tensor<5x4xf32>
  %0 = graph.gather_nd %a, %i : (tensor<2x3x4xf32>, tensor<5x2xi64>) -> tensor<5x4xf32>
  // CHECK: graph.gather_nd %{{.*}}, %{{.*}} {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x1xi32>) -> tensor<2x5x4xf32>
  %1 = graph.gather_nd %a, %j {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x1xi32>) -> tensor<2x5x4xf32>
  // CHECK: graph.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} {reduction = "max"} : (tensor<2x3x4xf32>, tensor<5x2xi64>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  %2 = graph.scatter_nd %a, %i, %u {reduction = "max"} : (tensor<2x3x4xf32>, tensor<5x2xi64>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: graph.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<5x2xi64>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  %3 = graph.scatter_nd %2, %i, %0 : (tensor<2x3x4xf32>, tensor<5x2xi64>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  func.return %3 : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @space_to_depth_crd
func.func @space_to_depth_crd(%a: tensor<1x2x4x6xf32>) -> tensor<1x8x2x3xf32> {
  // CHECK: graph.space_to_depth %{{.*}} {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x2x4x6xf32>) -> tensor<1x8x2x3xf32>
  %0 = graph.space_to_depth %a {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x2x4x6xf32>) -> tensor<1x8x2x3xf32>
  func.return %0 : tensor<1x8x2x3xf32>
}
