"""DLPack capsules read and made with ctypes (no dependency): the
`__dlpack__` protocol of torch, CuPy and JAX arrays.

`read_capsule` takes the capsule a producer's `__dlpack__()` returns (an
unversioned "dltensor" capsule holding a `DLManagedTensor`) and gives a
`DLTensorView` (data pointer with the byte offset applied, device, shape,
strides, dtype); the consumer renames the capsule "used_dltensor", as the
protocol says, and calls `release()` when it no longer reads the memory.

`make_capsule` is the producer side, for xtc's own device arrays
(runtime/device_array.py): a capsule whose deleter drops the reference that
keeps the array (and so its device memory) alive."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import numpy as np

DLTENSOR = b"dltensor"
USED_DLTENSOR = b"used_dltensor"
KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_CUDA_MANAGED = 13
DEVICE_NAMES = {KDL_CPU: "cpu", KDL_CUDA: "cuda", KDL_CUDA_HOST: "cuda_host"}
_CODES = {0: "i", 1: "u", 2: "f", 6: "b"}
"""DLDataType codes (kDLInt, kDLUInt, kDLFloat, kDLBool) as numpy kinds."""
_KINDS = {"i": 0, "u": 1, "f": 2, "b": 6}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]  # noqa: RUF012


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]  # noqa: RUF012


class DLTensor(ctypes.Structure):
    _fields_ = [  # noqa: RUF012 - ctypes layout
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [  # noqa: SLF001 - a self-referencing ctypes layout
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", _Deleter),
]


class DLPackError(ValueError):
    """A capsule that is not an unused DLPack tensor, or a dtype DLPack cannot say."""


def _capsule_function(name: str, restype: Any, *argtypes: Any) -> Any:
    """A C-API capsule function of its own prototype (ctypes.pythonapi's
    shared function objects are left as other code set them)."""
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_py, _char_p, _void_p = ctypes.py_object, ctypes.c_char_p, ctypes.c_void_p
_is_valid = _capsule_function("PyCapsule_IsValid", ctypes.c_int, _py, _char_p)
_get_pointer = _capsule_function("PyCapsule_GetPointer", _void_p, _py, _char_p)
_set_name = _capsule_function("PyCapsule_SetName", ctypes.c_int, _py, _char_p)
_new_capsule = _capsule_function("PyCapsule_New", _py, _void_p, _char_p, _void_p)
_raw_is_valid = _capsule_function("PyCapsule_IsValid", ctypes.c_int, _void_p, _char_p)
_raw_get_pointer = _capsule_function("PyCapsule_GetPointer", _void_p, _void_p, _char_p)


@dataclass
class DLTensorView:
    """What a DLPack tensor holds; `release()` calls its deleter (once)."""

    pointer: int
    device_type: int
    device_id: int
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None
    """In elements, as DLPack counts them; None: C-contiguous."""
    dtype: np.dtype[Any] | None
    """None when DLPack's type has no numpy equivalent (bfloat16, vectors)."""
    dtype_text: str
    _managed: int

    @property
    def device(self) -> str:
        return DEVICE_NAMES.get(self.device_type, f"device type {self.device_type}")

    def is_contiguous(self) -> bool:
        """C-contiguous (a dimension of size 1 may have any stride)."""
        if self.strides is None:
            return True
        step = 1
        for size, stride in zip(reversed(self.shape), reversed(self.strides), strict=True):
            if size != 1 and stride != step:
                return False
            step *= size
        return True

    def release(self) -> None:
        if self._managed:
            managed = ctypes.cast(self._managed, ctypes.POINTER(DLManagedTensor))
            self._managed = 0
            if managed.contents.deleter:
                managed.contents.deleter(managed)


def read_capsule(capsule: Any) -> DLTensorView:
    """The tensor in an unused "dltensor" capsule, which is renamed
    "used_dltensor" (its deleter is then the view's to call: `release`)."""
    if not _is_valid(capsule, DLTENSOR):
        raise DLPackError("__dlpack__ did not return an unused DLPack capsule")
    address = int(_get_pointer(capsule, DLTENSOR))
    tensor = ctypes.cast(address, ctypes.POINTER(DLManagedTensor)).contents.dl_tensor
    shape = tuple(int(tensor.shape[i]) for i in range(tensor.ndim))
    strides = tuple(int(tensor.strides[i]) for i in range(tensor.ndim)) if tensor.strides else None
    code, bits, lanes = tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes
    kind = _CODES.get(code)
    dtype = np.dtype(f"{kind}{bits // 8}") if kind and lanes == 1 and bits % 8 == 0 else None
    if kind == "b":
        dtype = np.dtype(np.bool_) if bits == 8 else None
    text = dtype.name if dtype is not None else f"DLPack type code {code}, {bits} bits x {lanes}"
    _set_name(capsule, USED_DLTENSOR)
    return DLTensorView(
        (tensor.data or 0) + tensor.byte_offset,
        tensor.device.device_type,
        tensor.device.device_id,
        shape,
        strides,
        dtype,
        text,
        address,
    )


def dlpack_dtype(dtype: np.dtype[Any]) -> DLDataType:
    kind = "b" if dtype == np.bool_ else dtype.kind
    if kind not in _KINDS:
        raise DLPackError(f"DLPack has no type for {dtype.name}")
    return DLDataType(_KINDS[kind], dtype.itemsize * 8, 1)


_exported: dict[int, tuple[Any, ...]] = {}
"""Each capsule made and not deleted yet: its structures and its owner."""


@_Deleter
def _delete_exported(managed: Any) -> None:
    _exported.pop(ctypes.addressof(managed.contents), None)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule: int) -> None:
    """A capsule collected unused: its deleter's work is done here (a
    consumer renames the capsule and calls the deleter itself)."""
    if _raw_is_valid(capsule, DLTENSOR):
        _exported.pop(int(_raw_get_pointer(capsule, DLTENSOR)), None)


def make_capsule(
    pointer: int,
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    device: tuple[int, int],
    owner: Any,
    strides: tuple[int, ...] | None = None,
) -> Any:
    """An unused "dltensor" capsule of the tensor at `pointer` on `device`
    (DLPack device type, id), C-contiguous unless `strides` (in elements)
    are given; `owner` is kept alive until the consumer calls the deleter,
    or the capsule is collected unused."""
    sizes = (ctypes.c_int64 * max(1, len(shape)))(*shape)
    steps = None if strides is None else (ctypes.c_int64 * max(1, len(strides)))(*strides)
    managed = DLManagedTensor()
    managed.dl_tensor = DLTensor(
        pointer, DLDevice(*device), len(shape), dlpack_dtype(dtype), sizes, steps, 0
    )
    managed.deleter = _delete_exported
    address = ctypes.addressof(managed)
    _exported[address] = (managed, sizes, steps, owner)
    destructor = ctypes.cast(_capsule_destructor, ctypes.c_void_p)
    return _new_capsule(address, DLTENSOR, destructor)


def live_capsules() -> int:
    """How many capsules `make_capsule` made that still hold their owner."""
    return len(_exported)
