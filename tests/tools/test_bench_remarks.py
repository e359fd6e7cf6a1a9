"""The bench models lose nothing silently: every kernel of each gets its
whole default schedule (no step refused) and every loop it vectorizes
becomes vector code (no scalar fallback), at the smoke-test sizes of
bench/models.py. A renamed loop or a new pattern that costs a model its
schedule fails here, by kernel and reason, not in a benchmark's noise."""

from collections.abc import Callable

import onnx
import pytest
from xdsl.dialects.func import FuncOp

from xtc.driver.compiler import pipeline
from xtc.driver.scheduling import schedule_kernels
from xtc.driver.pipelines import apply_pipeline, pipeline_steps
from xtc.frontend.onnx import import_model
from xtc.interp import entry_function
from xtc.ops.schedules import default_schedule
from xtc.remarks import Remark, collect_remarks
from xtc.tools.model_builders import bert_encoder, mobilenet_v2, resnet, resnet_like, squeezenet

BENCH_MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "resnet_like": resnet_like,
    "resnet18": lambda: resnet(18, image=32, classes=10),
    "resnet50": lambda: resnet(50, image=32, classes=10),
    "mobilenet_v2": lambda: mobilenet_v2(image=32, classes=10),
    "squeezenet": lambda: squeezenet(image=32, classes=10),
    "bert": lambda: bert_encoder(layers=1, seq=16, hidden=32, heads=4, ffn=64),
}

EXPECTED_REMARKS: dict[str, list[str]] = {}
"""Model -> the remarks it is known to give, each with the reason it is
accepted; none today."""


def lowered_with_remarks(model: onnx.ModelProto) -> tuple[list[str], list[str], list[Remark]]:
    """The model through every pass of `xtc.compile` at -O3 up to `llvm`:
    the default recipes of its kernels, the schedule steps applied, and the
    remarks given."""
    module = import_model(model)
    passes = pipeline_steps(pipeline(3))
    scheduled_after = passes.index("convert-te-to-tir") + 1
    with collect_remarks() as remarks:
        apply_pipeline(module, ",".join(passes[:scheduled_after]), verify=False)
        entry = entry_function(module).sym_name.data
        recipes = [
            step
            for kernel in module.ops
            if isinstance(kernel, FuncOp) and kernel.sym_name.data != entry
            for recipe in default_schedule(kernel)
            for step in recipe
        ]
        applied = schedule_kernels(module, entry, verify_each=False)
        apply_pipeline(module, ",".join(passes[scheduled_after:]), verify=False)
    return recipes, applied, remarks


@pytest.mark.parametrize("name", sorted(BENCH_MODELS))
def test_bench_model_gets_its_whole_schedule_and_vector_code(name: str) -> None:
    recipes, applied, remarks = lowered_with_remarks(BENCH_MODELS[name]())
    assert [r.text() for r in remarks] == EXPECTED_REMARKS.get(name, [])
    assert applied == recipes
    assert any(step.startswith("tir-vectorize{") for step in applied)
