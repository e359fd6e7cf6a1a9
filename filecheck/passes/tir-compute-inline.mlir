// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-compute-inline{loop=p0}' | filecheck %s
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-compute-inline{func=pad_conv loop=p0},tir-unroll{func=pad_conv loop=r1}' | filecheck %s --check-prefix=THEN
// RUN: not xtc-opt %s -p 'tir-compute-inline{func=pad_conv loop=q9}' 2>&1 | filecheck %s --check-prefix=NOLOOP
// RUN: not xtc-opt %s -p 'tir-compute-inline{func=nowhere loop=p0}' 2>&1 | filecheck %s --check-prefix=NOFUNC

// NOLOOP: error: tir-compute-inline: no loop named 'q9' in @pad_conv
// NOFUNC: error: tir-compute-inline: no function @nowhere in the module

// A padding nest (a select of a clamped load) and a conv reading it at
// [c, h + r1, w + r2]: the conv computes the select itself, the loop
// variables of the padding replaced by the conv's indices; the padded
// buffer, its nest and its dealloc are gone.
// CHECK-LABEL: func.func @pad_conv(
// CHECK-SAME:      %[[X:[^:]*]]: memref<2x4x4xf32>, %[[W:[^:]*]]: memref<3x2x3x3xf32>
// CHECK-NOT:     memref.alloc()
// CHECK-NEXT:    tir.for %[[O:.*]] = 0 to 3 step 1 {name = "o", kind = "serial"} {
// CHECK-NEXT:      tir.for %[[H:.*]] = 0 to 4 step 1 {name = "h", kind = "serial"} {
// CHECK-NEXT:        tir.for %[[WW:.*]] = 0 to 4 step 1 {name = "w", kind = "serial"} {
// CHECK:               tir.for %[[R0:.*]] = 0 to 2 step 1 {name = "r0", kind = "serial"} {
// CHECK-NEXT:            tir.for %[[R1:.*]] = 0 to 3 step 1 {name = "r1", kind = "serial"} {
// CHECK-NEXT:              tir.for %[[R2:.*]] = 0 to 3 step 1 {name = "r2", kind = "serial"} {
// CHECK-NEXT:                %[[ROW:.*]] = arith.addi %[[H]], %[[R1]] : index
// CHECK-NEXT:                %[[COL:.*]] = arith.addi %[[WW]], %[[R2]] : index
// CHECK-NEXT:                %[[M1:.*]] = arith.constant -1 : index
// CHECK-NEXT:                %[[Y:.*]] = arith.addi %[[ROW]], %[[M1]] : index
// CHECK-NEXT:                %[[M1B:.*]] = arith.constant -1 : index
// CHECK-NEXT:                %[[XX:.*]] = arith.addi %[[COL]], %[[M1B]] : index
// CHECK:                     %[[IIN:.*]] = arith.andi
// CHECK-NEXT:                %[[JIN:.*]] = arith.andi
// CHECK-NEXT:                %[[IN:.*]] = arith.andi %[[IIN]], %[[JIN]] : i1
// CHECK:                     %[[YC:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK:                     %[[XC:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:                %[[V:.*]] = memref.load %[[X]][%[[R0]], %[[YC]], %[[XC]]] : memref<2x4x4xf32>
// CHECK-NEXT:                %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:                %[[PADDED:.*]] = arith.select %[[IN]], %[[V]], %[[ZERO]] : f32
// CHECK-NEXT:                %[[K:.*]] = memref.load %[[W]][%[[O]], %[[R0]], %[[R1]], %[[R2]]] : memref<3x2x3x3xf32>
// CHECK-NEXT:                arith.mulf %[[PADDED]], %[[K]] : f32
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return

// The schedule goes on naming the conv's loops.
// THEN-LABEL: func.func @pad_conv(
// THEN:         tir.for %{{.*}} = 0 to 3 step 1 {name = "r1", kind = "unrolled"} {
// THEN-NOT:     name = "p0"
func.func @pad_conv(%x: memref<2x4x4xf32>, %w: memref<3x2x3x3xf32>, %y: memref<3x4x4xf32> {graph.output = 0 : i64}) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<2x6x6xf32>
  tir.for %c = 0 to 2 step 1 {name = "p0", kind = "serial"} {
    tir.for %i = 0 to 6 step 1 {name = "p1", kind = "serial"} {
      tir.for %j = 0 to 6 step 1 {name = "p2", kind = "serial"} {
        %m1 = arith.constant -1 : index
        %i1 = arith.addi %i, %m1 : index
        %m1b = arith.constant -1 : index
        %j1 = arith.addi %j, %m1b : index
        %zero = arith.constant 0 : index
        %four = arith.constant 4 : index
        %three = arith.constant 3 : index
        %ilo = arith.cmpi sge, %i1, %zero : index
        %ihi = arith.cmpi slt, %i1, %four : index
        %jlo = arith.cmpi sge, %j1, %zero : index
        %jhi = arith.cmpi slt, %j1, %four : index
        %iin = arith.andi %ilo, %ihi : i1
        %jin = arith.andi %jlo, %jhi : i1
        %in = arith.andi %iin, %jin : i1
        %ic0 = arith.maxsi %i1, %zero : index
        %ic = arith.minsi %ic0, %three : index
        %jc0 = arith.maxsi %j1, %zero : index
        %jc = arith.minsi %jc0, %three : index
        %v = memref.load %x[%c, %ic, %jc] : memref<2x4x4xf32>
        %fzero = arith.constant 0.000000e+00 : f32
        %s = arith.select %in, %v, %fzero : f32
        memref.store %s, %p[%c, %i, %j] : memref<2x6x6xf32>
      }
    }
  }
  tir.for %o = 0 to 3 step 1 {name = "o", kind = "serial"} {
    tir.for %h = 0 to 4 step 1 {name = "h", kind = "serial"} {
      tir.for %ww = 0 to 4 step 1 {name = "w", kind = "serial"} {
        %acc = memref.alloca() : memref<f32>
        %init = arith.constant 0.000000e+00 : f32
        memref.store %init, %acc[] : memref<f32>
        tir.for %r0 = 0 to 2 step 1 {name = "r0", kind = "serial"} {
          tir.for %r1 = 0 to 3 step 1 {name = "r1", kind = "serial"} {
            tir.for %r2 = 0 to 3 step 1 {name = "r2", kind = "serial"} {
              %row = arith.addi %h, %r1 : index
              %col = arith.addi %ww, %r2 : index
              %a = memref.load %p[%r0, %row, %col] : memref<2x6x6xf32>
              %b = memref.load %w[%o, %r0, %r1, %r2] : memref<3x2x3x3xf32>
              %ab = arith.mulf %a, %b : f32
              %t = memref.load %acc[] : memref<f32>
              %u = arith.addf %t, %ab : f32
              memref.store %u, %acc[] : memref<f32>
            }
          }
        }
        %r = memref.load %acc[] : memref<f32>
        memref.store %r, %y[%o, %h, %ww] : memref<3x4x4xf32>
      }
    }
  }
  memref.dealloc %p : memref<2x6x6xf32>
  func.return
}

// -----

// An elementwise producer (scale and shift, a constant hoisted to the
// outer loop's body) and a matmul reading it as its left operand: the
// producer's ops, outer level first, are copied into the reduction loop.
// CHECK-LABEL: func.func @scale_matmul(
// CHECK-SAME:      %[[A:[^:]*]]: memref<4x5xf32>, %[[B:[^:]*]]: memref<5x6xf32>
// CHECK-NEXT:    %[[SHIFT:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    tir.for %[[I0:.*]] = 0 to 4 step 1 {name = "i0", kind = "serial"} {
// CHECK-NEXT:      tir.for %[[I1:.*]] = 0 to 6 step 1 {name = "i1", kind = "serial"} {
// CHECK:             tir.for %[[R0:.*]] = 0 to 5 step 1 {name = "r0", kind = "serial"} {
// CHECK-NEXT:          %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:          %[[V:.*]] = memref.load %[[A]][%[[I0]], %[[R0]]] : memref<4x5xf32>
// CHECK-NEXT:          %[[SCALED:.*]] = arith.mulf %[[V]], %[[TWO]] : f32
// CHECK-NEXT:          %[[S:.*]] = arith.addf %[[SCALED]], %[[SHIFT]] : f32
// CHECK-NEXT:          %[[Y:.*]] = memref.load %[[B]][%[[R0]], %[[I1]]] : memref<5x6xf32>
// CHECK-NEXT:          arith.mulf %[[S]], %[[Y]] : f32
// CHECK-NOT:     memref.alloc()
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return
func.func @scale_matmul(%a: memref<4x5xf32>, %b: memref<5x6xf32>, %c: memref<4x6xf32> {graph.output = 0 : i64}) {
  %shift = arith.constant 1.000000e+00 : f32
  %s = memref.alloc() {alignment = 64 : i64} : memref<4x5xf32>
  tir.for %i = 0 to 4 step 1 {name = "p0", kind = "parallel"} {
    %two = arith.constant 2.000000e+00 : f32
    %unused = arith.constant 7 : index
    tir.for %k = 0 to 5 step 1 {name = "p1", kind = "vectorized"} {
      %v = memref.load %a[%i, %k] : memref<4x5xf32>
      %scaled = arith.mulf %v, %two : f32
      %shifted = arith.addf %scaled, %shift : f32
      memref.store %shifted, %s[%i, %k] : memref<4x5xf32>
    }
  }
  tir.for %i0 = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 6 step 1 {name = "i1", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %init = arith.constant 0.000000e+00 : f32
      memref.store %init, %acc[] : memref<f32>
      tir.for %r0 = 0 to 5 step 1 {name = "r0", kind = "serial"} {
        %x = memref.load %s[%i0, %r0] : memref<4x5xf32>
        %y = memref.load %b[%r0, %i1] : memref<5x6xf32>
        %xy = arith.mulf %x, %y : f32
        %t = memref.load %acc[] : memref<f32>
        %u = arith.addf %t, %xy : f32
        memref.store %u, %acc[] : memref<f32>
      }
      %r = memref.load %acc[] : memref<f32>
      memref.store %r, %c[%i0, %i1] : memref<4x6xf32>
    }
  }
  memref.dealloc %s : memref<4x5xf32>
  func.return
}

// -----

// Two readers, in two nests: each gets its own copy. A value stored as
// it is (the loop variable, converted) maps to the reader's index.
// CHECK-LABEL: func.func @two_readers(
// CHECK-NEXT:    tir.for %[[I:.*]] = 0 to 8 step 1 {name = "a", kind = "serial"} {
// CHECK-NEXT:      %[[F:.*]] = arith.index_cast %[[I]] : index to i32
// CHECK-NEXT:      memref.store %[[F]], %{{.*}}[%[[I]]] : memref<8xi32>
// CHECK-NEXT:    }
// CHECK-NEXT:    tir.for %[[J:.*]] = 0 to 4 step 1 {name = "b", kind = "serial"} {
// CHECK-NEXT:      %[[C7:.*]] = arith.constant 7 : index
// CHECK-NEXT:      %[[REV:.*]] = arith.subi %[[C7]], %[[J]] : index
// CHECK-NEXT:      %[[G:.*]] = arith.index_cast %[[REV]] : index to i32
// CHECK-NEXT:      memref.store %[[G]], %{{.*}}[%[[J]]] : memref<8xi32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @two_readers(%y: memref<8xi32> {graph.output = 0 : i64}) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<8xi32>
  tir.for %i = 0 to 8 step 1 {name = "p0", kind = "serial"} {
    %v = arith.index_cast %i : index to i32
    memref.store %v, %t[%i] : memref<8xi32>
  }
  tir.for %i = 0 to 8 step 1 {name = "a", kind = "serial"} {
    %v = memref.load %t[%i] : memref<8xi32>
    memref.store %v, %y[%i] : memref<8xi32>
  }
  tir.for %j = 0 to 4 step 1 {name = "b", kind = "serial"} {
    %c7 = arith.constant 7 : index
    %rev = arith.subi %c7, %j : index
    %v = memref.load %t[%rev] : memref<8xi32>
    memref.store %v, %y[%j] : memref<8xi32>
  }
  memref.dealloc %t : memref<8xi32>
  func.return
}

// -----

func.func @nested(%x: memref<4x4xf32>, %y: memref<4x4xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  tir.for %i = 0 to 4 step 1 {name = "q", kind = "serial"} {
    // CHECK: compute-inline.mlir:[[# @LINE + 1]]:5: error: tir-compute-inline: cannot inline loop 'p0' of @nested: it is not a top-level loop of the function (it is nested in another op)
    tir.for %j = 0 to 4 step 1 {name = "p0", kind = "serial"} {
      %v = memref.load %x[%i, %j] : memref<4x4xf32>
      memref.store %v, %p[%j] : memref<4xf32>
    }
  }
  memref.dealloc %p : memref<4xf32>
  func.return
}

// -----

func.func @imperfect(%x: memref<4x4xf32>, %y: memref<4x4xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
  // CHECK: compute-inline.mlir:[[# @LINE + 1]]:3: error: tir-compute-inline: cannot inline loop 'p0' of @imperfect: it is not a perfect nest: loop 'p0' holds 2 loops
  tir.for %i = 0 to 4 step 1 {name = "p0", kind = "serial"} {
    tir.for %j = 0 to 4 step 1 {name = "p1", kind = "serial"} {
      %v = memref.load %x[%i, %j] : memref<4x4xf32>
      memref.store %v, %p[%i, %j] : memref<4x4xf32>
    }
    tir.for %j = 0 to 4 step 1 {name = "p2", kind = "serial"} {
      %v = memref.load %x[%i, %j] : memref<4x4xf32>
      memref.store %v, %y[%i, %j] : memref<4x4xf32>
    }
  }
  memref.dealloc %p : memref<4x4xf32>
  func.return
}

// -----

func.func @reduction(%x: memref<4x4xf32>, %y: memref<4xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  tir.for %i = 0 to 4 step 1 {name = "p0", kind = "serial"} {
    // CHECK: compute-inline.mlir:[[# @LINE + 1]]:5: error: tir-compute-inline: cannot inline loop 'p0' of @reduction: loop 'p0' holds a local buffer beside loop 'r': a reduction or a value carried across iterations
    %acc = memref.alloca() : memref<f32>
    %zero = arith.constant 0.000000e+00 : f32
    memref.store %zero, %acc[] : memref<f32>
    tir.for %r = 0 to 4 step 1 {name = "r", kind = "serial"} {
      %v = memref.load %x[%i, %r] : memref<4x4xf32>
      %t = memref.load %acc[] : memref<f32>
      %u = arith.addf %t, %v : f32
      memref.store %u, %acc[] : memref<f32>
    }
    %s = memref.load %acc[] : memref<f32>
    memref.store %s, %p[%i] : memref<4xf32>
  }
  tir.for %i = 0 to 4 step 1 {name = "c", kind = "serial"} {
    %v = memref.load %p[%i] : memref<4xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  memref.dealloc %p : memref<4xf32>
  func.return
}

// -----

func.func @two_stores(%x: memref<4xf32>, %y: memref<4xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  tir.for %i = 0 to 4 step 1 {name = "p0", kind = "serial"} {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %p[%i] : memref<4xf32>
    // CHECK: compute-inline.mlir:[[# @LINE + 1]]:5: error: tir-compute-inline: cannot inline loop 'p0' of @two_stores: the body of loop 'p0' holds 2 stores; a producer stores one value
    memref.store %v, %y[%i] : memref<4xf32>
  }
  memref.dealloc %p : memref<4xf32>
  func.return
}

// -----

func.func @to_output(%x: memref<4xf32>, %y: memref<4xf32> {graph.output = 0 : i64}) {
  tir.for %i = 0 to 4 step 1 {name = "p0", kind = "serial"} {
    %v = memref.load %x[%i] : memref<4xf32>
    // CHECK: compute-inline.mlir:[[# @LINE + 1]]:5: error: tir-compute-inline: cannot inline loop 'p0' of @to_output: it stores into %y (argument 1), an output of the function, not a local buffer: inlining would drop what it writes
    memref.store %v, %y[%i] : memref<4xf32>
  }
  func.return
}

// -----

func.func @transposed(%x: memref<4x4xf32>, %y: memref<4x4xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
  tir.for %i = 0 to 4 step 1 {name = "p0", kind = "serial"} {
    tir.for %j = 0 to 4 step 1 {name = "p1", kind = "serial"} {
      %v = memref.load %x[%i, %j] : memref<4x4xf32>
      // CHECK: compute-inline.mlir:[[# @LINE + 1]]:7: error: tir-compute-inline: cannot inline loop 'p0' of @transposed: it stores at indices other than its loop variables (p0, p1), each once and in order
      memref.store %v, %p[%j, %i] : memref<4x4xf32>
    }
  }
  memref.dealloc %p : memref<4x4xf32>
  func.return
}

// -----

func.func @partial(%x: memref<4xf32>, %y: memref<4xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  // CHECK: compute-inline.mlir:[[# @LINE + 1]]:3: error: tir-compute-inline: cannot inline loop 'p0' of @partial: loop 'p0' runs from 1 to 4 step 1 over a dimension of 4; the producer must write every element (from 0 to the size, step 1)
  tir.for %i = 1 to 4 step 1 {name = "p0", kind = "serial"} {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %p[%i] : memref<4xf32>
  }
  memref.dealloc %p : memref<4xf32>
  func.return
}

// -----

func.func @self_reading(%x: memref<4xf32>, %y: memref<4xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  tir.for %i = 0 to 4 step 1 {name = "p0", kind = "serial"} {
    %c0 = arith.constant 0 : index
    // CHECK: compute-inline.mlir:[[# @LINE + 1]]:5: error: tir-compute-inline: cannot inline loop 'p0' of @self_reading: it reads %p, the buffer it writes: a value carried across iterations
    %v = memref.load %p[%c0] : memref<4xf32>
    memref.store %v, %p[%i] : memref<4xf32>
  }
  memref.dealloc %p : memref<4xf32>
  func.return
}

// -----

func.func @dead(%x: memref<4xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  // CHECK: compute-inline.mlir:[[# @LINE + 1]]:3: error: tir-compute-inline: cannot inline loop 'p0' of @dead: no one reads %p: the nest is dead code, there is nothing to inline it into
  tir.for %i = 0 to 4 step 1 {name = "p0", kind = "serial"} {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %p[%i] : memref<4xf32>
  }
  memref.dealloc %p : memref<4xf32>
  func.return
}

// -----

func.func @input_overwritten(%x: memref<4xf32>, %y: memref<4xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  tir.for %i = 0 to 4 step 1 {name = "p0", kind = "serial"} {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %p[%i] : memref<4xf32>
  }
  tir.for %i = 0 to 4 step 1 {name = "zero", kind = "serial"} {
    %z = arith.constant 0.000000e+00 : f32
    // CHECK: compute-inline.mlir:[[# @LINE + 1]]:5: error: tir-compute-inline: cannot inline loop 'p0' of @input_overwritten: it reads %x (argument 0), which 'memref.store' may write between the producer and a read of its buffer
    memref.store %z, %x[%i] : memref<4xf32>
  }
  tir.for %i = 0 to 4 step 1 {name = "c", kind = "serial"} {
    %v = memref.load %p[%i] : memref<4xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  memref.dealloc %p : memref<4xf32>
  func.return
}

// -----

// An input written after the last reader is fine: the reader still sees
// what the producer would have read.
// CHECK-LABEL: func.func @input_written_after(
// CHECK-NEXT:    tir.for %[[I:.*]] = 0 to 4 step 1 {name = "c", kind = "serial"} {
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[X:.*]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:      memref.store %[[V]], %{{.*}}[%[[I]]] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    tir.for
// CHECK-NEXT:      arith.constant
// CHECK-NEXT:      memref.store %{{.*}}, %[[X]]
func.func @input_written_after(%x: memref<4xf32>, %y: memref<4xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  tir.for %i = 0 to 4 step 1 {name = "p0", kind = "serial"} {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %p[%i] : memref<4xf32>
  }
  tir.for %i = 0 to 4 step 1 {name = "c", kind = "serial"} {
    %v = memref.load %p[%i] : memref<4xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  tir.for %i = 0 to 4 step 1 {name = "zero", kind = "serial"} {
    %z = arith.constant 0.000000e+00 : f32
    memref.store %z, %x[%i] : memref<4xf32>
  }
  memref.dealloc %p : memref<4xf32>
  func.return
}

// -----

func.func @read_first(%x: memref<4xf32>, %y: memref<4xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  tir.for %i = 0 to 4 step 1 {name = "c", kind = "serial"} {
    // CHECK: compute-inline.mlir:[[# @LINE + 1]]:5: error: tir-compute-inline: cannot inline loop 'p0' of @read_first: %p is read before the producer writes it
    %v = memref.load %p[%i] : memref<4xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  tir.for %i = 0 to 4 step 1 {name = "p0", kind = "serial"} {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %p[%i] : memref<4xf32>
  }
  memref.dealloc %p : memref<4xf32>
  func.return
}

// -----

// An epilogue as a fused kernel leaves it: the add reads the conv's
// output %t, freed right after the add; inlined into the relu, the add
// reads %t later, so the dealloc of %t moves after the relu.
// CHECK-LABEL: func.func @add_relu(
// CHECK-NEXT:    %[[T:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    tir.for
// CHECK-NEXT:      arith.constant
// CHECK-NEXT:      memref.store %{{.*}}, %[[T]]
// CHECK-NEXT:    }
// CHECK-NEXT:    tir.for %[[I:.*]] = 0 to 4 step 1 {name = "relu", kind = "serial"} {
// CHECK-NEXT:      %[[A:.*]] = memref.load %[[T]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:      %[[B:.*]] = memref.load %{{.*}}[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[Z:.*]] = arith.constant
// CHECK-NEXT:      arith.maximumf %[[S]], %[[Z]] : f32
// CHECK-NEXT:      memref.store
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[T]] : memref<4xf32>
// CHECK-NEXT:    func.return
func.func @add_relu(%x: memref<4xf32>, %y: memref<4xf32> {graph.output = 0 : i64}) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  tir.for %i = 0 to 4 step 1 {name = "conv", kind = "serial"} {
    %one = arith.constant 1.000000e+00 : f32
    memref.store %one, %t[%i] : memref<4xf32>
  }
  %s = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  tir.for %i = 0 to 4 step 1 {name = "p0", kind = "serial"} {
    %a = memref.load %t[%i] : memref<4xf32>
    %b = memref.load %x[%i] : memref<4xf32>
    %c = arith.addf %a, %b : f32
    memref.store %c, %s[%i] : memref<4xf32>
  }
  memref.dealloc %t : memref<4xf32>
  tir.for %i = 0 to 4 step 1 {name = "relu", kind = "serial"} {
    %v = memref.load %s[%i] : memref<4xf32>
    %zero = arith.constant 0.000000e+00 : f32
    %r = arith.maximumf %v, %zero : f32
    memref.store %r, %y[%i] : memref<4xf32>
  }
  memref.dealloc %s : memref<4xf32>
  func.return
}

// -----

// A producer that checks what it reads stays a nest of its own: inlined at
// each load of its buffer, the check would run for the elements read only,
// and as often as they are read.
func.func @checked(%x: memref<4xi64>, %y: memref<4xi64>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<4xi64>
  tir.for %i = 0 to 4 step 1 {name = "p0", kind = "serial"} {
    %v = memref.load %x[%i] : memref<4xi64>
    %four = arith.constant 4 : i64
    %ok = arith.cmpi ult, %v, %four : i64
    // CHECK: compute-inline.mlir:[[# @LINE + 1]]:5: error: tir-compute-inline: cannot inline loop 'p0' of @checked: the body of loop 'p0' holds 'tir.assert'; only pure scalar ops, loads and one store inline
    tir.assert %ok, "index {} is out of range", %v : i64
    memref.store %v, %p[%i] : memref<4xi64>
  }
  tir.for %i = 0 to 4 step 1 {name = "c", kind = "serial"} {
    %v = memref.load %p[%i] : memref<4xi64>
    memref.store %v, %y[%i] : memref<4xi64>
  }
  memref.dealloc %p : memref<4xi64>
  func.return
}
