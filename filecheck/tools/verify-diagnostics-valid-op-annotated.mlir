// RUN: not xtc-opt %s --verify-diagnostics 2>&1 | filecheck %s
// An annotation on an op that verifies fails the test, at the annotation.

func.func @valid() {
  // CHECK: verify-diagnostics-valid-op-annotated.mlir:[[# @LINE + 1]]:27: error: expected error "step 1 must be > 0" was not produced
  // expected-error @+1 {{step 1 must be > 0}}
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
  }
  func.return
}
// CHECK-NOT: error
