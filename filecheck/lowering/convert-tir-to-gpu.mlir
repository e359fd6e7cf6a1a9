// RUN: xtc-opt %s --split-input-file --diagnostics-to-output -p convert-tir-to-gpu | filecheck %s

// Each function with bound loops becomes a kernel of @xtc_kernels: the
// bound loops are block and thread ids (a lower bound and a step other than
// 0 and 1 are applied to the id), the rest of the body is unchanged. The
// function keeps its name and signature and launches the kernel with the
// bound extents (1 along unbound axes), so @main is unchanged; a function
// without bound loops stays.
// CHECK-LABEL: builtin.module attributes {gpu.container_module} {
// CHECK-NEXT:    "gpu.module"() <{sym_name = "xtc_kernels"}> ({
// CHECK-NEXT:      "gpu.func"() <{function_type = (memref<4x3xf32>, memref<3x5xf32>, memref<4x5xf32>) -> (), kernel}> ({
// CHECK-NEXT:      ^{{.*}}(%[[A:.*]]: memref<4x3xf32>, %[[B:.*]]: memref<3x5xf32>, %[[C:.*]]: memref<4x5xf32>):
// CHECK-NEXT:        %[[I0:.*]] = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
// CHECK-NEXT:        %[[I1:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:        %[[ACC:.*]] = memref.alloca() : memref<f32>
// CHECK:             tir.for %[[R0:.*]] = 0 to 3 step 1 {name = "r0", kind = "serial"} {
// CHECK-NEXT:          memref.load %[[A]][%[[I0]], %[[R0]]] : memref<4x3xf32>
// CHECK-NEXT:          memref.load %[[B]][%[[R0]], %[[I1]]] : memref<3x5xf32>
// CHECK:             memref.store %{{.*}}, %[[C]][%[[I0]], %[[I1]]] : memref<4x5xf32>
// CHECK-NEXT:        "gpu.return"() : () -> ()
// CHECK-NEXT:      }) {sym_name = "matmul_0", gpu.known_block_size = array<i32: 5, 1, 1>, gpu.known_grid_size = array<i32: 1, 4, 1>, arg_attrs = [{}, {}, {graph.output = 0 : i64}]} : () -> ()
// CHECK-NEXT:      "gpu.func"() <{function_type = (memref<20xf32>) -> (), kernel}> ({
// CHECK-NEXT:      ^{{.*}}(%[[X:.*]]: memref<20xf32>):
// CHECK-NEXT:        %[[T:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim z>}> : () -> index
// CHECK-NEXT:        %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT:        %[[SCALED:.*]] = arith.muli %[[T]], %[[THREE]] : index
// CHECK-NEXT:        %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[I:.*]] = arith.addi %[[SCALED]], %[[TWO]] : index
// CHECK-NEXT:        memref.load %[[X]][%[[I]]] : memref<20xf32>
// CHECK:             "gpu.return"() : () -> ()
// CHECK-NEXT:      }) {sym_name = "strided", gpu.known_block_size = array<i32: 1, 1, 6>, gpu.known_grid_size = array<i32: 1, 1, 1>} : () -> ()
// CHECK-NEXT:    }) : () -> ()
// CHECK-NEXT:    func.func @main(
// CHECK-NEXT:      func.call @matmul_0(
// CHECK-LABEL:   func.func private @matmul_0(%in0: memref<4x3xf32>, %in1: memref<3x5xf32>, %out0: memref<4x5xf32> {graph.output = 0 : i64}) {
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[FIVE:.*]] = arith.constant 5 : index
// CHECK-NEXT:      "gpu.launch_func"(%[[ONE]], %[[FOUR]], %[[ONE]], %[[FIVE]], %[[ONE]], %[[ONE]], %in0, %in1, %out0) <{kernel = @xtc_kernels::@matmul_0, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3, 0>}>
// CHECK-NEXT:      func.return
// CHECK-LABEL:   func.func @strided(%x: memref<20xf32>) {
// CHECK:           "gpu.launch_func"
// CHECK-LABEL:   func.func @host_only(
// CHECK-NEXT:      tir.for
func.func @main(%x0: memref<4x3xf32>, %x1: memref<3x5xf32>, %out0: memref<4x5xf32> {graph.output = 0 : i64}) {
  func.call @matmul_0(%x0, %x1, %out0) : (memref<4x3xf32>, memref<3x5xf32>, memref<4x5xf32>) -> ()
  func.return
}
func.func private @matmul_0(%in0: memref<4x3xf32>, %in1: memref<3x5xf32>, %out0: memref<4x5xf32> {graph.output = 0 : i64}) {
  tir.for %i0 = 0 to 4 step 1 {name = "i0", kind = "blockIdx.y"} {
    tir.for %i1 = 0 to 5 step 1 {name = "i1", kind = "threadIdx.x"} {
      %0 = memref.alloca() : memref<f32>
      %1 = arith.constant 0.000000e+00 : f32
      memref.store %1, %0[] : memref<f32>
      tir.for %r0 = 0 to 3 step 1 {name = "r0", kind = "serial"} {
        %2 = memref.load %in0[%i0, %r0] : memref<4x3xf32>
        %3 = memref.load %in1[%r0, %i1] : memref<3x5xf32>
        %4 = arith.mulf %2, %3 : f32
        %5 = memref.load %0[] : memref<f32>
        %6 = arith.addf %5, %4 : f32
        memref.store %6, %0[] : memref<f32>
      }
      %7 = memref.load %0[] : memref<f32>
      memref.store %7, %out0[%i0, %i1] : memref<4x5xf32>
    }
  }
  func.return
}
func.func @strided(%x: memref<20xf32>) {
  tir.for %i = 2 to 20 step 3 {name = "i", kind = "threadIdx.z"} {
    %v = memref.load %x[%i] : memref<20xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %x[%i] : memref<20xf32>
  }
  func.return
}
func.func @host_only(%x: memref<4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %x[%i] : memref<4xf32>
  }
  func.return
}

// -----

// A bound loop below a serial one: the serial loop would have to run in
// every thread.
// CHECK: error: convert-tir-to-gpu: @inner: loop 'j' is bound to threadIdx.x but the function's body is not one bound loop (bind the outermost loop)
func.func @inner(%x: memref<4x4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    tir.for %j = 0 to 4 step 1 {name = "j", kind = "threadIdx.x"} {
      %v = memref.load %x[%i, %j] : memref<4x4xf32>
      memref.store %v, %x[%i, %j] : memref<4x4xf32>
    }
  }
  func.return
}

// -----

// CHECK: error: convert-tir-to-gpu: @deeper: loop 'k' is bound to threadIdx.y below a loop that is not: bound loops must be the outermost
func.func @deeper(%x: memref<4x4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "blockIdx.x"} {
    tir.for %t = 0 to 1 step 1 {name = "t", kind = "threadIdx.x"} {
      tir.for %j = 0 to 4 step 1 {name = "j", kind = "serial"} {
        tir.for %k = 0 to 1 step 1 {name = "k", kind = "threadIdx.y"} {
          %v = memref.load %x[%i, %j] : memref<4x4xf32>
          memref.store %v, %x[%i, %j] : memref<4x4xf32>
        }
      }
    }
  }
  func.return
}

// -----

// CHECK: error: convert-tir-to-gpu: @openmp: loop 'j' is parallel inside a kernel; its threads come from bound loops (tir-bind)
func.func @openmp(%x: memref<4x4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "blockIdx.x"} {
    tir.for %j = 0 to 4 step 1 {name = "j", kind = "parallel"} {
      %v = memref.load %x[%i, %j] : memref<4x4xf32>
      memref.store %v, %x[%i, %j] : memref<4x4xf32>
    }
  }
  func.return
}

// -----

// CHECK: error: convert-tir-to-gpu: @scratch: 'memref.alloc' is outside the bound loops; a kernel function holds its bound loop nest only
func.func @scratch(%x: memref<4xf32>) {
  %t = memref.alloc() : memref<4xf32>
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "blockIdx.x"} {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %t[%i] : memref<4xf32>
  }
  func.return
}
