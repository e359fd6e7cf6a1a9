// RUN: xtc-opt %s -p tir-profile-calls | filecheck %s
// RUN: xtc-opt %s -p 'tir-profile-calls{func=model}' | filecheck %s --check-prefix=NAMED
// RUN: not xtc-opt %s -p 'tir-profile-calls{func=absent}' 2>&1 | filecheck %s --check-prefix=ABSENT
// RUN: not xtc-opt %s -p tir-profile-calls,tir-profile-calls 2>&1 | filecheck %s --check-prefix=TWICE
// Then lowered to the llvm dialect, the table is a public zero-filled global the
// library exports, each counter read an rdtsc.
// RUN: xtc-opt %s -p tir-profile-calls,convert-tir-to-llvm | filecheck %s --check-prefix=LLVM

// @main calls @conv twice and @relu once: the table has a row for the runs
// (0) and one per callee in the order of its first call (@conv 1, @relu 2),
// each of cycles and a count; every call is bracketed by two counter reads,
// whose difference goes to its callee's row, and the run's (from the first
// op to the return) to row 0. @model, not named, is left as it is.
// CHECK:       "memref.global"() <{sym_name = "xtc_profile", type = memref<3x2xi64>, initial_value, sym_visibility = "public"}> : () -> ()
// CHECK-LABEL: func.func @main
// CHECK-SAME:      tir.profile = ["conv", "relu"]
// CHECK-NEXT:    %[[TABLE:.*]] = memref.get_global @xtc_profile : memref<3x2xi64>
// CHECK-NEXT:    %[[STARTED:.*]] = tir.cycle_counter : i64
// CHECK-NEXT:    %[[A:.*]] = memref.alloc()
// CHECK-NEXT:    %[[T0:.*]] = tir.cycle_counter : i64
// CHECK-NEXT:    func.call @conv(%x, %[[A]])
// CHECK-NEXT:    %[[T1:.*]] = tir.cycle_counter : i64
// CHECK-NEXT:    %[[D:.*]] = arith.subi %[[T1]], %[[T0]] : i64
// CHECK-NEXT:    %[[ROW:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[CYCLES:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[COUNT:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[C:.*]] = memref.load %[[TABLE]][%[[ROW]], %[[CYCLES]]] : memref<3x2xi64>
// CHECK-NEXT:    %[[C2:.*]] = arith.addi %[[C]], %[[D]] : i64
// CHECK-NEXT:    memref.store %[[C2]], %[[TABLE]][%[[ROW]], %[[CYCLES]]] : memref<3x2xi64>
// CHECK-NEXT:    %[[N:.*]] = memref.load %[[TABLE]][%[[ROW]], %[[COUNT]]] : memref<3x2xi64>
// CHECK-NEXT:    %[[N2:.*]] = arith.addi %[[N]], %[[ONE]] : i64
// CHECK-NEXT:    memref.store %[[N2]], %[[TABLE]][%[[ROW]], %[[COUNT]]] : memref<3x2xi64>
// CHECK-NEXT:    %[[T2:.*]] = tir.cycle_counter : i64
// CHECK-NEXT:    func.call @relu(%[[A]], %out0)
// CHECK-NEXT:    %[[T3:.*]] = tir.cycle_counter : i64
// CHECK-NEXT:    arith.subi %[[T3]], %[[T2]] : i64
// CHECK-NEXT:    arith.constant 2 : index
// CHECK:         %[[T4:.*]] = tir.cycle_counter : i64
// CHECK-NEXT:    func.call @conv(%out0, %[[A]])
// CHECK-NEXT:    %[[T5:.*]] = tir.cycle_counter : i64
// CHECK-NEXT:    arith.subi %[[T5]], %[[T4]] : i64
// CHECK-NEXT:    arith.constant 1 : index
// CHECK:         memref.dealloc %[[A]]
// CHECK-NEXT:    %[[END:.*]] = tir.cycle_counter : i64
// CHECK-NEXT:    arith.subi %[[END]], %[[STARTED]] : i64
// CHECK-NEXT:    arith.constant 0 : index
// CHECK:         func.return
// CHECK-LABEL: func.func @model
// CHECK-NOT:     tir.cycle_counter
// CHECK:         func.return

// NAMED:       memref<2x2xi64>
// NAMED-LABEL: func.func @main
// NAMED-NOT:     tir.cycle_counter
// NAMED-LABEL: func.func @model
// NAMED-SAME:      tir.profile = ["relu"]
// NAMED:         tir.cycle_counter

// ABSENT: tir-profile-calls: no function @absent with a body in the module
// TWICE: tir-profile-calls: the module has a @xtc_profile already (profiled once)

// LLVM:        llvm.mlir.global external @xtc_profile() {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<6 x i64>
// LLVM-LABEL:  llvm.func @main
// LLVM:          llvm.call_intrinsic "llvm.readcyclecounter"() : () -> i64
// LLVM:          llvm.call @conv

func.func @main(%x: memref<4xf32>, %out0: memref<4xf32> {graph.output = 0 : i64}) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  func.call @conv(%x, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  func.call @relu(%a, %out0) : (memref<4xf32>, memref<4xf32>) -> ()
  func.call @conv(%out0, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  memref.dealloc %a : memref<4xf32>
  func.return
}
func.func @model(%x: memref<4xf32>, %out0: memref<4xf32> {graph.output = 0 : i64}) {
  func.call @relu(%x, %out0) : (memref<4xf32>, memref<4xf32>) -> ()
  func.return
}
func.func private @conv(memref<4xf32>, memref<4xf32>) -> ()
func.func private @relu(memref<4xf32>, memref<4xf32>) -> ()
