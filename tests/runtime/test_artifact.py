"""model.tar: export and load give the same model; a C program links the
library and runs it without Python; a corrupt, foreign, truncated or
incompatible artifact is refused with one message, before anything runs."""

import io
import json
import subprocess
import tarfile
import threading
from pathlib import Path

import numpy as np
import onnx
import pytest

import xtc
from xtc.runtime.artifact import ArtifactError
from xtc.runtime.toolchain import ToolchainError, find_linker
from xtc.tools.model_builders import bert_encoder, resnet_like

C_PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include "model.h"

/* Reads input 0 from argv[1], runs the model, writes output 0 to argv[2]. */
int main(int argc, char **argv) {
    static xtc_input_0_t input[XTC_INPUT_0_COUNT];
    static xtc_output_0_t output[XTC_OUTPUT_0_COUNT];
    FILE *in = fopen(argv[1], "rb");
    if (!in || fread(input, sizeof input, 1, in) != 1) return 2;
    fclose(in);
    const void *inputs[XTC_NUM_INPUTS] = {input};
    void *outputs[XTC_NUM_OUTPUTS] = {output};
    if (xtc_abi_version() != XTC_ABI_VERSION) return 3;
    if (xtc_run(inputs, outputs) != XTC_STATUS_OK) {
        fprintf(stderr, "%s\n", xtc_last_error());
        return 3;
    }
    FILE *out = fopen(argv[2], "wb");
    if (!out || fwrite(output, sizeof output, 1, out) != 1) return 4;
    fclose(out);
    printf("rank %d count %d\n", XTC_OUTPUT_0_RANK, XTC_OUTPUT_0_COUNT);
    return 0;
}
"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[xtc.CompiledModel, Path]:
    compiled = xtc.compile(resnet_like())
    path = tmp_path_factory.mktemp("artifact") / "resnet.tar"
    compiled.export(path)
    return compiled, path


def image(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((1, 3, 32, 32)).astype(np.float32)


def test_export_and_load_give_the_same_model(exported: tuple[xtc.CompiledModel, Path]) -> None:
    compiled, path = exported
    with tarfile.open(path) as archive:
        assert sorted(archive.getnames()) == ["manifest.json", "model.h", "model.so"]
    loaded = xtc.load(path)
    assert loaded.input_specs == compiled.input_specs
    assert loaded.output_specs == compiled.output_specs
    assert loaded.manifest == compiled.manifest
    x = image()
    np.testing.assert_array_equal(loaded.run([x])[0], compiled.run([x])[0])
    # A loaded model exports again, identically.
    again = loaded.export(path.with_name("again.tar"))
    assert xtc.load(again).manifest == compiled.manifest


def test_a_c_program_runs_the_library_without_python(
    exported: tuple[xtc.CompiledModel, Path], tmp_path: Path
) -> None:
    try:
        compiler = find_linker().command  # the system's cc, else zig cc
    except ToolchainError as e:
        pytest.skip(str(e))
    compiled, path = exported
    with tarfile.open(path) as archive:
        archive.extractall(tmp_path, filter="data")
    (tmp_path / "program.c").write_text(C_PROGRAM)
    subprocess.run(
        [
            *compiler,
            "-O2",
            "-Wall",
            "-Werror",
            "-o",
            "program",
            "program.c",
            "model.so",
            "-Wl,-rpath,$ORIGIN",
        ],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    )
    x = image(7)
    x.tofile(tmp_path / "input.bin")
    result = subprocess.run(
        [str(tmp_path / "program"), "input.bin", "output.bin"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "rank 2 count 10"
    got = np.fromfile(tmp_path / "output.bin", np.float32).reshape(1, 10)
    np.testing.assert_array_equal(got, compiled.run([x])[0])


FAULT_PROGRAM = r"""
#include <stdio.h>
#include "model.h"

/* Gathers rows of a 5x3 table: good indices, then a bad one, then good ones
   again; prints each run's status and xtc_last_error(). */
static int run(const int64_t *picks) {
    static xtc_input_0_t table[XTC_INPUT_0_COUNT];
    static xtc_input_1_t indices[XTC_INPUT_1_COUNT];
    static xtc_output_0_t rows[XTC_OUTPUT_0_COUNT];
    for (int i = 0; i < XTC_INPUT_0_COUNT; i++) table[i] = (float)i;
    for (int i = 0; i < XTC_INPUT_1_COUNT; i++) indices[i] = picks[i];
    const void *inputs[XTC_NUM_INPUTS] = {table, indices};
    void *outputs[XTC_NUM_OUTPUTS] = {rows};
    int status = xtc_run(inputs, outputs);
    printf("status %d error [%s] first %g\n", status, xtc_last_error(),
           status == XTC_STATUS_OK ? rows[0] : -1.0);
    return status;
}

int main(void) {
    static const int64_t good[4] = {4, -1, 0, 2}, bad[4] = {4, -1, 7, 2};
    if (xtc_last_error() == NULL || xtc_last_error()[0] != '\0') return 10;
    int statuses = run(good) == XTC_STATUS_OK;
    statuses += 2 * (run(bad) == XTC_STATUS_FAULT);
    statuses += 4 * (run(good) == XTC_STATUS_OK);
    return statuses == 7 ? 0 : statuses + 20;
}
"""


def test_a_c_program_sees_a_fault_as_a_status_and_a_message(tmp_path: Path) -> None:
    """xtc_run returns XTC_STATUS_FAULT on an index out of range and
    xtc_last_error() names the node and the index; the next good run
    returns XTC_STATUS_OK and clears the message."""
    try:
        compiler = find_linker().command  # the system's cc, else zig cc
    except ToolchainError as e:
        pytest.skip(str(e))
    node = onnx.helper.make_node("Gather", ["table", "indices"], ["rows"], name="pick", axis=0)
    graph = onnx.helper.make_graph(
        [node],
        "pick",
        [
            onnx.helper.make_tensor_value_info("table", onnx.TensorProto.FLOAT, [5, 3]),
            onnx.helper.make_tensor_value_info("indices", onnx.TensorProto.INT64, [4]),
        ],
        [onnx.helper.make_tensor_value_info("rows", onnx.TensorProto.FLOAT, [4, 3])],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)])
    xtc.compile(model).export(tmp_path / "pick.tar")
    with tarfile.open(tmp_path / "pick.tar") as archive:
        archive.extractall(tmp_path, filter="data")
    header = (tmp_path / "model.h").read_text()
    assert "const char *xtc_last_error(void);" in header
    assert "#define XTC_STATUS_FAULT 1" in header
    (tmp_path / "program.c").write_text(FAULT_PROGRAM)
    command = [*compiler, "-O2", "-Wall", "-Werror", "-o", "program", "program.c", "model.so"]
    subprocess.run(
        [*command, "-Wl,-rpath,$ORIGIN"], cwd=tmp_path, check=True, capture_output=True, text=True
    )
    result = subprocess.run(
        [str(tmp_path / "program")], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        "status 0 error [] first 12",
        "status 1 error [Gather node 'pick': index 7 is out of range [-5, 5) on axis 0 of "
        "tensor<5x3xf32>] first -1",
        "status 0 error [] first 12",
    ]


def test_header_describes_every_tensor(exported: tuple[xtc.CompiledModel, Path]) -> None:
    compiled = xtc.compile(bert_encoder(layers=1))
    header = (compiled.directory / "model.h").read_text()
    for line in [
        "#define XTC_NUM_INPUTS 2",
        "#define XTC_NUM_OUTPUTS 1",
        "#define XTC_INPUT_0_COUNT 512",
        "#define XTC_INPUT_0_SHAPE {1, 16, 32}",
        "typedef float xtc_input_0_t;",
        "typedef int64_t xtc_input_1_t;",
        "#define XTC_INPUT_1_RANK 2",
        "int32_t xtc_run(const void *const *inputs, void *const *outputs);",
    ]:
        assert line in header, line


def test_concurrent_runs_do_not_share_scratch_memory(
    exported: tuple[xtc.CompiledModel, Path],
) -> None:
    compiled, _ = exported
    inputs = [image(seed) for seed in range(4)]
    expected = [compiled.run([x])[0] for x in inputs]
    results: dict[int, list[np.ndarray]] = {}

    def work(i: int) -> None:
        results[i] = [compiled.run([inputs[i]])[0] for _ in range(20)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, runs in results.items():
        for got in runs:
            np.testing.assert_array_equal(got, expected[i])


def rewrite(path: Path, target: Path, edit_manifest=None, edit_library=None, drop=()) -> Path:  # noqa: ANN001
    """A copy of the artifact with its manifest and/or library edited."""
    with tarfile.open(path) as archive:
        members = {m.name: archive.extractfile(m).read() for m in archive.getmembers()}  # type: ignore[union-attr]
    if edit_manifest is not None:
        manifest = json.loads(members["manifest.json"])
        edit_manifest(manifest)
        members["manifest.json"] = json.dumps(manifest).encode()
    if edit_library is not None:
        members["model.so"] = edit_library(bytearray(members["model.so"]))
    with tarfile.open(target, "w") as archive:
        for name, data in members.items():
            if name in drop:
                continue
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return target


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _flip_byte(data: bytearray) -> bytes:
    data[len(data) // 2] ^= 0xFF
    return bytes(data)


def _set(key: str, value: object):  # noqa: ANN202
    def edit(manifest: dict) -> None:  # type: ignore[type-arg]
        manifest[key] = value

    return edit


def _set_features(manifest: dict) -> None:  # type: ignore[type-arg]
    manifest["target"]["features"] += ",+imaginary-feature"


def _set_triple(manifest: dict) -> None:  # type: ignore[type-arg]
    manifest["target"]["triple"] = "riscv64-unknown-linux-gnu"


@pytest.mark.parametrize(
    "variant, message",
    [
        (
            lambda p, t: rewrite(p, t, edit_manifest=_set("format_version", 99)),
            r"built by xtc 0\.1\.0 \(artifact format 99\); this xtc reads format 1",
        ),
        (lambda p, t: rewrite(p, t, edit_manifest=_set("format", "other")), "not an xtc model"),
        (lambda p, t: rewrite(p, t, edit_manifest=_set("inputs", None)), "malformed manifest"),
        (lambda p, t: rewrite(p, t, edit_library=_flip_byte), "corrupt"),
        (lambda p, t: rewrite(p, t, drop=("model.so",)), "has no model.so"),
        (lambda p, t: rewrite(p, t, drop=("manifest.json",)), "has no manifest.json"),
        (lambda p, t: rewrite(p, t, edit_manifest=_set_features), "imaginary-feature"),
        (lambda p, t: rewrite(p, t, edit_manifest=_set_triple), "compiled for riscv64"),
        (
            lambda p, t: _write(t, p.read_bytes()[: len(p.read_bytes()) // 2]),
            "truncated|not a readable tar",
        ),
        (lambda p, t: _write(t, b"hello"), "not a readable tar"),
        (
            lambda p, t: (
                _write(
                    t,
                    onnx.helper.make_model(
                        onnx.helper.make_graph([], "g", [], [])
                    ).SerializeToString(),
                )
                or t
            ),
            "not a readable tar|not an xtc model",
        ),
        (lambda p, t: t.parent / "missing.tar", "no such file"),
    ],
)
def test_bad_artifacts_are_refused(
    variant,
    message: str,
    exported: tuple[xtc.CompiledModel, Path],
    tmp_path: Path,  # noqa: ANN001
) -> None:
    bad = variant(exported[1], tmp_path / "bad.tar")
    with pytest.raises(ArtifactError, match=message):
        xtc.load(bad)


def test_a_foreign_tar_is_not_a_model(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with tarfile.open(tmp_path / "foreign.tar", "w") as archive:
        archive.add(tmp_path / "notes.txt", arcname="notes.txt")
    with pytest.raises(ArtifactError, match="not an xtc model"):
        xtc.load(tmp_path / "foreign.tar")


def test_a_specialization_lists_its_files_and_only_artifact_files() -> None:
    from xtc.runtime.archive import MEMBERS, ArtifactError
    from xtc.runtime.specialized_model import specialized_members

    manifest = {"specializations": [{"members": ["manifest.json", "kernels.ptx"]}, {}]}
    assert specialized_members(manifest) == [
        "specialization-0/manifest.json",
        "specialization-0/kernels.ptx",
        *(f"specialization-1/{m}" for m in MEMBERS),
    ]
    with pytest.raises(ArtifactError, match="'../x' is not an artifact file"):
        specialized_members({"specializations": [{"members": ["../x"]}]})
