"""Fusions (issue 25): an int8 CONV_2D and the ADD that alone reads it become one
``conv2d_add`` operator, a DEPTHWISE_CONV_2D and the 1x1 CONV_2D that alone reads it one
``depthwise_pointwise`` (tvmdev/plan/fuse.py, chosen by tvmdev/plan/fusing.py), checked
against TFLM's interpreter.

The models (tests/fuse_cases.py) hold one branch per rule and per refusal. What is
checked: which convs fuse and why the others do not; the fused model's outputs, from
tvmdev's reference and from the portable C kernel (host, and the Cortex-M4 in QEMU), are
TFLM's bit for bit, and so are CMSIS-NN's conv2d_add tiles on the M4 and the M55; a
mutated piece of the fused arithmetic makes the run fail; the fusion shows in plan.json
and in ``tvmdev aot``'s output, and ``--no-fuse`` keeps every ADD; it happens only where
it does not lose (on one library; beside CMSIS-NN only where the workspace shrinks), and
the depthwise one only where it needs less memory; and on ResNet-8
(image_classification) and MCUNet VWW it is exact end to end, writes the output over the
residual and shrinks the workspace.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import fuse_cases as fc
import numpy as np
import pytest
import tflm_ref
from conftest import Result, need_tool

from tvmdev.model.graph import Model, Operator


def _model(tmp_path: Path, branches: list[fc.Branch] | None = None) -> tuple[Path, Model]:
    from tvmdev.frontends.importer import import_file
    path = tmp_path / "fuse.tflite"
    path.write_bytes(fc.model(branches))
    return path, import_file(path).to_model()


# CMSIS-NN's conv2d_add on the M4: the board without tvmdev_cm, whose general convolution
# (tvmdev/plan/hooks/tvmdev_cm_conv.py) would take the 3x3 convolutions (and the pairs,
# on two libraries, would not fuse).
def _cmsis_m4() -> Any:
    from tvmdev.load.board import board_by_name
    return replace(board_by_name("mps2_an386"), libraries=("cmsis_nn",), library_flash=())


def _cmsis_m4_yaml(tmp_path: Path) -> str:
    from tvmdev.load.board import board_by_name
    text = board_by_name("mps2_an386").path.read_text()
    for old, new in (("libraries: [tvmdev_cm, cmsis_nn]", "libraries: [cmsis_nn]"),
                     ("library_flash: {tvmdev_cm: 32768}", "")):
        assert old in text
        text = text.replace(old, new)
    (tmp_path / "m4_cmsis_nn.yaml").write_text(text)
    return str(tmp_path / "m4_cmsis_nn.yaml")


def _readers(m: Model) -> dict[str, list[Operator]]:
    readers: dict[str, list[Operator]] = {}
    for op in m.operators:
        for t in dict.fromkeys(op.inputs):
            if t is not None:
                readers.setdefault(t, []).append(op)
    return readers


FUSED = {**{f"{b.name}_conv": f"{b.name}_y" for b in fc.BRANCHES if b.fuses},
         **{f"{b.name}_dw": f"{b.name}_pw" for b in fc.DW_BRANCHES if b.fuses}}


def test_which_depthwise_fuse_and_why_not(tmp_path: Path) -> None:
    """Each depthwise branch fuses with its 1x1, or stays with the reason of its rule
    (``decline_depthwise``, then ``row_saves``); the 1x1s fused are gone, and so are the
    intermediate tensors."""
    from tvmdev.plan.fuse import decline_depthwise, fuse_depthwise_pointwise, row_saves
    _, m = _model(tmp_path)
    fused, fusions = fuse_depthwise_pointwise(m, lambda dw, pw: None)
    assert fusions == {f"{b.name}_dw": f"{b.name}_pw" for b in fc.DW_BRANCHES if b.fuses}
    readers = _readers(m)
    for b in fc.DW_BRANCHES:
        dw = next(op for op in m.operators if op.name == f"{b.name}_dw")
        pw, why = decline_depthwise(m, dw, readers)
        why = why or (row_saves(m, dw, pw) if pw is not None else None) or ""
        assert (why == "", why) == (b.fuses, b.why), b.name
    assert {op.name for op in fused.operators if op.op == "depthwise_pointwise"} == set(
        fusions)
    assert not any(f"{b.name}_dw" in fused.tensors for b in fc.DW_BRANCHES if b.fuses)


def test_which_convs_fuse_and_why_not(tmp_path: Path) -> None:
    """Each branch's conv fuses with its ADD, or stays with the reason of its rule; the
    fused model has no ADD left of those, no intermediate tensor, and every operator
    reads only tensors that exist, in an order that computes them first."""
    from tvmdev.plan.fuse import decline, fuse_residual_adds
    _, m = _model(tmp_path)
    fused, fusions = fuse_residual_adds(m, lambda conv, add: None)
    assert fusions == {f"{b.name}_conv": f"{b.name}_y" for b in fc.BRANCHES if b.fuses}
    readers = _readers(m)
    for b in fc.BRANCHES:
        conv = next(op for op in m.operators if op.name == f"{b.name}_conv")
        add, why = decline(m, conv, readers)
        assert (add is not None, why) == (b.fuses, b.why), b.name
    assert {op.outputs[0] for op in fused.operators if op.op == "add"} == {
        f"{b.name}_y" for b in fc.BRANCHES if not b.fuses}
    assert not any(f"{b.name}_conv" in fused.tensors for b in fc.BRANCHES if b.fuses)
    made: set[str] = set(fused.inputs) | set(fused.constants)
    for op in fused.operators:
        assert all(t is None or t in made for t in op.inputs), op.name
        made |= set(op.outputs)
    assert [op.index for op in fused.operators] == list(range(len(fused.operators)))


def test_a_fusion_that_would_lose_is_not_made(tmp_path: Path) -> None:
    """``allow``'s reason keeps both operators; the pipeline fuses on the portable kernels,
    and beside CMSIS-NN's convolutions only where the workspace shrinks (not on this
    small model, whose tiles would be whole tensors)."""
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.fuse import fuse_residual_adds
    from tvmdev.plan.pipeline import Options, compile_model
    _, m = _model(tmp_path)
    assert fuse_residual_adds(m, lambda conv, add: "slower") == (m, {})
    host = compile_model(m, board_by_name("host"))
    assert dict(host.fusions) == FUSED
    assert compile_model(m, board_by_name("host"), Options(fuse=False)).fusions == ()
    from test_cmsis_nn import tree
    m4 = compile_model(m, board_by_name("mps2_an386"), Options(trees=(("cmsis_nn", tree()),)))
    assert m4.fusions == ()
    assert {m4.placements[op.index].library for op in m4.model.operators
            if op.op == "conv2d"} != {"portable"}


def test_cmsis_nn_fuses_where_the_workspace_shrinks(tmp_path: Path) -> None:
    """Beside CMSIS-NN's convolution and ADD, CMSIS-NN's conv2d_add takes the pair where
    the workspace shrinks: on the tiled model, not on the small one (its tile would be
    the whole intermediate tensor); the tile the probe asks for is the kernel's."""
    import re

    from conftest import REPO
    from test_cmsis_nn import tree

    from tvmdev.frontends.importer import import_file
    from tvmdev.plan.hooks.cmsis_nn import CONV_ADD_TILE_BYTES
    from tvmdev.plan.pipeline import Options, compile_model
    c_file = (REPO / "runtime/kernels/cmsis_nn/conv2d_add_s8.c").read_text()
    tile = re.search(r"#define TVMK_CONV_ADD_TILE_BYTES (\d+)", c_file)
    assert tile is not None and int(tile.group(1)) == CONV_ADD_TILE_BYTES
    path = tmp_path / "tiled.tflite"
    path.write_bytes(fc.model(fc.TILED, dw_branches=[], shape=fc.TILED_SHAPE))
    m = import_file(path).to_model()
    with_tree = Options(trees=(("cmsis_nn", tree()),), patch="off")  # (fusion alone)
    c = compile_model(m, _cmsis_m4(), with_tree)
    kept = compile_model(m, _cmsis_m4(), replace(with_tree, fuse=False))
    assert dict(c.fusions) == {f"{b.name}_conv": f"{b.name}_y" for b in fc.TILED}
    assert {c.placements[op.index].library for op in c.model.operators
            if op.op == "conv2d_add"} == {"cmsis_nn"}
    assert c.memory.arena_size < kept.memory.arena_size


def test_fused_reference_is_tflm_bit_for_bit(tmp_path: Path) -> None:
    """Every output of the fused model, as tvmdev's reference computes it from the fused
    operators' params, is TFLM's."""
    from tvmdev.model.reference import evaluate
    from tvmdev.plan.fuse import fuse_depthwise_pointwise, fuse_residual_adds
    path, m = _model(tmp_path)
    fused, fusions = fuse_residual_adds(m, lambda conv, add: None)
    fused, more = fuse_depthwise_pointwise(fused, lambda dw, pw: None)
    assert {**fusions, **more} == FUSED
    xs = fc.inputs()
    want = tflm_ref.outputs(path.read_bytes(), xs, len(m.outputs))
    got = evaluate(fused, {m.inputs[0]: xs[0]})
    for name, w in zip(m.outputs, want, strict=True):
        assert got[name].dtype == w.dtype and np.array_equal(got[name], w), name
        assert len(np.unique(w)) > 10, name  # not a constant output


def test_aot_notes_each_fusion_and_the_option_keeps_them(cli: Callable[..., Result],
                                                          tmp_path: Path) -> None:
    """plan.json notes the fusion on the fused operator, aot lists it; with --no-fuse
    every ADD is an operator again, and the banner's command says so."""
    path, _ = _model(tmp_path)
    plans = {}
    for label, extra in (("fuse", ()), ("keep", ("--no-fuse",))):
        r = cli("aot", str(path), "-o", str(tmp_path / label), *extra)
        assert r.code == 0, r.err
        plans[label] = json.loads(next((tmp_path / label).glob("*_plan.json")).read_text())
        listed = ", ".join(f"{a} + {b}" for a, b in FUSED.items())
        assert (f"operators fused: {listed}" in r.out) == (label == "fuse"), r.out
    ops = {op["name"]: op for op in plans["fuse"]["operators"]}
    for name, kind in [*((f"{b.name}_conv", "conv2d_add") for b in fc.BRANCHES),
                       *((f"{b.name}_dw", "depthwise_pointwise") for b in fc.DW_BRANCHES)]:
        op = ops[name]
        assert (op["op"], op.get("note")) == ((kind, f"fused with {FUSED[name]}")
                                              if name in FUSED else (op["op"], None)), name
        assert (op["op"] == kind) == (name in FUSED), name
    assert not any("note" in op for op in plans["keep"]["operators"])
    assert len(plans["keep"]["operators"]) - len(plans["fuse"]["operators"]) == len(FUSED)
    assert "--no-fuse" in (tmp_path / "keep/tvmgen_fuse.c").read_text()


def _run(cli: Callable[..., Result], path: Path, m: Model, arrays: list[np.ndarray],
         tmp_path: Path, *options: str) -> tuple[Result, dict[str, np.ndarray]]:
    (tmp_path / "in").mkdir(parents=True)
    for name, x in zip(m.inputs, arrays, strict=True):
        np.save(tmp_path / "in" / f"{name}.npy", x)
    r = cli("run", str(path), "--inputs", str(tmp_path / "in"), "--save-outputs",
            str(tmp_path / "out"), "--build-dir", str(tmp_path / "build"), *options)
    saved = tmp_path / "out"
    return r, ({n: np.load(saved / f"{n}.npy") for n in m.outputs} if saved.is_dir() else {})


def _tflm_exact(path: Path, m: Model, xs: list[np.ndarray], got: dict[str, np.ndarray]
                ) -> None:
    want = tflm_ref.outputs(path.read_bytes(), xs, len(m.outputs))
    for name, w in zip(m.outputs, want, strict=True):
        assert got[name].dtype == w.dtype and np.array_equal(got[name], w), name


@pytest.mark.slow
@pytest.mark.parametrize("board", ["host", "mps2_an386"])
def test_fused_kernel_is_tflm_bit_for_bit(board: str, cli: Callable[..., Result],
                                          tmp_path: Path) -> None:
    """The portable conv2d_add and depthwise_pointwise kernels on the host and on the
    Cortex-M4 (CMSIS-NN off, so the portable kernels take the convs and the ADDs): every
    output TFLM's."""
    need_tool("gcc" if board == "host" else "qemu-system-arm", "scripts/test.sh installs it")
    path, m = _model(tmp_path)
    xs = fc.inputs()
    # --io caller: with the outputs in the workspace (a firmware board's default), main's
    # memory plan lets the unfused ADD of branch conv_is_output write over the conv's
    # output, a graph output (its last use is taken as the ADD), fused or not.
    r, got = _run(cli, path, m, xs, tmp_path, "--board", board, "--cmsis-nn", "off",
                  "--io", "caller", "--patch", "off")
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    _tflm_exact(path, m, xs, got)
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    ops = {op["name"]: op for op in plan["operators"]}
    # On the M4, tvmdev_cm's depthwise and 1x1 kernels take those convolutions: faster
    # than the portable fused kernel, so those pairs stay apart.
    fused = {n for n, op in ops.items() if op["op"] in ("conv2d_add", "depthwise_pointwise")}
    apart = set(FUSED) - fused
    if board == "mps2_an386":
        assert apart >= {f"{b.name}_dw" for b in fc.DW_BRANCHES} & set(FUSED)
    assert apart == set() if board == "host" else {ops[n]["library"] for n in apart} == {
        "tvmdev_cm"}


# Each a piece of the fused arithmetic, wrong: the conv's clamp left out, the
# intermediate's zero point, the residual's offset, the ADD's output rounding and clamp;
# the depthwise's clamp, and the 1x1's reading of the intermediate.
MUTATIONS: dict[tuple[str, str], Callable[[dict[str, Any]], dict[str, Any]]] = {
    ("conv2d_add", "conv clamp"): lambda p: {**p, "activation_min": -128,
                                             "activation_max": 127},
    ("conv2d_add", "intermediate zero point"): lambda p: {**p, "output_offset":
                                                          p["output_offset"] + 1},
    ("conv2d_add", "residual offset"): lambda p: {**p, "b_offset": p["b_offset"] + 1},
    ("conv2d_add", "output shift"): lambda p: {**p, "out_shift": p["out_shift"] - 1},
    ("conv2d_add", "add clamp"): lambda p: {**p, "act_min": -128, "act_max": 127},
    ("depthwise_pointwise", "depthwise clamp"): lambda p: {**p, "activation_min": -128,
                                                           "activation_max": 127},
    ("depthwise_pointwise", "1x1 input offset"): lambda p: {**p, "pw_input_offset":
                                                            p["pw_input_offset"] + 1},
}


@pytest.mark.slow
def test_mutated_fused_arithmetic_fails(cli: Callable[..., Result], tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The run compares the fused kernels with the unfused model's reference: each piece
    of the fused arithmetic made wrong in the params a kernel reads shows as outputs that
    are not exact (and not TFLM's)."""
    need_tool("gcc", "apt install gcc")
    from tvmdev.model.s8.table import S8OPS
    path, m = _model(tmp_path)
    xs = fc.inputs()
    for (op, label), mutate in MUTATIONS.items():
        entry = S8OPS[op]
        monkeypatch.setitem(S8OPS, op, replace(
            entry, params=lambda c, mutate=mutate, entry=entry: mutate(entry.params(c))))
        r, got = _run(cli, path, m, xs, tmp_path / label.replace(" ", "_"))
        monkeypatch.setitem(S8OPS, op, entry)
        assert r.code != 0 and "NOT EXACT" in r.out, label
        with pytest.raises(AssertionError):
            _tflm_exact(path, m, xs, got)


@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps2_an386", "mps3_an547"])
def test_cmsis_nn_fused_tiles_are_tflm_bit_for_bit(board: str, cli: Callable[..., Result],
                                                   tmp_path: Path) -> None:
    """CMSIS-NN's conv2d_add on the Cortex-M4 (DSP) and M55 (Helium): the convolution
    three tiles of rows at a time (the last shorter; SAME padding at the top and the
    bottom), each added to the residual, every output TFLM's (both boards without
    tvmdev_cm, whose convolutions would come first)."""
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    from test_cmsis_nn import tree
    path = tmp_path / "tiled.tflite"
    path.write_bytes(fc.model(fc.TILED, dw_branches=[], shape=fc.TILED_SHAPE))
    from tvmdev.frontends.importer import import_file
    m = import_file(path).to_model()
    xs = fc.inputs(shape=fc.TILED_SHAPE)
    from test_cmsis_nn import cmsis_nn_only
    on = _cmsis_m4_yaml(tmp_path) if board == "mps2_an386" else cmsis_nn_only(board, tmp_path)
    r, got = _run(cli, path, m, xs, tmp_path, "--board", on, "--cmsis-nn", tree())
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    _tflm_exact(path, m, xs, got)
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    assert {op["library"] for op in plan["operators"] if op["op"] == "conv2d_add"} == {
        "cmsis_nn"}
    assert sum(op["op"] == "conv2d_add" for op in plan["operators"]) == len(fc.TILED)


@pytest.mark.slow
def test_resnet8_fuses_on_cmsis_nn(cli: Callable[..., Result], tmp_path: Path) -> None:
    """image_classification on the M4 with CMSIS-NN (without tvmdev_cm): its three conv + ADD
    blocks fuse on CMSIS-NN's conv2d_add, the workspace shrinks, the outputs are TFLM's."""
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    from models import model_path
    from test_cmsis_nn import tree

    from tvmdev.frontends.importer import import_file
    from tvmdev.plan.pipeline import Options, compile_model
    path = model_path("image_classification.tflite")
    if path is None:
        pytest.skip("image_classification.tflite is not fetched (python3 tests/models.py)")
    m = import_file(path).to_model()
    arenas = [compile_model(m, _cmsis_m4(), Options(
        trees=(("cmsis_nn", tree()),), fuse=f, patch="off")) for f in (True, False)]
    assert len(arenas[0].fusions) == 3 and arenas[1].fusions == ()
    assert arenas[0].memory.arena_size < arenas[1].memory.arena_size
    xs = [np.random.default_rng(7).integers(-128, 128, m.tensors[m.inputs[0]].shape
                                              ).astype(np.int8)]
    r, got = _run(cli, path, m, xs, tmp_path, "--board", _cmsis_m4_yaml(tmp_path),
                  "--cmsis-nn", tree())
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    _tflm_exact(path, m, xs, got)


@pytest.mark.slow
@pytest.mark.parametrize("board", ["host", "mps2_an386"])
@pytest.mark.parametrize("name", ["image_classification", "vww"])
def test_field_models_fused_bit_exact(name: str, board: str, cli: Callable[..., Result],
                                      tmp_path: Path) -> None:
    """ResNet-8 (image_classification: three conv + ADD blocks) and MCUNet VWW (eight
    inverted residual blocks, and seven depthwise + projection pairs without an ADD)
    fused, on the portable kernels: the run
    is exact against the unfused reference, and the outputs are TFLM's, bit for bit."""
    need_tool("gcc" if board == "host" else "qemu-system-arm", "scripts/test.sh installs it")
    from models import model_path
    from test_tflite_field_ops import field_model

    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import Options, compile_model
    path = model_path(f"{name}.tflite") if name != "vww" else field_model(name)
    if path is None:
        pytest.skip(f"{name}.tflite is not fetched (python3 tests/models.py fetches it)")
    m = import_file(path).to_model()
    c = compile_model(m, board_by_name(board), Options(trees=(("cmsis_nn", "off"),)))
    kinds = [op.op for op in c.model.operators]
    # On the M4, tvmdev_cm's depthwise, 1x1 and general kernels take MCUNet's depthwise
    # convolutions and projections and ResNet-8's convolutions: faster than the portable
    # fused kernels, so no pair fuses.
    assert (kinds.count("conv2d_add"), kinds.count("depthwise_pointwise")) == {
        "image_classification": (3, 0) if board == "host" else (0, 0),
        "vww": (8, 7) if board == "host" else (0, 0)}[name]
    r7 = np.random.default_rng(7)
    xs = [(r7.integers(-128, 128, t.shape) if t.dtype == "int8" else r7.uniform(-1, 1, t.shape)
           ).astype(t.dtype) for t in (m.tensors[i] for i in m.inputs)]
    r, got = _run(cli, path, m, xs, tmp_path, "--board", board, "--cmsis-nn", "off")
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    _tflm_exact(path, m, xs, got)  # vww's float output: the dequantized int8, equal too


@pytest.mark.slow
def test_fused_output_over_the_residual_saves_ram() -> None:
    """The fused kernel writes over a residual that dies there (inplace: [R]): on MCUNet
    VWW every fused block does; there and on ResNet-8 the workspace shrinks by the
    intermediate tensors the fusions removed."""
    from models import model_path
    from test_tflite_field_ops import field_model

    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import Options, compile_model
    off = (("cmsis_nn", "off"),)
    vww = import_file(field_model("vww")).to_model()
    c = compile_model(vww, board_by_name("host"), Options(trees=off))
    fused = {op.outputs[0]: op.inputs[2] for op in c.model.operators if op.op == "conv2d_add"}
    assert set(dict(c.memory.inplace).items()) >= set(fused.items())
    kept = compile_model(vww, board_by_name("host"), Options(trees=off, fuse=False))
    # (no larger: the depthwise convolutions in place already free what the
    # depthwise + projection fusions would, so MCUNet's peak is the same)
    assert c.memory.arena_size <= kept.memory.arena_size
    ic = model_path("image_classification.tflite")
    if ic is None:
        pytest.skip("image_classification.tflite is not fetched")
    m = import_file(ic).to_model()
    arenas = [compile_model(m, _cmsis_m4(), Options(  # (tvmdev_cm's convs would not fuse)
        trees=off, fuse=f, patch="off")).memory.arena_size for f in (True, False)]
    assert arenas[0] < arenas[1]
