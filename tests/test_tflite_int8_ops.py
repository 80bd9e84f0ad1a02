"""Every int8 TFLite operator through the whole pipeline: h6's one-op cases
(tests/s8_op_cases.py, a representative subset of each) merged into one .tflite per
operator, its ops side by side (one input set and one output each), imported, built and
run with ``tvmdev run`` on the host, every output compared bit for bit with TFLM's
interpreter; and small multi-op int8 models built here, against TFLM too."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import s8_op_cases as oc
import tflm_ref
from conftest import Result, need_module, need_tool
from s8_cases import INT8, INT32, Case, fixed_quant, merged
from tflite_build import Graph, Op, T, build

need_module("tflite", "pip install -e '.[tflite]'")

pytestmark = pytest.mark.slow


def _every(cases: list[Case], step: int, last: bool = False) -> list[Case]:
    picked = cases[::step]
    return picked + ([cases[-1]] if last and cases[-1] not in picked else [])


# Each subset spans the op's variants: ADD / MUL: every broadcast pair of shapes and every
# fused activation; pools: SAME and VALID, every activation; softmax: sizes, scales and
# betas; LOGISTIC / TANH: every input value, scales, and an unusual output quantization;
# PAD and PADV2 on every rank, padding each axis; MEAN over each set of axes, keep_dims
# both; CONCATENATION of 1 to 4 tensors along several axes and ranks.
SUBSETS: dict[str, Callable[[], list[Case]]] = {
    "add": lambda: _every(oc.binary_cases("add"), 7),
    "mul": lambda: _every(oc.binary_cases("mul"), 7),
    "avgpool2d": lambda: oc.pool_cases("avgpool2d")[:8],
    "maxpool2d": lambda: oc.pool_cases("maxpool2d")[:8],
    "softmax": lambda: _every(oc.softmax_cases(), 9),
    "sigmoid": lambda: _every(oc.activation_cases("sigmoid"), 3, last=True),
    "tanh": lambda: _every(oc.activation_cases("tanh"), 3, last=True),
    "pad": lambda: _every(oc.pad_cases(), 3),
    "mean": lambda: _every(oc.mean_cases(), 3),
    "concat": lambda: _every(oc.concat_cases(), 8),
}


def run_against_tflm(cli: Callable[..., Result], model: bytes, arrays: list[np.ndarray],
                     tmp_path: Path, *options: str) -> tuple[int, int]:
    """``tvmdev run`` of ``model`` on ``arrays`` (more ``options``: a board); (outputs,
    elements) all equal to TFLM's."""
    from tvmdev.frontends.importer import import_file
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    m = import_file(path).to_model()
    (tmp_path / "in").mkdir()
    for name, x in zip(m.inputs, arrays, strict=True):
        np.save(tmp_path / "in" / f"{name}.npy", x)
    r = cli("run", str(path), "--inputs", str(tmp_path / "in"), "--save-outputs",
            str(tmp_path / "out"), "--build-dir", str(tmp_path / "build"), *options)
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    expected = tflm_ref.outputs(model, arrays, len(m.outputs))
    elements = 0
    for name, want in zip(m.outputs, expected, strict=True):
        got = np.load(tmp_path / "out" / f"{name}.npy")
        assert got.dtype == want.dtype and got.shape == want.shape, name
        assert np.array_equal(got, want), (
            f"{name}: {np.count_nonzero(got != want)} of {got.size} elements differ from TFLM")
        elements += got.size
    return len(expected), elements


@pytest.mark.parametrize("op", sorted(SUBSETS))
def test_one_op_models_bit_exact(op: str, cli: Callable[..., Result], tmp_path: Path) -> None:
    need_tool("gcc", "apt install gcc")
    cases = SUBSETS[op]()
    assert 5 <= len(cases) <= 20
    model, arrays = merged(cases)
    outputs, elements = run_against_tflm(cli, model, arrays, tmp_path)
    assert outputs == len(cases) and elements > 0


# --- small multi-op models ----------------------------------------------------------------

def _codes() -> dict[str, int]:
    import tflite
    return {k: v for k, v in vars(tflite.BuiltinOperator).items() if isinstance(v, int)}


def _q(scale: float, zp: int) -> tuple[list[float], list[int]]:
    q = fixed_quant(scale, zp)
    return list(q.scale), list(q.zero_point)


def kws_like() -> bytes:
    """x float [1, 10, 8, 2] -> QUANTIZE -> CONV_2D 3x3 SAME stride 2 (per channel, RELU)
    -> AVERAGE_POOL_2D 2x2 SAME stride 2 -> RESHAPE [1, 48] -> FULLY_CONNECTED (12) ->
    SOFTMAX -> DEQUANTIZE."""
    c = _codes()
    r = np.random.default_rng(11)
    s_in, s_a = 2.0 / 255, 3.0 / 255
    s_w = list(r.uniform(0.5, 2.0, 8) / 127 / 4)
    w = r.integers(-127, 128, (8, 3, 3, 2)).astype(np.int8)
    b = r.integers(-500, 500, 8).astype(np.int32)
    fw = r.integers(-127, 128, (12, 48)).astype(np.int8)
    fb = r.integers(-2000, 2000, 12).astype(np.int32)
    ts = [T("x", [1, 10, 8, 2]), T("xq", [1, 10, 8, 2], type=INT8, quant=_q(s_in, -3)),
          T("w", [8, 3, 3, 2], w, type=INT8, quant=(s_w, [0] * 8)),
          T("b", [8], b, type=INT32, quant=([s_in * s for s in s_w], [0] * 8)),
          T("a", [1, 5, 4, 8], type=INT8, quant=_q(s_a, -128)),
          T("p", [1, 3, 2, 8], type=INT8, quant=_q(s_a, -128)),
          T("shape", [2], np.array([1, 48], np.int32), type=INT32),
          T("f", [1, 48], type=INT8, quant=_q(s_a, -128)),
          T("fw", [12, 48], fw, type=INT8, quant=([0.01], [0])),
          T("fb", [12], fb, type=INT32, quant=([s_a * 0.01], [0])),
          T("logits", [1, 12], type=INT8, quant=_q(0.15, 4)),
          T("sm", [1, 12], type=INT8, quant=_q(1 / 256, -128)), T("y", [1, 12])]
    ops = [Op(c["QUANTIZE"], [0], [1]),
           Op(c["CONV_2D"], [1, 2, 3], [4], ("Conv2DOptions", {
               "Padding": 0, "StrideH": 2, "StrideW": 2, "FusedActivationFunction": 1})),
           Op(c["AVERAGE_POOL_2D"], [4], [5], ("Pool2DOptions", {
               "Padding": 0, "StrideH": 2, "StrideW": 2, "FilterHeight": 2,
               "FilterWidth": 2})),
           Op(c["RESHAPE"], [5, 6], [7]),
           Op(c["FULLY_CONNECTED"], [7, 8, 9], [10]),
           Op(c["SOFTMAX"], [10], [11], ("SoftmaxOptions", {"Beta": 1.0})),
           Op(c["DEQUANTIZE"], [11], [12])]
    return build(Graph(ts, ops, [0], [12]))


def mixed() -> bytes:
    """x int8 [1, 6, 6, 4] -> PAD (H and W by 1) -> MAX_POOL_2D 3x3 VALID (RELU) -> a;
    ADD(a, x) (RELU6) -> b; LOGISTIC(b) * TANH(b) (MUL) -> e; CONCATENATION(a, b) on
    channels -> MEAN over H, W (keep_dims) -> g. Outputs e and g, int8."""
    c = _codes()
    qx = _q(0.05, 0)  # a is about 5: a + x often beyond RELU6 (120), or below 0
    ts = [T("x", [1, 6, 6, 4], type=INT8, quant=qx),
          T("paddings", [4, 2], np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32),
            type=INT32),
          T("xp", [1, 8, 8, 4], type=INT8, quant=qx),
          T("a", [1, 6, 6, 4], type=INT8, quant=qx),
          T("b", [1, 6, 6, 4], type=INT8, quant=qx),
          T("c", [1, 6, 6, 4], type=INT8, quant=_q(1 / 256, -128)),
          T("d", [1, 6, 6, 4], type=INT8, quant=_q(1 / 128, 0)),
          T("e", [1, 6, 6, 4], type=INT8, quant=_q(1 / 128, -128)),
          T("f", [1, 6, 6, 8], type=INT8, quant=qx),
          T("axes", [2], np.array([1, 2], np.int32), type=INT32),
          T("g", [1, 1, 1, 8], type=INT8, quant=_q(0.05, -128))]
    ops = [Op(c["PAD"], [0, 1], [2]),
           Op(c["MAX_POOL_2D"], [2], [3], ("Pool2DOptions", {
               "Padding": 1, "StrideH": 1, "StrideW": 1, "FilterHeight": 3, "FilterWidth": 3,
               "FusedActivationFunction": 1})),
           Op(c["ADD"], [3, 0], [4], ("AddOptions", {"FusedActivationFunction": 3})),
           Op(c["LOGISTIC"], [4], [5]), Op(c["TANH"], [4], [6]),
           Op(c["MUL"], [5, 6], [7], ("MulOptions", {"FusedActivationFunction": 0})),
           Op(c["CONCATENATION"], [3, 4], [8], ("ConcatenationOptions", {"Axis": 3})),
           Op(c["MEAN"], [8, 9], [10], ("ReducerOptions", {"KeepDims": True}))]
    return build(Graph(ts, ops, [0], [7, 10]))


@pytest.mark.parametrize("seed", [1, 2])
def test_multi_op_models_bit_exact(seed: int, cli: Callable[..., Result],
                                   tmp_path: Path) -> None:
    need_tool("gcc", "apt install gcc")
    r = np.random.default_rng(seed)
    x = r.uniform(-1.1, 1.1, (1, 10, 8, 2)).astype(np.float32)
    (tmp_path / "kws").mkdir()
    assert run_against_tflm(cli, kws_like(), [x], tmp_path / "kws") == (1, 12)
    xi = r.integers(-128, 128, (1, 6, 6, 4)).astype(np.int8)
    (tmp_path / "mixed").mkdir()
    assert run_against_tflm(cli, mixed(), [xi], tmp_path / "mixed") == (2, 144 + 8)
