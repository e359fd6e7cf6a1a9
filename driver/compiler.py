"""`xtc.compile`: an ONNX model to a loaded native library, the one way.

    m = xtc.compile("model.onnx", target="llvm", input_shapes=None, opt_level=3)
    m.run({"data": x}); m.benchmark([x]); m.export("model.tar")

The stages are the ladder of IRs: import to `graph`, the graph passes
(at -O1 and above), the lowerings to `te`, `tir` (with the static memory
plan) and `llvm`, then LLVM at -O`opt_level` into one shared library
(runtime/library.py). `pipeline(opt_level)` is the `xtc-opt -p` string of
the passes, so any stage can be replayed by hand (`xtc compile
--print-pipeline`).
"""

from __future__ import annotations

import mmap
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xtc import __version__
from xtc.driver.errors import CompileError  # noqa: F401 - re-exported: xtc.driver.compiler.CompileError
from xtc.driver.garbage_collection import collection_paused
from xtc.runtime.model import CompiledModel, TensorSpec
from xtc.runtime.timing import NO_TIMER, Timer

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    import onnx
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.dialects.func import FuncOp

    from xtc.dialects.resource_blobs import BlobScope
    from xtc.driver.records import TuningRecords
    from xtc.driver.specializing import CompilingSpecializedModel
    from xtc.frontend.converters import NeedsConstantError
    from xtc.remarks import Remark
    from xtc.runtime.compile_cache import CompileCache

TARGETS = ("llvm", "cuda")
GRAPH_PASSES = (
    "graph-qdq-to-integer",  # first: it needs the quantized weights the later folding loses
    "graph-fold-constants",
    "graph-simplify-inference",
    "graph-fold-scale-axis",
    "graph-pad-conv-channels",
    "graph-sink-slice",
    "graph-alter-layout",
    "graph-block-activations",  # after the weights are blocked: it blocks their convs
    "graph-winograd",  # after the blocking: it takes blocked 3x3 convs
    "graph-fold-constants",
    "graph-sink-transpose",  # after the folding: it permutes the constants it meets
    "graph-share-concat-prefix",  # before fusion: a shared concat stays out of its users' groups
    "dce",
    "graph-fuse-ops",
)
CPU_GRAPH_PASSES = ("graph-block-activations", "graph-winograd")
"""Graph passes for the CPU's micro-kernels only: the CUDA pipeline leaves
them out (its schedules thread NCHW outputs)."""
FUSED_LOWERINGS = ("convert-graph-to-te", "te-inline")
"""From -O1 on: fused groups become one kernel, their epilogues inlined."""
IN_PLACE = ("tir-concat-in-place",)
"""From -O1 on, right after convert-te-to-tir: a concatenation's inputs
written where its output has them, its copy gone and its kernel erased
(before the kernels are split into units: an erased one is never compiled;
what follows it, up to the memory plan, works on kernels, not on the model
function's buffers)."""
PARTITION = ("tir-partition",)
"""From -O1 on, after IN_PLACE: a Concat's select chain as one nest per
input (each element reads only its own input)."""
FAST_MATH = ("tir-expand-math",)
"""From -O1 on: f32 exp and erf as polynomials that vectorize (error ~1e-7)."""
SCHEDULE_LEVEL = 2
"""From -O2 on, each kernel gets its default schedule (ops/schedules.py)
right after SCHEDULED_AFTER; the manifest's pipeline lists its steps."""
SCHEDULED_AFTER = PARTITION[-1]
"""The pass after which kernels are scheduled (from -O2 on): the last that
changes which loop nests a kernel has."""
LOWERINGS = ("convert-graph-to-te", "convert-te-to-tir", "tir-plan-memory", "convert-tir-to-llvm")
PROFILE = "tir-profile-calls"
"""With `profile`, the model function's last tir pass: each kernel call
timed into a table the library exports (passes/tir_profile_calls.py)."""
SCHEDULED_KERNEL_PASSES = FAST_MATH + LOWERINGS[2:3]
"""What a scheduled kernel goes through before LLVM from -O2 on (the passes
between SCHEDULED_AFTER and convert-tir-to-llvm): the tuner builds its
candidates the same way, so that it times the code a compile makes (an erf
left to libm runs 30 times slower than its polynomial)."""


def _dump_points(passes: Sequence[str]) -> dict[str, str]:
    """The pass after which each --dump-ir stage is complete: graph after
    the last graph pass, te after the last te pass, tir before LLVM."""
    points: dict[str, str] = {}
    for name in passes:
        if name.startswith("graph-") or name == "dce":
            points[name] = "graph"
        elif name in ("convert-graph-to-te", "te-inline"):
            points[name] = "te"
        elif name == "tir-plan-memory" or name.startswith(PROFILE):
            points[name] = "tir"
    last = {stage: name for name, stage in points.items()}
    return {name: stage for stage, name in last.items()}


DUMP_STAGES = ("graph", "te", "tir", "llvm", "asm")

Progress = Callable[[str, int, int], None]
"""progress(step name, steps done, steps in all)."""
Dump = Callable[[str, str], None]
"""dump(stage, text) for each stage asked for."""
RemarkSink = Callable[["Remark"], None]
"""on_remark(remark) for each remark of the compile, in order."""


@dataclass(frozen=True)
class CompileOptions:
    """What a compile is asked for besides the model, as compile_model and
    compile_graph take it (their docs say what each does): built once and
    passed whole down the compile and to each specialization's."""

    target: str = "llvm"
    opt_level: int = 3
    tuning_records: str | os.PathLike[str] | None = None
    progress: Progress | None = None
    dump: Dump | None = None
    dump_stages: tuple[str, ...] = ()
    timer: Timer = NO_TIMER
    verify_each: bool | None = None
    on_remark: RemarkSink | None = None
    cache: bool = True
    jobs: int | None = None
    """Kernel compile workers; None: XTC_COMPILE_JOBS, else the CPU count."""
    profile: bool = False
    """Time each kernel call of the model function (PROFILE)."""

    def check(self) -> None:
        """CompileError for a target, opt level, dump stage or records
        request that xtc cannot compile."""
        _check_request(self.target, self.opt_level, self.tuning_records, self.dump_stages)


def pipeline(opt_level: int = 3) -> str:
    """The passes `xtc.compile` runs at `opt_level`, as an `xtc-opt -p`
    string, less the kernels' schedules (from -O2 on, after
    SCHEDULED_AFTER: the compiled model's manifest has the whole)."""
    from xtc.lowering.convert_tir_to_llvm import STAGE_NAMES

    if opt_level == 0:
        passes = LOWERINGS
    else:
        passes = (
            GRAPH_PASSES
            + FUSED_LOWERINGS
            + LOWERINGS[1:2]
            + IN_PLACE
            + PARTITION
            + FAST_MATH
            + LOWERINGS[2:]
        )
    # convert-tir-to-llvm as its stages, so that each is timed and replayable
    return ",".join(
        stage
        for name in passes
        for stage in (STAGE_NAMES if name == "convert-tir-to-llvm" else (name,))
    )


def compile_model(
    model: onnx.ModelProto | str | os.PathLike[str],
    target: str = "llvm",
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    opt_level: int = 3,
    tuning_records: str | os.PathLike[str] | None = None,
    *,
    progress: Progress | None = None,
    dump: Dump | None = None,
    dump_stages: Sequence[str] = (),
    timer: Timer = NO_TIMER,
    verify_each: bool | None = None,
    on_remark: RemarkSink | None = None,
    cache: bool = True,
    jobs: int | None = None,
    profile: bool = False,
) -> CompiledModel | CompilingSpecializedModel:
    """Compiles `model` (an onnx.ModelProto or a path) for `target` and
    loads it (see the module doc; `timer`, `verify_each` and `on_remark` as
    in compile_graph). With `cache`, a model compiled before with the same
    request (model_cache_key) is loaded from the compile cache
    (runtime/compile_cache.py) without being imported or lowered (its
    manifest then says "compile_cache": "hit"), and a model compiled is
    stored there; a compile that dumps IR or reports remarks compiles. Its
    kernels are compiled by `jobs` worker processes (None: XTC_COMPILE_JOBS,
    else the CPU count; 1: in this process), each kernel's object also
    cached (compile_graph). With `profile`, the model function times each
    of its kernel calls (`CompiledModel.profile` reads the times). A model
    whose shapes depend on the values of some of its inputs (Reshape's
    `shape` a graph input) is a CompilingSpecializedModel
    (driver/specializing.py): it compiles the model for each new value of
    them it is run on, each specialization compiled and cached as a model
    of its own."""
    options = CompileOptions(
        target=target,
        opt_level=opt_level,
        tuning_records=tuning_records,
        progress=progress,
        dump=dump,
        dump_stages=tuple(dump_stages),
        timer=timer,
        verify_each=verify_each,
        on_remark=on_remark,
        cache=cache,
        jobs=jobs,
        profile=profile,
    )
    return _compile_model(model, input_shapes, options)


def _compile_model(
    model: onnx.ModelProto | str | os.PathLike[str],
    input_shapes: Mapping[str, Sequence[int]] | None,
    options: CompileOptions,
) -> CompiledModel | CompilingSpecializedModel:
    """compile_model with its options gathered."""
    from xtc.driver.compile_settings import JobsError, compile_jobs
    from xtc.runtime.compile_cache import CompileCache

    options.check()
    try:
        jobs = compile_jobs(options.jobs)
    except JobsError as e:
        raise CompileError(str(e)) from None
    timer, progress = options.timer, options.progress
    quiet = not options.dump_stages and options.on_remark is None
    store = CompileCache.default() if options.cache and quiet else None
    key = None
    if store is not None:
        with timer.scope("compile cache lookup"):
            key = model_cache_key(
                model,
                input_shapes,
                options.target,
                options.opt_level,
                options.tuning_records,
                profile=options.profile,
            )
            cached = _cached_model(store, key) if key is not None else None
        if cached is not None:
            if progress is not None:
                progress("compile cache hit", 1, 1)  # no pipeline ran (nor was imported)
            return cached
    # after the lookup: a hit imports no importer, no dialect, no pass
    from xtc.dialects.resource_blobs import blob_storage
    from xtc.driver.kernel_units import kernel_workers
    from xtc.frontend.converters import NeedsConstantError
    from xtc.frontend.onnx import import_model
    from xtc.remarks import collect_remarks

    if progress is not None:
        progress("import", 0, _steps(options.opt_level))
    # the kernels' workers start while the model is imported and lowered
    with kernel_workers(_worker_count(options, jobs)) as workers, blob_storage().scope() as blobs:
        with timer.scope("import"), collect_remarks() as import_remarks, collection_paused():
            try:
                module = import_model(model, input_shapes)
            except NeedsConstantError as e:
                specialized = _specialized(model, e, input_shapes, options)
                if specialized is None:
                    raise
                return specialized
        _refuse_string_outputs(module, model)
        compiled = _compile_graph(
            module,
            replace(options, jobs=jobs),
            name=_model_name(model),
            imported=True,
            blobs=blobs,
            import_remarks=import_remarks,
            workers=workers,
        )
        if store is not None and key is not None:
            with timer.scope("compile cache store"):
                _store_model(store, key, compiled)
    return compiled


def _worker_count(options: CompileOptions, jobs: int) -> int:
    """How many worker processes compile the kernels of a compile asked
    `options` with `jobs` (1: none, they are compiled in this process): the
    kernels are compiled apart unless the tir, the LLVM IR or the assembly
    is dumped (that is of one module)."""
    return jobs if _splits_kernels(options.dump_stages, jobs, options.cache) else 1


def _splits_kernels(dump_stages: Sequence[str], jobs: int, cache: bool) -> bool:
    """Whether the kernels are compiled apart (driver/kernel_units.py)."""
    return (jobs > 1 or cache) and not {"tir", "llvm", "asm"} & set(dump_stages)


def _refuse_string_outputs(
    module: ModuleOp, model: onnx.ModelProto | str | os.PathLike[str]
) -> None:
    """A compiled model returns tensors: an output of strings (computed at
    import, frontend/converters/strings.py) is refused."""
    from xtc.frontend.onnx import load_model
    from xtc.frontend.structured import output_layouts

    for index, layout in enumerate(output_layouts(module) or []):
        if layout.kind == "string":
            name = load_model(model).graph.output[index].name
            raise CompileError(
                f"output '{name}' holds strings, which xtc computes at import: a compiled model "
                "returns tensors only (xtc.driver.onnx_backend.specializing_model(model, "
                "'native') returns strings)"
            )


def _specialized(
    model: onnx.ModelProto | str | os.PathLike[str],
    needs: NeedsConstantError,
    input_shapes: Mapping[str, Sequence[int]] | None,
    options: CompileOptions,
) -> CompilingSpecializedModel | None:
    """compile_model's answer for a model whose import needs the value
    `needs` names: a model specialized on the graph inputs it comes from
    (None when none does), each specialization compiled with `options`."""
    from xtc.driver.specializing import compile_specialized

    if options.dump_stages or options.on_remark is not None:
        raise CompileError(
            "dumping IR and reporting remarks are not supported for a model specialized on "
            f"the values of its inputs yet ({needs})"
        )

    def compile_frozen(frozen: onnx.ModelProto) -> CompiledModel:
        shapes = {n: s for n, s in (input_shapes or {}).items() if n in _input_names(frozen)}
        compiled = _compile_model(frozen, shapes, replace(options, dump=None))
        assert isinstance(compiled, CompiledModel)  # frozen: nothing left to specialize
        return compiled

    return compile_specialized(model, needs, _model_name(model), compile_frozen, input_shapes)


def _input_names(model: onnx.ModelProto) -> set[str]:
    return {i.name for i in model.graph.input}


MODELS = "models"
"""The compile cache's kind of whole-model entries (artifacts)."""
CACHE_HIT = "hit"


def model_cache_key(
    model: onnx.ModelProto | str | os.PathLike[str],
    input_shapes: Mapping[str, Sequence[int]] | None,
    target: str,
    opt_level: int,
    tuning_records: str | os.PathLike[str] | None,
    *,
    profile: bool = False,
) -> str | None:
    """Everything a compiled model depends on, as one JSON string: the
    model's bytes (and its external data), the input shapes, the target and
    this CPU, the opt level, the tuning records' bytes, whether it is
    profiled, the linker, xtc's version and sources, and the op plugins'
    sources. None when the model or the records cannot be read (the
    compile then says why)."""
    import json
    import shutil

    import llvmlite.binding as llvm_binding

    from xtc.analysis.host_cpu import host_cpu_features, host_cpu_name
    from xtc.driver.compile_settings import serial_model_iterations
    from xtc.runtime.compile_cache import file_digest, xtc_source_digest
    from xtc.runtime.toolchain import GOLD, TOOLCHAIN_VARIABLE

    try:
        model_digest = _model_digest(model)
        records = None if tuning_records is None else file_digest(Path(tuning_records))
    except OSError:
        return None
    parts = {
        "xtc": __version__,
        "sources": xtc_source_digest(),
        "plugins": _plugins_digest(),
        "model": model_digest,
        "input_shapes": {k: list(v) for k, v in sorted((input_shapes or {}).items())},
        "target": [target, llvm_binding.get_process_triple(), host_cpu_name(), host_cpu_features()],
        "opt_level": opt_level,
        "serial_below": serial_model_iterations(),
        "tuning_records": records,
        "profile": profile,
        "linker": [os.environ.get(TOOLCHAIN_VARIABLE, ""), shutil.which("cc"), shutil.which(GOLD)],
    }
    return json.dumps(parts, sort_keys=True)


def _model_digest(model: onnx.ModelProto | str | os.PathLike[str]) -> str:
    """The sha256 of the model's bytes, and of each external data file
    it names (a model without any says no `location`: no need to parse it)."""
    import hashlib

    if not isinstance(model, (str, os.PathLike)):  # a ModelProto
        return hashlib.sha256(model.SerializeToString(deterministic=True)).hexdigest()
    path = Path(model)
    with _file_bytes(path) as raw:
        digest = hashlib.sha256(raw)
        names_files = raw.find(b"location") >= 0
    if names_files:
        import onnx
        from onnx.external_data_helper import ExternalDataInfo, _get_all_tensors, uses_external_data

        from xtc.runtime.compile_cache import file_digest

        parsed = onnx.load_model_from_string(path.read_bytes())
        for tensor in _get_all_tensors(parsed):
            if uses_external_data(tensor):
                data = path.parent / ExternalDataInfo(tensor).location
                digest.update(file_digest(data).encode() if data.is_file() else b"missing")
    return digest.hexdigest()


@contextmanager
def _file_bytes(path: Path) -> Iterator[mmap.mmap | bytes]:
    """The file's bytes, mapped (a model's 100 MB are hashed where the
    page cache holds them, not copied first); read when empty (no map)."""
    with path.open("rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            yield b""
            return
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            yield mapped


def _plugins_digest() -> str:
    """The sha256 of the op plugins' sources: each entry point's whole
    package (found, not imported: a hit imports no plugin), and the
    modules registered in this process (xtc.register_ops)."""
    import hashlib
    import importlib.util
    import sys
    from importlib.metadata import entry_points

    files: set[Path] = set()
    for plugin in entry_points(group="xtc.ops"):
        spec = importlib.util.find_spec(plugin.module.split(".")[0])
        if spec is None:
            continue
        if spec.submodule_search_locations:
            for folder in spec.submodule_search_locations:
                files.update(Path(folder).rglob("*.py"))
        elif spec.origin:
            files.add(Path(spec.origin))
    registry = sys.modules.get("xtc.plugins")
    for plugin in registry.registered_plugins() if registry is not None else ():
        for name in plugin.modules:
            source = getattr(sys.modules.get(name), "__file__", None)
            if source is not None:
                files.add(Path(source))
    digest = hashlib.sha256()
    for file in sorted(f for f in files if f.is_file()):
        digest.update(str(file).encode() + b"\0" + hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()


def _cached_model(store: CompileCache, key: str) -> CompiledModel | None:
    """The model stored under `key`, loaded; None when there is none, or
    when it does not load (corrupt: it is removed and rebuilt)."""
    from xtc.runtime.archive import ArtifactError
    from xtc.runtime.artifact import read_archive

    entry = store.open(MODELS, key)
    if entry is None:
        return None

    def mark_hit(manifest: dict[str, Any]) -> None:
        manifest["compile_cache"] = CACHE_HIT

    with entry:
        try:
            # the entry's checksum covered the archive: its library is not hashed again
            return read_archive(entry, store.path_of(MODELS, key), mark_hit, verified=True)
        except ArtifactError:
            pass
    store.path_of(MODELS, key).unlink(missing_ok=True)
    return None


def _store_model(store: CompileCache, key: str, model: CompiledModel) -> None:
    from xtc.runtime.archive import write_archive_into

    store.put_written(MODELS, key, lambda f: write_archive_into(model.directory, f))


def _steps(opt_level: int) -> int:
    return 2 + len(pipeline(opt_level).split(","))


def _profile_pass(entry: str) -> str:
    """PROFILE for the model function `entry`, as a pipeline names it."""
    return PROFILE if entry == "main" else f"{PROFILE}{{func={entry}}}"


def _profile_manifest(module: ModuleOp, entry: str) -> dict[str, Any]:
    """The manifest's "profile": the symbol of the table PROFILE made and
    the kernels of its rows 1..K, in order (runtime/profile.py reads it)."""
    from xdsl.dialects.func import FuncOp

    from xtc.passes.tir_profile_calls import PROFILE_GLOBAL, profiled_callees

    kernels = [
        name
        for op in module.ops
        if isinstance(op, FuncOp) and op.sym_name.data == entry
        for name in profiled_callees(op) or []
    ]
    return {"table": PROFILE_GLOBAL, "kernels": kernels}


def compile_graph(
    module: ModuleOp,
    target: str = "llvm",
    opt_level: int = 3,
    *,
    name: str = "model",
    progress: Progress | None = None,
    dump: Dump | None = None,
    dump_stages: Sequence[str] = (),
    imported: bool = False,
    tuning_records: str | os.PathLike[str] | None = None,
    timer: Timer = NO_TIMER,
    verify_each: bool | None = None,
    on_remark: RemarkSink | None = None,
    blobs: BlobScope | None = None,
    jobs: int = 1,
    cache: bool = False,
    import_remarks: Sequence[Remark] = (),
    profile: bool = False,
) -> CompiledModel:
    """Compiles a graph-level module (its `@main`, or its only function) and
    loads it; `module` itself is left as it is (unless `imported`: the
    module is compile_model's own, fresh from the importer, and is used up).
    With `tuning_records`, each kernel that has a record gets the record's
    schedule. The IR is verified at the end of each stage (graph, te, tir,
    llvm), or after every pass with `verify_each` (None: when the
    environment sets XTC_VERIFY_EACH=1, as the tests do). `timer` gets the
    time of each pass and stage (`xtc compile --timing`). Each fallback
    taken (a loop left scalar, a schedule step refused) is a remark
    (xtc/remarks.py): the manifest counts them by category, and `on_remark`
    gets each (`xtc compile --remarks`). A weight that a pass replaces is
    freed after the pass when the compile made it: when `blobs` (the scope
    of compile_model, which imported `module`) or a scope of its own holds
    it; a caller's weights are never freed. With `jobs` above 1 or `cache`,
    the kernels are scheduled and compiled apart (driver/kernel_units.py):
    by `jobs` worker processes, their objects taken from and stored in the
    compile cache with `cache`; the manifest's "kernel_units" counts them
    (unless the tir, the LLVM IR or the assembly is dumped: that is of one
    module; kernels with a tuning record are scheduled in this process).
    `import_remarks` are those of the import (an opset upgrade), counted
    and passed on first. With `profile`, the model function times each of
    its kernel calls (PROFILE; `CompiledModel.profile` reads the times)."""
    from xtc.dialects.resource_blobs import blob_storage

    options = CompileOptions(
        target=target,
        opt_level=opt_level,
        tuning_records=tuning_records,
        progress=progress,
        dump=dump,
        dump_stages=tuple(dump_stages),
        timer=timer,
        verify_each=verify_each,
        on_remark=on_remark,
        cache=cache,
        jobs=jobs,
        profile=profile,
    )
    with blob_storage().scope() as own:
        return _compile_graph(
            module,
            options,
            name=name,
            imported=imported,
            blobs=blobs or own,
            import_remarks=import_remarks,
        )


def _compile_graph(
    module: ModuleOp,
    options: CompileOptions,
    *,
    name: str,
    imported: bool,
    blobs: BlobScope,
    import_remarks: Sequence[Remark],
    workers: ProcessPoolExecutor | None = None,
) -> CompiledModel:
    """compile_graph, freeing the weights of `blobs` that passes replace;
    the kernels compiled by `workers` when given (the caller's, started
    with `_worker_count` of them), else by workers of its own."""
    from xtc import interp
    from xtc.driver.kernel_units import (
        PendingUnits,
        UnitPlan,
        kernel_workers,
        split_kernel_units,
        start_units,
    )
    from xtc.driver.pipelines import apply_pipeline
    from xtc.driver.scheduling import (
        record_when_scheduled,
        runs_serial,
        schedule_kernels_by_function,
    )
    from xtc.driver.textual_ir import module_to_text
    from xtc.lowering.convert_tir_to_llvm import STAGE_NAMES
    from xtc.remarks import collect_remarks, count_by_category
    from xtc.runtime.archive import sha256_of, write_manifest
    from xtc.runtime.artifact import open_model as open_compiled
    from xtc.runtime.compile_cache import CompileCache
    from xtc.runtime.library import KernelObject, build_library

    if not imported:
        options.check()
    target, opt_level, timer, dump = options.target, options.opt_level, options.timer, options.dump
    dump_stages, on_remark, cache = options.dump_stages, options.on_remark, options.cache
    jobs = options.jobs or 1
    records = _tuning_records(options.tuning_records)
    tuned: list[dict[str, Any]] = []
    if not imported:
        module = module.clone()
    entry = interp.entry_function(module).sym_name.data
    inputs, outputs = tensor_specs(module)
    passes = pipeline(opt_level).split(",")
    if options.profile:
        passes.insert(passes.index(STAGE_NAMES[0]), _profile_pass(entry))
    steps = _steps(opt_level) + int(options.profile)
    report = options.progress or (lambda name, done, total: None)
    verify_each = _verify_each(options.verify_each)
    arena: dict[str, int] = {}
    profiled: dict[str, Any] | None = None  # the manifest's "profile" (PROFILE's table)
    replay: list[str] = []
    dump_points = _dump_points(passes)
    split = _splits_kernels(dump_stages, jobs, cache)
    store = CompileCache.default() if cache else None
    pending: PendingUnits | None = None
    schedules: dict[str, list[str]] = {}  # schedule steps by kernel, in the module's order
    schedule_at = 0  # where they go in the replayed pipeline
    serial = False  # a model too small for threads: no parallel loop
    # kernels are scheduled (from -O2 on) after this pass; they are split off
    # into units after `split_after` (the concat kernels it erases are not
    # compiled), the units taking the passes from there up to the schedule
    # (per kernel: tir-partition) with them
    scheduled_after = SCHEDULED_AFTER if SCHEDULED_AFTER in passes else "convert-te-to-tir"
    split_after = IN_PLACE[-1] if IN_PLACE[-1] in passes else "convert-te-to-tir"
    lowered_from = passes.index(STAGE_NAMES[0])

    def kernels() -> list[KernelObject]:
        assert pending is not None
        with timer.scope("kernel objects"):
            return pending.objects(timer, remarks, schedules)

    own_workers = kernel_workers(jobs if split else 1) if workers is None else nullcontext(workers)
    with own_workers as workers:
        # the passes; a kernel compiled in this process (jobs 1, by kernels())
        # pauses collection for itself, collecting its own garbage after it
        with collect_remarks() as remarks, collection_paused():
            remarks.extend(import_remarks)
            for done, name_of_pass in enumerate(passes, start=1):
                report(name_of_pass, done, steps)
                with timer.scope(name_of_pass):
                    apply_pipeline(module, name_of_pass, verify=verify_each)
                blobs.release_unreferenced(module)
                replay.append(name_of_pass)
                if name_of_pass == "convert-te-to-tir":
                    schedules = {name: [] for name in _kernel_names(module, entry)}
                    serial = opt_level >= SCHEDULE_LEVEL and runs_serial(module, entry)
                if name_of_pass == split_after and split:
                    with timer.scope("split kernels"):
                        scheduled_from = passes.index(scheduled_after) + 1
                        before_schedule = passes[done:scheduled_from]
                        units = split_kernel_units(
                            module,
                            entry,
                            keep=lambda k: record_when_scheduled(k, records, before_schedule)
                            is not None,
                        )
                        plan = UnitPlan(
                            tuple(
                                p
                                for p in passes[scheduled_from:lowered_from]
                                if not p.startswith(PROFILE)  # of the model function
                            ),
                            schedule=opt_level >= SCHEDULE_LEVEL,
                            verify_each=verify_each,
                            before_schedule=tuple(before_schedule),
                            serial=serial,
                        )
                        pending = start_units(units, opt_level, plan, workers, store)
                if name_of_pass == scheduled_after:
                    schedule_at = len(replay)
                if name_of_pass == scheduled_after and opt_level >= SCHEDULE_LEVEL:
                    with timer.scope("schedule-kernels"):
                        schedules |= schedule_kernels_by_function(
                            module,
                            entry,
                            records,
                            tuned,
                            verify_each=verify_each,
                            timer=timer,
                            serial=serial,
                        )
                if name_of_pass == "tir-plan-memory":
                    arena = _arena_sizes(module, entry)
                if name_of_pass.startswith(PROFILE):
                    profiled = _profile_manifest(module, entry)
                stage = dump_points.get(name_of_pass)
                if not verify_each and (stage is not None or done == len(passes)):
                    with timer.scope(f"verify {stage or 'llvm'}"):
                        _verify_stage(module, stage or "llvm")
                if stage in dump_stages and dump is not None:
                    dump(stage, module_to_text(module))
        if opt_level == 0 and "graph" in dump_stages and dump is not None:
            dump("graph", "// -O0 runs no graph pass: the graph is the imported one\n")
        report("llvm", steps - 1, steps)
        with model_directory("xtc-model-") as (directory, owner):
            started = time.perf_counter()
            with timer.scope("llvm"):
                info = build_library(
                    module,
                    directory,
                    opt_level,
                    keep_assembly="asm" in dump_stages,
                    entry=entry,
                    in_place=True,
                    timer=timer,
                    kernels=kernels if split else None,
                )
            if dump is not None and "llvm" in dump_stages:
                dump("llvm", info.optimized_ir)
            if dump is not None and "asm" in dump_stages:
                dump("asm", (directory / "model.s").read_text())
                (directory / "model.s").unlink()
            replay[schedule_at:schedule_at] = [step for s in schedules.values() for step in s]
            target_entry = {
                "name": target,
                "triple": info.triple,
                "cpu": info.cpu,
                "features": info.features,
            }
            manifest = base_manifest(
                name, inputs, outputs, target_entry, opt_level, ",".join(replay)
            )
            manifest |= {
                "arena_bytes": arena.get("arena_bytes", 0),
                "unplanned_bytes": arena.get("unplanned_bytes", 0),
                "weights_bytes": info.weights_bytes,
                "library": info.path.name,
                "library_sha256": sha256_of(info.path),
                "toolchain": info.toolchain(),
                "llvm_seconds": round(time.perf_counter() - started, 3),
                "remarks": count_by_category(remarks),
            }
            if pending is not None:
                manifest["kernel_units"] = {
                    "units": len(pending.units),
                    "from_cache": pending.hits,
                    "jobs": jobs,
                }
            if records is not None:
                manifest["tuning"] = {"records": records.source, "tuned_kernels": tuned}
            if profiled is not None:
                manifest["profile"] = profiled
            write_manifest(directory, manifest)
            if on_remark is not None:
                for remark in remarks:
                    on_remark(remark)
            report("done", steps, steps)
            with timer.scope("load"):
                # verified: the library's sha256 was just taken from the file itself
                return open_compiled(directory, manifest, owner, verified=True)


@contextmanager
def model_directory(prefix: str) -> Iterator[tuple[Path, tempfile.TemporaryDirectory[str]]]:
    """A temporary directory for a compiled model's files, and its owner:
    removed if the compile fails, else the model's to keep (`owner`)."""
    owner = tempfile.TemporaryDirectory(prefix=prefix)
    try:
        yield Path(owner.name), owner
    except BaseException:
        owner.cleanup()
        raise


def base_manifest(
    name: str,
    inputs: Sequence[TensorSpec],
    outputs: Sequence[TensorSpec],
    target: dict[str, Any],
    opt_level: int,
    pipeline: str,
) -> dict[str, Any]:
    """The manifest fields of every artifact (CPU and CUDA), in order."""
    return {
        "format": "xtc-model",
        "format_version": 1,
        "name": name,
        "xtc_version": __version__,
        "inputs": [s.to_json() for s in inputs],
        "outputs": [s.to_json() for s in outputs],
        "target": target,
        "opt_level": opt_level,
        "pipeline": pipeline,
    }


VERIFY_EACH_VARIABLE = "XTC_VERIFY_EACH"


def _kernel_names(module: ModuleOp, entry: str) -> list[str]:
    """The names of the module's kernels (functions with a body but the
    model's), in order."""
    from xdsl.dialects.func import FuncOp

    return [
        op.sym_name.data
        for op in module.ops
        if isinstance(op, FuncOp) and op.sym_name.data != entry and op.body.blocks
    ]


def _verify_each(asked: bool | None) -> bool:
    if asked is not None:
        return asked
    return os.environ.get(VERIFY_EACH_VARIABLE, "") not in ("", "0")


def _verify_stage(module: ModuleOp, stage: str) -> None:
    """Verifies the module at the end of `stage`; a failure says how to
    find the pass that broke it."""
    from xdsl.utils.exceptions import VerifyException

    from xtc.driver.indexed_symbols import symbols_indexed

    try:
        with symbols_indexed(module):  # the calls' callees found in a dict, not a scan each
            module.verify()
    except VerifyException as e:
        e.add_note(
            f"the IR was verified at the end of the {stage} stage: compile with "
            f"--verify-each ({VERIFY_EACH_VARIABLE}=1) to find the pass that broke it"
        )
        raise


def tensor_specs(module: ModuleOp) -> tuple[list[TensorSpec], list[TensorSpec]]:
    """The graph-level model's inputs and outputs (names from `graph.name`)."""
    from xtc import interp

    main = interp.entry_function(module)
    names = interp.input_names(main)
    inputs = [_spec(n, t) for n, t in zip(names, main.function_type.inputs.data, strict=True)]
    outputs = [
        _spec(_result_name(main, i), t) for i, t in enumerate(main.function_type.outputs.data)
    ]
    return inputs, outputs


def _spec(name: str, t: Any) -> TensorSpec:
    from xdsl.dialects.builtin import TensorType

    from xtc.dialects.graph.constant import numpy_dtype

    if not isinstance(t, TensorType):
        raise CompileError(f"the model's {name!r} is a {t}, not a tensor")
    return TensorSpec(name, tuple(t.get_shape()), numpy_dtype(t.get_element_type()))


def _result_name(main: FuncOp, index: int) -> str:
    from xdsl.dialects.builtin import StringAttr

    attrs = main.res_attrs.data[index].data if main.res_attrs else {}
    name = attrs.get("graph.name")
    return name.data if isinstance(name, StringAttr) else f"output{index}"


def _arena_sizes(module: ModuleOp, entry: str) -> dict[str, int]:
    from xdsl.dialects.builtin import IntegerAttr

    from xtc import interp

    main = interp.entry_function(module, entry)
    sizes: dict[str, int] = {}
    for key in ("arena_bytes", "unplanned_bytes"):
        value = main.attributes.get(f"tir.{key}")
        if isinstance(value, IntegerAttr):
            sizes[key] = value.value.data
    return sizes


def _model_name(model: Any) -> str:
    if isinstance(model, (str, os.PathLike)):
        return Path(os.fspath(model)).stem
    return model.graph.name or "model"  # a ModelProto


def _check_request(
    target: str,
    opt_level: int,
    tuning_records: str | os.PathLike[str] | None,
    dump_stages: Sequence[str],
) -> None:
    if target not in TARGETS:
        raise CompileError(
            f"unknown target {target!r}: xtc compiles for llvm (this CPU) or cuda (NVIDIA GPUs)"
        )
    if target == "cuda":
        raise CompileError(
            "compile_model builds for llvm: xtc.compile(model, target='cuda') builds for CUDA "
            "(xtc.driver.cuda.compile_cuda_model)"
        )
    if not isinstance(opt_level, int) or not 0 <= opt_level <= 3:
        raise CompileError(f"opt_level must be 0, 1, 2 or 3, got {opt_level!r}")
    unknown = [s for s in dump_stages if s not in DUMP_STAGES]
    if unknown:
        raise CompileError(
            f"unknown IR stage {', '.join(unknown)}: choose among {', '.join(DUMP_STAGES)}"
        )
    if tuning_records is not None and opt_level < SCHEDULE_LEVEL:
        raise CompileError(
            f"tuning records set kernels' schedules, which start at -O{SCHEDULE_LEVEL}: "
            f"compile at -O{SCHEDULE_LEVEL} or -O3"
        )


def _tuning_records(path: str | os.PathLike[str] | None) -> TuningRecords | None:
    from xtc.driver.records import RecordsError, TuningRecords

    if path is None:
        return None
    try:
        return TuningRecords.load(path)
    except RecordsError as e:
        raise CompileError(str(e)) from None
