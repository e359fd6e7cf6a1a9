// RUN: %roundtrip | filecheck %s
// RUN: %generic-roundtrip | filecheck %s

// Constants: small ones inline, weights as dense_resource blobs kept in the
// file's dialect_resources section, as MLIR prints them.
// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<3xf32>, tensor<2x2xi64>, tensor<4xi1>, tensor<2x3xf32>) {
  // CHECK: graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
  %a = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  // CHECK: graph.constant dense<7> : tensor<2x2xi64>
  %b = graph.constant dense<7> : tensor<2x2xi64>
  // CHECK: graph.constant dense<[true, false, true, true]> : tensor<4xi1>
  %c = graph.constant dense<[true, false, true, true]> : tensor<4xi1>
  // CHECK: graph.constant dense_resource<weight> : tensor<2x3xf32>
  %d = graph.constant dense_resource<weight> : tensor<2x3xf32>
  func.return %a, %b, %c, %d : tensor<3xf32>, tensor<2x2xi64>, tensor<4xi1>, tensor<2x3xf32>
}

// CHECK: dialect_resources
// CHECK-NEXT: builtin
// CHECK-NEXT: weight: "0x040000000000803F0000004000004040000080400000A0400000C040"
{-#
  dialect_resources: {
    builtin: {
      weight: "0x040000000000803F0000004000004040000080400000A0400000C040"
    }
  }
#-}
