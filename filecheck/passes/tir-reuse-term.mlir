// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reuse-term{func=softmax loop=r consumer=p}' | filecheck %s
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reuse-term{func=columns loop=r consumer=i}' | filecheck %s --check-prefix=COLUMNS
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reuse-term{func=softmax loop=o consumer=p}' | filecheck %s --check-prefix=OUTER
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reuse-term{func=softmax loop=r consumer=o}' | filecheck %s --check-prefix=ITSELF
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reuse-term{func=shorter loop=r consumer=first}' | filecheck %s --check-prefix=BEFORE
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reuse-term{func=log_softmax loop=r consumer=p}' | filecheck %s --check-prefix=NOTERM
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reuse-term{func=read_between loop=r consumer=p}' | filecheck %s --check-prefix=BETWEEN
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reuse-term{func=input_changed loop=r consumer=p}' | filecheck %s --check-prefix=CHANGED
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reuse-term{func=shorter loop=r consumer=p}' | filecheck %s --check-prefix=RANGE
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reuse-term{func=softmax loop=r consumer=q}' | filecheck %s --check-prefix=NESTED
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-reuse-term{func=softmax loop=r consumer=z}' | filecheck %s --check-prefix=NOLOOP

// A softmax over rows of 8: the sum nest o, r accumulates exp(x - max);
// the output nest p, q computes it again and scales it. The sum now
// stores each exp into %y, which the output nest reads back.
// CHECK-LABEL: func.func @softmax(
// CHECK:         tir.for %[[O:.*]] = 0 to 2 step 1 {name = "o", kind = "serial"} {
// CHECK:           tir.for %[[R:.*]] = 0 to 8 step 1 {name = "r", kind = "serial"} {
// CHECK-NEXT:        %{{.*}} = memref.load %x[%[[O]], %[[R]]] : memref<2x8xf32>
// CHECK-NEXT:        %{{.*}} = memref.load %max[%[[O]]] : memref<2xf32>
// CHECK-NEXT:        %{{.*}} = arith.subf
// CHECK-NEXT:        %[[E:.*]] = math.exp
// CHECK-NEXT:        memref.store %[[E]], %y[%[[O]], %[[R]]] : memref<2x8xf32>
// CHECK-NEXT:        %{{.*}} = memref.load %acc[] : memref<f32>
// CHECK-NEXT:        %{{.*}} = arith.addf %{{.*}}, %[[E]] : f32
// CHECK:         tir.for %[[P:.*]] = 0 to 2 step 1 {name = "p", kind = "serial"} {
// CHECK-NEXT:      tir.for %[[Q:.*]] = 0 to 8 step 1 {name = "q", kind = "serial"} {
// CHECK-NEXT:        %[[T:.*]] = memref.load %y[%[[P]], %[[Q]]] : memref<2x8xf32>
// CHECK-NEXT:        %[[S:.*]] = memref.load %scale[%[[P]]] : memref<2xf32>
// CHECK-NEXT:        %[[V:.*]] = arith.mulf %[[T]], %[[S]] : f32
// CHECK-NEXT:        memref.store %[[V]], %y[%[[P]], %[[Q]]] : memref<2x8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NOT:     math.exp
// CHECK:         func.return

// OUTER: error: tir-reuse-term: cannot reuse the term of loop 'o' in loop 'p' of @softmax: loop 'o' holds loops; the term must be computed in the innermost reduction loop
// ITSELF: error: tir-reuse-term: cannot reuse the term of loop 'r' in loop 'o' of @softmax: loop 'o' is not perfectly nested (the consumer must be an elementwise nest)
// NESTED: error: tir-reuse-term: cannot reuse the term of loop 'r' in loop 'q' of @softmax: loop 'q' is not a top-level loop nest
// NOLOOP: error: tir-reuse-term: no loop named 'z' in @softmax
func.func @softmax(%x: memref<2x8xf32>, %max: memref<2xf32>, %scale: memref<2xf32>, %y: memref<2x8xf32>) {
  tir.for %o = 0 to 2 step 1 {name = "o", kind = "serial"} {
    %acc = memref.alloca() : memref<f32>
    %zero = arith.constant 0.000000e+00 : f32
    memref.store %zero, %acc[] : memref<f32>
    tir.for %r = 0 to 8 step 1 {name = "r", kind = "serial"} {
      %v = memref.load %x[%o, %r] : memref<2x8xf32>
      %m = memref.load %max[%o] : memref<2xf32>
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      %a = memref.load %acc[] : memref<f32>
      %n = arith.addf %a, %e : f32
      memref.store %n, %acc[] : memref<f32>
    }
    %sum = memref.load %acc[] : memref<f32>
    %one = arith.constant 1.000000e+00 : f32
    %inv = arith.divf %one, %sum : f32
    memref.store %inv, %scale[%o] : memref<2xf32>
  }
  tir.for %p = 0 to 2 step 1 {name = "p", kind = "serial"} {
    tir.for %q = 0 to 8 step 1 {name = "q", kind = "serial"} {
      %v = memref.load %x[%p, %q] : memref<2x8xf32>
      %m = memref.load %max[%p] : memref<2xf32>
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      %s = memref.load %scale[%p] : memref<2xf32>
      %y1 = arith.mulf %e, %s : f32
      memref.store %y1, %y[%p, %q] : memref<2x8xf32>
    }
  }
  func.return
}

// -----

// A softmax down the columns (axis 0): the reduction runs over the rows,
// its variable paired with the output's outer loop; the store follows the
// output's index order.
// COLUMNS-LABEL: func.func @columns(
// COLUMNS:         tir.for %[[C:.*]] = 0 to 3 step 1 {name = "c", kind = "serial"} {
// COLUMNS:           tir.for %[[R:.*]] = 0 to 4 step 1 {name = "r", kind = "serial"} {
// COLUMNS:             %[[E:.*]] = math.exp
// COLUMNS-NEXT:        memref.store %[[E]], %y[%[[R]], %[[C]]] : memref<4x3xf32>
// COLUMNS:         tir.for %[[I:.*]] = 0 to 4 step 1 {name = "i", kind = "serial"} {
// COLUMNS-NEXT:      tir.for %[[J:.*]] = 0 to 3 step 1 {name = "j", kind = "serial"} {
// COLUMNS-NEXT:        %[[T:.*]] = memref.load %y[%[[I]], %[[J]]] : memref<4x3xf32>
// COLUMNS-NEXT:        %{{.*}} = memref.load %scale[%[[J]]] : memref<3xf32>
// COLUMNS-NEXT:        arith.mulf %[[T]]
func.func @columns(%x: memref<4x3xf32>, %scale: memref<3xf32>, %y: memref<4x3xf32>) {
  tir.for %c = 0 to 3 step 1 {name = "c", kind = "serial"} {
    %acc = memref.alloca() : memref<f32>
    %zero = arith.constant 0.000000e+00 : f32
    memref.store %zero, %acc[] : memref<f32>
    tir.for %r = 0 to 4 step 1 {name = "r", kind = "serial"} {
      %v = memref.load %x[%r, %c] : memref<4x3xf32>
      %e = math.exp %v : f32
      %a = memref.load %acc[] : memref<f32>
      %n = arith.addf %a, %e : f32
      memref.store %n, %acc[] : memref<f32>
    }
    %sum = memref.load %acc[] : memref<f32>
    memref.store %sum, %scale[%c] : memref<3xf32>
  }
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    tir.for %j = 0 to 3 step 1 {name = "j", kind = "serial"} {
      %v = memref.load %x[%i, %j] : memref<4x3xf32>
      %e = math.exp %v : f32
      %s = memref.load %scale[%j] : memref<3xf32>
      %y1 = arith.mulf %e, %s : f32
      memref.store %y1, %y[%i, %j] : memref<4x3xf32>
    }
  }
  func.return
}

// -----

// A log-softmax's output nest computes (x - max) - log(sum), not the exp.
// NOTERM: error: tir-reuse-term: cannot reuse the term of loop 'r' in loop 'p' of @log_softmax: the consumer computes no value as the term does, with every loop of both paired
func.func @log_softmax(%x: memref<2x8xf32>, %max: memref<2xf32>, %log: memref<2xf32>, %y: memref<2x8xf32>) {
  tir.for %o = 0 to 2 step 1 {name = "o", kind = "serial"} {
    %acc = memref.alloca() : memref<f32>
    %zero = arith.constant 0.000000e+00 : f32
    memref.store %zero, %acc[] : memref<f32>
    tir.for %r = 0 to 8 step 1 {name = "r", kind = "serial"} {
      %v = memref.load %x[%o, %r] : memref<2x8xf32>
      %m = memref.load %max[%o] : memref<2xf32>
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      %a = memref.load %acc[] : memref<f32>
      %n = arith.addf %a, %e : f32
      memref.store %n, %acc[] : memref<f32>
    }
    %sum = memref.load %acc[] : memref<f32>
    %l = math.log %sum : f32
    memref.store %l, %log[%o] : memref<2xf32>
  }
  tir.for %p = 0 to 2 step 1 {name = "p", kind = "serial"} {
    tir.for %q = 0 to 8 step 1 {name = "q", kind = "serial"} {
      %v = memref.load %x[%p, %q] : memref<2x8xf32>
      %m = memref.load %max[%p] : memref<2xf32>
      %d = arith.subf %v, %m : f32
      %s = memref.load %log[%p] : memref<2xf32>
      %y1 = arith.subf %d, %s : f32
      memref.store %y1, %y[%p, %q] : memref<2x8xf32>
    }
  }
  func.return
}

// -----

// A nest between the two reads the output buffer: it would see the terms.
// BETWEEN: error: tir-reuse-term: cannot reuse the term of loop 'r' in loop 'p' of @read_between: 'memref.load' uses %y (argument 2) before the consumer
func.func @read_between(%x: memref<8xf32>, %z: memref<8xf32>, %y: memref<8xf32>) {
  %acc = memref.alloca() : memref<f32>
  %zero = arith.constant 0.000000e+00 : f32
  memref.store %zero, %acc[] : memref<f32>
  tir.for %r = 0 to 8 step 1 {name = "r", kind = "serial"} {
    %v = memref.load %x[%r] : memref<8xf32>
    %e = math.exp %v : f32
    %a = memref.load %acc[] : memref<f32>
    %n = arith.addf %a, %e : f32
    memref.store %n, %acc[] : memref<f32>
  }
  tir.for %k = 0 to 8 step 1 {name = "k", kind = "serial"} {
    %v = memref.load %y[%k] : memref<8xf32>
    memref.store %v, %z[%k] : memref<8xf32>
  }
  tir.for %p = 0 to 8 step 1 {name = "p", kind = "serial"} {
    %v = memref.load %x[%p] : memref<8xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%p] : memref<8xf32>
  }
  func.return
}

// -----

// The input of the term changes between the reduction and the consumer.
// CHANGED: error: tir-reuse-term: cannot reuse the term of loop 'r' in loop 'p' of @input_changed: 'memref.store' may change a buffer the term reads
func.func @input_changed(%x: memref<8xf32>, %y: memref<8xf32>) {
  %acc = memref.alloca() : memref<f32>
  %zero = arith.constant 0.000000e+00 : f32
  memref.store %zero, %acc[] : memref<f32>
  tir.for %r = 0 to 8 step 1 {name = "r", kind = "serial"} {
    %v = memref.load %x[%r] : memref<8xf32>
    %e = math.exp %v : f32
    %a = memref.load %acc[] : memref<f32>
    %n = arith.addf %a, %e : f32
    memref.store %n, %acc[] : memref<f32>
  }
  tir.for %k = 0 to 8 step 1 {name = "k", kind = "serial"} {
    %one = arith.constant 1.000000e+00 : f32
    memref.store %one, %x[%k] : memref<8xf32>
  }
  tir.for %p = 0 to 8 step 1 {name = "p", kind = "serial"} {
    %v = memref.load %x[%p] : memref<8xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%p] : memref<8xf32>
  }
  func.return
}

// -----

// The reduction covers half the row: it would store only half the terms.
// BEFORE: error: tir-reuse-term: cannot reuse the term of loop 'r' in loop 'first' of @shorter: loop 'first' does not come after the reduction
// RANGE: error: tir-reuse-term: cannot reuse the term of loop 'r' in loop 'p' of @shorter: loop 'r' and loop 'p', which index the term alike, run over different ranges
func.func @shorter(%x: memref<8xf32>, %y: memref<8xf32>) {
  tir.for %f = 0 to 8 step 1 {name = "first", kind = "serial"} {
    %v = memref.load %x[%f] : memref<8xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%f] : memref<8xf32>
  }
  %acc = memref.alloca() : memref<f32>
  %zero = arith.constant 0.000000e+00 : f32
  memref.store %zero, %acc[] : memref<f32>
  tir.for %r = 0 to 4 step 1 {name = "r", kind = "serial"} {
    %v = memref.load %x[%r] : memref<8xf32>
    %e = math.exp %v : f32
    %a = memref.load %acc[] : memref<f32>
    %n = arith.addf %a, %e : f32
    memref.store %n, %acc[] : memref<f32>
  }
  tir.for %p = 0 to 8 step 1 {name = "p", kind = "serial"} {
    %v = memref.load %x[%p] : memref<8xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%p] : memref<8xf32>
  }
  func.return
}
