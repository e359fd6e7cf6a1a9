// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p cuda-default-schedule | filecheck %s
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'cuda-default-schedule{threads=16}' | filecheck %s --check-prefix=T16

// The spatial loops i0 x i1 (3 x 80 = 240 outputs) fuse into one loop,
// split by the largest divisor of 240 up to `threads` (240 by default, 16
// with threads=16), blocks on blockIdx.x and threads on threadIdx.x; the
// body recovers i0 and i1 from the fused index. A function without loops
// (@main) and one already bound are left alone.
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    func.call @relu(
// CHECK-LABEL: func.func @relu(
// CHECK-NEXT:    tir.for %[[B:.*]] = 0 to 1 step 1 {name = "i0_i1_o", kind = "blockIdx.x"} {
// CHECK-NEXT:      tir.for %[[T:.*]] = 0 to 240 step 1 {name = "i0_i1_i", kind = "threadIdx.x"} {
// CHECK:             arith.divui
// CHECK:             arith.remui
// CHECK:             memref.store
// CHECK-LABEL: func.func @bound(
// CHECK-NEXT:    tir.for %{{.*}} = 0 to 4 step 1 {name = "i0", kind = "threadIdx.y"} {

// T16-LABEL: func.func @relu(
// T16-NEXT:    tir.for %{{.*}} = 0 to 15 step 1 {name = "i0_i1_o", kind = "blockIdx.x"} {
// T16-NEXT:      tir.for %{{.*}} = 0 to 16 step 1 {name = "i0_i1_i", kind = "threadIdx.x"} {
func.func @main(%x: memref<3x80xf32>, %y: memref<3x80xf32>) {
  func.call @relu(%x, %y) : (memref<3x80xf32>, memref<3x80xf32>) -> ()
  func.return
}
func.func @relu(%x: memref<3x80xf32>, %y: memref<3x80xf32>) {
  tir.for %i0 = 0 to 3 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 80 step 1 {name = "i1", kind = "serial"} {
      %v = memref.load %x[%i0, %i1] : memref<3x80xf32>
      %zero = arith.constant 0.000000e+00 : f32
      %r = arith.maximumf %v, %zero : f32
      memref.store %r, %y[%i0, %i1] : memref<3x80xf32>
    }
  }
  func.return
}
func.func @bound(%x: memref<4xf32>) {
  tir.for %i0 = 0 to 4 step 1 {name = "i0", kind = "threadIdx.y"} {
    %v = memref.load %x[%i0] : memref<4xf32>
    memref.store %v, %x[%i0] : memref<4xf32>
  }
  func.return
}

// -----

// Two nests make two kernels: not one function.
// CHECK: error: cuda-default-schedule: @two has 2 loop nests at its top level; the default CUDA schedule makes a kernel of a function that is one loop nest
func.func @two(%x: memref<4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %x[%i] : memref<4xf32>
  }
  tir.for %j = 0 to 4 step 1 {name = "j", kind = "serial"} {
    %v = memref.load %x[%j] : memref<4xf32>
    memref.store %v, %x[%j] : memref<4xf32>
  }
  func.return
}

// -----

// Each iteration reads what the one before wrote.
// CHECK: error: cuda-default-schedule: loop 'i' in @scan may let two iterations touch one element of %x (argument 0)
func.func @scan(%x: memref<8xf32>) {
  tir.for %i = 1 to 8 step 1 {name = "i", kind = "serial"} {
    %one = arith.constant 1 : index
    %p = arith.subi %i, %one : index
    %v = memref.load %x[%p] : memref<8xf32>
    memref.store %v, %x[%i] : memref<8xf32>
  }
  func.return
}
