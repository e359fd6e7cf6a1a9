// RUN: xtc-opt %s -p 'tir-lower-vectorized{vnni=on}' | filecheck %s --check-prefix=VNNI
// RUN: xtc-opt %s -p 'tir-lower-vectorized{vnni=off}' --remarks 2>&1 | filecheck %s --check-prefix=WIDEN

// acc[l] += Σ_t zext(u[4 + t]) · sext(w[l, t]): four u8 x i8 products per
// i32 lane. With VNNI it is one vpdpbusd: the u8 word is the same in every
// lane (one i32 load, broadcast), the i8 words are consecutive (one 64-byte
// load). Without, the products widen to i32, with a remark.
// VNNI-LABEL: func.func @dot4(
// VNNI:         %[[WORD:.*]] = llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> i32
// VNNI:         %[[U:.*]] = llvm.bitcast %{{.*}} : vector<16xi32> to vector<64xi8>
// VNNI:         %[[W:.*]] = llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> vector<64xi8>
// VNNI:         llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}, %[[U]], %[[W]]) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// WIDEN:        remark: loop 'l' in @dot4: 8-bit dot products widened to i32
// WIDEN-LABEL:  func.func @dot4(
// WIDEN-NOT:    vpdpbusd
// WIDEN:        llvm.mul %{{.*}} : vector<16xi32>
func.func @dot4(%u: memref<8xui8>, %w: memref<16x4xi8>, %acc: memref<16xi32>) {
  tir.for %l = 0 to 16 step 1 {name = "l", kind = "vectorized"} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c6 = arith.constant 6 : index
    %c7 = arith.constant 7 : index
    %u0 = memref.load %u[%c4] : memref<8xui8>
    %u1 = memref.load %u[%c5] : memref<8xui8>
    %u2 = memref.load %u[%c6] : memref<8xui8>
    %u3 = memref.load %u[%c7] : memref<8xui8>
    %b0 = builtin.unrealized_conversion_cast %u0 : ui8 to i8
    %b1 = builtin.unrealized_conversion_cast %u1 : ui8 to i8
    %b2 = builtin.unrealized_conversion_cast %u2 : ui8 to i8
    %b3 = builtin.unrealized_conversion_cast %u3 : ui8 to i8
    %x0 = arith.extui %b0 : i8 to i32
    %x1 = arith.extui %b1 : i8 to i32
    %x2 = arith.extui %b2 : i8 to i32
    %x3 = arith.extui %b3 : i8 to i32
    %w0 = memref.load %w[%l, %c0] : memref<16x4xi8>
    %w1 = memref.load %w[%l, %c1] : memref<16x4xi8>
    %w2 = memref.load %w[%l, %c2] : memref<16x4xi8>
    %w3 = memref.load %w[%l, %c3] : memref<16x4xi8>
    %y0 = arith.extsi %w0 : i8 to i32
    %y1 = arith.extsi %w1 : i8 to i32
    %y2 = arith.extsi %w2 : i8 to i32
    %y3 = arith.extsi %w3 : i8 to i32
    %p0 = arith.muli %x0, %y0 : i32
    %p1 = arith.muli %x1, %y1 : i32
    %p2 = arith.muli %x2, %y2 : i32
    %p3 = arith.muli %x3, %y3 : i32
    %s01 = arith.addi %p0, %p1 : i32
    %s23 = arith.addi %p2, %p3 : i32
    %s = arith.addi %s01, %s23 : i32
    %a = memref.load %acc[%l] : memref<16xi32>
    %r = arith.addi %a, %s : i32
    memref.store %r, %acc[%l] : memref<16xi32>
  }
  func.return
}
