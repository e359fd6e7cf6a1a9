"""convert-tir-to-llvm: tir loop nests over memrefs to xDSL's `llvm` dialect,
as a pipeline of passes that can each be run, printed and tested alone:

1. tir-lower-parallel: parallel loops outlined, run through libgomp;
2. tir-lower-unrolled: unrolled loops become copies of their body;
3. tir-lower-vectorized: vectorized loops become vector code (or serial
   loops, with a remark);
4. tir-cse: equal values (the index arithmetic and constants that unrolled
   copies repeat) are computed once;
5. convert-tir-to-cf: the remaining loops, and `scf.if`, become blocks and
   branches (through `scf.for`);
6. convert-to-llvm: functions, globals and every op left become `llvm`.

`xtc-opt -p convert-tir-to-llvm` runs them all; `xtc compile` runs them as
separate passes (`STAGE_NAMES`), so that `--timing` and `--print-pipeline`
show each.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from xtc.lowering.convert_tir_to_cf import ConvertTirToCf
from xtc.lowering.convert_to_llvm import ConvertToLLVM
from xtc.passes.tir_cse import TirCse
from xtc.lowering.tir_lower_parallel import TirLowerParallel
from xtc.lowering.tir_lower_unrolled import TirLowerUnrolled
from xtc.lowering.tir_lower_vectorized import TirLowerVectorized

STAGES: tuple[type[ModulePass], ...] = (
    TirLowerParallel,
    TirLowerUnrolled,
    TirLowerVectorized,
    TirCse,
    ConvertTirToCf,
    ConvertToLLVM,
)
STAGE_NAMES = tuple(stage.name for stage in STAGES)
"""The passes convert-tir-to-llvm runs, in order, as an `xtc-opt -p` list."""


@dataclass(frozen=True)
class ConvertTirToLLVM(ModulePass):
    """Lowers the tir level to xDSL's `llvm` dialect: the passes
    tir-lower-parallel, tir-lower-unrolled, tir-lower-vectorized, tir-cse,
    convert-tir-to-cf and convert-to-llvm, in order
    (each can be run alone: see their own descriptions).

    Expects: functions over static memrefs (`func.func`, `func.call`,
    `func.return`), `tir.for` loops of any kind, `scf.if`/`scf.for`, scalar
    `arith` and `math` ops (index is i64; unsigned integers reach arith
    through `unrealized_conversion_cast`), `arith.select` of memrefs too
    (tir-partition's shared nests: a select of pointers), `memref.load/
    store/alloc/alloca/dealloc/copy/view/global/get_global`, `tir.prefetch`
    and `tir.assert`.

    Produces: `llvm` ops only (and the vector ops of `llvm_ext`). Every
    function is an `llvm.func` whose memref arguments are `!llvm.ptr` (C ABI:
    `void main(float* in0, ..., float* out0)`); private functions get internal
    linkage. Parallel loops are functions `@<func>_parallel_<n>` that
    libgomp's `GOMP_parallel` runs on a team of `@xtc_num_threads` threads;
    unrolled loops are copies of their body; vectorized loops are vector
    code; other loops are blocks and branches. Integer division by zero gives
    0 instead of trapping; a `tir.assert` is a call of `@xtc_check`.
    """

    name = "convert-tir-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for stage in STAGES:
            stage().apply(ctx, op)
