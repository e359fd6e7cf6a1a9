// RUN: xtc-opt %s -p convert-graph-to-te | filecheck %s

// The graph ops inside graph.if and graph.loop regions become kernel calls
// where they are; the region ops stay.
// CHECK-LABEL: func.func @main(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = graph.if %c : tensor<i1> -> (tensor<4xf32>) {
// CHECK-NEXT:      %a = func.call @relu_0(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:      graph.yield %a : tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %b = func.call @neg_0(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:      graph.yield %b : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-LABEL: func.func @loop(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = graph.loop %m, %c, (%x) : tensor<i64>, tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
// CHECK-NEXT:    ^{{.*}}(%i: tensor<i64>, %cc: tensor<i1>, %y: tensor<4xf32>):
// CHECK-NEXT:      %a = func.call @add_0(%y, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:      graph.yield %cc, %a : tensor<i1>, tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-LABEL: func.func private @relu_0(
// CHECK-LABEL: func.func private @neg_0(
// CHECK-LABEL: func.func private @add_0(

func.func @main(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.if %c : tensor<i1> -> (tensor<4xf32>) {
    %a = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %a : tensor<4xf32>
  } else {
    %b = graph.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %b : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
func.func @loop(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.loop %m, %c, (%x) : tensor<i64>, tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %y: tensor<4xf32>):
    %a = graph.add %y, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    graph.yield %cc, %a : tensor<i1>, tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
