// REQUIRES: libdevice
// RUN: xtc-opt %s -p convert-tir-to-gpu -t nvvm-ir | filecheck %s
// RUN: xtc-opt %s -p convert-tir-to-gpu -t ptx | filecheck %s --check-prefix=PTX

// Math NVPTX has no instruction for calls CUDA's libdevice: f64 tanh is
// __nv_tanh, libm's erf of f32 is __nv_erff, f16 log is __nv_logf between
// an extension and a truncation.
// CHECK:      define ptx_kernel void @"math_0"
// CHECK:        call ccc double @"__nv_tanh"(double
// CHECK:        call ccc float @"__nv_erff"(float
// CHECK:        fpext half {{.*}} to float
// CHECK-NEXT:   call ccc float @"__nv_logf"(float
// CHECK-NEXT:   fptrunc float {{.*}} to half
// CHECK-DAG:  declare double @"__nv_tanh"(double
// CHECK-DAG:  declare float @"__nv_erff"(float
// CHECK-DAG:  declare float @"__nv_logf"(float

// In the PTX, libdevice is linked in and inlined: no call and no
// declaration is left for ptxas to resolve, and no __nvvm_reflect.
// PTX:      .visible .entry math_0(
// PTX-NOT:  call
// PTX-NOT:  .extern
// PTX-NOT:  __nvvm_reflect
// PTX:      ret;
func.func @main(%x: memref<64xf64>, %y: memref<64xf32>, %z: memref<64xf16>) {
  func.call @math_0(%x, %y, %z) : (memref<64xf64>, memref<64xf32>, memref<64xf16>) -> ()
  func.return
}
func.func private @math_0(%x: memref<64xf64>, %y: memref<64xf32>, %z: memref<64xf16>) {
  tir.for %i = 0 to 64 step 1 {name = "i", kind = "threadIdx.x"} {
    %a = memref.load %x[%i] : memref<64xf64>
    %ta = math.tanh %a : f64
    memref.store %ta, %x[%i] : memref<64xf64>
    %b = memref.load %y[%i] : memref<64xf32>
    %eb = math.erf %b : f32
    memref.store %eb, %y[%i] : memref<64xf32>
    %c = memref.load %z[%i] : memref<64xf16>
    %lc = math.log %c : f16
    memref.store %lc, %z[%i] : memref<64xf16>
  }
  func.return
}
