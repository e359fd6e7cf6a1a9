"""The compiled-model artifact, `model.tar`:

    manifest.json   inputs and outputs (name, shape, dtype), target (triple,
                    CPU, features), xtc version, opt level, the pass pipeline
                    that built it, arena and weight sizes, the library's sha256,
                    the compile's remarks counted by category (xtc/remarks.py:
                    {"schedule-refused": M, "vectorize-missed": N}, {} if none)
    model.so        the native library (runtime/library.py): weights inside,
                    C entry `xtc_run`
    model.h         the C header of `xtc_run` and `xtc_last_error`, with the
                    shapes and statuses as macros

`load_artifact` checks everything it can before running anything: that the
file is a tar archive with an xtc manifest, of a format this xtc reads, that
the library is the one the manifest describes (sha256), built for this kind
of machine (triple, CPU features), and that it exports the ABI it expects.
Each failure is an `ArtifactError` with one message.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from xtc.runtime.library import ABI_VERSION, LIBRARY_NAME, STATUS_FAULT, STATUS_OK
from xtc.runtime.model import CompiledModel, TensorSpec

FORMAT = "xtc-model"
FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
HEADER_NAME = "model.h"
MEMBERS = (MANIFEST_NAME, HEADER_NAME, LIBRARY_NAME)

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


def export_artifact(model: CompiledModel, path: Path) -> Path:
    """Writes `model` as a tar archive at `path` (replaced atomically)."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    try:
        with partial.open("wb") as f:
            write_archive(model, f)
        partial.replace(path)
    except OSError as e:
        partial.unlink(missing_ok=True)
        raise ArtifactError(f"cannot write {path}: {e.strerror or e}") from None
    return path


def write_archive(model: CompiledModel, target: BinaryIO) -> None:
    """Writes `model`'s artifact (a tar archive) into the open file `target`."""
    with tarfile.open(fileobj=target, mode="w") as archive:
        for name in MEMBERS:
            archive.add(model.directory / name, arcname=name, recursive=False)


def load_artifact(path: str | Path) -> CompiledModel:
    """The model in an artifact written by `export_artifact` (or `xtc
    compile`), checked and loaded (see the module doc)."""
    path = Path(path)
    if not path.is_file():
        raise ArtifactError(f"{path}: no such file")
    with path.open("rb") as source:
        return read_archive(source, path)


def read_archive(
    source: BinaryIO, where: str | Path, edit: Callable[[dict[str, Any]], None] | None = None
) -> CompiledModel:
    """The model in the artifact that the open file `source` holds from its
    current position (`where` names it in messages), checked and loaded;
    `edit(manifest)` may change the manifest first (it is written back)."""
    owner = tempfile.TemporaryDirectory(prefix="xtc-model-")
    directory = Path(owner.name)
    try:
        manifest = _extract(source, Path(where), directory)
        if edit is not None:
            edit(manifest)
            write_manifest(directory, manifest)
        return open_model(directory, manifest, owner)
    except BaseException:
        owner.cleanup()
        raise


def open_model(directory: Path, manifest: dict[str, Any], owner: Any = None) -> CompiledModel:
    """A CompiledModel over `directory` (holding the artifact's files) once
    the library checks out against `manifest` and this machine."""
    where = str(directory)
    try:
        inputs = [TensorSpec.from_json(e) for e in manifest["inputs"]]
        outputs = [TensorSpec.from_json(e) for e in manifest["outputs"]]
        expected_sha = str(manifest["library_sha256"])
        target = manifest["target"]
        triple, features = str(target["triple"]), str(target["features"])
    except (KeyError, TypeError, ValueError) as e:
        raise ArtifactError(f"{where}: malformed manifest ({type(e).__name__}: {e})") from None
    library = directory / LIBRARY_NAME
    if sha256_of(library) != expected_sha:
        raise ArtifactError(
            "the library in the artifact is corrupt (its sha256 does not match "
            "the manifest's): recompile the model"
        )
    _check_machine(triple, features)
    model = CompiledModel(directory, manifest, inputs, outputs, owner)
    try:
        abi = model.library.xtc_abi_version()
    except OSError as e:
        raise ArtifactError(
            f"the library in the artifact cannot be loaded: {e}{_toolchain_hint(manifest)}"
        ) from None
    except AttributeError:
        raise ArtifactError(
            "the library in the artifact exports no xtc_abi_version: not an xtc model"
        ) from None
    if abi != ABI_VERSION:
        raise ArtifactError(
            f"the library implements xtc_run ABI {abi}, this xtc calls "
            f"ABI {ABI_VERSION}: recompile the model"
        )
    return model


def _toolchain_hint(manifest: dict[str, Any]) -> str:
    """What the library links at load time (its OpenMP runtime), for a
    library that does not load: where that runtime came from at build time."""
    openmp = (manifest.get("toolchain") or {}).get("openmp")
    if not isinstance(openmp, dict):
        return ""
    return (
        f" (its parallel loops need {openmp.get('library')}, which came from "
        f"{openmp.get('from')} where the model was built: install that here, or recompile "
        "the model here)"
    )


def _extract(source: BinaryIO, path: Path, directory: Path) -> dict[str, Any]:
    try:
        with tarfile.open(fileobj=source, mode="r:") as archive:
            members = {m.name: m for m in archive.getmembers()}
            if MANIFEST_NAME not in members:
                raise ArtifactError(
                    f"{path}: not an xtc model (the archive has no {MANIFEST_NAME})"
                )
            manifest = _read_manifest(archive, members[MANIFEST_NAME], path)
            for name in MEMBERS:
                member = members.get(name)
                if member is None or not member.isfile():
                    raise ArtifactError(f"{path}: the archive has no {name}: it is incomplete")
                source = archive.extractfile(member)
                assert source is not None
                with source, (directory / name).open("wb") as target:
                    while chunk := source.read(1 << 20):
                        target.write(chunk)
    except tarfile.TarError as e:
        raise ArtifactError(f"{path}: not an xtc model (not a readable tar archive: {e})") from None
    except (EOFError, OSError) as e:
        raise ArtifactError(
            f"{path}: cannot be read ({e}): the file is truncated or corrupt"
        ) from None
    return manifest


def _read_manifest(archive: tarfile.TarFile, member: tarfile.TarInfo, path: Path) -> dict[str, Any]:
    source = archive.extractfile(member)
    if source is None or member.size > 16 << 20:
        raise ArtifactError(f"{path}: {MANIFEST_NAME} is not a regular file of sane size")
    try:
        manifest = json.load(io.TextIOWrapper(source, encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise ArtifactError(f"{path}: {MANIFEST_NAME} is not valid JSON ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ArtifactError(f"{path}: not an xtc model ({MANIFEST_NAME} is not an xtc manifest)")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        built_by = manifest.get("xtc_version", "an unknown version")
        raise ArtifactError(
            f"{path} was built by xtc {built_by} (artifact format {version}); this xtc reads "
            f"format {FORMAT_VERSION}: recompile the model with this xtc"
        )
    return manifest


def _check_machine(triple: str, features: str) -> None:
    """Refuses a library built for another kind of machine, or for CPU
    features this CPU lacks (it would stop on an illegal instruction)."""
    import llvmlite.binding as llvm_binding

    from xtc.runtime.llvm_jit import host_features

    host_triple = llvm_binding.get_process_triple()
    if triple.split("-")[0] != host_triple.split("-")[0]:
        raise ArtifactError(f"the model was compiled for {triple}, this machine is {host_triple}")
    have = {f[1:] for f in host_features().split(",") if f.startswith("+")}
    needs = {f[1:] for f in features.split(",") if f.startswith("+")}
    missing = sorted(needs - have)
    if missing:
        raise ArtifactError(
            "the model was compiled for a CPU with features this CPU lacks: "
            f"{', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}: recompile it here"
        )


def write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    (directory / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n")
    (directory / HEADER_NAME).write_text(c_header(manifest))
