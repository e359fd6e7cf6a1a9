// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=row_sum loop=r1 factor=8},tir-rfactor{func=row_sum loop=r1_i}' | filecheck %s
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-rfactor{func=row_max loop=r}' | filecheck %s --check-prefix=MAX
// RUN: not xtc-opt %s -p 'tir-rfactor{func=row_sum loop=i}' 2>&1 | filecheck %s --check-prefix=OUTER
// RUN: not xtc-opt %s -p 'tir-rfactor{func=row_copy loop=r}' 2>&1 | filecheck %s --check-prefix=NOACC
// RUN: not xtc-opt %s -p 'tir-rfactor{func=row_sub loop=r}' 2>&1 | filecheck %s --check-prefix=SUB

// The partials and their init loop go just before the reduction's
// outermost loop (r0, beside the accumulator); in the innermost loop the
// accumulation reads and writes part[r1_i]; after r0 the 8 partials are
// combined pairwise (8 -> 4 -> 2 -> 1, each step a loop into a new buffer),
// then into the accumulator, before the epilogue.
// CHECK-LABEL: func.func @row_sum(
// CHECK:         %[[ACC:.*]] = memref.alloca() : memref<f32>
// CHECK:         memref.store %{{.*}}, %[[ACC]][] : memref<f32>
// CHECK-NEXT:    %[[PART:.*]] = memref.alloca() {alignment = 64 : i64} : memref<8xf32>
// CHECK-NEXT:    tir.for %[[J:.*]] = 0 to 8 step 1 {name = "r1_i_init", kind = "serial"} {
// CHECK-NEXT:      %[[ID:.*]] = arith.constant -0.000000e+00 : f32
// CHECK-NEXT:      memref.store %[[ID]], %[[PART]][%[[J]]] : memref<8xf32>
// CHECK:         tir.for %{{.*}} = 0 to 4 step 1 {name = "r0", kind = "serial"} {
// CHECK:           tir.for %{{.*}} = 0 to 2 step 1 {name = "r1_o", kind = "serial"} {
// CHECK:             tir.for %[[R:.*]] = 0 to 8 step 1 {name = "r1_i", kind = "serial"} {
// CHECK:               %[[OLD:.*]] = memref.load %[[PART]][%[[R]]] : memref<8xf32>
// CHECK-NEXT:          %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} : f32
// CHECK-NEXT:          memref.store %[[NEW]], %[[PART]][%[[R]]] : memref<8xf32>
// CHECK:         %[[P4:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    tir.for %[[H:.*]] = 0 to 4 step 1 {name = "r1_i_wb4", kind = "serial"} {
// CHECK-NEXT:      %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[UP:.*]] = arith.addi %[[H]], %[[C4]] : index
// CHECK-NEXT:      %[[LO:.*]] = memref.load %[[PART]][%[[H]]] : memref<8xf32>
// CHECK-NEXT:      %[[HI:.*]] = memref.load %[[PART]][%[[UP]]] : memref<8xf32>
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[LO]], %[[HI]] : f32
// CHECK-NEXT:      memref.store %[[SUM]], %[[P4]][%[[H]]] : memref<4xf32>
// CHECK:         {name = "r1_i_wb2", kind = "serial"}
// CHECK:         %[[P1:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1xf32>
// CHECK-NEXT:    tir.for %{{.*}} = 0 to 1 step 1 {name = "r1_i_wb1", kind = "serial"} {
// CHECK:         tir.for %[[K:.*]] = 0 to 1 step 1 {name = "r1_i_wb", kind = "serial"} {
// CHECK-NEXT:      %[[T:.*]] = memref.load %[[ACC]][] : memref<f32>
// CHECK-NEXT:      %[[P:.*]] = memref.load %[[P1]][%[[K]]] : memref<1xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[T]], %[[P]] : f32
// CHECK-NEXT:      memref.store %[[S]], %[[ACC]][] : memref<f32>
// CHECK:         %[[TOTAL:.*]] = memref.load %[[ACC]][] : memref<f32>
// CHECK:         memref.store %{{.*}}, %out[%{{.*}}] : memref<3xf32>

// A max starts its partials at -inf, whichever operand the accumulator is;
// 12 partials halve twice, then 3 combine in order.
// MAX-LABEL: func.func @row_max(
// MAX:         arith.constant 0xff800000 : f32
// MAX:         tir.for %{{.*}} = 0 to 12 step 1 {name = "r", kind = "serial"} {
// MAX:           arith.maximumf %{{.*}}, %{{.*}} : f32
// MAX:         tir.for %{{.*}} = 0 to 6 step 1 {name = "r_wb6", kind = "serial"}
// MAX:         tir.for %{{.*}} = 0 to 3 step 1 {name = "r_wb3", kind = "serial"}
// MAX:         tir.for %{{.*}} = 0 to 3 step 1 {name = "r_wb", kind = "serial"}
// MAX-NEXT:      memref.load
// MAX-NEXT:      memref.load
// MAX-NEXT:      arith.maximumf

// OUTER: error: tir-rfactor: loop 'i' in @row_sum holds another loop; tir-rfactor splits an innermost loop
// NOACC: error: tir-rfactor: loop 'r' in @row_copy stores into 0 rank-0 local accumulators; tir-rfactor needs exactly one
// SUB: error: tir-rfactor: loop 'r' in @row_sub accumulates with arith.subf; tir-rfactor splits arith.addf, mulf, maximumf and minimumf
func.func @row_sum(%x: memref<3x4x16xf32>, %out: memref<3xf32>) {
  tir.for %i = 0 to 3 step 1 {name = "i", kind = "serial"} {
    %acc = memref.alloca() : memref<f32>
    %zero = arith.constant 0.000000e+00 : f32
    memref.store %zero, %acc[] : memref<f32>
    tir.for %r0 = 0 to 4 step 1 {name = "r0", kind = "serial"} {
      tir.for %r1 = 0 to 16 step 1 {name = "r1", kind = "serial"} {
        %v = memref.load %x[%i, %r0, %r1] : memref<3x4x16xf32>
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %v : f32
        memref.store %t, %acc[] : memref<f32>
      }
    }
    %total = memref.load %acc[] : memref<f32>
    %n = arith.constant 6.400000e+01 : f32
    %mean = arith.divf %total, %n : f32
    memref.store %mean, %out[%i] : memref<3xf32>
  }
  func.return
}

func.func @row_max(%x: memref<3x12xf32>, %out: memref<3xf32>) {
  tir.for %i = 0 to 3 step 1 {name = "i", kind = "serial"} {
    %acc = memref.alloca() : memref<f32>
    %low = arith.constant -1.000000e+30 : f32
    memref.store %low, %acc[] : memref<f32>
    tir.for %r = 0 to 12 step 1 {name = "r", kind = "serial"} {
      %v = memref.load %x[%i, %r] : memref<3x12xf32>
      %s = memref.load %acc[] : memref<f32>
      %t = arith.maximumf %v, %s : f32
      memref.store %t, %acc[] : memref<f32>
    }
    %peak = memref.load %acc[] : memref<f32>
    memref.store %peak, %out[%i] : memref<3xf32>
  }
  func.return
}

func.func @row_copy(%x: memref<3x16xf32>, %out: memref<3x16xf32>) {
  tir.for %i = 0 to 3 step 1 {name = "i", kind = "serial"} {
    tir.for %r = 0 to 16 step 1 {name = "r", kind = "serial"} {
      %v = memref.load %x[%i, %r] : memref<3x16xf32>
      memref.store %v, %out[%i, %r] : memref<3x16xf32>
    }
  }
  func.return
}

func.func @row_sub(%x: memref<3x16xf32>, %out: memref<3xf32>) {
  tir.for %i = 0 to 3 step 1 {name = "i", kind = "serial"} {
    %acc = memref.alloca() : memref<f32>
    %zero = arith.constant 0.000000e+00 : f32
    memref.store %zero, %acc[] : memref<f32>
    tir.for %r = 0 to 16 step 1 {name = "r", kind = "serial"} {
      %v = memref.load %x[%i, %r] : memref<3x16xf32>
      %s = memref.load %acc[] : memref<f32>
      %t = arith.subf %s, %v : f32
      memref.store %t, %acc[] : memref<f32>
    }
    %total = memref.load %acc[] : memref<f32>
    memref.store %total, %out[%i] : memref<3xf32>
  }
  func.return
}
