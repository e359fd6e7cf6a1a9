// RUN: xtc-opt %s -p convert-te-to-tir --split-input-file --diagnostics-to-output | filecheck %s

// Elementwise: one serial loop per dimension, the result stored into the
// output argument that replaces the function's result.
// CHECK-LABEL: func.func private @exp_0(%x: memref<2x3xf32>, %out0: memref<2x3xf32> {graph.output = 0 : i64}) {
// CHECK-NEXT:    tir.for %[[I:.*]] = 0 to 2 step 1 {name = "i0", kind = "serial"} {
// CHECK-NEXT:      tir.for %[[J:.*]] = 0 to 3 step 1 {name = "i1", kind = "serial"} {
// CHECK-NEXT:        %[[X:.*]] = memref.load %x[%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NEXT:        %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT:        memref.store %[[E]], %out0[%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func private @exp_0(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = te.compute : tensor<2x3xf32> {
  ^bb0(%i: index, %j: index):
    %a = tensor.extract %x[%i, %j] : tensor<2x3xf32>
    %e = math.exp %a : f32
    te.yield %e : f32
  }
  func.return %0 : tensor<2x3xf32>
}

// -----

// A sum reduction: an alloca accumulator set to 0, a nest "r0" that adds
// each term, the accumulator loaded after.
// CHECK-LABEL: func.func private @matmul_0(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %out0: memref<4x5xf32> {graph.output = 0 : i64}) {
// CHECK-NEXT:    tir.for %[[I:.*]] = 0 to 4 step 1 {name = "i0", kind = "serial"} {
// CHECK-NEXT:      tir.for %[[J:.*]] = 0 to 5 step 1 {name = "i1", kind = "serial"} {
// CHECK-NEXT:        %[[ACC:.*]] = memref.alloca() : memref<f32>
// CHECK-NEXT:        %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        memref.store %[[ZERO]], %[[ACC]][] : memref<f32>
// CHECK-NEXT:        tir.for %[[K:.*]] = 0 to 3 step 1 {name = "r0", kind = "serial"} {
// CHECK-NEXT:          %[[A:.*]] = memref.load %a[%[[I]], %[[K]]] : memref<4x3xf32>
// CHECK-NEXT:          %[[B:.*]] = memref.load %b[%[[K]], %[[J]]] : memref<3x5xf32>
// CHECK-NEXT:          %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:          %[[OLD:.*]] = memref.load %[[ACC]][] : memref<f32>
// CHECK-NEXT:          %[[NEW:.*]] = arith.addf %[[OLD]], %[[M]] : f32
// CHECK-NEXT:          memref.store %[[NEW]], %[[ACC]][] : memref<f32>
// CHECK-NEXT:        }
// CHECK-NEXT:        %[[S:.*]] = memref.load %[[ACC]][] : memref<f32>
// CHECK-NEXT:        memref.store %[[S]], %out0[%[[I]], %[[J]]] : memref<4x5xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func private @matmul_0(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %c = te.compute : tensor<4x5xf32> {
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
  func.return %c : tensor<4x5xf32>
}

// -----

// max over two axes starts at -inf; a rank-0 result has no loops of its own.
// The fold is maximumf nsz (which of -0 and +0 wins is unspecified, as for
// np.max; NaN still propagates): llvm.maximum nsz, half the x86 instructions.
// CHECK-LABEL: func.func private @reduce_max_0(%x: memref<3x4xf32>, %out0: memref<f32> {graph.output = 0 : i64}) {
// CHECK-NEXT:    %[[ACC:.*]] = memref.alloca() : memref<f32>
// CHECK-NEXT:    %[[INIT:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:    memref.store %[[INIT]], %[[ACC]][] : memref<f32>
// CHECK-NEXT:    tir.for %[[R0:.*]] = 0 to 3 step 1 {name = "r0", kind = "serial"} {
// CHECK-NEXT:      tir.for %[[R1:.*]] = 0 to 4 step 1 {name = "r1", kind = "serial"} {
// CHECK-NEXT:        %[[X:.*]] = memref.load %x[%[[R0]], %[[R1]]] : memref<3x4xf32>
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %[[ACC]][] : memref<f32>
// CHECK-NEXT:        %[[NEW:.*]] = arith.maximumf %[[OLD]], %[[X]] fastmath<nsz> : f32
// CHECK-NEXT:        memref.store %[[NEW]], %[[ACC]][] : memref<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[M:.*]] = memref.load %[[ACC]][] : memref<f32>
// CHECK-NEXT:    memref.store %[[M]], %out0[] : memref<f32>
// CHECK-NEXT:    func.return
func.func private @reduce_max_0(%x: tensor<3x4xf32>) -> tensor<f32> {
  %m = te.compute : tensor<f32> {
    %r = te.reduce {kind = "max", extents = array<i64: 3, 4>} : f32 {
    ^bb0(%i: index, %j: index):
      %v = tensor.extract %x[%i, %j] : tensor<3x4xf32>
      te.yield %v : f32
    }
    te.yield %r : f32
  }
  func.return %m : tensor<f32>
}

// -----

// Integer min starts at the type's highest value.
// CHECK-LABEL: func.func private @reduce_min_0(
// CHECK:         arith.constant 2147483647 : i32
// CHECK:         tir.for %{{.*}} = 0 to 6 step 1 {name = "r0", kind = "serial"}
// CHECK:           arith.minsi %{{.*}}, %{{.*}} : i32
func.func private @reduce_min_0(%x: tensor<2x6xi32>) -> tensor<2xi32> {
  %m = te.compute : tensor<2xi32> {
  ^bb0(%i: index):
    %r = te.reduce {kind = "min", extents = array<i64: 6>} : i32 {
    ^bb0(%k: index):
      %v = tensor.extract %x[%i, %k] : tensor<2x6xi32>
      te.yield %v : i32
    }
    te.yield %r : i32
  }
  func.return %m : tensor<2xi32>
}

// -----

// Unsigned elements: the buffers keep ui8; the casts to and from signless stay.
// CHECK-LABEL: func.func private @add_0(%a: memref<5xui8>, %b: memref<5xui8>, %out0: memref<5xui8> {graph.output = 0 : i64}) {
// CHECK-NEXT:    tir.for %[[I:.*]] = 0 to 5 step 1 {name = "i0", kind = "serial"} {
// CHECK-NEXT:      %[[A:.*]] = memref.load %a[%[[I]]] : memref<5xui8>
// CHECK-NEXT:      %[[SA:.*]] = builtin.unrealized_conversion_cast %[[A]] : ui8 to i8
// CHECK-NEXT:      %[[B:.*]] = memref.load %b[%[[I]]] : memref<5xui8>
// CHECK-NEXT:      %[[SB:.*]] = builtin.unrealized_conversion_cast %[[B]] : ui8 to i8
// CHECK-NEXT:      %[[S:.*]] = arith.addi %[[SA]], %[[SB]] : i8
// CHECK-NEXT:      %[[U:.*]] = builtin.unrealized_conversion_cast %[[S]] : i8 to ui8
// CHECK-NEXT:      memref.store %[[U]], %out0[%[[I]]] : memref<5xui8>
func.func private @add_0(%a: tensor<5xui8>, %b: tensor<5xui8>) -> tensor<5xui8> {
  %c = te.compute : tensor<5xui8> {
  ^bb0(%i: index):
    %x = tensor.extract %a[%i] : tensor<5xui8>
    %sx = builtin.unrealized_conversion_cast %x : ui8 to i8
    %y = tensor.extract %b[%i] : tensor<5xui8>
    %sy = builtin.unrealized_conversion_cast %y : ui8 to i8
    %s = arith.addi %sx, %sy : i8
    %u = builtin.unrealized_conversion_cast %s : i8 to ui8
    te.yield %u : ui8
  }
  func.return %c : tensor<5xui8>
}

// -----

// Two computes: the first, an intermediate, gets an aligned memref.alloc
// that is freed after the second reads it. Loop names stay unique in the
// function (schedules name loops): the second nest's loop is i0_1.
// CHECK-LABEL: func.func private @softplus_0(%x: memref<4xf32>, %out0: memref<4xf32> {graph.output = 0 : i64}) {
// CHECK-NEXT:    %[[T:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    tir.for %[[I:.*]] = 0 to 4 step 1 {name = "i0", kind = "serial"} {
// CHECK:           memref.store %{{.*}}, %[[T]][%[[I]]] : memref<4xf32>
// CHECK:         tir.for %[[J:.*]] = 0 to 4 step 1 {name = "i0_1", kind = "serial"} {
// CHECK-NEXT:      %[[E:.*]] = memref.load %[[T]][%[[J]]] : memref<4xf32>
// CHECK:           memref.store %{{.*}}, %out0[%[[J]]] : memref<4xf32>
// CHECK:         memref.dealloc %[[T]] : memref<4xf32>
// CHECK-NEXT:    func.return
func.func private @softplus_0(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = te.compute : tensor<4xf32> {
  ^bb0(%i: index):
    %v = tensor.extract %x[%i] : tensor<4xf32>
    %w = math.exp %v : f32
    te.yield %w : f32
  }
  %l = te.compute : tensor<4xf32> {
  ^bb0(%i: index):
    %v = tensor.extract %e[%i] : tensor<4xf32>
    %one = arith.constant 1.0 : f32
    %s = arith.addf %v, %one : f32
    %w = math.log %s : f32
    te.yield %w : f32
  }
  func.return %l : tensor<4xf32>
}

// -----

// The model: constants become private constant globals (a blob's data
// inline), kernel results go straight into main's outputs or into aligned
// intermediates freed after their last use; a returned input is copied.
// CHECK:       "memref.global"() <{sym_name = "cst", type = memref<2xf32>, initial_value = dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>, sym_visibility = "private", constant, alignment = 64 : i64}> : () -> ()
// CHECK-NEXT:  "memref.global"() <{sym_name = "weights", type = memref<2x3xf32>, initial_value = dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>, sym_visibility = "private", constant, alignment = 64 : i64}> : () -> ()
// CHECK-LABEL: func.func @main(%x: memref<3x2xf32> {graph.name = "x"}, %out0: memref<3x3xf32> {graph.name = "y", graph.output = 0 : i64}, %out1: memref<3x2xf32> {graph.name = "x_again", graph.output = 1 : i64}) {
// CHECK-NEXT:    %[[C:.*]] = memref.get_global @cst : memref<2xf32>
// CHECK-NEXT:    %[[W:.*]] = memref.get_global @weights : memref<2x3xf32>
// CHECK-NEXT:    %[[T:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3x2xf32>
// CHECK-NEXT:    func.call @mul_0(%x, %[[C]], %[[T]]) : (memref<3x2xf32>, memref<2xf32>, memref<3x2xf32>) -> ()
// CHECK-NEXT:    func.call @matmul_0(%[[T]], %[[W]], %out0) : (memref<3x2xf32>, memref<2x3xf32>, memref<3x3xf32>) -> ()
// CHECK-NEXT:    memref.dealloc %[[T]] : memref<3x2xf32>
// CHECK-NEXT:    "memref.copy"(%x, %out1) : (memref<3x2xf32>, memref<3x2xf32>) -> ()
// CHECK-NEXT:    func.return
func.func private @mul_0(%a: tensor<3x2xf32>, %b: tensor<2xf32>) -> tensor<3x2xf32> {
  %c = te.compute : tensor<3x2xf32> {
  ^bb0(%i: index, %j: index):
    %x = tensor.extract %a[%i, %j] : tensor<3x2xf32>
    %y = tensor.extract %b[%j] : tensor<2xf32>
    %m = arith.mulf %x, %y : f32
    te.yield %m : f32
  }
  func.return %c : tensor<3x2xf32>
}
func.func private @matmul_0(%a: tensor<3x2xf32>, %b: tensor<2x3xf32>) -> tensor<3x3xf32> {
  %c = te.compute : tensor<3x3xf32> {
  ^bb0(%i: index, %j: index):
    %s = te.reduce {kind = "sum", extents = array<i64: 2>} : f32 {
    ^bb0(%k: index):
      %x = tensor.extract %a[%i, %k] : tensor<3x2xf32>
      %y = tensor.extract %b[%k, %j] : tensor<2x3xf32>
      %m = arith.mulf %x, %y : f32
      te.yield %m : f32
    }
    te.yield %s : f32
  }
  func.return %c : tensor<3x3xf32>
}
func.func @main(%x: tensor<3x2xf32> {graph.name = "x"}) -> (tensor<3x3xf32> {graph.name = "y"}, tensor<3x2xf32> {graph.name = "x_again"}) {
  %scale = graph.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %w = graph.constant dense_resource<weights> : tensor<2x3xf32>
  %t = func.call @mul_0(%x, %scale) : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %y = func.call @matmul_0(%t, %w) : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  func.return %y, %x : tensor<3x3xf32>, tensor<3x2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F0000004000004040000080400000A0400000C040"
    }
  }
#-}

// -----

// A graph op left in the model is not te-level input.
// CHECK: error: convert-te-to-tir: 'graph.relu' in @main works on tensors but is not a te-level op (te.compute, func.call, graph.constant; run convert-graph-to-te first)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// A kernel that is one graph.concat says its axis (tir-concat-in-place
// reads it at the calls); one that computes more than the concat does not.
// CHECK-LABEL: func.func private @concat_0(%x: memref<1x2x3xf32>, %y: memref<1x1x3xf32>, %out0: memref<1x3x3xf32> {graph.output = 0 : i64}) attributes {tir.concat_axis = 1 : i64} {
// CHECK-LABEL: func.func private @fused_concat_relu_0(%x: memref<1x2x3xf32>, %y: memref<1x1x3xf32>, %out0: memref<1x3x3xf32> {graph.output = 0 : i64}) {
func.func private @concat_0(%x: tensor<1x2x3xf32>, %y: tensor<1x1x3xf32>) -> tensor<1x3x3xf32> attributes {te.ops = ["graph.concat"]} {
  %0 = te.compute : tensor<1x3x3xf32> {
  ^bb0(%i: index, %j: index, %k: index):
    %two = arith.constant 2 : index
    %first = arith.cmpi slt, %j, %two : index
    %one = arith.constant 1 : index
    %jx = arith.minsi %j, %one : index
    %a = tensor.extract %x[%i, %jx, %k] : tensor<1x2x3xf32>
    %jy0 = arith.subi %j, %two : index
    %zero = arith.constant 0 : index
    %jy = arith.maxsi %jy0, %zero : index
    %b = tensor.extract %y[%i, %jy, %k] : tensor<1x1x3xf32>
    %v = arith.select %first, %a, %b : f32
    te.yield %v : f32
  }
  func.return %0 : tensor<1x3x3xf32>
}
func.func private @fused_concat_relu_0(%x: tensor<1x2x3xf32>, %y: tensor<1x1x3xf32>) -> tensor<1x3x3xf32> attributes {te.ops = ["graph.concat", "graph.relu"]} {
  %0 = te.compute : tensor<1x3x3xf32> {
  ^bb0(%i: index, %j: index, %k: index):
    %two = arith.constant 2 : index
    %first = arith.cmpi slt, %j, %two : index
    %one = arith.constant 1 : index
    %jx = arith.minsi %j, %one : index
    %a = tensor.extract %x[%i, %jx, %k] : tensor<1x2x3xf32>
    %jy0 = arith.subi %j, %two : index
    %zero = arith.constant 0 : index
    %jy = arith.maxsi %jy0, %zero : index
    %b = tensor.extract %y[%i, %jy, %k] : tensor<1x1x3xf32>
    %v = arith.select %first, %a, %b : f32
    te.yield %v : f32
  }
  func.return %0 : tensor<1x3x3xf32>
}
