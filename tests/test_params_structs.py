"""The params the executor initialises and the C params structs the kernels read are one
declaration, checked: for every operator of the example models and of the real models
the tests fetch, the fields Python computes are exactly the fields of the struct in the
portable headers (parsed with pycparser), so a field cannot be missing on one side and
silently become 0 on the other."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from conftest import REPO
from pycparser import c_ast, c_parser

from tvmdev.frontends.importer import import_file
from tvmdev.load.board import board_by_name
from tvmdev.load.model import load_model
from tvmdev.model.graph import Model
from tvmdev.plan.pipeline import compile_model
from tvmdev.render.device import status_header

PORTABLE = REPO / "runtime/kernels/portable"
HEADERS = ("tvmk_portable.h", "tvmk_s8.h", "tvmk_s8_ops.h", "tvmk_s16.h", "tvmk_rawint.h",
           "tvmk_recurrent.h", "tvmk_fused.h")
SCRATCH = ("scratch_bytes", "scratch")


@cache
def struct_fields() -> dict[str, tuple[str, ...]]:
    """Every params struct of the portable headers -> its field names, in order."""
    cc = shutil.which("gcc") or shutil.which("cpp")
    if cc is None:
        pytest.skip("no C preprocessor (gcc) to read the portable headers")
    source = "".join(f'#include "{h}"\n' for h in HEADERS)
    with tempfile.TemporaryDirectory() as tmp:  # the status header the kernels include
        status = status_header("tvm/device/status.h", "test")
        (Path(tmp) / status.path).parent.mkdir(parents=True)
        (Path(tmp) / status.path).write_bytes(status.data)
        proc = subprocess.run([cc, "-E", "-P", "-nostdinc", f"-I{REPO / 'runtime/fake_libc'}",
                               f"-I{PORTABLE}", f"-I{tmp}", "-x", "c", "-"], input=source,
                              capture_output=True, text=True, check=True)
    ast = c_parser.CParser().parse(proc.stdout)
    out: dict[str, tuple[str, ...]] = {}

    class Visitor(c_ast.NodeVisitor):
        def visit_Struct(self, node: c_ast.Struct) -> None:  # noqa: N802 (pycparser's name)
            if node.name and node.name.endswith("_params") and node.decls:
                out[node.name] = tuple(d.name for d in node.decls)

    Visitor().visit(ast)
    return out


def models() -> list[Model]:
    found = [load_model(p) for p in sorted((REPO / "examples").glob("*/*.yaml"))]
    cache_dir = Path.home() / ".cache/tvmdev-models"
    found += [import_file(p).to_model() for p in sorted(cache_dir.glob("*.tflite"))]
    return found


@pytest.mark.slow
def test_every_operators_params_are_its_structs_fields(
        tflite_model: Callable[[str], Path]) -> None:
    tflite_model("keyword_spotting.tflite")  # the int8 models are fetched (else skip/fail)
    fields = struct_fields()
    seen: set[str] = set()
    for model in models():
        # the records the executor renders, with a board library's precomputed fields
        # (CMSIS-NN's kernel_sums on a Cortex-M board that has the tree)
        for board in ("host", "mps2_an386"):
            compiled = compile_model(model, board_by_name(board))
            m = compiled.model
            for prep in compiled.ops:
                op = m.operators[prep.index]
                assert prep.struct in fields, \
                    f"{m.name}/{op.name}: no struct {prep.struct} in {HEADERS}"
                given = tuple(prep.params) + (SCRATCH if prep.takes_scratch else ())
                assert sorted(given) == sorted(fields[prep.struct]), (m.name, op.name,
                                                                       prep.struct)
                with pytest.raises(TypeError):  # prepared once: read-only
                    prep.params["x"] = 0  # type: ignore[index]
                seen.add(prep.struct)
    # the example models and the real ones reach these structs, float and int8 (their
    # int8 ADDs all fuse into conv2d_add)
    assert seen >= {
        "tvmk_conv2d_add_s8_params", "tvmk_binary_params", "tvmk_conv2d_params",
        "tvmk_conv2d_s8_params", "tvmk_depthwise_conv2d_s8_params",
        "tvmk_fully_connected_params", "tvmk_fully_connected_s8_params", "tvmk_gemm_params",
        "tvmk_pool2d_params", "tvmk_pool2d_s8_params", "tvmk_quantize_s8_params",
        "tvmk_softmax_params", "tvmk_softmax_s8_params", "tvmk_unary_params"}, sorted(seen)
