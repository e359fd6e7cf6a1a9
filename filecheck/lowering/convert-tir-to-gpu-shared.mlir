// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p convert-tir-to-gpu | filecheck %s
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p convert-tir-to-gpu -t ptx | filecheck %s --check-prefix=PTX

// A block in phases: each reduction tile of x is copied to shared memory
// by the block's 4 threads, then read by them; the barrier before the
// compute waits for the copy, the one at the end of the tile loop's body
// keeps the next tile's copy from overwriting what a thread still reads.
// The phases' threads are the block's (4, 1, 1); the shared buffer is a
// `.shared` variable of PTX, the barriers `bar.sync`.
// CHECK-LABEL: "gpu.func"() <{function_type = (memref<2x8xf32>, memref<2x4xf32>) -> (), kernel}>
// CHECK:         %[[B:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:    %[[ACC:.*]] = memref.alloca() {{.*}} : memref<4xf32, 3 : i64>
// CHECK-NEXT:    tir.for %{{.*}} = 0 to 2 step 1 {name = "ko", kind = "serial"} {
// CHECK-NEXT:      %[[T:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}>
// CHECK:           memref.store %{{.*}}, %[[ACC]][%[[T]]] : memref<4xf32, 3 : i64>
// CHECK-NEXT:      "gpu.barrier"() : () -> ()
// CHECK-NEXT:      %[[T2:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}>
// CHECK:           memref.load %[[ACC]][%{{.*}}] : memref<4xf32, 3 : i64>
// CHECK:           memref.store %{{.*}}, %y[%[[B]], %[[T2]]] : memref<2x4xf32>
// CHECK-NEXT:      "gpu.barrier"() : () -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    "gpu.return"() : () -> ()
// CHECK:       sym_name = "tiles", gpu.known_block_size = array<i32: 4, 1, 1>, gpu.known_grid_size = array<i32: 2, 1, 1>
// PTX:         .shared .align 64 .b8 tiles_x_shared_0[16];
// PTX:         st.shared.{{[bf]}}32
// PTX:         bar.sync 0;
// PTX:         ld.shared.{{[bf]}}32
// PTX:         bar.sync 0;
func.func @tiles(%x: memref<2x8xf32>, %y: memref<2x4xf32>) {
  tir.for %b = 0 to 2 step 1 {name = "b", kind = "blockIdx.x"} {
    %x_shared = memref.alloca() {alignment = 64 : i64} : memref<4xf32, 3 : i64>
    tir.for %ko = 0 to 2 step 1 {name = "ko", kind = "serial"} {
      tir.for %c = 0 to 4 step 1 {name = "c", kind = "threadIdx.x"} {
        %c4 = arith.constant 4 : index
        %k0 = arith.muli %ko, %c4 : index
        %k = arith.addi %k0, %c : index
        %v = memref.load %x[%b, %k] : memref<2x8xf32>
        memref.store %v, %x_shared[%c] : memref<4xf32, 3 : i64>
      }
      tir.for %t = 0 to 4 step 1 {name = "t", kind = "threadIdx.x"} {
        %c3 = arith.constant 3 : index
        %other = arith.subi %c3, %t : index
        %w = memref.load %x_shared[%other] : memref<4xf32, 3 : i64>
        %old = memref.load %y[%b, %t] : memref<2x4xf32>
        %sum = arith.addf %old, %w : f32
        memref.store %sum, %y[%b, %t] : memref<2x4xf32>
      }
    }
  }
  func.return
}

// -----

// Two copies before one compute: one barrier, after both (the copies
// touch different buffers); nothing after the last phase.
// CHECK-LABEL: "gpu.func"() <{function_type = (memref<4xf32>, memref<4xf32>) -> (), kernel}>
// CHECK-NOT:     gpu.barrier
// CHECK:         memref.store %{{.*}}, %{{.*}} : memref<4xf32, 3 : i64>
// CHECK-NOT:     gpu.barrier
// CHECK:         memref.store %{{.*}}, %{{.*}} : memref<4xf32, 3 : i64>
// CHECK-NEXT:    "gpu.barrier"() : () -> ()
// CHECK-NOT:     gpu.barrier
// CHECK:         "gpu.return"() : () -> ()
func.func @two_copies(%x: memref<4xf32>, %y: memref<4xf32>) {
  tir.for %b = 0 to 1 step 1 {name = "b", kind = "blockIdx.x"} {
    %s0 = memref.alloca() {alignment = 64 : i64} : memref<4xf32, 3 : i64>
    tir.for %c0 = 0 to 4 step 1 {name = "c0", kind = "threadIdx.x"} {
      %v = memref.load %x[%c0] : memref<4xf32>
      memref.store %v, %s0[%c0] : memref<4xf32, 3 : i64>
    }
    %s1 = memref.alloca() {alignment = 64 : i64} : memref<4xf32, 3 : i64>
    tir.for %c1 = 0 to 4 step 1 {name = "c1", kind = "threadIdx.x"} {
      %v = memref.load %x[%c1] : memref<4xf32>
      memref.store %v, %s1[%c1] : memref<4xf32, 3 : i64>
    }
    tir.for %t = 0 to 4 step 1 {name = "t", kind = "threadIdx.x"} {
      %c3 = arith.constant 3 : index
      %o = arith.subi %c3, %t : index
      %a = memref.load %s0[%o] : memref<4xf32, 3 : i64>
      %e = memref.load %s1[%t] : memref<4xf32, 3 : i64>
      %s = arith.addf %a, %e : f32
      memref.store %s, %y[%t] : memref<4xf32>
    }
  }
  func.return
}

// -----

// CHECK: error: convert-tir-to-gpu: @shapes: the threadIdx-bound loop nests of a block differ in shape; every phase of a block runs on the same threads
func.func @shapes(%x: memref<8xf32>) {
  tir.for %b = 0 to 1 step 1 {name = "b", kind = "blockIdx.x"} {
    tir.for %c = 0 to 4 step 1 {name = "c", kind = "threadIdx.x"} {
      %v = memref.load %x[%c] : memref<8xf32>
      memref.store %v, %x[%c] : memref<8xf32>
    }
    tir.for %t = 0 to 8 step 1 {name = "t", kind = "threadIdx.x"} {
      %v = memref.load %x[%t] : memref<8xf32>
      memref.store %v, %x[%t] : memref<8xf32>
    }
  }
  func.return
}

// -----

// CHECK: error: convert-tir-to-gpu: @guarded: loop 't' is bound to threadIdx.x under 'scf.if'; threads of a block are bound at its top or under serial loops only (every thread must reach the barriers between them)
func.func @guarded(%x: memref<8xf32>, %p: i1) {
  tir.for %b = 0 to 1 step 1 {name = "b", kind = "blockIdx.x"} {
    scf.if %p {
      tir.for %t = 0 to 8 step 1 {name = "t", kind = "threadIdx.x"} {
        %v = memref.load %x[%t] : memref<8xf32>
        memref.store %v, %x[%t] : memref<8xf32>
      }
    }
  }
  func.return
}

// -----

// CHECK: error: convert-tir-to-gpu: @big: a block uses 53248 bytes of shared memory; CUDA gives a block 49152 bytes of static shared memory
func.func @big(%x: memref<8xf32>) {
  tir.for %b = 0 to 1 step 1 {name = "b", kind = "blockIdx.x"} {
    %s0 = memref.alloca() : memref<8192xf32, 3 : i64>
    %s1 = memref.alloca() : memref<5120xf32, 3 : i64>
    tir.for %t = 0 to 8 step 1 {name = "t", kind = "threadIdx.x"} {
      %v = memref.load %x[%t] : memref<8xf32>
      memref.store %v, %s0[%t] : memref<8192xf32, 3 : i64>
      memref.store %v, %s1[%t] : memref<5120xf32, 3 : i64>
    }
  }
  func.return
}

// -----

// CHECK: error: convert-tir-to-gpu: @many: 2048 threads per block; CUDA allows at most 1024
func.func @many(%x: memref<2048xf32>) {
  tir.for %b = 0 to 1 step 1 {name = "b", kind = "blockIdx.x"} {
    %s = memref.alloca() : memref<4xf32, 3 : i64>
    tir.for %t = 0 to 2 step 1 {name = "t", kind = "threadIdx.y"} {
      tir.for %u = 0 to 1024 step 1 {name = "u", kind = "threadIdx.x"} {
        %v = memref.load %x[%u] : memref<2048xf32>
        memref.store %v, %x[%u] : memref<2048xf32>
      }
    }
    tir.for %w = 0 to 2 step 1 {name = "w", kind = "threadIdx.y"} {
      tir.for %z = 0 to 1024 step 1 {name = "z", kind = "threadIdx.x"} {
        %v = memref.load %x[%z] : memref<2048xf32>
        memref.store %v, %x[%z] : memref<2048xf32>
      }
    }
  }
  func.return
}
