// RUN: xtc-opt %s -p convert-graph-to-te | filecheck %s
// RUN: xtc-opt %s -p convert-graph-to-te | xtc-opt | filecheck %s
// RUN: xtc-opt %s -p convert-graph-to-te --print-op-generic | xtc-opt | filecheck %s
// RUN: xtc-opt %s -p convert-graph-to-te | filecheck %s --check-prefix=GONE

// Each graph op becomes a call; identical ops (class, operand types,
// properties) share one kernel; @main keeps its signature, its attributes and
// its constants.
// CHECK-LABEL: func.func @main(%x: tensor<2x3xf32> {graph.name = "x"}, %b: tensor<3xf32> {graph.name = "b"}) -> (tensor<2x3xf32> {graph.name = "y"}) {
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %[[S:.*]] = func.call @add_0(%x, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[T:.*]] = func.call @add_0(%[[S]], %[[W]]) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[D:.*]] = func.call @add_1(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[L:.*]] = func.call @leaky_relu_0(%[[T]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[L2:.*]] = func.call @leaky_relu_1(%[[D]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[R:.*]] = func.call @relu_0(%[[L]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<2x3xf32>
// CHECK-NEXT:  }
// CHECK-NOT:   graph.add
func.func @main(%x: tensor<2x3xf32> {graph.name = "x"}, %b: tensor<3xf32> {graph.name = "b"}) -> (tensor<2x3xf32> {graph.name = "y"}) {
  %w = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %s = graph.add %x, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %t = graph.add %s, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %d = graph.add %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = graph.leaky_relu %t {alpha = 0.5 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %l2 = graph.leaky_relu %d {alpha = 0.25 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = graph.relu %l : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// Every function is converted; kernels are shared across functions.
// CHECK-LABEL: func.func @other(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    %{{.*}} = func.call @relu_0(%a)
func.func @other(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = graph.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @ints(
// CHECK:         func.call @div_0(%a, %c)
// CHECK:         func.call @gather_0(%x, %i)
func.func @ints(%a: tensor<4xi32>, %c: tensor<4xi32>, %x: tensor<5x3xf32>, %i: tensor<2xi64>) -> (tensor<4xi32>, tensor<2x3xf32>) {
  %q = graph.div %a, %c : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %g = graph.gather %x, %i : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32> loc("g")
  func.return %q, %g : tensor<4xi32>, tensor<2x3xf32>
}

// A multi-result op calls a multi-result kernel.
// CHECK-LABEL: func.func @shapes(
// CHECK-NEXT:    func.call @reshape_0(%a)
// CHECK-NEXT:    func.call @concat_0(%a, %c)
// CHECK-NEXT:    %[[P:.*]], %[[P1:.*]] = func.call @split_0(%a) : (tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x2xf32>)
func.func @shapes(%a: tensor<2x3xf32>, %c: tensor<2x1xf32>) -> (tensor<6xf32>, tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x2xf32>) {
  %f = graph.reshape %a {shape = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
  %j = graph.concat %a, %c {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %p:2 = graph.split %a {axis = 1 : i64, sizes = array<i64: 1, 2>} : (tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x2xf32>)
  func.return %f, %j, %p#0, %p#1 : tensor<6xf32>, tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x2xf32>
}

// CHECK-LABEL: func.func @reductions(
// CHECK-NEXT:    func.call @reduce_mean_0(%a)
// CHECK-NEXT:    func.call @argmax_0(%a)
func.func @reductions(%a: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x1xi64>) {
  %m = graph.reduce_mean %a {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  %i = graph.argmax %a {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xi64>
  func.return %m, %i : tensor<2xf32>, tensor<2x1xi64>
}

// A call of a graph.primitive function (a fused group, from graph-fuse-ops)
// calls one kernel computing all its ops; primitive functions with the same
// ops wired the same way share it (@fused_relu_add_2 and _3 read their
// arguments the other way round: two kernels). The primitive functions are gone.
// CHECK-LABEL: func.func @fused(
// CHECK-NEXT:    %[[Y:.*]] = func.call @fused_conv2d_bias_add_relu_0(%x, %w, %b) : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %[[Z:.*]] = func.call @fused_conv2d_bias_add_relu_0(%[[Y]], %w, %b)
// CHECK-NEXT:    %[[S:.*]] = func.call @fused_relu_add_0(%[[Z]], %[[Y]])
// CHECK-NEXT:    %[[T:.*]] = func.call @fused_relu_add_1(%[[Y]], %[[Z]])
// CHECK-NEXT:    func.return %[[S]], %[[T]]
// GONE-NOT:    graph.primitive
// GONE-NOT:    = graph.relu
func.func @fused(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>, %b: tensor<2xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %y = func.call @fused_conv2d_bias_add_relu_0(%x, %w, %b) : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %z = func.call @fused_conv2d_bias_add_relu_1(%y, %w, %b) : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %s = func.call @fused_relu_add_2(%z, %y) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %t = func.call @fused_relu_add_3(%y, %z) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %s, %t : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
func.func private @fused_conv2d_bias_add_relu_0(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x4x4xf32> attributes {graph.primitive} {
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %y = graph.bias_add %c, %b {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r = graph.relu %y : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %r : tensor<1x2x4x4xf32>
}
func.func private @fused_conv2d_bias_add_relu_1(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x4x4xf32> attributes {graph.primitive} {
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %y = graph.bias_add %c, %b {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r = graph.relu %y : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %r : tensor<1x2x4x4xf32>
}
func.func private @fused_relu_add_2(%p: tensor<1x2x4x4xf32>, %q: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> attributes {graph.primitive} {
  %r = graph.relu %p : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %a = graph.add %r, %q : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %a : tensor<1x2x4x4xf32>
}
func.func private @fused_relu_add_3(%p: tensor<1x2x4x4xf32>, %q: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> attributes {graph.primitive} {
  %r = graph.relu %q : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %a = graph.add %r, %p : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %a : tensor<1x2x4x4xf32>
}

// The kernels follow, in the order they were first needed; each names the
// graph ops it computes in `te.ops`.

// A broadcast operand is read at index 0 on its size-1 (or missing) axes.
// CHECK-LABEL: func.func private @add_0(%0: tensor<2x3xf32>, %1: tensor<3xf32>) -> tensor<2x3xf32> attributes {te.ops = ["graph.add"]} {
// CHECK-NEXT:    %[[C:.*]] = te.compute : tensor<2x3xf32> {
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      %[[A:.*]] = tensor.extract %0[%[[I]], %[[J]]] : tensor<2x3xf32>
// CHECK-NEXT:      %[[B:.*]] = tensor.extract %1[%[[J]]] : tensor<3xf32>
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      te.yield %[[SUM]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[C]] : tensor<2x3xf32>
// CHECK-NEXT:  }

// CHECK-LABEL: func.func private @add_1(%0: tensor<2x3xf32>, %1: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {te.ops = ["graph.add"]} {

// CHECK-LABEL: func.func private @leaky_relu_0(
// CHECK:         arith.constant 5.000000e-01 : f32
// CHECK-LABEL: func.func private @leaky_relu_1(
// CHECK:         arith.constant 2.500000e-01 : f32

// CHECK-LABEL: func.func private @relu_0(
// CHECK:         arith.maximumf

// An integer divisor of zero is a run-time fault (tir.assert: the op carries
// no node name here, so the message names its kind only); the division never
// traps: 0 and -1 divisors are replaced, then selected.
// CHECK-LABEL: func.func private @div_0(%0: tensor<4xi32>, %1: tensor<4xi32>) -> tensor<4xi32> attributes {te.ops = ["graph.div"]} {
// CHECK:         %[[NONZERO:.*]] = arith.cmpi ne, %[[D:.*]], %{{.*}} : i32
// CHECK-NEXT:    tir.assert %[[NONZERO]], "Div: integer division by zero"
// CHECK:         %[[ZERO:.*]] = arith.cmpi eq, %[[Y:.*]], %{{.*}} : i32
// CHECK:         %[[MINUS:.*]] = arith.cmpi eq, %[[Y]], %{{.*}} : i32
// CHECK:         %[[BAD:.*]] = arith.ori %[[ZERO]], %[[MINUS]] : i1
// CHECK:         %[[SAFE:.*]] = arith.select %[[BAD]], %{{.*}}, %[[Y]] : i32
// CHECK:         arith.divsi %{{.*}}, %[[SAFE]] : i32

// Each index is checked once, in a compute over the indices whose message
// names the node (its location, as the importer sets it), the range and the
// axis; a negative index counts from the end, and any index is clamped into
// the axis, so that the gather never reads outside the data.
// CHECK-LABEL: func.func private @gather_0(%0: tensor<5x3xf32>, %1: tensor<2xi64>) -> tensor<2x3xf32> attributes {te.ops = ["graph.gather"]} {
// CHECK-NEXT:    %[[POS:.*]] = te.compute : tensor<2xi64> {
// CHECK-NEXT:    ^bb0(%[[T:.*]]: index):
// CHECK-NEXT:      %[[V:.*]] = tensor.extract %1[%[[T]]] : tensor<2xi64>
// CHECK:           %[[LOW:.*]] = arith.cmpi sge, %[[V]], %{{.*}} : i64
// CHECK:           %[[HIGH:.*]] = arith.cmpi slt, %[[V]], %{{.*}} : i64
// CHECK-NEXT:      %[[OK:.*]] = arith.andi %[[LOW]], %[[HIGH]] : i1
// CHECK-NEXT:      tir.assert %[[OK]], "Gather node 'g': index {} is out of range [-5, 5) on axis 0 of tensor<5x3xf32>", %[[V]] : i64
// CHECK:           arith.minsi
// CHECK:         %[[ROWS:.*]] = te.compute : tensor<2x3xf32> {
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      %[[P:.*]] = tensor.extract %[[POS]][%[[I]]] : tensor<2xi64>
// CHECK-NEXT:      %[[AT:.*]] = arith.index_cast %[[P]] : i64 to index
// CHECK-NEXT:      tensor.extract %0[%[[AT]], %[[J]]] : tensor<5x3xf32>
// CHECK:         func.return %[[ROWS]] : tensor<2x3xf32>

// A reshape divides the flat index among the input's axes.
// CHECK-LABEL: func.func private @reshape_0(
// CHECK:         arith.divui
// CHECK:         arith.remui
// CHECK:         tensor.extract %0[

// Concat selects among the inputs; each read is clamped into its input.
// CHECK-LABEL: func.func private @concat_0(
// CHECK:         %[[SECOND:.*]] = tensor.extract %1[
// CHECK:         %[[FIRST_AXIS:.*]] = arith.cmpi slt,
// CHECK:         %[[CLAMPED:.*]] = arith.minsi
// CHECK:         %[[FIRST:.*]] = tensor.extract %0[%{{.*}}, %[[CLAMPED]]]
// CHECK:         arith.select %[[FIRST_AXIS]], %[[FIRST]], %[[SECOND]] : f32

// CHECK-LABEL: func.func private @split_0(%0: tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x2xf32>) attributes {te.ops = ["graph.split"]} {
// CHECK:         te.compute : tensor<2x1xf32>
// CHECK:         te.compute : tensor<2x2xf32>
// CHECK:         func.return %{{.*}}, %{{.*}} : tensor<2x1xf32>, tensor<2x2xf32>

// CHECK-LABEL: func.func private @reduce_mean_0(%0: tensor<2x3xf32>) -> tensor<2xf32> attributes {te.ops = ["graph.reduce_mean"]} {
// CHECK:         %[[TOTAL:.*]] = te.reduce {kind = "sum", extents = array<i64: 3>} : f32 {
// CHECK:         arith.divf %[[TOTAL]], %{{.*}} : f32

// argmax: the maximum, then the first index holding it (a NaN's index first).
// CHECK-LABEL: func.func private @argmax_0(%0: tensor<2x3xf32>) -> tensor<2x1xi64> attributes {te.ops = ["graph.argmax"]} {
// CHECK:         %[[MAX:.*]] = te.reduce {kind = "max", extents = array<i64: 3>} : f32 {
// CHECK:         te.reduce {kind = "min", extents = array<i64: 3>} : i64 {
// CHECK:           arith.cmpf oeq, %{{.*}}, %[[MAX]] : f32
// CHECK:           arith.cmpf uno

// The fused kernel: each op's te.computes in order (conv2d's padding stage and
// reduction, bias_add, relu), returning the group's output; te.ops names the ops.
// CHECK-LABEL: func.func private @fused_conv2d_bias_add_relu_0(%0: tensor<1x2x4x4xf32>, %1: tensor<2x2x3x3xf32>, %2: tensor<2xf32>) -> tensor<1x2x4x4xf32> attributes {te.ops = ["graph.conv2d", "graph.bias_add", "graph.relu"]} {
// CHECK-NEXT:    %[[PAD:.*]] = te.compute : tensor<1x2x6x6xf32> {
// CHECK:         %[[CONV:.*]] = te.compute : tensor<1x2x4x4xf32> {
// CHECK:           te.reduce {kind = "sum", extents = array<i64: 2, 3, 3>} : f32 {
// CHECK:             tensor.extract %[[PAD]]
// CHECK:         %[[BIAS:.*]] = te.compute : tensor<1x2x4x4xf32> {
// CHECK:           tensor.extract %[[CONV]]
// CHECK:           tensor.extract %2
// CHECK:           arith.addf
// CHECK:         %[[RELU:.*]] = te.compute : tensor<1x2x4x4xf32> {
// CHECK:           tensor.extract %[[BIAS]]
// CHECK:           arith.maximumf
// CHECK:         func.return %[[RELU]] : tensor<1x2x4x4xf32>
// CHECK-NEXT:  }

// CHECK-LABEL: func.func private @fused_relu_add_0(%0: tensor<1x2x4x4xf32>, %1: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> attributes {te.ops = ["graph.relu", "graph.add"]} {
// CHECK-NEXT:    %[[R:.*]] = te.compute
// CHECK:           tensor.extract %0[
// CHECK:         %[[A:.*]] = te.compute
// CHECK:           tensor.extract %[[R]][
// CHECK:           tensor.extract %1[
// CHECK:         func.return %[[A]]
// CHECK-LABEL: func.func private @fused_relu_add_1(
// CHECK-NEXT:    te.compute
// CHECK:           tensor.extract %1[

// A grouped conv with weights in blocks of 4 output channels (2 blocks per
// group of 8) reads input channel (oc floordiv 4) floordiv 2 * 2 + c: the
// group from the block, so that splitting oc by the block leaves the group
// the outer loop's, one per vector.
// CHECK-LABEL: func.func private @conv2d_0(%0: tensor<1x4x3x3xf32>, %1: tensor<4x2x1x1x4xf32>) -> tensor<1x16x3x3xf32> attributes {te.ops = ["graph.conv2d"]} {
// CHECK:         ^bb0(%{{.*}}: index, %[[OC:.*]]: index, %{{.*}}: index, %{{.*}}: index):
// CHECK:           ^bb0(%[[C:.*]]: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT:        %[[B:.*]] = arith.constant 4 : index
// CHECK-NEXT:        %[[BLOCK:.*]] = arith.floordivsi %[[OC]], %[[B]] : index
// CHECK-NEXT:        %[[PER:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[GROUP:.*]] = arith.floordivsi %[[BLOCK]], %[[PER]] : index
// CHECK-NEXT:        %[[CG:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[FIRST:.*]] = arith.muli %[[GROUP]], %[[CG]] : index
// CHECK-NEXT:        %[[CHANNEL:.*]] = arith.addi %[[FIRST]], %[[C]] : index
// CHECK:             tensor.extract %0[%{{.*}}, %[[CHANNEL]], %{{.*}}, %{{.*}}] : tensor<1x4x3x3xf32>
// CHECK-NOT:   func.func
func.func @conv_grouped_blocked(%x: tensor<1x4x3x3xf32>, %w: tensor<4x2x1x1x4xf32>) -> tensor<1x16x3x3xf32> {
  %c = graph.conv2d %x, %w {groups = 2 : i64, kernel_layout = "OIHW4o"} : (tensor<1x4x3x3xf32>, tensor<4x2x1x1x4xf32>) -> tensor<1x16x3x3xf32>
  func.return %c : tensor<1x16x3x3xf32>
}

// A depthwise conv on NCHW4c activations (its weight in OIHW4o, as
// graph-block-activations makes it) sums over its 3x3 taps only: input
// block, lane and weight block are the output's (channel block %[[OB]],
// lane %[[L]]), the weight's input channel 0.
// CHECK-LABEL: func.func private @conv2d_1(%0: tensor<1x2x4x4x4xf32>, %1: tensor<2x1x3x3x4xf32>) -> tensor<1x2x2x2x4xf32> attributes {te.ops = ["graph.conv2d"]} {
// CHECK:         te.compute : tensor<1x2x2x2x4xf32> {
// CHECK-NEXT:    ^bb0(%[[N:.*]]: index, %[[OB:.*]]: index, %[[Y:.*]]: index, %[[X:.*]]: index, %[[L:.*]]: index):
// CHECK-NEXT:      te.reduce {kind = "sum", extents = array<i64: 3, 3>} : f32 {
// CHECK-NEXT:      ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK:             %[[V:.*]] = tensor.extract %{{.*}}[%[[N]], %[[OB]], %{{.*}}, %{{.*}}, %[[L]]] : tensor<1x2x6x6x4xf32>
// CHECK-NEXT:        %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:        %[[W:.*]] = tensor.extract %1[%[[OB]], %[[ZERO]], %[[I]], %[[J]], %[[L]]] : tensor<2x1x3x3x4xf32>
// CHECK-NEXT:        arith.mulf %[[V]], %[[W]] : f32
func.func @conv_depthwise_blocked(%x: tensor<1x2x4x4x4xf32>, %w: tensor<2x1x3x3x4xf32>) -> tensor<1x2x2x2x4xf32> {
  %c = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, groups = 8 : i64, kernel_layout = "OIHW4o", data_layout = "NCHW4c", out_layout = "NCHW4c"} : (tensor<1x2x4x4x4xf32>, tensor<2x1x3x3x4xf32>) -> tensor<1x2x2x2x4xf32>
  func.return %c : tensor<1x2x2x2x4xf32>
}

// A float max / min against a constant zero (ReLU, a clip at 0) is nsz:
// which zero max(-0, +0) gives is unspecified, as for np.maximum, and x86
// takes one vmaxps a vector for it. A clip at another bound keeps its flags.
// CHECK-LABEL: func.func private @relu_{{[0-9]+}}(%0: tensor<4xf32>) -> tensor<4xf32>
// CHECK:         arith.maximumf %{{.*}}, %{{.*}} fastmath<nsz> : f32
// CHECK-LABEL: func.func private @clip_{{[0-9]+}}(%0: tensor<4xf32>) -> tensor<4xf32>
// CHECK:         arith.maximumf %{{.*}}, %{{.*}} fastmath<nsz> : f32
// CHECK-NEXT:    arith.constant 6.000000e+00 : f32
// CHECK-NEXT:    arith.minimumf %{{.*}}, %{{.*}} : f32
// CHECK-LABEL: func.func private @clip_{{[0-9]+}}(%0: tensor<4xf32>) -> tensor<4xf32>
// CHECK:         arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    arith.constant 6.000000e+00 : f32
// CHECK-NEXT:    arith.minimumf %{{.*}}, %{{.*}} : f32
func.func @relu_clip(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r = graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  %c = graph.clip %a {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %d = graph.clip %a {min = 1.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r, %c, %d : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
