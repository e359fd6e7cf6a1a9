// RUN: xtc-opt %s -p tir-lower-parallel --split-input-file | filecheck %s
// RUN: xtc-opt %s -p tir-lower-parallel --split-input-file | xtc-opt --split-input-file -p tir-lower-parallel | filecheck %s

// A parallel loop becomes a launch: the loop's work-sharing slots on the
// stack, emptied; the values the body uses from outside (%x, %y) and the
// slots' address in i64 slots of a stack context; then GOMP_parallel of the
// outlined function on @xtc_num_threads threads. The outlined function
// reads the slots back, stores its thread's static chunk of the 8
// iterations in its slot (among the caller's, or its own past the 64th
// thread) and runs the body for each iteration xtc_share_next claims (its
// own chunk's, then others' last ones) as an scf.while; the constant %two
// is copied in, not passed; the inner vectorized loop is left for
// tir-lower-vectorized.
// CHECK-LABEL: func.func @scale(
// CHECK:         %slots = memref.alloca() {alignment = 64 : i64} : memref<512xi64>
// CHECK-NEXT:    %[[SLOTS:.*]] = builtin.unrealized_conversion_cast %slots : memref<512xi64> to !llvm.ptr
// CHECK-NEXT:    llvm.call @xtc_share_reset(%[[SLOTS]]) : (!llvm.ptr) -> ()
// CHECK:         %ctx = memref.alloca() {alignment = 8 : i64} : memref<3xi64>
// CHECK:         %[[X:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr to i64
// CHECK:         llvm.store %[[X]], %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr
// CHECK:         %[[Y:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr to i64
// CHECK:         llvm.store %[[Y]], %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr
// CHECK:         %[[S:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr to i64
// CHECK:         llvm.store %[[S]], %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr
// CHECK:         %[[F:.*]] = llvm.mlir.addressof @scale_parallel_0 : !llvm.ptr
// CHECK:         %[[T:.*]] = memref.get_global @xtc_num_threads : memref<1xi32>
// CHECK:         %threads = memref.load %[[T]]
// CHECK:         llvm.call @GOMP_parallel(%[[F]], %{{.*}}, %threads, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i32, i32) -> ()
// CHECK-NOT:     tir.for
// CHECK:         func.return
// CHECK-LABEL: func.func private @scale_parallel_0(%ctx: memref<3xi64>) {
// CHECK:         %x = builtin.unrealized_conversion_cast %{{.*}} : !llvm.ptr to memref<8x4xf32>
// CHECK:         %y = builtin.unrealized_conversion_cast %{{.*}} : !llvm.ptr to memref<8x4xf32>
// CHECK:         %slots = builtin.unrealized_conversion_cast %{{.*}} : !llvm.ptr to memref<512xi64>
// CHECK-NEXT:    %[[ALL:.*]] = builtin.unrealized_conversion_cast %slots : memref<512xi64> to !llvm.ptr
// CHECK:         %two = arith.constant 2.000000e+00 : f32
// CHECK:         %[[T:.*]] = func.call @omp_get_thread_num() : () -> i32
// CHECK:         %[[N:.*]] = func.call @omp_get_num_threads() : () -> i32
// CHECK:         %chunk = arith.divui
// CHECK:         %end = arith.minsi
// CHECK:         %[[OWN:.*]] = memref.alloca() {alignment = 8 : i64} : memref<1xi64>
// CHECK:         %[[MINE:.*]] = llvm.getelementptr %[[ALL]][%{{.*}}] : (!llvm.ptr, i32) -> !llvm.ptr, i64
// CHECK:         %[[SHARED:.*]] = arith.cmpi ult, %[[T]], %{{.*}} : i32
// CHECK:         %slot = llvm.select %[[SHARED]], %[[MINE]], %{{.*}} : i1, !llvm.ptr
// CHECK:         llvm.call @xtc_share_own(%slot, %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, i64) -> ()
// CHECK:         scf.while () : () -> index {
// CHECK-NEXT:      %[[K:.*]] = llvm.call @xtc_share_next(%slot, %[[ALL]], %[[T]], %[[N]]) : (!llvm.ptr, !llvm.ptr, i32, i32) -> i64
// CHECK:           %[[FOUND:.*]] = arith.cmpi sge, %[[K]], %{{.*}} : i64
// CHECK-NEXT:      %claimed = arith.index_cast %[[K]] : i64 to index
// CHECK-NEXT:      scf.condition(%[[FOUND]]) %claimed : index
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^{{.*}}(%i: index):
// CHECK-NEXT:      tir.for %j = 0 to 4 step 1 {name = "j", kind = "vectorized"} {
// CHECK-NEXT:        %v = memref.load %x[%i, %j] : memref<8x4xf32>
// CHECK-NEXT:        %d = arith.mulf %v, %two : f32
// CHECK-NEXT:        memref.store %d, %y[%i, %j] : memref<8x4xf32>
// CHECK:         "memref.global"() <{sym_name = "xtc_num_threads", type = memref<1xi32>, initial_value, sym_visibility = "public", alignment = 4 : i64}>
// CHECK:         func.func private @omp_get_thread_num() -> i32
// CHECK:         func.func private @omp_get_num_threads() -> i32
// CHECK:         llvm.func @GOMP_parallel(!llvm.ptr, !llvm.ptr, i32, i32)
// CHECK:         llvm.func @xtc_share_reset(!llvm.ptr)
// CHECK:         llvm.func @xtc_share_own(!llvm.ptr, i64, i64)
// CHECK:         llvm.func @xtc_share_next(!llvm.ptr, !llvm.ptr, i32, i32) -> i64
// CHECK-NOT:     @xtc_fault_record
func.func @scale(%x: memref<8x4xf32>, %y: memref<8x4xf32>) {
  %two = arith.constant 2.000000e+00 : f32
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "parallel"} {
    tir.for %j = 0 to 4 step 1 {name = "j", kind = "vectorized"} {
      %v = memref.load %x[%i, %j] : memref<8x4xf32>
      %d = arith.mulf %v, %two : f32
      memref.store %d, %y[%i, %j] : memref<8x4xf32>
    }
  }
  func.return
}

// -----

// A loop with a run-time check passes the caller's fault record (the last
// slot); each thread sends its faults there for its chunk, and back after.
// CHECK-LABEL: func.func @checked(
// CHECK:         %[[RECORD:.*]] = llvm.call @xtc_fault_record() : () -> !llvm.ptr
// CHECK:         llvm.call @GOMP_parallel
// CHECK-LABEL: func.func private @checked_parallel_0(
// CHECK:         %[[BEFORE:.*]] = llvm.call @xtc_fault_redirect(%{{.*}}) : (!llvm.ptr) -> !llvm.ptr
// CHECK:         scf.while
// CHECK:           tir.assert
// CHECK:         llvm.call @xtc_fault_redirect(%[[BEFORE]]) : (!llvm.ptr) -> !llvm.ptr
// CHECK-NEXT:    func.return
// CHECK:         llvm.func @xtc_fault_record() -> !llvm.ptr
// CHECK:         llvm.func @xtc_fault_redirect(!llvm.ptr) -> !llvm.ptr
func.func @checked(%idx: memref<8xi64>, %out: memref<8xi64>) {
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

// Loops of other kinds are left as they are.
// CHECK-LABEL: func.func @serial(
// CHECK-NEXT:    tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
// CHECK-NOT:     GOMP_parallel
func.func @serial(%x: memref<4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %x[%i] : memref<4xf32>
  }
  func.return
}
