// RUN: xtc-opt %s --split-input-file --remarks --verify-diagnostics -p convert-tir-to-llvm
// RUN: xtc-opt %s --split-input-file --remarks -p convert-tir-to-llvm -o /dev/null 2>&1 | filecheck %s
// RUN: xtc-opt %s --split-input-file -p convert-tir-to-llvm -o /dev/null 2>&1 | filecheck %s --check-prefix=QUIET --allow-empty
// A loop marked vectorized that the lowering cannot widen runs serially;
// --remarks says which loop and why, at the loop (clang's -Rpass-missed).
// Without --remarks nothing is printed.

// CHECK: remarks-vectorize-missed.mlir:[[# @LINE + 4]]:3: remark: loop 'i' in @sum_into_scalar not vectorized: the lanes' stores to %acc may hit the same element [tir-lower-vectorized]
// QUIET-NOT: remark
func.func @sum_into_scalar(%x: memref<8xf32>, %acc: memref<1xf32>) {
  // expected-remark @+1 {{loop 'i' in @sum_into_scalar not vectorized: the lanes' stores to %acc may hit the same element}}
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "vectorized"} {
    %zero = arith.constant 0 : index
    %v = memref.load %x[%i] : memref<8xf32>
    %a = memref.load %acc[%zero] : memref<1xf32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %acc[%zero] : memref<1xf32>
  }
  func.return
}

// -----

// CHECK: remarks-vectorize-missed.mlir:[[# @LINE + 3]]:3: remark: loop 'j' in @indirect not vectorized: the lanes' stores to %y may hit the same element [tir-lower-vectorized]
func.func @indirect(%x: memref<8xi64>, %y: memref<8xf32>) {
  // expected-remark @+1 {{loop 'j' in @indirect not vectorized}}
  tir.for %j = 0 to 8 step 1 {name = "j", kind = "vectorized"} {
    %k = memref.load %x[%j] : memref<8xi64>
    %index = arith.index_cast %k : i64 to index
    %one = arith.constant 1.000000e+00 : f32
    memref.store %one, %y[%index] : memref<8xf32>
  }
  func.return
}

// -----

// A loop that vectorizes gives no remark.
func.func @copy(%x: memref<8xf32>, %y: memref<8xf32>) {
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "vectorized"} {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %y[%i] : memref<8xf32>
  }
  func.return
}
