// RUN: xtc-opt %s --split-input-file --verify-diagnostics

func.func @blob_of_the_wrong_size() -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.constant' op dense_resource<short_blob> holds 8 bytes, tensor<2x3xf32> needs 24}}
  %0 = graph.constant dense_resource<short_blob> : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      short_blob: "0x040000000000803F00000040"
    }
  }
#-}

// -----

func.func @not_a_tensor() -> vector<2xf32> {
  // expected-error @+1 {{graph.constant: the value's type vector<2xf32> is not a tensor}}
  %0 = graph.constant dense<1.0> : vector<2xf32>
  func.return %0 : vector<2xf32>
}

// -----

func.func @not_a_constant_attribute() -> tensor<2xf32> {
  // expected-error @+1 {{expected dense<...> or dense_resource<...> constant}}
  %0 = graph.constant 1.0 : f32
  func.return %0 : tensor<2xf32>
}

// -----

func.func @if_on_floats(%c: tensor<f32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.if' op condition must be a one-element tensor of i1, got tensor<f32>}}
  %r = graph.if %c : tensor<f32> -> (tensor<4xf32>) {
    graph.yield %x : tensor<4xf32>
  } else {
    graph.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @if_branches_of_other_types(%c: tensor<i1>, %x: tensor<4xf32>, %y: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.if' op the else region yields (tensor<2xf32>), the op returns (tensor<4xf32>)}}
  %r = graph.if %c : tensor<i1> -> (tensor<4xf32>) {
    graph.yield %x : tensor<4xf32>
  } else {
    graph.yield %y : tensor<2xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @loop_changing_its_carried_type(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>, %y: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.loop' op body yields (tensor<i1>, tensor<2xf32>), expected a condition (tensor<i1>) then the carried values (tensor<4xf32>)}}
  %r = graph.loop %m, %c, (%x) : tensor<i64>, tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %z: tensor<4xf32>):
    graph.yield %cc, %y : tensor<i1>, tensor<2xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @loop_with_a_float_trip_count(%m: tensor<f32>, %c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.loop' op max trip count must be a one-element tensor of i64, got tensor<f32>}}
  %r = graph.loop %m, %c, (%x) : tensor<f32>, tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %z: tensor<4xf32>):
    graph.yield %cc, %z : tensor<i1>, tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @loop_body_without_iteration(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.loop' op body takes (tensor<i1>, tensor<4xf32>), expected (tensor<i64>, tensor<i1>, tensor<4xf32>) (iteration, condition, carried values)}}
  %r = graph.loop %m, %c, (%x) : tensor<i64>, tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%cc: tensor<i1>, %z: tensor<4xf32>):
    graph.yield %cc, %z : tensor<i1>, tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @yield_outside_a_region(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.yield' expects parent op to be one of 'graph.if', 'graph.loop'}}
  graph.yield %x : tensor<4xf32>
}

// -----

func.func @loop_scan_of_another_shape(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'graph.loop' op stacks the scan slices (tensor<4xf32>) as (tensor<5x3xf32>): each must be the slice's type with the same number of rows first}}
  %r:2 = graph.loop %m, %c, (%x) : tensor<i64>, tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>, tensor<5x3xf32>) {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %z: tensor<4xf32>):
    graph.yield %cc, %z, %z : tensor<i1>, tensor<4xf32>, tensor<4xf32>
  }
  func.return %r#1 : tensor<5x3xf32>
}
