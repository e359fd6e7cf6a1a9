// RUN: xtc-opt %s -p graph-fuse-ops | filecheck %s

// The ops of each graph.if branch and graph.loop body fuse among themselves,
// never with the ops around them.
// CHECK-LABEL: func.func @main
func.func @main(%c: tensor<i1>, %m: tensor<i64>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[E:.*]] = graph.exp %x
  // CHECK-NEXT: %[[R:.*]] = graph.if %c
  // CHECK-NEXT:   %[[T:.*]] = func.call @fused_relu_neg_0(%[[E]])
  // CHECK-NEXT:   graph.yield %[[T]]
  // CHECK-NEXT: } else {
  // CHECK-NEXT:   %[[F:.*]] = graph.sqrt %[[E]]
  // CHECK-NEXT:   graph.yield %[[F]]
  // CHECK-NEXT: }
  // CHECK-NEXT: %[[L:.*]] = graph.loop %m, %c, (%[[R]])
  // CHECK-NEXT: ^{{.*}}(%{{.*}}: tensor<i64>, %[[CC:.*]]: tensor<i1>, %[[Y:.*]]: tensor<4xf32>):
  // CHECK-NEXT:   %[[D:.*]] = func.call @fused_add_tanh_1(%[[Y]], %[[E]])
  // CHECK-NEXT:   graph.yield %[[CC]], %[[D]]
  // CHECK-NEXT: }
  // CHECK-NEXT: func.return %[[L]]
  %e = graph.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %r = graph.if %c : tensor<i1> -> (tensor<4xf32>) {
    %a = graph.relu %e : (tensor<4xf32>) -> tensor<4xf32>
    %b = graph.neg %a : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %b : tensor<4xf32>
  } else {
    %s = graph.sqrt %e : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %s : tensor<4xf32>
  }
  %l = graph.loop %m, %c, (%r) : tensor<i64>, tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %y: tensor<4xf32>):
    %d = graph.add %y, %e : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t = graph.tanh %d : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %cc, %t : tensor<i1>, tensor<4xf32>
  }
  func.return %l : tensor<4xf32>
}
// CHECK-LABEL: func.func private @fused_relu_neg_0(
// CHECK-LABEL: func.func private @fused_add_tanh_1(
