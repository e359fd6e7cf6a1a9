// RUN: not xtc-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s
// A diagnostic without an annotation fails the test; the chunks around it are
// still checked, and a chunk whose annotations all match reports nothing.

func.func @expected() {
  // expected-error @+1 {{step 0 must be > 0}}
  tir.for %i = 0 to 4 step 0 {name = "i", kind = "serial"} {
  }
  func.return
}

// -----

func.func @unannotated() {
  // CHECK: verify-diagnostics-unexpected-error.mlir:[[# @LINE + 1]]:3: error: unexpected error: 'tir.for' kind "sideways" is not one of
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "sideways"} {
  }
  func.return
}

// -----

func.func @parse_error() {
  // CHECK: verify-diagnostics-unexpected-error.mlir:[[# @LINE + 1]]:26: error: unexpected error: Operation graph.no_such_op is not registered
  %0 = "graph.no_such_op"() : () -> f32
  // CHECK-NEXT: %0 = "graph.no_such_op"() : () -> f32
  func.return
}
// CHECK-NOT: error
