// mul(x, sigmoid(x)) -> swish(x), with the product in either order.
// The sigmoid and the product have x's type (%type), so a product that
// broadcasts x against something else is not matched.
// Apply: xtc-opt model.mlir -p 'graph-apply-pdl{file="examples/pdl/swish.mlir"}'
pdl.pattern @swish_of_x_times_sigmoid : benefit(1) {
  %x = pdl.operand
  %type = pdl.type
  %sigmoid = pdl.operation "graph.sigmoid"(%x : !pdl.value) -> (%type : !pdl.type)
  %gate = pdl.result 0 of %sigmoid
  %mul = pdl.operation "graph.mul"(%x, %gate : !pdl.value, !pdl.value) -> (%type : !pdl.type)
  pdl.rewrite %mul {
    %swish = pdl.operation "graph.swish"(%x : !pdl.value) -> (%type : !pdl.type)
    pdl.replace %mul with %swish
  }
}

pdl.pattern @swish_of_sigmoid_times_x : benefit(1) {
  %x = pdl.operand
  %type = pdl.type
  %sigmoid = pdl.operation "graph.sigmoid"(%x : !pdl.value) -> (%type : !pdl.type)
  %gate = pdl.result 0 of %sigmoid
  %mul = pdl.operation "graph.mul"(%gate, %x : !pdl.value, !pdl.value) -> (%type : !pdl.type)
  pdl.rewrite %mul {
    %swish = pdl.operation "graph.swish"(%x : !pdl.value) -> (%type : !pdl.type)
    pdl.replace %mul with %swish
  }
}
