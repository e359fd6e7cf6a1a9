"""ONNX's node conformance cases through xtc.

`python -m xtc.tools.conformance` (or `xtc conformance`) collects the node
test cases of the installed `onnx` package, imports each model, runs it on the
case's inputs (all of them, at run time; inputs that determine shapes are
specialized on their values, see driver/specializing.py) and compares with
the case's outputs at the case's rtol/atol.
Each case runs in a worker process with a timeout: a crash or a hang costs
that case only. Prints a per-op table and `N passed, N failed`. The
collected cases are kept in the compile cache (`xtc cache info` lists them
as `onnx-node-cases`), one entry per onnx, numpy and Python: collecting them
runs every case's generator, which took 13 s in each process.

`--models` runs the model directories that ship in the onnx package instead
(`backend/test/data/pytorch-converted`, `pytorch-operator` and `simple`:
models exported by PyTorch or written by hand, most of them opset 6, which the
importer upgrades). Each directory's `model.onnx` runs on its
`test_data_set_*/input_*.pb` and is compared with `output_*.pb`; the table
has one row per model, and `--compiled`, `-k`, `--timeout` work as for the
node cases.

`--target cuda` adds a `cuda` path beside the CPU interpreter's: each case
is compiled for CUDA (PTX for sm_90, assembled by `ptxas -arch=sm_90` when
ptxas is on PATH), then, where it is cheap, run on the interpreter device
(the gpu-level interpreter, threads in lockstep) within
`--check-timeout` seconds and compared with the case's outputs. A case is
`passed` (built and checked), `built` (built, not checked: the interpreter
device ran past its time), `failed` (built, outputs differ),
`ptxas-refused`, or did not build. The summary gives built, ptxas-accepted,
checked and passed counts, and how many of the cases the CPU interpreter
passes were built for CUDA.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from functools import cached_property
from types import FrameType
from typing import IO, Any

INTERPRETER = ("interp",)
BOTH = ("interp", "native")
MODEL_KINDS = ("pytorch-converted", "pytorch-operator", "simple")
"""The directories of onnx/backend/test/data that `--models` runs."""
CUDA = "cuda"
CUDA_ARCH = "sm_90"
CUDA_BUILT = ("passed", "built", "failed", "ptxas-refused")
"""The statuses of the cuda path whose PTX was built."""
CHECK_SECONDS = 10.0
BFLOAT16_RTOL = 2**-6
"""The least rtol of a bfloat16 output: two bfloat16 ulps, as onnx's own
backend test runner compares them (`assert_similar_outputs`)."""
"""The default time the interpreter device gets per case."""


@dataclass
class CaseResult:
    name: str
    op: str
    path: str
    status: str  # passed | failed | unsupported | error | timeout | crashed
    detail: str = ""


CASES_CACHE_KIND = "onnx-node-cases"
"""The compile cache's kind for the collected node cases (one entry per
onnx, numpy and Python): collecting runs every case's generator, 13 s on a
2.1 GHz Xeon, in the main process and in every worker."""


def _collect() -> dict[str, Any]:
    """The node test cases by name: the cache's entry for this onnx, else
    collected and stored there (an entry that does not unpickle is
    collected again)."""
    from xtc.runtime.compile_cache import CompileCache

    cache = CompileCache.default()
    key = _cases_key()
    stored = cache.get(CASES_CACHE_KIND, key)
    if stored is not None:
        try:
            return pickle.loads(stored)
        except Exception:  # noqa: BLE001 - any unpickling failure: collect again
            pass
    cases = _collect_testcases()
    try:
        payload = pickle.dumps(cases, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - a case onnx made unpicklable: collect each time
        return cases
    cache.put(CASES_CACHE_KIND, key, payload)
    return cases


def _cases_key() -> str:
    """What the collected cases depend on: onnx (its version and place),
    numpy and ml_dtypes (the arrays' pickles) and Python."""
    import ml_dtypes
    import numpy as np
    import onnx

    return (
        f"onnx {onnx.__version__} at {os.path.dirname(onnx.__file__)}; numpy {np.__version__}; "
        f"ml_dtypes {ml_dtypes.__version__}; python {sys.version}"
    )


def _collect_testcases() -> dict[str, Any]:
    """The node test cases by name, from onnx's generators (quietly:
    collecting them warns a lot)."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import numpy as np

        with np.errstate(all="ignore"):
            return {case.name: case for case in collect_testcases(None)}


@dataclass
class ModelCase:
    """A shipped model directory, shaped like a node case: `model` and
    `data_sets` [(inputs, outputs)] are read from the directory when asked."""

    name: str
    kind: str
    directory: str
    rtol: float
    atol: float

    @cached_property
    def model(self) -> Any:
        import onnx

        return onnx.load(os.path.join(self.directory, "model.onnx"))

    @property
    def data_sets(self) -> list[tuple[list[Any], list[Any]]]:
        import glob

        model = self.model
        initializers = {t.name for t in model.graph.initializer}
        inputs = [i for i in model.graph.input if i.name not in initializers]
        sets = []
        for folder in sorted(glob.glob(os.path.join(self.directory, "test_data_set_*"))):
            sets.append(
                (
                    _read_tensors(folder, "input", inputs),
                    _read_tensors(folder, "output", list(model.graph.output)),
                )
            )
        return sets


def _read_tensors(folder: str, prefix: str, declared: Sequence[Any]) -> list[Any]:
    """`folder/prefix_0.pb`, ... as numpy arrays; a value that is not a
    tensor (a sequence, an optional) is refused naming its file."""
    from onnx import TensorProto, numpy_helper

    arrays = []
    for index, value_info in enumerate(declared):
        path = os.path.join(folder, f"{prefix}_{index}.pb")
        if not value_info.type.HasField("tensor_type"):
            raise ValueError(f"{os.path.basename(path)} is not a tensor")
        tensor = TensorProto()
        with open(path, "rb") as f:
            tensor.ParseFromString(f.read())
        arrays.append(numpy_helper.to_array(tensor))
    return arrays


def _collect_models() -> dict[str, ModelCase]:
    """The model directories of MODEL_KINDS by test name."""
    from onnx.backend.test import loader

    return {
        t.name: ModelCase(t.name, t.kind, t.model_dir, t.rtol, t.atol)
        for kind in MODEL_KINDS
        for t in loader.load_model_tests(kind=kind)
        if t.model_dir is not None  # the shipped directories always have one
    }


def op_of(case: Any, cases: dict[str, Any] | None = None) -> str:
    """The op a case tests: its single node's type; for a function-expanded
    case, the op of the case it expands, else the op named in the case. A
    shipped model's row is its directory, `kind/name`."""
    if isinstance(case, ModelCase):
        return f"{case.kind}/{case.name.removeprefix('test_')}"
    nodes = case.model.graph.node
    if len(nodes) == 1:
        return str(nodes[0].op_type)
    original = re.sub(r"_expanded.*$", "", case.name)
    if cases and original != case.name and original in cases:
        return op_of(cases[original])
    stem = original.removeprefix("test_")
    types = {str(n.op_type) for n in nodes}
    for t in sorted(types, key=len, reverse=True):
        if stem.replace("_", "").lower().startswith(t.lower()):
            return t
    return str(nodes[0].op_type) if nodes else "?"


def _is_narrow_float(dtype: Any) -> bool:
    """An ml_dtypes float type (bfloat16, float8_*, float4_*)."""
    import ml_dtypes

    try:
        ml_dtypes.finfo(dtype)
    except ValueError:
        return False
    return dtype.kind == "V"


def _compare(name: str, got: Any, expected: Any, rtol: float, atol: float) -> str:
    """Empty when equal within tolerance, else why not."""
    import numpy as np

    expected = np.asarray(expected)
    got = np.asarray(got)
    if expected.dtype.kind in "OSU":
        return _compare_strings(name, got, expected)
    if got.shape != expected.shape:
        return f"output '{name}' has shape {list(got.shape)}, expected {list(expected.shape)}"
    if got.dtype != expected.dtype:
        return f"output '{name}' has dtype {got.dtype}, expected {expected.dtype}"
    if expected.dtype.name == "bfloat16":
        rtol = max(rtol, BFLOAT16_RTOL)
    if _is_narrow_float(expected.dtype):  # bf16, float8, float4: numpy compares them as bytes
        got, expected = got.astype(np.float32), expected.astype(np.float32)
    if expected.dtype.kind in "fc":
        with np.errstate(all="ignore"):
            ok = np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
        if not ok.all():
            worst = float(np.nanmax(np.abs(got.astype(np.float64) - expected.astype(np.float64))))
            bad = int((~ok).sum())
            return f"output '{name}' differs: {bad} of {ok.size} values, max abs error {worst:.3g}"
        return ""
    if not np.array_equal(got, expected):
        return f"output '{name}' differs in {int((got != expected).sum())} of {got.size} values"
    return ""


def _compare_strings(name: str, got: Any, expected: Any) -> str:
    """`_compare` for a string output: the same shape and the same str
    values (bytes read as UTF-8)."""

    def text(value: Any) -> str:
        return value.decode("utf-8") if isinstance(value, bytes) else str(value)

    if got.dtype.kind not in "OSU":
        return f"output '{name}' has dtype {got.dtype}, expected strings"
    if got.shape != expected.shape:
        return f"output '{name}' has shape {list(got.shape)}, expected {list(expected.shape)}"
    differ = [
        text(g) != text(e) for g, e in zip(got.reshape(-1), expected.reshape(-1), strict=True)
    ]
    if any(differ):
        return f"output '{name}' differs in {sum(differ)} of {got.size} strings"
    return ""


def _compare_value(name: str, got: Any, expected: Any, rtol: float, atol: float) -> str:
    """`_compare` for an output that may be a sequence (a list, compared
    item by item) or an optional (None when it has no value)."""
    if expected is None or got is None:
        if expected is None and got is None:
            return ""
        return f"output '{name}' is {'absent' if got is None else 'present'}, expected otherwise"
    if isinstance(expected, (list, tuple)):
        if not isinstance(got, (list, tuple)):
            return f"output '{name}' is a tensor, expected a sequence"
        if len(got) != len(expected):
            return f"output '{name}' has {len(got)} tensors, expected {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            why = _compare_value(f"{name}[{i}]", g, e, rtol, atol)
            if why:
                return why
        return ""
    if isinstance(got, (list, tuple)):
        return f"output '{name}' is a sequence, expected a tensor"
    return _compare(name, got, expected, rtol, atol)


def _arrays(values: Sequence[Any]) -> list[Any]:
    """Case data as numpy arrays (some cases give TensorProtos)."""
    from onnx import TensorProto, numpy_helper

    return [numpy_helper.to_array(v) if isinstance(v, TensorProto) else v for v in values]


def _judge(
    case: Any,
    run: Callable[[list[Any]], list[Any]],
    inputs: list[Any],
    expected: list[Any],
    judged_by_caller: tuple[type[Exception], ...] = (),
) -> tuple[str, str] | None:
    """Runs one data set of a case (`run(inputs)`) and compares its outputs: None when they
    match, else (status, detail); an import error is "unsupported" (an
    unsupported node) or "error", any other exception an "error", except
    those `judged_by_caller`, which go through."""
    import numpy as np

    from xtc.frontend.onnx import OnnxImportError

    try:
        with np.errstate(all="ignore"):
            got = run(inputs)
    except judged_by_caller:
        raise
    except OnnxImportError as e:
        return ("unsupported" if "unsupported node" in str(e) else "error", str(e))
    except Exception as e:  # noqa: BLE001 - reported per case
        return ("error", f"{type(e).__name__}: {e}")
    if len(got) != len(expected):
        return ("failed", f"{len(got)} outputs, expected {len(expected)}")
    names = [o.name for o in case.model.graph.output]
    for name, g, e in zip(names, got, expected, strict=True):
        why = _compare_value(name, g, e, case.rtol, case.atol)
        if why:
            return ("failed", why)
    return None


def run_case(case: Any, path: str) -> CaseResult:
    """Imports and runs one case on `path` ("interp" or "native").

    Every input of the case is fed at run time. Inputs that determine shapes
    (axes, sizes, counts) are specialized on: the model is imported and built
    for each data set's values of them (driver/specializing.py), and the
    result's detail names them."""
    from xtc.driver.onnx_backend import specializing_model

    op = op_of(case)
    try:
        data_sets = case.data_sets
    except Exception as e:  # noqa: BLE001 - unreadable case data, reported per case
        return CaseResult(case.name, op, path, "error", f"data: {type(e).__name__}: {e}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = specializing_model(case.model, path)
        for raw_inputs, raw_outputs in data_sets:
            inputs, outputs = _arrays(raw_inputs), _arrays(raw_outputs)
            verdict = _judge(case, model.run, list(inputs), outputs)
            if verdict is not None:
                status, detail = verdict
                return CaseResult(case.name, op, path, status, detail)
    specialized = model.specialized_inputs
    detail = f"specialized on inputs {specialized}" if specialized else ""
    return CaseResult(case.name, op, path, "passed", detail)


class CheckSkipped(BaseException):
    """The interpreter device ran past the case's time (a BaseException, so
    that the interpreter's own `except Exception` lets it through)."""


class CheckError(Exception):
    """The interpreter device failed on a model that was built."""


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Raises CheckSkipped in the block once `seconds` have passed (SIGALRM:
    the worker runs cases on its main thread)."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise CheckSkipped

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


CHECK_DEVICE_VARIABLE = "XTC_CONFORMANCE_CHECK_DEVICE"
"""How `--check-on` reaches the worker processes (they inherit it)."""


class CudaBuilder:
    """Builds each specialization of a case for CUDA (PTX, then ptxas) and
    returns a runner on the interpreter device; the runs of all of the
    case's data sets share `budget` seconds, past which they are skipped."""

    def __init__(self, budget: float) -> None:
        self.budget = budget
        self.device = os.environ.get(CHECK_DEVICE_VARIABLE, "interp")

    def __call__(self, module: Any, frozen: Any) -> Callable[[list[Any]], list[Any]]:
        from xtc.driver.cuda import compile_cuda_model

        cuda_model = compile_cuda_model(module, arch=CUDA_ARCH, device=self.device)

        def check(inputs: list[Any]) -> list[Any]:
            if self.budget <= 0:
                raise CheckSkipped
            started = time.monotonic()
            try:
                with _deadline(self.budget):
                    return cuda_model.run(inputs)
            except Exception as e:
                raise CheckError(f"{type(e).__name__}: {e}") from e
            finally:
                self.budget -= time.monotonic() - started

        return check


def run_cuda_case(case: Any, check_seconds: float) -> CaseResult:
    """Builds one case for CUDA and, within `check_seconds`, checks it on
    the interpreter device (see the module doc for the statuses)."""
    from xtc.driver.cuda import PtxasError
    from xtc.driver.specializing import SpecializingModel

    op = op_of(case)
    try:
        data_sets = case.data_sets
    except Exception as e:  # noqa: BLE001 - unreadable case data, reported per case
        return CaseResult(case.name, op, CUDA, "error", f"data: {type(e).__name__}: {e}")
    model = SpecializingModel(case.model, CudaBuilder(check_seconds), control_regions=False)
    unchecked = ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for raw_inputs, raw_outputs in data_sets:
            inputs, outputs = _arrays(raw_inputs), _arrays(raw_outputs)
            try:
                verdict = _judge(case, model.run, list(inputs), outputs, (CheckError, PtxasError))
            except CheckSkipped:
                unchecked = f"not checked: the interpreter device ran past {check_seconds:g} s"
                continue
            except CheckError as e:
                verdict = ("failed", f"interpreter device: {e}")
            except PtxasError as e:
                verdict = ("ptxas-refused", str(e))
            if verdict is not None:
                status, detail = verdict
                return CaseResult(case.name, op, CUDA, status, detail)
    return CaseResult(case.name, op, CUDA, "built" if unchecked else "passed", unchecked)


def worker_main(models: bool = False, check_seconds: float = CHECK_SECONDS) -> None:
    """Reads `name path` lines on stdin, answers one JSON line per case (of
    the shipped models when `models`); the cuda path checks within
    `check_seconds`."""
    cases: dict[str, Any] = dict(_collect_models()) if models else _collect()
    print("ready", flush=True)
    for line in sys.stdin:
        name, path = line.split()
        case = cases[name]
        try:
            if path == CUDA:
                result = run_cuda_case(case, check_seconds)
            else:
                result = run_case(case, path)
            result.op = op_of(case, cases)
        except Exception as e:  # noqa: BLE001 - a bug in xtc, counted as an error
            result = CaseResult(name, op_of(case, cases), path, "error", f"{type(e).__name__}: {e}")
        print(json.dumps(asdict(result)), flush=True)


class Worker:
    """One worker process; restarted after a crash or a timeout."""

    def __init__(self, models: bool = False, check_seconds: float = CHECK_SECONDS) -> None:
        self.models = models
        self.check_seconds = check_seconds
        self.process = subprocess.Popen(
            [sys.executable, "-m", "xtc.tools.conformance", "--worker"]
            + (["--models"] if models else [])
            + ["--check-timeout", repr(check_seconds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
        self.ready = False
        self.case: tuple[str, str] | None = None
        self.started = 0.0

    @property
    def stdout(self) -> IO[str]:
        assert self.process.stdout is not None
        return self.process.stdout

    def send(self, name: str, path: str) -> None:
        assert self.process.stdin is not None
        self.case = (name, path)
        self.started = time.monotonic()
        self.process.stdin.write(f"{name} {path}\n")
        self.process.stdin.flush()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()


def run_all(
    names: Sequence[str],
    paths: Sequence[str],
    jobs: int,
    timeout: float,
    ops: dict[str, str],
    models: bool = False,
    check_seconds: float = CHECK_SECONDS,
) -> Iterator[CaseResult]:
    """Runs every (case, path) on `jobs` workers (shipped models when
    `models`; the cuda path checking within `check_seconds`); yields
    results as they come."""
    import selectors

    todo = [(n, p) for n in names for p in paths]
    todo.reverse()
    workers = [Worker(models, check_seconds) for _ in range(max(1, min(jobs, len(todo))))]
    selector = selectors.DefaultSelector()
    for w in workers:
        selector.register(w.stdout, selectors.EVENT_READ, w)
    busy = 0
    try:
        while todo or busy:
            for w in workers:
                if w.ready and w.case is None and todo:
                    w.send(*todo.pop())
                    busy += 1
            for key, _ in selector.select(timeout=1.0):
                w = key.data
                line = w.stdout.readline()
                if not line:  # the worker died: its case crashed it
                    selector.unregister(w.stdout)
                    if w.case is not None:
                        name, path = w.case
                        busy -= 1
                        yield CaseResult(
                            name, ops[name], path, "crashed", f"exit code {w.process.wait()}"
                        )
                    fresh = Worker(models, check_seconds)
                    workers[workers.index(w)] = fresh
                    selector.register(fresh.stdout, selectors.EVENT_READ, fresh)
                elif line.strip() == "ready":
                    w.ready = True
                else:
                    busy -= 1
                    w.case = None
                    yield CaseResult(**json.loads(line))
            now = time.monotonic()
            for w in list(workers):
                if w.case is not None and now - w.started > timeout:
                    name, path = w.case
                    selector.unregister(w.stdout)
                    w.kill()
                    busy -= 1
                    yield CaseResult(name, ops[name], path, "timeout", f"over {timeout:g} s")
                    fresh = Worker(models, check_seconds)
                    workers[workers.index(w)] = fresh
                    selector.register(fresh.stdout, selectors.EVENT_READ, fresh)
    finally:
        for w in workers:
            w.kill()


def summarize(results: list[CaseResult], paths: Sequence[str], out: IO[str], top: int) -> None:
    by_op: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    for r in results:
        by_op[r.op][r.path][r.status] += 1
    width = max([28, *(len(op) + 2 for op in by_op)])
    header = f"{'op':{width}}" + "".join(
        f"{p + ' pass/total':>22}" if p != CUDA else f"{'cuda built/checked/pass/total':>32}"
        for p in paths
    )
    print(header, file=out)
    for op in sorted(by_op):
        cells = ""
        for p in paths:
            c = by_op[op][p]
            if p == CUDA:
                built = sum(c[s] for s in CUDA_BUILT)
                checked = c["passed"] + c["failed"]
                cell = f"{built}/{checked}/{c['passed']}/{sum(c.values())}"
                cells += f"{cell:>25}{'':7}"
            else:
                cells += f"{c['passed']:>14}/{sum(c.values()):<7}"
        print(f"{op:{width}}{cells}", file=out)
    failing = Counter(r.op for r in results if r.status not in ("passed", "built"))
    print(
        "\nops failing most: " + ", ".join(f"{op} {n}" for op, n in failing.most_common(top)),
        file=out,
    )
    for p in paths:
        if p == CUDA:
            summarize_cuda(results, out, top)
            continue
        c = Counter(r.status for r in results if r.path == p)
        others = ", ".join(
            f"{c[s]} {s}" for s in ("unsupported", "error", "timeout", "crashed") if c[s]
        )
        specialized = sum(1 for r in results if r.path == p and r.status == "passed" and r.detail)
        print(
            f"{p}: {specialized} of the passes specialized on the values of shape inputs "
            "(every input is fed at run time)",
            file=out,
        )
        print(
            f"{p}: {c['passed']} passed, {sum(c.values()) - c['passed']} failed "
            f"({others or 'none other'})",
            file=out,
        )


def _cause(detail: str) -> str:
    """A failure's message with names and numbers blanked, so that the
    cases one cause fails group together."""
    general = re.sub(r"\d+", "N", re.sub(r"'[^']*'", "'…'", detail))
    return general if len(general) <= 100 else general[:99] + "…"


def summarize_cuda(results: list[CaseResult], out: IO[str], top: int = 15) -> None:
    """The cuda path's counts, its builds among the cases the CPU
    interpreter passes (the `interp` results of the same run), and the
    `top` causes of the ones it did not build."""
    cuda = {r.name: r.status for r in results if r.path == CUDA}
    cpu_passed = {r.name for r in results if r.path == "interp" and r.status == "passed"}
    causes = Counter(
        f"{r.status}: {_cause(r.detail)}"
        for r in results
        if r.path == CUDA and r.name in cpu_passed and r.status not in CUDA_BUILT
    )
    if causes:
        print(f"\n{CUDA}: why cases the CPU interpreter passes were not built:", file=out)
        for cause, count in causes.most_common(top):
            print(f"{count:>6}  {cause}", file=out)
    c = Counter(cuda.values())
    built = sum(c[s] for s in CUDA_BUILT)
    ptxas = shutil.which("ptxas")
    accepted = (
        f"ptxas-accepted {built - c['ptxas-refused']} (ptxas -arch={CUDA_ARCH}: {ptxas})"
        if ptxas
        else "ptxas-accepted 0 (ptxas is not on PATH: not run)"
    )
    others = ", ".join(
        f"{c[s]} {s}"
        for s in ("ptxas-refused", "unsupported", "error", "timeout", "crashed")
        if c[s]
    )
    print(
        f"{CUDA}: built {built} of {len(cuda)}, {accepted}, numerically checked "
        f"{c['passed'] + c['failed']}, passed {c['passed']}, built only {c['built']} "
        f"({others or 'none other'})",
        file=out,
    )
    built_of_cpu = sum(1 for n in cpu_passed if cuda.get(n) in CUDA_BUILT)
    ratio = f"{100 * built_of_cpu / len(cpu_passed):.1f}%" if cpu_passed else "n/a"
    print(
        f"{CUDA}: built {built_of_cpu} of the {len(cpu_passed)} cases the CPU interpreter "
        f"passes ({ratio})",
        file=out,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="xtc conformance",
        description="run ONNX's node test cases (or, with --models, the model "
        "directories that ship in the onnx package) through xtc",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--models",
        action="store_true",
        help="run the shipped models of onnx/backend/test/data/{"
        + ",".join(MODEL_KINDS)
        + "} with their test data sets, one row per model",
    )
    parser.add_argument("-k", "--filter", default="", help="regex on case names")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    parser.add_argument("--json", metavar="FILE", help="write every case's result to FILE")
    parser.add_argument(
        "--compiled",
        action="store_true",
        help="also compile each case to native code and run it (two columns)",
    )
    parser.add_argument(
        "--target",
        choices=("cpu", CUDA),
        default="cpu",
        help="cuda: also build each case for CUDA (PTX, ptxas) and check it on the "
        "interpreter device (a column beside the CPU interpreter's)",
    )
    parser.add_argument(
        "--check-timeout",
        type=float,
        default=CHECK_SECONDS,
        metavar="SECONDS",
        help="--target cuda: time the interpreter device gets per case; past it "
        "the case counts as built, not checked (0: build only)",
    )
    parser.add_argument(
        "--check-on",
        choices=("interp", "cuda"),
        default="interp",
        help="--target cuda: check on the interpreter device (default) or on the GPU",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print every failure")
    parser.add_argument("--top", type=int, default=15, help="ops failing most to list")
    args = parser.parse_args(argv)
    if args.worker:
        worker_main(args.models, args.check_timeout)
        return 0
    os.environ[CHECK_DEVICE_VARIABLE] = args.check_on
    if args.check_timeout < 0:
        parser.error(f"--check-timeout must be 0 or more, got {args.check_timeout:g}")
    cases: dict[str, Any] = dict(_collect_models()) if args.models else _collect()
    try:
        pattern = re.compile(args.filter)
    except re.error as e:
        parser.error(f"--filter: {e}")
    names = sorted(n for n in cases if pattern.search(n))
    if not names:
        parser.error(f"no case matches '{args.filter}'")
    ops = {n: op_of(cases[n], cases) for n in names}
    results: list[CaseResult] = []
    paths = (BOTH if args.compiled else INTERPRETER) + ((CUDA,) if args.target == CUDA else ())
    for r in run_all(names, paths, args.jobs, args.timeout, ops, args.models, args.check_timeout):
        results.append(r)
        if args.verbose and r.status != "passed":
            print(f"{r.status:12} {r.name} [{r.path}]: {r.detail[:300]}", flush=True)
    results.sort(key=lambda r: (r.name, r.path))
    if args.json:
        with open(args.json, "w") as f:
            json.dump([asdict(r) for r in results], f, indent=1)
    summarize(results, paths, sys.stdout, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
