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

A CUDA artifact (manifest target "cuda") holds instead the PTX, a cubin
when ptxas made one, the launch plan, the weights and the kernels' IR
(runtime/cuda_model.py). A model specialized on the values of its
shape-determining inputs holds one such set of files per specialization, in
a folder each, under a top manifest that lists them
(runtime/specialized_model.py).

`load_artifact` checks everything it can before running anything: that the
file is a tar archive with an xtc manifest, of a format this xtc reads, that
the library is the one the manifest describes (sha256), built for this kind
of machine (triple, CPU features), and that it exports the ABI it expects.
Each failure is an `ArtifactError` with one message.
"""

from __future__ import annotations

import io
import json
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from xtc.runtime.archive import (
    FORMAT,
    FORMAT_VERSION,
    MANIFEST_NAME,
    MEMBERS,
    ArtifactError,
    sha256_of,
    write_archive,
    write_manifest,
)
from xtc.runtime.model import CompiledModel, TensorSpec
from xtc.runtime.native_abi import ABI_VERSION, LIBRARY_NAME
from xtc.runtime.specialized_model import (
    SpecializedModel,
    is_specialized,
    open_specialized,
    specialized_members,
)

if TYPE_CHECKING:
    from xtc.runtime.cuda_model import CudaModel


def export_artifact(model: CompiledModel, path: Path) -> Path:
    """Writes `model` as a tar archive at `path` (replaced atomically)."""
    return write_archive(model.directory, Path(path))


def load_artifact(
    path: str | Path, device: str = "cuda"
) -> CompiledModel | CudaModel | SpecializedModel:
    """The model in an artifact written by `export_artifact` (or `xtc
    compile`), checked and loaded (see the module doc); a CUDA artifact
    (target "cuda") is a CudaModel on `device` (runtime/cuda_model.py); a
    specialized one a SpecializedModel."""
    path = Path(path)
    if not path.is_file():
        raise ArtifactError(f"{path}: no such file")
    with path.open("rb") as source:
        return read_archive(source, path, device=device)


def read_archive(
    source: BinaryIO,
    where: str | Path,
    edit: Callable[[dict[str, Any]], None] | None = None,
    device: str = "cuda",
    *,
    verified: bool = False,
) -> CompiledModel | CudaModel | SpecializedModel:
    """The model in the artifact that the open file `source` holds from its
    current position (`where` names it in messages), checked and loaded;
    `edit(manifest)` may change the manifest first (it is written back). A
    CUDA artifact is a CudaModel on `device`. With `verified` (the caller
    checked the archive's bytes: a compile-cache entry's checksum), a CPU
    model's library is not hashed again against its manifest."""
    owner = tempfile.TemporaryDirectory(prefix="xtc-model-")
    directory = Path(owner.name)
    try:
        manifest = _extract(source, Path(where), directory)
        if edit is not None:
            edit(manifest)
            write_manifest(directory, manifest)
        if is_specialized(manifest):
            return open_specialized(directory, manifest, _opener(device), owner)
        if _is_cuda(manifest):
            return _open_cuda_model(directory, manifest, owner, device)
        return open_model(directory, manifest, owner, verified=verified)
    except BaseException:
        owner.cleanup()
        raise


def _opener(device: str) -> Callable[[Path, dict[str, Any]], CompiledModel | CudaModel]:
    """How a specialization's files open: by its manifest's target."""

    def open_any(directory: Path, manifest: dict[str, Any]) -> CompiledModel | CudaModel:
        if _is_cuda(manifest):
            return _open_cuda_model(directory, manifest, None, device)
        return open_model(directory, manifest)

    return open_any


def _open_cuda_model(
    directory: Path, manifest: dict[str, Any], owner: Any, device: str
) -> CudaModel:
    """runtime/cuda_model.py's open_cuda_model, imported for a CUDA
    artifact only (it imports xDSL's gpu dialect; a CPU model needs none)."""
    from xtc.runtime.cuda_model import open_cuda_model

    return open_cuda_model(directory, manifest, owner, device)


def open_model(
    directory: Path, manifest: dict[str, Any], owner: Any = None, *, verified: bool = False
) -> CompiledModel:
    """A CompiledModel over `directory` (holding the artifact's files) once
    the library checks out against `manifest` (its sha256, unless the
    caller `verified` the files) and this machine."""
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
    if not verified and sha256_of(library) != expected_sha:
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
            for name in _members(manifest):
                member = members.get(name)
                if member is None or not member.isfile():
                    raise ArtifactError(f"{path}: the archive has no {name}: it is incomplete")
                source = archive.extractfile(member)
                assert source is not None
                (directory / name).parent.mkdir(parents=True, exist_ok=True)
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


def _members(manifest: dict[str, Any]) -> list[str]:
    """The files the artifact must hold, by the kind its manifest says."""
    try:
        if is_specialized(manifest):
            return specialized_members(manifest)
    except (KeyError, TypeError, AttributeError) as e:
        raise ArtifactError(f"malformed manifest ({type(e).__name__}: {e})") from None
    if not _is_cuda(manifest):
        return list(MEMBERS)
    from xtc.runtime.cuda_model import cuda_members

    return list(cuda_members(manifest))


def _is_cuda(manifest: dict[str, Any]) -> bool:
    target = manifest.get("target")
    return isinstance(target, dict) and target.get("name") == "cuda"


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

    from xtc.analysis.host_cpu import host_cpu_features

    host_triple = llvm_binding.get_process_triple()
    if triple.split("-")[0] != host_triple.split("-")[0]:
        raise ArtifactError(f"the model was compiled for {triple}, this machine is {host_triple}")
    have = {f[1:] for f in host_cpu_features().split(",") if f.startswith("+")}
    needs = {f[1:] for f in features.split(",") if f.startswith("+")}
    missing = sorted(needs - have)
    if missing:
        raise ArtifactError(
            "the model was compiled for a CPU with features this CPU lacks: "
            f"{', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}: recompile it here"
        )
