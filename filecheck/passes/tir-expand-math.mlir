// RUN: xtc-opt %s -p tir-expand-math | filecheck %s

// exp: clamp, n = floor(x·log2(e) + 1/2), r = x - n·ln2 (two parts), the
// Taylor polynomial of e^r, times 2^(n - n/2) · 2^(n/2) from exponent bits;
// n read as an i32 from the bits of n + 1.5·2^23 (no fptosi).
// CHECK-LABEL: func.func @exp
// CHECK-NOT:     math.exp
// CHECK:         %[[LO:.*]] = arith.maximumf %x, %{{.*}} : f32
// CHECK:         %[[X:.*]] = arith.minimumf %[[LO]], %{{.*}} : f32
// CHECK:         arith.constant 1.44269502 : f32
// CHECK:         %[[N:.*]] = math.floor %{{.*}} : f32
// CHECK:         arith.constant 0.693359375 : f32
// CHECK:         arith.constant -0.000212194442 : f32
// CHECK-NOT:     arith.fptosi
// CHECK:         %[[S:.*]] = arith.addf %[[N]], %{{.*}} : f32
// CHECK:         %[[B:.*]] = arith.bitcast %[[S]] : f32 to i32
// CHECK:         %[[W:.*]] = arith.subi %[[B]], %{{.*}} : i32
// CHECK:         %[[H:.*]] = arith.shrsi %[[W]], %{{.*}} : i32
// CHECK:         arith.subi %[[W]], %[[H]] : i32
// CHECK:         arith.constant 0.000198412701 : f32
// CHECK:         arith.constant 127 : i32
// CHECK:         arith.constant 23 : i32
// CHECK:         arith.bitcast %{{.*}} : i32 to f32
// CHECK:         arith.bitcast %{{.*}} : i32 to f32
// CHECK:         %[[Y:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    func.return %[[Y]] : f32
func.func @exp(%x: f32) -> f32 {
  %y = math.exp %x : f32
  func.return %y : f32
}

// erf: x·P(x²) inside (-1, 1), else ±(1 - e^(-a²)·Q(1 / (1 + a/2))).
// CHECK-LABEL: func.func @erf
// CHECK-NOT:     math.erf
// CHECK:         arith.constant 1.12837911 : f32
// CHECK:         %[[ABS:.*]] = math.absf %x : f32
// CHECK:         arith.divf
// CHECK:         math.floor
// CHECK:         %[[LARGE:.*]] = math.copysign %{{.*}}, %x : f32
// CHECK:         %[[IN:.*]] = arith.cmpf olt, %[[ABS]], %{{.*}} : f32
// CHECK:         %[[Y:.*]] = arith.select %[[IN]], %{{.*}}, %[[LARGE]] : f32
// CHECK-NEXT:    func.return %[[Y]] : f32
func.func @erf(%x: f32) -> f32 {
  %y = math.erf %x : f32
  func.return %y : f32
}

// Other element types keep their libm call.
// CHECK-LABEL: func.func @wide
// CHECK-NEXT:    math.exp %x : f64
// CHECK-NEXT:    math.erf %x : f64
func.func @wide(%x: f64) -> f64 {
  %y = math.exp %x : f64
  %z = math.erf %x : f64
  %s = arith.addf %y, %z : f64
  func.return %s : f64
}
