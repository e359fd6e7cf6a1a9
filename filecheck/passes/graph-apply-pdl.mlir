// RUN: xtc-opt %s -p 'graph-apply-pdl{file="%S/../../examples/pdl/relu-relu.mlir"}' | filecheck %s --check-prefix=RELU
// RUN: xtc-opt %s -p 'graph-apply-pdl{file="%S/../../examples/pdl/swish.mlir"}' | filecheck %s --check-prefix=SWISH

// A pattern file that is missing, does not parse, or holds no pattern: one line.
// RUN: not xtc-opt %s -p 'graph-apply-pdl{file="%S/no-such-patterns.mlir"}' 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: graph-apply-pdl.mlir: error: graph-apply-pdl: cannot open '{{.*}}no-such-patterns.mlir': no such file
// MISSING-NOT: Traceback
// RUN: echo 'pdl.pattern @broken : benefit(1) {' > %t.garbled.mlir
// RUN: not xtc-opt %s -p 'graph-apply-pdl{file="%t.garbled.mlir"}' 2>&1 | filecheck %s --check-prefix=GARBLED
// GARBLED: graph-apply-pdl.mlir: error: graph-apply-pdl: {{.*}}garbled.mlir:2:1: {{.+}}
// GARBLED-NOT: Traceback
// RUN: not xtc-opt %s -p 'graph-apply-pdl{file="%s"}' 2>&1 | filecheck %s --check-prefix=NONE
// NONE: error: graph-apply-pdl: '{{.*}}graph-apply-pdl.mlir' holds no pdl.pattern

// relu(relu(relu(x))) is one relu; a relu of something else stays.
// RELU-LABEL: func.func @relu_chain
// RELU-NEXT:    %[[R:.*]] = graph.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
// RELU-NEXT:    %[[N:.*]] = graph.neg %[[R]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// RELU-NEXT:    %[[S:.*]] = graph.relu %[[N]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// RELU-NEXT:    func.return %[[R]], %[[S]] : tensor<2x3xf32>, tensor<2x3xf32>
// SWISH-LABEL: func.func @relu_chain
// SWISH-COUNT-4: graph.relu
func.func @relu_chain(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = graph.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.relu %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.relu %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = graph.neg %2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = graph.relu %3 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %2, %4 : tensor<2x3xf32>, tensor<2x3xf32>
}

// x * sigmoid(x) in either order is swish(x); the sigmoid goes with it.
// SWISH-LABEL: func.func @swish
// SWISH-NEXT:    %[[A:.*]] = graph.swish %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
// SWISH-NEXT:    %[[B:.*]] = graph.swish %[[A]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// SWISH-NEXT:    func.return %[[B]] : tensor<2x3xf32>
// RELU-LABEL: func.func @swish
// RELU-COUNT-2: graph.sigmoid
func.func @swish(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s = graph.sigmoid %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = graph.mul %x, %s : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = graph.sigmoid %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.mul %t, %0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %1 : tensor<2x3xf32>
}

// Not a swish: the sigmoid is of another value, or the sigmoid is still
// used elsewhere (then the product becomes a swish and the sigmoid stays).
// SWISH-LABEL: func.func @not_quite_swish
// SWISH-NEXT:    %[[S:.*]] = graph.sigmoid %y : (tensor<3xf32>) -> tensor<3xf32>
// SWISH-NEXT:    %[[M:.*]] = graph.mul %x, %[[S]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// SWISH-NEXT:    %[[T:.*]] = graph.sigmoid %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
// SWISH-NEXT:    %[[W:.*]] = graph.swish %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
// SWISH-NEXT:    func.return %[[M]], %[[T]], %[[W]] : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
func.func @not_quite_swish(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %s = graph.sigmoid %y : (tensor<3xf32>) -> tensor<3xf32>
  %0 = graph.mul %x, %s : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %t = graph.sigmoid %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.mul %x, %t : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0, %t, %1 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
