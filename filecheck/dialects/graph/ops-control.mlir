// RUN: %roundtrip | filecheck %s
// RUN: %generic-roundtrip | filecheck %s

// graph.if: both branches yield the op's result types.
// CHECK-LABEL: func.func @pick
func.func @pick(%c: tensor<1xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[R:.*]] = graph.if %c : tensor<1xi1> -> (tensor<4xf32>) {
  // CHECK-NEXT:   %[[A:.*]] = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT:   graph.yield %[[A]] : tensor<4xf32>
  // CHECK-NEXT: } else {
  // CHECK-NEXT:   graph.yield %x : tensor<4xf32>
  // CHECK-NEXT: }
  // CHECK-NEXT: func.return %[[R]] : tensor<4xf32>
  %r = graph.if %c : tensor<1xi1> -> (tensor<4xf32>) {
    %a = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %a : tensor<4xf32>
  } else {
    graph.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// graph.loop: the body takes (iteration, condition, carried values) and
// yields (condition, carried values).
// CHECK-LABEL: func.func @repeat
func.func @repeat(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[R:.*]] = graph.loop %m, %c, (%x) : tensor<i64>, tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
  // CHECK-NEXT: ^{{.*}}(%[[I:.*]]: tensor<i64>, %[[C:.*]]: tensor<i1>, %[[Y:.*]]: tensor<4xf32>):
  // CHECK-NEXT:   %[[D:.*]] = graph.add %[[Y]], %[[Y]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT:   graph.yield %[[C]], %[[D]] : tensor<i1>, tensor<4xf32>
  // CHECK-NEXT: }
  %r = graph.loop %m, %c, (%x) : tensor<i64>, tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %y: tensor<4xf32>):
    %d = graph.add %y, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    graph.yield %cc, %d : tensor<i1>, tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// Scan slices: yielded after the carried values, stacked by iteration into
// results of a static number of rows (zeros where no iteration ran).
// CHECK-LABEL: func.func @scan
func.func @scan(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) {
  // CHECK-NEXT: %{{.*}} = graph.loop %m, %c, (%x) : tensor<i64>, tensor<i1>, (tensor<3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) {
  // CHECK:        graph.yield %{{.*}}, %{{.*}}, %{{.*}} : tensor<i1>, tensor<3xf32>, tensor<3xf32>
  %r:2 = graph.loop %m, %c, (%x) : tensor<i64>, tensor<i1>, (tensor<3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %y: tensor<3xf32>):
    %d = graph.add %y, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %e = graph.neg %d : (tensor<3xf32>) -> tensor<3xf32>
    graph.yield %cc, %d, %e : tensor<i1>, tensor<3xf32>, tensor<3xf32>
  }
  func.return %r#0, %r#1 : tensor<3xf32>, tensor<4x3xf32>
}
