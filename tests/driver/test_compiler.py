"""`xtc.compile`, the one way to compile and run a model: whole
architectures against onnxruntime, every opt level, the memory plan and the
manifest it reports, inputs refused before native code runs, bad requests."""

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import VerifyException

import xtc
import xtc.interp
from xtc.driver.compiler import CompileError, compile_graph, compile_model, pipeline
from xtc.driver.pipelines import parse_pipeline, pipeline_steps
from xtc.driver.textual_ir import module_to_text
from xtc.frontend.onnx import import_model
from xtc.runtime.model import InputError
from xtc.runtime.timing import Timer
from xtc.tools.model_builders import bert_encoder, resnet_like


def onnxruntime_outputs(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return list(session.run(None, inputs))


def assert_close_to_scale(got: np.ndarray, expected: np.ndarray, rtol: float = 1e-4) -> None:
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * float(np.abs(expected).max()))


@pytest.fixture(scope="module")
def resnet() -> tuple[onnx.ModelProto, xtc.CompiledModel]:
    model = resnet_like()
    return model, xtc.compile(model)


def image(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((1, 3, 32, 32)).astype(np.float32)


def test_resnet_like_matches_onnxruntime(resnet: tuple[onnx.ModelProto, xtc.CompiledModel]) -> None:
    model, compiled = resnet
    x = image()
    (expected,) = onnxruntime_outputs(model, {"data": x})
    (got,) = compiled.run({"data": x})
    assert_close_to_scale(got, expected)
    # A list in input order works too; a second run gives the same answer
    # (nothing is left over in the arena), into new arrays.
    (again,) = compiled.run([x])
    np.testing.assert_array_equal(again, got)
    assert again is not got


def test_bert_encoder_matches_onnxruntime() -> None:
    model = bert_encoder(layers=2)
    rng = np.random.default_rng(1)
    mask = np.ones((1, 16), np.int64)
    mask[0, 10:] = 0
    inputs = {"input": rng.standard_normal((1, 16, 32)).astype(np.float32), "mask": mask}
    (expected,) = onnxruntime_outputs(model, inputs)
    compiled = xtc.compile(model)
    (got,) = compiled.run(inputs)
    assert_close_to_scale(got, expected)
    assert [s.name for s in compiled.input_specs] == ["input", "mask"]
    assert compiled.input_specs[1].dtype == np.int64


def _one_graph(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    initializers: tuple[onnx.TensorProto, ...] = (),
) -> onnx.ModelProto:
    graph = onnx.helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 19)])


def test_one_math_function_on_two_float_types() -> None:
    """Resize's index math floors in f64 beside an f32 Floor; a Softmax's
    f32 exp beside an Exp of a Cast to f64: one LLVM module holds
    llvm.floor.f32 and .f64, llvm.exp.f32 and .f64."""
    helper, tp = onnx.helper, onnx.TensorProto
    scales = onnx.numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    resize_floor = _one_graph(
        [
            helper.make_node("Resize", ["x", "", "scales"], ["r"], mode="linear"),
            helper.make_node("Floor", ["r"], ["y"]),
        ],
        [helper.make_tensor_value_info("x", tp.FLOAT, [1, 2, 5, 7])],
        [helper.make_tensor_value_info("y", tp.FLOAT, [1, 2, 10, 14])],
        (scales,),
    )
    softmax_exp = _one_graph(
        [
            helper.make_node("Softmax", ["x"], ["s"], axis=-1),
            helper.make_node("Cast", ["x"], ["d"], to=tp.DOUBLE),
            helper.make_node("Exp", ["d"], ["e"]),
        ],
        [helper.make_tensor_value_info("x", tp.FLOAT, [3, 10])],
        [
            helper.make_tensor_value_info("s", tp.FLOAT, [3, 10]),
            helper.make_tensor_value_info("e", tp.DOUBLE, [3, 10]),
        ],
    )
    rng = np.random.default_rng(3)
    for model, shape in ((resize_floor, (1, 2, 5, 7)), (softmax_exp, (3, 10))):
        x = rng.normal(0, 5, shape).astype(np.float32)
        expected = onnxruntime_outputs(model, {"x": x})
        for got, want in zip(xtc.compile(model).run([x]), expected, strict=True):
            assert got.dtype == want.dtype
            assert_close_to_scale(got, want, rtol=1e-5)


def test_constant_outputs_of_two_element_types_are_copied_out() -> None:
    """Each output is an llvm.memcpy from its global ([4 x float] and
    [4 x i64]): one intrinsic declaration serves both."""
    helper, tp = onnx.helper, onnx.TensorProto
    a = np.array([1.5, 2.5, 3.0, 4.0], np.float32)
    b = np.array([1, 2, 3, 4], np.int64)
    model = _one_graph(
        [
            helper.make_node("Constant", [], ["a"], value=onnx.numpy_helper.from_array(a)),
            helper.make_node("Constant", [], ["b"], value=onnx.numpy_helper.from_array(b)),
        ],
        [],
        [
            helper.make_tensor_value_info("a", tp.FLOAT, [4]),
            helper.make_tensor_value_info("b", tp.INT64, [4]),
        ],
    )
    got_a, got_b = xtc.compile(model, cache=False).run([])
    np.testing.assert_array_equal(got_a, a)
    np.testing.assert_array_equal(got_b, b)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_x2_of_a_14_wide_image_splits_its_loops(mode: str) -> None:
    """The 28-wide output loop is split by the default schedule while an
    index_cast (one operand) reads the loop index: tir-split must skip such
    users, not index their missing divisor (bench/ops.py's resize rows)."""
    helper, tp = onnx.helper, onnx.TensorProto
    scales = onnx.numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    model = _one_graph(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode)],
        [helper.make_tensor_value_info("x", tp.FLOAT, [1, 16, 14, 14])],
        [helper.make_tensor_value_info("y", tp.FLOAT, [1, 16, 28, 28])],
        (scales,),
    )
    x = np.random.default_rng(4).standard_normal((1, 16, 14, 14)).astype(np.float32)
    (expected,) = onnxruntime_outputs(model, {"x": x})
    (got,) = xtc.compile(model).run([x])
    assert_close_to_scale(got, expected, rtol=1e-5)


RESIZE_TRANSFORMATIONS = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_crop_and_resize",
)


@settings(max_examples=12, deadline=None)  # each compiles natively: 30 took 36 s of CI
# a length-1 output: coordinate 0 (ONNX, onnxruntime), not onnx.reference's -0.5
@example((1, 2, 1), (0.5, 1.0), "cubic", "pytorch_half_pixel", "floor")
@given(
    shape=st.tuples(st.integers(1, 3), st.integers(1, 9), st.integers(1, 9)),
    scales=st.tuples(*[st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0])] * 2),
    mode=st.sampled_from(["linear", "linear", "nearest", "cubic"]),
    transformation=st.sampled_from(RESIZE_TRANSFORMATIONS),
    nearest_mode=st.sampled_from(["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]),
)
def test_resize_matches_onnxruntime(
    shape: tuple[int, int, int],
    scales: tuple[float, float],
    mode: str,
    transformation: str,
    nearest_mode: str,
) -> None:
    """Resize of H and W, compiled and run natively, against onnxruntime:
    linear resizes W into a stage of its own, then H from whole rows; the
    other modes and every coordinate transformation stay right."""
    helper, tp = onnx.helper, onnx.TensorProto
    channels, height, width = shape
    # A fractional scaled size: align_corners and tf_crop_and_resize divide
    # by it (as ONNX's reference), onnxruntime by the floored output size.
    assume((height * scales[0]).is_integer() and (width * scales[1]).is_integer())
    assume(scales != (1.0, 1.0))  # onnxruntime returns its input, roi or not
    out = [1, channels, int(height * scales[0]), int(width * scales[1])]
    # The crop of an axis of scale 1 onnxruntime skips (the reference does not).
    # Dyadic bounds: a crop coordinate that lands on the input's edge is then
    # exact in f32 (onnxruntime) and f64 (xtc), not inside in one, outside
    # in the other (0.1 and -0.2 gave 3.000000006 past an edge at 3).
    starts, ends = [0.125, -0.25], [0.875, 1.25]
    for axis, scale in enumerate(scales):
        if scale == 1.0:
            starts[axis], ends[axis] = 0.0, 1.0
    roi = np.array([0, 0, *starts, 1, 1, *ends], np.float32)
    attributes = {"mode": mode, "coordinate_transformation_mode": transformation}
    if mode == "nearest":
        attributes["nearest_mode"] = nearest_mode
    if transformation == "tf_crop_and_resize":
        attributes["extrapolation_value"] = -3.0
    model = _one_graph(
        [helper.make_node("Resize", ["x", "roi", "scales"], ["y"], **attributes)],
        [helper.make_tensor_value_info("x", tp.FLOAT, [1, channels, height, width])],
        [helper.make_tensor_value_info("y", tp.FLOAT, out)],
        (
            onnx.numpy_helper.from_array(roi, "roi"),
            onnx.numpy_helper.from_array(np.array([1, 1, *scales], np.float32), "scales"),
        ),
    )
    x = np.random.default_rng(height * 10 + width).standard_normal((1, *shape), np.float32)
    (expected,) = onnxruntime_outputs(model, {"x": x})
    (got,) = xtc.compile(model).run([x])
    assert_close_to_scale(got, expected, rtol=1e-5)


def test_a_chain_of_2500_nodes_imports_compiles_and_runs() -> None:
    """Every walk over the graph, every pass and the importer are iterative:
    a 2500-deep chain (2.5 times Python's recursion limit of 1000) fuses
    into one kernel at -O3, stays 2500 kernels at -O0, and both match the
    interpreter (and the chain's closed form)."""
    helper, tp = onnx.helper, onnx.TensorProto
    kinds = ["Neg", "Abs", "Relu", "Neg"]
    names = ["x", *(f"t{i}" for i in range(2499)), "y"]
    nodes = [helper.make_node(kinds[i % 4], [names[i]], [names[i + 1]]) for i in range(2500)]
    model = _one_graph(
        nodes,
        [helper.make_tensor_value_info("x", tp.FLOAT, [16])],
        [helper.make_tensor_value_info("y", tp.FLOAT, [16])],
    )
    x = np.random.default_rng(5).normal(size=16).astype(np.float32)
    (expected,) = xtc.interp.run(import_model(model), [x])
    np.testing.assert_array_equal(expected, -np.abs(x))
    for opt_level in (3, 0):
        (got,) = xtc.compile(model, opt_level=opt_level).run([x])
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("opt_level", [0, 1, 2])
def test_every_opt_level_gives_the_same_answer(
    opt_level: int, resnet: tuple[onnx.ModelProto, xtc.CompiledModel]
) -> None:
    model, reference = resnet
    x = image(2)
    compiled = xtc.compile(model, opt_level=opt_level)
    assert_close_to_scale(compiled.run([x])[0], reference.run([x])[0], rtol=1e-5)
    assert compiled.manifest["opt_level"] == opt_level
    replay = pipeline_steps(compiled.manifest["pipeline"])
    parse_pipeline(compiled.manifest["pipeline"])  # xtc-opt -p can replay it
    if opt_level < 2:
        assert replay == pipeline_steps(pipeline(opt_level))
    else:
        # The kernels' schedules come right after tir-partition.
        schedule = [step for step in replay if "{func=" in step]
        assert [step for step in replay if step not in schedule] == pipeline_steps(
            pipeline(opt_level)
        )
        assert replay.index(schedule[0]) == replay.index("tir-partition") + 1
        assert any(step.startswith("tir-cache-write{func=fused_conv2d") for step in schedule)
        assert any(step.startswith("tir-parallel{func=") for step in schedule)


def test_pipeline_strings() -> None:
    to_llvm = (
        "tir-lower-parallel,tir-lower-unrolled,tir-lower-vectorized,tir-cse,"
        "convert-tir-to-cf,convert-to-llvm"
    )
    lowerings = f"convert-graph-to-te,convert-te-to-tir,tir-plan-memory,{to_llvm}"
    assert pipeline(0) == lowerings
    graph = (
        "graph-qdq-to-integer,graph-fold-constants,"
        "graph-simplify-inference,graph-fold-scale-axis,graph-pad-conv-channels,"
        "graph-sink-slice,graph-alter-layout,graph-block-activations,graph-winograd,"
        "graph-fold-constants,graph-sink-transpose,graph-share-concat-prefix,dce,graph-fuse-ops"
    )
    fused = (
        f"convert-graph-to-te,te-inline,convert-te-to-tir,tir-concat-in-place,tir-partition,"
        f"tir-expand-math,tir-plan-memory,{to_llvm}"
    )
    assert pipeline(3) == f"{graph},{fused}"
    assert pipeline_steps("a,b{x=1,2 y=3},c") == ["a", "b{x=1,2 y=3}", "c"]


def test_manifest_describes_the_model(resnet: tuple[onnx.ModelProto, xtc.CompiledModel]) -> None:
    _, compiled = resnet
    manifest = compiled.manifest
    assert manifest["xtc_version"] == xtc.__version__
    assert manifest["inputs"] == [{"name": "data", "shape": [1, 3, 32, 32], "dtype": "float32"}]
    assert manifest["outputs"][0]["shape"] == [1, 10]
    assert manifest["target"]["name"] == "llvm"
    # The memory plan reuses memory: the arena is smaller than the buffers.
    assert 0 < manifest["arena_bytes"] < manifest["unplanned_bytes"]
    # Every weight is in the library: conv weights (folded with the batch
    # norms), the fc weights and bias.
    n_weights = sum(
        t.size
        for t in (
            np.asarray(onnx.numpy_helper.to_array(w))
            for w in resnet[0].graph.initializer
            if "bn" not in w.name
        )
    )
    assert manifest["weights_bytes"] >= 4 * n_weights


def test_compile_from_a_path(tmp_path: Path) -> None:
    model = resnet_like(widths=(4, 8), image=16)
    onnx.save(model, tmp_path / "small.onnx")
    compiled = xtc.compile(str(tmp_path / "small.onnx"))
    assert compiled.manifest["name"] == "small"
    x = np.random.default_rng(3).standard_normal((1, 3, 16, 16)).astype(np.float32)
    assert_close_to_scale(compiled.run([x])[0], onnxruntime_outputs(model, {"data": x})[0])


def test_symbolic_inputs_take_input_shapes() -> None:
    model = resnet_like(widths=(4, 8), image=16, batch="N")
    compiled = xtc.compile(model, input_shapes={"data": [2, 3, 16, 16]})
    assert compiled.input_specs[0].shape == (2, 3, 16, 16)
    x = np.random.default_rng(4).standard_normal((2, 3, 16, 16)).astype(np.float32)
    assert_close_to_scale(compiled.run([x])[0], onnxruntime_outputs(model, {"data": x})[0])


def test_unaligned_and_strided_inputs_are_copied(
    resnet: tuple[onnx.ModelProto, xtc.CompiledModel],
) -> None:
    _, compiled = resnet
    x = image(5)
    raw = np.empty(x.size + 1, np.float32)
    unaligned = raw[1:].reshape(x.shape)
    unaligned[...] = x
    transposed = np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    expected = compiled.run([x])[0]
    np.testing.assert_array_equal(compiled.run([unaligned])[0], expected)
    np.testing.assert_array_equal(compiled.run([transposed])[0], expected)


@pytest.mark.parametrize(
    "inputs, message",
    [
        ({"image": image()}, r"missing input 'data'; 'image' is not an input of the model"),
        ({"data": image(), "extra": image()}, "'extra' is not an input of the model"),
        ([image(), image()], "the model takes 1 inputs"),
        ([], "the model takes 1 inputs"),
        ({"data": np.zeros((1, 3, 16, 16), np.float32)}, r"has shape \[1, 3, 16, 16\]"),
        ({"data": image().astype(np.float64)}, "has dtype float64, the model takes float32"),
        ({"data": [[1.0]]}, "has dtype float64"),
        ("data", "inputs must be a dict"),
        (42, "inputs must be a dict"),
    ],
)
def test_wrong_inputs_are_refused_before_native_code_runs(
    inputs: object, message: str, resnet: tuple[onnx.ModelProto, xtc.CompiledModel]
) -> None:
    with pytest.raises(InputError, match=message):
        resnet[1].run(inputs)


def test_benchmark_statistics(resnet: tuple[onnx.ModelProto, xtc.CompiledModel]) -> None:
    result = resnet[1].benchmark([image()], repeat=4, number=3)
    assert len(result.runs_ms) == 4 and result.number == 3
    assert 0 < result.min_ms <= result.median_ms <= result.max_ms
    assert result.min_ms <= result.mean_ms <= result.max_ms
    table = result.table().splitlines()
    assert table[0] == "Execution time summary:"
    assert table[1].split() == [
        "mean",
        "(ms)",
        "median",
        "(ms)",
        "max",
        "(ms)",
        "min",
        "(ms)",
        "std",
        "(ms)",
    ]
    assert len(table[2].split()) == 5
    with pytest.raises(ValueError, match="at least 1"):
        resnet[1].benchmark([image()], repeat=0)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"target": "rocm"}, "unknown target 'rocm'"),
        ({"target": "cuda", "tuning_records": "r.json"}, "tuning_records is not supported"),
        ({"opt_level": 4}, "opt_level must be 0, 1, 2 or 3"),
        ({"tuning_records": "/nonexistent/records.json"}, "no such file"),
    ],
)
def test_bad_requests_are_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(CompileError, match=message):
        xtc.compile(resnet_like(), **options)  # type: ignore[arg-type]


def test_a_file_that_holds_no_record_is_refused(tmp_path: Path) -> None:
    records = tmp_path / "records.json"
    records.write_text("[]")
    with pytest.raises(CompileError, match="line 1: not an xtc tuning record"):
        xtc.compile(resnet_like(), tuning_records=records)


# ------------------------------------------------- verification and timing


def _breaking_after(monkeypatch: pytest.MonkeyPatch, broken_pass: str) -> list[tuple[str, bool]]:
    """Makes `broken_pass` leave invalid IR (a kernel whose type no longer
    matches its arguments); returns the (pass, verified) calls seen."""
    from xdsl.dialects.builtin import FunctionType
    from xdsl.dialects.func import FuncOp

    import xtc.driver.pipelines as pipelines

    original = pipelines.apply_pipeline
    seen: list[tuple[str, bool]] = []

    def apply(module: ModuleOp, spec: str, *, verify: bool = True) -> ModuleOp:
        original(module, spec, verify=False)
        seen.append((spec, verify))
        if spec == broken_pass:
            kernel = next(
                f for f in module.ops if isinstance(f, FuncOp) and f.sym_name.data != "main"
            )
            kernel.function_type = FunctionType.from_lists([], [])
        if verify:
            module.verify()
        return module

    monkeypatch.setattr(pipelines, "apply_pipeline", apply)
    return seen


def test_the_ir_is_verified_at_the_end_of_each_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _breaking_after(monkeypatch, "convert-graph-to-te")
    with pytest.raises(VerifyException) as caught:
        compile_model(resnet_like(widths=(4, 8), image=16), verify_each=False)
    # convert-graph-to-te broke it; te-inline ran (unverified), then the te
    # stage's check caught it and said how to find the pass.
    assert [spec for spec, _ in seen][-2:] == ["convert-graph-to-te", "te-inline"]
    assert not any(verified for _, verified in seen)
    assert "at the end of the te stage" in " ".join(caught.value.__notes__)
    assert "--verify-each" in " ".join(caught.value.__notes__)


def test_verify_each_names_the_pass_that_broke_the_ir(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _breaking_after(monkeypatch, "convert-graph-to-te")
    with pytest.raises(VerifyException):
        compile_model(resnet_like(widths=(4, 8), image=16), verify_each=True)
    assert seen[-1] == ("convert-graph-to-te", True)


def test_xtc_verify_each_in_the_environment_verifies_every_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _breaking_after(monkeypatch, "no pass")
    monkeypatch.setenv("XTC_VERIFY_EACH", "1")
    # jobs=1: the kernel units are scheduled and lowered in this process, where
    # apply_pipeline is watched
    compile_model(resnet_like(widths=(4, 8), image=16), jobs=1)
    assert seen and all(verified for _, verified in seen)
    assert any(spec.startswith("tir-split{") for spec, _ in seen)
    seen.clear()
    monkeypatch.setenv("XTC_VERIFY_EACH", "0")
    compile_model(resnet_like(widths=(4, 8), image=16), cache=False)  # compiled again, not a hit
    assert seen and not any(verified for _, verified in seen)


def test_the_timer_sees_every_pass_schedule_step_and_llvm_step() -> None:
    timer = Timer()
    # One module (no cache, one job): every step is timed in this process.
    compile_model(
        resnet_like(widths=(4, 8), image=16), timer=timer, verify_each=False, cache=False, jobs=1
    )
    for name in ("import", *pipeline(3).split(","), "schedule-kernels", "llvm", "load"):
        assert timer.seconds(name) > 0, name
    for stage in ("graph", "te", "tir", "llvm"):
        assert timer.seconds(f"verify {stage}") > 0, stage
    for step in ("tir-split", "tir-vectorize", "tir-parallel", "verify"):
        assert timer.seconds("schedule-kernels", step) > 0, step
    for step in ("translate", "parse", "optimize", "codegen", "link"):
        assert timer.seconds("llvm", step) > 0, step
    children = sum(
        timer.seconds("llvm", s) for s in ("translate", "parse", "optimize", "codegen", "link")
    )
    assert children <= timer.seconds("llvm") <= timer.total()


def test_a_compile_leaves_the_module_it_was_given_as_it_was() -> None:
    module = import_model(resnet_like(widths=(4, 8), image=16))
    before = module_to_text(module)
    compile_graph(module)
    assert module_to_text(module) == before


ITERATIONS_TEXT = """
func.func @main(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %c = graph.matmul %a, %b : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %s = graph.sigmoid %c : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %t = graph.add %s, %c : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  func.return %t : tensor<4x5xf32>
}
"""


def test_model_iterations_count_every_kernel_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """4x5 outputs of 3 products each, then two 4x5 elementwise kernels; a
    model under the bound runs serial (with a remark), at the bound not."""
    from xtc import remarks
    from xtc.driver.pipelines import apply_pipeline
    from xtc.driver.compile_settings import SERIAL_VARIABLE
    from xtc.driver.scheduling import model_iterations, runs_serial
    from xtc.driver.textual_ir import parse_module

    module = apply_pipeline(parse_module(ITERATIONS_TEXT), "convert-graph-to-te,convert-te-to-tir")
    assert model_iterations(module, "main") == 4 * 5 * 3 + 2 * 4 * 5
    monkeypatch.setenv(SERIAL_VARIABLE, "100")
    with remarks.collect_remarks() as said:
        assert not runs_serial(module, "main")
    assert said == []
    monkeypatch.setenv(SERIAL_VARIABLE, "101")
    with remarks.collect_remarks() as said:
        assert runs_serial(module, "main")
    assert [r.category for r in said] == [remarks.SERIAL_MODEL]
    assert "the model runs 100 innermost iterations, under 101" in said[0].message


def test_a_model_of_one_larger_kernel_keeps_its_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-node model under the model bound whose kernel runs
    SERIAL_CALL_ITERATIONS or more (a 64x32x32 relu: 65536) stays
    parallel by default; one of half that size runs serial."""
    from xtc.driver.compile_settings import SERIAL_CALL_ITERATIONS, SERIAL_VARIABLE

    monkeypatch.delenv(SERIAL_VARIABLE, raising=False)
    for rows, parallel in ((32, True), (16, False)):
        shape = [1, 64, rows, 32]
        assert (np.prod(shape) >= SERIAL_CALL_ITERATIONS) == parallel
        graph = helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"])],
            "relu",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        compiled = compile_model(model, cache=False)
        assert ("tir-parallel{func=" in compiled.manifest["pipeline"]) == parallel
        assert ("serial-model" in compiled.manifest["remarks"]) == (not parallel)
        x = np.random.default_rng(rows).standard_normal(shape).astype(np.float32)
        np.testing.assert_array_equal(compiled.run([x])[0], np.maximum(x, 0))


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_model_too_small_for_threads_runs_serial(
    jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By default (no XTC_SERIAL_MODEL_ITERATIONS), a tiny model's schedules
    make no loop parallel, in one module or in kernel units; the bound is
    part of the compile cache's key, so a parallel compile of the same model
    is not the serial one from the cache; both give the same answer."""
    from xtc.driver.compile_settings import SERIAL_VARIABLE

    model = resnet_like(widths=(4, 8), image=16)
    x = np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32)
    monkeypatch.delenv(SERIAL_VARIABLE, raising=False)
    serial = compile_model(model, jobs=jobs, cache=True)
    assert "tir-parallel" not in serial.manifest["pipeline"]
    assert "tir-split{func=" in serial.manifest["pipeline"]  # the rest of the schedules
    assert serial.manifest["remarks"].get("serial-model") == 1
    monkeypatch.setenv(SERIAL_VARIABLE, "0")
    parallel = compile_model(model, jobs=jobs, cache=True)
    assert "compile_cache" not in parallel.manifest  # a miss
    assert "tir-parallel{func=" in parallel.manifest["pipeline"]
    assert "serial-model" not in parallel.manifest["remarks"]
    np.testing.assert_allclose(serial.run([x])[0], parallel.run([x])[0], rtol=1e-6, atol=1e-6)
    monkeypatch.setenv(SERIAL_VARIABLE, "many")
    with pytest.raises(CompileError, match="XTC_SERIAL_MODEL_ITERATIONS must be a count"):
        compile_model(model, jobs=jobs, cache=False)


@pytest.mark.parametrize("size", [16, 45])
def test_relu_and_clip_at_zero_propagate_nan_and_keep_zeros_equal(size: int) -> None:
    """ReLU and Clip(0, 6) compile to a max against zero whose zeros are
    unordered (nsz): NaN still propagates, -0 gives a zero, ±inf clamp; on
    the vector path (16) and with a scalar tail (45)."""
    specials = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, -1e-38, 7.0], np.float32)
    x = np.random.default_rng(size).normal(0, 3, (2, size)).astype(np.float32)
    x.flat[: len(specials)] = specials
    x.flat[-len(specials) :] = specials
    helper, tp = onnx.helper, onnx.TensorProto
    model = helper.make_model(
        helper.make_graph(
            [
                helper.make_node("Relu", ["x"], ["r"]),
                helper.make_node("Clip", ["x", "lo", "hi"], ["c"]),
            ],
            "relu_clip",
            [helper.make_tensor_value_info("x", tp.FLOAT, [2, size])],
            [
                helper.make_tensor_value_info("r", tp.FLOAT, [2, size]),
                helper.make_tensor_value_info("c", tp.FLOAT, [2, size]),
            ],
            [
                onnx.numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
                onnx.numpy_helper.from_array(np.array(6.0, np.float32), "hi"),
            ],
        ),
        opset_imports=[helper.make_opsetid("", 18)],
    )
    relu, clip = xtc.compile(model).run([x])
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(relu, np.maximum(x, np.float32(0)))
        np.testing.assert_array_equal(clip, np.minimum(np.maximum(x, np.float32(0)), 6))
    assert np.isnan(relu.flat[0]) and np.isnan(clip.flat[-len(specials)])
