// RUN: xtc-opt %s -p convert-te-to-tir | filecheck %s
// RUN: xtc-opt %s -p convert-te-to-tir | xtc-opt | filecheck %s

// graph.if: an scf.if on the loaded condition. The result buffer is
// allocated before it and written by each branch: a kernel computing the
// yielded value writes straight into it, another value is copied. The
// buffers of the branches are allocated before the scf.if too, so that they
// live across it.
// CHECK-LABEL: func.func @pick(%c: memref<i1>, %x: memref<4xf32>, %out0: memref<4xf32> {graph.output = 0 : i64}) {
// CHECK-NEXT:    %[[R:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    %[[C:.*]] = memref.load %c[] : memref<i1>
// CHECK-NEXT:    %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    scf.if %[[C]] {
// CHECK-NEXT:      func.call @relu_0(%x, %[[A]])
// CHECK-NEXT:      func.call @relu_0(%[[A]], %[[R]])
// CHECK-NEXT:    } else {
// CHECK-NEXT:      "memref.copy"(%x, %[[R]])
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK-NEXT:    func.call @add_0(%[[R]], %x, %out0)
// CHECK-NEXT:    memref.dealloc %[[R]]
// CHECK-NEXT:    func.return

// graph.loop: an scf.while over buffers. The carried values live in the
// result buffers (here the outputs), set from the operands first; the
// iteration number and the condition in buffers of their own. Each
// iteration stores the next condition, copies the yielded values into the
// carried buffers (one carried buffer yielded in another's place through a
// temporary) and steps the iteration number.
// CHECK-LABEL: func.func @repeat(%m: memref<i64>, %c: memref<i1>, %x: memref<4xf32>, %y: memref<4xf32>, %out0: memref<4xf32> {graph.output = 0 : i64}, %out1: memref<4xf32> {graph.output = 1 : i64}) {
// CHECK-NEXT:    "memref.copy"(%x, %out0)
// CHECK-NEXT:    "memref.copy"(%y, %out1)
// CHECK-NEXT:    %iteration = memref.alloc() {alignment = 64 : i64} : memref<i64>
// CHECK-NEXT:    %condition = memref.alloc() {alignment = 64 : i64} : memref<i1>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    memref.store %[[ZERO]], %iteration[]
// CHECK-NEXT:    %[[C:.*]] = memref.load %c[]
// CHECK-NEXT:    memref.store %[[C]], %condition[]
// CHECK-NEXT:    %[[M:.*]] = memref.load %m[]
// CHECK-NEXT:    %[[D:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1xi1>
// CHECK-NEXT:    %[[T:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    scf.while () : () -> () {
// CHECK-NEXT:      %[[I:.*]] = memref.load %iteration[]
// CHECK-NEXT:      %[[G:.*]] = memref.load %condition[]
// CHECK-NEXT:      %[[BELOW:.*]] = arith.cmpi slt, %[[I]], %[[M]] : i64
// CHECK-NEXT:      %[[GO:.*]] = arith.andi %[[G]], %[[BELOW]] : i1
// CHECK-NEXT:      scf.condition(%[[GO]])
// CHECK-NEXT:    } do {
// CHECK-NEXT:      func.call @add_0(%out0, %out1, %[[D]])
// CHECK-NEXT:      func.call @positive_0(%[[D]], %[[P]])
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[NEXT:.*]] = memref.load %[[P]][%[[Z]]] : memref<1xi1>
// CHECK-NEXT:      memref.store %[[NEXT]], %condition[]
// CHECK-NEXT:      "memref.copy"(%out1, %[[T]])
// CHECK-NEXT:      "memref.copy"(%[[T]], %out0)
// CHECK-NEXT:      "memref.copy"(%[[D]], %out1)
// CHECK-NEXT:      %[[I2:.*]] = memref.load %iteration[]
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:      %[[I3:.*]] = arith.addi %[[I2]], %[[ONE]] : i64
// CHECK-NEXT:      memref.store %[[I3]], %iteration[]
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[T]]
// CHECK-NEXT:    memref.dealloc %[[P]]
// CHECK-NEXT:    memref.dealloc %[[D]]
// CHECK-NEXT:    memref.dealloc %condition
// CHECK-NEXT:    memref.dealloc %iteration
// CHECK-NEXT:    func.return

func.func private @relu_0(tensor<4xf32>) -> tensor<4xf32>
func.func private @add_0(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
func.func private @positive_0(tensor<4xf32>) -> tensor<1xi1>
func.func @pick(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.if %c : tensor<i1> -> (tensor<4xf32>) {
    %a = func.call @relu_0(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %b = func.call @relu_0(%a) : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %b : tensor<4xf32>
  } else {
    graph.yield %x : tensor<4xf32>
  }
  %s = func.call @add_0(%r, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
func.func @repeat(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = graph.loop %m, %c, (%x, %y) : tensor<i64>, tensor<i1>, (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %a: tensor<4xf32>, %b: tensor<4xf32>):
    %d = func.call @add_0(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %p = func.call @positive_0(%d) : (tensor<4xf32>) -> tensor<1xi1>
    graph.yield %p, %b, %d : tensor<1xi1>, tensor<4xf32>, tensor<4xf32>
  }
  func.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
