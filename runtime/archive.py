"""The files of a compiled-model artifact and how they are written: the
manifest, the C header and the tar archive that holds them with the library
(runtime/artifact.py reads them back and checks them)."""

from __future__ import annotations

import hashlib
import json
import tarfile
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from xtc.runtime.native_abi import ABI_VERSION, LIBRARY_NAME, STATUS_FAULT, STATUS_OK

FORMAT = "xtc-model"
FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
HEADER_NAME = "model.h"
MEMBERS = (MANIFEST_NAME, HEADER_NAME, LIBRARY_NAME)
COPY_BUFFER_BYTES = 4 << 20

_C_TYPES = {
    "float32": "float",
    "float64": "double",
    "float16": "uint16_t",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "uint8": "uint8_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "bool": "uint8_t",
}


class ArtifactError(Exception):
    """An artifact that cannot be used: corrupt, foreign, incompatible."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def c_header(manifest: dict[str, Any]) -> str:
    """model.h: `xtc_run`'s prototype, documented, and each tensor's
    element count, rank and shape as macros."""
    guard = "XTC_MODEL_H"
    lines = [
        f"/* {manifest['name']}: compiled by xtc {manifest['xtc_version']} for "
        f"{manifest['target']['triple']} ({manifest['target']['cpu']}). */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stdint.h>",
        "",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
        f"#define XTC_NUM_INPUTS {len(manifest['inputs'])}",
        f"#define XTC_NUM_OUTPUTS {len(manifest['outputs'])}",
    ]
    for kind, entries in (("INPUT", manifest["inputs"]), ("OUTPUT", manifest["outputs"])):
        for i, entry in enumerate(entries):
            shape = entry["shape"]
            count = int(np.prod(shape, dtype=np.int64)) if shape else 1
            c_type = _C_TYPES.get(entry["dtype"], "uint8_t")
            lines += [
                "",
                f'/* {kind.lower()} {i}: "{entry["name"]}", {entry["dtype"]}'
                f"[{', '.join(map(str, shape))}], elements of type {c_type} in C order */",
                f"#define XTC_{kind}_{i}_COUNT {count}",
                f"#define XTC_{kind}_{i}_RANK {len(shape)}",
                f"#define XTC_{kind}_{i}_SHAPE {{{', '.join(map(str, shape)) or '1'}}}",
                f"typedef {c_type} xtc_{kind.lower()}_{i}_t;",
            ]
    lines += [
        "",
        f"#define XTC_ABI_VERSION {ABI_VERSION}",
        f"#define XTC_STATUS_OK {STATUS_OK}",
        f"#define XTC_STATUS_FAULT {STATUS_FAULT}",
        "",
        "/* Runs the model once: inputs[i] points to input i's elements, outputs[j]",
        "   to room for output j's (see the macros above). Buffers aligned to 64",
        "   bytes are fastest; any alignment of the element type works. One call",
        "   is one inference; calls from several threads at once are safe (each",
        "   call has its own scratch memory and its own fault record).",
        "   Returns XTC_STATUS_OK, or XTC_STATUS_FAULT when values in the inputs",
        "   make the model fail (an index out of range, an integer division by",
        "   zero): the outputs then hold unspecified values, and xtc_last_error()",
        "   says which node failed on which value. */",
        "int32_t xtc_run(const void *const *inputs, void *const *outputs);",
        "",
        "/* Why the calling thread's last xtc_run failed, naming the node and the",
        "   offending value (\"Gather node 'g': index 7 is out of range [-5, 5) on",
        '   axis 0 of tensor<5x3xf32>"); "" when it succeeded or the thread has',
        "   run none. Never NULL; the text stays valid until the thread's next",
        "   xtc_run. */",
        "const char *xtc_last_error(void);",
        "",
        "/* The version of xtc_run's contract this library implements",
        "   (XTC_ABI_VERSION: the loader refuses a library of another). */",
        "int32_t xtc_abi_version(void);",
        "",
        "/* Sets how many threads the model's parallel loops use (0: libgomp's default,",
        "   OMP_NUM_THREADS or all cores; negative counts as 0); returns the previous. */",
        "int32_t xtc_set_num_threads(int32_t n);",
        "",
        "#ifdef __cplusplus",
        "}",
        "#endif",
        "",
        f"#endif /* {guard} */",
    ]
    return "\n".join(lines) + "\n"


def write_archive(directory: Path, path: Path) -> Path:
    """Writes the artifact files in `directory` as a tar archive at `path`
    (replaced atomically)."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    try:
        with partial.open("wb") as f:
            write_archive_into(directory, f)
        partial.replace(path)
    except OSError as e:
        partial.unlink(missing_ok=True)
        raise ArtifactError(f"cannot write {path}: {e.strerror or e}") from None
    return path


def write_archive_into(directory: Path, target: BinaryIO) -> None:
    """Writes the artifact files in `directory` as a tar archive into the
    open file `target` (the compile cache streams it into its entry)."""
    # tarfile copies a member 16 KiB at a time by default: ResNet-50's
    # library (97 MiB) in 4 MiB pieces takes half the CPU
    with tarfile.open(fileobj=target, mode="w", copybufsize=COPY_BUFFER_BYTES) as archive:
        for name in MEMBERS:
            archive.add(directory / name, arcname=name, recursive=False)


def write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    (directory / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n")
    (directory / HEADER_NAME).write_text(c_header(manifest))
