// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p cuda-default-schedule | filecheck %s
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'cuda-default-schedule{threads=16}' | filecheck %s --check-prefix=T16
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'cuda-default-schedule{outputs_per_thread=2}' | filecheck %s --check-prefix=K2
// RUN: not xtc-opt %s -p 'cuda-default-schedule{outputs_per_thread=17}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not xtc-opt %s -p 'cuda-default-schedule{shared_outputs_per_thread=0}' 2>&1 | filecheck %s --check-prefix=BADSHARED

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

// K2-LABEL: func.func @relu(
// K2-NEXT:    tir.for %{{.*}} = 0 to 1 step 1 {name = "i0_i1_o", kind = "blockIdx.x"} {
// K2-NEXT:      tir.for %{{.*}} = 0 to 240 step 1 {name = "i0_i1_i", kind = "threadIdx.x"} {

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

// Each top-level nest becomes a function @<f>_k<i> called in its place;
// the temporary (an alloca here) is allocated by the host function, passed
// to the nests that use it (after the function arguments), and freed
// before the return. The padding
// nest's constant is copied into its function.
// CHECK-LABEL: func.func @two(
// CHECK-NEXT:    %[[T:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    func.call @two_k0(%x, %[[T]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    func.call @two_k1(%y, %[[T]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    memref.dealloc %[[T]] : memref<4xf32>
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @two_k0(%x: memref<4xf32>, %t: memref<4xf32>) {
// CHECK-NEXT:    arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    tir.for %{{.*}} = 0 to 1 step 1 {name = "i_o", kind = "blockIdx.x"} {
// CHECK-NEXT:      tir.for %{{.*}} = 0 to 4 step 1 {name = "i_i", kind = "threadIdx.x"} {
// CHECK-NOT:   memref.alloc
// CHECK-LABEL: func.func @two_k1(%y: memref<4xf32>, %t: memref<4xf32>) {
// CHECK-NEXT:    tir.for %{{.*}} = 0 to 1 step 1 {name = "j_o", kind = "blockIdx.x"} {
// CHECK-NEXT:      tir.for %{{.*}} = 0 to 4 step 1 {name = "j_i", kind = "threadIdx.x"} {
func.func @two(%x: memref<4xf32>, %y: memref<4xf32>) {
  %t = memref.alloca() : memref<4xf32>
  %two = arith.constant 2.000000e+00 : f32
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %t[%i] : memref<4xf32>
  }
  tir.for %j = 0 to 4 step 1 {name = "j", kind = "serial"} {
    %v = memref.load %t[%j] : memref<4xf32>
    memref.store %v, %y[%j] : memref<4xf32>
  }
  func.return
}

// -----

// Each iteration reads what the one before wrote: the nest runs on one
// block of one thread (a gpu-single-thread remark says so); the store
// before it becomes a kernel of one thread too.
// CHECK-LABEL: func.func @scan(
// CHECK-NEXT:    func.call @scan_k0(%x)
// CHECK-NEXT:    func.call @scan_k1(%x)
// CHECK-LABEL: func.func @scan_k0(
// CHECK:         tir.for %{{.*}} = 0 to 1 step 1 {name = "once0_b", kind = "blockIdx.x"} {
// CHECK-NEXT:      tir.for %{{.*}} = 0 to 1 step 1 {name = "once0_t", kind = "threadIdx.x"} {
// CHECK-NEXT:        memref.store
// CHECK-LABEL: func.func @scan_k1(
// CHECK:         tir.for %{{.*}} = 0 to 1 step 1 {name = "single_b", kind = "blockIdx.x"} {
// CHECK-NEXT:      tir.for %{{.*}} = 0 to 1 step 1 {name = "single_t", kind = "threadIdx.x"} {
// CHECK-NEXT:        tir.for %{{.*}} = 1 to 8 step 1 {name = "i", kind = "serial"} {
func.func @scan(%x: memref<8xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  memref.store %zero, %x[%c0] : memref<8xf32>
  tir.for %i = 1 to 8 step 1 {name = "i", kind = "serial"} {
    %one = arith.constant 1 : index
    %p = arith.subi %i, %one : index
    %v = memref.load %x[%p] : memref<8xf32>
    memref.store %v, %x[%i] : memref<8xf32>
  }
  func.return
}

// -----

// The epilogue of a reduction into one element at the top level (a load of
// the accumulator, scalar ops, a store: ReduceMean over every axis, the mean
// of LayerNormalization over axis 0) moves into a kernel of one thread: the
// scalar ops using the load go with it, the constant that does not stays on
// the host, before it.
// CHECK-LABEL: func.func @mean(
// CHECK-NEXT:    %[[ACC:.*]] = memref.alloc() : memref<f32>
// CHECK-NEXT:    func.call @mean_k0(%[[ACC]])
// CHECK-NEXT:    func.call @mean_k1(%{{.*}}, %[[ACC]])
// CHECK-NEXT:    func.call @mean_k2(%{{.*}}, %[[ACC]])
// CHECK-LABEL: func.func @mean_k2(
// CHECK-NEXT:    %[[N:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT:    tir.for %{{.*}} = 0 to 1 step 1 {name = "once1_b", kind = "blockIdx.x"} {
// CHECK-NEXT:      tir.for %{{.*}} = 0 to 1 step 1 {name = "once1_t", kind = "threadIdx.x"} {
// CHECK-NEXT:        %[[S:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK-NEXT:        %[[M:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT:        memref.store %[[M]], %{{.*}}[] : memref<f32>
func.func @mean(%x: memref<8xf32>, %out: memref<f32>) {
  %acc = memref.alloca() : memref<f32>
  %zero = arith.constant 0.000000e+00 : f32
  memref.store %zero, %acc[] : memref<f32>
  tir.for %r = 0 to 8 step 1 {name = "r", kind = "serial"} {
    %v = memref.load %x[%r] : memref<8xf32>
    %a = memref.load %acc[] : memref<f32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %acc[] : memref<f32>
  }
  %sum = memref.load %acc[] : memref<f32>
  %n = arith.constant 8.000000e+00 : f32
  %mean = arith.divf %sum, %n : f32
  memref.store %mean, %out[] : memref<f32>
  func.return
}

// -----

// A function without loops that reads and writes memory (the reshape of a
// rank-0 tensor) runs it in a kernel of one thread, not in host code.
// CHECK-LABEL: func.func @scalar_copy(
// CHECK-NEXT:    func.call @scalar_copy_k0(
// CHECK-LABEL: func.func @scalar_copy_k0(
// CHECK-NEXT:    tir.for %{{.*}} = 0 to 1 step 1 {name = "once0_b", kind = "blockIdx.x"} {
// CHECK-NEXT:      tir.for %{{.*}} = 0 to 1 step 1 {name = "once0_t", kind = "threadIdx.x"} {
// CHECK-NEXT:        %[[V:.*]] = memref.load
// CHECK-NEXT:        memref.store %[[V]]
func.func @scalar_copy(%x: memref<f32>, %y: memref<f32>) {
  %v = memref.load %x[] : memref<f32>
  memref.store %v, %y[] : memref<f32>
  func.return
}

// -----

// A top-level op whose result a nest uses cannot move into a kernel.
// CHECK: error: cuda-default-schedule: @stray: the result of 'memref.load' at the top level is used outside it; only loop nests and buffers move to kernels
func.func @stray(%x: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<8xf32>
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "serial"} {
    memref.store %v, %x[%i] : memref<8xf32>
  }
  func.return
}

// -----

// Register tiling (outputs_per_thread=2): each thread computes two rows of
// the matmul, i = i_o * 2 + {0, 1}: two accumulators, one reduction loop
// holding both copies of its body, the load of %b (which does not depend
// on i, and whose neighbouring j sit on neighbouring threads) read once and
// used by both; 16 threads instead of 32, j still varying fastest. The
// relu of the first case, which holds no reduction, is scheduled as
// without the option (its K2 lines).
// K2-LABEL: func.func @mm(
// K2-NEXT:    tir.for %{{.*}} = 0 to 1 step 1 {name = "i_o_j_o", kind = "blockIdx.x"} {
// K2-NEXT:      tir.for %{{.*}} = 0 to 16 step 1 {name = "i_o_j_i", kind = "threadIdx.x"} {
// K2:             %[[IO:.*]] = arith.divui
// K2-NEXT:        %[[J:.*]] = arith.remui
// K2-NEXT:        %[[TWO:.*]] = arith.constant 2 : index
// K2-NEXT:        %[[I0:.*]] = arith.muli %[[IO]], %[[TWO]] : index
// K2-NEXT:        %[[ONE:.*]] = arith.constant 1 : index
// K2-NEXT:        %[[I1:.*]] = arith.addi %[[I0]], %[[ONE]] : index
// K2-NEXT:        %[[ACC0:.*]] = memref.alloca() : memref<f32>
// K2-NEXT:        %[[ACC1:.*]] = memref.alloca() : memref<f32>
// K2-NEXT:        %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// K2-NEXT:        memref.store %[[ZERO]], %[[ACC0]][] : memref<f32>
// K2-NEXT:        memref.store %[[ZERO]], %[[ACC1]][] : memref<f32>
// K2-NEXT:        tir.for %[[K:.*]] = 0 to 3 step 1 {name = "k", kind = "serial"} {
// K2-NEXT:          %[[X0:.*]] = memref.load %a[%[[I0]], %[[K]]]
// K2-NEXT:          %[[X1:.*]] = memref.load %a[%[[I1]], %[[K]]]
// K2-NEXT:          %[[Y:.*]] = memref.load %b[%[[K]], %[[J]]]
// K2-NEXT:          arith.mulf %[[X0]], %[[Y]] : f32
// K2-NEXT:          arith.mulf %[[X1]], %[[Y]] : f32
// K2-NOT:           memref.load %b
// K2:             memref.store %{{.*}}, %c[%[[I0]], %[[J]]]
// K2-NEXT:        memref.store %{{.*}}, %c[%[[I1]], %[[J]]]
// K2-NOT:     tir.for
// BAD: cuda-default-schedule: outputs_per_thread=17 is outside [1, 16]
// BADSHARED: cuda-default-schedule: shared_outputs_per_thread=0 is outside [1, 16]
func.func @mm(%a: memref<4x3xf32>, %b: memref<3x8xf32>, %c: memref<4x8xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    tir.for %j = 0 to 8 step 1 {name = "j", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[] : memref<f32>
      tir.for %k = 0 to 3 step 1 {name = "k", kind = "serial"} {
        %x = memref.load %a[%i, %k] : memref<4x3xf32>
        %y = memref.load %b[%k, %j] : memref<3x8xf32>
        %p = arith.mulf %x, %y : f32
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %p : f32
        memref.store %t, %acc[] : memref<f32>
      }
      %r = memref.load %acc[] : memref<f32>
      memref.store %r, %c[%i, %j] : memref<4x8xf32>
    }
  }
  func.return
}
