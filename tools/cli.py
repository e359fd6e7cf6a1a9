"""`xtc`: the command line for models, like `tvmc`.

    xtc compile model.onnx [--target llvm] [--input-shapes "data:[1,3,224,224]"] [-O3]
                [--print-pipeline] [--dump-ir graph,te,tir,llvm,asm] [--remarks] [--no-cache]
                [-j N] [--specialize "shape=[3,4]" ...] [--profile] [-o model.tar]
    xtc compile model.onnx --target cuda [--arch sm_80] [-O3] [--print-pipeline]
                [-o model.tar | -o model.ptx]
    xtc run model.tar [--inputs in.npz | --fill-mode random|zeros|ones] [--output out.npz]
                [--print-time --repeat N --number N] [--print-top N] [--profile]
    xtc import model.onnx [-o model.mlir] [--input-shapes "data:[1,3,224,224]"]
    xtc tune model.onnx [-o records.jsonl] [--trials N] [--time-budget 30m]
                [--tuner xgb|ga|random|grid] [--early-stopping N] [--workers N]
                [--runner local|ray] [--ray-address ADDR]
    xtc conformance [--models] [-k REGEX] [-j N] [--compiled] [--target cuda]
    xtc cache info|clear|dir

A model whose shapes depend on the values of some inputs (Reshape's `shape`
a graph input) is compiled for the values given with `--specialize`, one
native model each, into one artifact; `xtc compile` without them refuses and
names the inputs. `xtc run` of that artifact runs the values it holds (the
specialized inputs not in --inputs take the first's) and refuses others.

Exit status: 0 on success, 1 when xtc refuses the request (a bad model,
artifact, input or option: one line `xtc: error: ...` on stderr), 2 for a
command line argparse cannot parse. A traceback is a bug (`xtc: internal
error`, also 1). Results go to stdout, progress and reports to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from xtc import __version__

if TYPE_CHECKING:
    from xtc.driver.specializing import CompilingSpecializedModel
    from xtc.remarks import Remark
    from xtc.runtime.profile import ProfileResult


def _input_shapes(text: str | None) -> dict[str, list[int]] | None:
    """--input-shapes as a dict, None when not given (the ONNX frontend is
    imported only then: a compile-cache hit needs none)."""
    if not text:
        return None
    from xtc.frontend.onnx import parse_input_shapes

    return parse_input_shapes(text)


def cmd_import(args: argparse.Namespace) -> int:
    from xtc.driver.textual_ir import module_to_text
    from xtc.frontend.onnx import import_model

    shapes = _input_shapes(args.input_shapes)
    text = module_to_text(import_model(args.model, shapes))
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


class TextualIrError(Exception):
    """An .mlir file given where xtc takes a model: xtc-run and xtc-opt read it."""


def _refuse_textual_ir(path: str, expected: str) -> None:
    if Path(path).suffix == ".mlir":
        raise TextualIrError(
            f"'{path}' is textual IR, not {expected}: run it with xtc-run {path}, "
            f"transform it with xtc-opt {path} -p PASSES"
        )


def cmd_compile(args: argparse.Namespace) -> int:
    from xtc.driver.compiler import CompileError, compile_model
    from xtc.runtime.specialized_model import SpecializedModel
    from xtc.runtime.timing import NO_TIMER, Timer

    _refuse_textual_ir(args.model, "an ONNX model")
    if args.target == "cuda":
        return compile_for_cuda(args)
    shapes = _input_shapes(args.input_shapes)
    output = Path(args.output or Path(args.model).with_suffix(".tar").name)
    stages = [s.strip() for s in args.dump_ir.split(",") if s.strip()] if args.dump_ir else []
    dumped: list[Path] = []
    remarks: list[Remark] = []

    def dump(stage: str, text: str) -> None:
        path = output.with_name(output.name + DUMP_SUFFIXES[stage])
        path.write_text(text)
        dumped.append(path)

    started = time.perf_counter()
    bar = ProgressBar(sys.stderr) if sys.stderr.isatty() else None
    timer = Timer() if args.timing else NO_TIMER
    model = compile_model(
        args.model,
        args.target,
        shapes,
        args.opt_level,
        args.tuning_records,
        progress=bar.update if bar else None,
        dump=dump,
        dump_stages=stages,
        timer=timer,
        verify_each=True if args.verify_each else None,
        on_remark=remarks.append if args.remarks else None,
        cache=not args.no_cache,
        jobs=args.jobs,
        profile=args.profile,
    )
    if isinstance(model, SpecializedModel):
        return _export_specializations(args, model, output, started, bar)
    if args.specialize:
        raise CompileError(
            f"--specialize: {args.model} has no input that determines shapes (nothing to "
            "specialize on)"
        )
    if bar:
        bar.close()
    for remark in remarks:
        print(f"{args.model}: remark: {remark.text()}", file=sys.stderr)
    with timer.scope("export"):
        model.export(output)
    if args.timing:
        sys.stderr.write(timer.report())
    manifest = model.manifest
    if args.print_pipeline:
        print(manifest["pipeline"])
    cached = " (from the compile cache)" if manifest.get("compile_cache") == "hit" else ""
    print(
        f"xtc: compiled {args.model}{cached} in {time.perf_counter() - started:.1f} s -> {output} "
        f"(weights {_mib(manifest['weights_bytes'])}; arena {_mib(manifest['arena_bytes'])}, "
        f"{_mib(manifest['unplanned_bytes'])} without reuse)",
        file=sys.stderr,
    )
    for path in dumped:
        print(f"xtc: wrote {path}", file=sys.stderr)
    for note in _toolchain_notes(manifest.get("toolchain")):
        print(f"xtc: note: {note}", file=sys.stderr)
    return 0


def _export_specializations(
    args: argparse.Namespace,
    model: CompilingSpecializedModel,
    output: Path,
    started: float,
    bar: ProgressBar | None,
) -> int:
    """`xtc compile` of a model specialized on the values of some inputs:
    compiles each --specialize set of values into one artifact; without
    any, refuses (a tvmc user gets an artifact that runs, or a reason)."""
    from xtc.driver.compiler import CompileError

    inputs = ", ".join(model.specialized_inputs)
    if not args.specialize:
        example = " ".join(f"{n}=[...]" for n in model.specialized_inputs)
        raise CompileError(
            f"{args.model}: the shapes depend on the values of input {inputs} "
            f"({model.reason}): give the values to compile for with --specialize '{example}' "
            "(repeat the option for more; the artifact runs only those)"
        )
    for text in args.specialize:
        values = {n: model.value_of(n, v) for n, v in parse_specialization(text).items()}
        model.specialize(values)
    if bar:
        bar.close()
    model.export(output)
    if args.print_pipeline:
        for specialization in model.specializations:
            print(specialization.model.manifest["pipeline"])
    held = "; ".join(s.describe() for s in model.specializations)
    print(
        f"xtc: compiled {args.model} in {time.perf_counter() - started:.1f} s -> {output} "
        f"({len(model.specializations)} specializations on {inputs}: {held})",
        file=sys.stderr,
    )
    return 0


def parse_specialization(text: str) -> dict[str, Any]:
    """`"shape=[3, 4] axes=[0]"` -> {"shape": [3, 4], "axes": [0]} (JSON values)."""
    import json
    import re

    from xtc.driver.compiler import CompileError

    names = list(re.finditer(r"(?:^|\s)([^\s=]+)=", text))
    if not names or text[: names[0].start()].strip():
        raise CompileError(f"--specialize: cannot read {text!r}, expected NAME=VALUE ...")
    values: dict[str, Any] = {}
    for match, after in zip(names, [*names[1:], None], strict=True):
        raw = text[match.end() : after.start() if after else len(text)].strip()
        try:
            values[match.group(1)] = json.loads(raw)
        except ValueError:
            raise CompileError(
                f"--specialize: the value of {match.group(1)} is not a number or a list: {raw!r}"
            ) from None
    return values


CPU_ONLY_OPTIONS = ("tuning_records", "dump_ir", "timing", "remarks", "profile")


def compile_for_cuda(args: argparse.Namespace) -> int:
    """`xtc compile --target cuda`: a CUDA model.tar (PTX, cubin when ptxas
    is here, launch plan, weights), or the PTX alone for `-o x.ptx`."""
    from xtc.driver.compiler import CompileError
    from xtc.driver.cuda import compile_cuda, compile_cuda_model, cuda_pipeline
    from xtc.driver.specializing import CompilingSpecializedModel

    given = [o for o in CPU_ONLY_OPTIONS if getattr(args, o)]
    if given:
        option = "--" + given[0].replace("_", "-")
        raise CompileError(f"{option} is not supported with --target cuda yet")
    shapes = _input_shapes(args.input_shapes)
    output = Path(args.output or Path(args.model).with_suffix(".tar").name)
    started = time.perf_counter()
    if output.suffix == ".ptx" and args.specialize:
        raise CompileError("--specialize writes a model artifact (-o model.tar), not PTX")
    if output.suffix == ".ptx":
        text = compile_cuda(args.model, shapes, args.opt_level, args.arch)
        output.write_text(text)
        what = f"{text.count('.entry ')} kernels, PTX for {args.arch}"
    else:
        model = compile_cuda_model(args.model, shapes, args.opt_level, args.arch)
        if isinstance(model, CompilingSpecializedModel):
            return _export_specializations(args, model, output, started, None)
        if args.specialize:
            raise CompileError(
                f"--specialize: {args.model} has no input that determines shapes (nothing to "
                "specialize on)"
            )
        model.export(output)
        manifest = model.manifest
        binary = f", cubin for {args.arch}" if manifest["cubin_arch"] else ", no ptxas: PTX only"
        what = (
            f"{manifest['kernels']} kernels, {manifest['launches']} launches, PTX for "
            f"{args.arch}{binary}; weights {_mib(manifest['weights_bytes'])}, "
            f"temporaries {_mib(manifest['temporary_bytes'])}"
        )
    if args.print_pipeline:
        print(cuda_pipeline(args.opt_level))
    print(
        f"xtc: compiled {args.model} in {time.perf_counter() - started:.1f} s -> {output} ({what})",
        file=sys.stderr,
    )
    return 0


PARALLEL_LOOPS_RUN_ON = "parallel loops run on {library}"


def _toolchain_notes(toolchain: Any) -> list[str]:
    """A line for each tool that is not the system's (pip's zig cc, a pip
    OpenMP runtime for the parallel loops), so that no fallback is silent."""
    if not isinstance(toolchain, dict):
        return []
    notes: list[str] = []
    linker, openmp = toolchain.get("linker"), toolchain.get("openmp")
    for entry, what in ((linker, "linked with {name}"), (openmp, PARALLEL_LOOPS_RUN_ON)):
        if isinstance(entry, dict) and str(entry.get("from", "")).startswith("pip"):
            why = f": {entry['why']}" if entry.get("why") else ""
            notes.append(f"{what.format_map(entry)} ({entry['from']}){why}")
    return notes


DUMP_SUFFIXES = {
    "graph": ".graph.mlir",
    "te": ".te.mlir",
    "tir": ".tir.mlir",
    "llvm": ".ll",
    "asm": ".s",
}


def _mib(n: int) -> str:
    """A byte count for people: 812 B, 54.0 KiB, 97.4 MiB."""
    if n < 1024:
        return f"{n} B"
    if n < 1 << 20:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1 << 20):.1f} MiB"


class ProgressBar:
    """One line on a terminal: [####------] step 4/9 convert-te-to-tir 3.2 s."""

    def __init__(self, stream: TextIO, width: int = 24) -> None:
        self.stream = stream
        self.width = width
        self.started = time.perf_counter()

    def update(self, name: str, done: int, total: int) -> None:
        filled = self.width * done // max(1, total)
        elapsed = time.perf_counter() - self.started
        self.stream.write(
            f"\r[{'#' * filled}{'-' * (self.width - filled)}] {done}/{total} {name:<24} "
            f"{elapsed:5.1f} s"
        )
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\r" + " " * (self.width + 44) + "\r")
        self.stream.flush()


def cmd_run(args: argparse.Namespace) -> int:
    import numpy as np

    import xtc
    from xtc.runtime.specialized_model import SpecializedModel

    _refuse_textual_ir(args.artifact, "a model.tar")
    model = xtc.load(args.artifact)
    if isinstance(model, SpecializedModel):
        # the specialized inputs not given take the first specialization's values
        held = next(iter(model.held_values()), {})
        inputs = _run_inputs(model.input_specs, args.inputs, args.fill_mode, held)
        model, inputs = model.select(inputs)
    else:
        inputs = _run_inputs(model.input_specs, args.inputs, args.fill_mode)
    outputs = model.run(inputs)
    if args.output:
        np.savez(
            args.output, **{s.name: o for s, o in zip(model.output_specs, outputs, strict=True)}
        )
    if args.print_top:
        print(_top_table(model.output_specs[0].name, outputs[0], args.print_top))
    if args.print_time:
        print(model.benchmark(inputs, repeat=args.repeat, number=args.number).table(), end="")
    if args.profile:
        print(_profile(model, inputs, args.repeat * args.number).table(), end="")
    if not (args.output or args.print_top or args.print_time or args.profile):
        for spec, value in zip(model.output_specs, outputs, strict=True):
            print(
                f"{spec}: {np.array2string(value.ravel()[:8], precision=5)}"
                f"{' ...' if value.size > 8 else ''}"
            )
    return 0


def _profile(model: Any, inputs: dict[str, Any], runs: int) -> ProfileResult:
    """`xtc run --profile`: the kernels' times in `runs` runs of a model
    compiled with --profile; refused for any other."""
    from xtc.runtime.model import CompiledModel, InputError
    from xtc.runtime.profile import NotProfiledError

    if not isinstance(model, CompiledModel):
        raise InputError("--profile: only a model compiled for the CPU (llvm) is profiled")
    try:
        return model.profile(inputs, runs=runs)
    except NotProfiledError as e:
        raise InputError(f"--profile: {e}") from None


def _run_inputs(
    specs: Sequence[Any],
    npz: str | None,
    fill_mode: str | None,
    defaults: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The inputs from the .npz file (by name), the missing ones taken from
    `defaults`, else filled."""
    import numpy as np

    from xtc.runtime.model import InputError

    given: dict[str, Any] = {}
    if npz:
        try:
            with np.load(npz, allow_pickle=False) as data:
                given = {k: data[k] for k in data.files}
        except (OSError, ValueError, EOFError):
            raise InputError(f"{npz}: not a numpy .npz file of arrays") from None
        names = {s.name for s in specs}
        unknown = [k for k in given if k not in names]
        if unknown:
            takes = ", ".join(map(str, specs))
            raise InputError(
                f"{npz}: {', '.join(map(repr, unknown))} is not an input of the "
                f"model (the model takes {takes})"
            )
    for name, value in (defaults or {}).items():
        given.setdefault(name, value)
    if npz and fill_mode is None:
        return given
    rng = np.random.default_rng(0)
    mode = fill_mode or "random"
    for spec in specs:
        if spec.name not in given:
            given[spec.name] = _filled(spec, mode, rng)
    return given


def _filled(spec: Any, mode: str, rng: Any) -> Any:
    import numpy as np

    from xtc.dtypes import is_float_dtype

    if mode == "zeros":
        return np.zeros(spec.shape, spec.dtype)
    if mode == "ones":
        return np.ones(spec.shape, spec.dtype)
    if is_float_dtype(spec.dtype):
        return rng.random(spec.shape).astype(spec.dtype)
    return rng.integers(0, 2, spec.shape).astype(spec.dtype)


def _top_table(name: str, output: Any, count: int) -> str:
    import numpy as np

    flat = np.asarray(output).ravel()
    order = np.argsort(-flat, kind="stable")[:count]
    lines = [f"top {len(order)} of output {name!r}:", f"{'rank':>4} {'index':>8} {'value':>14}"]
    lines += [f"{r + 1:>4} {i:>8} {flat[i]:>14.6g}" for r, i in enumerate(order)]
    return "\n".join(lines)


def cmd_tune(args: argparse.Namespace) -> int:
    from xtc.tune.measure import MeasureOptions
    from xtc.tune.tuning import tune_model

    _refuse_textual_ir(args.model, "an ONNX model")
    shapes = _input_shapes(args.input_shapes)
    records = args.output or str(Path(args.model).with_suffix(".records.jsonl").name)
    options = MeasureOptions(
        threads=args.threads or _deployment_threads(), flush_cache=args.flush_cache
    )
    runner = None
    if args.runner == "ray":
        from xtc.tune.ray_runner import RayRunner

        runner = RayRunner(options, address=args.ray_address)
    bar = TuneProgress(args.trials)
    try:
        summary = tune_model(
            args.model,
            records,
            trials=args.trials,
            time_budget_s=args.time_budget,
            tuner=args.tuner,
            early_stopping=args.early_stopping,
            input_shapes=shapes,
            batch_size=args.batch_size,
            seed=args.seed,
            options=options,
            runner=runner,
            workers=args.workers,
            progress=bar.update,
        )
    finally:
        bar.close()
        if runner is not None:
            runner.close()
    print(summary.table())
    if summary.stale_records:
        print(
            f"xtc: {summary.stale_records} stale record(s) in {records}: they measured steps "
            "that today's recipes of their configs no longer make (xtc changed since); the "
            "cost model learnt them, and their configs were tuned as unmeasured",
            file=sys.stderr,
        )
    if summary.outside_records:
        print(
            f"xtc: {summary.outside_records} record(s) in {records} are of configs that "
            "today's tuning spaces no longer have (xtc changed since): left out of this "
            "tuning, kept in the file (a compile still replays the steps they measured)",
            file=sys.stderr,
        )
    print(
        f"xtc: {summary.trials} trials in {summary.seconds:.0f} s; records in {records} "
        f"(apply them: xtc compile {args.model} --tuning-records {records})",
        file=sys.stderr,
    )
    if summary.interrupted:
        print("xtc: interrupted: every finished measurement is in the records", file=sys.stderr)
        return 130
    return 0


def _deployment_threads() -> int:
    from xtc.runtime.llvm_jit import num_threads_from_environment

    return num_threads_from_environment() or os.cpu_count() or 1


class TuneProgress:
    """tqdm's bar over the trials: the kernel being tuned, its best GFLOP/s
    and the model's estimated speed-up so far."""

    def __init__(self, total: int) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=total, unit="trial", file=sys.stderr, dynamic_ncols=True)

    def update(self, task: str, done: int, total: int, gflops: float, speedup: float) -> None:
        self.bar.update(done - self.bar.n)
        self.bar.set_postfix_str(
            f"{task[:40]} {gflops:.0f} GFLOP/s, model x{speedup:.3f}", refresh=False
        )
        self.bar.set_description("tuning", refresh=True)

    def close(self) -> None:
        self.bar.close()


def _duration(text: str) -> float:
    """Seconds of "90", "90s", "30m", "1.5h"."""
    units = {"s": 1, "m": 60, "h": 3600}
    number, unit = (text[:-1], text[-1]) if text and text[-1] in units else (text, "s")
    try:
        seconds = float(number) * units[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a duration like 90s, 30m or 1.5h, got {text!r}"
        ) from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive duration, got {text!r}")
    return seconds


def cmd_conformance(args: argparse.Namespace, rest: Sequence[str]) -> int:
    from xtc.tools.conformance import main as conformance_main

    return conformance_main(rest)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="xtc", description="the xtc deep-learning compiler")
    parser.add_argument("--version", action="version", version=f"xtc {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    importer = commands.add_parser("import", help="print an ONNX model as graph IR")
    importer.add_argument("model", help="the .onnx file")
    importer.add_argument("-o", "--output", help="write the IR here instead of stdout")
    importer.add_argument(
        "--input-shapes",
        metavar="SHAPES",
        help="static shapes for inputs with symbolic dimensions: "
        '"name:[1,3,224,224] other:[1,128]"',
    )
    compiler = commands.add_parser("compile", help="compile an ONNX model to model.tar")
    compiler.add_argument("model", help="the .onnx file")
    compiler.add_argument(
        "--target",
        default="llvm",
        help="what to compile for (llvm: this CPU; cuda: NVIDIA GPUs, run through the CUDA driver)",
    )
    compiler.add_argument(
        "--arch", default="sm_80", help="the CUDA architecture for --target cuda (default sm_80)"
    )
    compiler.add_argument(
        "--input-shapes",
        metavar="SHAPES",
        help='static shapes for symbolic inputs: "name:[1,3,224,224] other:[1,128]"',
    )
    compiler.add_argument(
        "-O",
        dest="opt_level",
        type=int,
        choices=range(4),
        default=3,
        metavar="{0,1,2,3}",
        help="optimization level (default 3; 0 runs no graph pass)",
    )
    compiler.add_argument("--tuning-records", metavar="FILE", help="tuning records to apply")
    compiler.add_argument(
        "--print-pipeline",
        action="store_true",
        help="print the pass pipeline that built the model, the kernels' schedules "
        "included (an xtc-opt -p string), on stdout",
    )
    compiler.add_argument(
        "--dump-ir",
        metavar="STAGES",
        help="write the IR of these stages next to the output: graph,te,tir,llvm,asm",
    )
    compiler.add_argument(
        "--timing",
        action="store_true",
        help="print the time of each pass and stage on stderr (like mlir-opt --mlir-timing)",
    )
    compiler.add_argument(
        "--verify-each",
        action="store_true",
        help="verify the IR after every pass, not only at the end of each stage "
        "(slower; XTC_VERIFY_EACH=1 does the same)",
    )
    compiler.add_argument(
        "--remarks",
        action="store_true",
        help="print on stderr each fallback the compile took: a loop left scalar, "
        "a schedule step refused (like clang -Rpass-missed)",
    )
    compiler.add_argument(
        "--no-cache",
        action="store_true",
        help="compile even when the compile cache holds the model, and store nothing there",
    )
    compiler.add_argument(
        "-j",
        "--jobs",
        type=_positive,
        metavar="N",
        help="compile the kernels in N worker processes (default: XTC_COMPILE_JOBS, else the "
        "CPU count; 1: in this process)",
    )
    compiler.add_argument(
        "--specialize",
        action="append",
        metavar="VALUES",
        help="for a model whose shapes depend on input values (Reshape's shape an input): "
        'compile for these values, "shape=[3,4] axes=[0]"; repeat for more (required there)',
    )
    compiler.add_argument(
        "--profile",
        action="store_true",
        help="time each kernel call in the model (read by xtc run --profile; like tvmc run "
        "--profile)",
    )
    compiler.add_argument(
        "-o",
        "--output",
        help="the artifact (default: MODEL.tar here; for cuda, a .ptx name writes the PTX only)",
    )

    cache = commands.add_parser(
        "cache", help="the compile cache ($XDG_CACHE_HOME/xtc, else ~/.cache/xtc)"
    )
    cache.add_argument(
        "action",
        choices=("info", "clear", "dir"),
        help="info: its folder, entries and size; clear: remove every entry; dir: its folder",
    )

    runner = commands.add_parser("run", help="run a compiled model.tar")
    runner.add_argument("artifact", help="the model.tar that xtc compile wrote")
    runner.add_argument("--inputs", metavar="NPZ", help="input arrays by name (numpy .npz)")
    runner.add_argument(
        "--fill-mode",
        choices=("random", "zeros", "ones"),
        help="fill the inputs not given (default random when no --inputs)",
    )
    runner.add_argument("--output", metavar="NPZ", help="write the outputs by name (.npz)")
    runner.add_argument("--print-time", action="store_true", help="time the model")
    runner.add_argument("--repeat", type=_positive, default=5, help="timed blocks (default 5)")
    runner.add_argument(
        "--number", type=_positive, default=10, help="runs per timed block (default 10)"
    )
    runner.add_argument(
        "--print-top",
        type=_positive,
        metavar="N",
        help="print the N largest values of the first output",
    )
    runner.add_argument(
        "--profile",
        action="store_true",
        help="print each kernel's time in the model over repeat x number runs (the model "
        "compiled with --profile)",
    )

    tuner = commands.add_parser("tune", help="tune a model's kernels; write tuning records")
    tuner.add_argument("model", help="the .onnx file")
    tuner.add_argument(
        "-o", "--output", metavar="FILE", help="the records file (default: MODEL.records.jsonl)"
    )
    tuner.add_argument(
        "--trials", type=_positive, default=1000, help="candidates measured in all (default 1000)"
    )
    tuner.add_argument(
        "--time-budget", type=_duration, metavar="TIME", help="stop after this long: 90s, 30m, 2h"
    )
    tuner.add_argument(
        "--tuner",
        choices=("xgb", "ga", "random", "grid"),
        default="xgb",
        help="how candidates are chosen (default xgb: an XGBoost cost model)",
    )
    tuner.add_argument(
        "--early-stopping",
        type=_positive,
        metavar="N",
        help="stop tuning a kernel after N trials without improvement",
    )
    tuner.add_argument(
        "--input-shapes",
        metavar="SHAPES",
        help='static shapes for symbolic inputs: "name:[1,3,224,224] other:[1,128]"',
    )
    tuner.add_argument(
        "--threads",
        type=_positive,
        help="threads the kernels run with (default: XTC_NUM_THREADS, else all cores)",
    )
    tuner.add_argument(
        "--workers", type=_positive, default=1, help="measuring processes (default 1)"
    )
    tuner.add_argument(
        "--flush-cache",
        action="store_true",
        help="evict the caches before each timed call (kernels as cold as in a whole model)",
    )
    tuner.add_argument(
        "--batch-size", type=_positive, default=8, help="candidates per round (default 8)"
    )
    tuner.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    tuner.add_argument(
        "--runner",
        choices=("local", "ray"),
        default="local",
        help="where candidates are measured: local processes or a Ray cluster",
    )
    tuner.add_argument(
        "--ray-address", metavar="ADDR", help="the Ray cluster (default: RAY_ADDRESS, else local)"
    )

    commands.add_parser(
        "conformance",
        help="run ONNX's node conformance cases or shipped models (xtc conformance --help)",
        add_help=False,
    )
    return parser


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def cmd_cache(args: argparse.Namespace) -> int:
    from xtc.runtime.compile_cache import CompileCache

    store = CompileCache.default()
    if args.action == "dir":
        print(store.root)
    elif args.action == "clear":
        removed = store.clear()
        print(f"xtc: removed {removed} entr{'y' if removed == 1 else 'ies'} from {store.root}")
    else:
        info = store.info()
        print(f"folder   {info.root}")
        print(f"entries  {info.entries}")
        print(f"size     {_mib(info.size_bytes)}")
        width = max([8, *(len(kind) + 2 for kind in info.kinds)])
        for kind, (count, size) in sorted(info.kinds.items()):
            print(f"  {kind:<{width}}{count} ({_mib(size)})")
    return 0


COMMANDS = {
    "import": cmd_import,
    "compile": cmd_compile,
    "run": cmd_run,
    "tune": cmd_tune,
    "cache": cmd_cache,
}


def main(argv: Sequence[str] | None = None) -> None:
    from xtc.plugin_warnings import report_plugin_warnings_as

    report_plugin_warnings_as("xtc")
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv[:1] == ["conformance"]:
        sys.exit(cmd_conformance(argparse.Namespace(), argv[1:]))
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        sys.exit(0)
    try:
        sys.exit(COMMANDS[args.command](args))
    except SystemExit:  # before _user_errors(), whose imports an exit need not pay
        raise
    except _user_errors() as e:
        print(f"xtc: error: {_one_line(e)}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # noqa: BLE001 - last resort: a message, not a traceback
        if os.environ.get("XTC_TRACEBACK"):
            traceback.print_exc()
        print(
            f"xtc: internal error: {type(e).__name__}: {e} "
            "(please report it; XTC_TRACEBACK=1 shows the traceback)",
            file=sys.stderr,
        )
        sys.exit(1)


def _user_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean "xtc refuses this", each with its message."""
    from xdsl.utils.exceptions import DiagnosticException, VerifyException

    from xtc.driver.compiler import CompileError
    from xtc.driver.records import RecordsError
    from xtc.frontend.onnx import OnnxImportError
    from xtc.runtime.artifact import ArtifactError
    from xtc.runtime.compile_cache import CacheError
    from xtc.runtime.cuda_driver import CudaError
    from xtc.runtime.library import LibraryError
    from xtc.runtime.model import InputError
    from xtc.runtime.native_abi import ThreadCountError
    from xtc.tune.tuning import TuneError

    return (
        TextualIrError,
        OnnxImportError,
        CompileError,
        RecordsError,
        TuneError,
        LibraryError,
        ArtifactError,
        CacheError,
        CudaError,
        InputError,
        ThreadCountError,
        DiagnosticException,
        VerifyException,
        OSError,
    )


def _one_line(error: BaseException) -> str:
    if isinstance(error, OSError) and error.filename is not None:
        return f"{error.filename}: {error.strerror or error}"
    return str(error).strip()


if __name__ == "__main__":
    main()
