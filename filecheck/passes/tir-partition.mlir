// RUN: xtc-opt %s -p tir-partition | filecheck %s

// A Concat of three inputs along i1, then a per-channel scale (what
// convert-te-to-tir makes of Concat + Mul): in0 has a nest of its own,
// loading only in0; in1 and in2 (one shape, 4 channels each) share one
// nest over their 8 channels, loading from the buffer chosen by i1's range
// at i1 minus that range's start; no f32 select or clamp is left.
// CHECK-LABEL: func.func @concat_scale
// CHECK:         tir.for %i0_p0 = 0 to 1
// CHECK-NEXT:      tir.for %i1_p0 = 0 to 8
// CHECK-NEXT:        tir.for %i2_p0 = 0 to 6
// CHECK-NOT:           arith.select
// CHECK-NOT:           %in1
// CHECK:               memref.load %in0[%{{.*}}, %i1_p0, %i2_p0]
// CHECK:               memref.load %in3[%i1_p0]
// CHECK:               memref.store %{{.*}}, %out0[%i0_p0, %i1_p0, %i2_p0]
// CHECK:         tir.for %i0_p1 = 0 to 1
// CHECK-NEXT:      tir.for %i1_p1 = 0 to 8
// CHECK-NEXT:        tir.for %i2_p1 = 0 to 6
// CHECK-NEXT:          %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:          %[[I1:.*]] = arith.addi %i1_p1, %[[C8]] : index
// CHECK-NOT:           arith.maxsi
// CHECK-NOT:           arith.minsi
// CHECK:               %[[C12:.*]] = arith.constant 12 : index
// CHECK-NEXT:          %[[LT:.*]] = arith.cmpi slt, %[[I1]], %[[C12]] : index
// CHECK-NEXT:          %[[BUF:.*]] = arith.select %[[LT]], %in1, %in2 : memref<1x4x6xf32>
// CHECK-NEXT:          %[[S1:.*]] = arith.constant 8 : index
// CHECK-NEXT:          %[[S2:.*]] = arith.constant 12 : index
// CHECK-NEXT:          %[[START:.*]] = arith.select %[[LT]], %[[S1]], %[[S2]] : index
// CHECK-NEXT:          %[[K:.*]] = arith.subi %[[I1]], %[[START]] : index
// CHECK-NEXT:          %[[V:.*]] = memref.load %[[BUF]][%{{.*}}, %[[K]], %i2_p1] : memref<1x4x6xf32>
// CHECK-NOT:           arith.select
// CHECK:               memref.load %in3[%[[I1]]]
// CHECK:               memref.store %{{.*}}, %out0[%i0_p1, %[[I1]], %i2_p1]
// CHECK-NOT:     tir.for %i0_p2
// CHECK:         func.return
func.func @concat_scale(%in0: memref<1x8x6xf32>, %in1: memref<1x4x6xf32>, %in2: memref<1x4x6xf32>, %in3: memref<16xf32>, %out0: memref<1x16x6xf32>) {
  tir.for %i0 = 0 to 1 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 16 step 1 {name = "i1", kind = "serial"} {
      tir.for %i2 = 0 to 6 step 1 {name = "i2", kind = "serial"} {
        %c0 = arith.constant 0 : index
        %c3 = arith.constant 3 : index
        %c7 = arith.constant 7 : index
        %c8 = arith.constant 8 : index
        %c12 = arith.constant 12 : index
        %a2 = arith.subi %i1, %c12 : index
        %k2 = arith.maxsi %a2, %c0 : index
        %v2 = memref.load %in2[%c0, %k2, %i2] : memref<1x4x6xf32>
        %lt12 = arith.cmpi slt, %i1, %c12 : index
        %a1 = arith.subi %i1, %c8 : index
        %b1 = arith.maxsi %a1, %c0 : index
        %k1 = arith.minsi %b1, %c3 : index
        %v1 = memref.load %in1[%c0, %k1, %i2] : memref<1x4x6xf32>
        %s1 = arith.select %lt12, %v1, %v2 : f32
        %lt8 = arith.cmpi slt, %i1, %c8 : index
        %k0 = arith.minsi %i1, %c7 : index
        %v0 = memref.load %in0[%c0, %k0, %i2] : memref<1x8x6xf32>
        %s0 = arith.select %lt8, %v0, %s1 : f32
        %w = memref.load %in3[%i1] : memref<16xf32>
        %y = arith.mulf %s0, %w : f32
        memref.store %y, %out0[%i0, %i1, %i2] : memref<1x16x6xf32>
      }
    }
  }
  func.return
}

// A nest that selects on no loop-index compare (a padded copy's bounds
// test is an `andi` of compares) is left as it is.
// CHECK-LABEL: func.func @pad
// CHECK:         tir.for %i = 0 to 8
// CHECK-NOT:     _p0
// CHECK:         arith.select
func.func @pad(%in0: memref<6xf32>, %out0: memref<8xf32>) {
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "serial"} {
    %c1 = arith.constant 1 : index
    %c7 = arith.constant 7 : index
    %c0 = arith.constant 0 : index
    %c5 = arith.constant 5 : index
    %ge = arith.cmpi sge, %i, %c1 : index
    %lt = arith.cmpi slt, %i, %c7 : index
    %in = arith.andi %ge, %lt : i1
    %a = arith.subi %i, %c1 : index
    %b = arith.maxsi %a, %c0 : index
    %k = arith.minsi %b, %c5 : index
    %v = memref.load %in0[%k] : memref<6xf32>
    %zero = arith.constant 0.0 : f32
    %y = arith.select %in, %v, %zero : f32
    memref.store %y, %out0[%i] : memref<8xf32>
  }
  func.return
}

// Inputs of other shapes (4 and 2 channels) each keep a nest of their own.
// CHECK-LABEL: func.func @concat_shapes
// CHECK:         tir.for %i0_p0 = 0 to 4
// CHECK-NOT:       arith.select
// CHECK:           memref.load %in0[%i0_p0, %i1_p0]
// CHECK:         tir.for %i0_p1 = 0 to 2
// CHECK-NOT:       arith.select
// CHECK:           memref.load %in1[
// CHECK:         func.return
func.func @concat_shapes(%in0: memref<4x3xf32>, %in1: memref<2x3xf32>, %out0: memref<6x3xf32>) {
  tir.for %i0 = 0 to 6 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 3 step 1 {name = "i1", kind = "serial"} {
      %c0 = arith.constant 0 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %a1 = arith.subi %i0, %c4 : index
      %k1 = arith.maxsi %a1, %c0 : index
      %v1 = memref.load %in1[%k1, %i1] : memref<2x3xf32>
      %lt4 = arith.cmpi slt, %i0, %c4 : index
      %k0 = arith.minsi %i0, %c3 : index
      %v0 = memref.load %in0[%k0, %i1] : memref<4x3xf32>
      %y = arith.select %lt4, %v0, %v1 : f32
      memref.store %y, %out0[%i0, %i1] : memref<6x3xf32>
    }
  }
  func.return
}

// Along the innermost loop, inputs of one shape still keep a nest each:
// a buffer chosen there would change from one lane of its vector to the next.
// CHECK-LABEL: func.func @concat_innermost
// CHECK:         tir.for %i1_p0 = 0 to 2
// CHECK:           memref.load %in0[
// CHECK:         tir.for %i1_p1 = 0 to 2
// CHECK-NOT:       arith.select
// CHECK:           memref.load %in1[
// CHECK:         func.return
func.func @concat_innermost(%in0: memref<3x2xf32>, %in1: memref<3x2xf32>, %out0: memref<3x4xf32>) {
  tir.for %i0 = 0 to 3 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 4 step 1 {name = "i1", kind = "serial"} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %a1 = arith.subi %i1, %c2 : index
      %k1 = arith.maxsi %a1, %c0 : index
      %v1 = memref.load %in1[%i0, %k1] : memref<3x2xf32>
      %lt2 = arith.cmpi slt, %i1, %c2 : index
      %k0 = arith.minsi %i1, %c1 : index
      %v0 = memref.load %in0[%i0, %k0] : memref<3x2xf32>
      %y = arith.select %lt2, %v0, %v1 : f32
      memref.store %y, %out0[%i0, %i1] : memref<3x4xf32>
    }
  }
  func.return
}
