// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-fuse{outer=i0 inner=i1}' | filecheck %s
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-fuse{func=relu outer=i1 inner=i0}' | filecheck %s --check-prefix=INSIDE
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-fuse{func=matmul outer=i1 inner=r0}' | filecheck %s --check-prefix=ACCUMULATOR
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-fuse{func=relu outer=i0 inner=i0}' | filecheck %s --check-prefix=SELF
// RUN: not xtc-opt %s -p 'tir-fuse{func=relu outer=i0 inner=i9}' 2>&1 | filecheck %s --check-prefix=NOLOOP
// RUN: not xtc-opt %s -p 'tir-fuse{func=nowhere outer=i0 inner=i1}' 2>&1 | filecheck %s --check-prefix=NOFUNC
// RUN: not xtc-opt %s -p 'tir-fuse{outer=i9 inner=i1}' 2>&1 | filecheck %s --check-prefix=NOWHERE
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-fuse{func=nest3 outer=i0 inner=i1},tir-fuse{func=nest3 outer=i0_i1 inner=i2}' | filecheck %s --check-prefix=TWICE

// One parallel loop of 3 * 8 iterations; i0 = v / 8 and i1 = v % 8, then
// the pure ops of i0's body, then i1's body.
// CHECK-LABEL: func.func @relu(
// CHECK-NEXT:    tir.for %[[V:.*]] = 0 to 24 step 1 {name = "i0_i1", kind = "parallel"} {
// CHECK-NEXT:      %[[E:.*]] = arith.constant 8 : index
// CHECK-NEXT:      %[[I0:.*]] = arith.divui %[[V]], %[[E]] : index
// CHECK-NEXT:      %[[I1:.*]] = arith.remui %[[V]], %[[E]] : index
// CHECK-NEXT:      %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.addi %[[I0]], %[[C1]] : index
// CHECK-NEXT:      %[[X:.*]] = memref.load %x[%[[ROW]], %[[I1]]] : memref<4x8xf32>
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[R:.*]] = arith.maximumf %[[X]], %[[ZERO]] : f32
// CHECK-NEXT:      memref.store %[[R]], %y[%[[I0]], %[[I1]]] : memref<3x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// INSIDE: error: tir-fuse: loop 'i1' is inside loop 'i0' in @relu, not around it
// SELF: error: tir-fuse: loop 'i0' is named twice
// NOLOOP: error: tir-fuse: no loop named 'i9' in @relu
// NOFUNC: error: tir-fuse: no function @nowhere in the module
// NOWHERE: error: tir-fuse: no function has a loop named 'i9'
func.func @relu(%x: memref<4x8xf32>, %y: memref<3x8xf32>) {
  tir.for %i0 = 0 to 3 step 1 {name = "i0", kind = "parallel"} {
    %c1 = arith.constant 1 : index
    %row = arith.addi %i0, %c1 : index
    tir.for %i1 = 0 to 8 step 1 {name = "i1", kind = "parallel"} {
      %v = memref.load %x[%row, %i1] : memref<4x8xf32>
      %zero = arith.constant 0.000000e+00 : f32
      %r = arith.maximumf %v, %zero : f32
      memref.store %r, %y[%i0, %i1] : memref<3x8xf32>
    }
  }
  func.return
}

// -----

// A reduction nest: the spatial loops fuse above the accumulator; the
// reduction loop cannot fuse with the loop holding the accumulator.
// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT:    tir.for %[[V:.*]] = 0 to 48 step 1 {name = "i0_i1", kind = "serial"} {
// CHECK-NEXT:      %[[E:.*]] = arith.constant 6 : index
// CHECK-NEXT:      %[[I0:.*]] = arith.divui %[[V]], %[[E]] : index
// CHECK-NEXT:      %[[I1:.*]] = arith.remui %[[V]], %[[E]] : index
// CHECK-NEXT:      memref.alloca() : memref<f32>
// CHECK:           tir.for %[[R0:.*]] = 0 to 4 step 1 {name = "r0", kind = "serial"} {
// CHECK-NEXT:        memref.load %a[%[[I0]], %[[R0]]] : memref<8x4xf32>
// CHECK-NEXT:        memref.load %b[%[[R0]], %[[I1]]] : memref<4x6xf32>
// CHECK:           memref.store %{{.*}}, %c[%[[I0]], %[[I1]]] : memref<8x6xf32>

// ACCUMULATOR: error: tir-fuse: loop 'i1' in @matmul holds the accumulator of reduction loop 'r0': moving 'r0' out of it would break the reduction (tir-cache-write moves reduction loops out)
func.func @matmul(%a: memref<8x4xf32>, %b: memref<4x6xf32>, %c: memref<8x6xf32>) {
  tir.for %i0 = 0 to 8 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 6 step 1 {name = "i1", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[] : memref<f32>
      tir.for %r0 = 0 to 4 step 1 {name = "r0", kind = "serial"} {
        %x = memref.load %a[%i0, %r0] : memref<8x4xf32>
        %y = memref.load %b[%r0, %i1] : memref<4x6xf32>
        %p = arith.mulf %x, %y : f32
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %p : f32
        memref.store %t, %acc[] : memref<f32>
      }
      %v = memref.load %acc[] : memref<f32>
      memref.store %v, %c[%i0, %i1] : memref<8x6xf32>
    }
  }
  func.return
}

// -----

func.func @kinds(%x: memref<4x4xf32>) {
  // CHECK: error: tir-fuse: loops 'i0' and 'i1' in @kinds are parallel and serial, not of one kind
  tir.for %i = 0 to 4 step 1 {name = "i0", kind = "parallel"} {
    tir.for %j = 0 to 4 step 1 {name = "i1", kind = "serial"} {
    }
  }
  func.return
}

// -----

func.func @unrolled(%x: memref<4x4xf32>) {
  // CHECK: error: tir-fuse: loops 'i0' and 'i1' in @unrolled are unrolled; only serial or parallel loops fuse
  tir.for %i = 0 to 4 step 1 {name = "i0", kind = "unrolled"} {
    tir.for %j = 0 to 4 step 1 {name = "i1", kind = "unrolled"} {
    }
  }
  func.return
}

// -----

func.func @strided(%x: memref<4x4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    // CHECK: error: tir-fuse: loop 'i1' in @strided runs from 0 with step 2; tir-fuse needs a loop from 0 with step 1
    tir.for %j = 0 to 4 step 2 {name = "i1", kind = "serial"} {
    }
  }
  func.return
}

// -----

func.func @two_inner(%x: memref<4x4xf32>) {
  // CHECK: error: tir-fuse: loop 'i0' in @two_inner is not perfectly nested: its body holds 2 loops ('i1', 'j')
  tir.for %i = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    tir.for %j = 0 to 4 step 1 {name = "i1", kind = "serial"} {
    }
    tir.for %k = 0 to 4 step 1 {name = "j", kind = "serial"} {
    }
  }
  func.return
}

// -----

func.func @taken(%x: memref<4x4xf32>) {
  // CHECK: error: tir-fuse: the new loop name 'i0_i1' is already used in @taken
  tir.for %i = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    tir.for %j = 0 to 4 step 1 {name = "i1", kind = "serial"} {
    }
  }
  tir.for %k = 0 to 4 step 1 {name = "i0_i1", kind = "serial"} {
  }
  func.return
}

// -----

// Fused twice, the outer pair first: the fused loop's body holds the divui
// and remui by the constant extent beside i2, pure ops that the second
// fuse sinks into its body.
// TWICE-LABEL: func.func @nest3(
// TWICE-NEXT:    tir.for %[[V:.*]] = 0 to 24 step 1 {name = "i0_i1_i2", kind = "serial"} {
// TWICE-NEXT:      %[[E2:.*]] = arith.constant 4 : index
// TWICE-NEXT:      %[[W:.*]] = arith.divui %[[V]], %[[E2]] : index
// TWICE-NEXT:      %[[I2:.*]] = arith.remui %[[V]], %[[E2]] : index
// TWICE-NEXT:      %[[E1:.*]] = arith.constant 3 : index
// TWICE-NEXT:      %[[I0:.*]] = arith.divui %[[W]], %[[E1]] : index
// TWICE-NEXT:      %[[I1:.*]] = arith.remui %[[W]], %[[E1]] : index
// TWICE:           memref.store %{{.*}}, %y[%[[I0]], %[[I1]], %[[I2]]] : memref<2x3x4xf32>
func.func @nest3(%y: memref<2x3x4xf32>) {
  tir.for %i0 = 0 to 2 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 3 step 1 {name = "i1", kind = "serial"} {
      tir.for %i2 = 0 to 4 step 1 {name = "i2", kind = "serial"} {
        %one = arith.constant 1.000000e+00 : f32
        memref.store %one, %y[%i0, %i1, %i2] : memref<2x3x4xf32>
      }
    }
  }
  func.return
}
