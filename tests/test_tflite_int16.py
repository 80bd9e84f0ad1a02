"""TFLite's 16x8 quantization (int16 activations), against TFLM's interpreter: each
operator's seeded one-op cases (tests/tflite_int16_cases.py) merged into one .tflite,
imported and evaluated by the numpy reference (fast) and built and run with ``tvmdev
run`` on the host (slow), bit for bit; TFLM's SEANet integration-test models likewise,
and against the golden outputs stored beside them; and what TFLM refuses, refused in
one line."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import tflite_int16_cases as ic
import tflm_ref
from conftest import Result, need_module, need_tool

need_module("tflite", "pip install -e '.[tflite]'")

ARENA = 1 << 22
SEANET = ("add", "conv", "leaky_relu", "pad", "quantize", "strided_slice", "sub",
          "transpose_conv")
# The fast lane keeps a few ops' cases and the smallest SEANet folders; the rest run in
# the slow lane (each case list takes up to 2 s against TFLM).
FAST = ("quantize", "add", "leaky_relu")


def _lane(names: tuple[str, ...] | list[str], fast: tuple[str, ...]) -> list[object]:
    return [n if n in fast else pytest.param(n, marks=pytest.mark.slow) for n in names]


def _need_table(op: str) -> None:
    """int16 LOGISTIC and TANH read TFLM's sigmoid table from a tree tvmdev does not ship:
    skip them, saying why, without one."""
    if op in ("logistic", "tanh") and not (os.environ.get("TFLM_SOURCE_DIR")
                                           or os.environ.get("CMSIS_NN_SOURCE_DIR")):
        pytest.skip(f"int16 {op} reads TFLM's sigmoid table from TFLM's tree "
                    "(TFLM_SOURCE_DIR) or CMSIS-NN's (CMSIS_NN_SOURCE_DIR): neither is set")


def _differ(names: list[str], got: dict[str, np.ndarray], want: list[np.ndarray],
            labels: list[str]) -> list[str]:
    return [f"{label}: {np.count_nonzero(np.asarray(got[n]) != w)} of {w.size} differ"
            for n, w, label in zip(names, want, labels, strict=True)
            if got[n].dtype != w.dtype or not np.array_equal(got[n], w)]


@pytest.mark.parametrize("op", _lane(list(ic.CASES), FAST))
def test_reference_matches_tflm(op: str, tmp_path: Path) -> None:
    """Every case of ``op`` imported and evaluated by the numpy reference: TFLM's output,
    bit for bit, and outputs spread over much of int16 (not trivially equal)."""
    _need_table(op)
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import evaluate
    m = ic.model(op)
    data = m.build()
    (tmp_path / "m.tflite").write_bytes(data)
    model = import_file(tmp_path / "m.tflite").to_model()
    got = evaluate(model, dict(zip(model.inputs, m.arrays, strict=True)))
    want = tflm_ref.outputs(data, m.arrays, len(m.outputs), ARENA)
    assert _differ(list(model.outputs), got, want, m.labels) == []
    flat = np.concatenate([w.ravel() for w in want])
    assert len(np.unique(flat)) > min(200, flat.size // 4)


def _run(cli: Callable[..., Result], path: Path, arrays: list[np.ndarray], tmp_path: Path,
         *options: str) -> tuple[list[str], dict[str, np.ndarray]]:
    need_tool("gcc", "apt install gcc")
    from tvmdev.frontends.importer import import_file
    model = import_file(path).to_model()
    (tmp_path / "in").mkdir(parents=True)
    for name, x in zip(model.inputs, arrays, strict=True):
        np.save(tmp_path / "in" / f"{name}.npy", x)
    r = cli("run", str(path), "--inputs", str(tmp_path / "in"), "--save-outputs",
            str(tmp_path / "out"), "--build-dir", str(tmp_path / "build"), *options)
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    return list(model.outputs), {n: np.load(tmp_path / "out" / f"{n}.npy")
                                 for n in model.outputs}


@pytest.mark.slow
@pytest.mark.parametrize("op", list(ic.CASES))
def test_run_matches_tflm(op: str, cli: Callable[..., Result], tmp_path: Path) -> None:
    """The same merged model through ``tvmdev run`` on the host (the portable C kernels),
    each output saved and held against TFLM's."""
    _need_table(op)
    m = ic.model(op)
    data = m.build()
    (tmp_path / "m.tflite").write_bytes(data)
    names, got = _run(cli, tmp_path / "m.tflite", m.arrays, tmp_path)
    want = tflm_ref.outputs(data, m.arrays, len(m.outputs), ARENA)
    assert _differ(names, got, want, m.labels) == []


def _cmsis_nn() -> str:
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    need_tool("arm-none-eabi-gcc", "scripts/test.sh installs it")
    tree = os.environ.get("CMSIS_NN_SOURCE_DIR")
    if not tree:
        pytest.skip("CMSIS_NN_SOURCE_DIR is not set: the CMSIS-NN tree (ARM-software/"
                    "CMSIS-NN v7.0.0)")
    return tree


@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps2_an386", "mps3_an547"])
@pytest.mark.parametrize("op", ["conv2d", "depthwise_conv2d", "fully_connected", "add", "mul",
                                "softmax", "pool", "logistic", "tanh"])
def test_cmsis_nn_matches_tflm(op: str, board: str, cli: Callable[..., Result],
                               tmp_path: Path) -> None:
    """The ops CMSIS-NN's _s16 kernels serve, on Cortex-M4 (DSP) and M55 (Helium) in QEMU:
    what CMSIS-NN takes runs there (the rest is declined to the portable kernels), every
    output TFLM's."""
    tree = _cmsis_nn()
    m = ic.model(op)
    data = m.build()
    (tmp_path / "m.tflite").write_bytes(data)
    names, got = _run(cli, tmp_path / "m.tflite", m.arrays, tmp_path, "--board", board,
                      "--cmsis-nn", tree)
    want = tflm_ref.outputs(data, m.arrays, len(m.outputs), ARENA)
    assert _differ(names, got, want, m.labels) == []
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    assert "cmsis_nn" in {o["library"] for o in plan["operators"]}


@pytest.mark.slow
@pytest.mark.parametrize("op", ["mean", "resize_nearest"])
def test_portable_on_cortex_m55_matches_tflm(op: str, cli: Callable[..., Result],
                                             tmp_path: Path) -> None:
    """The int16 ops CMSIS-NN has no kernel for, on the Cortex-M55 in QEMU beside
    CMSIS-NN: the portable kernels, every output TFLM's."""
    tree = _cmsis_nn()
    m = ic.model(op)
    data = m.build()
    (tmp_path / "m.tflite").write_bytes(data)
    names, got = _run(cli, tmp_path / "m.tflite", m.arrays, tmp_path, "--board", "mps3_an547",
                      "--cmsis-nn", tree)
    want = tflm_ref.outputs(data, m.arrays, len(m.outputs), ARENA)
    assert _differ(names, got, want, m.labels) == []


# --- TFLM's SEANet integration tests -----------------------------------------------------

def seanet(folder: str) -> list[Path]:
    """The .tflite models of one SEANet folder of TFLM's tree (skip without the tree)."""
    root = os.environ.get("TFLM_SOURCE_DIR")
    if not root:
        pytest.skip("TFLM_SOURCE_DIR is not set (source the trees' env.sh): TFLM's tree "
                    "(github.com/tensorflow/tflite-micro) holds the SEANet models")
    models = sorted((Path(root) / "tensorflow/lite/micro/integration_tests/seanet"
                     / folder).glob("*.tflite"))
    if not models:
        pytest.skip(f"no SEANet {folder} models in {root}")
    return models


def _csv(path: Path, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    values = np.array([int(v) for v in path.read_text().replace("\n", ",").split(",")
                       if v.strip()])
    return values.astype(dtype).reshape(shape)


@pytest.mark.parametrize("folder", _lane(SEANET, ("quantize", "sub")))
def test_seanet_reference_matches_tflm(folder: str) -> None:
    """Every model of the folder imports, and the numpy reference computes TFLM's output
    for seeded inputs over the whole int16 range and for the inputs stored beside it; and
    the golden output stored there wherever TFLM's interpreter computes it too (the
    goldens of 4 LEAKY_RELU models differ from TFLM's interpreter by one step: they follow
    the float32 multipliers of the tree's leaky_relu_common.cc, the interpreter derives
    them in double)."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import evaluate, random_inputs
    wrong = []
    for path in seanet(folder):
        m = import_file(path).to_model()
        out = m.tensors[m.outputs[0]]
        stored = [path.with_name(f"{path.stem}_input{i}_{m.tensors[n].dtype}.csv")
                  for i, n in enumerate(m.inputs)]
        golden = path.with_name(f"{path.stem}_golden_{out.dtype}.csv")
        feeds = [random_inputs(m, 7), {n: _csv(s, m.tensors[n].dtype, m.tensors[n].shape)
                                       for n, s in zip(m.inputs, stored, strict=True)}]
        for k, ins in enumerate(feeds):
            want = tflm_ref.outputs(path.read_bytes(), [ins[n] for n in m.inputs], 1,
                                    ARENA)[0]
            got = evaluate(m, ins)[m.outputs[0]]
            if got.dtype != want.dtype or not np.array_equal(got, want):
                wrong.append(f"{path.name}: {np.count_nonzero(got != want)} differ from TFLM")
            gold = _csv(golden, out.dtype, out.shape) if k == 1 else want
            if np.array_equal(want, gold) and not np.array_equal(got, gold):
                wrong.append(f"{path.name}: differs from its golden output")
    assert wrong == []


@pytest.mark.slow
@pytest.mark.parametrize("board", ["host", "mps3_an547"])
@pytest.mark.parametrize("folder", SEANET)
def test_seanet_runs(folder: str, board: str, cli: Callable[..., Result], tmp_path: Path
                     ) -> None:
    """The folder's first and last models through ``tvmdev run`` on the host, and on the
    Cortex-M55 in QEMU with CMSIS-NN: bit-exact with TFLM."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import random_inputs
    models = seanet(folder)
    options = ("--board", board, "--cmsis-nn", _cmsis_nn()) if board != "host" else ()
    for k, path in enumerate(dict.fromkeys([models[0], models[-1]])):
        m = import_file(path).to_model()
        ins = random_inputs(m, 3)
        arrays = [ins[n] for n in m.inputs]
        names, got = _run(cli, path, arrays, tmp_path / str(k), *options)
        want = tflm_ref.outputs(path.read_bytes(), arrays, 1, ARENA)[0]
        assert got[names[0]].dtype == want.dtype and np.array_equal(got[names[0]], want)


@pytest.mark.parametrize("op", _lane(list(ic.CASES), ()))
def test_params_are_the_structs_fields(op: str, tmp_path: Path) -> None:
    """The params generation computes for each int16 operator are exactly the fields of
    the C struct its kernels take (read with pycparser), but for the scratch fields the
    renderer fills."""
    _need_table(op)
    from test_params_structs import struct_fields

    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import compile_model
    (tmp_path / "m.tflite").write_bytes(ic.model(op).build())
    compiled = compile_model(import_file(tmp_path / "m.tflite").to_model(),
                             board_by_name("host"))
    fields = struct_fields()
    for prep in compiled.ops:
        want = set(fields[prep.struct]) - ({"scratch", "scratch_bytes"}
                                           if prep.takes_scratch else set())
        assert sorted(prep.params) == sorted(want), prep.struct


# --- keyword_scrambled: int16 input -> QUANTIZE -> SVDF ... FC -> SOFTMAX -> QUANTIZE ---

def _keyword_scrambled() -> Path:
    root = os.environ.get("TFLM_SOURCE_DIR")
    path = Path(root or ".") / "tensorflow/lite/micro/models/keyword_scrambled.tflite"
    if not root or not path.exists():
        pytest.skip("TFLM's tree (TFLM_SOURCE_DIR) holds keyword_scrambled.tflite")
    return path


def _tensor(t: object) -> object:
    """A tflite_build tensor from a tensor of tvmdev's TFLite reader."""
    from tflite_build import T

    from tvmdev.frontends.tflite import TfTensor
    assert isinstance(t, TfTensor)
    codes = {"int16": ic.INT16, "int8": ic.INT8, "int32": ic.INT32, "float32": ic.FLOAT32}
    quant = (list(t.quant.scale), list(t.quant.zero_point)) if t.quant else None
    return T("", list(t.shape), t.data, type=codes[t.dtype], quant=quant)


def test_keyword_scrambled_int16_parts(tmp_path: Path) -> None:
    """keyword_scrambled's int16 parts, as the model quantizes them: its first QUANTIZE
    (int16 input -> int8), and its last FULLY_CONNECTED -> SOFTMAX (int8 -> int16) ->
    QUANTIZE (int16 -> int32), bit-exact with TFLM through the reference; and the whole
    model, its SVDFs included."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.frontends.tflite import read
    from tvmdev.model.reference import evaluate, random_inputs
    path = _keyword_scrambled()
    g = read(path, path.read_bytes())
    kinds = [op.kind for op in g.ops]
    first, last = g.ops[0], g.ops[-3:]
    assert kinds[0] == "QUANTIZE" and [o.kind for o in last] == [
        "FULLY_CONNECTED", "SOFTMAX", "QUANTIZE"]
    m = ic.Model()
    x = m.tensor(_tensor(g.tensors[first.inputs[0]]), np.zeros(0))  # values set below
    m.op("quantize int16 -> int8", ic.QUANTIZE, [x], _tensor(g.tensors[first.outputs[0]]))
    fc_in = m.tensor(_tensor(g.tensors[last[0].inputs[0]]), np.zeros(0))
    m.op("fc", ic.FULLY_CONNECTED, [fc_in] + [m.tensor(_tensor(g.tensors[i]))
                                              for i in last[0].inputs[1:]],
         _tensor(g.tensors[last[0].outputs[0]]))
    m.op("softmax", ic.SOFTMAX, [m.outputs[-1]], _tensor(g.tensors[last[1].outputs[0]]),
         ("SoftmaxOptions", {"Beta": 1.0}))
    m.op("quantize int16 -> int32", ic.QUANTIZE, [m.outputs[-1]],
         _tensor(g.tensors[last[2].outputs[0]]))
    m.outputs = [m.outputs[0], m.outputs[-1]]
    data = m.build()
    (tmp_path / "parts.tflite").write_bytes(data)
    model = import_file(tmp_path / "parts.tflite").to_model()
    for seed in range(4):
        ins = random_inputs(model, seed)
        arrays = [ins[n] for n in model.inputs]
        want = tflm_ref.outputs(data, arrays, 2, ARENA)
        got = evaluate(model, ins)
        assert [got[n].dtype for n in model.outputs] == [w.dtype for w in want]
        assert all(np.array_equal(got[n], w) for n, w in zip(model.outputs, want,
                                                              strict=True))
    whole = import_file(path).to_model()  # its seven SVDFs too (int8, int16 state)
    for seed in range(2):
        ins = random_inputs(whole, seed)
        want = tflm_ref.outputs(path.read_bytes(), [ins[n] for n in whole.inputs], 1, ARENA)
        got = evaluate(whole, ins)[whole.outputs[0]]
        assert got.dtype == want[0].dtype and np.array_equal(got, want[0])


# --- what TFLM refuses (or would compute ignoring the quantization) ------------------------

def _conv16(zp_in: int = 0) -> bytes:
    from tflite_build import Graph, Op, T, build
    b = np.zeros(2, np.int64)
    ts = [T("x", [1, 2, 2, 3], type=ic.INT16, quant=([0.01], [zp_in])),
          T("w", [2, 1, 1, 3], np.ones((2, 1, 1, 3), np.int8), type=ic.INT8,
            quant=([0.1, 0.1], [0, 0])),
          T("b", [2], b, type=ic.INT64, quant=([0.001, 0.001], [0, 0])),
          T("y", [1, 2, 2, 2], type=ic.INT16, quant=([0.02], [0]))]
    return build(Graph(ts, [Op(ic.CONV_2D, [0, 1, 2], [3], ("Conv2DOptions", {
        "Padding": 1, "StrideH": 1, "StrideW": 1}))], [0], [3]))


def _tconv16(zp_out: int = 0, bias: int = ic.INT64) -> bytes:
    from tflite_build import Graph, Op, T, build
    ts = [T("s", [4], np.array([1, 4, 4, 2], np.int32), type=ic.INT32),
          T("w", [2, 3, 3, 3], np.ones((2, 3, 3, 3), np.int8), type=ic.INT8,
            quant=([0.1, 0.1], [0, 0])),
          T("x", [1, 2, 2, 3], type=ic.INT16, quant=([0.01], [0])),
          T("b", [2], np.zeros(2, ic.NP.get(bias, np.int64)), type=bias,
            quant=([0.001, 0.001], [0, 0])),
          T("y", [1, 4, 4, 2], type=ic.INT16, quant=([0.02], [zp_out]))]
    return build(Graph(ts, [Op(ic.TRANSPOSE_CONV, [0, 1, 2, 3], [4], ("TransposeConvOptions", {
        "Padding": 0, "StrideH": 2, "StrideW": 2}))], [2], [4]))


def _unary16(code: int, zp: int, quant_in: bool = True) -> bytes:
    from tflite_build import Graph, Op, T, build
    q = ([0.01], [zp])
    if code == ic.PAD:
        ts = [T("a", [4], type=ic.INT16, quant=q),
              T("p", [1, 2], np.array([[1, 1]], np.int32), type=ic.INT32),
              T("y", [6], type=ic.INT16, quant=q)]
        return build(Graph(ts, [Op(code, [0, 1], [2], None)], [0], [2]))
    ts = [T("a", [4], type=ic.INT16, quant=q if quant_in else None),
          T("b", [4], type=ic.INT16, quant=([0.01], [0])),
          T("y", [4], type=ic.INT16, quant=([0.01], [0]))]
    if code == ic.MUL:
        return build(Graph(ts, [Op(code, [0, 1], [2], None)], [0, 1], [2]))
    if code == ic.SOFTMAX:
        return build(Graph([ts[0], ts[2]], [Op(code, [0], [1], ("SoftmaxOptions", {
            "Beta": 1.0}))], [0], [1]))
    return build(Graph([ts[0], ts[2]], [Op(code, [0], [1], ("LeakyReluOptions", {
        "Alpha": 0.1}))], [0], [1]))


def _lut16(code: int, zp: int = 0, out_scale: float = 2.0 ** -15, scale: float = 1e-3
           ) -> bytes:
    from tflite_build import Graph, Op, T, build
    ts = [T("a", [4], type=ic.INT16, quant=([scale], [zp])),
          T("y", [4], type=ic.INT16, quant=([out_scale], [0]))]
    return build(Graph(ts, [Op(code, [0], [1], None)], [0], [1]))


def _resize16(code: int) -> bytes:
    from tflite_build import Graph, Op, T, build
    ts = [T("a", [1, 2, 2, 1], type=ic.INT16, quant=([0.01], [0])),
          T("s", [2], np.array([3, 3], np.int32), type=ic.INT32),
          T("y", [1, 3, 3, 1], type=ic.INT16, quant=([0.01], [0]))]
    return build(Graph(ts, [Op(code, [0, 1], [2], ("ResizeBilinearOptions", {}))], [0], [2]))


@pytest.mark.parametrize("case,data,message", [
    ("logistic_zp", lambda: _lut16(ic.LOGISTIC, zp=2), "operator 'y' (sigmoid): int16 "
     "logistic: TFLM requires zero points 0 on the input and the output, got 2 and 0"),
    ("tanh_out_scale", lambda: _lut16(ic.TANH, out_scale=1 / 16384), "operator 'y' (tanh): "
     "int16 tanh: the output scale must be 2^-15 (TFLM refuses others), got 6.103515625e-05"),
    ("tanh_in_scale", lambda: _lut16(ic.TANH, scale=3.0), "operator 'y' (tanh): int16 tanh: "
     "the input scale 3.0 is above 32767 / 12288: TFLM's input multiplier would pass 32767 "
     "(its kernel checks that only in debug builds, then overflows)"),
    ("hard_swish", lambda: _lut16(ic.HARD_SWISH), "1 unsupported operator: HARD_SWISH "
     "(int16: TFLM's HARD_SWISH takes float32 and int8 only) x1 (first: operator 0 'y')"),
    ("resize_bilinear", lambda: _resize16(ic.RESIZE_BILINEAR), "1 unsupported operator: "
     "RESIZE_BILINEAR (int16: TFLM's RESIZE_BILINEAR takes float32 and int8 only) x1 "
     "(first: operator 0 'y')"),
    ("conv_zp", lambda: _conv16(5), "operator 'y' (conv2d): int16 conv2d: the input's zero "
     "point is 5; TFLite's 16x8 scheme has symmetric int16 activations (zero point 0), and "
     "TFLM's kernels ignore any other"),
    ("tconv_zp", lambda: _tconv16(zp_out=4), "operator 'y' (transpose_conv2d): int16 "
     "transpose_conv2d: the output's zero point is 4; TFLite's 16x8 scheme has symmetric "
     "int16 activations (zero point 0), and TFLM's kernels ignore any other"),
    ("tconv_bias32", lambda: _tconv16(bias=ic.INT32), "operator 'y' (transpose_conv2d): "
     "int16 transpose_conv2d: input 2 is int32; its int16 kernels take int64"),
    ("softmax_scale", lambda: _unary16(ic.SOFTMAX, 0),
     "operator 'y' (softmax): an int16 softmax needs zero points 0 and the output scale "
     "1/32768 (TFLM refuses others), got 0, 0 and 0.009999999776482582"),
    ("mul_zp", lambda: _unary16(ic.MUL, 3), "operator 'y' (mul): int16 mul: TFLM requires "
     "zero points 0 on both inputs and the output"),
    ("pad_zp", lambda: _unary16(ic.PAD, 2), "operator 'y' (pad): int16 pad: the output's "
     "zero point is 2; TFLM pads int16 with 0 whatever it is, so tvmdev takes zero point 0 "
     "only"),
    ("no_quant", lambda: _unary16(ic.LEAKY_RELU, 0, False),
     "operator 'y' (leaky_relu): the input is int16 but has no quant (scale and "
     "zero_point)"),
])
def test_refused_in_one_line(case: str, data: Callable[[], bytes], message: str,
                             cli: Callable[..., Result], tmp_path: Path) -> None:
    """int16 that TFLM refuses, or would compute ignoring its zero point: one line."""
    path = tmp_path / f"{case}.tflite"
    path.write_bytes(data())
    r = cli("import", str(path), "-o", str(tmp_path / "o"))
    assert r.code == 1 and r.err.splitlines()[0] == f"tvmdev: {path}: {message}", r.err
    assert not (tmp_path / "o").exists()


def test_lut_ops_without_a_tree_are_refused(cli: Callable[..., Result], tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """An int16 LOGISTIC or TANH needs TFLM's sigmoid table, which tvmdev does not ship:
    without TFLM's or CMSIS-NN's tree, one line naming the variables that point at them,
    nothing written."""
    for var in ("TFLM_SOURCE_DIR", "CMSIS_NN_SOURCE_DIR"):
        monkeypatch.delenv(var, raising=False)
    for code, name, op in ((ic.LOGISTIC, "logistic", "sigmoid"), (ic.TANH, "tanh", "tanh")):
        path = tmp_path / f"{name}.tflite"
        path.write_bytes(_lut16(code))
        r = cli("import", str(path), "-o", str(tmp_path / "o"))
        assert r.code == 1 and r.err.splitlines() == [
            f"tvmdev: {path}: operator 'y' ({op}): an int16 {name} needs TFLM's int16 sigmoid "
            "table, read from TFLM's tree (set TFLM_SOURCE_DIR) or CMSIS-NN's "
            "(CMSIS_NN_SOURCE_DIR)"], r.err
        assert not (tmp_path / "o").exists()


def _widening_after_an_add() -> bytes:
    """ADD (int8) into SOFTMAX (int8 -> int16) and QUANTIZE (int16 -> int32): each reads
    a tensor that dies there, of the output's shape but half its bytes."""
    from tflite_build import T
    m = ic.Model()
    q8 = ([0.07], [2])
    a = m.tensor(T("", [1, 8], type=ic.INT8, quant=q8),
                 np.arange(-128, 128, 32).astype(np.int8).reshape(1, 8))
    m.op("add", ic.ADD, [a, a], T("", [1, 8], type=ic.INT8, quant=q8),
         ("AddOptions", {}))
    m.op("softmax", ic.SOFTMAX, [m.outputs[-1]],
         T("", [1, 8], type=ic.INT16, quant=([1 / 65536], [-32768])),
         ("SoftmaxOptions", {"Beta": 1.0}))
    m.op("quantize", ic.QUANTIZE, [m.outputs[-1]],
         T("", [1, 8], type=ic.INT32, quant=([1 / 32768], [0])))
    m.outputs = [m.outputs[-1]]
    return m.build()


def test_widening_ops_are_not_planned_in_place(tmp_path: Path) -> None:
    """An operator whose output's elements are wider than its input's is never given the
    input's buffer (it would overwrite what it has still to read: keyword_scrambled's
    int8 -> int16 SOFTMAX did, on the host)."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import Options, compile_model
    (tmp_path / "w.tflite").write_bytes(_widening_after_an_add())
    model = import_file(tmp_path / "w.tflite").to_model()
    compiled = compile_model(model, board_by_name("host"), Options("lazy"))
    assert compiled.memory.inplace == ()


@pytest.mark.slow
def test_widening_ops_run_bit_exact(cli: Callable[..., Result], tmp_path: Path) -> None:
    data = _widening_after_an_add()
    (tmp_path / "w.tflite").write_bytes(data)
    arrays = [np.arange(-128, 128, 32).astype(np.int8).reshape(1, 8)]
    names, got = _run(cli, tmp_path / "w.tflite", arrays, tmp_path)
    want = tflm_ref.outputs(data, arrays, 1, ARENA)
    assert np.array_equal(got[names[0]], want[0])
