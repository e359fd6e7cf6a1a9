"""Every xtc dialect and pass, registered in one place. The factories import
lazily so that tools start fast. Exported through the `xdsl.universe` entry
point, so plain `xdsl-opt` loads xtc too.

xtc's own tools take their dialects, passes and targets from `multiverse()`:
xDSL's and xtc's directly, then other packages' `xdsl.universe` plugins. A
plugin that fails to load, is not a Universe, or defines a name already
taken is skipped with one warning naming it (xDSL's own
`Universe.get_multiverse()` raises instead, so one broken package anywhere
in the environment would break every xtc command).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Collection, Iterable
from importlib.metadata import EntryPoint, entry_points

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.target import Target

from xtc.plugin_warnings import PluginWarning


def get_graph_dialect() -> Dialect:
    from xtc.dialects.graph import Graph

    return Graph


def get_te_dialect() -> Dialect:
    from xtc.dialects.te import TE

    return TE


def get_tir_dialect() -> Dialect:
    from xtc.dialects.tir import TIR

    return TIR


def get_llvm_ext_dialect() -> Dialect:
    from xtc.dialects.llvm_ext import LLVMExt

    return LLVMExt


def get_graph_fold_constants() -> type[ModulePass]:
    from xtc.passes.graph_fold_constants import GraphFoldConstants

    return GraphFoldConstants


def get_graph_fuse_ops() -> type[ModulePass]:
    from xtc.passes.graph_fuse_ops import GraphFuseOps

    return GraphFuseOps


def get_te_inline() -> type[ModulePass]:
    from xtc.passes.te_inline import TeInline

    return TeInline


def get_graph_pad_conv_channels() -> type[ModulePass]:
    from xtc.passes.graph_pad_conv_channels import GraphPadConvChannels

    return GraphPadConvChannels


def get_graph_winograd() -> type[ModulePass]:
    from xtc.passes.graph_winograd import GraphWinograd

    return GraphWinograd


def get_graph_sink_slice() -> type[ModulePass]:
    from xtc.passes.graph_sink_slice import GraphSinkSlice

    return GraphSinkSlice


def get_graph_alter_layout() -> type[ModulePass]:
    from xtc.passes.graph_alter_layout import GraphAlterLayout

    return GraphAlterLayout


def get_graph_simplify_inference() -> type[ModulePass]:
    from xtc.passes.graph_simplify_inference import GraphSimplifyInference

    return GraphSimplifyInference


def get_graph_apply_pdl() -> type[ModulePass]:
    from xtc.passes.graph_apply_pdl import GraphApplyPdl

    return GraphApplyPdl


def get_graph_qdq_to_integer() -> type[ModulePass]:
    from xtc.passes.graph_qdq_to_integer import GraphQdqToInteger

    return GraphQdqToInteger


def get_graph_block_activations() -> type[ModulePass]:
    from xtc.passes.graph_block_activations import GraphBlockActivations

    return GraphBlockActivations


def get_graph_sink_transpose() -> type[ModulePass]:
    from xtc.passes.graph_sink_transpose import GraphSinkTranspose

    return GraphSinkTranspose


def get_graph_share_concat_prefix() -> type[ModulePass]:
    from xtc.passes.graph_share_concat_prefix import GraphShareConcatPrefix

    return GraphShareConcatPrefix


def get_graph_fold_scale_axis() -> type[ModulePass]:
    from xtc.passes.graph_fold_scale_axis import GraphFoldScaleAxis

    return GraphFoldScaleAxis


def get_tir_plan_memory() -> type[ModulePass]:
    from xtc.passes.tir_plan_memory import TirPlanMemory

    return TirPlanMemory


def get_tir_profile_calls() -> type[ModulePass]:
    from xtc.passes.tir_profile_calls import TirProfileCalls

    return TirProfileCalls


def get_tir_concat_in_place() -> type[ModulePass]:
    from xtc.passes.tir_concat_in_place import TirConcatInPlace

    return TirConcatInPlace


def get_tir_partition() -> type[ModulePass]:
    from xtc.passes.tir_partition import TirPartition

    return TirPartition


def get_tir_expand_math() -> type[ModulePass]:
    from xtc.passes.tir_expand_math import TirExpandMath

    return TirExpandMath


def get_tir_split() -> type[ModulePass]:
    from xtc.passes.tir_split import TirSplit

    return TirSplit


def get_tir_reorder() -> type[ModulePass]:
    from xtc.passes.tir_reorder import TirReorder

    return TirReorder


def get_tir_hoist_reduction() -> type[ModulePass]:
    from xtc.passes.tir_hoist_reduction import TirHoistReduction

    return TirHoistReduction


def get_tir_tile() -> type[ModulePass]:
    from xtc.passes.tir_tile import TirTile

    return TirTile


def get_tir_fuse() -> type[ModulePass]:
    from xtc.passes.tir_fuse import TirFuse

    return TirFuse


def get_tir_prefetch() -> type[ModulePass]:
    from xtc.passes.tir_prefetch import TirPrefetch

    return TirPrefetch


def get_tir_unroll() -> type[ModulePass]:
    from xtc.passes.tir_unroll import TirUnroll

    return TirUnroll


def get_tir_vectorize() -> type[ModulePass]:
    from xtc.passes.tir_vectorize import TirVectorize

    return TirVectorize


def get_tir_parallel() -> type[ModulePass]:
    from xtc.passes.tir_parallel import TirParallel

    return TirParallel


def get_tir_bind() -> type[ModulePass]:
    from xtc.passes.tir_bind import TirBind

    return TirBind


def get_cuda_default_schedule() -> type[ModulePass]:
    from xtc.passes.cuda_default_schedule import CudaDefaultSchedule

    return CudaDefaultSchedule


def get_tir_cache_write() -> type[ModulePass]:
    from xtc.passes.tir_cache_write import TirCacheWrite

    return TirCacheWrite


def get_tir_rfactor() -> type[ModulePass]:
    from xtc.passes.tir_rfactor import TirRfactor

    return TirRfactor


def get_tir_cache_read() -> type[ModulePass]:
    from xtc.passes.tir_cache_read import TirCacheRead

    return TirCacheRead


def get_tir_compute_at() -> type[ModulePass]:
    from xtc.passes.tir_compute_at import TirComputeAt

    return TirComputeAt


def get_tir_reuse_term() -> type[ModulePass]:
    from xtc.passes.tir_reuse_term import TirReuseTerm

    return TirReuseTerm


def get_tir_compute_inline() -> type[ModulePass]:
    from xtc.passes.tir_compute_inline import TirComputeInline

    return TirComputeInline


def get_convert_te_to_tir() -> type[ModulePass]:
    from xtc.lowering.convert_te_to_tir import ConvertTeToTir

    return ConvertTeToTir


def get_convert_graph_to_te() -> type[ModulePass]:
    from xtc.lowering.convert_graph_to_te import ConvertGraphToTe

    return ConvertGraphToTe


def get_convert_tir_to_llvm() -> type[ModulePass]:
    from xtc.lowering.convert_tir_to_llvm import ConvertTirToLLVM

    return ConvertTirToLLVM


def get_tir_lower_parallel() -> type[ModulePass]:
    from xtc.lowering.tir_lower_parallel import TirLowerParallel

    return TirLowerParallel


def get_tir_lower_unrolled() -> type[ModulePass]:
    from xtc.lowering.tir_lower_unrolled import TirLowerUnrolled

    return TirLowerUnrolled


def get_tir_cse() -> type[ModulePass]:
    from xtc.passes.tir_cse import TirCse

    return TirCse


def get_tir_lower_vectorized() -> type[ModulePass]:
    from xtc.lowering.tir_lower_vectorized import TirLowerVectorized

    return TirLowerVectorized


def get_convert_tir_to_cf() -> type[ModulePass]:
    from xtc.lowering.convert_tir_to_cf import ConvertTirToCf

    return ConvertTirToCf


def get_convert_to_llvm() -> type[ModulePass]:
    from xtc.lowering.convert_to_llvm import ConvertToLLVM

    return ConvertToLLVM
def get_convert_tir_to_gpu() -> type[ModulePass]:
    from xtc.lowering.convert_tir_to_gpu import ConvertTirToGPU

    return ConvertTirToGPU


def get_ptx_target() -> type[Target]:
    from xtc.runtime.targets import PTXTarget

    return PTXTarget


def get_nvvm_ir_target() -> type[Target]:
    from xtc.runtime.targets import NVVMIRTarget

    return NVVMIRTarget


def get_llvm_ir_target() -> type[Target]:
    from xtc.runtime.targets import LLVMIRTarget

    return LLVMIRTarget


XTC_DIALECTS = {
    "graph": get_graph_dialect,
    "te": get_te_dialect,
    "tir": get_tir_dialect,
    "llvm_ext": get_llvm_ext_dialect,
}

XTC_PASSES = {
    "graph-fold-constants": get_graph_fold_constants,
    "graph-simplify-inference": get_graph_simplify_inference,
    "graph-fold-scale-axis": get_graph_fold_scale_axis,
    "graph-qdq-to-integer": get_graph_qdq_to_integer,
    "graph-pad-conv-channels": get_graph_pad_conv_channels,
    "graph-sink-slice": get_graph_sink_slice,
    "graph-alter-layout": get_graph_alter_layout,
    "graph-block-activations": get_graph_block_activations,
    "graph-winograd": get_graph_winograd,
    "graph-sink-transpose": get_graph_sink_transpose,
    "graph-share-concat-prefix": get_graph_share_concat_prefix,
    "graph-apply-pdl": get_graph_apply_pdl,
    "graph-fuse-ops": get_graph_fuse_ops,
    "te-inline": get_te_inline,
    "convert-graph-to-te": get_convert_graph_to_te,
    "convert-te-to-tir": get_convert_te_to_tir,
    "convert-tir-to-llvm": get_convert_tir_to_llvm,
    "tir-lower-parallel": get_tir_lower_parallel,
    "tir-lower-unrolled": get_tir_lower_unrolled,
    "tir-lower-vectorized": get_tir_lower_vectorized,
    "tir-cse": get_tir_cse,
    "convert-tir-to-cf": get_convert_tir_to_cf,
    "convert-to-llvm": get_convert_to_llvm,
    "convert-tir-to-gpu": get_convert_tir_to_gpu,
    "tir-plan-memory": get_tir_plan_memory,
    "tir-profile-calls": get_tir_profile_calls,
    "tir-concat-in-place": get_tir_concat_in_place,
    "tir-expand-math": get_tir_expand_math,
    "tir-partition": get_tir_partition,
    "tir-split": get_tir_split,
    "tir-reorder": get_tir_reorder,
    "tir-hoist-reduction": get_tir_hoist_reduction,
    "tir-tile": get_tir_tile,
    "tir-fuse": get_tir_fuse,
    "tir-prefetch": get_tir_prefetch,
    "tir-unroll": get_tir_unroll,
    "tir-vectorize": get_tir_vectorize,
    "tir-cache-write": get_tir_cache_write,
    "tir-cache-read": get_tir_cache_read,
    "tir-rfactor": get_tir_rfactor,
    "tir-compute-at": get_tir_compute_at,
    "tir-compute-inline": get_tir_compute_inline,
    "tir-reuse-term": get_tir_reuse_term,
    "tir-parallel": get_tir_parallel,
    "tir-bind": get_tir_bind,
    "cuda-default-schedule": get_cuda_default_schedule,
}

XTC_TARGETS = {
    "llvm-ir": get_llvm_ir_target,
    "ptx": get_ptx_target,
    "nvvm-ir": get_nvvm_ir_target,
}

XTC_UNIVERSE = Universe(all_dialects=XTC_DIALECTS, all_passes=XTC_PASSES, all_targets=XTC_TARGETS)


OWN_ENTRY_POINTS = ("xdsl", "xtc")
"""Entry point names whose universes xtc takes directly, never by loading
the entry point (a stale or shadowing one of these names cannot break xtc)."""


@functools.cache
def multiverse() -> Universe:
    """xDSL's and xtc's dialects, passes and targets, with every working
    plugin's (see the module doc); read once per process."""
    return merge_universes(entry_points(group="xdsl.universe"))


def all_dialects() -> dict[str, Callable[[], Dialect]]:
    """multiverse()'s dialects and the registered op plugins' (xtc/plugins.py;
    not cached: `xtc.register_ops` may add some during the process)."""
    dialects: dict[str, Callable[[], Dialect]] = dict(multiverse().all_dialects)
    return dialects | plugin_dialect_factories(dialects)


def plugin_dialect_factories(taken: Collection[str]) -> dict[str, Callable[[], Dialect]]:
    """The registered op plugins' dialects (loading the plugins, which
    imports every room of xtc), but those named in `taken`: each of these
    is skipped with a PluginWarning."""
    from xtc.plugin_hooks import plugin_dialects

    dialects: dict[str, Callable[[], Dialect]] = {}
    for dialect in plugin_dialects():
        if dialect.name in taken:
            warnings.warn(
                f"the dialect '{dialect.name}' of an xtc.ops plugin is skipped: "
                "an xdsl.universe plugin defines it too",
                PluginWarning,
                stacklevel=3,
            )
            continue
        dialects[dialect.name] = functools.partial(_same, dialect)
    return dialects


def _same(dialect: Dialect) -> Dialect:
    return dialect


def merge_universes(plugins: Iterable[EntryPoint]) -> Universe:
    """xDSL's and xtc's universes and those of `plugins` that load, in name
    order; a plugin that breaks is skipped with a PluginWarning naming it."""
    from xdsl.universe import XDSL_UNIVERSE

    merged = Universe(
        all_dialects={**XDSL_UNIVERSE.all_dialects, **XTC_UNIVERSE.all_dialects},
        all_passes={**XDSL_UNIVERSE.all_passes, **XTC_UNIVERSE.all_passes},
        all_targets={**XDSL_UNIVERSE.all_targets, **XTC_UNIVERSE.all_targets},
    )
    for plugin in sorted(plugins, key=lambda p: p.name):
        if plugin.name in OWN_ENTRY_POINTS:
            continue
        universe = _load_plugin(plugin)
        if universe is not None:
            _merge_plugin(merged, plugin, universe)
    return merged


def _skip(plugin: EntryPoint, why: str) -> None:
    warnings.warn(
        f"xdsl.universe plugin {plugin.name!r} ({plugin.value}) is skipped: {why}",
        PluginWarning,
        stacklevel=3,
    )


def _load_plugin(plugin: EntryPoint) -> Universe | None:
    try:
        universe = plugin.load()
    except Exception as e:  # noqa: BLE001 - any failure of a foreign package is skipped
        _skip(plugin, f"it fails to load ({type(e).__name__}: {e})")
        return None
    if not isinstance(universe, Universe):
        _skip(plugin, f"it is a {type(universe).__name__}, not an xdsl Universe")
        return None
    return universe


def _merge_plugin(merged: Universe, plugin: EntryPoint, universe: Universe) -> None:
    """Adds the plugin's names to `merged`, unless one of them is taken."""
    parts: list[tuple[dict[str, Callable[[], object]], dict[str, Callable[[], object]]]] = [
        (merged.all_dialects, universe.all_dialects),  # pyright: ignore[reportArgumentType]
        (merged.all_passes, universe.all_passes),  # pyright: ignore[reportArgumentType]
        (merged.all_targets, universe.all_targets),  # pyright: ignore[reportArgumentType]
    ]
    taken = sorted(name for mine, theirs in parts for name in theirs if name in mine)
    if taken:
        _skip(plugin, f"it redefines {', '.join(taken)}")
        return
    for mine, theirs in parts:
        mine.update(theirs)
