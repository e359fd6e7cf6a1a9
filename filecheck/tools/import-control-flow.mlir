// RUN: python %S/Inputs/control_flow_models.py %t
// RUN: xtc import %t/if.onnx | filecheck %s --check-prefix=IF
// RUN: xtc import %t/loop.onnx | filecheck %s --check-prefix=LOOP
// RUN: xtc import %t/unrolled.onnx | filecheck %s --check-prefix=UNROLLED

// An If on a condition given at run time: a graph.if holding both branches.
// IF-LABEL: func.func @main(%c: tensor<i1> {graph.name = "c"}, %x: tensor<3xf32> {graph.name = "x"})
// IF-NEXT:    %y = graph.if %c : tensor<i1> -> (tensor<3xf32>) {
// IF-NEXT:      %a = graph.relu %x
// IF-NEXT:      graph.yield %a : tensor<3xf32>
// IF-NEXT:    } else {
// IF-NEXT:      %b = graph.neg %x
// IF-NEXT:      graph.yield %b : tensor<3xf32>
// IF-NEXT:    }
// IF-NEXT:    func.return %y

// A Loop whose trip count is an input: a graph.loop whose body is converted
// once; no condition given is a constant true.
// LOOP-LABEL: func.func @main(%M: tensor<i64> {graph.name = "M"}, %x: tensor<3xf32> {graph.name = "x"})
// LOOP-NEXT:    %[[TRUE:.*]] = graph.constant dense<true> : tensor<i1>
// LOOP-NEXT:    %y = graph.loop %M, %[[TRUE]], (%x) : tensor<i64>, tensor<i1>, (tensor<3xf32>) -> (tensor<3xf32>) {
// LOOP-NEXT:    ^{{.*}}(%i: tensor<i64>, %cond_in: tensor<i1>, %x_in: tensor<3xf32>):
// LOOP-NEXT:      %x_out = graph.add %x_in, %x_in
// LOOP-NEXT:      %cond_out = graph.identity %cond_in
// LOOP-NEXT:      graph.yield %cond_out, %x_out : tensor<i1>, tensor<3xf32>
// LOOP-NEXT:    }

// A constant trip count: unrolled at import, as before.
// UNROLLED-LABEL: func.func @main
// UNROLLED-NEXT:    %[[A:.*]] = graph.add %x, %x
// UNROLLED-NEXT:    %[[B:.*]] = graph.add %[[A]], %[[A]]
// UNROLLED-NEXT:    func.return %[[B]]
// UNROLLED-NOT:     graph.loop
