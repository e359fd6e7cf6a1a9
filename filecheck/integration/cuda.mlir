// RUN: xtc-opt %s -p 'convert-graph-to-te,convert-te-to-tir,cuda-default-schedule,convert-tir-to-gpu' -t 'ptx{arch=sm_90}' | filecheck %s
// RUN: xtc-opt %s -p 'convert-graph-to-te,convert-te-to-tir,cuda-default-schedule,convert-tir-to-gpu' | filecheck %s --check-prefix=GPU

// A graph to PTX with the default CUDA schedule: each of add and relu is a
// kernel of 6 x 40 = 240 threads in one block.
// CHECK:     .target sm_90
// CHECK:     .visible .entry add_0(
// CHECK:       mov.u32 {{.*}}, %tid.x;
// CHECK:       add.rn.f32
// CHECK:     .visible .entry relu_0(
// CHECK:       max.NaN.f32

// GPU:       "gpu.func"() <{function_type = (memref<6x40xf32>, memref<6x40xf32>, memref<6x40xf32>) -> (), kernel}>
// GPU:       gpu.known_block_size = array<i32: 240, 1, 1>, gpu.known_grid_size = array<i32: 1, 1, 1>
// GPU-LABEL: func.func @main(
// GPU:         func.call @add_0(
// GPU:         func.call @relu_0(
// GPU-LABEL: func.func private @add_0(
// GPU:         "gpu.launch_func"
func.func @main(%x: tensor<6x40xf32>, %y: tensor<6x40xf32>) -> tensor<6x40xf32> {
  %s = graph.add %x, %y : (tensor<6x40xf32>, tensor<6x40xf32>) -> tensor<6x40xf32>
  %r = graph.relu %s : (tensor<6x40xf32>) -> tensor<6x40xf32>
  func.return %r : tensor<6x40xf32>
}
