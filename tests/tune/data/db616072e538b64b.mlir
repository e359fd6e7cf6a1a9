builtin.module {
  func.func @kernel(%0: memref<1x256x14x14xf32>, %1: memref<32x256x1x1x32xf32>, %2: memref<1024xf32>, %3: memref<1x1024x14x14xf32>, %4: memref<1x1024x14x14xf32> {graph.output = 0 : i64}) {
    tir.for %5 = 0 to 1 step 1 {name = "i0", kind = "serial"} {
      tir.for %6 = 0 to 1024 step 1 {name = "i1", kind = "serial"} {
        tir.for %7 = 0 to 14 step 1 {name = "i2", kind = "serial"} {
          tir.for %8 = 0 to 14 step 1 {name = "i3", kind = "serial"} {
            %9 = arith.constant 0 : index
            %10 = arith.constant 0 : index
            %11 = memref.alloca() : memref<f32>
            %12 = arith.constant 0.000000e+00 : f32
            memref.store %12, %11[] : memref<f32>
            tir.for %13 = 0 to 256 step 1 {name = "r0", kind = "serial"} {
              tir.for %14 = 0 to 1 step 1 {name = "r1", kind = "serial"} {
                tir.for %15 = 0 to 1 step 1 {name = "r2", kind = "serial"} {
                  %16 = arith.addi %7, %14 : index
                  %17 = arith.addi %8, %15 : index
                  %18 = memref.load %0[%10, %13, %16, %17] : memref<1x256x14x14xf32>
                  %19 = arith.constant 32 : index
                  %20 = arith.floordivsi %6, %19 : index
                  %21 = arith.constant 32 : index
                  %22 = arith.remsi %6, %21 : index
                  %23 = memref.load %1[%20, %13, %14, %15, %22] : memref<32x256x1x1x32xf32>
                  %24 = arith.mulf %18, %23 : f32
                  %25 = memref.load %11[] : memref<f32>
                  %26 = arith.addf %25, %24 : f32
                  memref.store %26, %11[] : memref<f32>
                }
              }
            }
            %27 = memref.load %11[] : memref<f32>
            %28 = memref.load %2[%6] : memref<1024xf32>
            %29 = arith.addf %27, %28 : f32
            %30 = arith.constant 0 : index
            %31 = memref.load %3[%30, %6, %7, %8] : memref<1x1024x14x14xf32>
            %32 = arith.addf %29, %31 : f32
            %33 = arith.constant 0.000000e+00 : f32
            %34 = arith.maximumf %32, %33 : f32
            memref.store %34, %4[%5, %6, %7, %8] : memref<1x1024x14x14xf32>
          }
        }
      }
    }
    func.return
  }
}
