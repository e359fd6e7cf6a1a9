// RUN: xtc-opt %s -p te-inline | filecheck %s
// RUN: xtc-opt %s -p te-inline | xtc-opt | filecheck %s
// RUN: xtc-opt %s -p te-inline --print-op-generic | xtc-opt | filecheck %s
// A second run changes nothing more.
// RUN: xtc-opt %s -p te-inline,te-inline | filecheck %s

// A reduction read once at the reader's own index inlines into it, and so
// does each elementwise stage after it: matmul + bias + relu become ONE
// te.compute whose body is the te.reduce, then the epilogue's scalar ops.
// CHECK-LABEL: func.func private @epilogue(
// CHECK-NEXT:    %[[OUT:.*]] = te.compute : tensor<4x5xf32> {
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      %[[S:.*]] = te.reduce {kind = "sum", extents = array<i64: 3>} : f32 {
// CHECK-NEXT:      ^bb0(%[[K:.*]]: index):
// CHECK-NEXT:        %[[X:.*]] = tensor.extract %a[%[[I]], %[[K]]] : tensor<4x3xf32>
// CHECK-NEXT:        %[[Y:.*]] = tensor.extract %b[%[[K]], %[[J]]] : tensor<3x5xf32>
// CHECK-NEXT:        %[[M:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT:        te.yield %[[M]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[C:.*]] = tensor.extract %bias[%[[J]]] : tensor<5xf32>
// CHECK-NEXT:      %[[B:.*]] = arith.addf %[[S]], %[[C]] : f32
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[R:.*]] = arith.maximumf %[[B]], %[[ZERO]] : f32
// CHECK-NEXT:      te.yield %[[R]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[OUT]] : tensor<4x5xf32>
// CHECK-NEXT:  }
func.func private @epilogue(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %bias: tensor<5xf32>) -> tensor<4x5xf32> {
  %mm = te.compute : tensor<4x5xf32> {
  ^bb0(%i: index, %j: index):
    %s = te.reduce {kind = "sum", extents = array<i64: 3>} : f32 {
    ^bb0(%k: index):
      %x = tensor.extract %a[%i, %k] : tensor<4x3xf32>
      %y = tensor.extract %b[%k, %j] : tensor<3x5xf32>
      %m = arith.mulf %x, %y : f32
      te.yield %m : f32
    }
    te.yield %s : f32
  }
  %biased = te.compute : tensor<4x5xf32> {
  ^bb0(%i: index, %j: index):
    %v = tensor.extract %mm[%i, %j] : tensor<4x5xf32>
    %c = tensor.extract %bias[%j] : tensor<5xf32>
    %s = arith.addf %v, %c : f32
    te.yield %s : f32
  }
  %relu = te.compute : tensor<4x5xf32> {
  ^bb0(%i: index, %j: index):
    %v = tensor.extract %biased[%i, %j] : tensor<4x5xf32>
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %v, %zero : f32
    te.yield %r : f32
  }
  func.return %relu : tensor<4x5xf32>
}

// Read inside a reduction, a padding stage (a select) stays a compute of its
// own, so the inner loop has no bounds test; a pure reindexing (a transpose)
// is inlined into the reduction body.
// CHECK-LABEL: func.func private @padded_and_transposed(
// CHECK-NEXT:    %[[PAD:.*]] = te.compute : tensor<6xf32> {
// CHECK:           arith.select
// CHECK:         %[[CONV:.*]] = te.compute : tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      te.reduce {kind = "sum", extents = array<i64: 3>} : f32 {
// CHECK-NEXT:      ^bb0(%[[K:.*]]: index):
// CHECK-NEXT:        %[[AT:.*]] = arith.addi %[[I]], %[[K]] : index
// CHECK-NEXT:        %[[V:.*]] = tensor.extract %[[PAD]][%[[AT]]] : tensor<6xf32>
// CHECK-NEXT:        %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:        %[[T:.*]] = tensor.extract %w[%[[K]], %[[Z]]] : tensor<3x2xf32>
// CHECK-NEXT:        arith.mulf %[[V]], %[[T]] : f32
// CHECK-NOT:     te.compute
// CHECK:         func.return %[[CONV]] : tensor<4xf32>
func.func private @padded_and_transposed(%x: tensor<4xf32>, %w: tensor<3x2xf32>) -> tensor<4xf32> {
  %pad = te.compute : tensor<6xf32> {
  ^bb0(%p: index):
    %one = arith.constant 1 : index
    %src = arith.subi %p, %one : index
    %lo = arith.constant 0 : index
    %hi = arith.constant 3 : index
    %ge = arith.cmpi sge, %src, %lo : index
    %le = arith.cmpi sle, %src, %hi : index
    %in = arith.andi %ge, %le : i1
    %c0 = arith.maxsi %src, %lo : index
    %c = arith.minsi %c0, %hi : index
    %v = tensor.extract %x[%c] : tensor<4xf32>
    %zero = arith.constant 0.0 : f32
    %r = arith.select %in, %v, %zero : f32
    te.yield %r : f32
  }
  %wt = te.compute : tensor<2x3xf32> {
  ^bb0(%o: index, %k: index):
    %v = tensor.extract %w[%k, %o] : tensor<3x2xf32>
    te.yield %v : f32
  }
  %conv = te.compute : tensor<4xf32> {
  ^bb0(%i: index):
    %s = te.reduce {kind = "sum", extents = array<i64: 3>} : f32 {
    ^bb0(%k: index):
      %at = arith.addi %i, %k : index
      %v = tensor.extract %pad[%at] : tensor<6xf32>
      %zero = arith.constant 0 : index
      %t = tensor.extract %wt[%zero, %k] : tensor<2x3xf32>
      %m = arith.mulf %v, %t : f32
      te.yield %m : f32
    }
    te.yield %s : f32
  }
  func.return %conv : tensor<4xf32>
}

// Kept: a reduction read at an index that is not the reader's, permuted
// or not (%sum, its diagonal), a compute that is returned (%neg). An
// elementwise compute read twice (%exp) is copied to both reads.
// CHECK-LABEL: func.func private @kept(
// CHECK-NEXT:    %[[SUM:.*]] = te.compute : tensor<4x4xf32> {
// CHECK:           te.reduce
// CHECK:         %[[TR:.*]] = te.compute : tensor<4x4xf32> {
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      tensor.extract %[[SUM]][%[[I]], %[[I]]]
// CHECK:         %[[TWICE:.*]] = te.compute : tensor<4x4xf32> {
// CHECK-NEXT:    ^bb0(%[[I2:.*]]: index, %[[J2:.*]]: index):
// CHECK-NEXT:      %[[A:.*]] = tensor.extract %x[%[[I2]], %[[J2]]]
// CHECK-NEXT:      %[[EA:.*]] = math.exp %[[A]] : f32
// CHECK-NEXT:      %[[B:.*]] = tensor.extract %x[%[[J2]], %[[I2]]]
// CHECK-NEXT:      %[[EB:.*]] = math.exp %[[B]] : f32
// CHECK-NEXT:      arith.addf %[[EA]], %[[EB]] : f32
// CHECK:         %[[NEG:.*]] = te.compute : tensor<4x4xf32> {
// CHECK:           arith.negf
// CHECK:         %[[SQ:.*]] = te.compute : tensor<4x4xf32> {
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      tensor.extract %[[NEG]][
// CHECK:         func.return %[[TR]], %[[TWICE]], %[[NEG]], %[[SQ]]
func.func private @kept(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %sum = te.compute : tensor<4x4xf32> {
  ^bb0(%i: index, %j: index):
    %s = te.reduce {kind = "sum", extents = array<i64: 4>} : f32 {
    ^bb0(%k: index):
      %v = tensor.extract %x[%i, %k] : tensor<4x4xf32>
      te.yield %v : f32
    }
    te.yield %s : f32
  }
  %transposed = te.compute : tensor<4x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = tensor.extract %sum[%i, %i] : tensor<4x4xf32>
    te.yield %v : f32
  }
  %exp = te.compute : tensor<4x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = tensor.extract %x[%i, %j] : tensor<4x4xf32>
    %e = math.exp %v : f32
    te.yield %e : f32
  }
  %twice = te.compute : tensor<4x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = tensor.extract %exp[%i, %j] : tensor<4x4xf32>
    %w = tensor.extract %exp[%j, %i] : tensor<4x4xf32>
    %s = arith.addf %v, %w : f32
    te.yield %s : f32
  }
  %neg = te.compute : tensor<4x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = tensor.extract %x[%i, %j] : tensor<4x4xf32>
    %n = arith.negf %v : f32
    te.yield %n : f32
  }
  %square = te.compute : tensor<4x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = tensor.extract %neg[%i, %j] : tensor<4x4xf32>
    %s = arith.mulf %v, %v : f32
    te.yield %s : f32
  }
  func.return %transposed, %twice, %neg, %square : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// A reduction read at the reader's indices permuted (a u8 conv's NHWC
// output stored NCHW, index 0 along an axis of 1) is computed there: one
// compute over the reader's shape, the reduction inside.
// CHECK-LABEL: func.func private @transposed_reduction(
// CHECK-NEXT:    %[[T:.*]] = te.compute : tensor<1x3x2xf32> {
// CHECK-NEXT:    ^bb0(%[[N:.*]]: index, %[[C:.*]]: index, %[[X:.*]]: index):
// CHECK:           %[[S:.*]] = te.reduce {kind = "sum", extents = array<i64: 4>} : f32 {
// CHECK:             tensor.extract %x[%[[X]], %[[C]], %{{.*}}] : tensor<2x3x4xf32>
// CHECK:           %[[R:.*]] = arith.negf %[[S]] : f32
// CHECK-NEXT:      te.yield %[[R]] : f32
// CHECK-NOT:     te.compute
// CHECK:         func.return %[[T]]
func.func private @transposed_reduction(%x: tensor<2x3x4xf32>) -> tensor<1x3x2xf32> {
  %sum = te.compute : tensor<1x2x3xf32> {
  ^bb0(%n: index, %i: index, %j: index):
    %s = te.reduce {kind = "sum", extents = array<i64: 4>} : f32 {
    ^bb0(%k: index):
      %v = tensor.extract %x[%i, %j, %k] : tensor<2x3x4xf32>
      te.yield %v : f32
    }
    te.yield %s : f32
  }
  %t = te.compute : tensor<1x3x2xf32> {
  ^bb0(%n: index, %c: index, %p: index):
    %zero = arith.constant 0 : index
    %v = tensor.extract %sum[%zero, %p, %c] : tensor<1x2x3xf32>
    %r = arith.negf %v : f32
    te.yield %r : f32
  }
  func.return %t : tensor<1x3x2xf32>
}

// A compute passed to a call stays.
// CHECK-LABEL: func.func private @passed_to_call(
// CHECK-NEXT:    %[[NEG:.*]] = te.compute
// CHECK:         func.call @kept(%[[NEG]])
// CHECK:         te.compute
// CHECK:           tensor.extract %[[NEG]][
func.func private @passed_to_call(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %neg = te.compute : tensor<4x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = tensor.extract %x[%i, %j] : tensor<4x4xf32>
    %n = arith.negf %v : f32
    te.yield %n : f32
  }
  %r:4 = func.call @kept(%neg) : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>)
  %abs = te.compute : tensor<4x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = tensor.extract %neg[%i, %j] : tensor<4x4xf32>
    %a = math.absf %v : f32
    te.yield %a : f32
  }
  func.return %r#0, %r#1, %r#2, %abs : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// Index 0 on an axis of size 1 is the reader's own index there.
// CHECK-LABEL: func.func private @broadcast_row(
// CHECK-NEXT:    %[[NEG:.*]] = te.compute : tensor<1x4xf32> {
// CHECK:           te.reduce {kind = "max"
// CHECK:           arith.negf
// CHECK-NOT:     te.compute
// CHECK:         func.return %[[NEG]]
func.func private @broadcast_row(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %max = te.compute : tensor<1x4xf32> {
  ^bb0(%i: index, %j: index):
    %s = te.reduce {kind = "max", extents = array<i64: 2>} : f32 {
    ^bb0(%k: index):
      %v = tensor.extract %x[%i, %j] : tensor<1x4xf32>
      te.yield %v : f32
    }
    te.yield %s : f32
  }
  %neg = te.compute : tensor<1x4xf32> {
  ^bb0(%i: index, %j: index):
    %zero = arith.constant 0 : index
    %v = tensor.extract %max[%zero, %j] : tensor<1x4xf32>
    %n = arith.negf %v : f32
    te.yield %n : f32
  }
  func.return %neg : tensor<1x4xf32>
}

// A compute holding a run-time check inlines only where its consumer reads
// each element once, at its own index: checked indices read by a gather
// (another shape) stay their own compute, so that each index is checked once;
// read element by element (GatherElements) they inline.
// CHECK-LABEL: func.func private @checked(
// CHECK-NEXT:    %[[POS:.*]] = te.compute : tensor<2xi64> {
// CHECK:           tir.assert %{{.*}}, "index {} is out of range", %{{.*}} : i64
// CHECK:         %[[ROWS:.*]] = te.compute : tensor<2x3xf32> {
// CHECK:           tensor.extract %[[POS]][%{{.*}}] : tensor<2xi64>
// CHECK:         %[[SAME:.*]] = te.compute : tensor<2xi64> {
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      %[[V:.*]] = tensor.extract %idx[%[[I]]] : tensor<2xi64>
// CHECK:           tir.assert %{{.*}}, "index {} is out of range", %[[V]] : i64
// CHECK:           arith.addi
// CHECK-NOT:     te.compute
// CHECK:         func.return %[[ROWS]], %[[SAME]]
func.func private @checked(%x: tensor<4x3xf32>, %idx: tensor<2xi64>) -> (tensor<2x3xf32>, tensor<2xi64>) {
  %pos = te.compute : tensor<2xi64> {
  ^bb0(%i: index):
    %v = tensor.extract %idx[%i] : tensor<2xi64>
    %four = arith.constant 4 : i64
    %ok = arith.cmpi ult, %v, %four : i64
    tir.assert %ok, "index {} is out of range", %v : i64
    te.yield %v : i64
  }
  %rows = te.compute : tensor<2x3xf32> {
  ^bb0(%i: index, %j: index):
    %p = tensor.extract %pos[%i] : tensor<2xi64>
    %at = arith.index_cast %p : i64 to index
    %r = tensor.extract %x[%at, %j] : tensor<4x3xf32>
    te.yield %r : f32
  }
  %pos2 = te.compute : tensor<2xi64> {
  ^bb0(%i: index):
    %v = tensor.extract %idx[%i] : tensor<2xi64>
    %four = arith.constant 4 : i64
    %ok = arith.cmpi ult, %v, %four : i64
    tir.assert %ok, "index {} is out of range", %v : i64
    te.yield %v : i64
  }
  %same = te.compute : tensor<2xi64> {
  ^bb0(%i: index):
    %p = tensor.extract %pos2[%i] : tensor<2xi64>
    %one = arith.constant 1 : i64
    %q = arith.addi %p, %one : i64
    te.yield %q : i64
  }
  func.return %rows, %same : tensor<2x3xf32>, tensor<2xi64>
}

// A compute marked `materialize` stays a stage of its own though it is
// small and read at two places (a separable resize's rows along the last
// axis); the unmarked copy of it is inlined at both reads.
// CHECK-LABEL: func.func private @materialized(
// CHECK-NEXT:    %[[ROWS:.*]] = te.compute {materialize} : tensor<2x4xf32> {
// CHECK:         te.compute : tensor<4x4xf32> {
// CHECK:           tensor.extract %[[ROWS]]
// CHECK:           tensor.extract %[[ROWS]]
// CHECK:         te.compute : tensor<4x4xf32> {
// CHECK-NOT:       tensor.extract %{{.*}} : tensor<2x4xf32>
// CHECK:         func.return
func.func private @materialized(%x: tensor<2x2xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %rows = te.compute {materialize} : tensor<2x4xf32> {
  ^bb0(%i: index, %j: index):
    %two = arith.constant 2 : index
    %c = arith.divui %j, %two : index
    %v = tensor.extract %x[%i, %c] : tensor<2x2xf32>
    te.yield %v : f32
  }
  %copy = te.compute : tensor<2x4xf32> {
  ^bb0(%i: index, %j: index):
    %two = arith.constant 2 : index
    %c = arith.divui %j, %two : index
    %v = tensor.extract %x[%i, %c] : tensor<2x2xf32>
    te.yield %v : f32
  }
  %out = te.compute : tensor<4x4xf32> {
  ^bb0(%i: index, %j: index):
    %two = arith.constant 2 : index
    %one = arith.constant 1 : index
    %r = arith.divui %i, %two : index
    %s = arith.remui %i, %one : index
    %a = tensor.extract %rows[%r, %j] : tensor<2x4xf32>
    %b = tensor.extract %rows[%s, %j] : tensor<2x4xf32>
    %m = arith.addf %a, %b : f32
    te.yield %m : f32
  }
  %out2 = te.compute : tensor<4x4xf32> {
  ^bb0(%i: index, %j: index):
    %two = arith.constant 2 : index
    %one = arith.constant 1 : index
    %r = arith.divui %i, %two : index
    %s = arith.remui %i, %one : index
    %a = tensor.extract %copy[%r, %j] : tensor<2x4xf32>
    %b = tensor.extract %copy[%s, %j] : tensor<2x4xf32>
    %m = arith.addf %a, %b : f32
    te.yield %m : f32
  }
  func.return %out, %out2 : tensor<4x4xf32>, tensor<4x4xf32>
}

// The model's function is left as it is.
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    func.call @epilogue(%a, %b, %bias)
func.func @main(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %bias: tensor<5xf32>) -> tensor<4x5xf32> {
  %r = func.call @epilogue(%a, %b, %bias) : (tensor<4x3xf32>, tensor<3x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  func.return %r : tensor<4x5xf32>
}
