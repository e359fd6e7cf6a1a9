// RUN: xtc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Every way of placing an annotation; the chunk that gives no diagnostic is
// printed, the chunks whose diagnostics were expected print nothing.

// CHECK-NOT: @plus_one
func.func @plus_one() {
  // expected-error @+1 {{'tir.for' step 0 must be > 0}}
  tir.for %i = 0 to 4 step 0 {name = "i", kind = "serial"} {
  }
  func.return
}

// -----

// CHECK-NOT: @minus_one
func.func @minus_one() {
  tir.for %i = 0 to 4 step 0 {name = "i", kind = "serial"} {
  // expected-error @-1 {{step 0 must be > 0}}
  }
  func.return
}

// -----

func.func @above() {
  tir.for %i = 0 to 4 step 0 {name = "i", kind = "serial"} {
  // expected-error @above {{'tir.for' step 0 must be > 0}}
  }
  func.return
}

// -----

func.func @below() {
  // expected-error @below {{'tir.for' kind "sideways" is not one of}}
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "sideways"} {
  }
  func.return
}

// -----

func.func @same_line() {
  tir.for %i = 0 to 4 step 0 {name = "i", kind = "serial"} { // expected-error {{step 0}}
  }
  func.return
}

// -----

// A parse error, matched by a regular expression.
func.func @parse_error() {
  // expected-error-re @+1 {{Operation {{graph\.[a-z_]+}} is not registered}}
  %0 = "graph.no_such_op"() : () -> f32
  func.return
}

// -----

// CHECK-LABEL: func.func @valid
// CHECK-NEXT:    func.return
func.func @valid() {
  func.return
}
