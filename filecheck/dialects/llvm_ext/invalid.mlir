// RUN: xtc-opt %s --split-input-file --verify-diagnostics

llvm.func @bad_predicate(%a: vector<4xf32>) {
  // expected-error @+1 {{'llvm_ext.vector_fcmp' predicate "less" is not one of oeq, ogt, oge, olt, ole, one, ord, ueq, ugt, uge, ult, ule, une, uno}}
  %r = llvm_ext.vector_fcmp "less" %a, %a : vector<4xf32> -> vector<4xi1>
  llvm.return
}

// -----

llvm.func @integer_lanes(%a: vector<4xi32>) {
  // expected-error @+1 {{'llvm_ext.vector_fcmp' compares float vectors, got vector<4xi32>}}
  %r = llvm_ext.vector_fcmp "olt" %a, %a : vector<4xi32> -> vector<4xi1>
  llvm.return
}

// -----

llvm.func @wrong_result(%a: vector<4xf32>) {
  // expected-error @+1 {{'llvm_ext.vector_fcmp' of vector<4xf32> gives vector<4xi1>, not vector<8xi1>}}
  %r = llvm_ext.vector_fcmp "olt" %a, %a : vector<4xf32> -> vector<8xi1>
  llvm.return
}

// -----

llvm.func @condition_lanes(%c: vector<8xi1>, %a: vector<4xf32>) {
  // expected-error @+1 {{'llvm_ext.vector_select' of vector<4xf32> needs a vector<4xi1> condition, got vector<8xi1>}}
  %r = llvm_ext.vector_select %c, %a, %a : vector<8xi1>, vector<4xf32>
  llvm.return
}

// -----

llvm.func @wrong_element(%a: vector<4xf32>, %i: i32) {
  // expected-error @+1 {{'llvm_ext.extractelement' of vector<4xf32> gives f32, not f64}}
  %r = llvm_ext.extractelement %a[%i : i32] : vector<4xf32> -> f64
  llvm.return
}

// -----

llvm.func @conversion_lanes(%a: vector<4xf32>) {
  // expected-error @+1 {{'llvm_ext.fptosi' of vector<4xf32> cannot give vector<8xi32>: lanes differ}}
  %r = llvm_ext.fptosi %a : vector<4xf32> to vector<8xi32>
  llvm.return
}

// -----

llvm.func @conversion_of_integers(%a: vector<4xi32>) {
  // expected-error @+1 {{'llvm_ext.fptoui' converts a float vector, got vector<4xi32>}}
  %r = llvm_ext.fptoui %a : vector<4xi32> to vector<4xi32>
  llvm.return
}

// -----

llvm.func @conversion_to_floats(%a: vector<4xf32>) {
  // expected-error @+1 {{'llvm_ext.fptosi' gives an integer vector, got vector<4xf64>}}
  %r = llvm_ext.fptosi %a : vector<4xf32> to vector<4xf64>
  llvm.return
}
