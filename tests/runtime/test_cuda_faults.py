"""Run-time checks (`tir.assert`) in CUDA kernels: each becomes a store of
its fault word into the device global @xtc_gpu_fault where it fails, the
fault word decodes back to the check's message, and a CUDA model raises
InputError with the message the CPU path gives (on the interpreter
device; the GPU reads the word after the run)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import xtc
from xtc.driver.cuda import compile_cuda_model
from xtc.driver.textual_ir import parse_module
from xtc.lowering.convert_gpu_to_nvvm import (
    FAULT_GLOBAL,
    FAULT_VALUE_BITS,
    fault_message,
    kernel_checks,
)
from xtc.runtime.cuda_model import PTX_NAME
from xtc.runtime.errors import InputError
from xtc.runtime.ptx import nvvm_ir, ptx

CHECKED = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "m"}> ({
    "gpu.func"() <{function_type = (memref<32xi32>) -> (), kernel}> ({
    ^bb0(%x: memref<32xi32>):
      %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %v = memref.load %x[%t] : memref<32xi32>
      %z = arith.constant 0 : i32
      %ok = arith.cmpi sge, %v, %z : i32
      tir.assert %ok, "index {} is negative", %v : i32
      %small = arith.cmpi slt, %v, %z : i32
      tir.assert %small, "no value"
      memref.store %v, %x[%t] : memref<32xi32>
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}"""


def gather() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Gather", ["x", "i"], ["y"], axis=0, name="gather")],
        "gather",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 3]),
         helper.make_tensor_value_info("i", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_a_failed_check_stores_its_fault_word() -> None:
    text = nvvm_ir(parse_module(CHECKED))
    assert f'@"{FAULT_GLOBAL}" = global [8 x i8]' in text
    assert text.count(f'@"{FAULT_GLOBAL}" to i64*') == 2  # one store per check
    assert "xtc_check" not in text
    assert f"or i64 {1 << FAULT_VALUE_BITS}, " in text  # check 1 with its value
    assert f"store i64 {2 << FAULT_VALUE_BITS}, " in text  # check 2, no value


def test_a_fault_word_decodes_to_the_message_of_its_check() -> None:
    checks = kernel_checks(parse_module(CHECKED))
    negative = (1 << FAULT_VALUE_BITS) | ((-3) & ((1 << FAULT_VALUE_BITS) - 1))
    assert fault_message(checks, negative) == "index -3 is negative"
    assert fault_message(checks, 2 << FAULT_VALUE_BITS) == "no value"
    assert "unknown fault word 0x3" in fault_message(checks, 3 << FAULT_VALUE_BITS)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="CUDA's ptxas is not on PATH")
def test_ptxas_accepts_the_fault_word(tmp_path: Path) -> None:
    source = tmp_path / "k.ptx"
    source.write_text(ptx(parse_module(CHECKED), "sm_90"))
    assert f".visible .global .align 64 .b8 {FAULT_GLOBAL}[8];" in source.read_text()
    command = ["ptxas", "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(source)]
    assert subprocess.run(command, capture_output=True).returncode == 0


def test_a_failed_check_raises_what_the_cpu_raises_on_the_interpreter_device() -> None:
    model = compile_cuda_model(gather(), device="interp")
    assert FAULT_GLOBAL in (model.directory / PTX_NAME).read_text()
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    (rows,) = model.run([x, np.array([0, 4, -1, 2])])
    np.testing.assert_array_equal(rows, x[[0, 4, -1, 2]])
    bad = [x, np.array([0, 7, 1, 2])]
    with pytest.raises(InputError) as on_cpu:
        xtc.compile(gather()).run(bad)
    with pytest.raises(InputError, match="index 7 is out of range") as on_gpu:
        model.run(bad)
    assert str(on_gpu.value) == str(on_cpu.value)
