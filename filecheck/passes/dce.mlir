// xDSL's dce works on graph ops: unused Pure ops (and constants) are removed.
// RUN: xtc-opt %s -p dce | filecheck %s

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[R:.*]] = graph.relu %x
// CHECK-NEXT:    func.return %[[R]]
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = graph.constant dense<2.0> : tensor<3xf32>
  %dead = graph.add %x, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %dead2 = graph.exp %dead : (tensor<3xf32>) -> tensor<3xf32>
  %r = graph.relu %x : (tensor<3xf32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}
