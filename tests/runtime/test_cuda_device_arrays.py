"""CUDA inputs read in place (__dlpack__, __cuda_array_interface__) and
outputs left on the device (`run(..., outputs="device")`), without a GPU: a
driver over host memory stands in for libcuda, each launch run by the
gpu-level interpreter on the memory at the pointers it is given, so a
pointer passed wrong gives wrong numbers."""

from __future__ import annotations

import ctypes
import gc
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from xtc.driver.cuda import compile_cuda_model
from xtc.interp.gpu import GpuFunctions
from xtc.runtime import cuda_driver, dlpack
from xtc.runtime.cuda_model import KERNELS_IR_NAME, CudaModel, InterpreterDevice, parse_kernels
from xtc.runtime.device_array import DeviceArray
from xtc.runtime.dlpack import KDL_CPU, KDL_CUDA, make_capsule, read_capsule
from xtc.runtime.errors import InputError


def tensor(name: str, shape: list[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def matmul_sigmoid() -> onnx.ModelProto:
    """x[4,16] @ w[16,8] -> sigmoid."""
    weight = np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
        helper.make_node("Sigmoid", ["m"], ["y"], name="sigmoid"),
    ]
    graph = helper.make_graph(
        nodes, "ms", [tensor("x", [4, 16])], [tensor("y", [4, 8])],
        [numpy_helper.from_array(weight, "w")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def add_relu() -> onnx.ModelProto:
    """relu(a + b), a and b [4,8]."""
    nodes = [
        helper.make_node("Add", ["a", "b"], ["s"], name="add"),
        helper.make_node("Relu", ["s"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes, "ar", [tensor("a", [4, 8]), tensor("b", [4, 8])], [tensor("y", [4, 8])]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


class HostMemoryDriver:
    """CudaDriver's calls over host memory: "device" pointers are host
    addresses, and each launch runs its kernel in the interpreter on them."""

    device = 0

    def __init__(self, kernels_text: str) -> None:
        self.interp = InterpreterDevice(parse_kernels(kernels_text))
        self.blocks: dict[int, ctypes.Array[ctypes.c_char]] = {}
        self.freed: list[int] = []
        self.uploads: list[int] = []
        self.launched: list[list[int]] = []
        self.replays = 0

    def compute_capability(self) -> tuple[int, int]:
        return 8, 0

    def load_module(self, image: bytes) -> int:
        return 1

    def function(self, module: int, name: str) -> Any:
        return name

    def allocate(self, nbytes: int) -> int:
        block = ctypes.create_string_buffer(max(1, nbytes))
        self.blocks[ctypes.addressof(block)] = block
        return ctypes.addressof(block)

    def free(self, pointer: int) -> None:
        del self.blocks[pointer]
        self.freed.append(pointer)

    def upload(self, pointer: int, host: int, nbytes: int) -> None:
        self.uploads.append(pointer)
        ctypes.memmove(pointer, host, nbytes)

    def download(self, host: int, pointer: int, nbytes: int) -> None:
        ctypes.memmove(host, pointer, nbytes)

    def synchronize(self) -> None:
        pass

    def synchronize_all(self) -> None:
        pass

    def launch(self, function: Any, grid: Any, block: Any, pointers: Sequence[int]) -> None:
        kernel = self.interp.kernels[function]
        types = kernel.function_type.inputs
        args = tuple(_host_view(p, t) for p, t in zip(pointers, types, strict=True))
        functions: GpuFunctions = self.interp.functions
        with np.errstate(all="ignore"):
            functions.launch(self.interp.interpreter, kernel, tuple(grid), tuple(block), args)
        self.launched.append(list(pointers))

    def capture(self, launches: Any) -> int:
        self.graph = list(launches)
        return 1

    def replay(self, graph: int) -> None:
        self.replays += 1
        for function, grid, block, pointers in self.graph:
            self.launch(function, grid, block, pointers)


def _host_view(pointer: int, t: Any) -> np.ndarray:
    """The memory at host address `pointer` as the kernel parameter's memref type."""
    from xtc.dialects.graph.constant import numpy_dtype

    dtype = numpy_dtype(t.get_element_type())
    shape = tuple(t.get_shape())
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = (ctypes.c_uint8 * nbytes).from_address(pointer)
    return np.ctypeslib.as_array(raw).view(dtype).reshape(shape)


class CudaTensor:
    """A host array posing as a CUDA DLPack tensor (device 2, id `device_id`)."""

    def __init__(self, array: np.ndarray, device_id: int = 0, strided: bool = False) -> None:
        self.array = array
        self.device_id = device_id
        self.strided = strided

    def __dlpack_device__(self) -> tuple[int, int]:
        return KDL_CUDA, self.device_id

    def __dlpack__(self, **kwargs: Any) -> Any:
        strides = tuple(s // self.array.itemsize for s in self.array.strides)
        return make_capsule(
            self.array.ctypes.data, self.array.shape, self.array.dtype,
            (KDL_CUDA, self.device_id), self, strides if self.strided else None,
        )  # fmt: skip


def on_host_gpu(
    model: onnx.ModelProto, monkeypatch: pytest.MonkeyPatch
) -> tuple[CudaModel, HostMemoryDriver]:
    compiled = compile_cuda_model(model)
    driver = HostMemoryDriver((compiled.directory / KERNELS_IR_NAME).read_text())
    monkeypatch.setattr(cuda_driver, "CudaDriver", lambda: driver)
    compiled.open_device()
    return compiled, driver


def reference(model: onnx.ModelProto, inputs: list[np.ndarray]) -> list[np.ndarray]:
    return compile_cuda_model(model, device="interp").run(inputs)


def random(shape: tuple[int, ...], seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_a_dlpack_capsule_is_read_and_marked_used() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    capsule = x.__dlpack__()
    view = read_capsule(capsule)
    assert (view.pointer, view.device, view.shape) == (x.ctypes.data, "cpu", (3, 4))
    assert view.dtype == np.float32 and view.is_contiguous()
    with pytest.raises(dlpack.DLPackError, match="unused DLPack capsule"):
        read_capsule(capsule)  # renamed "used_dltensor"
    view.release()
    transposed = read_capsule(x.T.__dlpack__())
    assert transposed.strides == (1, 4) and not transposed.is_contiguous()
    transposed.release()


def test_an_unused_capsule_lets_its_owner_go() -> None:
    before = dlpack.live_capsules()
    capsule = CudaTensor(random((2, 2))).__dlpack__()
    assert dlpack.live_capsules() == before + 1
    del capsule
    gc.collect()
    assert dlpack.live_capsules() == before


def test_cuda_dlpack_inputs_are_read_in_place_and_released(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model, driver = on_host_gpu(add_relu(), monkeypatch)
    a, b = random((4, 8), 1), random((4, 8), 2)
    before = dlpack.live_capsules()
    got = model.run([CudaTensor(a), b])
    np.testing.assert_allclose(got[0], np.maximum(a + b, 0), rtol=1e-6)
    assert a.ctypes.data in driver.launched[0] and a.ctypes.data not in driver.uploads
    assert driver.replays == 0  # launches on a caller's memory are not the graph's
    assert dlpack.live_capsules() == before  # the deleter ran
    model.run([a, b])
    assert driver.replays == 1


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (CudaTensor(np.zeros((4, 8))), r"input 'a' has dtype float64, the model takes float32"),
        (CudaTensor(np.zeros((8, 4), np.float32)), r"input 'a' has shape \[8, 4\]"),
        (CudaTensor(np.zeros((4, 8), np.float32), device_id=1), "is on CUDA device 1"),
        (
            CudaTensor(np.zeros((8, 4), np.float32).T, strided=True),
            r"input 'a' has strides \[1, 4\]: make it contiguous",
        ),
    ],
)
def test_a_wrong_cuda_input_is_one_line_and_released(
    monkeypatch: pytest.MonkeyPatch, value: CudaTensor, message: str
) -> None:
    model, _ = on_host_gpu(add_relu(), monkeypatch)
    before = dlpack.live_capsules()
    with pytest.raises(InputError, match=message):
        model.run([value, np.zeros((4, 8), np.float32)])
    assert dlpack.live_capsules() == before


def test_dlpack_inputs_from_another_device_or_on_the_interpreter_are_refused() -> None:
    model = compile_cuda_model(add_relu(), device="interp")

    class OpenClTensor:
        def __dlpack_device__(self) -> tuple[int, int]:
            return 4, 0

        def __dlpack__(self, **kwargs: Any) -> Any:
            raise AssertionError("not read")

    zeros = np.zeros((4, 8), np.float32)
    with pytest.raises(InputError, match="DLPack device type 4: xtc takes host"):
        model.run([OpenClTensor(), zeros])
    with pytest.raises(InputError, match="need the cuda device"):
        model.run([CudaTensor(zeros), zeros])


def test_a_cpu_dlpack_tensor_is_taken_as_numpy() -> None:
    class CpuTensor:
        def __init__(self, array: np.ndarray) -> None:
            self.array = array

        def __dlpack_device__(self) -> tuple[int, int]:
            return KDL_CPU, 0

        def __dlpack__(self, **kwargs: Any) -> Any:
            return self.array.__dlpack__(**kwargs)

    model = compile_cuda_model(add_relu(), device="interp")
    a, b = random((4, 8), 1), random((4, 8), 2)
    np.testing.assert_array_equal(model.run([CpuTensor(a), b])[0], model.run([a, b])[0])


def test_device_outputs_stay_on_the_device_and_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    first, first_driver = on_host_gpu(matmul_sigmoid(), monkeypatch)
    second, _ = on_host_gpu(add_relu(), monkeypatch)
    x, b = random((4, 16)), random((4, 8), 2)
    (y,) = first.run([x], outputs="device")
    assert isinstance(y, DeviceArray) and (y.shape, y.dtype) == ((4, 8), np.float32)
    interface = y.__cuda_array_interface__
    assert interface["data"][0] == y.pointer and interface["typestr"] == "<f4"
    assert y.pointer in first_driver.blocks and y.pointer in first_driver.launched[-1]
    expected = reference(matmul_sigmoid(), [x])[0]
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
    chained = second.run([y, b])[0]  # __cuda_array_interface__, in place
    np.testing.assert_allclose(chained, np.maximum(expected + b, 0), rtol=1e-6)
    assert y.__dlpack_device__() == (KDL_CUDA, 0)
    view = read_capsule(y.__dlpack__())
    assert (view.pointer, view.shape, view.device) == (y.pointer, (4, 8), "cuda")
    pointer = y.pointer
    del y
    gc.collect()
    assert pointer not in first_driver.freed  # the capsule's consumer still reads it
    view.release()
    gc.collect()
    assert pointer in first_driver.freed


def test_device_outputs_need_the_gpu_and_a_known_kind() -> None:
    model = compile_cuda_model(add_relu(), device="interp")
    zeros = np.zeros((4, 8), np.float32)
    with pytest.raises(InputError, match="outputs='device' needs the cuda device"):
        model.run([zeros, zeros], outputs="device")
    with pytest.raises(InputError, match="outputs must be 'numpy' or 'device', got 'gpu'"):
        model.run([zeros, zeros], outputs="gpu")
