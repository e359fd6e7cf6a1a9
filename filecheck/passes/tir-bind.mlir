// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-bind{loop=i0 axis="blockIdx.x"},tir-bind{loop=i1 axis="threadIdx.x"}' | filecheck %s
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-bind{func=matmul loop=i1 axis="threadIdx.y"}' | filecheck %s --check-prefix=ONE
// RUN: not xtc-opt %s -p 'tir-bind{loop=i0 axis="warp.x"}' 2>&1 | filecheck %s --check-prefix=AXIS
// RUN: not xtc-opt %s -p 'tir-bind{func=matmul loop=i9 axis="threadIdx.x"}' 2>&1 | filecheck %s --check-prefix=NOLOOP

// Only the kinds change, and they print and parse back. Every function with
// the loops is changed when `func` is empty.
// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT:    tir.for %[[I0:.*]] = 0 to 8 step 1 {name = "i0", kind = "blockIdx.x"} {
// CHECK-NEXT:      tir.for %[[I1:.*]] = 0 to 6 step 1 {name = "i1", kind = "threadIdx.x"} {
// CHECK:             tir.for %{{.*}} = 0 to 4 step 1 {name = "r0", kind = "serial"} {
// CHECK:             memref.store %{{.*}}, %c[%[[I0]], %[[I1]]] : memref<8x6xf32>
// CHECK-LABEL: func.func @relu(
// CHECK-NEXT:    tir.for %{{.*}} = 0 to 3 step 1 {name = "i0", kind = "blockIdx.x"} {
// CHECK-NEXT:      tir.for %{{.*}} = 0 to 8 step 1 {name = "i1", kind = "threadIdx.x"} {

// ONE-LABEL: func.func @matmul(
// ONE-NEXT:    {name = "i0", kind = "serial"}
// ONE-NEXT:    {name = "i1", kind = "threadIdx.y"}
// ONE-LABEL: func.func @relu(
// ONE-NEXT:    {name = "i0", kind = "serial"}
// ONE-NEXT:    {name = "i1", kind = "serial"}

// AXIS: xtc-opt: error: invalid pass pipeline 'tir-bind{loop=i0 axis="warp.x"}': tir-bind: axis 'warp.x' is not one of blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z
// NOLOOP: error: tir-bind: no loop named 'i9' in @matmul
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
func.func @relu(%x: memref<3x8xf32>, %y: memref<3x8xf32>) {
  tir.for %i0 = 0 to 3 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 8 step 1 {name = "i1", kind = "serial"} {
      %v = memref.load %x[%i0, %i1] : memref<3x8xf32>
      %zero = arith.constant 0.000000e+00 : f32
      %r = arith.maximumf %v, %zero : f32
      memref.store %r, %y[%i0, %i1] : memref<3x8xf32>
    }
  }
  func.return
}

// -----

// Each row reads the row above, which another block writes: the iterations
// of i0 carry a dependence.
// CHECK: error: tir-bind: loop 'i0' in @scan may let two iterations touch one element of %x (argument 0)
func.func @scan(%x: memref<8x4xf32>) {
  tir.for %i0 = 1 to 8 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 4 step 1 {name = "i1", kind = "serial"} {
      %one = arith.constant 1 : index
      %up = arith.subi %i0, %one : index
      %v = memref.load %x[%up, %i1] : memref<8x4xf32>
      memref.store %v, %x[%i0, %i1] : memref<8x4xf32>
    }
  }
  func.return
}

// -----

// 64 x 32 threads in a block: over CUDA's 1024.
// CHECK: error: tir-bind: loop 'i1' in @big bound to threadIdx.x would make 2048 threads per block (the product of the threadIdx-bound extents); at most 1024
func.func @big(%x: memref<2x64x32xf32>) {
  tir.for %i0 = 0 to 2 step 1 {name = "i0", kind = "serial"} {
    tir.for %j = 0 to 64 step 1 {name = "j", kind = "threadIdx.y"} {
      tir.for %i1 = 0 to 32 step 1 {name = "i1", kind = "serial"} {
        %v = memref.load %x[%i0, %j, %i1] : memref<2x64x32xf32>
        memref.store %v, %x[%i0, %j, %i1] : memref<2x64x32xf32>
      }
    }
  }
  func.return
}

// -----

// An axis is bound once per function; a bound loop is not bound again.
// CHECK: error: tir-bind: loop 'i0' in @twice cannot be bound to blockIdx.x: loop 'j' already is
func.func @twice(%x: memref<4x4xf32>) {
  tir.for %j = 0 to 4 step 1 {name = "j", kind = "blockIdx.x"} {
    tir.for %i0 = 0 to 4 step 1 {name = "i0", kind = "serial"} {
      %v = memref.load %x[%j, %i0] : memref<4x4xf32>
      memref.store %v, %x[%j, %i0] : memref<4x4xf32>
    }
  }
  func.return
}

// -----

// CHECK: error: tir-bind: loop 'i1' in @again is already bound to threadIdx.z
func.func @again(%x: memref<4x4xf32>) {
  tir.for %i0 = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 4 step 1 {name = "i1", kind = "threadIdx.z"} {
      %v = memref.load %x[%i0, %i1] : memref<4x4xf32>
      memref.store %v, %x[%i0, %i1] : memref<4x4xf32>
    }
  }
  func.return
}
