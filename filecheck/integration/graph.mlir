// RUN: xtc-run %s --fill ones | filecheck %s
// RUN: python -c "import numpy as np; np.savez('%t.npz', x=np.array([[0.5, 1, -1], [2, -3, 4]], np.float32))"
// RUN: xtc-run %s --inputs %t.npz | filecheck %s --check-prefix=NPZ
// RUN: xtc-run %s --inputs %t.npz --native | filecheck %s --check-prefix=NPZ
// RUN: xtc-run %s --inputs %t.npz --output %t.out.npz | filecheck %s --allow-empty --check-prefix=QUIET
// RUN: python -c "import numpy as np; print(np.load('%t.out.npz')['result0'].tolist())" | filecheck %s --check-prefix=SAVED

// A graph-level model: relu(x + w) with w a constant; run by the
// interpreter, and compiled as `xtc compile` would compile it (--native).
// CHECK:      result 0: tensor<2x3xf32>
// CHECK-NEXT: {{\[\[}}2, 0, 4],
// CHECK-NEXT:  [0, 6, 0]]

// NPZ:      result 0: tensor<2x3xf32>
// NPZ-NEXT: {{\[\[}}1.5,   0,   2],
// NPZ-NEXT:  [  0,   2,   0]]

// QUIET-NOT: result

// SAVED: {{\[\[}}1.5, 0.0, 2.0], [0.0, 2.0, 0.0]]
func.func @main(%x: tensor<2x3xf32> {graph.name = "x"}) -> (tensor<2x3xf32> {graph.name = "y"}) {
  %w = graph.constant dense<[[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]]> : tensor<2x3xf32>
  %s = graph.add %x, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = graph.relu %s : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
