// xDSL's cse works on graph ops: they are Pure, so equal ops on equal operands merge.
// RUN: xtc-opt %s -p cse | filecheck %s

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<2.000000e+00> : tensor<3xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.add %x, %[[C]]
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[A]]
// CHECK-NEXT:    %[[M:.*]] = graph.mul %[[R]], %[[R]]
// CHECK-NEXT:    %[[S:.*]] = graph.sub %[[A]], %[[C]]
// CHECK-NEXT:    func.return %[[M]], %[[S]]
func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %c1 = graph.constant dense<2.0> : tensor<3xf32>
  %c2 = graph.constant dense<2.0> : tensor<3xf32>
  %a1 = graph.add %x, %c1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %a2 = graph.add %x, %c2 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %r1 = graph.relu %a1 : (tensor<3xf32>) -> tensor<3xf32>
  %r2 = graph.relu %a2 : (tensor<3xf32>) -> tensor<3xf32>
  %m = graph.mul %r1, %r2 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %s = graph.sub %a2, %c1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %m, %s : tensor<3xf32>, tensor<3xf32>
}
