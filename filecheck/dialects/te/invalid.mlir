// RUN: xtc-opt %s --split-input-file --verify-diagnostics

func.func @wrong_index_count(%A: tensor<4xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{'te.compute' body takes 1 indices, expected 2 (one per dimension of tensor<4x5xf32>)}}
  %c = te.compute : tensor<4x5xf32> {
  ^bb0(%i: index):
    %a = tensor.extract %A[%i] : tensor<4xf32>
    te.yield %a : f32
  }
  func.return %c : tensor<4x5xf32>
}

// -----

func.func @wrong_yield_type(%A: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @+1 {{'te.compute' yields f32, but the result's elements are f64}}
  %c = te.compute : tensor<4xf64> {
  ^bb0(%i: index):
    %a = tensor.extract %A[%i] : tensor<4xf32>
    te.yield %a : f32
  }
  func.return %c : tensor<4xf64>
}

// -----

func.func @unknown_reduce_kind(%A: tensor<4xf32>) -> tensor<1xf32> {
  %c = te.compute : tensor<1xf32> {
  ^bb0(%j: index):
    // expected-error @+1 {{'te.reduce' kind "mean" is not one of "sum", "prod", "max", "min"}}
    %s = te.reduce {kind = "mean", extents = array<i64: 4>} : f32 {
    ^bb1(%i: index):
      %a = tensor.extract %A[%i] : tensor<4xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  func.return %c : tensor<1xf32>
}

// -----

func.func @reduce_indices(%A: tensor<4xf32>) -> tensor<1xf32> {
  %c = te.compute : tensor<1xf32> {
  ^bb0(%j: index):
    // expected-error @+1 {{'te.reduce' body takes 1 indices, expected 2 (one per extent)}}
    %s = te.reduce {kind = "sum", extents = array<i64: 4, 2>} : f32 {
    ^bb1(%i: index):
      %a = tensor.extract %A[%i] : tensor<4xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  func.return %c : tensor<1xf32>
}

// -----

func.func @negative_extent(%A: tensor<4xf32>) -> tensor<1xf32> {
  %c = te.compute : tensor<1xf32> {
  ^bb0(%j: index):
    // expected-error @+1 {{'te.reduce' extents [-1] must be >= 0}}
    %s = te.reduce {kind = "sum", extents = array<i64: -1>} : f32 {
    ^bb1(%i: index):
      %a = tensor.extract %A[%i] : tensor<4xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  func.return %c : tensor<1xf32>
}

// -----

func.func @reduce_result_type(%A: tensor<4xf32>) -> tensor<1xf32> {
  %c = te.compute : tensor<1xf32> {
  ^bb0(%j: index):
    // expected-error @+1 {{'te.reduce' yields f32, but its result is f64}}
    %s = te.reduce {kind = "sum", extents = array<i64: 4>} : f64 {
    ^bb1(%i: index):
      %a = tensor.extract %A[%i] : tensor<4xf32>
      te.yield %a : f32
    }
    %t = arith.truncf %s : f64 to f32
    te.yield %t : f32
  }
  func.return %c : tensor<1xf32>
}

// -----

func.func @yield_outside(%x: f32) {
  // expected-error @+1 {{'te.yield' expects parent op to be one of 'te.compute', 'te.reduce'}}
  te.yield %x : f32
}
