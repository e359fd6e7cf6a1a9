// RUN: xtc-opt %s -p 'tir-prefetch{loop=r0 buffer=x distance=4}' | filecheck %s
// RUN: xtc-opt %s -p 'tir-prefetch{func=window loop=r0 buffer=0 distance=2 locality=2}' | filecheck %s --check-prefix=WINDOW
// RUN: xtc-opt %s -p 'tir-prefetch{func=rows loop=r0 buffer=x distance=4},convert-tir-to-llvm' | filecheck %s --check-prefix=LLVM
// RUN: not xtc-opt %s -p 'tir-prefetch{func=rows loop=r0 buffer=y}' 2>&1 | filecheck %s --check-prefix=WRITTEN
// RUN: not xtc-opt %s -p 'tir-prefetch{func=rows loop=i buffer=x}' 2>&1 | filecheck %s --check-prefix=TOOMANY
// RUN: not xtc-opt %s -p 'tir-prefetch{func=rows loop=r0 buffer=v}' 2>&1 | filecheck %s --check-prefix=NONAME
// RUN: not xtc-opt %s -p 'tir-prefetch{loop=r0 buffer=x distance=0}' 2>&1 | filecheck %s --check-prefix=DISTANCE
// RUN: not xtc-opt %s -p 'tir-prefetch{loop=r0 buffer=x locality=4}' 2>&1 | filecheck %s --check-prefix=LOCALITY

// y[i, j] += x[r0, i, j] * w[r0]: iteration r0 reads the row piece
// x[r0, i, 0..19], two cache lines wide or three when unaligned. Four
// iterations ahead that is elements (r0 + 4) * 120 + i * 20 + {0, 16, 19}:
// one prefetch per 16 floats and one at the row's last element.
// CHECK-LABEL: func.func @rows(
// CHECK:         tir.for %[[R0:.*]] = 0 to 32 step 1 {name = "r0", kind = "serial"} {
// CHECK-NEXT:      %[[C120:.*]] = arith.constant 120 : index
// CHECK-NEXT:      %[[PLANE:.*]] = arith.muli %[[R0]], %[[C120]] : index
// CHECK-NEXT:      %[[C20:.*]] = arith.constant 20 : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.muli %[[I:.*]], %[[C20]] : index
// CHECK-NEXT:      %[[BASE:.*]] = arith.addi %[[PLANE]], %[[ROW]] : index
// CHECK-NEXT:      %[[AHEAD:.*]] = arith.constant 480 : index
// CHECK-NEXT:      %[[FIRST:.*]] = arith.addi %[[BASE]], %[[AHEAD]] : index
// CHECK-NEXT:      tir.prefetch %x[%[[FIRST]]] {locality = 3 : i64} : memref<32x6x20xf32>
// CHECK-NEXT:      %[[C496:.*]] = arith.constant 496 : index
// CHECK-NEXT:      %[[SECOND:.*]] = arith.addi %[[BASE]], %[[C496]] : index
// CHECK-NEXT:      tir.prefetch %x[%[[SECOND]]] {locality = 3 : i64} : memref<32x6x20xf32>
// CHECK-NEXT:      %[[C499:.*]] = arith.constant 499 : index
// CHECK-NEXT:      %[[LAST:.*]] = arith.addi %[[BASE]], %[[C499]] : index
// CHECK-NEXT:      tir.prefetch %x[%[[LAST]]] {locality = 3 : i64} : memref<32x6x20xf32>
// CHECK-NEXT:      %{{.*}} = memref.load %w[%[[R0]]] : memref<32xf32>

// A 3x3 window (rows i + k, columns j + l): three rows of 10 floats, each
// prefetched at its first and last element, two planes ahead, into L2.
// WINDOW-LABEL: func.func @window(
// WINDOW:         tir.for %{{.*}} = 0 to 8 step 1 {name = "r0", kind = "serial"} {
// WINDOW-COUNT-6:   tir.prefetch %x[%{{.*}}] {locality = 2 : i64} : memref<8x6x10xf32>
// WINDOW-NEXT:      tir.for

// Each offset is prefetched as it is, past the buffer's 3840 elements in
// the last iterations (a GEP without inbounds, no clamp: a prefetch never
// faults), read, locality 3, data cache.
// LLVM-LABEL: llvm.func @rows(
// LLVM-NOT:     llvm.select
// LLVM:         %[[FIRST:.*]] = llvm.getelementptr %x[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// LLVM-NOT:     llvm.select
// LLVM:         llvm.call_intrinsic "llvm.prefetch.p0"(%[[FIRST]], %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i32, i32, i32) -> ()
// LLVM-NOT:     llvm.select
// LLVM:         %[[SECOND:.*]] = llvm.getelementptr %x[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// LLVM-NOT:     llvm.select
// LLVM:         llvm.call_intrinsic "llvm.prefetch.p0"(%[[SECOND]], %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i32, i32, i32) -> ()
// LLVM-NOT:     llvm.select
// LLVM:         %[[LAST:.*]] = llvm.getelementptr %x[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// LLVM-NOT:     llvm.select
// LLVM:         llvm.call_intrinsic "llvm.prefetch.p0"(%[[LAST]], %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i32, i32, i32) -> ()

// WRITTEN: error: tir-prefetch: cannot prefetch %y (argument 2) in loop 'r0' of @rows: the loop body writes it
// TOOMANY: error: tir-prefetch: cannot prefetch %x (argument 0) in loop 'i' of @rows: what one iteration reads takes 96 prefetches (one per row and cache line; at most 64); prefetch in an inner loop
// NONAME: error: tir-prefetch: buffer=v: no argument of @rows named %v
// DISTANCE: xtc-opt: error: invalid pass pipeline '{{.*}}': tir-prefetch: distance=0 must be at least 1
// LOCALITY: xtc-opt: error: invalid pass pipeline '{{.*}}': tir-prefetch: locality=4 is not one of 0, 1, 2, 3
func.func @rows(%x: memref<32x6x20xf32>, %w: memref<32xf32>, %y: memref<6x20xf32>) {
  tir.for %i = 0 to 6 step 1 {name = "i", kind = "serial"} {
    tir.for %r0 = 0 to 32 step 1 {name = "r0", kind = "serial"} {
      %s = memref.load %w[%r0] : memref<32xf32>
      tir.for %j = 0 to 20 step 1 {name = "j", kind = "vectorized"} {
        %a = memref.load %x[%r0, %i, %j] : memref<32x6x20xf32>
        %p = arith.mulf %a, %s : f32
        %o = memref.load %y[%i, %j] : memref<6x20xf32>
        %t = arith.addf %o, %p : f32
        memref.store %t, %y[%i, %j] : memref<6x20xf32>
      }
    }
  }
  func.return
}

func.func @window(%x: memref<8x6x10xf32>, %y: memref<4x8xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    tir.for %r0 = 0 to 8 step 1 {name = "r0", kind = "serial"} {
      tir.for %k = 0 to 3 step 1 {name = "k", kind = "serial"} {
        tir.for %l = 0 to 3 step 1 {name = "l", kind = "serial"} {
          tir.for %j = 0 to 8 step 1 {name = "j", kind = "serial"} {
            %row = arith.addi %i, %k : index
            %col = arith.addi %j, %l : index
            %a = memref.load %x[%r0, %row, %col] : memref<8x6x10xf32>
            %o = memref.load %y[%i, %j] : memref<4x8xf32>
            %t = arith.addf %o, %a : f32
            memref.store %t, %y[%i, %j] : memref<4x8xf32>
          }
        }
      }
    }
  }
  func.return
}
