// RUN: xtc-opt %s -p tir-expand-math | filecheck %s

// exp: clamp, t = x·log2(e) + 1.5·2^23 (n = t - 1.5·2^23, its i32 the bits
// of t less those of the shift: no floor, no fptosi), r = n·(-ln2) + x (two
// parts, multiply-adds), a polynomial of degree 6 in r, times
// 2^(n - n/2) · 2^(n/2) from exponent bits.
// CHECK-LABEL: func.func @exp
// CHECK-NOT:     math.exp
// CHECK:         %[[LO:.*]] = arith.maximumf %x, %{{.*}} : f32
// CHECK:         %[[X:.*]] = arith.minimumf %[[LO]], %{{.*}} : f32
// CHECK-NOT:     math.floor
// CHECK-NOT:     arith.fptosi
// CHECK:         %[[SCALED:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK:         %[[T:.*]] = arith.addf %[[SCALED]], %{{.*}} : f32
// CHECK:         %[[N:.*]] = arith.subf %[[T]], %{{.*}} : f32
// CHECK:         arith.constant -0.693359375 : f32
// CHECK:         %[[HIGH:.*]] = arith.mulf %[[N]], %{{.*}} : f32
// CHECK:         %[[R1:.*]] = arith.addf %[[HIGH]], %[[X]] : f32
// CHECK:         arith.constant 0.000212194442 : f32
// CHECK:         %[[LOW:.*]] = arith.mulf %[[N]], %{{.*}} : f32
// CHECK:         %[[R:.*]] = arith.addf %[[LOW]], %[[R1]] : f32
// CHECK:         %[[B:.*]] = arith.bitcast %[[T]] : f32 to i32
// CHECK:         %[[W:.*]] = arith.subi %[[B]], %{{.*}} : i32
// CHECK:         %[[H:.*]] = arith.shrsi %[[W]], %{{.*}} : i32
// CHECK:         arith.subi %[[W]], %[[H]] : i32
// CHECK:         arith.constant 0.00138140877 : f32
// CHECK-COUNT-6: arith.mulf %{{.*}}, %[[R]] : f32
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

// exp of -|x| (sigmoid) or -x·x (erf) is never above 0: no upper clamp,
// and n is in [-150, 0]: one exponent, 2^(n + 64) (normal), then times
// 2^-64 (one rounding for subnormal results), no halving of n.
// CHECK-LABEL: func.func @exp_never_positive
// CHECK:         %[[NEG:.*]] = arith.negf %{{.*}} : f32
// CHECK-NEXT:    arith.constant -1.040000e+02 : f32
// CHECK-NEXT:    %[[LO:.*]] = arith.maximumf %[[NEG]], %{{.*}} : f32
// CHECK-NEXT:    arith.constant 1.44269502 : f32
// CHECK-NEXT:    arith.mulf %[[LO]], %{{.*}} : f32
// CHECK-NOT:     arith.shrsi
// CHECK:         %[[W:.*]] = arith.subi %{{.*}}, %{{.*}} : i32
// CHECK:         arith.constant 0.00138140877 : f32
// CHECK:         %[[LIFT:.*]] = arith.constant 64 : i32
// CHECK-NEXT:    %[[N64:.*]] = arith.addi %[[W]], %[[LIFT]] : i32
// CHECK-NEXT:    %[[BIAS:.*]] = arith.constant 127 : i32
// CHECK-NEXT:    %[[BIASED:.*]] = arith.addi %[[N64]], %[[BIAS]] : i32
// CHECK-NEXT:    %[[SHIFT:.*]] = arith.constant 23 : i32
// CHECK-NEXT:    %[[BITS:.*]] = arith.shli %[[BIASED]], %[[SHIFT]] : i32
// CHECK-NEXT:    %[[SCALE:.*]] = arith.bitcast %[[BITS]] : i32 to f32
// CHECK-NEXT:    %[[LIFTED:.*]] = arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK-NEXT:    %[[DOWN:.*]] = arith.constant 5.42101086e-20 : f32
// CHECK-NEXT:    arith.mulf %[[LIFTED]], %[[DOWN]] : f32
// CHECK:         %[[SQ:.*]] = arith.negf %{{.*}} : f32
// CHECK-NEXT:    arith.constant -1.040000e+02 : f32
// CHECK-NEXT:    %[[LO2:.*]] = arith.maximumf %[[SQ]], %{{.*}} : f32
// CHECK-NEXT:    arith.constant 1.44269502 : f32
// CHECK-NEXT:    arith.mulf %[[LO2]], %{{.*}} : f32
// CHECK-NOT:     arith.minimumf
// CHECK:         func.return
func.func @exp_never_positive(%x: f32) -> f32 {
  %a = math.absf %x : f32
  %n = arith.negf %a : f32
  %y = math.exp %n : f32
  %s = arith.mulf %x, %x : f32
  %m = arith.negf %s : f32
  %z = math.exp %m : f32
  %r = arith.addf %y, %z : f32
  func.return %r : f32
}

// The minimum of a value and a constant <= 0 (softmax's x - max) is never
// positive too; a minimum with a positive constant is not.
// CHECK-LABEL: func.func @exp_of_minimum
// CHECK:         %[[ZERO:.*]] = arith.minimumf %x, %{{.*}} : f32
// CHECK-NEXT:    arith.constant -1.040000e+02 : f32
// CHECK-NEXT:    %[[LO:.*]] = arith.maximumf %[[ZERO]], %{{.*}} : f32
// CHECK-NEXT:    arith.constant 1.44269502 : f32
// CHECK-NEXT:    arith.mulf %[[LO]], %{{.*}} : f32
// CHECK-NOT:     arith.shrsi
// CHECK:         arith.constant 5.42101086e-20 : f32
// CHECK:         %[[ONE:.*]] = arith.minimumf %x, %{{.*}} : f32
// CHECK-NEXT:    arith.constant -1.040000e+02 : f32
// CHECK-NEXT:    %[[LO1:.*]] = arith.maximumf %[[ONE]], %{{.*}} : f32
// CHECK-NEXT:    arith.constant 8.875000e+01 : f32
// CHECK-NEXT:    arith.minimumf %[[LO1]], %{{.*}} : f32
// CHECK:         arith.shrsi
// CHECK:         func.return
func.func @exp_of_minimum(%x: f32) -> f32 {
  %zero = arith.constant 0.0 : f32
  %a = arith.minimumf %x, %zero : f32
  %y = math.exp %a : f32
  %one = arith.constant 1.0 : f32
  %b = arith.minimumf %x, %one : f32
  %z = math.exp %b : f32
  %r = arith.addf %y, %z : f32
  func.return %r : f32
}

// erf: x·P(x²) inside (-1, 1), else ±(1 - e^(-a²)·Q(1 / (1 + a/2))), the
// exp of -a² never positive (one exponent, then 2^-64).
// CHECK-LABEL: func.func @erf
// CHECK-NOT:     math.erf
// CHECK:         arith.constant 1.12837911 : f32
// CHECK:         %[[ABS:.*]] = math.absf %x : f32
// CHECK:         arith.divf
// CHECK-NOT:     arith.shrsi
// CHECK:         arith.constant 5.42101086e-20 : f32
// CHECK-NOT:     arith.shrsi
// CHECK:         %[[LARGE:.*]] = math.copysign %{{.*}}, %x : f32
// CHECK:         %[[IN:.*]] = arith.cmpf olt, %[[ABS]], %{{.*}} : f32
// CHECK:         %[[Y:.*]] = arith.select %[[IN]], %{{.*}}, %[[LARGE]] : f32
// CHECK-NEXT:    func.return %[[Y]] : f32
func.func @erf(%x: f32) -> f32 {
  %y = math.erf %x : f32
  func.return %y : f32
}

// tanh: x + x³·P(x²) inside (-0.625, 0.625), else (1 - e)/(1 + e) with
// e = exp(-|2x|) (expanded, no upper clamp); either signed by x.
// CHECK-LABEL: func.func @tanh
// CHECK-NOT:     math.tanh
// CHECK:         %[[SQ:.*]] = arith.mulf %x, %x : f32
// CHECK:         %[[CUBE:.*]] = arith.mulf %x, %[[SQ]] : f32
// CHECK:         arith.constant -0.0056919856 : f32
// CHECK-COUNT-4: arith.mulf %{{.*}}, %[[SQ]] : f32
// CHECK:         %[[ODD:.*]] = arith.mulf %[[CUBE]], %{{.*}} : f32
// CHECK-NEXT:    %[[SMALL:.*]] = arith.addf %[[ODD]], %x : f32
// CHECK-NEXT:    %[[TWICE:.*]] = arith.addf %x, %x : f32
// CHECK-NEXT:    %[[ABS2:.*]] = math.absf %[[TWICE]] : f32
// CHECK-NEXT:    arith.negf %[[ABS2]] : f32
// CHECK-NOT:     arith.minimumf
// CHECK-NOT:     arith.shrsi
// CHECK:         arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:    arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    arith.constant 5.42101086e-20 : f32
// CHECK-NEXT:    %[[E:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[NUM:.*]] = arith.subf %[[ONE]], %[[E]] : f32
// CHECK-NEXT:    %[[DEN:.*]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT:    %[[RATIO:.*]] = arith.divf %[[NUM]], %[[DEN]] : f32
// CHECK-NEXT:    %[[ABS:.*]] = math.absf %x : f32
// CHECK-NEXT:    arith.constant 6.250000e-01 : f32
// CHECK-NEXT:    %[[IN:.*]] = arith.cmpf olt, %[[ABS]], %{{.*}} : f32
// CHECK-NEXT:    %[[PICK:.*]] = arith.select %[[IN]], %[[SMALL]], %[[RATIO]] : f32
// CHECK-NEXT:    %[[Y:.*]] = math.copysign %[[PICK]], %x : f32
// CHECK-NEXT:    func.return %[[Y]] : f32
func.func @tanh(%x: f32) -> f32 {
  %y = math.tanh %x : f32
  func.return %y : f32
}

// Other element types keep their libm call.
// CHECK-LABEL: func.func @wide
// CHECK-NEXT:    math.exp %x : f64
// CHECK-NEXT:    math.erf %x : f64
// CHECK-NEXT:    math.tanh %x : f64
func.func @wide(%x: f64) -> f64 {
  %y = math.exp %x : f64
  %z = math.erf %x : f64
  %t = math.tanh %x : f64
  %s = arith.addf %y, %z : f64
  %u = arith.addf %s, %t : f64
  func.return %u : f64
}
