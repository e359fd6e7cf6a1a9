// RUN: xtc-run %s --arg-types 2xf32,2xf32 --fill ones | filecheck %s
// RUN: xtc-run %s --arg-types 2xf32,2xf32 --fill ones --native | filecheck %s
// RUN: xtc-run %s --entry increment --arg-types 3xi32 --fill zeros | filecheck %s --check-prefix=INPLACE
// RUN: not xtc-run %s --fill ones 2>&1 | filecheck %s --check-prefix=NOTYPES

// llvm-level functions always run natively. Their arguments are pointers:
// --arg-types gives each one's shape and element type. The result is the
// argument marked graph.output; without one, every argument after the call.
// CHECK:      result 0: memref<2xf32>
// CHECK-NEXT: [2, 3]

// INPLACE:      result 0: memref<3xi32>
// INPLACE-NEXT: [7, 0, 0]

// NOTYPES: xtc-run: error: @main is an llvm-level function of pointers (x (8 bytes), arg1 (8 bytes, output 0)): give each one's shape and element type with --arg-types
llvm.func @main(%x: !llvm.ptr {graph.name = "x", llvm.dereferenceable = 8 : i64}, %y: !llvm.ptr {graph.output = 0 : i64, llvm.dereferenceable = 8 : i64}) {
  %one = llvm.mlir.constant(1) : i64
  %two = llvm.mlir.constant(2.000000e+00) : f32
  %x0 = llvm.load %x {alignment = 4 : i64} : !llvm.ptr -> f32
  %y0 = llvm.fmul %x0, %two : f32
  llvm.store %y0, %y {alignment = 4 : i64} : f32, !llvm.ptr
  %px1 = llvm.getelementptr inbounds %x[%one] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %x1 = llvm.load %px1 {alignment = 4 : i64} : !llvm.ptr -> f32
  %y1 = llvm.fadd %x1, %two : f32
  %py1 = llvm.getelementptr inbounds %y[%one] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %y1, %py1 {alignment = 4 : i64} : f32, !llvm.ptr
  llvm.return
}

llvm.func internal @increment(%p: !llvm.ptr) {
  %seven = llvm.mlir.constant(7) : i32
  %v = llvm.load %p {alignment = 4 : i64} : !llvm.ptr -> i32
  %w = llvm.add %v, %seven : i32
  llvm.store %w, %p {alignment = 4 : i64} : i32, !llvm.ptr
  llvm.return
}
