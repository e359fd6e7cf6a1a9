// RUN: xtc-opt %s -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=4},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-bind{func=matmul_0 loop=i1_o axis="blockIdx.x"},tir-bind{func=matmul_0 loop=i0 axis="threadIdx.x"},tir-cache-write{func=matmul_0 loop=i1_o scope=shared}' | filecheck %s --check-prefix=SHARED
// RUN: xtc-opt %s -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=4},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-bind{func=matmul_0 loop=i1_o axis="blockIdx.x"},tir-bind{func=matmul_0 loop=i0 axis="threadIdx.x"},tir-cache-write{func=matmul_0 loop=i1_o scope=shared},convert-tir-to-gpu' | filecheck %s --check-prefix=SHARED-GPU
// RUN: xtc-opt %s -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=4},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-bind{func=matmul_0 loop=i1_o axis="blockIdx.x"},tir-bind{func=matmul_0 loop=i0 axis="threadIdx.x"},tir-cache-write{func=matmul_0 loop=i1_o scope=shared},convert-tir-to-gpu' -t ptx | filecheck %s --check-prefix=SHARED-PTX
// RUN: xtc-opt %s -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=4},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-bind{func=matmul_0 loop=i1_o axis="blockIdx.x"},tir-bind{func=matmul_0 loop=i0 axis="threadIdx.x"},tir-cache-write{func=matmul_0 loop=i0 scope=local}' | filecheck %s --check-prefix=LOCAL
// RUN: xtc-opt %s -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=4},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-bind{func=matmul_0 loop=i1_o axis="blockIdx.x"},tir-bind{func=matmul_0 loop=i0 axis="threadIdx.x"},tir-cache-write{func=matmul_0 loop=i0 scope=local},convert-tir-to-gpu' | filecheck %s --check-prefix=LOCAL-GPU
// RUN: xtc-opt %s -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=4},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-bind{func=matmul_0 loop=i1_o axis="blockIdx.x"},tir-bind{func=matmul_0 loop=i0 axis="threadIdx.x"},tir-cache-write{func=matmul_0 loop=i0 scope=local},convert-tir-to-gpu' -t ptx | filecheck %s --check-prefix=LOCAL-PTX
// RUN: xtc-opt %s --diagnostics-to-output -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=4},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-bind{func=matmul_0 loop=i1_o axis="blockIdx.x"},tir-bind{func=matmul_0 loop=i0 axis="threadIdx.x"},tir-cache-write{func=matmul_0 loop=i0 scope=shared}' | filecheck %s --check-prefix=INTHREAD
// RUN: xtc-opt %s --diagnostics-to-output -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=4},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-cache-write{func=matmul_0 loop=i1_o scope=shared}' | filecheck %s --check-prefix=NOBLOCK
// RUN: xtc-opt %s --diagnostics-to-output -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=4},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-bind{func=matmul_0 loop=i1_o axis="blockIdx.x"},tir-cache-write{func=matmul_0 loop=i1_o scope=shared}' | filecheck %s --check-prefix=NOTHREADS
// RUN: xtc-opt %s --diagnostics-to-output -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=4},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-bind{func=matmul_0 loop=i1_o axis="blockIdx.x"},tir-cache-write{func=matmul_0 loop=i1_o scope=local}' | filecheck %s --check-prefix=NOTTHREAD
// RUN: xtc-opt %s --diagnostics-to-output -p 'convert-graph-to-te,convert-te-to-tir,tir-split{func=matmul_0 loop=i1 factor=4},tir-reorder{func=matmul_0 order=i1_o,i0,i1_i},tir-bind{func=matmul_0 loop=i1_o axis="blockIdx.x"},tir-bind{func=matmul_0 loop=i0 axis="threadIdx.x"},tir-bind{func=matmul_0 loop=i1_i axis="threadIdx.y"},tir-cache-write{func=matmul_0 loop=i0 scope=local}' | filecheck %s --check-prefix=THREADTILE
// RUN: not xtc-opt %s -p 'tir-cache-write{loop=i scope=texture}' 2>&1 | filecheck %s --check-prefix=SCOPE

// A block's 8x4 output tile accumulates in shared memory, allocated in the
// blockIdx-bound loop; its 8 threads (one row each) set, accumulate and
// write back their rows, the write-back nest bound as the tile.
// SHARED-LABEL: func.func private @matmul_0(
// SHARED-NEXT:    tir.for %[[B:.*]] = 0 to 2 step 1 {name = "i1_o", kind = "blockIdx.x"} {
// SHARED-NEXT:      %[[ACC:.*]] = memref.alloca() {alignment = 64 : i64} : memref<8x4xf32, 3 : i64>
// SHARED-NEXT:      tir.for %[[TI:.*]] = 0 to 8 step 1 {name = "i0_init", kind = "threadIdx.x"} {
// SHARED-NEXT:        tir.for %[[JI:.*]] = 0 to 4 step 1 {name = "i1_i_init", kind = "serial"} {
// SHARED:               memref.store %{{.*}}, %[[ACC]][%[[TI]], %[[JI]]] : memref<8x4xf32, 3 : i64>
// SHARED:           tir.for %[[R:.*]] = 0 to 6 step 1 {name = "r0", kind = "serial"} {
// SHARED-NEXT:        tir.for %[[T:.*]] = 0 to 8 step 1 {name = "i0", kind = "threadIdx.x"} {
// SHARED:               memref.store %{{.*}}, %[[ACC]][%[[T]], %{{.*}}] : memref<8x4xf32, 3 : i64>
// SHARED:           tir.for %[[TW:.*]] = 0 to 8 step 1 {name = "i0_wb", kind = "threadIdx.x"} {
// SHARED-NEXT:        tir.for %[[JW:.*]] = 0 to 4 step 1 {name = "i1_i_wb", kind = "serial"} {
// SHARED:               %[[V:.*]] = memref.load %[[ACC]][%[[TW]], %[[JW]]] : memref<8x4xf32, 3 : i64>
// SHARED-NEXT:          memref.store %[[V]], %out0[%[[TW]], %{{.*}}] : memref<8x8xf32>

// The kernel: the buffer in the block, barriers around each step of the
// reduction (it touches the buffer the set-up and the write-back touch).
// SHARED-GPU:      "gpu.func"()
// SHARED-GPU:        %{{.*}} = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
// SHARED-GPU-NEXT:   %{{.*}} = memref.alloca() {alignment = 64 : i64} : memref<8x4xf32, 3 : i64>
// SHARED-GPU:        tir.for %{{.*}} = 0 to 6 step 1 {name = "r0", kind = "serial"} {
// SHARED-GPU-NEXT:     "gpu.barrier"() : () -> ()
// SHARED-GPU:          "gpu.barrier"() : () -> ()
// SHARED-GPU-NEXT:   }
// SHARED-GPU-NOT:    gpu.barrier
// SHARED-GPU:        "gpu.return"() : () -> ()

// SHARED-PTX: .shared .align 64 .b8 matmul_0_acc_0[128];
// SHARED-PTX: st.shared
// SHARED-PTX: bar.sync 0;
// SHARED-PTX: ld.shared
// SHARED-PTX: st.global

// A thread's 4 accumulators in its own memory, allocated in the
// threadIdx-bound loop.
// LOCAL-LABEL: func.func private @matmul_0(
// LOCAL:         tir.for %{{.*}} = 0 to 8 step 1 {name = "i0", kind = "threadIdx.x"} {
// LOCAL-NEXT:      %[[ACC:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4xf32, 5 : i64>
// LOCAL-NEXT:      tir.for %{{.*}} = 0 to 4 step 1 {name = "i1_i_init", kind = "serial"} {
// LOCAL:           tir.for %{{.*}} = 0 to 6 step 1 {name = "r0", kind = "serial"} {
// LOCAL:             memref.store %{{.*}}, %[[ACC]][%{{.*}}] : memref<4xf32, 5 : i64>
// LOCAL:           tir.for %{{.*}} = 0 to 4 step 1 {name = "i1_i_wb", kind = "serial"} {

// LOCAL-GPU:     "gpu.func"()
// LOCAL-GPU:       %{{.*}} = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// LOCAL-GPU-NEXT:  %{{.*}} = memref.alloca() {alignment = 64 : i64} : memref<4xf32, 5 : i64>
// LOCAL-GPU-NOT:   gpu.barrier
// LOCAL-GPU:       "gpu.return"() : () -> ()

// The 4 accumulators end in registers: no local memory, no barrier, the
// four sums stored to global memory.
// LOCAL-PTX-NOT: .local
// LOCAL-PTX-NOT: bar.sync
// LOCAL-PTX:     add.rn.f32
// LOCAL-PTX:     st.global.b32 [%[[P:rd[0-9]+]]], %r{{[0-9]+}};
// LOCAL-PTX-NEXT: st.global.b32 [%[[P]]+4], %r{{[0-9]+}};
// LOCAL-PTX-NEXT: st.global.b32 [%[[P]]+8], %r{{[0-9]+}};
// LOCAL-PTX-NEXT: st.global.b32 [%[[P]]+12], %r{{[0-9]+}};
// LOCAL-PTX-NOT: .local

// INTHREAD: error: tir-cache-write: loop 'i0' in @matmul_0 is (inside) a threadIdx-bound loop; scope=shared keeps the accumulators of a block, so cache at the block's loop
// NOBLOCK: error: tir-cache-write: loop 'i1_o' in @matmul_0 is not (inside) a blockIdx-bound loop, which scope=shared needs
// NOTHREADS: error: tir-cache-write: loop 'i1_o' in @matmul_0 has no threadIdx-bound tile loop; scope=shared needs the block's threads to compute the tile
// NOTTHREAD: error: tir-cache-write: loop 'i1_o' in @matmul_0 is not (inside) a threadIdx-bound loop; scope=local keeps the accumulators of one thread
// THREADTILE: error: tir-cache-write: loop 'i0' in @matmul_0 holds the threadIdx-bound tile loop 'i1_i'; a scope=local buffer belongs to one thread
// SCOPE: tir-cache-write: scope 'texture' is not one of global, shared, local
func.func @main(%a: tensor<8x6xf32>, %b: tensor<6x8xf32>) -> tensor<8x8xf32> {
  %c = graph.matmul %a, %b : (tensor<8x6xf32>, tensor<6x8xf32>) -> tensor<8x8xf32>
  func.return %c : tensor<8x8xf32>
}
