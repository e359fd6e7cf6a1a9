// RUN: %roundtrip | filecheck %s
// RUN: %generic-roundtrip | filecheck %s

// CHECK-LABEL: llvm.func @lanes(
// CHECK:         %below = llvm_ext.vector_fcmp "olt" %a, %b : vector<8xf32> -> vector<8xi1>
// CHECK-NEXT:    %unordered = llvm_ext.vector_fcmp "uno" %a, %b : vector<8xf32> -> vector<8xi1>
// CHECK-NEXT:    %low = llvm_ext.vector_select %below, %a, %b : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:    %lane = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %first = llvm_ext.extractelement %low[%lane : i32] : vector<8xf32> -> f32
// CHECK-NEXT:    %wide = llvm.mlir.constant(3) : i64
// CHECK-NEXT:    %flag = llvm_ext.extractelement %unordered[%wide : i64] : vector<8xi1> -> i1
llvm.func @lanes(%a: vector<8xf32>, %b: vector<8xf32>) -> f32 {
  %below = llvm_ext.vector_fcmp "olt" %a, %b : vector<8xf32> -> vector<8xi1>
  %unordered = llvm_ext.vector_fcmp "uno" %a, %b : vector<8xf32> -> vector<8xi1>
  %low = llvm_ext.vector_select %below, %a, %b : vector<8xi1>, vector<8xf32>
  %lane = llvm.mlir.constant(0 : i32) : i32
  %first = llvm_ext.extractelement %low[%lane : i32] : vector<8xf32> -> f32
  %wide = llvm.mlir.constant(3 : i64) : i64
  %flag = llvm_ext.extractelement %unordered[%wide : i64] : vector<8xi1> -> i1
  llvm.return %first : f32
}

// CHECK-LABEL: llvm.func @generic_address(
// CHECK:         %shared = llvm.mlir.addressof @tile : !llvm.ptr<3>
// CHECK-NEXT:    %generic = llvm_ext.addrspacecast %shared : !llvm.ptr<3> to !llvm.ptr
llvm.mlir.global internal @tile() {addr_space = 3 : i32} : !llvm.array<4 x f32>
llvm.func @generic_address() -> !llvm.ptr {
  %shared = llvm.mlir.addressof @tile : !llvm.ptr<3>
  %generic = llvm_ext.addrspacecast %shared : !llvm.ptr<3> to !llvm.ptr
  llvm.return %generic : !llvm.ptr
}

// CHECK-LABEL: llvm.func @conversions(
// CHECK:         %signed = llvm_ext.fptosi %floats : vector<8xf32> to vector<8xi64>
// CHECK-NEXT:    %unsigned = llvm_ext.fptoui %floats : vector<8xf32> to vector<8xi8>
llvm.func @conversions(%floats: vector<8xf32>) -> vector<8xi8> {
  %signed = llvm_ext.fptosi %floats : vector<8xf32> to vector<8xi64>
  %unsigned = llvm_ext.fptoui %floats : vector<8xf32> to vector<8xi8>
  llvm.return %unsigned : vector<8xi8>
}
