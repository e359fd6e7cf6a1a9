// RUN: xtc-opt %s -p convert-tir-to-llvm --split-input-file --verify-diagnostics | filecheck %s
// RUN: xtc-opt %s -p convert-tir-to-llvm --split-input-file --verify-diagnostics | xtc-opt --split-input-file --verify-diagnostics -t llvm-ir | filecheck %s --check-prefix=IR
// RUN: xtc-opt %s -p convert-tir-to-llvm --split-input-file --verify-diagnostics -t "llvm-ir{optimize=true}" | filecheck %s --check-prefix=O3

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
// intrinsics (exp), intrinsics by name (tanh) or libm (erf -> erff).
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
// CHECK-NEXT:    %w = llvm.intr.exp(%t) : (f32) -> f32
// CHECK-NEXT:    llvm.br ^[[JOIN]](%w : f32)
// CHECK-NEXT:  ^[[JOIN]](%r: f32):
// CHECK:       llvm.func @erff(f32) -> f32

// IR-LABEL: define void @"elementwise"
// IR:         call ccc float @"erff"(float
// IR:         call float @"llvm.tanh.f32"(float
// IR:         call float @"llvm.exp{{.*}}"(float
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
