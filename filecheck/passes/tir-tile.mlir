// RUN: xtc-opt %s -p 'tir-tile{func=matmul loops=i0,i1 factors=4,3}' | filecheck %s
// Quoted names read the same as bare ones.
// RUN: xtc-opt %s -p 'tir-tile{func="matmul" loops="i0","i1" factors=4,3}' | filecheck %s --check-prefix=QUOTED
// RUN: xtc-opt %s -p 'tir-tile{func=matmul loops=i0,i1 factors=3,2}' | filecheck %s --check-prefix=PEELED
// RUN: xtc-opt %s -p 'tir-tile{func=add3 loops=i0,i1,i2 factors=2,3,4}' | filecheck %s --check-prefix=THREE
// RUN: xtc-opt %s -p 'tir-tile{func=add3 loops=i1,i2 factors=6,1}' | filecheck %s --check-prefix=INNER
// tir-tile is tir-split on each loop, innermost first, then tir-reorder.
// RUN: xtc-opt %s -p 'tir-tile{func=matmul loops=i0,i1 factors=3,2}' > %t.tile
// RUN: xtc-opt %s -p 'tir-split{func=matmul loop=i1 factor=2},tir-split{func=matmul loop=i0 factor=3},tir-reorder{func=matmul order=i0_o,i1_o,i0_i,i1_i}' > %t.hand
// RUN: diff %t.tile %t.hand
// Refusals exit non-zero with a diagnostic naming tir-tile, the function and the loop.
// RUN: not xtc-opt %s -p 'tir-tile{func=matmul loops=i1,i0 factors=2,2}' 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: not xtc-opt %s -p 'tir-tile{func=add3 loops=i0,i2,i1 factors=2,2,2}' 2>&1 | filecheck %s --check-prefix=ORDER3
// RUN: not xtc-opt %s -p 'tir-tile{func=matmul loops=i0,r0 factors=2,2}' 2>&1 | filecheck %s --check-prefix=BETWEEN
// RUN: not xtc-opt %s -p 'tir-tile{func=matmul loops=i1,r0 factors=2,2}' 2>&1 | filecheck %s --check-prefix=ACCUMULATOR
// RUN: not xtc-opt %s -p 'tir-tile{func=matmul loops=i0,i1 factors=4,4}' 2>&1 | filecheck %s --check-prefix=NODIVIDE
// RUN: not xtc-opt %s -p 'tir-tile{func=matmul loops=i0,i1 factors=9,2}' 2>&1 | filecheck %s --check-prefix=RANGE
// RUN: not xtc-opt %s -p 'tir-tile{func=matmul loops=i0,i1 factors=2,0}' 2>&1 | filecheck %s --check-prefix=ZEROFACTOR
// RUN: not xtc-opt %s -p 'tir-tile{func=matmul loops=i0,i1 factors=2,-3}' 2>&1 | filecheck %s --check-prefix=NEGATIVE
// RUN: not xtc-opt %s -p 'tir-tile{func=matmul loops=i0,i1 factors=2}' 2>&1 | filecheck %s --check-prefix=COUNT
// RUN: not xtc-opt %s -p 'tir-tile{func=matmul loops=i0 factors=2}' 2>&1 | filecheck %s --check-prefix=ONE
// RUN: not xtc-opt %s -p 'tir-tile{func=matmul loops=i0,i9 factors=2,2}' 2>&1 | filecheck %s --check-prefix=NOLOOP
// RUN: not xtc-opt %s -p 'tir-tile{loops=i9,i0 factors=2,2}' 2>&1 | filecheck %s --check-prefix=NOWHERE
// RUN: not xtc-opt %s -p 'tir-tile{func=nowhere loops=i0,i1 factors=2,2}' 2>&1 | filecheck %s --check-prefix=NOFUNC
// RUN: not xtc-opt %s -p 'tir-tile{func=matmul loops=i0,i0 factors=2,2}' 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not xtc-opt %s -p 'tir-tile{func=parallel loops=i,j factors=2,2}' 2>&1 | filecheck %s --check-prefix=KIND
// RUN: not xtc-opt %s -p 'tir-tile{func=taken loops=i,j factors=2,2}' 2>&1 | filecheck %s --check-prefix=TAKEN
// RUN: not xtc-opt %s -p 'tir-tile{func=impure loops=i,j factors=2,2}' 2>&1 | filecheck %s --check-prefix=IMPURE
// RUN: not xtc-opt %s -p 'tir-tile{func=siblings loops=a,b factors=2,2}' 2>&1 | filecheck %s --check-prefix=SIBLINGS

// 8 by 4 and 6 by 3: i0_o (2) { i1_o (2) { i0_i (4) { i1_i (3) { body } } } },
// the index arithmetic of both splits at the start of the innermost body.
// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT:    tir.for %[[I0O:.*]] = 0 to 2 step 1 {name = "i0_o", kind = "serial"} {
// CHECK-NEXT:      tir.for %[[I1O:.*]] = 0 to 2 step 1 {name = "i1_o", kind = "serial"} {
// CHECK-NEXT:        tir.for %[[I0I:.*]] = 0 to 4 step 1 {name = "i0_i", kind = "serial"} {
// CHECK-NEXT:          tir.for %[[I1I:.*]] = 0 to 3 step 1 {name = "i1_i", kind = "serial"} {
// CHECK-NEXT:            %[[F0:.*]] = arith.constant 4 : index
// CHECK-NEXT:            %[[M0:.*]] = arith.muli %[[I0O]], %[[F0]] : index
// CHECK-NEXT:            %[[I0:.*]] = arith.addi %[[M0]], %[[I0I]] : index
// CHECK-NEXT:            %[[F1:.*]] = arith.constant 3 : index
// CHECK-NEXT:            %[[M1:.*]] = arith.muli %[[I1O]], %[[F1]] : index
// CHECK-NEXT:            %[[I1:.*]] = arith.addi %[[M1]], %[[I1I]] : index
// CHECK-NEXT:            %[[ACC:.*]] = memref.alloca() : memref<f32>
// CHECK-NEXT:            %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:            memref.store %[[ZERO]], %[[ACC]][] : memref<f32>
// CHECK-NEXT:            tir.for %[[R0:.*]] = 0 to 4 step 1 {name = "r0", kind = "serial"} {
// CHECK-NEXT:              memref.load %a[%[[I0]], %[[R0]]] : memref<8x4xf32>
// CHECK-NEXT:              memref.load %b[%[[R0]], %[[I1]]] : memref<4x6xf32>
// CHECK:                   memref.store %{{.*}}, %[[ACC]][] : memref<f32>
// CHECK-NEXT:            }
// CHECK-NEXT:            %[[V:.*]] = memref.load %[[ACC]][] : memref<f32>
// CHECK-NEXT:            memref.store %[[V]], %c[%[[I0]], %[[I1]]] : memref<8x6xf32>
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// Only the function named changes.
// CHECK-LABEL: func.func @add3(
// CHECK-NEXT:    tir.for %{{.*}} = 0 to 4 step 1 {name = "i0", kind = "serial"} {

// QUOTED-LABEL: func.func @matmul(
// QUOTED-NEXT:    {name = "i0_o", kind = "serial"}
// QUOTED-NEXT:      {name = "i1_o", kind = "serial"}
// QUOTED-NEXT:        {name = "i0_i", kind = "serial"}
// QUOTED-NEXT:          {name = "i1_i", kind = "serial"}

// 8 by 3 leaves 2: the tail i0_tail follows the tile, holding i1 split by 2
// (its loops renamed as tir-split names them).
// PEELED-LABEL: func.func @matmul(
// PEELED-NEXT:    tir.for %{{.*}} = 0 to 2 step 1 {name = "i0_o", kind = "serial"} {
// PEELED-NEXT:      tir.for %{{.*}} = 0 to 3 step 1 {name = "i1_o", kind = "serial"} {
// PEELED-NEXT:        tir.for %{{.*}} = 0 to 3 step 1 {name = "i0_i", kind = "serial"} {
// PEELED-NEXT:          tir.for %{{.*}} = 0 to 2 step 1 {name = "i1_i", kind = "serial"} {
// PEELED:             tir.for %[[T:.*]] = 0 to 2 step 1 {name = "i0_tail", kind = "serial"} {
// PEELED-NEXT:          %[[BASE:.*]] = arith.constant 6 : index
// PEELED-NEXT:          %[[I0T:.*]] = arith.addi %[[BASE]], %[[T]] : index
// PEELED-NEXT:          tir.for %[[OT:.*]] = 0 to 3 step 1 {name = "i1_o_i0_tail", kind = "serial"} {
// PEELED-NEXT:            tir.for %[[IT:.*]] = 0 to 2 step 1 {name = "i1_i_i0_tail", kind = "serial"} {
// PEELED:                   tir.for %{{.*}} = 0 to 4 step 1 {name = "r0_i0_tail", kind = "serial"} {
// PEELED:                 memref.store %{{.*}}, %c[%[[I0T]], %{{.*}}] : memref<8x6xf32>
// PEELED-LABEL: func.func @add3(

// Three loops: all outer parts, then all inner parts.
// THREE-LABEL: func.func @add3(
// THREE-NEXT:    tir.for %[[O0:.*]] = 0 to 2 step 1 {name = "i0_o", kind = "serial"} {
// THREE-NEXT:      tir.for %[[O1:.*]] = 0 to 2 step 1 {name = "i1_o", kind = "serial"} {
// THREE-NEXT:        tir.for %[[O2:.*]] = 0 to 1 step 1 {name = "i2_o", kind = "serial"} {
// THREE-NEXT:          tir.for %[[N0:.*]] = 0 to 2 step 1 {name = "i0_i", kind = "serial"} {
// THREE-NEXT:            tir.for %[[N1:.*]] = 0 to 3 step 1 {name = "i1_i", kind = "serial"} {
// THREE-NEXT:              tir.for %[[N2:.*]] = 0 to 4 step 1 {name = "i2_i", kind = "serial"} {
// THREE-NEXT:                arith.constant 2 : index
// THREE-NEXT:                arith.muli %[[O0]]
// THREE-NEXT:                %[[I0:.*]] = arith.addi %{{.*}}, %[[N0]] : index
// THREE-NEXT:                arith.constant 3 : index
// THREE-NEXT:                arith.muli %[[O1]]
// THREE-NEXT:                %[[I1:.*]] = arith.addi %{{.*}}, %[[N1]] : index
// THREE-NEXT:                arith.constant 4 : index
// THREE-NEXT:                arith.muli %[[O2]]
// THREE-NEXT:                %[[I2:.*]] = arith.addi %{{.*}}, %[[N2]] : index
// THREE-NEXT:                memref.load %x[%[[I0]], %[[I1]], %[[I2]]] : memref<4x6x4xf32>
// THREE-NEXT:                memref.load %y[%[[I0]], %[[I1]], %[[I2]]] : memref<4x6x4xf32>
// THREE-NEXT:                arith.addf
// THREE-NEXT:                memref.store %{{.*}}, %z[%[[I0]], %[[I1]], %[[I2]]] : memref<4x6x4xf32>
// THREE-NEXT:              }

// An inner pair of a nest, factors equal to the extent and 1.
// INNER-LABEL: func.func @add3(
// INNER-NEXT:    tir.for %{{.*}} = 0 to 4 step 1 {name = "i0", kind = "serial"} {
// INNER-NEXT:      tir.for %{{.*}} = 0 to 1 step 1 {name = "i1_o", kind = "serial"} {
// INNER-NEXT:        tir.for %{{.*}} = 0 to 4 step 1 {name = "i2_o", kind = "serial"} {
// INNER-NEXT:          tir.for %{{.*}} = 0 to 6 step 1 {name = "i1_i", kind = "serial"} {
// INNER-NEXT:            tir.for %{{.*}} = 0 to 1 step 1 {name = "i2_i", kind = "serial"} {

// ORDER: tile.mlir:[[# @LINE + 20]]:3: error: tir-tile: loops 'i1', 'i0' in @matmul are not named outermost first: they nest as 'i0', 'i1'
// ORDER3: error: tir-tile: loops 'i0', 'i2', 'i1' in @add3 are not named outermost first: they nest as 'i0', 'i1', 'i2'
// BETWEEN: tile.mlir:[[# @LINE + 19]]:5: error: tir-tile: loop 'i1' in @matmul lies between 'i0' and the other loops named, which must be directly nested
// ACCUMULATOR: tile.mlir:[[# @LINE + 18]]:5: error: tir-tile: loop 'i1' in @matmul holds the accumulator of reduction loop 'r0': moving 'r0' out of it would break the reduction (tir-cache-write moves reduction loops out)
// NODIVIDE: tile.mlir:[[# @LINE + 17]]:5: error: tir-tile: factor 4 does not divide 6, the extent of loop 'i1' in @matmul; only the outermost loop's factor may leave a remainder (its tail is peeled around the whole tile)
// RANGE: tile.mlir:[[# @LINE + 15]]:3: error: tir-tile: factor 9 is not in [1, 8], the extent of loop 'i0' in @matmul
// ZEROFACTOR: xtc-opt: error: invalid pass pipeline '{{.*}}': tir-tile: factor 0 for loop 'i1' is not a positive integer
// NEGATIVE: xtc-opt: error: invalid pass pipeline '{{.*}}': tir-tile: factor -3 for loop 'i1' is not a positive integer
// COUNT: xtc-opt: error: invalid pass pipeline '{{.*}}': tir-tile: 2 loops named but 1 factors given; give one factor per loop
// ONE: xtc-opt: error: invalid pass pipeline '{{.*}}': tir-tile: tile needs two or more loops, loops names 1
// NOLOOP: error: tir-tile: no loop named 'i9' in @matmul
// NOWHERE: error: tir-tile: no function has a loop named 'i9'
// NOFUNC: error: tir-tile: no function @nowhere in the module
// TWICE: error: tir-tile: loop 'i0' is named twice
// KIND: error: tir-tile: loop 'i' in @parallel is parallel; split a loop before setting its kind
// TAKEN: error: tir-tile: the new loop name 'i_o' is already used in @taken
// IMPURE: error: tir-tile: loop 'i' in @impure is not perfectly nested: its body holds 'memref.store' beside loop 'j'
// SIBLINGS: error: tir-tile: loops 'a', 'b' in @siblings are not nested in one another

func.func @matmul(%a: memref<8x4xf32>, %b: memref<4x6xf32>, %c: memref<8x6xf32>) {
  tir.for %i0 = 0 to 8 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 6 step 1 {name = "i1", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[] : memref<f32>
      tir.for %r0 = 0 to 4 step 1 {name = "r0", kind = "serial"} {
        %x = memref.load %a[%i0, %r0] : memref<8x4xf32>
        %y = memref.load %b[%r0, %i1] : memref<4x6xf32>
        %p = arith.mulf %x, %y : f32
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %p : f32
        memref.store %t, %acc[] : memref<f32>
      }
      %v = memref.load %acc[] : memref<f32>
      memref.store %v, %c[%i0, %i1] : memref<8x6xf32>
    }
  }
  func.return
}

func.func @add3(%x: memref<4x6x4xf32>, %y: memref<4x6x4xf32>, %z: memref<4x6x4xf32>) {
  tir.for %i0 = 0 to 4 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 6 step 1 {name = "i1", kind = "serial"} {
      tir.for %i2 = 0 to 4 step 1 {name = "i2", kind = "serial"} {
        %u = memref.load %x[%i0, %i1, %i2] : memref<4x6x4xf32>
        %v = memref.load %y[%i0, %i1, %i2] : memref<4x6x4xf32>
        %w = arith.addf %u, %v : f32
        memref.store %w, %z[%i0, %i1, %i2] : memref<4x6x4xf32>
      }
    }
  }
  func.return
}

func.func @parallel(%x: memref<4x4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "parallel"} {
    tir.for %j = 0 to 4 step 1 {name = "j", kind = "serial"} {
      %v = memref.load %x[%i, %j] : memref<4x4xf32>
      memref.store %v, %x[%j, %i] : memref<4x4xf32>
    }
  }
  func.return
}

func.func @taken(%x: memref<4x4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    tir.for %j = 0 to 4 step 1 {name = "j", kind = "serial"} {
    }
  }
  tir.for %k = 0 to 4 step 1 {name = "i_o", kind = "serial"} {
  }
  func.return
}

func.func @impure(%x: memref<4x4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    %zero = arith.constant 0.000000e+00 : f32
    %c0 = arith.constant 0 : index
    memref.store %zero, %x[%i, %c0] : memref<4x4xf32>
    tir.for %j = 0 to 4 step 1 {name = "j", kind = "serial"} {
      %v = memref.load %x[%i, %j] : memref<4x4xf32>
      memref.store %v, %x[%j, %i] : memref<4x4xf32>
    }
  }
  func.return
}

func.func @siblings(%x: memref<4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "a", kind = "serial"} {
  }
  tir.for %j = 0 to 4 step 1 {name = "b", kind = "serial"} {
  }
  func.return
}
