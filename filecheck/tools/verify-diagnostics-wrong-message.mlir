// RUN: not xtc-opt %s --verify-diagnostics 2>&1 | filecheck %s
// A diagnostic whose message does not contain the annotation's text is
// unexpected, and the annotation is not met: both are reported, in line order.

func.func @zero_step() {
  // CHECK: verify-diagnostics-wrong-message.mlir:[[# @LINE + 1]]:27: error: expected error "step 0 must be > 1" was not produced
  // expected-error @+1 {{step 0 must be > 1}}
  tir.for %i = 0 to 4 step 0 {name = "i", kind = "serial"} {
  }
  // CHECK-NEXT: verify-diagnostics-wrong-message.mlir:[[# @LINE - 2]]:3: error: unexpected error: 'tir.for' step 0 must be > 0
  func.return
}
// CHECK-NOT: error
