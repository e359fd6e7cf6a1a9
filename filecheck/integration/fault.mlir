// RUN: python -c "import numpy as np; np.savez('%t.npz', data=np.arange(5, dtype=np.float32), idx=np.array([4, 7, 9, 3]))"
// RUN: not xtc-run %s --inputs %t.npz 2>&1 | filecheck %s
// RUN: not xtc-run %s --inputs %t.npz --native 2>&1 | filecheck %s
// RUN: not xtc-run %s 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: xtc-run %s --fill zeros | filecheck %s --check-prefix=ZEROS

// A failed tir.assert is a run-time fault: one line, the same message from
// the interpreter and from native code, exit 1.
// CHECK: xtc-run: error: index 7 is out of range
// CHECK-NOT: Traceback

// MISSING: xtc-run: error: @main takes data: memref<5xf32>, idx: memref<4xi64>; missing data, idx: give them with --inputs FILE.npz (keys are these names) or --fill random|zeros|ones

// ZEROS:      result 0: memref<4xf32>
// ZEROS-NEXT: [0, 0, 0, 0]
func.func @main(%data: memref<5xf32> {graph.name = "data"}, %idx: memref<4xi64> {graph.name = "idx"},
                %out: memref<4xf32> {graph.output = 0 : i64}) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    %v = memref.load %idx[%i] : memref<4xi64>
    %hi = arith.constant 5 : i64
    %ok = arith.cmpi ult, %v, %hi : i64
    tir.assert %ok, "index {} is out of range", %v : i64
    %at = arith.index_cast %v : i64 to index
    %x = memref.load %data[%at] : memref<5xf32>
    memref.store %x, %out[%i] : memref<4xf32>
  }
  func.return
}
