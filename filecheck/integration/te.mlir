// RUN: xtc-run %s --fill ones | filecheck %s
// RUN: xtc-run %s --fill ones --native | filecheck %s
// RUN: xtc-run %s --entry matmul_0 --fill ones | filecheck %s --check-prefix=KERNEL

// A te-level module: @main calls a matmul kernel and adds a constant; run by
// the interpreter, and natively (lowered with convert-te-to-tir, then
// convert-tir-to-llvm). --entry runs the kernel alone.
// CHECK:      result 0: tensor<2x2xf32>
// CHECK-NEXT: {{\[\[}}3, 4],
// CHECK-NEXT:  [5, 6]]

// KERNEL:      result 0: tensor<2x2xf32>
// KERNEL-NEXT: {{\[\[}}3, 3],
// KERNEL-NEXT:  [3, 3]]
func.func @main(%a: tensor<2x3xf32> {graph.name = "a"}, %b: tensor<3x2xf32> {graph.name = "b"}) -> tensor<2x2xf32> {
  %w = graph.constant dense<[[0.0, 1.0], [2.0, 3.0]]> : tensor<2x2xf32>
  %m = func.call @matmul_0(%a, %b) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %s = func.call @add_0(%m, %w) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %s : tensor<2x2xf32>
}

func.func private @matmul_0(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %c = te.compute : tensor<2x2xf32> {
  ^bb0(%i: index, %j: index):
    %s = te.reduce {kind = "sum", extents = array<i64: 3>} : f32 {
    ^bb0(%k: index):
      %x = tensor.extract %a[%i, %k] : tensor<2x3xf32>
      %y = tensor.extract %b[%k, %j] : tensor<3x2xf32>
      %m = arith.mulf %x, %y : f32
      te.yield %m : f32
    }
    te.yield %s : f32
  }
  func.return %c : tensor<2x2xf32>
}

func.func private @add_0(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c = te.compute : tensor<2x2xf32> {
  ^bb0(%i: index, %j: index):
    %u = tensor.extract %x[%i, %j] : tensor<2x2xf32>
    %v = tensor.extract %y[%i, %j] : tensor<2x2xf32>
    %s = arith.addf %u, %v : f32
    te.yield %s : f32
  }
  func.return %c : tensor<2x2xf32>
}
