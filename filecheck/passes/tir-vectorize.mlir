// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-vectorize{loop=i1}' | filecheck %s
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-vectorize{func=relu loop=i0}' | filecheck %s --check-prefix=OUTER
// RUN: not xtc-opt %s -p 'tir-vectorize{func=relu loop=i9}' 2>&1 | filecheck %s --check-prefix=NOLOOP
// RUN: not xtc-opt %s -p 'tir-vectorize{func=nowhere loop=i1}' 2>&1 | filecheck %s --check-prefix=NOFUNC
// RUN: not xtc-opt %s -p 'tir-vectorize{loop=i9}' 2>&1 | filecheck %s --check-prefix=NOWHERE

// Only the kind changes. Every function with a loop i1 is changed when
// `func` is empty.
// CHECK-LABEL: func.func @relu(
// CHECK-NEXT:    tir.for %[[I0:.*]] = 0 to 3 step 1 {name = "i0", kind = "serial"} {
// CHECK-NEXT:      tir.for %[[I1:.*]] = 0 to 16 step 1 {name = "i1", kind = "vectorized"} {
// CHECK-NEXT:        %[[X:.*]] = memref.load %x[%[[I0]], %[[I1]]] : memref<3x16xf32>
// CHECK-NEXT:        %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        %[[R:.*]] = arith.maximumf %[[X]], %[[ZERO]] : f32
// CHECK-NEXT:        memref.store %[[R]], %y[%[[I0]], %[[I1]]] : memref<3x16xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-LABEL: func.func @unrolled(
// CHECK-NEXT:    tir.for %{{.*}} = 0 to 64 step 1 {name = "i1", kind = "vectorized"} {

// OUTER: error: tir-vectorize: loop 'i0' in @relu holds another loop; only an innermost loop vectorizes
// NOLOOP: error: tir-vectorize: no loop named 'i9' in @relu
// NOFUNC: error: tir-vectorize: no function @nowhere in the module
// NOWHERE: error: tir-vectorize: no function has a loop named 'i9'
func.func @relu(%x: memref<3x16xf32>, %y: memref<3x16xf32>) {
  tir.for %i0 = 0 to 3 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 16 step 1 {name = "i1", kind = "serial"} {
      %v = memref.load %x[%i0, %i1] : memref<3x16xf32>
      %zero = arith.constant 0.000000e+00 : f32
      %r = arith.maximumf %v, %zero : f32
      memref.store %r, %y[%i0, %i1] : memref<3x16xf32>
    }
  }
  func.return
}

// 64 lanes, the most that vectorize; the kind it had is replaced.
func.func @unrolled(%x: memref<64xf32>) {
  tir.for %i = 0 to 64 step 1 {name = "i1", kind = "unrolled"} {
    %v = memref.load %x[%i] : memref<64xf32>
    memref.store %v, %x[%i] : memref<64xf32>
  }
  func.return
}

// -----

func.func @wide(%x: memref<65xf32>) {
  // CHECK: vectorize.mlir:[[# @LINE + 1]]:3: error: tir-vectorize: loop 'i1' in @wide has 65 iterations; at most 64 vectorize (split it first)
  tir.for %i = 0 to 65 step 1 {name = "i1", kind = "serial"} {
    %v = memref.load %x[%i] : memref<65xf32>
    memref.store %v, %x[%i] : memref<65xf32>
  }
  func.return
}

// -----

// A loop nested deeper, even inside an scf.if, is still a loop inside.
func.func @nested(%x: memref<4x4xf32>, %c: i1) {
  // CHECK: error: tir-vectorize: loop 'i1' in @nested holds another loop; only an innermost loop vectorizes
  tir.for %i = 0 to 4 step 1 {name = "i1", kind = "serial"} {
    scf.if %c {
      tir.for %j = 0 to 4 step 1 {name = "j", kind = "serial"} {
        %v = memref.load %x[%i, %j] : memref<4x4xf32>
        memref.store %v, %x[%i, %j] : memref<4x4xf32>
      }
    }
  }
  func.return
}

// -----

// What the lowering could only run serially whatever follows is refused up
// front (analysis/vectorizable.py decides for both): an op with a region ...
func.func @branchy(%x: memref<8xf32>, %c: i1) {
  // CHECK: vectorize.mlir:[[# @LINE + 1]]:3: error: tir-vectorize: loop 'i1' in @branchy cannot become vector code: 'scf.if' has a region
  tir.for %i = 0 to 8 step 1 {name = "i1", kind = "serial"} {
    scf.if %c {
      %v = memref.load %x[%i] : memref<8xf32>
      memref.store %v, %x[%i] : memref<8xf32>
    }
  }
  func.return
}

// -----

// ... or a call, which may have any effect.
func.func private @twice(%v: f32) -> f32

func.func @calls(%x: memref<8xf32>) {
  // CHECK: vectorize.mlir:[[# @LINE + 1]]:3: error: tir-vectorize: loop 'i1' in @calls cannot become vector code: 'func.call' may have side effects
  tir.for %i = 0 to 8 step 1 {name = "i1", kind = "serial"} {
    %v = memref.load %x[%i] : memref<8xf32>
    %w = func.call @twice(%v) : (f32) -> f32
    memref.store %w, %x[%i] : memref<8xf32>
  }
  func.return
}
