// RUN: xtc-opt %s -p convert-to-llvm --split-input-file --diagnostics-to-output | filecheck %s
// RUN: xtc-opt %s -p convert-to-llvm --split-input-file --diagnostics-to-output | xtc-opt --split-input-file --diagnostics-to-output -t llvm-ir | filecheck %s --check-prefix=IR

// A function with blocks and branches (after convert-tir-to-cf): memref
// arguments are pointers (with their size as llvm.dereferenceable), index
// is i64, a load or store is a GEP with the strides folded (a constant
// index, here the column 0, folded into the GEP's offset), arith and cf are
// their llvm twins.
// CHECK-LABEL: llvm.func @double_rows(%x: !llvm.ptr {llvm.dereferenceable = 32 : i64}, %y: !llvm.ptr {graph.output = 0 : i64, llvm.dereferenceable = 32 : i64}) {
// CHECK-NEXT:    %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[TWO:.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    llvm.br ^[[HEADER:[a-z0-9]+]](%[[ZERO]] : i64)
// CHECK-NEXT:  ^[[HEADER]](%i: i64):
// CHECK-NEXT:    %[[MORE:.*]] = llvm.icmp "slt" %i, %[[TWO]] : i64
// CHECK-NEXT:    llvm.cond_br %[[MORE]], ^[[BODY:[a-z0-9]+]], ^[[EXIT:[a-z0-9]+]]
// CHECK-NEXT:  ^[[BODY]]:
// CHECK-NEXT:    %[[STRIDE:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:    %[[ROW:.*]] = llvm.mul %i, %[[STRIDE]] : i64
// CHECK-NEXT:    %[[IN:.*]] = llvm.getelementptr inbounds %x[%[[ROW]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %v = llvm.load %[[IN]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:    %d = llvm.fadd %v, %v : f32
// CHECK:         llvm.store %d, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK:         llvm.br ^[[HEADER]](%{{.*}} : i64)
// CHECK-NEXT:  ^[[EXIT]]:
// CHECK-NEXT:    llvm.return

// IR-LABEL: define void @"double_rows"(ptr dereferenceable(32) %".1", ptr dereferenceable(32) %".2")
// IR:         phi i64
// IR:         fadd float
func.func @double_rows(%x: memref<2x4xf32>, %y: memref<2x4xf32> {graph.output = 0 : i64}) {
  %0 = arith.constant 0 : index
  %1 = arith.constant 2 : index
  %2 = arith.constant 1 : index
  cf.br ^bb1(%0 : index)
^bb1(%i: index):
  %3 = arith.cmpi slt, %i, %1 : index
  cf.cond_br %3, ^bb2, ^bb3
^bb2:
  %v = memref.load %x[%i, %0] : memref<2x4xf32>
  %d = arith.addf %v, %v : f32
  memref.store %d, %y[%i, %0] : memref<2x4xf32>
  %4 = arith.addi %i, %2 : index
  cf.br ^bb1(%4 : index)
^bb3:
  func.return
}

// -----

// Constant indices fold into the address's constant offset: all constant,
// one GEP by that offset (no index arithmetic); beside a variable index, one
// add of the offset; an offset out of a GEP's i32 constant range, an i64
// constant.
// CHECK-LABEL: llvm.func @constant_offsets(
// CHECK-NEXT:    %[[AT:.*]] = llvm.getelementptr inbounds %x[9] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:    %a = llvm.load %[[AT]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:    %[[STRIDE:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:    %[[ROW:.*]] = llvm.mul %i, %[[STRIDE]] : i64
// CHECK-NEXT:    %[[THREE:.*]] = llvm.mlir.constant(3) : i64
// CHECK-NEXT:    %[[SUM:.*]] = llvm.add %[[ROW]], %[[THREE]] : i64
// CHECK-NEXT:    %[[AT2:.*]] = llvm.getelementptr inbounds %x[%[[SUM]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %b = llvm.load %[[AT2]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:    %[[FAR:.*]] = llvm.mlir.constant(4294967297) : i64
// CHECK-NEXT:    %[[AT3:.*]] = llvm.getelementptr inbounds %z[%[[FAR]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %c = llvm.load %[[AT3]] {alignment = 4 : i64} : !llvm.ptr -> f32
func.func @constant_offsets(%x: memref<4x4xf32>, %z: memref<2xf32, strided<[1], offset: 4294967296>>, %i: index) -> f32 {
  %two = arith.constant 2 : index
  %one = arith.constant 1 : index
  %three = arith.constant 3 : index
  %a = memref.load %x[%two, %one] : memref<4x4xf32>
  %b = memref.load %x[%i, %three] : memref<4x4xf32>
  %c = memref.load %z[%one] : memref<2xf32, strided<[1], offset: 4294967296>>
  %s = arith.addf %a, %b : f32
  %t = arith.addf %s, %c : f32
  func.return %t : f32
}

// -----

// Vector code from tir-lower-vectorized keeps its llvm and llvm_ext ops;
// the memref it addresses becomes its pointer.
// CHECK-LABEL: llvm.func @first_negative(
// CHECK:         %[[V:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK:         %[[NEG:.*]] = llvm_ext.vector_fcmp "olt" %[[V]], %{{.*}} : vector<4xf32> -> vector<4xi1>
// CHECK:         %[[FIRST:.*]] = llvm_ext.extractelement %[[NEG]][%{{.*}} : i32] : vector<4xi1> -> i1
// CHECK:         llvm.return %[[FIRST]] : i1

// IR-LABEL: define i1 @"first_negative"(
// IR:         fcmp olt <4 x float>
// IR:         extractelement <4 x i1>
func.func @first_negative(%x: memref<4xf32>) -> i1 {
  %0 = builtin.unrealized_conversion_cast %x : memref<4xf32> to !llvm.ptr
  %v = llvm.load %0 {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
  %zero = llvm.mlir.constant(dense<0.000000e+00> : vector<4xf32>) : vector<4xf32>
  %negative = llvm_ext.vector_fcmp "olt" %v, %zero : vector<4xf32> -> vector<4xi1>
  %lane = llvm.mlir.constant(0 : i32) : i32
  %first = llvm_ext.extractelement %negative[%lane : i32] : vector<4xi1> -> i1
  func.return %first : i1
}

// -----

// A loop left as tir.for (convert-tir-to-cf not run) is an error.
// CHECK: convert-tir-to-llvm: 'tir.for' has no lowering to the llvm dialect
func.func @loop(%x: memref<4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %x[%i] : memref<4xf32>
  }
  func.return
}

// -----

// bf16 has no arithmetic here: its bits are an i16 in memory and in
// registers, decoded to f32 for the add (shifts), the sum rounded back to
// nearest even, NaN quieted (32704 = 0x7FC0); the constant is its bits.
// CHECK-LABEL: llvm.func @bf16_add(
// CHECK:         %[[A:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> i16
// CHECK:         %[[ONE:.*]] = llvm.mlir.constant(16256 : i16) : i16
// CHECK:         llvm.zext %[[A]] : i16 to i32
// CHECK:         %[[WIDE_A:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// CHECK:         llvm.zext %[[ONE]] : i16 to i32
// CHECK:         %[[WIDE_ONE:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// CHECK:         %[[SUM:.*]] = llvm.fadd %[[WIDE_A]], %[[WIDE_ONE]] : f32
// CHECK:         llvm.bitcast %[[SUM]] : f32 to i32
// CHECK:         llvm.mlir.constant(32704 : i32) : i32
// CHECK:         %[[BITS:.*]] = llvm.trunc %{{.*}} : i32 to i16
// CHECK:         llvm.store %[[BITS]], %{{.*}} {alignment = 2 : i64} : i16, !llvm.ptr
// IR-LABEL: define void @"bf16_add"(
// IR:         load i16
// IR:         fadd float
// IR:         store i16
func.func @bf16_add(%x: memref<2xbf16>, %y: memref<2xbf16>) {
  %c0 = arith.constant 0 : index
  %a = memref.load %x[%c0] : memref<2xbf16>
  %one = arith.constant 1.0 : bf16
  %s = arith.addf %a, %one : bf16
  memref.store %s, %y[%c0] : memref<2xbf16>
  func.return
}

// -----

// An i4 lives in the low bits of a byte: loaded as i8 and truncated,
// stored zero-extended (as ml_dtypes keeps int4 and uint4).
// CHECK-LABEL: llvm.func @int4_copy(
// CHECK:         %[[BYTE:.*]] = llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> i8
// CHECK-NEXT:    %[[A:.*]] = llvm.trunc %[[BYTE]] : i8 to i4
// CHECK:         %[[OUT:.*]] = llvm.zext %[[A]] : i4 to i8
// CHECK-NEXT:    llvm.store %[[OUT]], %{{.*}} {alignment = 1 : i64} : i8, !llvm.ptr
// IR-LABEL: define void @"int4_copy"(
// IR:         load i8
// IR:         trunc i8 {{.*}} to i4
// IR:         zext i4 {{.*}} to i8
// IR:         store i8
func.func @int4_copy(%x: memref<2xi4>, %y: memref<2xi4>) {
  %c0 = arith.constant 0 : index
  %a = memref.load %x[%c0] : memref<2xi4>
  memref.store %a, %y[%c0] : memref<2xi4>
  func.return
}

// -----

// tir.cycle_counter (graph.fresh_seed's kernel) reads the CPU's cycle counter.
// CHECK-LABEL: llvm.func @fresh_seed(
// CHECK:         %[[T:.*]] = llvm.call_intrinsic "llvm.readcyclecounter"() : () -> i64
// CHECK-NEXT:    llvm.store %[[T]], %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr
// IR-LABEL: define void @"fresh_seed"(
// IR:         call i64 @"llvm.readcyclecounter"()
func.func @fresh_seed(%y: memref<i64>) {
  %t = tir.cycle_counter : i64
  memref.store %t, %y[] : memref<i64>
  func.return
}

// -----

// maximumf / minimumf are llvm.maximum / minimum, their fast-math flags on
// the call (nsz: a max reduction's fold; -0 and +0 unordered, NaN kept).
// CHECK-LABEL: llvm.func @clip(
// CHECK:         %{{.*}} = llvm.call_intrinsic "llvm.maximum.f32"(%{{.*}}, %{{.*}}) {fastmathFlags = #llvm.fastmath<nsz>} : (f32, f32) -> f32
// CHECK:         %{{.*}} = llvm.call_intrinsic "llvm.minimum.f32"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// IR-LABEL: define void @"clip"(
// IR:         call nsz float @"llvm.maximum.f32"(float
// IR:         call float @"llvm.minimum.f32"(float
func.func @clip(%x: memref<f32>, %y: memref<f32>) {
  %a = memref.load %x[] : memref<f32>
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 6.0 : f32
  %b = arith.maximumf %a, %lo fastmath<nsz> : f32
  %c = arith.minimumf %b, %hi : f32
  memref.store %c, %y[] : memref<f32>
  func.return
}

// -----

// A select of buffers (tir-partition's shared nests) is a select of their
// pointers, and the load from it addresses the chosen pointer.
// CHECK-LABEL: llvm.func @either(
// CHECK:         %[[P:.*]] = llvm.select %c, %a, %b : i1, !llvm.ptr
// CHECK-NEXT:    %[[AT:.*]] = llvm.getelementptr inbounds %[[P]][%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %v = llvm.load %[[AT]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:    llvm.return %v : f32

// IR-LABEL: define float @"either"(
// IR:         select i1 %{{.*}}, ptr %{{.*}}, ptr %{{.*}}
func.func @either(%c: i1, %a: memref<4xf32>, %b: memref<4xf32>, %i: index) -> f32 {
  %buffer = arith.select %c, %a, %b : memref<4xf32>
  %v = memref.load %buffer[%i] : memref<4xf32>
  func.return %v : f32
}

// -----

// tir.prefetch is llvm.prefetch (read, locality, data cache) of its
// element's address: a getelementptr without inbounds (wrapping, never
// poison) and no clamp, so an offset past the buffer (a loop's last
// iterations prefetching ahead) costs nothing extra: a prefetch never faults.
// CHECK-LABEL: llvm.func @prefetch_ahead(%x: !llvm.ptr {llvm.dereferenceable = 128 : i64}, %at: i64) {
// CHECK-NEXT:    %[[ADDRESS:.*]] = llvm.getelementptr %x[%at] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[READ:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[DATA:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    %[[LOCALITY:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT:    llvm.call_intrinsic "llvm.prefetch.p0"(%[[ADDRESS]], %[[READ]], %[[LOCALITY]], %[[DATA]]) : (!llvm.ptr, i32, i32, i32) -> ()
// CHECK-NEXT:    llvm.return
// IR-LABEL: define void @"prefetch_ahead"(
// IR:           %".5" = getelementptr float, ptr %".1", i64 %".2"
// IR-NEXT:     call void @"llvm.prefetch.p0"(ptr %".5", i32 0, i32 2, i32 1)
// IR-NEXT:     ret void
func.func @prefetch_ahead(%x: memref<4x8xf32>, %at: index) {
  tir.prefetch %x[%at] {locality = 2 : i64} : memref<4x8xf32>
  func.return
}
