// RUN: xtc-opt %s --split-input-file --verify-diagnostics -p 'tir-split{loop=i1 factor=4}' | filecheck %s
// A pass that refuses its input gives a diagnostic at the op it refuses; the
// chunk it accepts is printed after the pass.

func.func @too_short(%x: memref<3xf32>) {
  // expected-error @+1 {{tir-split: factor 4 is not in [1, 3], the extent of loop 'i1' in @too_short}}
  tir.for %i = 0 to 3 step 1 {name = "i1", kind = "serial"} {
  }
  func.return
}

// -----

// CHECK-LABEL: func.func @long_enough
// CHECK:         tir.for %{{.*}} = 0 to 2 step 1 {name = "i1_o"
// CHECK:           tir.for %{{.*}} = 0 to 4 step 1 {name = "i1_i"
func.func @long_enough(%x: memref<8xf32>) {
  tir.for %i = 0 to 8 step 1 {name = "i1", kind = "serial"} {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %x[%i] : memref<8xf32>
  }
  func.return
}
