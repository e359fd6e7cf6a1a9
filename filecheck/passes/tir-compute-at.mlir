// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-compute-at{func=pad_conv loop=c at=oi}' | filecheck %s
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-compute-at{func=pad_conv loop=c at=oj local=true}' | filecheck %s --check-prefix=LOCAL
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-parallel{func=pad_conv loop=oi},tir-compute-at{func=pad_conv loop=c at=oi local=true}' | filecheck %s --check-prefix=PARLOCAL
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-parallel{func=pad_conv loop=oi},tir-compute-at{func=pad_conv loop=c at=oj}' | filecheck %s --check-prefix=PARALLEL
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-compute-at{func=pad_conv loop=c at=j}' | filecheck %s --check-prefix=INSIDE
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-compute-at{func=pad_conv loop=oi at=i}' | filecheck %s --check-prefix=BEFORE
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-compute-at{func=pad_conv loop=i at=oi}' | filecheck %s --check-prefix=NESTED
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-compute-at{func=pad_conv loop=c at=q}' | filecheck %s --check-prefix=NOLOOP
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-compute-at{func=nowhere loop=c at=oi}' | filecheck %s --check-prefix=NOFUNC
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-compute-at{func=two_readers loop=i at=k}' | filecheck %s --check-prefix=READERS
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-compute-at{func=clamped loop=i at=k}' | filecheck %s --check-prefix=CLAMPED
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-compute-at{func=reduction loop=i at=k}' | filecheck %s --check-prefix=REDUCTION
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-compute-at{func=reduction loop=k at=k}' | filecheck %s --check-prefix=SELF
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-compute-at{func=not_injective loop=i at=k}' | filecheck %s --check-prefix=INJECTIVE
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-compute-at{func=to_argument loop=i at=k}' | filecheck %s --check-prefix=ARGUMENT
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-compute-at{func=in_place loop=i at=k}' | filecheck %s --check-prefix=INPLACE

// A padded conv (2 channels, 4x4 input, pad 1, 3x3 window, one output
// channel): the padding nest c, i, j fills %pad, the conv nest oi, oj reads
// %pad[rc, oi + ri, oj + rj]. At oi each output row reads 3 rows of every
// channel: i runs 3 times from oi, c and j stay whole, %pad keeps its size.
// CHECK-LABEL: func.func @pad_conv(
// CHECK-NEXT:    %[[PAD:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x6x6xf32>
// CHECK-NEXT:    tir.for %[[OI:.*]] = 0 to 4 step 1 {name = "oi", kind = "serial"} {
// CHECK-NEXT:      tir.for %[[C:.*]] = 0 to 2 step 1 {name = "c_at", kind = "serial"} {
// CHECK-NEXT:        tir.for %[[I:.*]] = 0 to 3 step 1 {name = "i_at", kind = "serial"} {
// CHECK-NEXT:          %[[ROW:.*]] = arith.addi %[[I]], %[[OI]] : index
// CHECK-NEXT:          tir.for %[[J:.*]] = 0 to 6 step 1 {name = "j_at", kind = "serial"} {
// CHECK:                 %{{.*}} = arith.subi %[[ROW]], %{{.*}} : index
// CHECK-NEXT:            %{{.*}} = arith.subi %[[J]], %{{.*}} : index
// CHECK:                 memref.load %x[%[[C]], %{{.*}}, %{{.*}}] : memref<2x4x4xf32>
// CHECK:                 memref.store %{{.*}}, %[[PAD]][%[[C]], %[[ROW]], %[[J]]] : memref<2x6x6xf32>
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      tir.for %[[OJ:.*]] = 0 to 4 step 1 {name = "oj", kind = "serial"} {
// CHECK:             memref.load %[[PAD]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x6x6xf32>
// CHECK:         memref.dealloc %[[PAD]] : memref<2x6x6xf32>
// CHECK-NEXT:    func.return

// With local=true at oj the 2x3x3 window of one output is computed into a
// buffer of its own, which the conv reads at [rc, ri, rj]; %pad is gone.
// LOCAL-LABEL: func.func @pad_conv(
// LOCAL-NEXT:    tir.for %[[OI:.*]] = 0 to 4 step 1 {name = "oi", kind = "serial"} {
// LOCAL-NEXT:      tir.for %[[OJ:.*]] = 0 to 4 step 1 {name = "oj", kind = "serial"} {
// LOCAL-NEXT:        %[[WIN:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x3x3xf32>
// LOCAL-NEXT:        tir.for %[[C:.*]] = 0 to 2 step 1 {name = "c_at", kind = "serial"} {
// LOCAL-NEXT:          tir.for %[[I:.*]] = 0 to 3 step 1 {name = "i_at", kind = "serial"} {
// LOCAL-NEXT:            %[[ROW:.*]] = arith.addi %[[I]], %[[OI]] : index
// LOCAL-NEXT:            tir.for %[[J:.*]] = 0 to 3 step 1 {name = "j_at", kind = "serial"} {
// LOCAL-NEXT:              %[[COL:.*]] = arith.addi %[[J]], %[[OJ]] : index
// LOCAL:                   arith.subi %[[ROW]]
// LOCAL-NEXT:              arith.subi %[[COL]]
// LOCAL:                   memref.store %{{.*}}, %[[WIN]][%[[C]], %[[I]], %[[J]]] : memref<2x3x3xf32>
// LOCAL:                 tir.for %[[RC:.*]] = 0 to 2 step 1 {name = "rc", kind = "serial"} {
// LOCAL-NEXT:              tir.for %[[RI:.*]] = 0 to 3 step 1 {name = "ri", kind = "serial"} {
// LOCAL-NEXT:                tir.for %[[RJ:.*]] = 0 to 3 step 1 {name = "rj", kind = "serial"} {
// LOCAL-NEXT:                  memref.load %[[WIN]][%[[RC]], %[[RI]], %[[RJ]]] : memref<2x3x3xf32>
// LOCAL-NOT:     memref.alloc
// LOCAL-NOT:     memref.dealloc
// LOCAL:         func.return

// A parallel row loop: each iteration fills its own 2x3x6 region.
// PARLOCAL-LABEL: func.func @pad_conv(
// PARLOCAL-NEXT:    tir.for %{{.*}} = 0 to 4 step 1 {name = "oi", kind = "parallel"} {
// PARLOCAL-NEXT:      %[[ROWS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x3x6xf32>
// PARLOCAL-NEXT:      tir.for %{{.*}} = 0 to 2 step 1 {name = "c_at", kind = "serial"} {

// PARALLEL: error: tir-compute-at: cannot compute loop 'c' at loop 'oj' of @pad_conv: loop 'oi' is parallel: its iterations would race on the function-level buffer (local=true gives each iteration its own)
// INSIDE: error: tir-compute-at: cannot compute loop 'c' at loop 'j' of @pad_conv: loop 'j' is inside the producer
// BEFORE: error: tir-compute-at: cannot compute loop 'oi' at loop 'i' of @pad_conv: loop 'i' comes before the producer; it must be in a later loop nest that reads the buffer
// NESTED: error: tir-compute-at: cannot compute loop 'i' at loop 'oi' of @pad_conv: loop 'i' is not a top-level loop nest of @pad_conv
// NOLOOP: error: tir-compute-at: no loop named 'q' in @pad_conv
// NOFUNC: error: tir-compute-at: no function @nowhere in the module
func.func @pad_conv(%x: memref<2x4x4xf32>, %w: memref<2x3x3xf32>, %y: memref<4x4xf32> {graph.output = 0 : i64}) {
  %pad = memref.alloc() {alignment = 64 : i64} : memref<2x6x6xf32>
  tir.for %c = 0 to 2 step 1 {name = "c", kind = "serial"} {
    tir.for %i = 0 to 6 step 1 {name = "i", kind = "serial"} {
      tir.for %j = 0 to 6 step 1 {name = "j", kind = "serial"} {
        %one = arith.constant 1 : index
        %zero = arith.constant 0 : index
        %last = arith.constant 3 : index
        %xi = arith.subi %i, %one : index
        %xj = arith.subi %j, %one : index
        %lo_i = arith.cmpi sge, %xi, %zero : index
        %hi_i = arith.cmpi sle, %xi, %last : index
        %lo_j = arith.cmpi sge, %xj, %zero : index
        %hi_j = arith.cmpi sle, %xj, %last : index
        %in_i = arith.andi %lo_i, %hi_i : i1
        %in_j = arith.andi %lo_j, %hi_j : i1
        %inside = arith.andi %in_i, %in_j : i1
        %ci = arith.maxsi %xi, %zero : index
        %ci2 = arith.minsi %ci, %last : index
        %cj = arith.maxsi %xj, %zero : index
        %cj2 = arith.minsi %cj, %last : index
        %v = memref.load %x[%c, %ci2, %cj2] : memref<2x4x4xf32>
        %f0 = arith.constant 0.000000e+00 : f32
        %p = arith.select %inside, %v, %f0 : f32
        memref.store %p, %pad[%c, %i, %j] : memref<2x6x6xf32>
      }
    }
  }
  tir.for %oi = 0 to 4 step 1 {name = "oi", kind = "serial"} {
    tir.for %oj = 0 to 4 step 1 {name = "oj", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %init = arith.constant 0.000000e+00 : f32
      memref.store %init, %acc[] : memref<f32>
      tir.for %rc = 0 to 2 step 1 {name = "rc", kind = "serial"} {
        tir.for %ri = 0 to 3 step 1 {name = "ri", kind = "serial"} {
          tir.for %rj = 0 to 3 step 1 {name = "rj", kind = "serial"} {
            %a = arith.addi %oi, %ri : index
            %b = arith.addi %oj, %rj : index
            %xv = memref.load %pad[%rc, %a, %b] : memref<2x6x6xf32>
            %wv = memref.load %w[%rc, %ri, %rj] : memref<2x3x3xf32>
            %m = arith.mulf %xv, %wv : f32
            %s = memref.load %acc[] : memref<f32>
            %t = arith.addf %s, %m : f32
            memref.store %t, %acc[] : memref<f32>
          }
        }
      }
      %r = memref.load %acc[] : memref<f32>
      memref.store %r, %y[%oi, %oj] : memref<4x4xf32>
    }
  }
  memref.dealloc %pad : memref<2x6x6xf32>
  func.return
}

// -----

// READERS: error: tir-compute-at: cannot compute loop 'i' at loop 'k' of @two_readers: %t is also read in loop 'l', outside loop 'k': that reader would see only the region the last iteration computed
func.func @two_readers(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "serial"} {
    %v = memref.load %x[%i] : memref<8xf32>
    %d = arith.addf %v, %v : f32
    memref.store %d, %t[%i] : memref<8xf32>
  }
  tir.for %k = 0 to 8 step 1 {name = "k", kind = "serial"} {
    %v = memref.load %t[%k] : memref<8xf32>
    memref.store %v, %y[%k] : memref<8xf32>
  }
  tir.for %l = 0 to 8 step 1 {name = "l", kind = "serial"} {
    %v = memref.load %t[%l] : memref<8xf32>
    memref.store %v, %z[%l] : memref<8xf32>
  }
  memref.dealloc %t : memref<8xf32>
  func.return
}

// -----

// A window clamped to the buffer's end: its index goes through a select.
// CLAMPED: error: tir-compute-at: cannot compute loop 'i' at loop 'k' of @clamped: buffer %t in loop 'k': an index of its load is not a sum of constant multiples of loop variables: it uses the result of 'arith.select'
func.func @clamped(%x: memref<8xf32>, %y: memref<8xf32>) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "serial"} {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %t[%i] : memref<8xf32>
  }
  tir.for %k = 0 to 8 step 1 {name = "k", kind = "serial"} {
    tir.for %r = 0 to 2 step 1 {name = "r", kind = "serial"} {
      %c7 = arith.constant 7 : index
      %s = arith.addi %k, %r : index
      %big = arith.cmpi ugt, %s, %c7 : index
      %at = arith.select %big, %c7, %s : index
      %v = memref.load %t[%at] : memref<8xf32>
      memref.store %v, %y[%k] : memref<8xf32>
    }
  }
  memref.dealloc %t : memref<8xf32>
  func.return
}

// -----

// A row sum: the producer reduces into %t.
// REDUCTION: error: tir-compute-at: cannot compute loop 'i' at loop 'k' of @reduction: loop 'i' in @reduction is not perfectly nested: its body holds 'memref.store' beside loop 'j'
// SELF: error: tir-compute-at: cannot compute loop 'k' at loop 'k' of @reduction: loop 'k' is inside the producer
func.func @reduction(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    %zero = arith.constant 0.000000e+00 : f32
    memref.store %zero, %t[%i] : memref<4xf32>
    tir.for %j = 0 to 8 step 1 {name = "j", kind = "serial"} {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      %s = memref.load %t[%i] : memref<4xf32>
      %a = arith.addf %s, %v : f32
      memref.store %a, %t[%i] : memref<4xf32>
    }
  }
  tir.for %k = 0 to 4 step 1 {name = "k", kind = "serial"} {
    %v = memref.load %t[%k] : memref<4xf32>
    memref.store %v, %y[%k] : memref<4xf32>
  }
  memref.dealloc %t : memref<4xf32>
  func.return
}

// -----

// Two iterations (j) write each element: the last one wins.
// INJECTIVE: error: tir-compute-at: cannot compute loop 'i' at loop 'k' of @not_injective: the producer's store index is not exactly its loop variables, each once (each element of the buffer must be written once, by one iteration)
func.func @not_injective(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    tir.for %j = 0 to 8 step 1 {name = "j", kind = "serial"} {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      memref.store %v, %t[%i] : memref<4xf32>
    }
  }
  tir.for %k = 0 to 4 step 1 {name = "k", kind = "serial"} {
    %v = memref.load %t[%k] : memref<4xf32>
    memref.store %v, %y[%k] : memref<4xf32>
  }
  memref.dealloc %t : memref<4xf32>
  func.return
}

// -----

// ARGUMENT: error: tir-compute-at: cannot compute loop 'i' at loop 'k' of @to_argument: the producer writes %t (argument 1), which is not a buffer allocated (memref.alloc) in the body of @to_argument
func.func @to_argument(%x: memref<8xf32>, %t: memref<8xf32>, %y: memref<8xf32>) {
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "serial"} {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %t[%i] : memref<8xf32>
  }
  tir.for %k = 0 to 8 step 1 {name = "k", kind = "serial"} {
    %v = memref.load %t[%k] : memref<8xf32>
    memref.store %v, %y[%k] : memref<8xf32>
  }
  func.return
}

// -----

// The consumer overwrites %x, which the producer reads.
// INPLACE: error: tir-compute-at: cannot compute loop 'i' at loop 'k' of @in_place: 'memref.store' uses %x (argument 0), which the producer reads, between the producer and loop 'k'; computed later the producer could read other values
func.func @in_place(%x: memref<8xf32>) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "serial"} {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %t[%i] : memref<8xf32>
  }
  tir.for %k = 0 to 8 step 1 {name = "k", kind = "serial"} {
    %c7 = arith.constant 7 : index
    %rev = arith.subi %c7, %k : index
    %v = memref.load %t[%rev] : memref<8xf32>
    memref.store %v, %x[%k] : memref<8xf32>
  }
  memref.dealloc %t : memref<8xf32>
  func.return
}
