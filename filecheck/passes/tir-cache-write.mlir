// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-cache-write{loop=i1_o}' | filecheck %s
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-cache-write{func=pool loop=i1}' | filecheck %s --check-prefix=POOL
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-cache-write{func=pool loop=i2}' | filecheck %s --check-prefix=DIRECT
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-cache-write{func=pool loop=r0}' | filecheck %s --check-prefix=NOACC
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-cache-write{func=relu loop=i0}' | filecheck %s --check-prefix=ELEMENTWISE
// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p 'tir-split{func=pool loop=i2 factor=3},tir-cache-write{func=pool loop=i1}' | filecheck %s --check-prefix=PEELED
// RUN: not xtc-opt %s -p 'tir-cache-write{func=matmul loop=i9}' 2>&1 | filecheck %s --check-prefix=NOLOOP
// RUN: not xtc-opt %s -p 'tir-cache-write{func=nowhere loop=i1_o}' 2>&1 | filecheck %s --check-prefix=NOFUNC

// A 4x3 tile of matmul with a relu epilogue: the accumulators of the tile
// in one buffer, the identity stored by an init nest, the reduction loop
// around the tile, the epilogue in a write-back nest; the copies of the
// tile loops keep their kinds. The index arithmetic is copied into each
// nest that uses it.
// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT:    tir.for %[[I0O:.*]] = 0 to 2 step 1 {name = "i0_o", kind = "serial"} {
// CHECK-NEXT:      tir.for %[[I1O:.*]] = 0 to 2 step 1 {name = "i1_o", kind = "serial"} {
// CHECK-NEXT:        %[[ACC:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x3xf32>
// CHECK-NEXT:        tir.for %[[I0N:.*]] = 0 to 4 step 1 {name = "i0_i_init", kind = "unrolled"} {
// CHECK-NEXT:          tir.for %[[I1N:.*]] = 0 to 3 step 1 {name = "i1_i_init", kind = "vectorized"} {
// CHECK-NEXT:            %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:            memref.store %[[ZERO]], %[[ACC]][%[[I0N]], %[[I1N]]] : memref<4x3xf32>
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:        tir.for %[[R0:.*]] = 0 to 4 step 1 {name = "r0", kind = "serial"} {
// CHECK-NEXT:          tir.for %[[I0I:.*]] = 0 to 4 step 1 {name = "i0_i", kind = "unrolled"} {
// CHECK-NEXT:            tir.for %[[I1I:.*]] = 0 to 3 step 1 {name = "i1_i", kind = "vectorized"} {
// CHECK-NEXT:              %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:              %[[M0:.*]] = arith.muli %[[I0O]], %[[C4]] : index
// CHECK-NEXT:              %[[I0:.*]] = arith.addi %[[M0]], %[[I0I]] : index
// CHECK-NEXT:              %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:              %[[M1:.*]] = arith.muli %[[I1O]], %[[C3]] : index
// CHECK-NEXT:              %[[I1:.*]] = arith.addi %[[M1]], %[[I1I]] : index
// CHECK-NEXT:              %[[X:.*]] = memref.load %a[%[[I0]], %[[R0]]] : memref<8x4xf32>
// CHECK-NEXT:              %[[Y:.*]] = memref.load %b[%[[R0]], %[[I1]]] : memref<4x6xf32>
// CHECK-NEXT:              %[[P:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT:              %[[S:.*]] = memref.load %[[ACC]][%[[I0I]], %[[I1I]]] : memref<4x3xf32>
// CHECK-NEXT:              %[[T:.*]] = arith.addf %[[S]], %[[P]] : f32
// CHECK-NEXT:              memref.store %[[T]], %[[ACC]][%[[I0I]], %[[I1I]]] : memref<4x3xf32>
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:        tir.for %[[I0W:.*]] = 0 to 4 step 1 {name = "i0_i_wb", kind = "unrolled"} {
// CHECK-NEXT:          tir.for %[[I1W:.*]] = 0 to 3 step 1 {name = "i1_i_wb", kind = "vectorized"} {
// CHECK-NEXT:            %[[C4W:.*]] = arith.constant 4 : index
// CHECK-NEXT:            %[[M0W:.*]] = arith.muli %[[I0O]], %[[C4W]] : index
// CHECK-NEXT:            %[[I0WB:.*]] = arith.addi %[[M0W]], %[[I0W]] : index
// CHECK-NEXT:            %[[C3W:.*]] = arith.constant 3 : index
// CHECK-NEXT:            %[[M1W:.*]] = arith.muli %[[I1O]], %[[C3W]] : index
// CHECK-NEXT:            %[[I1WB:.*]] = arith.addi %[[M1W]], %[[I1W]] : index
// CHECK-NEXT:            %[[V:.*]] = memref.load %[[ACC]][%[[I0W]], %[[I1W]]] : memref<4x3xf32>
// CHECK-NEXT:            %[[RELU0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:            %[[R:.*]] = arith.maximumf %[[V]], %[[RELU0]] : f32
// CHECK-NEXT:            memref.store %[[R]], %c[%[[I0WB]], %[[I1WB]]] : memref<8x6xf32>
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// NOLOOP: error: tir-cache-write: no loop named 'i9' in @matmul
// NOFUNC: error: tir-cache-write: no function @nowhere in the module
func.func @matmul(%a: memref<8x4xf32>, %b: memref<4x6xf32>, %c: memref<8x6xf32>) {
  tir.for %i0o = 0 to 2 step 1 {name = "i0_o", kind = "serial"} {
    tir.for %i1o = 0 to 2 step 1 {name = "i1_o", kind = "serial"} {
      tir.for %i0i = 0 to 4 step 1 {name = "i0_i", kind = "unrolled"} {
        %c4 = arith.constant 4 : index
        %m0 = arith.muli %i0o, %c4 : index
        %i0 = arith.addi %m0, %i0i : index
        tir.for %i1i = 0 to 3 step 1 {name = "i1_i", kind = "vectorized"} {
          %c3 = arith.constant 3 : index
          %m1 = arith.muli %i1o, %c3 : index
          %i1 = arith.addi %m1, %i1i : index
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
          %relu0 = arith.constant 0.000000e+00 : f32
          %r = arith.maximumf %v, %relu0 : f32
          memref.store %r, %c[%i0, %i1] : memref<8x6xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A max pool row (k = 1, two reduction loops, an index computation beside
// the reduction nest): acc has one dimension, the -inf identity and the
// scaling epilogue move with their nests.
// POOL-LABEL: func.func @pool(
// POOL-NEXT:    tir.for %[[I1:.*]] = 0 to 3 step 1 {name = "i1", kind = "serial"} {
// POOL-NEXT:      %[[ACC:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4xf32>
// POOL-NEXT:      tir.for %[[I2N:.*]] = 0 to 4 step 1 {name = "i2_init", kind = "serial"} {
// POOL-NEXT:        %[[LOW:.*]] = arith.constant 0xff800000 : f32
// POOL-NEXT:        memref.store %[[LOW]], %[[ACC]][%[[I2N]]] : memref<4xf32>
// POOL-NEXT:      }
// POOL-NEXT:      tir.for %[[R0:.*]] = 0 to 3 step 1 {name = "r0", kind = "serial"} {
// POOL-NEXT:        tir.for %[[R1:.*]] = 0 to 3 step 1 {name = "r1", kind = "serial"} {
// POOL-NEXT:          tir.for %[[I2:.*]] = 0 to 4 step 1 {name = "i2", kind = "serial"} {
// POOL-NEXT:            %[[C2:.*]] = arith.constant 2 : index
// POOL-NEXT:            %[[BASE:.*]] = arith.muli %[[I2]], %[[C2]] : index
// POOL-NEXT:            %[[ROW:.*]] = arith.addi %[[I1]], %[[R0]] : index
// POOL-NEXT:            %[[COL:.*]] = arith.addi %[[BASE]], %[[R1]] : index
// POOL-NEXT:            %[[X:.*]] = memref.load %x[%[[ROW]], %[[COL]]] : memref<5x9xf32>
// POOL-NEXT:            %[[S:.*]] = memref.load %[[ACC]][%[[I2]]] : memref<4xf32>
// POOL-NEXT:            %[[M:.*]] = arith.maximumf %[[S]], %[[X]] : f32
// POOL-NEXT:            memref.store %[[M]], %[[ACC]][%[[I2]]] : memref<4xf32>
// POOL-NEXT:          }
// POOL-NEXT:        }
// POOL-NEXT:      }
// POOL-NEXT:      tir.for %[[I2W:.*]] = 0 to 4 step 1 {name = "i2_wb", kind = "serial"} {
// POOL-NEXT:        %[[V:.*]] = memref.load %[[ACC]][%[[I2W]]] : memref<4xf32>
// POOL-NEXT:        %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// POOL-NEXT:        %[[Y:.*]] = arith.mulf %[[V]], %[[HALF]] : f32
// POOL-NEXT:        memref.store %[[Y]], %y[%[[I1]], %[[I2W]]] : memref<3x4xf32>
// POOL-NEXT:      }
// POOL-NEXT:    }
// POOL-NEXT:    func.return

// DIRECT: cache-write.mlir:[[# @LINE + 6]]:5: error: tir-cache-write: loop 'i2' in @pool holds its accumulator directly: nothing to cache
// Splitting i2 (4 by 3) leaves i1 holding two loops.
// PEELED: error: tir-cache-write: loop 'i1' in @pool is not perfectly nested: its body holds 2 loops ('i2_o', 'i2_tail')
// NOACC: error: tir-cache-write: loop 'r0' in @pool holds no reduction accumulator (rank-0 alloca)
func.func @pool(%x: memref<5x9xf32>, %y: memref<3x4xf32>) {
  tir.for %i1 = 0 to 3 step 1 {name = "i1", kind = "serial"} {
    tir.for %i2 = 0 to 4 step 1 {name = "i2", kind = "serial"} {
      %c2 = arith.constant 2 : index
      %base = arith.muli %i2, %c2 : index
      %acc = memref.alloca() : memref<f32>
      %low = arith.constant 0xFF800000 : f32
      memref.store %low, %acc[] : memref<f32>
      tir.for %r0 = 0 to 3 step 1 {name = "r0", kind = "serial"} {
        %row = arith.addi %i1, %r0 : index
        tir.for %r1 = 0 to 3 step 1 {name = "r1", kind = "serial"} {
          %col = arith.addi %base, %r1 : index
          %v = memref.load %x[%row, %col] : memref<5x9xf32>
          %s = memref.load %acc[] : memref<f32>
          %m = arith.maximumf %s, %v : f32
          memref.store %m, %acc[] : memref<f32>
        }
      }
      %w = memref.load %acc[] : memref<f32>
      %half = arith.constant 5.000000e-01 : f32
      %out = arith.mulf %w, %half : f32
      memref.store %out, %y[%i1, %i2] : memref<3x4xf32>
    }
  }
  func.return
}

// -----

// ELEMENTWISE: error: tir-cache-write: loop 'i0' in @relu holds no reduction accumulator (rank-0 alloca)
func.func @relu(%x: memref<3x8xf32>, %y: memref<3x8xf32>) {
  tir.for %i0 = 0 to 3 step 1 {name = "i0", kind = "serial"} {
    tir.for %i1 = 0 to 8 step 1 {name = "i1", kind = "serial"} {
      %v = memref.load %x[%i0, %i1] : memref<3x8xf32>
      %zero = arith.constant 0.000000e+00 : f32
      %r = arith.maximumf %v, %zero : f32
      memref.store %r, %y[%i0, %i1] : memref<3x8xf32>
    }
  }
  func.return
}

// -----

func.func @writes_elsewhere(%a: memref<4xf32>, %c: memref<4xf32>, %log: memref<4xf32>) {
  tir.for %io = 0 to 1 step 1 {name = "i1_o", kind = "serial"} {
    tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[] : memref<f32>
      // CHECK: error: tir-cache-write: loop 'r0' in @writes_elsewhere stores into another buffer than its accumulator
      tir.for %r = 0 to 4 step 1 {name = "r0", kind = "serial"} {
        %x = memref.load %a[%r] : memref<4xf32>
        memref.store %x, %log[%r] : memref<4xf32>
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %x : f32
        memref.store %t, %acc[] : memref<f32>
      }
      %v = memref.load %acc[] : memref<f32>
      memref.store %v, %c[%i] : memref<4xf32>
    }
  }
  func.return
}

// -----

// Each output element feeds the next one's reduction: moving every
// reduction of the tile before every store would read stale values.
func.func @reads_output(%c: memref<5xf32>) {
  tir.for %io = 0 to 1 step 1 {name = "i1_o", kind = "serial"} {
    // CHECK: error: tir-cache-write: loop 'i' in @reads_output stores into a buffer that its reduction loops read
    tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[] : memref<f32>
      tir.for %r = 0 to 1 step 1 {name = "r0", kind = "serial"} {
        %x = memref.load %c[%i] : memref<5xf32>
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %x : f32
        memref.store %t, %acc[] : memref<f32>
      }
      %v = memref.load %acc[] : memref<f32>
      %one = arith.constant 1 : index
      %next = arith.addi %i, %one : index
      memref.store %v, %c[%next] : memref<5xf32>
    }
  }
  func.return
}

// -----

func.func @copied_accumulator(%a: memref<4xf32>, %c: memref<4xf32>, %keep: memref<f32>) {
  tir.for %io = 0 to 1 step 1 {name = "i1_o", kind = "serial"} {
    // CHECK: error: tir-cache-write: loop 'i' in @copied_accumulator passes its accumulator to 'memref.copy'; only loads and stores can use it
    tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[] : memref<f32>
      tir.for %r = 0 to 4 step 1 {name = "r0", kind = "serial"} {
        %x = memref.load %a[%r] : memref<4xf32>
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %x : f32
        memref.store %t, %acc[] : memref<f32>
      }
      %v = memref.load %acc[] : memref<f32>
      memref.store %v, %c[%i] : memref<4xf32>
      "memref.copy"(%acc, %keep) : (memref<f32>, memref<f32>) -> ()
    }
  }
  func.return
}

// -----

func.func @strided_tile(%a: memref<8xf32>, %c: memref<8xf32>) {
  tir.for %io = 0 to 1 step 1 {name = "i1_o", kind = "serial"} {
    // CHECK: error: tir-cache-write: loop 'i' in @strided_tile runs from 0 with step 2; tir-cache-write needs a loop from 0 with step 1
    tir.for %i = 0 to 8 step 2 {name = "i", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[] : memref<f32>
      tir.for %r = 0 to 4 step 1 {name = "r0", kind = "serial"} {
        %x = memref.load %a[%r] : memref<8xf32>
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %x : f32
        memref.store %t, %acc[] : memref<f32>
      }
      %v = memref.load %acc[] : memref<f32>
      memref.store %v, %c[%i] : memref<8xf32>
    }
  }
  func.return
}

// -----

func.func @two_reductions(%a: memref<4xf32>, %c: memref<4xf32>) {
  tir.for %io = 0 to 1 step 1 {name = "i1_o", kind = "serial"} {
    // CHECK: error: tir-cache-write: loop 'i' in @two_reductions holds 2 loops between setting and reading its accumulator; tir-cache-write needs one reduction loop nest there
    tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[] : memref<f32>
      tir.for %r = 0 to 4 step 1 {name = "r0", kind = "serial"} {
        %x = memref.load %a[%r] : memref<4xf32>
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %x : f32
        memref.store %t, %acc[] : memref<f32>
      }
      tir.for %q = 0 to 4 step 1 {name = "r1", kind = "serial"} {
      }
      %v = memref.load %acc[] : memref<f32>
      memref.store %v, %c[%i] : memref<4xf32>
    }
  }
  func.return
}

// -----

func.func @name_taken(%a: memref<4xf32>, %c: memref<4xf32>) {
  // CHECK: error: tir-cache-write: the new loop name 'i_init' is already used in @name_taken
  tir.for %io = 0 to 1 step 1 {name = "i1_o", kind = "serial"} {
    tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[] : memref<f32>
      tir.for %r = 0 to 4 step 1 {name = "r0", kind = "serial"} {
        %x = memref.load %a[%r] : memref<4xf32>
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %x : f32
        memref.store %t, %acc[] : memref<f32>
      }
      %v = memref.load %acc[] : memref<f32>
      memref.store %v, %c[%i] : memref<4xf32>
    }
  }
  tir.for %j = 0 to 1 step 1 {name = "i_init", kind = "serial"} {
  }
  func.return
}
