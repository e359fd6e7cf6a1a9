"""A model compiled for CUDA, in this process: its PTX (and a cubin when
`ptxas` made one), its launch plan and weights (runtime/cuda_plan.py),
replayed on a device.

    m = xtc.compile("model.onnx", target="cuda")
    m.run({"data": x})     # numpy arrays (copied) or CUDA arrays (read in place)
    m.benchmark([x])       # CUDA events around CUDA-graph replays
    m.export("model.tar")

Two devices run a plan: `cuda` (the GPU through the CUDA driver API,
runtime/cuda_driver.py; the default) and `interp` (numpy buffers, each
kernel run by the gpu-level interpreter, its threads in lockstep: it
checks the plan and the kernels numerically where there is no GPU). The
device opens on the first run, so building and exporting need no GPU.

On the GPU, weights are copied once; inputs given as numpy arrays are
copied to buffers the model owns, and then one CUDA graph replays every
launch. A CUDA array (C-contiguous) is read where it lies: one with
`__cuda_array_interface__` (CuPy, PyTorch, Numba) or `__dlpack__` on a CUDA
device (PyTorch, CuPy, JAX: the capsule read with ctypes,
runtime/dlpack.py); a CPU DLPack tensor is taken as numpy. Outputs come
back as new numpy arrays, or with `run(inputs, outputs="device")` as
DeviceArrays that stay on the GPU (runtime/device_array.py), each owning
its memory, to feed the next model; a run on arrays other than the
model's own buffers issues its launches one by one.

    a = first.run({"x": x}, outputs="device")     # stays on the GPU
    y = second.run([a[0]])                        # read in place
    torch.from_dlpack(a[0])                       # no copy either

A run-time check (`tir.assert`) that fails in a kernel raises InputError
with its message, as on the CPU: the interpreter device stops at it; on
the GPU the kernel stores its fault word into `@xtc_gpu_fault`
(lowering/convert_gpu_to_nvvm.py), read after the run."""

from __future__ import annotations

import json
import tarfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from xdsl.dialects import gpu
from xdsl.dialects.builtin import MemRefType, ModuleOp

from xtc.runtime.archive import MANIFEST_NAME, ArtifactError
from xtc.runtime.cuda_plan import Launch, Plan
from xtc.runtime.device_array import DeviceArray
from xtc.runtime.dlpack import (
    KDL_CPU,
    KDL_CUDA,
    KDL_CUDA_HOST,
    KDL_CUDA_MANAGED,
    DLPackError,
    read_capsule,
)
from xtc.runtime.errors import InputError
from xtc.runtime.model import (
    BenchmarkResult,
    TensorSpec,
    check_tensor,
    ordered_inputs,
)

if TYPE_CHECKING:
    from xtc.dialects.tir import AssertOp

PTX_NAME = "kernels.ptx"
CUBIN_NAME = "kernels.cubin"
KERNELS_IR_NAME = "kernels.mlir"
PLAN_NAME = "plan.json"
WEIGHTS_NAME = "weights.bin"
CUDA_MEMBERS = (MANIFEST_NAME, PTX_NAME, KERNELS_IR_NAME, PLAN_NAME, WEIGHTS_NAME)
"""The files of a CUDA artifact; CUBIN_NAME too when the manifest names a cubin."""
DEVICES = ("cuda", "interp")


class Device(Protocol):
    """Where a plan's buffers live and its kernels run."""

    def allocate(self, nbytes: int) -> Any: ...
    def upload(self, buffer: Any, data: np.ndarray) -> None: ...
    def download(self, buffer: Any, out: np.ndarray) -> None: ...
    def run(self, launches: Sequence[Launch], buffers: Sequence[Any]) -> None: ...
    def synchronize(self) -> None: ...


def parse_kernels(text: str) -> ModuleOp:
    """The gpu-level module text (kernels only) the interpreter device runs."""
    from xdsl.context import Context
    from xdsl.dialects.arith import Arith
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func
    from xdsl.dialects.gpu import GPU
    from xdsl.dialects.llvm import LLVM
    from xdsl.dialects.math import Math
    from xdsl.dialects.memref import MemRef
    from xdsl.dialects.scf import Scf
    from xdsl.parser import Parser

    from xtc.dialects.tir import TIR

    ctx = Context()
    for dialect in (Builtin, Func, Arith, Math, MemRef, GPU, Scf, TIR, LLVM):  # LLVM: shuffles
        ctx.load_dialect(dialect)
    return Parser(ctx, text, "kernels.mlir").parse_module()


class InterpreterDevice:
    """numpy byte buffers; each launch runs its kernel with the gpu-level
    interpreter (xtc.interp.gpu), its threads in lockstep."""

    def __init__(self, kernels: ModuleOp) -> None:
        from xtc.interp import make_interpreter
        from xtc.interp.gpu import GpuFunctions

        self.interpreter = make_interpreter(kernels)
        self.functions = GpuFunctions()
        self.interpreter.register_implementations(self.functions, override=True)
        self.kernels = {op.sym_name.data: op for op in kernels.walk() if isinstance(op, gpu.FuncOp)}

    def allocate(self, nbytes: int) -> np.ndarray:
        return np.zeros(nbytes, np.uint8)

    def upload(self, buffer: np.ndarray, data: np.ndarray) -> None:
        buffer[: data.nbytes] = np.ascontiguousarray(data).reshape(-1).view(np.uint8)

    def download(self, buffer: np.ndarray, out: np.ndarray) -> None:
        out.reshape(-1).view(np.uint8)[:] = buffer[: out.nbytes]

    def run(self, launches: Sequence[Launch], buffers: Sequence[np.ndarray]) -> None:
        from xtc.interp import RunTimeFault

        for launch in launches:
            kernel = self.kernels.get(launch.kernel)
            if kernel is None:
                raise ArtifactError(f"the model has no kernel {launch.kernel}")
            args = tuple(
                _view(buffers[b], offset, t)
                for (b, offset), t in zip(launch.args, kernel.function_type.inputs, strict=True)
            )
            try:
                with np.errstate(all="ignore"):
                    self.functions.launch(self.interpreter, kernel, launch.grid, launch.block, args)
            except RunTimeFault as fault:  # a failed tir.assert: what the GPU reports
                raise InputError(str(fault)) from None

    def synchronize(self) -> None:
        pass


def _view(buffer: np.ndarray, offset: int, t: Any) -> np.ndarray:
    """The bytes of `buffer` from `offset` seen as the kernel parameter's memref type."""
    from xtc.dialects.graph.constant import numpy_dtype

    assert isinstance(t, MemRefType)
    dtype = numpy_dtype(t.get_element_type())
    shape = tuple(t.get_shape())
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    return buffer[offset : offset + nbytes].view(dtype).reshape(shape)


class CudaDevice:
    """The GPU, through the CUDA driver: device pointers, the kernels of the
    cubin when it was built for this GPU, else of the PTX (JIT)."""

    def __init__(self, ptx: str, cubin: bytes | None, cubin_arch: str | None) -> None:
        from xtc.runtime.cuda_driver import CudaDriver

        self.driver = CudaDriver()
        major, minor = self.driver.compute_capability()
        self.arch = f"sm_{major}{minor}"
        if cubin is not None and cubin_arch is not None and _runs_on(cubin_arch, major, minor):
            self.module, self.loaded = self.driver.load_module(cubin), "cubin"
        else:
            self.module, self.loaded = self.driver.load_module(ptx.encode()), "ptx"
        self.functions: dict[str, int] = {}
        self.checks: list[AssertOp] = []
        self.fault_address: int | None = None

    def watch_faults(self, checks: list[AssertOp]) -> None:
        """Reads the kernels' fault word after each run (they have `checks`)."""
        from xtc.lowering.convert_gpu_to_nvvm import FAULT_GLOBAL

        self.checks = checks
        self.fault_address = self.driver.global_address(self.module, FAULT_GLOBAL)

    def raise_fault(self) -> None:
        """InputError with the message of a check that failed in the last
        run (the fault word cleared for the next), if one did."""
        from xtc.lowering.convert_gpu_to_nvvm import fault_message

        if self.fault_address is None:
            return
        word = np.zeros(1, np.int64)
        self.driver.download(word.ctypes.data, self.fault_address, word.nbytes)
        self.driver.synchronize()
        if word[0] != 0:
            self.driver.upload(self.fault_address, np.zeros(1, np.int64).ctypes.data, 8)
            self.driver.synchronize()
            raise InputError(fault_message(self.checks, int(word[0]) & ((1 << 64) - 1)))

    def function(self, name: str) -> int:
        if name not in self.functions:
            self.functions[name] = self.driver.function(self.module, name)
        return self.functions[name]

    def allocate(self, nbytes: int) -> int:
        return self.driver.allocate(nbytes)

    def upload(self, buffer: int, data: np.ndarray) -> None:
        data = np.ascontiguousarray(data)
        self.driver.upload(buffer, data.ctypes.data, data.nbytes)
        self.driver.synchronize()  # `data` may be a temporary

    def download(self, buffer: int, out: np.ndarray) -> None:
        self.driver.download(out.ctypes.data, buffer, out.nbytes)

    def bound(self, launches: Sequence[Launch], buffers: Sequence[int]) -> list[Any]:
        return [
            (self.function(launch.kernel), launch.grid, launch.block,
             [buffers[b] + offset for b, offset in launch.args])
            for launch in launches
        ]  # fmt: skip

    def run(self, launches: Sequence[Launch], buffers: Sequence[int]) -> None:
        for function, grid, block, pointers in self.bound(launches, buffers):
            self.driver.launch(function, grid, block, pointers)

    def synchronize(self) -> None:
        self.driver.synchronize()


def _runs_on(arch: str, major: int, minor: int) -> bool:
    """Whether a cubin for `arch` (sm_XY) runs on a GPU of compute capability major.minor."""
    digits = arch.removeprefix("sm_").rstrip("a")
    if not digits.isdigit() or len(digits) < 2:
        return False
    return int(digits[:-1]) == major and int(digits[-1]) <= minor


@dataclass
class DeviceInput:
    """An input read where it lies on the GPU: its device address, and what
    to call once the run no longer reads it (a DLPack capsule's deleter)."""

    pointer: int
    release: Callable[[], None] = lambda: None


OUTPUT_KINDS = ("numpy", "device")


def model_input(value: Any, spec: TensorSpec) -> np.ndarray | DeviceInput:
    """`value` as input `spec`: a host array (numpy, anything np.asarray
    takes, a CPU DLPack tensor) or a CUDA array read in place
    (__cuda_array_interface__, or __dlpack__ on a CUDA device); InputError
    for a wrong dtype, shape, device or layout."""
    if not isinstance(value, np.ndarray):
        if hasattr(value, "__cuda_array_interface__"):
            return _interface_input(value, spec)
        if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
            device_type = int(value.__dlpack_device__()[0])
            if device_type in (KDL_CUDA, KDL_CUDA_MANAGED):
                return _dlpack_input(value, spec)
            if device_type not in (KDL_CPU, KDL_CUDA_HOST):
                raise InputError(
                    f"input {spec.name!r} is on DLPack device type {device_type}: xtc takes "
                    "host (CPU) or CUDA arrays"
                )
            value = np.from_dlpack(value)
    try:
        array = np.asarray(value)
    except Exception as e:  # noqa: BLE001 - any conversion failure is the user's input
        raise InputError(f"input {spec.name!r} is not an array: {e}") from None
    check_tensor(spec, array.shape, array.dtype)
    return array


def _interface_input(value: Any, spec: TensorSpec) -> DeviceInput:
    """The device address of a __cuda_array_interface__ object, checked."""
    interface = value.__cuda_array_interface__
    shape = tuple(int(d) for d in interface["shape"])
    dtype = np.dtype(interface["typestr"])
    check_tensor(spec, shape, dtype)
    strides = interface.get("strides")
    if strides is not None and tuple(strides) != _c_strides(shape, dtype.itemsize):
        raise InputError(f"input {spec.name!r} is a strided device array: make it contiguous")
    return DeviceInput(int(interface["data"][0]))


def _dlpack_input(value: Any, spec: TensorSpec) -> DeviceInput:
    """The device address of a CUDA DLPack tensor, checked; its deleter is
    the input's release."""
    try:
        view = read_capsule(value.__dlpack__())
    except (BufferError, TypeError, RuntimeError, DLPackError) as e:
        raise InputError(f"input {spec.name!r}: __dlpack__ failed ({e})") from None
    try:
        if view.device_id != 0:
            raise InputError(
                f"input {spec.name!r} is on CUDA device {view.device_id}: xtc runs on device 0"
            )
        check_tensor(spec, view.shape, view.dtype or view.dtype_text)
        if not view.is_contiguous():
            raise InputError(
                f"input {spec.name!r} has strides {list(view.strides or ())}: make it "
                "contiguous (.contiguous(), cupy.ascontiguousarray)"
            )
    except InputError:
        view.release()
        raise
    return DeviceInput(view.pointer, view.release)


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides: list[int] = []
    step = itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


@dataclass
class CudaModel:
    """A CUDA model (see the module doc). `directory` holds the artifact's
    files; `device` is "cuda" or "interp"."""

    directory: Path
    manifest: dict[str, Any]
    input_specs: list[TensorSpec]
    output_specs: list[TensorSpec]
    plan: Plan
    owner: Any = None
    device: str = "cuda"
    _device: Any = field(default=None, repr=False)
    _buffers: list[Any] = field(default_factory=list[Any], repr=False)
    _graph: int | None = field(default=None, repr=False)

    def open_device(self) -> Device:
        """The device, opened and loaded with the weights on first use;
        CudaError without a CUDA driver or device."""
        if self._device is not None:
            return self._device
        if self.device not in DEVICES:
            raise InputError(f"unknown device {self.device!r}: choose cuda or interp")
        if self.device == "interp":
            text = (self.directory / KERNELS_IR_NAME).read_text()
            device: Any = InterpreterDevice(parse_kernels(text))
        else:
            cubin_path = self.directory / CUBIN_NAME
            cubin = cubin_path.read_bytes() if cubin_path.is_file() else None
            ptx = (self.directory / PTX_NAME).read_text()
            device = CudaDevice(ptx, cubin, self.manifest.get("cubin_arch"))
            kernels_text = (self.directory / KERNELS_IR_NAME).read_text()
            if "tir.assert" in kernels_text:
                from xtc.lowering.convert_gpu_to_nvvm import kernel_checks

                device.watch_faults(kernel_checks(parse_kernels(kernels_text)))
        weights = np.frombuffer(bytes(self.plan.weights), np.uint8)
        buffers: list[Any] = []
        for buffer in self.plan.buffers:
            handle = device.allocate(buffer.nbytes)
            if buffer.kind == "weight":
                device.upload(handle, weights[buffer.offset : buffer.offset + buffer.nbytes])
            buffers.append(handle)
        self._device, self._buffers = device, buffers
        return device

    def _arguments(self, inputs: Any) -> list[np.ndarray | DeviceInput]:
        """Each input as a host array to copy, or a device array to read in place."""
        values = ordered_inputs(self.input_specs, inputs)
        arguments: list[np.ndarray | DeviceInput] = []
        try:
            for value, spec in zip(values, self.input_specs, strict=True):
                arguments.append(model_input(value, spec))
            if self.device != "cuda" and any(isinstance(a, DeviceInput) for a in arguments):
                raise InputError(
                    "device arrays (__cuda_array_interface__, __dlpack__) need the cuda device"
                )
        except BaseException:
            _release(arguments)
            raise
        return arguments

    def run(self, inputs: Any, outputs: str = "numpy") -> list[Any]:
        """The outputs for `inputs` (a dict by name, or a list in the
        model's input order), in the output order: new numpy arrays, or
        with `outputs="device"` new DeviceArrays that stay on the GPU
        (runtime/device_array.py: __cuda_array_interface__ and __dlpack__,
        so they feed the next model with no copy)."""
        if outputs not in OUTPUT_KINDS:
            raise InputError(f"outputs must be 'numpy' or 'device', got {outputs!r}")
        if outputs == "device" and self.device != "cuda":
            raise InputError("outputs='device' needs the cuda device")
        arguments = self._arguments(inputs)
        try:
            return self._run(arguments, outputs == "device")
        finally:
            _release(arguments)

    def _run(self, arguments: list[np.ndarray | DeviceInput], on_device: bool) -> list[Any]:
        device = self.open_device()
        buffers = list(self._buffers)
        for number, argument in zip(self.plan.buffers_of("input"), arguments, strict=True):
            if isinstance(argument, DeviceInput):
                buffers[number] = argument.pointer
            else:
                device.upload(buffers[number], argument)
        results: list[Any] = []
        if on_device:
            assert isinstance(device, CudaDevice)
            results = self._device_outputs(device, buffers)
        foreign = any(isinstance(a, DeviceInput) for a in arguments)
        if isinstance(device, CudaDevice) and foreign:
            # the device arrays may still be written on the stream of their library
            device.driver.synchronize_all()
        if isinstance(device, CudaDevice) and not (foreign or on_device):
            device.driver.replay(self._captured(device))
        else:
            # the graph holds the model's own buffers: launches on others go one by one
            device.run(self.plan.launches, buffers)
        if not on_device:
            results = [np.empty(s.shape, s.dtype) for s in self.output_specs]
            for number, out in zip(self.plan.buffers_of("output"), results, strict=True):
                device.download(buffers[number], out)
        device.synchronize()
        if isinstance(device, CudaDevice):
            device.raise_fault()
        return results

    def _device_outputs(self, device: CudaDevice, buffers: list[Any]) -> list[DeviceArray]:
        """A new device array for each output, put in place of its buffer."""
        results: list[DeviceArray] = []
        for number, spec in zip(self.plan.buffers_of("output"), self.output_specs, strict=True):
            array = DeviceArray(
                device.driver, device.allocate(self.plan.buffers[number].nbytes), spec.shape,
                spec.dtype,
            )  # fmt: skip
            buffers[number] = array.pointer
            results.append(array)
        return results

    def _captured(self, device: CudaDevice) -> int:
        """The CUDA graph of every launch on the model's own buffers."""
        if self._graph is None:
            self._graph = device.driver.capture(device.bound(self.plan.launches, self._buffers))
        return self._graph

    def benchmark(
        self, inputs: Any, repeat: int = 5, number: int = 10, warmup: int = 1
    ) -> BenchmarkResult:
        """Times `repeat` blocks of `number` runs after `warmup` runs: on
        the GPU, CUDA events around `number` replays of the model's graph
        (inputs copied once, before); on the interpreter, wall time."""
        if repeat < 1 or number < 1 or warmup < 0:
            raise ValueError("repeat and number must be at least 1, warmup at least 0")
        self.run(inputs)
        device = self.open_device()
        runs: list[float] = []
        if isinstance(device, CudaDevice):
            graph = self._captured(device)
            start, end = device.driver.event(), device.driver.event()
            for _ in range(warmup):
                device.driver.replay(graph)
            for _ in range(repeat):
                device.driver.record(start)
                for _ in range(number):
                    device.driver.replay(graph)
                device.driver.record(end)
                runs.append(device.driver.elapsed_ms(start, end) / number)
            return BenchmarkResult(tuple(runs), number)
        for _ in range(warmup):
            device.run(self.plan.launches, self._buffers)
        for _ in range(repeat):
            started = time.perf_counter()
            for _ in range(number):
                device.run(self.plan.launches, self._buffers)
            runs.append((time.perf_counter() - started) * 1000.0 / number)
        return BenchmarkResult(tuple(runs), number)

    def export(self, path: str | Path) -> Path:
        """Writes the artifact (model.tar: manifest, PTX, cubin, plan, weights, kernels IR)."""
        return write_cuda_archive(self.directory, self.manifest, Path(path))


def _release(arguments: Sequence[np.ndarray | DeviceInput]) -> None:
    for argument in arguments:
        if isinstance(argument, DeviceInput):
            argument.release()


def cuda_members(manifest: dict[str, Any]) -> tuple[str, ...]:
    return CUDA_MEMBERS + ((CUBIN_NAME,) if manifest.get("cubin_arch") else ())


def write_cuda_archive(directory: Path, manifest: dict[str, Any], path: Path) -> Path:
    """The artifact files in `directory` as a tar archive at `path` (replaced atomically)."""
    partial = path.with_name(path.name + ".partial")
    try:
        with tarfile.open(partial, "w") as archive:
            for name in cuda_members(manifest):
                archive.add(directory / name, arcname=name, recursive=False)
        partial.replace(path)
    except OSError as e:
        partial.unlink(missing_ok=True)
        raise ArtifactError(f"cannot write {path}: {e.strerror or e}") from None
    return path


def open_cuda_model(
    directory: Path, manifest: dict[str, Any], owner: Any = None, device: str = "cuda"
) -> CudaModel:
    """A CudaModel over `directory` holding a CUDA artifact's files."""
    from xtc.runtime.cuda_plan import PlanError

    try:
        inputs = [TensorSpec.from_json(e) for e in manifest["inputs"]]
        outputs = [TensorSpec.from_json(e) for e in manifest["outputs"]]
        plan_json = json.loads((directory / PLAN_NAME).read_text())
        plan = Plan.from_json(plan_json, (directory / WEIGHTS_NAME).read_bytes())
    except (KeyError, TypeError, ValueError, PlanError) as e:
        raise ArtifactError(f"{directory}: malformed CUDA artifact ({e})") from None
    return CudaModel(directory, manifest, inputs, outputs, plan, owner, device)
