"""parse_module reads a shaped type written again as the type read the
first time, and reads every file as xDSL's own parser does."""

from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser

from xtc.driver.textual_ir import make_context, module_to_text, parse_module

LAYOUTS = """builtin.module {
  func.func @k(%a: memref<4x8xf32>, %b: memref<4x8xf32, strided<[8, 1], offset: 2>>,
               %c: memref<4x4xf32, affine_map<(d0, d1) -> (d0 * 4 + d1)>>, %d: vector<4xf32>) {
    %i = arith.constant 0 : index
    %x = memref.load %a[%i, %i] : memref<4x8xf32> // a comment after the type
    %y = memref.load %b[%i, %i] : memref<4x8xf32, strided<[8, 1], offset: 2>>
    %z = memref.load %c[%i, %i] : memref<4x4xf32, affine_map<(d0, d1) -> (d0 * 4 + d1)>>
    memref.store %x, %a[%i, %i] : memref<4x8xf32>
    memref.store %y, %b[%i, %i] : memref<4x8xf32, strided<[8, 1], offset: 2>>
    memref.store %z, %c[%i, %i] : memref<4x4xf32, affine_map<(d0, d1) -> (d0 * 4 + d1)>>
    func.return
  }
}
"""


def _as_xdsl_reads(text: str) -> str:
    return module_to_text(Parser(make_context(), text).parse_module(), generic=True)


def test_layouts_and_comments_read_as_xdsl_reads_them() -> None:
    assert module_to_text(parse_module(LAYOUTS), generic=True) == _as_xdsl_reads(LAYOUTS)


def test_a_type_written_again_is_the_type_read_first() -> None:
    module = parse_module(LAYOUTS)
    function = module.body.block.first_op
    assert function is not None
    stores = [op for op in function.walk() if op.name == "memref.store"]
    for store, argument in zip(stores, function.regions[0].block.args, strict=False):
        assert store.operands[1].type is argument.type


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.integers(1, 64), min_size=1, max_size=4),
            st.sampled_from(["f32", "f16", "i8", "i64"]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_kernels_read_as_xdsl_reads_them(buffers: list[tuple[list[int], str]]) -> None:
    types = [f"memref<{'x'.join(map(str, s))}x{e}>" for s, e in buffers]
    arguments = ", ".join(f"%b{n}: {t}" for n, t in enumerate(types))
    body = "\n".join(
        f"    %v{n} = memref.load %b{n}[{', '.join(['%i'] * len(s))}] : {t}\n"
        f"    memref.store %v{n}, %b{n}[{', '.join(['%i'] * len(s))}] : {t}"
        for n, ((s, _), t) in enumerate(zip(buffers, types, strict=True))
    )
    text = (
        f"builtin.module {{\n  func.func @k({arguments}) {{\n"
        f"    %i = arith.constant 0 : index\n{body}\n    func.return\n  }}\n}}\n"
    )
    assert module_to_text(parse_module(text), generic=True) == _as_xdsl_reads(text)

