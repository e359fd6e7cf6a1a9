// RUN: xtc-opt %s --split-input-file --verify-diagnostics

func.func @unknown_kind() {
  // expected-error @+1 {{'tir.for' kind "sideways" is not one of "serial", "parallel", "vectorized", "unrolled", "blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"}}
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "sideways"} {
  }
  func.return
}

// -----

func.func @zero_step() {
  // expected-error @+1 {{'tir.for' step 0 must be > 0}}
  tir.for %i = 0 to 4 step 0 {name = "i", kind = "serial"} {
  }
  func.return
}

// -----

func.func @no_name() {
  // expected-error @+1 {{tir.for needs {name = "..."} and a string kind}}
  tir.for %i = 0 to 4 step 1 {kind = "serial"} {
  }
  func.return
}

// -----

func.func @prefetch_locality(%A: memref<4x3xf32>, %at: index) {
  // expected-error @+1 {{'tir.prefetch' locality 7 is not one of 0, 1, 2, 3}}
  tir.prefetch %A[%at] {locality = 7 : i64} : memref<4x3xf32>
  func.return
}

// -----

func.func @assert_without_its_value(%ok: i1) {
  // expected-error @+1 {{'tir.assert' message has a `{}` but the op has no value}}
  tir.assert %ok, "index {} is out of range"
  func.return
}

// -----

func.func @assert_value_without_a_place(%ok: i1, %i: i64) {
  // expected-error @+1 {{'tir.assert' has a value but its message has no `{}` for it}}
  tir.assert %ok, "index out of range", %i : i64
  func.return
}

// -----

func.func @assert_two_places(%ok: i1, %i: i64) {
  // expected-error @+1 {{'tir.assert' message 'index {} of {}' has 2 `{}`: the value goes in one}}
  tir.assert %ok, "index {} of {}", %i : i64
  func.return
}

// -----

func.func @assert_named_field(%ok: i1, %i: i64) {
  // expected-error @+1 {{'tir.assert' message 'index {i}' has a field {i}: only `{}` (the value) is allowed}}
  tir.assert %ok, "index {i}", %i : i64
  func.return
}

// -----

func.func @assert_lone_brace(%ok: i1) {
  // expected-error @+1 {{'tir.assert' message 'node {' is not a format string: Single '{' encountered in format string}}
  tir.assert %ok, "node {"
  func.return
}

