// relu(relu(x)) -> relu(x): relu is idempotent, so the outer relu is
// replaced by the inner one's result.
// Apply: xtc-opt model.mlir -p 'graph-apply-pdl{file="examples/pdl/relu-relu.mlir"}'
pdl.pattern @relu_of_relu : benefit(1) {
  %x = pdl.operand
  %type = pdl.type
  %inner = pdl.operation "graph.relu"(%x : !pdl.value) -> (%type : !pdl.type)
  %y = pdl.result 0 of %inner
  %outer = pdl.operation "graph.relu"(%y : !pdl.value) -> (%type : !pdl.type)
  pdl.rewrite %outer {
    pdl.replace %outer with (%y : !pdl.value)
  }
}
