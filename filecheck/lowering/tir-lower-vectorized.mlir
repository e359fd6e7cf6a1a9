// RUN: xtc-opt %s -p tir-lower-vectorized --split-input-file | filecheck %s
// RUN: xtc-opt %s -p tir-lower-vectorized --split-input-file | xtc-opt --split-input-file | filecheck %s

// A vectorized loop of 16 iterations becomes straight-line code over
// vector<16xf32>: a load at stride 1 is one vector load, the uniform %s is
// splatted, `v * s + w` (the product used only there) is one fmuladd, and
// the store at stride 1 is one vector store.
// CHECK-LABEL: func.func @axpy(
// CHECK:         %s = memref.load %a[%zero] : memref<1xf32>
// CHECK-NOT:     tir.for
// CHECK:         %v = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK:         %w = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK:         %[[ONE:.*]] = llvm.insertelement %s, %{{.*}} : vector<16xf32>
// CHECK-NEXT:    %[[S:.*]] = llvm.shufflevector %[[ONE]], %{{.*}} [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : vector<16xf32>
// CHECK-NEXT:    %r = llvm.call_intrinsic "llvm.fmuladd.v16f32"(%v, %[[S]], %w) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK:         llvm.store %r, %{{.*}} {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
// CHECK-NEXT:    func.return
func.func @axpy(%x: memref<16xf32>, %y: memref<16xf32>, %a: memref<1xf32>) {
  %zero = arith.constant 0 : index
  %s = memref.load %a[%zero] : memref<1xf32>
  tir.for %i = 0 to 16 step 1 {name = "i", kind = "vectorized"} {
    %v = memref.load %x[%i] : memref<16xf32>
    %w = memref.load %y[%i] : memref<16xf32>
    %p = arith.mulf %v, %s : f32
    %r = arith.addf %p, %w : f32
    memref.store %r, %y[%i] : memref<16xf32>
  }
  func.return
}

// -----

// The vector ops xDSL's llvm dialect lacks are llvm_ext ops: a float compare
// and a select on a vector of conditions; a store at stride 2 takes each
// lane out (extractelement) and stores it on its own, as a memref.store
// that convert-to-llvm lowers.
// CHECK-LABEL: func.func @relu_strided(
// CHECK:         %v = llvm.load %{{.*}} : !llvm.ptr -> vector<4xf32>
// CHECK:         %[[ZERO:.*]] = llvm.mlir.constant(dense<0.000000e+00> : vector<4xf32>) : vector<4xf32>
// CHECK-NEXT:    %negative = llvm_ext.vector_fcmp "olt" %v, %[[ZERO]] : vector<4xf32> -> vector<4xi1>
// CHECK-NEXT:    %r = llvm_ext.vector_select %negative, %[[ZERO]], %v : vector<4xi1>, vector<4xf32>
// CHECK:         %[[LANE0:.*]] = llvm_ext.extractelement %r[%{{.*}} : i32] : vector<4xf32> -> f32
// CHECK-NEXT:    memref.store %[[LANE0]], %y[%{{.*}}] : memref<8xf32>
// CHECK-COUNT-3: llvm_ext.extractelement %r[
// CHECK-NOT:     tir.for
func.func @relu_strided(%x: memref<4xf32>, %y: memref<8xf32>) {
  tir.for %c = 0 to 4 step 1 {name = "c", kind = "vectorized"} {
    %v = memref.load %x[%c] : memref<4xf32>
    %z = arith.constant 0.000000e+00 : f32
    %negative = arith.cmpf olt, %v, %z : f32
    %r = arith.select %negative, %z, %v : f32
    %two = arith.constant 2 : index
    %at = arith.muli %c, %two : index
    memref.store %r, %y[%at] : memref<8xf32>
  }
  func.return
}

// -----

// A loop the lowering cannot widen (every lane adds into the same element)
// stays a loop, made serial (xtc-opt --remarks says why: see
// filecheck/tools/remarks-vectorize-missed.mlir).
// CHECK-LABEL: func.func @sum(
// CHECK-NEXT:    %zero = arith.constant 0 : index
// CHECK-NEXT:    tir.for %i = 0 to 8 step 1 {name = "i", kind = "serial"} {
// CHECK-NOT:     llvm.
func.func @sum(%x: memref<8xf32>, %acc: memref<1xf32>) {
  %zero = arith.constant 0 : index
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "vectorized"} {
    %v = memref.load %x[%i] : memref<8xf32>
    %a = memref.load %acc[%zero] : memref<1xf32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %acc[%zero] : memref<1xf32>
  }
  func.return
}

// -----

// A saturating float-to-integer cast of vectors (a quantize epilogue's f32
// to u8 through i64) is NaN lanes zeroed, a clamp to the integer's range,
// a plain fptosi and the lanes at or above 2^63 set to the largest i64,
// not the `.sat` intrinsic (which x86 does lane by lane).
// CHECK-LABEL: func.func @quantize(
// CHECK:         %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<16xf32>
// CHECK:         %[[ORD:.*]] = llvm_ext.vector_fcmp "ord" %[[X]], %[[X]] : vector<16xf32> -> vector<16xi1>
// CHECK:         %[[NUM:.*]] = llvm_ext.vector_select %[[ORD]], %[[X]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK:         %[[LOW:.*]] = llvm.call_intrinsic "llvm.maxnum.v16f32"(%[[NUM]], %{{.*}})
// CHECK:         %[[IN:.*]] = llvm.call_intrinsic "llvm.minnum.v16f32"(%[[LOW]], %{{.*}})
// CHECK-NEXT:    %[[INT:.*]] = llvm_ext.fptosi %[[IN]] : vector<16xf32> to vector<16xi64>
// CHECK:         %[[OVER:.*]] = llvm_ext.vector_fcmp "oge" %[[X]], %{{.*}} : vector<16xf32> -> vector<16xi1>
// CHECK:         %[[MAX:.*]] = llvm.mlir.constant(dense<9223372036854775807> : vector<16xi64>) : vector<16xi64>
// CHECK-NEXT:    %{{.*}} = llvm_ext.vector_select %[[OVER]], %[[MAX]], %[[INT]] : vector<16xi1>, vector<16xi64>
// CHECK-NOT:     .sat.
// CHECK:         func.return
func.func @quantize(%x: memref<16xf32>, %y: memref<16xi8>) {
  tir.for %i = 0 to 16 step 1 {name = "i", kind = "vectorized"} {
    %v = memref.load %x[%i] : memref<16xf32>
    %w = arith.fptosi %v : f32 to i64
    %b = arith.trunci %w : i64 to i8
    memref.store %b, %y[%i] : memref<16xi8>
  }
  func.return
}

// -----

// After a clip to [0, 255] only NaN is left to saturate: the cast is the
// NaN select and one fptosi in i32, sign-extended (LLVM folds it into the
// truncation to a byte); the byte back to f32 goes through i32 too.
// CHECK-LABEL: func.func @clipped_quantize(
// CHECK:         %[[CLIP:.*]] = llvm.call_intrinsic "llvm.minimum.v16f32"
// CHECK:         %[[ORD:.*]] = llvm_ext.vector_fcmp "ord" %[[CLIP]], %[[CLIP]] : vector<16xf32> -> vector<16xi1>
// CHECK:         %[[NUM:.*]] = llvm_ext.vector_select %[[ORD]], %[[CLIP]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK-NEXT:    %[[INT:.*]] = llvm_ext.fptosi %[[NUM]] : vector<16xf32> to vector<16xi32>
// CHECK-NEXT:    %{{.*}} = llvm.sext %[[INT]] : vector<16xi32> to vector<16xi64>
// CHECK-NOT:     maxnum
// CHECK:         %[[WIDE:.*]] = llvm.zext %{{.*}} : vector<16xi8> to vector<16xi32>
// CHECK-NEXT:    %{{.*}} = llvm.sitofp %[[WIDE]] : vector<16xi32> to vector<16xf32>
// CHECK:         func.return
func.func @clipped_quantize(%x: memref<16xf32>, %y: memref<16xi8>, %z: memref<16xf32>) {
  tir.for %i = 0 to 16 step 1 {name = "i", kind = "vectorized"} {
    %v = memref.load %x[%i] : memref<16xf32>
    %zero = arith.constant 0.0 : f32
    %top = arith.constant 255.0 : f32
    %low = arith.maximumf %v, %zero : f32
    %clip = arith.minimumf %low, %top : f32
    %w = arith.fptosi %clip : f32 to i64
    %b = arith.trunci %w : i64 to i8
    memref.store %b, %y[%i] : memref<16xi8>
    %f = arith.uitofp %b : i8 to f32
    memref.store %f, %z[%i] : memref<16xf32>
  }
  func.return
}

// -----

// A gather at a float converted to an index (Resize's source columns) takes
// each lane's index from the vector conversion, not from a scalar saturating
// fptosi per lane (which x86 does with compares and branches).
// CHECK-LABEL: func.func @gather_at_float_index(
// CHECK:         %[[INT:.*]] = llvm_ext.fptosi %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK-NEXT:    %[[W:.*]] = llvm.sext %[[INT]] : vector<16xi32> to vector<16xi64>
// CHECK:         %[[LANE:.*]] = llvm_ext.extractelement %[[W]][%{{.*}} : i32] : vector<16xi64> -> i64
// CHECK-NEXT:    %[[K:.*]] = arith.index_cast %[[LANE]] : i64 to index
// CHECK-NEXT:    memref.load %a[%[[K]]] : memref<8xf32>
// CHECK-NOT:     arith.fptosi
// CHECK:         func.return
func.func @gather_at_float_index(%x: memref<16xf32>, %a: memref<8xf32>, %y: memref<16xf32>) {
  tir.for %i = 0 to 16 step 1 {name = "i", kind = "vectorized"} {
    %v = memref.load %x[%i] : memref<16xf32>
    %zero = arith.constant 0.0 : f32
    %top = arith.constant 7.0 : f32
    %low = arith.maximumf %v, %zero : f32
    %clip = arith.minimumf %low, %top : f32
    %w = arith.fptosi %clip : f32 to i64
    %k = arith.index_cast %w : i64 to index
    %g = memref.load %a[%k] : memref<8xf32>
    memref.store %g, %y[%i] : memref<16xf32>
  }
  func.return
}

// -----

// A load at stride 1 of 14 lanes (a 28-wide row in two halves) is one masked
// load of 16 with the last two lanes off (LLVM would split a <14 x float>
// load into 8 + 4 + 2 and two inserts), except from an alloca: a plain load
// keeps the accumulator in registers. maximumf's own flags go on
// llvm.maximum (nsz, as a max reduction's fold has: three x86 instructions a
// vector, not six); without flags it has none.
// CHECK-LABEL: func.func @max_rows(
// CHECK:         %[[MASK:.*]] = llvm.mlir.constant(dense<[true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false]> : vector<16xi1>) : vector<16xi1>
// CHECK:         %[[WIDE:.*]] = llvm.call_intrinsic "llvm.masked.load.v16f32.p0"(%{{.*}}, %{{.*}}, %[[MASK]], %{{.*}}) : (!llvm.ptr, i32, vector<16xi1>, vector<16xf32>) -> vector<16xf32>
// CHECK-NEXT:    %a = llvm.shufflevector %[[WIDE]], %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13] : vector<16xf32>
// CHECK:         %b = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<14xf32>
// CHECK-NEXT:    %m = llvm.call_intrinsic "llvm.maximum.v14f32"(%b, %a) {fastmathFlags = #llvm.fastmath<nsz>} : (vector<14xf32>, vector<14xf32>) -> vector<14xf32>
// CHECK-NEXT:    %n = llvm.call_intrinsic "llvm.maximum.v14f32"(%m, %a) : (vector<14xf32>, vector<14xf32>) -> vector<14xf32>
// CHECK:         llvm.store %n, %{{.*}} {alignment = 4 : i64} : vector<14xf32>, !llvm.ptr
// CHECK-NOT:     tir.for
func.func @max_rows(%x: memref<2x16xf32>, %y: memref<14xf32>) {
  %acc = memref.alloca() {alignment = 64 : i64} : memref<14xf32>
  tir.for %i = 0 to 14 step 1 {name = "i", kind = "vectorized"} {
    %c1 = arith.constant 1 : index
    %a = memref.load %x[%c1, %i] : memref<2x16xf32>
    %b = memref.load %acc[%i] : memref<14xf32>
    %m = arith.maximumf %b, %a fastmath<nsz> : f32
    %n = arith.maximumf %m, %a : f32
    memref.store %n, %y[%i] : memref<14xf32>
  }
  func.return
}

// -----

// The vectorized loops of one block (the copies of an unrolled loop: the
// rows of a register tile) share what they compute alike: the second loop
// loads the weights through the first one's address (the multiplication
// of the row %r by its stride once), and the pointer of each buffer is
// taken once. A loop of another block (inside %k) computes its own: the
// first block's values do not stand before it.
// CHECK-LABEL: func.func @shared_rows(
// CHECK:         %[[W:.*]] = builtin.unrealized_conversion_cast %w : memref<4x16xf32> to !llvm.ptr
// CHECK:         %[[WROW:.*]] = llvm.mul %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:    %[[WAT:.*]] = llvm.getelementptr inbounds %[[W]][%[[WROW]]]
// CHECK-NEXT:    %[[WV:.*]] = llvm.getelementptr %[[WAT]][0] : (!llvm.ptr) -> !llvm.ptr, vector<16xf32>
// CHECK-NEXT:    %b = llvm.load %[[WV]]
// CHECK:         %[[X:.*]] = builtin.unrealized_conversion_cast %x
// CHECK:         %b_1 = llvm.load %[[WV]]
// CHECK-NEXT:    llvm.getelementptr inbounds %[[X]][16] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NOT:     builtin.unrealized_conversion_cast %x
// CHECK:         tir.for %k
// CHECK:           %[[W2:.*]] = builtin.unrealized_conversion_cast %w : memref<4x16xf32> to !llvm.ptr
// CHECK:           llvm.mul
// CHECK-NEXT:      llvm.getelementptr inbounds %[[W2]]
func.func @shared_rows(%x: memref<2x16xf32>, %w: memref<4x16xf32>, %y: memref<2x16xf32>, %r: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tir.for %i = 0 to 16 step 1 {name = "i", kind = "vectorized"} {
    %b = memref.load %w[%r, %i] : memref<4x16xf32>
    %a = memref.load %x[%c0, %i] : memref<2x16xf32>
    %p = arith.mulf %a, %b : f32
    memref.store %p, %y[%c0, %i] : memref<2x16xf32>
  }
  tir.for %i = 0 to 16 step 1 {name = "i", kind = "vectorized"} {
    %b = memref.load %w[%r, %i] : memref<4x16xf32>
    %a = memref.load %x[%c1, %i] : memref<2x16xf32>
    %p = arith.mulf %a, %b : f32
    memref.store %p, %y[%c1, %i] : memref<2x16xf32>
  }
  tir.for %k = 0 to 2 step 1 {name = "k", kind = "serial"} {
    tir.for %i = 0 to 16 step 1 {name = "i", kind = "vectorized"} {
      %b = memref.load %w[%r, %i] : memref<4x16xf32>
      memref.store %b, %y[%k, %i] : memref<2x16xf32>
    }
  }
  func.return
}
