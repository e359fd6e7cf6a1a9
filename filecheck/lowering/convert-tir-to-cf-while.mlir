// RUN: xtc-opt %s -p convert-tir-to-cf | filecheck %s
// RUN: xtc-opt %s -p convert-tir-to-cf | xtc-opt | filecheck %s

// scf.while (as convert-te-to-tir leaves a graph.loop: no arguments, the
// state in buffers): a branch to the `before` block, which branches to the
// `after` block or out; the `after` block branches back.
// CHECK-LABEL: func.func @count
// CHECK:         memref.store %zero, %n[]
// CHECK-NEXT:    cf.br ^[[BEFORE:.*]]
// CHECK-NEXT:  ^[[BEFORE]]:
// CHECK-NEXT:    %[[I:.*]] = memref.load %n[]
// CHECK-NEXT:    %[[BELOW:.*]] = arith.cmpi slt, %[[I]], %limit
// CHECK-NEXT:    cf.cond_br %[[BELOW]], ^[[AFTER:.*]], ^[[EXIT:.*]]
// CHECK-NEXT:  ^[[AFTER]]:
// CHECK:         memref.store %{{.*}}, %n[]
// CHECK-NEXT:    cf.br ^[[BEFORE]]
// CHECK-NEXT:  ^[[EXIT]]:
// CHECK-NEXT:    func.return

// With arguments: the `before` block takes the loop's operands and what
// `after` yields; `scf.condition` forwards its values to `after` or out,
// where they are the loop's results.
// CHECK-LABEL: func.func @sum
// CHECK:         cf.br ^[[BEFORE:.*]](%zero, %zero : i64, i64)
// CHECK-NEXT:  ^[[BEFORE]](%[[I:.*]]: i64, %[[S:.*]]: i64):
// CHECK-NEXT:    %[[BELOW:.*]] = arith.cmpi slt, %[[I]], %limit
// CHECK-NEXT:    cf.cond_br %[[BELOW]], ^[[AFTER:.*]](%[[I]], %[[S]] : i64, i64), ^[[EXIT:.*]](%[[I]], %[[S]] : i64, i64)
// CHECK-NEXT:  ^[[AFTER]](%{{.*}}: i64, %{{.*}}: i64):
// CHECK:         cf.br ^[[BEFORE]](%{{.*}}, %{{.*}} : i64, i64)
// CHECK-NEXT:  ^[[EXIT]](%{{.*}}: i64, %[[R:.*]]: i64):
// CHECK-NEXT:    cf.br ^[[CONTINUE:.*]]
// CHECK-NEXT:  ^[[CONTINUE]]:
// CHECK-NEXT:    func.return %[[R]] : i64

func.func @count(%m: memref<i64>, %n: memref<i64>) {
  %limit = memref.load %m[] : memref<i64>
  %zero = arith.constant 0 : i64
  memref.store %zero, %n[] : memref<i64>
  scf.while () : () -> () {
    %i = memref.load %n[] : memref<i64>
    %below = arith.cmpi slt, %i, %limit : i64
    scf.condition(%below)
  } do {
    %i = memref.load %n[] : memref<i64>
    %one = arith.constant 1 : i64
    %next = arith.addi %i, %one : i64
    memref.store %next, %n[] : memref<i64>
    scf.yield
  }
  func.return
}
func.func @sum(%limit: i64) -> i64 {
  %zero = arith.constant 0 : i64
  %r:2 = scf.while (%i = %zero, %s = %zero) : (i64, i64) -> (i64, i64) {
    %below = arith.cmpi slt, %i, %limit : i64
    scf.condition(%below) %i, %s : i64, i64
  } do {
  ^bb0(%j: i64, %t: i64):
    %one = arith.constant 1 : i64
    %next = arith.addi %j, %one : i64
    %u = arith.addi %t, %j : i64
    scf.yield %next, %u : i64, i64
  }
  func.return %r#1 : i64
}
