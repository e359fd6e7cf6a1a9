// RUN: xtc-opt %s -p convert-tir-to-gpu -t nvvm-ir | filecheck %s
// RUN: xtc-opt %s -p convert-tir-to-gpu -t ptx | filecheck %s --check-prefix=PTX
// RUN: xtc-opt %s -p convert-tir-to-gpu -t 'ptx{arch=sm_90}' | filecheck %s --check-prefix=SM90
// RUN: not xtc-opt %s -t ptx 2>&1 | filecheck %s --check-prefix=NOKERNEL
// RUN: not xtc-opt %s -p convert-tir-to-gpu -t 'ptx{arch=volta}' 2>&1 | filecheck %s --check-prefix=ARCH

// The kernel's LLVM IR for NVPTX: the kernel in the ptx_kernel calling
// convention, block and thread ids read from the PTX special registers
// (zero-extended to index), the body as convert-tir-to-llvm lowers it on
// the CPU; the host function is not there.
// CHECK:      target triple = "nvptx64-nvidia-cuda"
// CHECK:      define ptx_kernel void @"relu_0"(ptr dereferenceable(4096) %[[X:.*]], ptr dereferenceable(4096) %[[Y:.*]])
// CHECK:        %[[B:.*]] = call i32 @"llvm.nvvm.read.ptx.sreg.ctaid.x"()
// CHECK-NEXT:   %[[BI:.*]] = zext i32 %[[B]] to i64
// CHECK-NEXT:   %[[T:.*]] = call i32 @"llvm.nvvm.read.ptx.sreg.tid.x"()
// CHECK-NEXT:   %[[TI:.*]] = zext i32 %[[T]] to i64
// CHECK:        getelementptr inbounds float, ptr %[[X]]
// CHECK:        call float @"llvm.maximum.f32"
// CHECK:        store float
// CHECK:        ret void
// CHECK-NOT:  @"main"
// CHECK-NOT:  define

// PTX for sm_80 by default: one entry, the ids from %ctaid.x and %tid.x,
// global loads and stores.
// PTX:      .target sm_80
// PTX:      .visible .entry relu_0(
// PTX:        mov.u32 {{.*}}, %ctaid.x;
// PTX:        mov.u32 {{.*}}, %tid.x;
// PTX:        ld.global
// PTX:        max.NaN.f32
// PTX:        st.global

// SM90: .target sm_90
// SM90: .visible .entry relu_0(

// NOKERNEL: error: no gpu.func kernel in the module: bind loops (tir-bind) and run convert-tir-to-gpu
// ARCH: error: arch 'volta' is not a CUDA architecture like sm_80 or sm_90 (sm_50 up)
func.func @main(%x: memref<4x256xf32>, %y: memref<4x256xf32> {graph.output = 0 : i64}) {
  func.call @relu_0(%x, %y) : (memref<4x256xf32>, memref<4x256xf32>) -> ()
  func.return
}
func.func private @relu_0(%x: memref<4x256xf32>, %y: memref<4x256xf32>) {
  tir.for %i0 = 0 to 4 step 1 {name = "i0", kind = "blockIdx.x"} {
    tir.for %i1 = 0 to 256 step 1 {name = "i1", kind = "threadIdx.x"} {
      %v = memref.load %x[%i0, %i1] : memref<4x256xf32>
      %zero = arith.constant 0.000000e+00 : f32
      %r = arith.maximumf %v, %zero : f32
      memref.store %r, %y[%i0, %i1] : memref<4x256xf32>
    }
  }
  func.return
}
