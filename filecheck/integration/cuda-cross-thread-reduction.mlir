// RUN: xtc-opt %s -p cuda-default-schedule | filecheck %s
// RUN: xtc-opt %s -p 'cuda-default-schedule{cross_thread=false}' | filecheck %s --check-prefix=OFF
// RUN: xtc-opt %s -p cuda-default-schedule,convert-tir-to-gpu | filecheck %s --check-prefix=GPU
// RUN: xtc-opt %s -p cuda-default-schedule,convert-tir-to-gpu -t ptx | filecheck %s --check-prefix=PTX

// Two rows of 100 (few outputs, a long reduction): a warp per row. At the
// tir level each of 32 lanes (threadIdx.x) folds r = r_k * 32 + lane (r <
// 100 guarded) into its own partial, then a serial loop over the lanes
// folds the partials into the accumulator, and the epilogue (a relu) reads
// it; with so few rows, each is a block of one warp (rows are threadIdx.y
// of blocks of up to 8 warps where there are enough to fill the GPU).
// CHECK-LABEL: func.func @rowmax(
// CHECK-NEXT:    tir.for %[[B:.*]] = 0 to 2 step 1 {name = "i_o", kind = "blockIdx.x"} {
// CHECK-NEXT:      tir.for %[[ROW:.*]] = 0 to 1 step 1 {name = "i_i", kind = "threadIdx.y"} {
// CHECK:             %[[ACC:.*]] = memref.alloca() : memref<f32>
// CHECK:             %[[PART:.*]] = memref.alloca() : memref<32xf32>
// CHECK-NEXT:        tir.for %[[LANE:.*]] = 0 to 32 step 1 {name = "r_lane", kind = "threadIdx.x"} {
// CHECK-NEXT:          %[[LACC:.*]] = memref.alloca() : memref<f32>
// CHECK-NEXT:          %[[NEGINF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:          memref.store %[[NEGINF]], %[[LACC]][] : memref<f32>
// CHECK-NEXT:          tir.for %[[K:.*]] = 0 to 4 step 1 {name = "r_k", kind = "serial"} {
// CHECK-NEXT:            %[[W:.*]] = arith.constant 32 : index
// CHECK-NEXT:            %[[KW:.*]] = arith.muli %[[K]], %[[W]] : index
// CHECK-NEXT:            %[[R:.*]] = arith.addi %[[KW]], %[[LANE]] : index
// CHECK-NEXT:            %[[N:.*]] = arith.constant 100 : index
// CHECK-NEXT:            %[[IN:.*]] = arith.cmpi ult, %[[R]], %[[N]] : index
// CHECK-NEXT:            scf.if %[[IN]] {
// CHECK-NEXT:              memref.load %{{.*}}[%{{.*}}, %[[R]]] : memref<2x100xf32>
// CHECK:                 arith.maximumf
// CHECK:               memref.store %{{.*}}, %[[PART]][%[[LANE]]] : memref<32xf32>
// CHECK:             tir.for %[[J:.*]] = 0 to 32 step 1 {name = "r_lanes", kind = "serial"} {
// CHECK-NEXT:          memref.load %[[ACC]][] : memref<f32>
// CHECK-NEXT:          memref.load %[[PART]][%[[J]]] : memref<32xf32>
// CHECK-NEXT:          arith.maximumf
// CHECK-NEXT:          memref.store %{{.*}}, %[[ACC]][] : memref<f32>
// CHECK:             memref.load %[[ACC]][] : memref<f32>
// CHECK:             memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<2xf32>

// OFF-LABEL: func.func @rowmax(
// OFF-NEXT:    tir.for %{{.*}} = 0 to 1 step 1 {name = "i_o", kind = "blockIdx.x"} {
// OFF-NEXT:      tir.for %{{.*}} = 0 to 2 step 1 {name = "i_i", kind = "threadIdx.x"} {
// OFF-NOT:         threadIdx.y
// OFF:             tir.for %{{.*}} = 0 to 100 step 1 {name = "r", kind = "serial"} {

// At the gpu level the lanes' partial is a register: a butterfly of five
// full-mask shuffles (offsets 16 to 1) leaves the row's maximum in every
// lane, and lane 0 alone folds it into the accumulator and runs the
// epilogue. A block is 32 lanes x 1 row.
// GPU:         "gpu.func"()
// GPU:           %[[ROW:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
// GPU-NEXT:      %[[LANE:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// GPU-NOT:       memref<32xf32>
// GPU:           tir.for %{{.*}} = 0 to 4 step 1 {name = "r_k", kind = "serial"} {
// GPU:           {{^      }}}
// GPU-NEXT:      %[[P:.*]] = memref.load %{{.*}}[] : memref<f32>
// GPU-NEXT:      %[[MASK:.*]] = arith.constant -1 : i32
// GPU-NEXT:      %[[CLAMP:.*]] = arith.constant 31 : i32
// GPU-NEXT:      %[[O16:.*]] = arith.constant 16 : i32
// GPU-NEXT:      %[[S16:.*]] = llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.f32"(%[[MASK]], %[[P]], %[[O16]], %[[CLAMP]]) : (i32, f32, i32, i32) -> f32
// GPU-NEXT:      %[[M16:.*]] = arith.maximumf %[[P]], %[[S16]] : f32
// GPU-COUNT-4:   llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.f32"
// GPU:           %[[ALL:.*]] = arith.maximumf
// GPU-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// GPU-NEXT:      %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %[[ZERO]] : index
// GPU-NEXT:      scf.if %[[FIRST]] {
// GPU-NEXT:        %[[A:.*]] = memref.load %[[ACC:.*]][] : memref<f32>
// GPU-NEXT:        arith.maximumf %[[A]], %[[ALL]] : f32
// GPU:             memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<2xf32>
// GPU-NEXT:      }
// GPU-NEXT:      "gpu.return"() : () -> ()
// GPU:         gpu.known_block_size = array<i32: 32, 1, 1>, gpu.known_grid_size = array<i32: 2, 1, 1>

// A reduction into one element (here into the output itself) gets one
// block of one warp, `lanes_b`, no longer one thread; lane 0 adds the
// warp's sum to %y.
// CHECK-LABEL: func.func @total(
// CHECK-NEXT:    tir.for %{{.*}} = 0 to 1 step 1 {name = "lanes_b", kind = "blockIdx.x"} {
// CHECK-NEXT:      %[[PART:.*]] = memref.alloca() : memref<32xf32>
// CHECK-NEXT:      tir.for %{{.*}} = 0 to 32 step 1 {name = "i_lane", kind = "threadIdx.x"} {
// CHECK:             tir.for %{{.*}} = 0 to 8 step 1 {name = "i_k", kind = "serial"} {
// CHECK-NOT:           scf.if
// CHECK:           tir.for %[[J:.*]] = 0 to 32 step 1 {name = "i_lanes", kind = "serial"} {
// CHECK-NEXT:        memref.load %[[Y:.*]][] : memref<f32>
// CHECK-NEXT:        memref.load %[[PART]][%[[J]]] : memref<32xf32>
// CHECK-NEXT:        arith.addf
// CHECK-NEXT:        memref.store %{{.*}}, %[[Y]][] : memref<f32>

// GPU:         "gpu.func"()
// GPU:           %[[LANE:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// GPU-COUNT-5:   llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.f32"
// GPU:           arith.cmpi eq, %[[LANE]]
// GPU:         sym_name = "total", gpu.known_block_size = array<i32: 32, 1, 1>, gpu.known_grid_size = array<i32: 1, 1, 1>
// GPU:         "gpu.launch_func"({{.*}}kernel = @xtc_kernels::@rowmax
// GPU:         "gpu.launch_func"({{.*}}kernel = @xtc_kernels::@total

// PTX-LABEL: .entry rowmax(
// PTX-COUNT-5: shfl.sync.bfly.b32 {{.*}}, -1;
// PTX-LABEL: .entry total(
// PTX-COUNT-5: shfl.sync.bfly.b32 {{.*}}, -1;
func.func @main(%x: memref<2x100xf32>, %y: memref<2xf32> {graph.output = 0 : i64}) {
  func.call @rowmax(%x, %y) : (memref<2x100xf32>, memref<2xf32>) -> ()
  func.return
}
func.func @rowmax(%x: memref<2x100xf32>, %y: memref<2xf32>) {
  tir.for %i = 0 to 2 step 1 {name = "i", kind = "serial"} {
    %acc = memref.alloca() : memref<f32>
    %init = arith.constant 0xFF800000 : f32
    memref.store %init, %acc[] : memref<f32>
    tir.for %r = 0 to 100 step 1 {name = "r", kind = "serial"} {
      %v = memref.load %x[%i, %r] : memref<2x100xf32>
      %a = memref.load %acc[] : memref<f32>
      %m = arith.maximumf %a, %v : f32
      memref.store %m, %acc[] : memref<f32>
    }
    %s = memref.load %acc[] : memref<f32>
    %zero = arith.constant 0.0 : f32
    %relu = arith.maximumf %s, %zero : f32
    memref.store %relu, %y[%i] : memref<2xf32>
  }
  func.return
}
func.func @total(%x: memref<256xf32>, %y: memref<f32>) {
  tir.for %i = 0 to 256 step 1 {name = "i", kind = "serial"} {
    %v = memref.load %x[%i] : memref<256xf32>
    %s = memref.load %y[] : memref<f32>
    %t = arith.addf %s, %v : f32
    memref.store %t, %y[] : memref<f32>
  }
  func.return
}
