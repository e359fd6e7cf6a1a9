// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-unroll{loop=i1}' | filecheck %s
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-unroll{func=matmul loop=i0}' | filecheck %s --check-prefix=OUTER
// RUN: not xtc-opt %s -p 'tir-unroll{func=matmul loop=i9}' 2>&1 | filecheck %s --check-prefix=NOLOOP
// RUN: not xtc-opt %s -p 'tir-unroll{func=nowhere loop=i1}' 2>&1 | filecheck %s --check-prefix=NOFUNC
// RUN: not xtc-opt %s -p 'tir-unroll{loop=i9}' 2>&1 | filecheck %s --check-prefix=NOWHERE

// Only the kind changes; an unrolled loop may hold other loops. Every
// function with a loop i1 is changed when `func` is empty.
// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT:    tir.for %[[I0:.*]] = 0 to 8 step 1 {name = "i0", kind = "serial"} {
// CHECK-NEXT:      tir.for %[[I1:.*]] = 0 to 6 step 1 {name = "i1", kind = "unrolled"} {
// CHECK-NEXT:        %[[ACC:.*]] = memref.alloca() : memref<f32>
// CHECK-NEXT:        arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        memref.store
// CHECK-NEXT:        tir.for %[[R0:.*]] = 0 to 4 step 1 {name = "r0", kind = "serial"} {
// CHECK-NEXT:          memref.load %a[%[[I0]], %[[R0]]] : memref<8x4xf32>
// CHECK:             memref.store %{{.*}}, %c[%[[I0]], %[[I1]]] : memref<8x6xf32>
// CHECK-LABEL: func.func @parallel(
// CHECK-NEXT:    tir.for %{{.*}} = 0 to 64 step 1 {name = "i1", kind = "unrolled"} {

// OUTER-LABEL: func.func @matmul(
// OUTER-NEXT:    tir.for %{{.*}} = 0 to 8 step 1 {name = "i0", kind = "unrolled"} {
// OUTER-NEXT:      tir.for %{{.*}} = 0 to 6 step 1 {name = "i1", kind = "serial"} {

// NOLOOP: error: tir-unroll: no loop named 'i9' in @matmul
// NOFUNC: error: tir-unroll: no function @nowhere in the module
// NOWHERE: error: tir-unroll: no function has a loop named 'i9'
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

// 64 iterations, the most that unroll; the kind it had is replaced.
func.func @parallel(%x: memref<64xf32>) {
  tir.for %i = 0 to 64 step 1 {name = "i1", kind = "parallel"} {
    %v = memref.load %x[%i] : memref<64xf32>
    memref.store %v, %x[%i] : memref<64xf32>
  }
  func.return
}

// -----

func.func @long(%x: memref<130xf32>) {
  // CHECK: unroll.mlir:[[# @LINE + 1]]:3: error: tir-unroll: loop 'i1' in @long has 65 iterations; at most 64 unroll
  tir.for %i = 0 to 130 step 2 {name = "i1", kind = "serial"} {
    %v = memref.load %x[%i] : memref<130xf32>
    memref.store %v, %x[%i] : memref<130xf32>
  }
  func.return
}

// -----

func.func @twins(%x: memref<4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i1", kind = "serial"} {
  }
  // CHECK: error: tir-unroll: 2 loops are named 'i1' in @twins; a schedule needs loop names that are unique in their function
  tir.for %j = 0 to 4 step 1 {name = "i1", kind = "serial"} {
  }
  func.return
}
