// xDSL's dce works on graph ops: unused Pure ops (and constants) are removed.
// RUN: xtc-opt %s -p dce | filecheck %s

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[R:.*]] = graph.relu %x
// CHECK-NEXT:    func.return %[[R]]
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = graph.constant dense<2.0> : tensor<3xf32>
  %dead = graph.add %x, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %dead2 = graph.exp %dead : (tensor<3xf32>) -> tensor<3xf32>
  %r = graph.relu %x : (tensor<3xf32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}

// A run-time check has an effect (the fault it records): it stays, and so do
// the values it checks, and a te.compute holding one stays though nothing
// reads its result; a pure compute nothing reads goes.
// CHECK-LABEL: func.func @checks
// CHECK:         %[[OK:.*]] = arith.cmpi ne, %d, %{{.*}} : i32
// CHECK-NEXT:    tir.assert %[[OK]], "Div: integer division by zero"
// CHECK-NEXT:    %{{.*}} = te.compute : tensor<2xi64> {
// CHECK:           tir.assert
// CHECK-NEXT:      te.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @checks(%d: i32, %idx: tensor<2xi64>) {
  %zero = arith.constant 0 : i32
  %ok = arith.cmpi ne, %d, %zero : i32
  tir.assert %ok, "Div: integer division by zero"
  %checked = te.compute : tensor<2xi64> {
  ^bb0(%i: index):
    %v = tensor.extract %idx[%i] : tensor<2xi64>
    %four = arith.constant 4 : i64
    %in = arith.cmpi ult, %v, %four : i64
    tir.assert %in, "index {} is out of range", %v : i64
    te.yield %v : i64
  }
  %unread = te.compute : tensor<2xi64> {
  ^bb0(%i: index):
    %v = tensor.extract %idx[%i] : tensor<2xi64>
    te.yield %v : i64
  }
  func.return
}
