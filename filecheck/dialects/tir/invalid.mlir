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
