// RUN: %roundtrip | filecheck %s
// RUN: %generic-roundtrip | filecheck %s

// CHECK-LABEL: func.func @matmul
// CHECK:         tir.for %[[I:.*]] = 0 to 4 step 1 {name = "i", kind = "parallel"} {
// CHECK-NEXT:      tir.for %[[J:.*]] = 0 to 5 step 1 {name = "j", kind = "serial"} {
// CHECK:             tir.for %[[K:.*]] = 0 to 3 step 1 {name = "k", kind = "serial"} {
// CHECK-NEXT:          memref.load %{{.*}}[%[[I]], %[[K]]] : memref<4x3xf32>
func.func @matmul(%A: memref<4x3xf32>, %B: memref<3x5xf32>, %C: memref<4x5xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "parallel"} {
    tir.for %j = 0 to 5 step 1 {name = "j", kind = "serial"} {
      %z = arith.constant 0.0 : f32
      memref.store %z, %C[%i, %j] : memref<4x5xf32>
      tir.for %k = 0 to 3 step 1 {name = "k", kind = "serial"} {
        %a = memref.load %A[%i, %k] : memref<4x3xf32>
        %b = memref.load %B[%k, %j] : memref<3x5xf32>
        %c = memref.load %C[%i, %j] : memref<4x5xf32>
        %m = arith.mulf %a, %b : f32
        %s = arith.addf %c, %m : f32
        memref.store %s, %C[%i, %j] : memref<4x5xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @kinds
// CHECK: tir.for %{{.*}} = 0 to 16 step 4 {name = "v", kind = "vectorized"}
// CHECK: tir.for %{{.*}} = 2 to 9 step 3 {name = "u", kind = "unrolled"}
func.func @kinds(%A: memref<16xf32>) {
  tir.for %v = 0 to 16 step 4 {name = "v", kind = "vectorized"} {
    %x = memref.load %A[%v] : memref<16xf32>
    memref.store %x, %A[%v] : memref<16xf32>
  }
  tir.for %u = 2 to 9 step 3 {name = "u", kind = "unrolled"} {
  }
  func.return
}

// CHECK-LABEL: func.func @prefetch
// CHECK-NEXT:    tir.prefetch %{{.*}}[%{{.*}}] {locality = 2 : i64} : memref<4x3xf32>
func.func @prefetch(%A: memref<4x3xf32>, %at: index) {
  tir.prefetch %A[%at] {locality = 2 : i64} : memref<4x3xf32>
  func.return
}

// A run-time check: the message alone, or with `{}` for a value (an integer
// or index); doubled braces are literal ones.
// CHECK-LABEL: func.func @assert
// CHECK-NEXT:    tir.assert %{{.*}}, "Div node 'd': integer division by zero"
// CHECK-NEXT:    tir.assert %{{.*}}, "Gather node 'g{{[{][{]}}x{{[}][}]}}': index {} is out of range [-5, 5) on axis 0", %{{.*}} : i64
// CHECK-NEXT:    tir.assert %{{.*}}, "row {}", %{{.*}} : index
// CHECK-NEXT:    tir.assert %{{.*}}, "small {}", %{{.*}} : i8
func.func @assert(%ok: i1, %i: i64, %at: index, %b: i8) {
  tir.assert %ok, "Div node 'd': integer division by zero"
  tir.assert %ok, "Gather node 'g{{x}}': index {} is out of range [-5, 5) on axis 0", %i : i64
  tir.assert %ok, "row {}", %at : index
  tir.assert %ok, "small {}", %b : i8
  func.return
}

// CHECK-LABEL: func.func @cycle_counter
// CHECK:         %{{.*}} = tir.cycle_counter : i64
func.func @cycle_counter() -> i64 {
  %0 = tir.cycle_counter : i64
  func.return %0 : i64
}
