builtin.module {
  func.func @kernel(%0: memref<1x256x14x14xf32>, %1: memref<8x256x3x3x32xf32>, %2: memref<256xf32>, %3: memref<1x256x14x14xf32> {graph.output = 0 : i64}) {
    %4 = memref.alloc() {alignment = 64 : i64} : memref<1x256x16x16xf32>
    tir.for %5 = 0 to 1 step 1 {name = "i0", kind = "serial"} {
      tir.for %6 = 0 to 256 step 1 {name = "i1", kind = "serial"} {
        tir.for %7 = 0 to 16 step 1 {name = "i2", kind = "serial"} {
          tir.for %8 = 0 to 16 step 1 {name = "i3", kind = "serial"} {
            %9 = arith.constant -1 : index
            %10 = arith.addi %7, %9 : index
            %11 = arith.constant 0 : index
            %12 = arith.cmpi sge, %10, %11 : index
            %13 = arith.constant 14 : index
            %14 = arith.cmpi slt, %10, %13 : index
            %15 = arith.andi %12, %14 : i1
            %16 = arith.constant 0 : index
            %17 = arith.maxsi %10, %16 : index
            %18 = arith.constant 13 : index
            %19 = arith.minsi %17, %18 : index
            %20 = arith.constant -1 : index
            %21 = arith.addi %8, %20 : index
            %22 = arith.constant 0 : index
            %23 = arith.cmpi sge, %21, %22 : index
            %24 = arith.constant 14 : index
            %25 = arith.cmpi slt, %21, %24 : index
            %26 = arith.andi %23, %25 : i1
            %27 = arith.constant 0 : index
            %28 = arith.maxsi %21, %27 : index
            %29 = arith.constant 13 : index
            %30 = arith.minsi %28, %29 : index
            %31 = arith.andi %15, %26 : i1
            %32 = memref.load %0[%5, %6, %19, %30] : memref<1x256x14x14xf32>
            %33 = arith.constant 0.000000e+00 : f32
            %34 = arith.select %31, %32, %33 : f32
            memref.store %34, %4[%5, %6, %7, %8] : memref<1x256x16x16xf32>
          }
        }
      }
    }
    tir.for %35 = 0 to 1 step 1 {name = "i0_1", kind = "serial"} {
      tir.for %36 = 0 to 256 step 1 {name = "i1_1", kind = "serial"} {
        tir.for %37 = 0 to 14 step 1 {name = "i2_1", kind = "serial"} {
          tir.for %38 = 0 to 14 step 1 {name = "i3_1", kind = "serial"} {
            %39 = arith.constant 0 : index
            %40 = memref.alloca() : memref<f32>
            %41 = arith.constant 0.000000e+00 : f32
            memref.store %41, %40[] : memref<f32>
            tir.for %42 = 0 to 256 step 1 {name = "r0", kind = "serial"} {
              tir.for %43 = 0 to 3 step 1 {name = "r1", kind = "serial"} {
                tir.for %44 = 0 to 3 step 1 {name = "r2", kind = "serial"} {
                  %45 = arith.addi %37, %43 : index
                  %46 = arith.addi %38, %44 : index
                  %47 = memref.load %4[%39, %42, %45, %46] : memref<1x256x16x16xf32>
                  %48 = arith.constant 32 : index
                  %49 = arith.floordivsi %36, %48 : index
                  %50 = arith.constant 32 : index
                  %51 = arith.remsi %36, %50 : index
                  %52 = memref.load %1[%49, %42, %43, %44, %51] : memref<8x256x3x3x32xf32>
                  %53 = arith.mulf %47, %52 : f32
                  %54 = memref.load %40[] : memref<f32>
                  %55 = arith.addf %54, %53 : f32
                  memref.store %55, %40[] : memref<f32>
                }
              }
            }
            %56 = memref.load %40[] : memref<f32>
            %57 = memref.load %2[%36] : memref<256xf32>
            %58 = arith.addf %56, %57 : f32
            %59 = arith.constant 0.000000e+00 : f32
            %60 = arith.maximumf %58, %59 : f32
            memref.store %60, %3[%35, %36, %37, %38] : memref<1x256x14x14xf32>
          }
        }
      }
    }
    memref.dealloc %4 : memref<1x256x16x16xf32>
    func.return
  }
}
