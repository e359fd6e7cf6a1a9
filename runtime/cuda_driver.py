"""A small ctypes binding to the CUDA driver API (`libcuda.so.1`), opened
when a model first runs on the GPU: building a CUDA model needs neither the
CUDA toolkit nor a GPU.

Design choice: ctypes instead of `cuda-python`, so that running on a GPU
needs no extra dependency (the driver ships with the NVIDIA kernel module).
Objects that expose `__cuda_array_interface__` are read without importing
anything (runtime/cuda_model.py).

What it covers is what a compiled model needs: the primary context of
device 0, modules loaded from PTX (JIT by the driver) or a cubin, kernels,
device memory, copies (synchronous and on a stream), launches, streams,
events for timing, and CUDA graphs, so that one run of a model replays all
its launches with one call. Each failing call is a `CudaError` of one line
naming the CUDA error (`cuGetErrorName`)."""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

DRIVER_LIBRARY = "libcuda.so.1"
CUDA_SUCCESS = 0
CUDA_ERROR_NO_DEVICE = 100
CU_STREAM_NON_BLOCKING = 1
CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
_JIT_ERROR_LOG_BUFFER = 5
_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
_JIT_LOG_BYTES = 8192

_void_p = ctypes.c_void_p


class CudaError(RuntimeError):
    """The CUDA driver is missing, has no device, or refused a call."""


def _signatures() -> dict[str, tuple[object, ...]]:
    """argtypes of each driver function used (all return CUresult)."""
    size_t, uint, ptr = ctypes.c_size_t, ctypes.c_uint, _void_p
    pptr, u64 = ctypes.POINTER(_void_p), ctypes.c_uint64
    return {
        "cuInit": (uint,),
        "cuDeviceGetCount": (ctypes.POINTER(ctypes.c_int),),
        "cuDeviceGet": (ctypes.POINTER(ctypes.c_int), ctypes.c_int),
        "cuDeviceGetName": (ctypes.c_char_p, ctypes.c_int, ctypes.c_int),
        "cuDeviceGetAttribute": (ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int),
        "cuDevicePrimaryCtxRetain": (pptr, ctypes.c_int),
        "cuCtxSetCurrent": (ptr,),
        "cuModuleLoadData": (pptr, ctypes.c_char_p),
        "cuModuleLoadDataEx": (pptr, ctypes.c_char_p, uint, ptr, ptr),
        "cuModuleGetFunction": (pptr, ptr, ctypes.c_char_p),
        "cuModuleGetGlobal_v2": (ctypes.POINTER(u64), ctypes.POINTER(size_t), ptr, ctypes.c_char_p),
        "cuMemAlloc_v2": (ctypes.POINTER(u64), size_t),
        "cuMemFree_v2": (u64,),
        "cuMemcpyHtoD_v2": (u64, ptr, size_t),
        "cuMemcpyDtoH_v2": (ptr, u64, size_t),
        "cuMemcpyHtoDAsync_v2": (u64, ptr, size_t, ptr),
        "cuMemcpyDtoHAsync_v2": (ptr, u64, size_t, ptr),
        "cuLaunchKernel": (ptr, uint, uint, uint, uint, uint, uint, uint, ptr, pptr, pptr),
        "cuStreamCreate": (pptr, uint),
        "cuStreamSynchronize": (ptr,),
        "cuCtxSynchronize": (),
        "cuEventCreate": (pptr, uint),
        "cuEventRecord": (ptr, ptr),
        "cuEventSynchronize": (ptr,),
        "cuEventElapsedTime": (ctypes.POINTER(ctypes.c_float), ptr, ptr),
        "cuStreamBeginCapture_v2": (ptr, ctypes.c_int),
        "cuStreamEndCapture": (ptr, pptr),
        "cuGraphInstantiateWithFlags": (pptr, ptr, ctypes.c_ulonglong),
        "cuGraphLaunch": (ptr, ptr),
        "cuGraphExecDestroy": (ptr,),
        "cuGraphDestroy": (ptr,),
    }


def open_driver(library: str | None = None) -> ctypes.CDLL:
    """The driver library (DRIVER_LIBRARY unless named) with its functions
    typed; CudaError when absent."""
    library = library or DRIVER_LIBRARY
    try:
        driver = ctypes.CDLL(library)
    except OSError:
        raise CudaError(f"no CUDA driver found ({library})") from None
    for name, argtypes in _signatures().items():
        function = getattr(driver, name, None)
        if function is None:
            raise CudaError(f"the CUDA driver ({library}) has no {name}: update the driver")
        function.argtypes = list(argtypes)
        function.restype = ctypes.c_int
    driver.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    driver.cuGetErrorName.restype = ctypes.c_int
    return driver


class CudaDriver:
    """Device 0 of the CUDA driver, its primary context current, and one
    non-blocking stream every copy and launch goes on."""

    def __init__(self, library: str | None = None) -> None:
        self._driver = open_driver(library)
        status = self._driver.cuInit(0)
        if status == CUDA_ERROR_NO_DEVICE:
            raise CudaError("no CUDA device")
        self._check(status, "cuInit")
        count = ctypes.c_int(0)
        self._call("cuDeviceGetCount", ctypes.byref(count))
        if count.value < 1:
            raise CudaError("no CUDA device")
        device = ctypes.c_int(0)
        self._call("cuDeviceGet", ctypes.byref(device), 0)
        self.device = device.value
        context = _void_p()
        self._call("cuDevicePrimaryCtxRetain", ctypes.byref(context), self.device)
        self._call("cuCtxSetCurrent", context)
        self.stream = _void_p()
        self._call("cuStreamCreate", ctypes.byref(self.stream), CU_STREAM_NON_BLOCKING)

    # errors

    def _check(self, status: int, what: str) -> None:
        if status == CUDA_SUCCESS:
            return
        name = ctypes.c_char_p()
        if self._driver.cuGetErrorName(status, ctypes.byref(name)) != 0 or not name.value:
            raise CudaError(f"{what} failed with CUDA error {status}")
        raise CudaError(f"{what} failed: {name.value.decode()}")

    def _call(self, name: str, *args: object) -> None:
        self._check(getattr(self._driver, name)(*args), name)

    # device

    def name(self) -> str:
        text = ctypes.create_string_buffer(256)
        self._call("cuDeviceGetName", text, 256, self.device)
        return text.value.decode(errors="replace")

    def compute_capability(self) -> tuple[int, int]:
        values: list[int] = []
        for attribute in (
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
        ):
            value = ctypes.c_int(0)
            self._call("cuDeviceGetAttribute", ctypes.byref(value), attribute, self.device)
            values.append(value.value)
        return values[0], values[1]

    # modules and kernels

    def load_module(self, image: bytes) -> int:
        """A module from PTX text (NUL-terminated; the driver JITs it) or a
        cubin; a JIT failure carries the driver's log."""
        module = _void_p()
        log = ctypes.create_string_buffer(_JIT_LOG_BYTES)
        options = (ctypes.c_int * 2)(_JIT_ERROR_LOG_BUFFER, _JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
        values = (_void_p * 2)(ctypes.cast(log, _void_p), _void_p(_JIT_LOG_BYTES))
        # a Python bytes object ends with a NUL past its length: PTX text is terminated
        status = self._driver.cuModuleLoadDataEx(
            ctypes.byref(module),
            image,
            2,
            ctypes.cast(options, _void_p),
            ctypes.cast(values, _void_p),
        )
        if status != CUDA_SUCCESS and log.value:
            first = log.value.decode(errors="replace").strip().splitlines()[0]
            self._check(status, f"cuModuleLoadDataEx ({first})")
        self._check(status, "cuModuleLoadDataEx")
        return int(module.value or 0)

    def function(self, module: int, name: str) -> int:
        function = _void_p()
        self._call("cuModuleGetFunction", ctypes.byref(function), _void_p(module), name.encode())
        return int(function.value or 0)

    def global_address(self, module: int, name: str) -> int:
        """The device address of the module's global `name`."""
        address, size = ctypes.c_uint64(0), ctypes.c_size_t(0)
        self._call(
            "cuModuleGetGlobal_v2",
            ctypes.byref(address),
            ctypes.byref(size),
            _void_p(module),
            name.encode(),
        )
        return address.value

    # memory

    def allocate(self, nbytes: int) -> int:
        pointer = ctypes.c_uint64(0)
        self._call("cuMemAlloc_v2", ctypes.byref(pointer), max(1, nbytes))
        return pointer.value

    def free(self, pointer: int) -> None:
        self._call("cuMemFree_v2", pointer)

    def upload(self, pointer: int, host: int, nbytes: int) -> None:
        """Copies `nbytes` from host address `host` to the device, in order on the stream."""
        self._call("cuMemcpyHtoDAsync_v2", pointer, _void_p(host), nbytes, self.stream)

    def download(self, host: int, pointer: int, nbytes: int) -> None:
        """Copies `nbytes` from the device to host address `host`, in order on the stream."""
        self._call("cuMemcpyDtoHAsync_v2", _void_p(host), pointer, nbytes, self.stream)

    def synchronize(self) -> None:
        self._call("cuStreamSynchronize", self.stream)

    def synchronize_all(self) -> None:
        """Waits for every stream of the context (another library's writes too)."""
        self._call("cuCtxSynchronize")

    # launches

    def launch(
        self, function: int, grid: Sequence[int], block: Sequence[int], pointers: Sequence[int]
    ) -> None:
        """Launches `function` on the stream, each parameter a device pointer."""
        values = [ctypes.c_uint64(p) for p in pointers]
        params = (_void_p * max(1, len(values)))(*[ctypes.addressof(v) for v in values])
        gx, gy, gz = grid
        bx, by, bz = block
        self._call(
            "cuLaunchKernel",
            _void_p(function), gx, gy, gz, bx, by, bz, 0, self.stream, params, None,
        )  # fmt: skip

    def capture(
        self, launches: Sequence[tuple[int, Sequence[int], Sequence[int], Sequence[int]]]
    ) -> int:
        """A CUDA graph of the launches, instantiated: `replay` runs them all."""
        self._call("cuStreamBeginCapture_v2", self.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        graph = _void_p()
        try:
            for function, grid, block, pointers in launches:
                self.launch(function, grid, block, pointers)
        finally:
            self._call("cuStreamEndCapture", self.stream, ctypes.byref(graph))
        executable = _void_p()
        self._call("cuGraphInstantiateWithFlags", ctypes.byref(executable), graph, 0)
        self._call("cuGraphDestroy", graph)
        return int(executable.value or 0)

    def replay(self, graph: int) -> None:
        self._call("cuGraphLaunch", _void_p(graph), self.stream)

    # timing

    def event(self) -> int:
        event = _void_p()
        self._call("cuEventCreate", ctypes.byref(event), 0)
        return int(event.value or 0)

    def record(self, event: int) -> None:
        self._call("cuEventRecord", _void_p(event), self.stream)

    def elapsed_ms(self, start: int, end: int) -> float:
        """Milliseconds between two recorded events (waits for `end`)."""
        self._call("cuEventSynchronize", _void_p(end))
        ms = ctypes.c_float(0.0)
        self._call("cuEventElapsedTime", ctypes.byref(ms), _void_p(start), _void_p(end))
        return float(ms.value)
