// RUN: xtc-opt %s -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=4},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-bind{func=matmul_0 loop=i1_o axis="blockIdx.x"},tir-bind{func=matmul_0 loop=i0 axis="threadIdx.x"},tir-cache-read{func=matmul_0 loop=i1_o buffer=in1 scope=shared}' | filecheck %s --check-prefix=SHARED
// RUN: xtc-opt %s -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=4},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-bind{func=matmul_0 loop=i1_o axis="blockIdx.x"},tir-bind{func=matmul_0 loop=i0 axis="threadIdx.x"},tir-cache-read{func=matmul_0 loop=i1_o buffer=in1 scope=shared},convert-tir-to-gpu' | filecheck %s --check-prefix=GPU
// RUN: xtc-opt %s -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=4},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-bind{func=matmul_0 loop=i1_o axis="blockIdx.x"},tir-bind{func=matmul_0 loop=i0 axis="threadIdx.x"},tir-cache-read{func=matmul_0 loop=i1_o buffer=in1 scope=shared},convert-tir-to-gpu' -t ptx | filecheck %s --check-prefix=PTX
// RUN: xtc-opt %s --diagnostics-to-output -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=4},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-bind{func=matmul_0 loop=i1_o axis="blockIdx.x"},tir-bind{func=matmul_0 loop=i0 axis="threadIdx.x"},tir-cache-read{func=matmul_0 loop=r0 buffer=in1 scope=shared}' | filecheck %s --check-prefix=INTHREAD
// RUN: xtc-opt %s --diagnostics-to-output -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=4},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-cache-read{func=matmul_0 loop=i1_o buffer=in1 scope=shared}' | filecheck %s --check-prefix=NOBLOCK
// RUN: xtc-opt %s --diagnostics-to-output -p 'convert-graph-to-te,convert-te-to-tir,tir-bind{func=matmul_0 loop=i0 axis="blockIdx.x"},tir-cache-read{func=matmul_0 loop=i0 buffer=in1 scope=shared}' | filecheck %s --check-prefix=NOTHREADS
// RUN: not xtc-opt %s -p 'tir-cache-read{loop=i buffer=0 scope=texture}' 2>&1 | filecheck %s --check-prefix=SCOPE
// RUN: xtc-opt %s -p 'convert-graph-to-te,convert-te-to-tir,tir-cache-read{func=matmul_0 loop=i0 buffer=in1 scope=local}' | filecheck %s --check-prefix=LOCAL

// B's 6x4 panel of a block (4 output columns) in shared memory, copied by
// the block's 8 threads: element e = r * 8 + t, row e / 4, column e % 4
// (consecutive threads, consecutive columns); the compute reads it.
// SHARED-LABEL: func.func private @matmul_0(
// SHARED-NEXT:    tir.for %[[B:.*]] = 0 to 2 step 1 {name = "i1_o", kind = "blockIdx.x"} {
// SHARED-NEXT:      %[[S:.*]] = memref.alloca() {alignment = 64 : i64} : memref<6x4xf32, 3 : i64>
// SHARED-NEXT:      tir.for %[[T:.*]] = 0 to 8 step 1 {name = "i1_o_in1_shared_t", kind = "threadIdx.x"} {
// SHARED-NEXT:        tir.for %[[R:.*]] = 0 to 3 step 1 {name = "i1_o_in1_shared_r", kind = "serial"} {
// SHARED-NEXT:          %[[C8:.*]] = arith.constant 8 : index
// SHARED-NEXT:          %[[RR:.*]] = arith.muli %[[R]], %[[C8]] : index
// SHARED-NEXT:          %[[E:.*]] = arith.addi %[[RR]], %[[T]] : index
// SHARED-NEXT:          %[[C4:.*]] = arith.constant 4 : index
// SHARED-NEXT:          %[[ROW:.*]] = arith.divui %[[E]], %[[C4]] : index
// SHARED-NEXT:          %[[C4B:.*]] = arith.constant 4 : index
// SHARED-NEXT:          %[[COL:.*]] = arith.remui %[[E]], %[[C4B]] : index
// SHARED:               %[[V:.*]] = memref.load %in1[%[[ROW]], %{{.*}}] : memref<6x8xf32>
// SHARED-NEXT:          memref.store %[[V]], %[[S]][%[[ROW]], %[[COL]]] : memref<6x4xf32, 3 : i64>
// SHARED:           tir.for %{{.*}} = 0 to 8 step 1 {name = "i0", kind = "threadIdx.x"} {
// SHARED:             memref.load %[[S]][%{{.*}}, %{{.*}}] : memref<6x4xf32, 3 : i64>
// SHARED-NOT:     memref.load %in1

// The kernel: the copy, a barrier, the compute, no barrier after it.
// GPU:      "gpu.func"()
// GPU:        memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<6x4xf32, 3 : i64>
// GPU:        "gpu.barrier"() : () -> ()
// GPU-NEXT:   %{{.*}} = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// GPU-NOT:    gpu.barrier
// GPU:        "gpu.return"() : () -> ()
// GPU:      gpu.known_block_size = array<i32: 8, 1, 1>, gpu.known_grid_size = array<i32: 2, 1, 1>

// PTX: .shared .align 64 .b8 matmul_0_in1_shared_0[96];
// PTX: st.shared
// PTX: bar.sync 0;
// PTX: ld.shared

// INTHREAD: error: tir-cache-read: cannot cache %in1 (argument 1) in loop 'r0' of @matmul_0: scope=shared caches for a block, so the loop must not be (inside) a threadIdx-bound loop
// NOBLOCK: error: tir-cache-read: cannot cache %in1 (argument 1) in loop 'i1_o' of @matmul_0: scope=shared needs the loop to be (inside) a blockIdx-bound loop
// NOTHREADS: error: tir-cache-read: cannot cache %in1 (argument 1) in loop 'i0' of @matmul_0: scope=shared needs threadIdx-bound loops inside the loop to copy with
// SCOPE: tir-cache-read: scope 'texture' is not one of global, shared, local

// A thread's own copy: memory space 5, copied as a global one.
// LOCAL: memref.alloca() {alignment = 64 : i64} : memref<6x8xf32, 5 : i64>
// LOCAL: tir.for %{{.*}} = 0 to 6 step 1 {name = "i0_cr0", kind = "serial"} {
func.func @main(%a: tensor<8x6xf32>, %b: tensor<6x8xf32>) -> tensor<8x8xf32> {
  %c = graph.matmul %a, %b : (tensor<8x6xf32>, tensor<6x8xf32>) -> tensor<8x8xf32>
  func.return %c : tensor<8x8xf32>
}
