"""A tensor that stays on the GPU: what `CudaModel.run(..., outputs="device")`
returns, so that one model's outputs feed another model (or CuPy, PyTorch,
JAX) with no copy through the host.

It owns its device memory (freed when the array is collected) and exposes
it both ways a GPU library reads it: `__cuda_array_interface__` (CuPy,
Numba, PyTorch) and `__dlpack__` / `__dlpack_device__` (the array API:
`torch.from_dlpack`, `cupy.from_dlpack`, `jax.dlpack.from_dlpack`). A DLPack
consumer keeps the array alive until it calls the capsule's deleter.
`.numpy()` copies it to the host. Like onnxruntime's `OrtValue` on a CUDA
device, it is a handle, not an array library: no arithmetic, no indexing."""

from __future__ import annotations

import weakref
from typing import Any, Protocol

import numpy as np

from xtc.runtime.dlpack import KDL_CUDA, make_capsule


class DeviceMemory(Protocol):
    """What a device array needs of the driver (runtime/cuda_driver.py)."""

    device: int

    def free(self, pointer: int) -> None: ...
    def download(self, host: int, pointer: int, nbytes: int) -> None: ...
    def synchronize(self) -> None: ...


class DeviceArray:
    """`shape` elements of `dtype`, C-contiguous at device address `pointer`,
    owned: `driver.free` runs when the array is collected."""

    def __init__(
        self, driver: DeviceMemory, pointer: int, shape: tuple[int, ...], dtype: np.dtype[Any]
    ) -> None:
        self.driver = driver
        self.pointer = pointer
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self._free = weakref.finalize(self, driver.free, pointer)
        self._free.atexit = False  # the driver may be gone at exit; the process frees it all

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def __repr__(self) -> str:
        return f"DeviceArray(shape={list(self.shape)}, dtype={self.dtype.name}, cuda)"

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        # written on xtc's stream, which run() synchronized: no stream to wait on
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.pointer, False),
            "strides": None,
            "version": 3,
        }

    def __dlpack_device__(self) -> tuple[int, int]:
        return KDL_CUDA, self.driver.device

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: Any = None,
        dl_device: Any = None,
        copy: bool | None = None,
    ) -> Any:
        """An unversioned DLPack capsule over this memory (already written:
        any `stream` may read it), which keeps this array alive."""
        if copy:
            raise BufferError("a DeviceArray is exported without copying (copy=True refused)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"a DeviceArray lives on CUDA device {self.driver.device}")
        return make_capsule(self.pointer, self.shape, self.dtype, self.__dlpack_device__(), self)

    def numpy(self) -> np.ndarray:
        """A copy on the host."""
        out = np.empty(self.shape, self.dtype)
        self.driver.download(out.ctypes.data, self.pointer, self.nbytes)
        self.driver.synchronize()
        return out
