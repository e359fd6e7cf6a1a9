// RUN: xtc-opt %s -p convert-tir-to-llvm --split-input-file --diagnostics-to-output | filecheck %s
// RUN: xtc-opt %s -p convert-tir-to-llvm --split-input-file --diagnostics-to-output | xtc-opt --split-input-file --diagnostics-to-output -t llvm-ir | filecheck %s --check-prefix=IR
// RUN: xtc-opt %s -p convert-tir-to-llvm --split-input-file --diagnostics-to-output -t "llvm-ir{optimize=true}" | filecheck %s --check-prefix=O3

// Loops become blocks and branches; the te.reduce accumulator (an alloca
// inside the loop nest) moves to the entry block; loads and stores are GEPs
// with the static strides folded; memref arguments are pointers.
// CHECK-LABEL: llvm.func @matmul(%a: !llvm.ptr {llvm.dereferenceable = 24 : i64}, %b: !llvm.ptr {llvm.dereferenceable = 48 : i64}, %c: !llvm.ptr {graph.output = 0 : i64, llvm.dereferenceable = 32 : i64}) {
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %[[ACC:.*]] = llvm.alloca %[[ONE]] x f32 {alignment = 4 : i64} : (i64) -> !llvm.ptr
// CHECK:         llvm.br ^[[I_HEAD:.*]](%{{.*}} : i64)
// CHECK-NEXT:  ^[[I_HEAD]](%i: i64):
// CHECK-NEXT:    %[[I_CONT:.*]] = llvm.icmp "slt" %i, %{{.*}} : i64
// CHECK-NEXT:    llvm.cond_br %[[I_CONT]], ^{{.*}}, ^[[EXIT:.*]]
// CHECK:       ^{{.*}}(%k: i64):
// CHECK:         %[[ROW:.*]] = llvm.mul %i, %{{.*}} : i64
// CHECK-NEXT:    %[[AIK:.*]] = llvm.add %[[ROW]], %k : i64
// CHECK-NEXT:    %[[PA:.*]] = llvm.getelementptr inbounds %a[%[[AIK]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %x = llvm.load %[[PA]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK:         %m = llvm.fmul %x, %y : f32
// CHECK-NEXT:    %s0 = llvm.load %[[ACC]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:    %s1 = llvm.fadd %s0, %m : f32
// CHECK-NEXT:    llvm.store %s1, %[[ACC]] {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK:         %[[NEXT_K:.*]] = llvm.add %k, %{{.*}} : i64
// CHECK:       ^[[EXIT]]:
// CHECK-NEXT:    llvm.return

// IR-LABEL: define void @"matmul"(ptr dereferenceable(24) %".1", ptr dereferenceable(48) %".2", ptr dereferenceable(32) %".3")
// IR:         alloca float, i64 1, align 4
// IR:         phi  i64
// IR:         getelementptr inbounds float, ptr %".1", i64
// IR:         fmul float

// After O3 the accumulator lives in a register: no alloca is left.
// O3-LABEL: define void @matmul(
// O3-NOT:     alloca
// O3:         ret void
func.func @matmul(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %c: memref<2x4xf32> {graph.output = 0 : i64}) {
  tir.for %i = 0 to 2 step 1 {name = "i0", kind = "serial"} {
    tir.for %j = 0 to 4 step 1 {name = "i1", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[] : memref<f32>
      tir.for %k = 0 to 3 step 1 {name = "r0", kind = "serial"} {
        %x = memref.load %a[%i, %k] : memref<2x3xf32>
        %y = memref.load %b[%k, %j] : memref<3x4xf32>
        %m = arith.mulf %x, %y : f32
        %s0 = memref.load %acc[] : memref<f32>
        %s1 = arith.addf %s0, %m : f32
        memref.store %s1, %acc[] : memref<f32>
      }
      %r = memref.load %acc[] : memref<f32>
      memref.store %r, %c[%i, %j] : memref<2x4xf32>
    }
  }
  func.return
}

// -----

// Unsigned buffers hold signless integers: the ui8 <-> i8 casts vanish.
// scf.if becomes a diamond whose join block takes the result; math goes to
// intrinsics under their typed names (tanh, exp) or libm (erf -> erff).
// CHECK-LABEL: llvm.func @elementwise(
// CHECK:         %[[P:.*]] = llvm.getelementptr inbounds %x[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %u = llvm.load %[[P]] {alignment = 1 : i64} : !llvm.ptr -> i8
// CHECK:         %positive = llvm.icmp "sgt" %u, %zero : i8
// CHECK-NEXT:    llvm.cond_br %positive, ^[[THEN:.*]], ^[[ELSE:.*]]
// CHECK-NEXT:  ^[[THEN]]:
// CHECK-NEXT:    %e = llvm.call @erff(%v) : (f32) -> f32
// CHECK-NEXT:    llvm.br ^[[JOIN:.*]](%e : f32)
// CHECK-NEXT:  ^[[ELSE]]:
// CHECK-NEXT:    %t = llvm.call_intrinsic "llvm.tanh.f32"(%v) : (f32) -> f32
// CHECK-NEXT:    %w = llvm.call_intrinsic "llvm.exp.f32"(%t) : (f32) -> f32
// CHECK-NEXT:    llvm.br ^[[JOIN]](%w : f32)
// CHECK-NEXT:  ^[[JOIN]](%r: f32):
// CHECK:       llvm.func @erff(f32) -> f32

// IR-LABEL: define void @"elementwise"
// IR:         call ccc float @"erff"(float
// IR:         call float @"llvm.tanh.f32"(float
// IR:         call float @"llvm.exp.f32"(float
// IR:       declare float @"erff"(float
func.func @elementwise(%x: memref<4xui8>, %f: memref<4xf32>, %o: memref<4xf32>) {
  tir.for %i = 0 to 4 step 2 {name = "i0", kind = "serial"} {
    %u = memref.load %x[%i] : memref<4xui8>
    %s = builtin.unrealized_conversion_cast %u : ui8 to i8
    %v = memref.load %f[%i] : memref<4xf32>
    %zero = arith.constant 0 : i8
    %positive = arith.cmpi sgt, %s, %zero : i8
    %r = scf.if %positive -> (f32) {
      %e = math.erf %v : f32
      scf.yield %e : f32
    } else {
      %t = math.tanh %v : f32
      %w = math.exp %t : f32
      scf.yield %w : f32
    }
    memref.store %r, %o[%i] : memref<4xf32>
  }
  func.return
}

// -----

// One math function on two float types: each call names its type, so the
// LLVM module declares llvm.floor.f32 and llvm.floor.f64 side by side (one
// untyped llvm.floor would be declared twice, with two types). fma on f16
// runs in f32 and rounds back; f64 -> f16 rounds through f32 rounded to odd.
// CHECK-LABEL: llvm.func @mixed(
// CHECK:         %{{.*}} = llvm.call_intrinsic "llvm.floor.f32"(%{{.*}}) : (f32) -> f32
// CHECK:         %{{.*}} = llvm.call_intrinsic "llvm.floor.f64"(%{{.*}}) : (f64) -> f64
// CHECK:         %{{.*}} = llvm.call_intrinsic "llvm.maxnum.f32"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK:         %{{.*}} = llvm.call_intrinsic "llvm.maxnum.f64"(%{{.*}}, %{{.*}}) : (f64, f64) -> f64
// CHECK:         %[[A:.*]] = llvm.fpext %{{.*}} : f16 to f32
// CHECK-NEXT:    %[[B:.*]] = llvm.fpext %{{.*}} : f16 to f32
// CHECK-NEXT:    %[[C:.*]] = llvm.fpext %{{.*}} : f16 to f32
// CHECK-NEXT:    %[[F:.*]] = llvm.call_intrinsic "llvm.fma.f32"(%[[A]], %[[B]], %[[C]]) : (f32, f32, f32) -> f32
// CHECK-NEXT:    %{{.*}} = llvm.fptrunc %[[F]] : f32 to f16
// CHECK:         %[[NEAREST:.*]] = llvm.fptrunc %[[D:.*]] : f64 to f32
// CHECK-NEXT:    %[[BACK:.*]] = llvm.fpext %[[NEAREST]] : f32 to f64
// CHECK-NEXT:    %[[INEXACT:.*]] = llvm.fcmp "one" %[[BACK]], %[[D]] : f64
// CHECK:         %[[ODD:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:    %{{.*}} = llvm.fptrunc %[[ODD]] : f32 to f16

// IR-LABEL: define void @"mixed"
// IR:         call float @"llvm.floor.f32"(float
// IR:         call double @"llvm.floor.f64"(double
// IR-DAG:   declare float @"llvm.floor.f32"(float
// IR-DAG:   declare double @"llvm.floor.f64"(double
func.func @mixed(%x: memref<4xf32>, %d: memref<4xf64>, %h: memref<4xf16>) {
  tir.for %i = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = memref.load %d[%i] : memref<4xf64>
    %fv = math.floor %v : f32
    %fw = math.floor %w : f64
    %mv = arith.maxnumf %fv, %v : f32
    %mw = arith.maxnumf %fw, %w : f64
    memref.store %mv, %x[%i] : memref<4xf32>
    memref.store %mw, %d[%i] : memref<4xf64>
    %a = memref.load %h[%i] : memref<4xf16>
    %f = math.fma %a, %a, %a : f16
    memref.store %f, %h[%i] : memref<4xf16>
    %t = arith.truncf %mw : f64 to f16
    memref.store %t, %h[%i] : memref<4xf16>
  }
  func.return
}

// -----

// @main: alloc is a 64-byte aligned_alloc, dealloc is free, private kernels
// are internal, globals keep their data, memref.copy is llvm.memcpy.
// CHECK-LABEL: llvm.func internal @kernel(
// CHECK-LABEL: llvm.func @main(%x_1: !llvm.ptr {graph.name = "x", llvm.dereferenceable = 16 : i64}, %y_1: !llvm.ptr {graph.name = "y", graph.output = 0 : i64, llvm.dereferenceable = 16 : i64}, %z: !llvm.ptr {graph.name = "z", graph.output = 1 : i64, llvm.dereferenceable = 2 : i64}) {
// CHECK-NEXT:    %[[ALIGN:.*]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT:    %[[SIZE:.*]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT:    %[[T:.*]] = llvm.call @aligned_alloc(%[[ALIGN]], %[[SIZE]]) : (i64, i64) -> !llvm.ptr
// CHECK-NEXT:    llvm.call @kernel(%x_1, %[[T]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.call @kernel(%[[T]], %y_1) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.call @free(%[[T]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    %[[G:.*]] = llvm.mlir.addressof @flags : !llvm.ptr
// CHECK-NEXT:    %[[BYTES:.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:    %[[NV:.*]] = llvm.mlir.constant(false) : i1
// CHECK-NEXT:    llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"(%z, %[[G]], %[[BYTES]], %[[NV]]) : (!llvm.ptr, !llvm.ptr, i64, i1) -> ()
// CHECK-NEXT:    llvm.return
// CHECK:       llvm.mlir.global internal constant @flags(dense<[true, false]> : tensor<2xi1>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<2 x i1>
// CHECK:       llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
// CHECK:       llvm.func @free(!llvm.ptr)

// The global's data is emitted as bytes (i1 true is 1).
// IR:       @"flags" = internal constant [2 x i8] c"\01\00", align 64
// IR-LABEL: define internal void @"kernel"
// IR-LABEL: define void @"main"
// IR:         call ccc ptr @"aligned_alloc"(i64 64, i64 64)
// IR:         call void @"llvm.memcpy.p0.p0.i64"(ptr %".3", {{.*}}@"flags", i64 2, i1 false)

// O3-LABEL: define void @main(
// O3-NOT:     call {{.*}}@kernel
func.func private @kernel(%x: memref<4xf32>, %y: memref<4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = arith.negf %v : f32
    memref.store %w, %y[%i] : memref<4xf32>
  }
  func.return
}
func.func @main(%x: memref<4xf32> {graph.name = "x"}, %y: memref<4xf32> {graph.name = "y", graph.output = 0 : i64}, %z: memref<2xi1> {graph.name = "z", graph.output = 1 : i64}) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  func.call @kernel(%x, %t) : (memref<4xf32>, memref<4xf32>) -> ()
  func.call @kernel(%t, %y) : (memref<4xf32>, memref<4xf32>) -> ()
  memref.dealloc %t : memref<4xf32>
  %c = memref.get_global @flags : memref<2xi1>
  "memref.copy"(%c, %z) : (memref<2xi1>, memref<2xi1>) -> ()
  func.return
}
"memref.global"() <{sym_name = "flags", type = memref<2xi1>, initial_value = dense<[true, false]> : tensor<2xi1>, sym_visibility = "private", constant, alignment = 64 : i64}> : () -> ()

// -----

// Integer division never traps: a zero divisor gives 0.
// CHECK-LABEL: llvm.func @divide(
// CHECK:         %[[Z:.*]] = llvm.icmp "eq" %b, %{{.*}} : i32
// CHECK:         llvm.sdiv
// CHECK:         %q = llvm.select %[[Z]], %{{.*}}, %{{.*}} : i1, i32
func.func @divide(%a: i32, %b: i32) -> i32 {
  %q = arith.divsi %a, %b : i32
  func.return %q : i32
}

// -----

// CHECK: convert-tir-to-llvm: 'func.func' needs a static shape and strides, got memref<?xf32>
func.func @dynamic(%m: memref<?xf32>) {
  func.return
}

// -----

// A parallel loop is outlined into @<function>_parallel_<n>(ctx): at its
// place the values its body uses from outside go into 8-byte slots of a
// stack context (a pointer by ptrtoint, an index as it is, a float by its
// bits), then GOMP_parallel runs the outlined function on libgomp's team of
// @xtc_num_threads threads (0: libgomp's default). Each thread loads the
// values back, stores its chunk [begin, end) of ceil(6 / team) iterations in
// its work-sharing slot and runs the iterations xtc_share_next claims (its
// own, then others' last ones); the accumulator's alloca moves with the
// body (one per thread), constants are copied rather than passed.
// CHECK-LABEL: llvm.func @scale(
// CHECK:         %[[CTX:.*]] = llvm.alloca %{{.*}} x i64 {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK:       ^{{.*}}(%i: i64):
// CHECK:         %[[X:.*]] = llvm.ptrtoint %x : !llvm.ptr to i64
// CHECK-NEXT:    %[[S0:.*]] = llvm.getelementptr inbounds %[[CTX]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:    llvm.store %[[X]], %[[S0]] {alignment = 8 : i64} : i64, !llvm.ptr
// CHECK-NEXT:    %[[S1:.*]] = llvm.getelementptr inbounds %[[CTX]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:    llvm.store %i, %[[S1]] {alignment = 8 : i64} : i64, !llvm.ptr
// CHECK-NEXT:    %[[BITS:.*]] = llvm.bitcast %s : f32 to i32
// CHECK-NEXT:    %[[WIDE:.*]] = llvm.zext %[[BITS]] : i32 to i64
// CHECK-NEXT:    %[[S2:.*]] = llvm.getelementptr inbounds %[[CTX]][2] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:    llvm.store %[[WIDE]], %[[S2]] {alignment = 8 : i64} : i64, !llvm.ptr
// CHECK:         %[[SLOTS:.*]] = llvm.ptrtoint %slots : !llvm.ptr to i64
// CHECK-NEXT:    %[[S4:.*]] = llvm.getelementptr inbounds %[[CTX]][4] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:    llvm.store %[[SLOTS]], %[[S4]] {alignment = 8 : i64} : i64, !llvm.ptr
// CHECK-NEXT:    %[[FN:.*]] = llvm.mlir.addressof @scale_parallel_0 : !llvm.ptr
// CHECK-NEXT:    %[[G:.*]] = llvm.mlir.addressof @xtc_num_threads : !llvm.ptr
// CHECK:         %threads = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> i32
// CHECK-NEXT:    llvm.call @GOMP_parallel(%[[FN]], %[[CTX]], %threads, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i32, i32) -> ()
// CHECK-LABEL: llvm.func internal @scale_parallel_0(%{{.*}}: !llvm.ptr {llvm.dereferenceable = 40 : i64}) {
// CHECK:         llvm.alloca %{{.*}} x f32
// CHECK:         %[[P:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr -> i64
// CHECK-NEXT:    llvm.inttoptr %[[P]] : i64 to !llvm.ptr
// CHECK:         %[[T:.*]] = llvm.call @omp_get_thread_num() : () -> i32
// CHECK-NEXT:    %[[TEAM:.*]] = llvm.call @omp_get_num_threads() : () -> i32
// CHECK:         %begin = llvm.mul %{{.*}}, %chunk : i64
// CHECK:         %end = llvm.select
// CHECK:         llvm.call @xtc_share_own(%slot, %begin, %end) : (!llvm.ptr, i64, i64) -> ()
// CHECK-NEXT:    llvm.br ^[[HEAD:.*]]
// CHECK-NEXT:  ^[[HEAD]]:
// CHECK-NEXT:    %claimed = llvm.call @xtc_share_next(%slot, %{{.*}}, %[[T]], %[[TEAM]]) : (!llvm.ptr, !llvm.ptr, i32, i32) -> i64
// CHECK-NEXT:    %[[FOUND:.*]] = llvm.icmp "sge" %claimed, %{{.*}} : i64
// CHECK-NEXT:    llvm.cond_br %[[FOUND]], ^[[BODY:.*]](%claimed : i64), ^{{.*}}
// CHECK-NEXT:  ^[[BODY]](%j: i64):
// CHECK:         %w = llvm.fmul %v, %s_1 : f32
// CHECK:         llvm.return
// CHECK:       llvm.mlir.global external @xtc_num_threads() {{.*}} : !llvm.array<1 x i32>
// CHECK:       llvm.func @omp_get_thread_num() -> i32
// CHECK:       llvm.func @omp_get_num_threads() -> i32
// CHECK:       llvm.func @GOMP_parallel(!llvm.ptr, !llvm.ptr, i32, i32)
// CHECK:       llvm.func @xtc_share_next(!llvm.ptr, !llvm.ptr, i32, i32) -> i64

// IR-LABEL: define void @"scale"(
// IR:         call ccc void @"GOMP_parallel"({{.*}}@"scale_parallel_0", {{.*}}, i32 {{.*}}, i32 0)
// IR-LABEL: define internal void @"scale_parallel_0"(
// IR:         call ccc i32 @"omp_get_thread_num"()

// After O3 the outlined function stays (its address is taken), and the
// global stays writable (the runtime sets it).
// O3-LABEL: define void @scale(
// O3:         call void @GOMP_parallel(ptr nonnull @scale_parallel_0
// O3:       define internal void @scale_parallel_0(
func.func @scale(%x: memref<4x6xf32>, %y: memref<4x6xf32> {graph.output = 0 : i64}) {
  %zero = arith.constant 0 : index
  %s = memref.load %x[%zero, %zero] : memref<4x6xf32>
  tir.for %i = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    tir.for %j = 0 to 6 step 1 {name = "i1", kind = "parallel"} {
      %acc = memref.alloca() : memref<f32>
      %v = memref.load %x[%i, %j] : memref<4x6xf32>
      %w = arith.mulf %v, %s : f32
      memref.store %w, %acc[] : memref<f32>
      %r = memref.load %acc[] : memref<f32>
      memref.store %r, %y[%i, %j] : memref<4x6xf32>
    }
  }
  func.return
}

// -----

// A register-blocked micro-kernel (a 4x16 tile of C, K = 32). Unrolled loops
// become copies of their body with the iterator a constant; each vectorized
// i1 loop becomes vector code: the zero fill is a vector store of a splat
// constant; per r0 step, A's element (uniform across i1) is a scalar load
// splatted, B's row (unit stride) a vector load, and the product goes into
// the tile by a fused multiply-add. No loop is left but r0.
// CHECK-LABEL: llvm.func @micro_kernel(
// CHECK:         %[[ZERO:.*]] = llvm.mlir.constant(dense<0.000000e+00> : vector<16xf32>) : vector<16xf32>
// CHECK:         %[[Z0:.*]] = llvm.getelementptr %{{.*}}[0] : (!llvm.ptr) -> !llvm.ptr, vector<16xf32>
// CHECK-NEXT:    llvm.store %[[ZERO]], %[[Z0]] {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
// CHECK-COUNT-3: llvm.store %{{.*}} : vector<16xf32>, !llvm.ptr
// CHECK:       ^bb1(%r0: i64):
// CHECK:       ^bb2:
// CHECK-NOT:   {{^ *\^bb}}
// CHECK:         %a = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK:         %b = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK:         %c = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK:         %[[A0:.*]] = llvm.insertelement %a, %[[U:.*]][%{{.*}} : i32] : vector<16xf32>
// CHECK-NEXT:    %[[A:.*]] = llvm.shufflevector %[[A0]], %[[U]] [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : vector<16xf32>
// CHECK-NEXT:    %s = llvm.call_intrinsic "llvm.fmuladd.v16f32"(%[[A]], %b, %c) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK:         llvm.store %s, %{{.*}} {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
// CHECK-COUNT-3: llvm.call_intrinsic "llvm.fmuladd.v16f32"
// CHECK-NOT:   {{^ *\^bb}}
// CHECK:         llvm.br ^bb1(
// CHECK-NEXT:  ^bb3:
// CHECK-NOT:     llvm.cond_br
// CHECK:         llvm.return

// IR-LABEL: define void @"micro_kernel"(
// IR:         store <16 x float> <float {{.*}}0x0
// IR:         load <16 x float>
// IR:         shufflevector <16 x float>
// IR:         call <16 x float> @"llvm.fmuladd.v16f32"(

// After O3 the tile lives in four vector registers (no alloca, four vector
// phis) and the only loop is r0's.
// O3-LABEL: define void @micro_kernel(
// O3-NOT:     alloca
// O3:         phi i64
// O3-COUNT-4: phi <16 x float>
// O3-COUNT-4: call <16 x float> @llvm.fmuladd.v16f32(
// O3-NOT:     phi
// O3:         ret void
func.func @micro_kernel(%A: memref<4x32xf32>, %B: memref<32x16xf32>, %C: memref<4x16xf32> {graph.output = 0 : i64}) {
  %acc = memref.alloca() {alignment = 64 : i64} : memref<4x16xf32>
  tir.for %i0_z = 0 to 4 step 1 {name = "i0_z", kind = "unrolled"} {
    tir.for %i1_z = 0 to 16 step 1 {name = "i1_z", kind = "vectorized"} {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[%i0_z, %i1_z] : memref<4x16xf32>
    }
  }
  tir.for %r0 = 0 to 32 step 1 {name = "r0", kind = "serial"} {
    tir.for %i0_i = 0 to 4 step 1 {name = "i0_i", kind = "unrolled"} {
      tir.for %i1_i = 0 to 16 step 1 {name = "i1_i", kind = "vectorized"} {
        %a = memref.load %A[%i0_i, %r0] : memref<4x32xf32>
        %b = memref.load %B[%r0, %i1_i] : memref<32x16xf32>
        %p = arith.mulf %a, %b : f32
        %c = memref.load %acc[%i0_i, %i1_i] : memref<4x16xf32>
        %s = arith.addf %c, %p : f32
        memref.store %s, %acc[%i0_i, %i1_i] : memref<4x16xf32>
      }
    }
  }
  tir.for %i0_w = 0 to 4 step 1 {name = "i0_w", kind = "unrolled"} {
    tir.for %i1_w = 0 to 16 step 1 {name = "i1_w", kind = "vectorized"} {
      %v = memref.load %acc[%i0_w, %i1_w] : memref<4x16xf32>
      memref.store %v, %C[%i0_w, %i1_w] : memref<4x16xf32>
    }
  }
  func.return
}

// -----

// A vectorized channel loop writing NCHW (lanes H*W = 2 elements apart): one
// vector load, a vector compare and select (llvm_ext ops, since the llvm
// dialect has no vector fcmp nor select on a vector of conditions; they are
// `fcmp` and `select` in LLVM IR), then one scalar store per lane.
// CHECK-LABEL: llvm.func @relu_nchw(
// CHECK:         %[[ZERO:.*]] = llvm.mlir.constant(dense<0.000000e+00> : vector<8xf32>) : vector<8xf32>
// CHECK:         %v = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK-NEXT:    %negative = llvm_ext.vector_fcmp "olt" %v, %[[ZERO]] : vector<8xf32> -> vector<8xi1>
// CHECK-NEXT:    %r = llvm_ext.vector_select %negative, %[[ZERO]], %v : vector<8xi1>, vector<8xf32>
// CHECK:         %[[LANE0:.*]] = llvm_ext.extractelement %r[%{{.*}} : i32] : vector<8xf32> -> f32
// CHECK:         llvm.store %[[LANE0]], %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK-COUNT-7: llvm_ext.extractelement %r[

// IR-LABEL: define void @"relu_nchw"(
// IR:         %[[V:.*]] = load <8 x float>
// IR:         %[[NEG:.*]] = fcmp olt <8 x float> %[[V]], <float
// IR-NEXT:    %[[R:.*]] = select  <8 x i1> %[[NEG]], <8 x float> <float {{.*}}>, <8 x float> %[[V]]
// IR-NEXT:    extractelement <8 x float> %[[R]], i32 0
// IR-NOT:     llvm_ext

// O3-LABEL: define void @relu_nchw(
// O3:         fcmp olt <8 x float>
// O3-COUNT-8: store float
func.func @relu_nchw(%x: memref<2x8xf32>, %y: memref<1x8x2x1xf32> {graph.output = 0 : i64}) {
  tir.for %h = 0 to 2 step 1 {name = "h", kind = "serial"} {
    tir.for %c = 0 to 8 step 1 {name = "c", kind = "vectorized"} {
      %zero = arith.constant 0 : index
      %v = memref.load %x[%h, %c] : memref<2x8xf32>
      %z = arith.constant 0.000000e+00 : f32
      %negative = arith.cmpf olt, %v, %z : f32
      %r = arith.select %negative, %z, %v : f32
      memref.store %r, %y[%zero, %c, %h, %zero] : memref<1x8x2x1xf32>
    }
  }
  func.return
}

// -----

// Loads whose lanes are a small constant stride apart (2 to 4 elements: a
// stride-2 convolution along its output row) read the span from lane 0's
// element to the last lane's with one masked load of stride * lanes
// elements, the lanes past the last one's element disabled (none of them is
// read), then keep every stride-th: stride 2 over %a (16 wide, 15 enabled),
// stride 3 over a column of %b (24 wide, 22 enabled). A stride of 5 and a
// non-affine index are gathers (a scalar load per lane, insertelements).
// CHECK-LABEL: llvm.func @strided_loads(
// CHECK-DAG:     %[[MASK2:.*]] = llvm.mlir.constant(dense<[true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false]> : vector<16xi1>) : vector<16xi1>
// CHECK-DAG:     %[[ALIGN2:.*]] = llvm.mlir.constant(4 : i32) : i32
// CHECK-DAG:     %[[MASK3:.*]] = llvm.mlir.constant(dense<[true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false]> : vector<24xi1>) : vector<24xi1>
// CHECK:         %[[UNDEF2:.*]] = llvm.mlir.undef : vector<16xf32>
// CHECK:         %[[A0:.*]] = llvm.getelementptr inbounds %a[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[AV:.*]] = llvm.getelementptr %[[A0]][0] : (!llvm.ptr) -> !llvm.ptr, vector<16xf32>
// CHECK-NEXT:    %[[WIDE2:.*]] = llvm.call_intrinsic "llvm.masked.load.v16f32.p0"(%[[AV]], %[[ALIGN2]], %[[MASK2]], %[[UNDEF2]]) : (!llvm.ptr, i32, vector<16xi1>, vector<16xf32>) -> vector<16xf32>
// CHECK-NEXT:    %two = llvm.shufflevector %[[WIDE2]], %[[UNDEF2]] [0, 2, 4, 6, 8, 10, 12, 14] : vector<16xf32>
// CHECK:         %[[WIDE3:.*]] = llvm.call_intrinsic "llvm.masked.load.v24f32.p0"(%{{.*}}, %{{.*}}, %[[MASK3]], %{{.*}}) : (!llvm.ptr, i32, vector<24xi1>, vector<24xf32>) -> vector<24xf32>
// CHECK-NEXT:    %three = llvm.shufflevector %[[WIDE3]], %{{.*}} [0, 3, 6, 9, 12, 15, 18, 21] : vector<24xf32>
// CHECK-NOT:     llvm.masked.load
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-COUNT-8: llvm.insertelement
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-COUNT-8: llvm.insertelement
// CHECK-NOT:     llvm.masked.load
// CHECK:         llvm.return

// IR-LABEL: define void @"strided_loads"(
// IR:         %[[W2:.*]] = call <16 x float> @"llvm.masked.load.v16f32.p0"(ptr %{{.*}}, i32 4, <16 x i1> <i1 -1, {{.*}}, i1 -1, i1 0>, <16 x float>
// IR-NEXT:    shufflevector <16 x float> %[[W2]], <16 x float> {{.*}}, <8 x i32> <i32 0, i32 2, i32 4, i32 6, i32 8, i32 10, i32 12, i32 14>
// IR:         %[[W3:.*]] = call <24 x float> @"llvm.masked.load.v24f32.p0"(ptr %{{.*}}, i32 4, <24 x i1> <i1 -1, {{.*}}, i1 -1, i1 0, i1 0>, <24 x float>
// IR-NEXT:    shufflevector <24 x float> %[[W3]], <24 x float> {{.*}}, <8 x i32> <i32 0, i32 3, i32 6, i32 9, i32 12, i32 15, i32 18, i32 21>

// After O3 the load from %a, whose 16 elements all lie in the buffer, is a
// plain vector load; the one from %b would end past the buffer and stays
// masked (no byte after the last element is read).
// O3-LABEL: define void @strided_loads(
// O3:         %[[L2:.*]] = load <16 x float>, ptr %{{.*}}, align 4
// O3-NEXT:    shufflevector <16 x float> %[[L2]], <16 x float> poison, <8 x i32> <i32 0, i32 2, i32 4, i32 6, i32 8, i32 10, i32 12, i32 14>
// O3:         %[[L3:.*]] = tail call <24 x float> @llvm.masked.load.v24f32.p0(ptr nonnull align 4 %{{.*}}, <24 x i1> <i1 true, {{.*}}, i1 true, i1 false, i1 false>, <24 x float> poison)
// O3-NEXT:    shufflevector <24 x float> %[[L3]], <24 x float> poison, <8 x i32> <i32 0, i32 3, i32 6, i32 9, i32 12, i32 15, i32 18, i32 21>
func.func @strided_loads(%a: memref<64xf32>, %b: memref<8x3xf32>, %o: memref<8xf32> {graph.output = 0 : i64}) {
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "vectorized"} {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c5 = arith.constant 5 : index
    %even = arith.muli %i, %c2 : index
    %two = memref.load %a[%even] : memref<64xf32>
    %three = memref.load %b[%i, %c1] : memref<8x3xf32>
    %fifth = arith.muli %i, %c5 : index
    %five = memref.load %a[%fifth] : memref<64xf32>
    %half = arith.divui %i, %c2 : index
    %halves = memref.load %a[%half] : memref<64xf32>
    %x = arith.addf %two, %three : f32
    %y = arith.addf %x, %five : f32
    %z = arith.addf %y, %halves : f32
    memref.store %z, %o[%i] : memref<8xf32>
  }
  func.return
}

// -----

// A reduction into one element cannot run its iterations side by side: the
// vectorized loop stays a serial loop of scalar code (right, only slower).
// CHECK-LABEL: llvm.func @sum(
// CHECK:       ^bb1(%i: i64):
// CHECK:         %v = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:    %t = llvm.load %s {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:    %u = llvm.fadd %t, %v : f32
// CHECK-NEXT:    llvm.store %u, %s {alignment = 4 : i64} : f32, !llvm.ptr
func.func @sum(%x: memref<8xf32>, %s: memref<f32> {graph.output = 0 : i64}) {
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "vectorized"} {
    %v = memref.load %x[%i] : memref<8xf32>
    %t = memref.load %s[] : memref<f32>
    %u = arith.addf %t, %v : f32
    memref.store %u, %s[] : memref<f32>
  }
  func.return
}

// -----

// An unrolled loop is its body three times, the iterator a constant: each
// copy's address is the buffer's pointer at a constant offset (no index
// arithmetic left; the constant iterator itself is gone).
// CHECK-LABEL: llvm.func @unrolled(
// CHECK-NOT:     llvm.br
// CHECK-NOT:     llvm.mlir.constant
// CHECK:         %v = llvm.load %x {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK:         %w = llvm.fmul %v, %v : f32
// CHECK:         llvm.getelementptr inbounds %x[1] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK:         %w_1 = llvm.fmul %v_1, %v_1 : f32
// CHECK:         llvm.getelementptr inbounds %x[2] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK:         %w_2 = llvm.fmul %v_2, %v_2 : f32
// CHECK-NOT:     llvm.br
// CHECK:         llvm.return
func.func @unrolled(%x: memref<3xf32>, %y: memref<3xf32> {graph.output = 0 : i64}) {
  tir.for %i = 0 to 3 step 1 {name = "i", kind = "unrolled"} {
    %v = memref.load %x[%i] : memref<3xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %y[%i] : memref<3xf32>
  }
  func.return
}

// -----

// A run-time check calls @xtc_check(ok, before, value, after): the message's
// text before and after its `{}` as constant strings (shared when equal),
// the value sign-extended to i64; a message without a value passes a null
// `after`. The LLVM IR text defines @xtc_check and the fault record it
// writes (runtime/faults.py); after O3 the check is a branch, marked
// unlikely, to the out-of-line report.
// CHECK-LABEL: llvm.func @checked(
// CHECK:         %v = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> i32
// CHECK:         %ok = llvm.and %{{.*}}, %{{.*}} : i1
// CHECK-NEXT:    %[[BEFORE:.*]] = llvm.mlir.addressof @xtc_text_0 : !llvm.ptr
// CHECK-NEXT:    %[[AFTER:.*]] = llvm.mlir.addressof @xtc_text_1 : !llvm.ptr
// CHECK-NEXT:    %[[WIDE:.*]] = llvm.sext %v : i32 to i64
// CHECK-NEXT:    llvm.call @xtc_check(%ok, %[[BEFORE]], %[[WIDE]], %[[AFTER]]) : (i1, !llvm.ptr, i64, !llvm.ptr) -> ()
// CHECK:         %[[PLAIN:.*]] = llvm.mlir.addressof @xtc_text_2 : !llvm.ptr
// CHECK-NEXT:    %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT:    %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    llvm.call @xtc_check(%nonzero, %[[PLAIN]], %[[ZERO]], %[[NULL]])
// CHECK:       llvm.func @xtc_check(i1, !llvm.ptr, i64, !llvm.ptr)
// CHECK:       llvm.mlir.global internal constant @xtc_text_0(dense<[71, 97, 116, 104, 101, 114, 32, 110, 111, 100, 101, 32, 39, 103, 39, 58, 32, 105, 110, 100, 101, 120, 32, 0]> : tensor<24xi8>)
// CHECK:       llvm.mlir.global internal constant @xtc_text_2(

// IR-LABEL: @"xtc_text_0" = internal constant [24 x i8] c"Gather node 'g': index \00"
// IR:       @"xtc_text_1" = internal constant [35 x i8] c" is out of range [-5, 5) on axis 0\00"
// IR:       @"xtc_text_2" = internal constant [39 x i8] c"Div node 'd': integer division by zero\00"
// IR-LABEL: define void @"checked"(
// IR:         call ccc void @"xtc_check"(i1 %{{.*}}, {{.*}}@"xtc_text_0", i64 %{{.*}}, {{.*}}@"xtc_text_1")
// IR:       @xtc_fault_fallback = global { i32, [512 x i8] } zeroinitializer
// IR:       declare i32 @snprintf(ptr, i64, ptr, ...)
// IR-LABEL: define internal void @xtc_fault(ptr %before, i64 %value, ptr %after) cold noinline {
// IR:         cmpxchg ptr %record, i32 0, i32 1 acq_rel monotonic
// IR-LABEL: define internal void @xtc_check(i1 %ok, ptr %before, i64 %value, ptr %after) alwaysinline nounwind {

// O3-LABEL: define void @checked(
// O3:         br i1 %{{.*}}, label %{{.*}}, label %[[FAILED:.*]], !prof
// O3:       [[FAILED]]:
// O3:         call {{.*}}void @xtc_fault(ptr nonnull @xtc_text_0, i64
// O3:       define internal {{.*}}void @xtc_fault(
// O3:         @snprintf(
func.func @checked(%data: memref<5xf32>, %idx: memref<4xi32>, %d: memref<4xi32>, %out: memref<4xf32> {graph.output = 0 : i64}) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    %v = memref.load %idx[%i] : memref<4xi32>
    %lo = arith.constant -5 : i32
    %hi = arith.constant 5 : i32
    %ge = arith.cmpi sge, %v, %lo : i32
    %lt = arith.cmpi slt, %v, %hi : i32
    %ok = arith.andi %ge, %lt : i1
    tir.assert %ok, "Gather node 'g': index {} is out of range [-5, 5) on axis 0", %v : i32
    %divisor = memref.load %d[%i] : memref<4xi32>
    %zero = arith.constant 0 : i32
    %nonzero = arith.cmpi ne, %divisor, %zero : i32
    tir.assert %nonzero, "Div node 'd': integer division by zero"
    %first = arith.constant 0 : index
    %x = memref.load %data[%first] : memref<5xf32>
    memref.store %x, %out[%i] : memref<4xf32>
  }
  func.return
}

// -----

// A parallel loop whose body checks values passes the caller's fault record
// (@xtc_fault_record(), in the last context slot, after the work-sharing
// slots' address) to its threads: each
// sends its faults there for its chunk (@xtc_fault_redirect) and restores
// where they went before when it is done.
// CHECK-LABEL: llvm.func @checked_rows(
// CHECK:         %[[RECORD:.*]] = llvm.call @xtc_fault_record() : () -> !llvm.ptr
// CHECK:         %[[BITS:.*]] = llvm.ptrtoint %[[RECORD]] : !llvm.ptr to i64
// CHECK-NEXT:    %[[SLOT:.*]] = llvm.getelementptr inbounds %ctx[3] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:    llvm.store %[[BITS]], %[[SLOT]] {alignment = 8 : i64} : i64, !llvm.ptr
// CHECK:         llvm.call @GOMP_parallel(
// CHECK-LABEL: llvm.func internal @checked_rows_parallel_0(
// CHECK:         %[[LAST:.*]] = llvm.getelementptr inbounds %{{.*}}[3] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:    %[[LOADED:.*]] = llvm.load %[[LAST]] {alignment = 8 : i64} : !llvm.ptr -> i64
// CHECK-NEXT:    %[[MINE:.*]] = llvm.inttoptr %[[LOADED]] : i64 to !llvm.ptr
// CHECK-NEXT:    %[[PREVIOUS:.*]] = llvm.call @xtc_fault_redirect(%[[MINE]]) : (!llvm.ptr) -> !llvm.ptr
// CHECK:         llvm.call @xtc_check(
// CHECK:         llvm.call @xtc_fault_redirect(%[[PREVIOUS]]) : (!llvm.ptr) -> !llvm.ptr
// CHECK-NEXT:    llvm.return
// CHECK-DAG:   llvm.func @xtc_fault_record() -> !llvm.ptr
// CHECK-DAG:   llvm.func @xtc_fault_redirect(!llvm.ptr) -> !llvm.ptr

// IR-LABEL: define void @"checked_rows"(
// IR:         call ccc ptr @"xtc_fault_record"()
// IR-LABEL: define internal ptr @xtc_fault_record() nounwind {
// IR-LABEL: define internal ptr @xtc_fault_redirect(ptr %record) nounwind {
// IR-NEXT:  entry:
// IR-NEXT:    atomicrmw xchg ptr @xtc_fault_target, ptr %record monotonic
func.func @checked_rows(%idx: memref<8xi64>, %out: memref<8xi64> {graph.output = 0 : i64}) {
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "parallel"} {
    %v = memref.load %idx[%i] : memref<8xi64>
    %hi = arith.constant 5 : i64
    %ok = arith.cmpi ult, %v, %hi : i64
    tir.assert %ok, "index {} is out of range", %v : i64
    memref.store %v, %out[%i] : memref<8xi64>
  }
  func.return
}

// -----

// In a vectorized loop a check on varying values is one check of all the
// lanes: the conditions as a 4-bit mask (all ones: every lane passes) and
// the value of the first failing lane (cttz of the failing lanes); a uniform
// check runs once.
// CHECK-LABEL: llvm.func @checked_lanes(
// CHECK-DAG:     %[[ALL:.*]] = llvm.mlir.constant(-1 : i4) : i4
// CHECK-DAG:     %[[DEFINED:.*]] = llvm.mlir.constant(false) : i1
// CHECK-DAG:     %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK:         %[[INDICES:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr -> vector<4xi64>
// CHECK:         %[[OK:.*]] = llvm.icmp "ult" %[[INDICES]], %{{.*}} : vector<4xi64>
// CHECK-NEXT:    %[[MASK:.*]] = llvm.bitcast %[[OK]] : vector<4xi1> to i4
// CHECK-NEXT:    %[[PASS:.*]] = llvm.icmp "eq" %[[MASK]], %[[ALL]] : i4
// CHECK-NEXT:    %[[FAILING:.*]] = llvm.xor %[[MASK]], %[[ALL]] : i4
// CHECK-NEXT:    %[[FIRST:.*]] = llvm.call_intrinsic "llvm.cttz.i4"(%[[FAILING]], %[[DEFINED]]) : (i4, i1) -> i4
// CHECK-NEXT:    %[[WIDE:.*]] = llvm.zext %[[FIRST]] : i4 to i32
// CHECK-NEXT:    %[[LANE:.*]] = llvm.select %[[PASS]], %[[ZERO]], %[[WIDE]] : i1, i32
// CHECK-NEXT:    %[[VALUE:.*]] = llvm_ext.extractelement %[[INDICES]][%[[LANE]] : i32] : vector<4xi64> -> i64
// CHECK:         llvm.call @xtc_check(%[[PASS]], %{{.*}}, %[[VALUE]], %{{.*}})
// CHECK:         llvm.call @xtc_check(%row_ok, %{{.*}}, %row, %{{.*}})
// CHECK-NOT:     llvm.call @xtc_check(
// CHECK:         llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<4xi64>, !llvm.ptr

// IR-LABEL: define void @"checked_lanes"(
// IR:         bitcast <4 x i1> %{{.*}} to i4
// IR:         call i4 @"llvm.cttz.i4"(i4 %{{.*}}, i1 false)
// IR:         extractelement <4 x i64> %{{.*}}, i32 %{{.*}}
func.func @checked_lanes(%idx: memref<4xi64>, %rows: memref<1xi64>, %out: memref<4xi64> {graph.output = 0 : i64}) {
  %first = arith.constant 0 : index
  %row = memref.load %rows[%first] : memref<1xi64>
  %hi = arith.constant 5 : i64
  tir.for %j = 0 to 4 step 1 {name = "j", kind = "vectorized"} {
    %v = memref.load %idx[%j] : memref<4xi64>
    %ok = arith.cmpi ult, %v, %hi : i64
    tir.assert %ok, "lane index {} is out of range", %v : i64
    %row_ok = arith.cmpi ult, %row, %hi : i64
    tir.assert %row_ok, "row {} is out of range", %row : i64
    %sum = arith.addi %v, %row : i64
    memref.store %sum, %out[%j] : memref<4xi64>
  }
  func.return
}
