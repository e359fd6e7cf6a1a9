// RUN: %verify | filecheck %s

func.func @unknown_kind() {
  // CHECK: invalid.mlir:5:3: error: 'tir.for' kind "sideways" is not one of "serial", "parallel", "vectorized", "unrolled", "thread_binding"
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "sideways"} {
  }
  func.return
}

// -----

func.func @zero_step() {
  // CHECK: invalid.mlir:14:3: error: 'tir.for' step 0 must be > 0
  tir.for %i = 0 to 4 step 0 {name = "i", kind = "serial"} {
  }
  func.return
}

// -----

func.func @no_name() {
  // CHECK: invalid.mlir:23:48: error: tir.for needs {name = "..."} and a string kind
  tir.for %i = 0 to 4 step 1 {kind = "serial"} {
  }
  func.return
}

// -----

func.func @prefetch_locality(%A: memref<4x3xf32>, %at: index) {
  // CHECK: invalid.mlir:32:3: error: 'tir.prefetch' locality 7 is not one of 0, 1, 2, 3
  tir.prefetch %A[%at] {locality = 7 : i64} : memref<4x3xf32>
  func.return
}
