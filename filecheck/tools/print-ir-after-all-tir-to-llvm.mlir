// RUN: xtc-opt %s -p tir-lower-parallel,tir-lower-unrolled,tir-lower-vectorized,convert-tir-to-cf,convert-to-llvm --print-ir-after-all -o /dev/null 2>&1 | filecheck %s
// RUN: xtc-opt %s -p convert-tir-to-llvm | filecheck %s --check-prefix=WHOLE

// The stages of convert-tir-to-llvm are passes of their own, so
// --print-ir-after-all shows what each did; convert-tir-to-llvm alone
// runs them all.
// CHECK:       IR Dump After tir-lower-parallel
// CHECK:         llvm.call @GOMP_parallel
// CHECK:         func.func private @scale_parallel_0
// CHECK:           tir.for %r = 0 to 2 step 1 {name = "r", kind = "unrolled"}
// CHECK:       IR Dump After tir-lower-unrolled
// CHECK-NOT:     kind = "unrolled"
// CHECK:         tir.for %j = 0 to 4 step 1 {name = "j", kind = "vectorized"}
// CHECK:       IR Dump After tir-lower-vectorized
// CHECK-NOT:     kind = "vectorized"
// CHECK:         llvm.fmul %{{.*}} : vector<4xf32>
// CHECK:       IR Dump After convert-tir-to-cf
// CHECK-NOT:     {{tir|scf}}.for
// CHECK:         cf.cond_br
// CHECK:       IR Dump After convert-to-llvm
// CHECK-NOT:     func.func
// CHECK:         llvm.func @scale(
// CHECK:         llvm.func internal @scale_parallel_0(

// WHOLE: llvm.func @scale(
// WHOLE: llvm.call @GOMP_parallel
// WHOLE: llvm.func internal @scale_parallel_0(
// WHOLE: llvm.fmul %{{.*}} : vector<4xf32>
func.func @scale(%x: memref<8x2x4xf32>, %y: memref<8x2x4xf32>) {
  %two = arith.constant 2.000000e+00 : f32
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "parallel"} {
    tir.for %r = 0 to 2 step 1 {name = "r", kind = "unrolled"} {
      tir.for %j = 0 to 4 step 1 {name = "j", kind = "vectorized"} {
        %v = memref.load %x[%i, %r, %j] : memref<8x2x4xf32>
        %d = arith.mulf %v, %two : f32
        memref.store %d, %y[%i, %r, %j] : memref<8x2x4xf32>
      }
    }
  }
  func.return
}
