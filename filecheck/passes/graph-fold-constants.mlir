// RUN: xtc-opt %s -p graph-fold-constants,dce | filecheck %s

// A chain of ops on constants folds into one constant; the op on the argument stays.
// CHECK-LABEL: func.func @chain
func.func @chain(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %[[C:.*]] = graph.constant dense<{{\[}}[1.000000e+00, 3.000000e+00, 5.000000e+00], [7.000000e+00, 9.000000e+00, 1.100000e+01]]> : tensor<2x3xf32>
  // CHECK-NEXT: %[[R:.*]] = graph.add %x, %[[C]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: func.return %[[R]] : tensor<2x3xf32>
  %a = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = graph.constant dense<-1.0> : tensor<3xf32>
  %c = graph.relu %b : (tensor<3xf32>) -> tensor<3xf32>
  %d = graph.add %a, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %e = graph.add %d, %d : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %one = graph.constant dense<-1.0> : tensor<2x3xf32>
  %f = graph.add %e, %one : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %g = graph.add %x, %f : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %g : tensor<2x3xf32>
}

// Large results become dense_resource blobs.
// CHECK-LABEL: func.func @blob
func.func @blob() -> tensor<4x8xf32> {
  // CHECK-NEXT: %{{.*}} = graph.constant dense_resource<add_folded{{.*}}> : tensor<4x8xf32>
  %a = graph.constant dense<1.5> : tensor<4x8xf32>
  %b = graph.add %a, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %b : tensor<4x8xf32>
}

// An op that faults on its constants (an index out of range, an integer
// division by zero) is left to fail at run time, as without the pass.
// CHECK-LABEL: func.func @faulting
// CHECK:         %[[ROWS:.*]] = graph.gather %{{.*}}, %{{.*}} : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
// CHECK:         %[[Q:.*]] = graph.div %{{.*}}, %{{.*}} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
// CHECK:         func.return %[[ROWS]], %[[Q]]
func.func @faulting() -> (tensor<2x2xf32>, tensor<2xi32>) {
  %data = graph.constant dense<1.0> : tensor<3x2xf32>
  %idx = graph.constant dense<[0, 3]> : tensor<2xi64>
  %rows = graph.gather %data, %idx : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  %a = graph.constant dense<[7, 8]> : tensor<2xi32>
  %b = graph.constant dense<[1, 0]> : tensor<2xi32>
  %q = graph.div %a, %b : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  func.return %rows, %q : tensor<2x2xf32>, tensor<2xi32>
}

// CHECK: dialect_resources
// CHECK: add_folded{{.*}}: "0x04000000{{(00004040)+}}"
