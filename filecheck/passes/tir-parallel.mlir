// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-parallel{loop=i0}' | filecheck %s
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-parallel{func=matmul loop=i0}' | filecheck %s --check-prefix=ONE
// RUN: not xtc-opt %s -p 'tir-parallel{func=matmul loop=i9}' 2>&1 | filecheck %s --check-prefix=NOLOOP
// RUN: not xtc-opt %s -p 'tir-parallel{func=nowhere loop=i0}' 2>&1 | filecheck %s --check-prefix=NOFUNC

// Only the kind changes. Each iteration of i0 writes its own row of %c; the
// accumulator is allocated inside the loop, so it belongs to one iteration.
// Every function with a loop i0 is changed when `func` is empty.
// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT:    tir.for %[[I0:.*]] = 0 to 8 step 1 {name = "i0", kind = "parallel"} {
// CHECK-NEXT:      tir.for %[[I1:.*]] = 0 to 6 step 1 {name = "i1", kind = "serial"} {
// CHECK-NEXT:        %[[ACC:.*]] = memref.alloca() : memref<f32>
// CHECK:             tir.for %{{.*}} = 0 to 4 step 1 {name = "r0", kind = "serial"} {
// CHECK:             memref.store %{{.*}}, %c[%[[I0]], %[[I1]]] : memref<8x6xf32>
// CHECK-LABEL: func.func @relu(
// CHECK-NEXT:    tir.for %{{.*}} = 0 to 3 step 1 {name = "i0", kind = "parallel"} {

// ONE-LABEL: func.func @matmul(
// ONE-NEXT:    {name = "i0", kind = "parallel"}
// ONE-LABEL: func.func @relu(
// ONE-NEXT:    {name = "i0", kind = "serial"}

// NOLOOP: error: tir-parallel: no loop named 'i9' in @matmul
// NOFUNC: error: tir-parallel: no function @nowhere in the module
func.func @matmul(%a: memref<8x4xf32>, %b: memref<4x6xf32>, %c: memref<8x6xf32>) {
  tir.for %i0 = 0 to 8 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 6 step 1 {name = "i1", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[] : memref<f32>
      tir.for %r0 = 0 to 4 step 1 {name = "r0", kind = "serial"} {
        %x = memref.load %a[%i0, %r0] : memref<8x4xf32>
        %y = memref.load %b[%r0, %i1] : memref<4x6xf32>
        %p = arith.mulf %x, %y : f32
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %p : f32
        memref.store %t, %acc[] : memref<f32>
      }
      %v = memref.load %acc[] : memref<f32>
      memref.store %v, %c[%i0, %i1] : memref<8x6xf32>
    }
  }
  func.return
}
func.func @relu(%x: memref<3x8xf32>, %y: memref<3x8xf32>) {
  tir.for %i0 = 0 to 3 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 8 step 1 {name = "i1", kind = "serial"} {
      %v = memref.load %x[%i0, %i1] : memref<3x8xf32>
      %zero = arith.constant 0.000000e+00 : f32
      %r = arith.maximumf %v, %zero : f32
      memref.store %r, %y[%i0, %i1] : memref<3x8xf32>
    }
  }
  func.return
}

// -----

// After a split: i0 * 4 + ii with ii in [0, 4) gives each iteration of i0
// its own 4 elements; in place (a load at the stored index) is fine.
// CHECK-LABEL: func.func @split(
// CHECK-NEXT:    {name = "i0", kind = "parallel"}
func.func @split(%x: memref<8xf32>) {
  tir.for %io = 0 to 2 step 1 {name = "i0", kind = "serial"} {
    tir.for %ii = 0 to 4 step 1 {name = "i0_i", kind = "serial"} {
      %four = arith.constant 4 : index
      %base = arith.muli %io, %four : index
      %i = arith.addi %base, %ii : index
      %v = memref.load %x[%i] : memref<8xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %x[%i] : memref<8xf32>
    }
  }
  func.return
}

// -----

// Two stores, at 2 * i and 2 * i + 1, and a step of 3 with a lower bound:
// still one slice per iteration. A scratch buffer allocated and freed inside
// the loop may be written anyhow. A loop already parallel stays so.
// CHECK-LABEL: func.func @pairs(
// CHECK-NEXT:    {name = "i0", kind = "parallel"}
// CHECK-LABEL: func.func @strided(
// CHECK-NEXT:    {name = "i0", kind = "parallel"}
// CHECK-LABEL: func.func @scratch(
// CHECK-NEXT:    {name = "i0", kind = "parallel"}
// CHECK-LABEL: func.func @again(
// CHECK-NEXT:    {name = "i0", kind = "parallel"}
func.func @pairs(%x: memref<4xf32>, %y: memref<8xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    %v = memref.load %x[%i] : memref<4xf32>
    %two = arith.constant 2 : index
    %one = arith.constant 1 : index
    %even = arith.muli %two, %i : index
    %odd = arith.addi %even, %one : index
    memref.store %v, %y[%even] : memref<8xf32>
    memref.store %v, %y[%odd] : memref<8xf32>
  }
  func.return
}
func.func @strided(%x: memref<10xf32>) {
  tir.for %i = 1 to 10 step 3 {name = "i0", kind = "serial"} {
    tir.for %j = 0 to 3 step 1 {name = "j", kind = "serial"} {
      %k = arith.addi %i, %j : index
      %v = memref.load %x[%k] : memref<10xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %x[%k] : memref<10xf32>
    }
  }
  func.return
}
func.func @scratch(%x: memref<4x8xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    %tmp = memref.alloc() : memref<8xf32>
    %zero = arith.constant 0 : index
    %v = memref.load %x[%i, %zero] : memref<4x8xf32>
    memref.store %v, %tmp[%zero] : memref<8xf32>
    %w = memref.load %tmp[%zero] : memref<8xf32>
    memref.store %w, %x[%i, %zero] : memref<4x8xf32>
    memref.dealloc %tmp : memref<8xf32>
  }
  func.return
}
func.func @again(%x: memref<4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i0", kind = "parallel"} {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %x[%i] : memref<4xf32>
  }
  func.return
}

// -----

// A peeled tail: i0 * 8 + ii (ii in [0, 6)) and i0 * 8 + 6 + it (it in
// [0, 2), another loop's variable): together [0, 8), one slice per iteration.
// CHECK-LABEL: func.func @tail(
// CHECK-NEXT:    {name = "i0", kind = "parallel"}
func.func @tail(%x: memref<4x8xf32>, %y: memref<32xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    %eight = arith.constant 8 : index
    %base = arith.muli %i, %eight : index
    tir.for %ii = 0 to 6 step 1 {name = "ii", kind = "serial"} {
      %k = arith.addi %base, %ii : index
      %v = memref.load %x[%i, %ii] : memref<4x8xf32>
      memref.store %v, %y[%k] : memref<32xf32>
    }
    tir.for %it = 0 to 2 step 1 {name = "it", kind = "serial"} {
      %six = arith.constant 6 : index
      %j = arith.addi %it, %six : index
      %k = arith.addi %base, %j : index
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      memref.store %v, %y[%k] : memref<32xf32>
    }
  }
  func.return
}

// -----

// A tail past the slice: i0 * 8 + 6 + it with it in [0, 3) reaches the next
// iteration's first element.
func.func @long_tail(%x: memref<4x8xf32>, %y: memref<33xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    %eight = arith.constant 8 : index
    %base = arith.muli %i, %eight : index
    tir.for %ii = 0 to 6 step 1 {name = "ii", kind = "serial"} {
      %k = arith.addi %base, %ii : index
      %v = memref.load %x[%i, %ii] : memref<4x8xf32>
      // CHECK: error: tir-parallel: loop 'i0' in @long_tail may let two iterations touch one element of %y
      memref.store %v, %y[%k] : memref<33xf32>
    }
    tir.for %it = 0 to 3 step 1 {name = "it", kind = "serial"} {
      %six = arith.constant 6 : index
      %j = arith.addi %it, %six : index
      %k = arith.addi %base, %j : index
      %zero = arith.constant 0 : index
      %v = memref.load %x[%i, %zero] : memref<4x8xf32>
      memref.store %v, %y[%k] : memref<33xf32>
    }
  }
  func.return
}

// -----

// A reduction: every iteration adds into the one accumulator.
func.func @sum(%x: memref<8xf32>, %out: memref<f32>) {
  %acc = memref.alloca() : memref<f32>
  tir.for %r = 0 to 8 step 1 {name = "i0", kind = "serial"} {
    %v = memref.load %x[%r] : memref<8xf32>
    %s = memref.load %acc[] : memref<f32>
    %t = arith.addf %s, %v : f32
    // CHECK: tir-parallel.mlir:[[# @LINE + 1]]:5: error: tir-parallel: loop 'i0' in @sum may let two iterations touch one element of %acc: its stores do not all index one dimension `i0 * c + x` with one c and x (x free of 'i0', spanning less than c in an iteration), or a load of it reads outside that slice
    memref.store %t, %acc[] : memref<f32>
  }
  func.return
}

// -----

// A neighbour's element is read: iteration i reads what iteration i + 1 writes.
func.func @shift(%x: memref<9xf32>) {
  tir.for %i = 0 to 8 step 1 {name = "i0", kind = "serial"} {
    %one = arith.constant 1 : index
    %next = arith.addi %i, %one : index
    %v = memref.load %x[%next] : memref<9xf32>
    // CHECK: error: tir-parallel: loop 'i0' in @shift may let two iterations touch one element of %x
    memref.store %v, %x[%i] : memref<9xf32>
  }
  func.return
}

// -----

// A window: i + j with j in [0, 3) overlaps the next iterations' elements.
func.func @window(%x: memref<8xf32>, %y: memref<10xf32>) {
  tir.for %i = 0 to 8 step 1 {name = "i0", kind = "serial"} {
    tir.for %j = 0 to 3 step 1 {name = "j", kind = "serial"} {
      %k = arith.addi %i, %j : index
      %v = memref.load %x[%i] : memref<8xf32>
      // CHECK: error: tir-parallel: loop 'i0' in @window may let two iterations touch one element of %y
      memref.store %v, %y[%k] : memref<10xf32>
    }
  }
  func.return
}

// -----

// Two stores at i and i + 1: iterations i and i + 1 both write element i + 1.
func.func @overlap(%x: memref<8xf32>, %y: memref<9xf32>) {
  tir.for %i = 0 to 8 step 1 {name = "i0", kind = "serial"} {
    %one = arith.constant 1 : index
    %next = arith.addi %i, %one : index
    %v = memref.load %x[%i] : memref<8xf32>
    // CHECK: error: tir-parallel: loop 'i0' in @overlap may let two iterations touch one element of %y
    memref.store %v, %y[%i] : memref<9xf32>
    memref.store %v, %y[%next] : memref<9xf32>
  }
  func.return
}

// -----

// An index read from memory (a scatter) may repeat.
func.func @scatter(%where: memref<8xindex>, %x: memref<8xf32>, %y: memref<8xf32>) {
  tir.for %i = 0 to 8 step 1 {name = "i0", kind = "serial"} {
    %k = memref.load %where[%i] : memref<8xindex>
    %v = memref.load %x[%i] : memref<8xf32>
    // CHECK: error: tir-parallel: loop 'i0' in @scatter may let two iterations touch one element of %y
    memref.store %v, %y[%k] : memref<8xf32>
  }
  func.return
}

// -----

func.func private @helper(memref<8xf32>)
func.func @calls(%x: memref<8xf32>) {
  tir.for %i = 0 to 8 step 1 {name = "i0", kind = "serial"} {
    // CHECK: error: tir-parallel: loop 'i0' in @calls calls @helper: a call inside a parallel loop may touch any memory
    func.call @helper(%x) : (memref<8xf32>) -> ()
  }
  func.return
}

// -----

func.func @copies(%x: memref<8xf32>, %y: memref<8xf32>) {
  tir.for %i = 0 to 8 step 1 {name = "i0", kind = "serial"} {
    // CHECK: error: tir-parallel: loop 'i0' in @copies holds 'memref.copy', which writes memory not allocated in the loop (only memref.store may write such buffers)
    "memref.copy"(%x, %y) : (memref<8xf32>, memref<8xf32>) -> ()
  }
  func.return
}

// -----

func.func @vectorized(%x: memref<8xf32>) {
  // CHECK: error: tir-parallel: loop 'i0' in @vectorized is vectorized; only a serial loop becomes parallel
  tir.for %i = 0 to 8 step 1 {name = "i0", kind = "vectorized"} {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %x[%i] : memref<8xf32>
  }
  func.return
}

// -----

func.func @inside(%x: memref<4x8xf32>) {
  tir.for %p = 0 to 4 step 1 {name = "p", kind = "parallel"} {
    // CHECK: error: tir-parallel: loop 'i0' in @inside is inside parallel loop 'p': parallel loops do not nest
    tir.for %i = 0 to 8 step 1 {name = "i0", kind = "serial"} {
      %v = memref.load %x[%p, %i] : memref<4x8xf32>
      memref.store %v, %x[%p, %i] : memref<4x8xf32>
    }
  }
  func.return
}

// -----

func.func @holds(%x: memref<4x8xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    // CHECK: error: tir-parallel: loop 'i0' in @holds holds parallel loop 'p': parallel loops do not nest
    tir.for %p = 0 to 8 step 1 {name = "p", kind = "parallel"} {
      %v = memref.load %x[%i, %p] : memref<4x8xf32>
      memref.store %v, %x[%i, %p] : memref<4x8xf32>
    }
  }
  func.return
}

// -----

// Fused loops (tir-fuse's divui and remui, fused twice): the iterations are
// told apart by the digits a = v / 8, b = (v % 8) / 4, c = (v % 8) % 4, each
// the index of a dimension of its own, or a * 4 + b as one index of b's
// extent. An inner loop j ranges inside the iteration's element.
// CHECK-LABEL: func.func @fused(
// CHECK-NEXT:    {name = "i0", kind = "parallel"}
// CHECK-LABEL: func.func @fused_linear(
// CHECK-NEXT:    {name = "i0", kind = "parallel"}
func.func @fused(%x: memref<3x2x4x5xf32>) {
  tir.for %v = 0 to 24 step 1 {name = "i0", kind = "serial"} {
    %eight = arith.constant 8 : index
    %four = arith.constant 4 : index
    %a = arith.divui %v, %eight : index
    %w = arith.remui %v, %eight : index
    %b = arith.divui %w, %four : index
    %c = arith.remui %w, %four : index
    tir.for %j = 0 to 5 step 1 {name = "j", kind = "serial"} {
      %e = memref.load %x[%a, %b, %c, %j] : memref<3x2x4x5xf32>
      %f = arith.addf %e, %e : f32
      memref.store %f, %x[%a, %b, %c, %j] : memref<3x2x4x5xf32>
    }
  }
  func.return
}
func.func @fused_linear(%x: memref<6x12xf32>) {
  tir.for %v = 0 to 12 step 1 {name = "i0", kind = "serial"} {
    %four = arith.constant 4 : index
    %a = arith.divui %v, %four : index
    %b = arith.remui %v, %four : index
    %scaled = arith.muli %a, %four : index
    %i = arith.addi %scaled, %b : index
    %zero = arith.constant 0 : index
    %e = memref.load %x[%zero, %i] : memref<6x12xf32>
    memref.store %e, %x[%zero, %i] : memref<6x12xf32>
  }
  func.return
}

// -----

// A fused loop whose stores drop a digit: iterations v and v + 1 (one b
// apart) write one element.
func.func @fused_drops(%x: memref<3xf32>) {
  tir.for %v = 0 to 12 step 1 {name = "i0", kind = "serial"} {
    %four = arith.constant 4 : index
    %a = arith.divui %v, %four : index
    %b = arith.remui %v, %four : index
    %e = memref.load %x[%a] : memref<3xf32>
    // CHECK: error: tir-parallel: loop 'i0' in @fused_drops may let two iterations touch one element of %x{{.*}} reads outside that slice (for each digit of the fused loop)
    memref.store %e, %x[%a] : memref<3xf32>
  }
  func.return
}

// -----

// A fused loop read across its digits: iteration (a, b) reads element
// (b, a), which iteration (b, a) writes.
func.func @fused_transposed(%x: memref<4x4xf32>) {
  tir.for %v = 0 to 16 step 1 {name = "i0", kind = "serial"} {
    %four = arith.constant 4 : index
    %a = arith.divui %v, %four : index
    %b = arith.remui %v, %four : index
    %e = memref.load %x[%b, %a] : memref<4x4xf32>
    // CHECK: error: tir-parallel: loop 'i0' in @fused_transposed may let two iterations touch one element of %x
    memref.store %e, %x[%a, %b] : memref<4x4xf32>
  }
  func.return
}

// -----

// Digits overlapping in one index: 2 * a + b with b in [0, 4) gives
// iterations (0, 2) and (1, 0) one element.
func.func @fused_overlap(%x: memref<12xf32>) {
  tir.for %v = 0 to 12 step 1 {name = "i0", kind = "serial"} {
    %four = arith.constant 4 : index
    %two = arith.constant 2 : index
    %a = arith.divui %v, %four : index
    %b = arith.remui %v, %four : index
    %twice = arith.muli %a, %two : index
    %i = arith.addi %twice, %b : index
    %e = memref.load %x[%i] : memref<12xf32>
    // CHECK: error: tir-parallel: loop 'i0' in @fused_overlap may let two iterations touch one element of %x
    memref.store %e, %x[%i] : memref<12xf32>
  }
  func.return
}
