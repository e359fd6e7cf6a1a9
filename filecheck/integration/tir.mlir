// RUN: python -c "import numpy as np; np.savez('%t.npz', a=np.arange(6, dtype=np.float32).reshape(2, 3), b=np.arange(12, dtype=np.float32).reshape(3, 4) / 4)"
// RUN: xtc-run %s --inputs %t.npz | filecheck %s
// RUN: xtc-run %s --inputs %t.npz --native | filecheck %s
// RUN: xtc-opt %s -p 'tir-split{func=matmul loop=i1 factor=2}' | xtc-run --inputs %t.npz --native | filecheck %s
// RUN: xtc-opt %s -p convert-tir-to-llvm | xtc-run --arg-types 2x3xf32,3x4xf32,2x4xf32 --inputs %t.npz | filecheck %s --check-prefix=LLVM

// A tir loop nest (c = a @ b, c an output argument), run by the interpreter
// and JIT-compiled: the same numbers, also after a schedule primitive and
// from the llvm level.
// CHECK:      result 0: memref<2x4xf32>
// CHECK-NEXT: {{\[\[}}   5, 5.75,  6.5, 7.25],
// CHECK-NEXT:  [  14,   17,   20,   23]]

// Lowered to llvm, the arguments are pointers: --arg-types gives their types.
// LLVM:      result 0: memref<2x4xf32>
// LLVM-NEXT: {{\[\[}}   5, 5.75,  6.5, 7.25],
func.func @matmul(%a: memref<2x3xf32> {graph.name = "a"}, %b: memref<3x4xf32> {graph.name = "b"}, %c: memref<2x4xf32> {graph.output = 0 : i64}) {
  tir.for %i = 0 to 2 step 1 {name = "i0", kind = "serial"} {
    tir.for %j = 0 to 4 step 1 {name = "i1", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[] : memref<f32>
      tir.for %k = 0 to 3 step 1 {name = "r0", kind = "serial"} {
        %x = memref.load %a[%i, %k] : memref<2x3xf32>
        %y = memref.load %b[%k, %j] : memref<3x4xf32>
        %m = arith.mulf %x, %y : f32
        %s0 = memref.load %acc[] : memref<f32>
        %s1 = arith.addf %s0, %m : f32
        memref.store %s1, %acc[] : memref<f32>
      }
      %r = memref.load %acc[] : memref<f32>
      memref.store %r, %c[%i, %j] : memref<2x4xf32>
    }
  }
  func.return
}
