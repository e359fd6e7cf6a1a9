// RUN: xtc-opt %s -p graph-fold-constants,dce | filecheck %s

// A graph.if on a constant condition becomes the ops of the branch it takes.
// CHECK-LABEL: func.func @constant_condition
func.func @constant_condition(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[B:.*]] = graph.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: func.return %[[B]] : tensor<4xf32>
  %c = graph.constant dense<false> : tensor<1xi1>
  %r = graph.if %c : tensor<1xi1> -> (tensor<4xf32>) {
    %a = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %a : tensor<4xf32>
  } else {
    %b = graph.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %b : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// A condition known at run time keeps the graph.if; ops on constants inside
// a branch fold there.
// CHECK-LABEL: func.func @run_time_condition
func.func @run_time_condition(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: graph.if %c
  // CHECK-NEXT:   %[[K:.*]] = graph.constant dense<2.000000e+00> : tensor<f32>
  // CHECK-NEXT:   graph.mul %x, %[[K]]
  // CHECK:      } else {
  %r = graph.if %c : tensor<i1> -> (tensor<4xf32>) {
    %one = graph.constant dense<1.0> : tensor<f32>
    %two = graph.add %one, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %a = graph.mul %x, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    graph.yield %a : tensor<4xf32>
  } else {
    graph.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// A graph.loop that a constant trip count of 0 (or a constant false
// condition) keeps from running is its carried operands.
// CHECK-LABEL: func.func @never_runs
func.func @never_runs(%c: tensor<i1>, %m: tensor<i64>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK-NEXT: func.return %x, %x : tensor<4xf32>, tensor<4xf32>
  %zero = graph.constant dense<0> : tensor<i64>
  %r = graph.loop %zero, %c, (%x) : tensor<i64>, tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %y: tensor<4xf32>):
    %d = graph.add %y, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    graph.yield %cc, %d : tensor<i1>, tensor<4xf32>
  }
  %false = graph.constant dense<false> : tensor<i1>
  %s = graph.loop %m, %false, (%x) : tensor<i64>, tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %y: tensor<4xf32>):
    %d = graph.add %y, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    graph.yield %cc, %d : tensor<i1>, tensor<4xf32>
  }
  func.return %r, %s : tensor<4xf32>, tensor<4xf32>
}

// A run-time trip count and condition keep the loop.
// CHECK-LABEL: func.func @may_run
func.func @may_run(%c: tensor<i1>, %m: tensor<i64>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: graph.loop %m, %c, (%x)
  %r = graph.loop %m, %c, (%x) : tensor<i64>, tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %y: tensor<4xf32>):
    %d = graph.add %y, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    graph.yield %cc, %d : tensor<i1>, tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
