"""int8 (fast): the params generation derives, held against values worked out by hand
from TFLM's Prepare; the numpy references on hand-worked cases; int8 models described
in YAML, loaded (and refused, with one line, when their quantization is wrong)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import Result

from tvmdev.load.model import load_model
from tvmdev.model.ops import op_params
from tvmdev.model.quant import Quant
from tvmdev.model.s8.call import S8Call, activation_range
from tvmdev.model.s8.table import S8OPS
from tvmdev.model.shapes import ShapeError


def q(scale: float, zp: int) -> Quant:
    return Quant((scale,), (zp,))


def fc_call(act: str = "NONE", bias: bool = True) -> S8Call:
    # in 0.5 (zp 3), weights 0.25 (zp 0), out 0.5 (zp -2): ratio 0.25 = 2^30 * 2^(-1-31)
    return S8Call([(1, 2), (2, 2), (2,) if bias else None], (1, 2),
                  {"activation": act, "keep_num_dims": 0},
                  ["int8", "int8", "int32" if bias else None, "int8"],
                  [q(0.5, 3), q(0.25, 0), None, q(0.5, -2)])


def test_fully_connected_params_by_hand() -> None:
    p = S8OPS["fully_connected"].params(fc_call("RELU"))
    assert p == {"batch": 1, "in_size": 2, "out_size": 2, "input_offset": -3,
                 "weights_offset": 0, "output_offset": -2,
                 "output_multiplier": 1 << 30, "output_shift": -1,
                 "activation_min": -2, "activation_max": 127,
                 "channel_multiplier": None, "channel_shift": None,
                 "kernel_sums": None}


def test_fully_connected_reference_by_hand() -> None:
    # x - 3 = [2, -1]; w = [[1, 2], [3, -4]]: acc = [0, 10] + bias [4, -3] = [4, 7];
    # times 0.25: 1 and 1.75, which TFLite's double rounding makes 2; minus 2: [-1, 0].
    x = np.array([[5, 2]], np.int8)
    w = np.array([[1, 2], [3, -4]], np.int8)
    b = np.array([4, -3], np.int32)
    y = S8OPS["fully_connected"].reference(fc_call("RELU"), [x, w, b])
    assert y.dtype == np.int8 and y.tolist() == [[-1, 0]]
    # Without bias: acc [0, 10] -> 0 and 2.5 (rounds to 3) -> [-2, 1].
    y = S8OPS["fully_connected"].reference(fc_call(bias=False), [x, w, None])
    assert y.tolist() == [[-2, 1]]


def test_activation_range_by_hand() -> None:
    assert activation_range("NONE", 0.05, -5) == (-128, 127)
    assert activation_range("RELU", 0.05, -5) == (-5, 127)
    # 6 / 0.05f is 119.99999821 in exact arithmetic but 120 in float32, as TFLM divides.
    assert activation_range("RELU6", 0.05, -5) == (-5, 115)
    assert activation_range("RELU_N1_TO_1", 0.01, 0) == (-100, 100)
    assert activation_range("RELU6", 0.01, 0) == (0, 127)  # clamped to int8
    assert activation_range("RELU", 0.1, -128 - 5) == (-128, 127)  # quantize(0) below -128
    with pytest.raises(ShapeError, match="TANH has no int8 form"):
        activation_range("TANH", 0.05, 0)


def test_quantize_rounds_halves_away_from_zero() -> None:
    call = S8Call([(8,)], (8,), {}, ["float32", "int8"], [None, q(0.5, 1)])
    x = np.array([0.25, -0.25, 0.74, 0.75, 1000.0, -1000.0, np.nan, 0.2499999],
                 np.float32)
    y = S8OPS["quantize"].reference(call, [x])
    assert y.dtype == np.int8
    assert y.tolist() == [2, 0, 2, 3, 127, -128, -128, 1]
    assert S8OPS["quantize"].params(call) == {"count": 8, "scale": 0.5, "zero_point": 1,
                                              "input_zero_point": 0, "multiplier": 0,
                                              "shift": 0}


def test_requantize_by_hand() -> None:
    # int8 (0.5, zp 1) to int8 (0.25, zp -3): the ratio 2 is 2^30 * 2^(2-31).
    call = S8Call([(4,)], (4,), {}, ["int8", "int8"], [q(0.5, 1), q(0.25, -3)])
    p = S8OPS["quantize"].params(call)
    assert (p["input_zero_point"], p["multiplier"], p["shift"]) == (1, 1 << 30, 2)
    y = S8OPS["quantize"].reference(call, [np.array([1, 11, 100, -100], np.int8)])
    assert y.tolist() == [-3, 17, 127, -128]  # (q - 1) * 2 - 3, clamped


def test_dequantize_by_hand() -> None:
    call = S8Call([(3,)], (3,), {}, ["int8", "float32"], [q(0.5, 1), None])
    y = S8OPS["dequantize"].reference(call, [np.array([-128, 0, 127], np.int8)])
    assert y.dtype == np.float32 and y.tolist() == [-64.5, -0.5, 63.0]


def test_op_params_refuses_mixes() -> None:
    with pytest.raises(ShapeError, match="relu has no int8 form yet"):
        op_params("relu", [(2,)], (2,), {}, ["int8", "int8"], [None] * 2)
    with pytest.raises(ShapeError, match="A is int8 but has no quant"):
        op_params("add", [(2,), (2,)], (2,), {}, ["int8", "int8", "int8"], [None] * 3)
    with pytest.raises(ShapeError, match="int8 fully_connected: input 2 is int8"):
        op_params("fully_connected", [(1, 2), (2, 2), (2,)], (1, 2),
                  {"activation": "NONE", "keep_num_dims": 0},
                  ["int8", "int8", "int8", "int8"], [q(1, 0)] * 4)
    with pytest.raises(ShapeError, match="relu on float32 takes float32 tensors, not int32"):
        op_params("relu", [(2,)], (2,), {}, ["int32", "float32"], [None, None])
    with pytest.raises(ShapeError, match="no quant"):
        S8OPS["fully_connected"].params(S8Call(
            [(1, 2), (2, 2), None], (1, 2), {"activation": "NONE", "keep_num_dims": 0},
            ["int8", "int8", None, "int8"], [None, q(1, 0), None, q(1, 0)]))


MODEL = """\
name: fc8
inputs:
  x: {shape: [2, 4], dtype: float32}
outputs:
  y: {shape: [2, 3], dtype: float32}
tensors:
  xq: {dtype: int8, quant: {scale: [0.02], zero_point: [3]}}
  yq: {dtype: int8, quant: {scale: [0.05], zero_point: [-5]}}
constants:
  w: {shape: [3, 4], dtype: int8, values: [1, -2, 3, 127, -128, 5, 6, 7, 8, 9, 10, -11],
      quant: {scale: [0.01], zero_point: [0]}}
  b: {shape: [3], dtype: int32, values: [100, -200, 300]}
operators:
  - {name: q, op: quantize, inputs: [x], outputs: [xq]}
  - {name: fc, op: fully_connected, inputs: [xq, w, b], outputs: [yq], attrs: {activation: RELU}}
  - {name: dq, op: dequantize, inputs: [yq], outputs: [y]}
"""


def test_hand_written_model_loads(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MODEL)
    m = load_model(path)
    # Scales are kept as float32 (what TFLite stores).
    assert m.tensors["xq"].dtype == "int8"
    assert m.tensors["xq"].quant == Quant((float(np.float32(0.02)),), (3,))
    assert m.tensors["xq"].nbytes == 8
    assert m.constants["w"].dtype == np.int8 and m.constants["b"].dtype == np.int32
    fc = m.operators[1]
    assert m.op_dtype(fc) == "int8"
    assert m.operator_params(fc)[0] == "tvmk_fully_connected_s8_params"
    # 0.02 * 0.01 / 0.05 in double, from the float32 scales, as TFLM computes it.
    s = [float(np.float32(v)) for v in (0.02, 0.01, 0.05)]
    frac, exp = np.frexp(s[0] * s[1] / s[2])
    p = m.operator_params(fc)[1]
    assert (p["output_multiplier"], p["output_shift"]) == (round(frac * 2**31), exp)
    assert (p["activation_min"], p["activation_max"]) == (-5, 127)


BAD = [
    ("int8 without quant", MODEL.replace("xq: {dtype: int8, quant: {scale: [0.02], "
                                         "zero_point: [3]}}", "xq: {dtype: int8}"),
     "m.yaml:7: tensor 'xq' is int8 but has no quant"),
    ("zero scale", MODEL.replace("scale: [0.02]", "scale: [0.0]"),
     "m.yaml:7: quant of tensor 'xq': every scale must be a positive finite float32"),
    ("scale beyond float32", MODEL.replace("scale: [0.02]", "scale: [3.5e+38]"),
     "m.yaml:7: quant of tensor 'xq': every scale must be a positive finite float32"),
    # 3e38 is a finite float32, but int8 127 then stands for 132 * 3e38 (issue 21).
    ("scale's range beyond float32", MODEL.replace("scale: [0.05]", "scale: [3.0e+38]"),
     "m.yaml:8: quant of tensor 'yq': with scale 3e+38 and zero point -5, int8 127 stands "
     "for 3.96e+40, beyond float32's range (±3.403e+38)"),
    ("weights' range beyond float32", MODEL.replace("quant: {scale: [0.01]",
                                                    "quant: {scale: [3.0e+36]"),
     "m.yaml:11: quant of constant 'w': with scale 3e+36 and zero point 0, int8 -128 stands "
     "for -3.84e+38, beyond float32's range"),
    # Within it (128 * 2e36 = 2.56e38), the multiplier overflows.
    ("requantization beyond int32", MODEL.replace("quant: {scale: [0.01]",
                                                  "quant: {scale: [2.0e+36]"),
     "m.yaml:15: operator 'fc' (fully_connected): the requantization scale cannot be "
     "represented: quantize_multiplier: "),
    ("zero point range", MODEL.replace("zero_point: [3]", "zero_point: [300]"),
     "m.yaml:7: quant of tensor 'xq': zero_point must be a list of integers in [-128, 127]"),
    ("int8 value range", MODEL.replace("127, -128, 5", "128, -128, 5"),
     "m.yaml:10: constant 'w' has values outside int8's range [-128, 127]"),
    ("not an integer", MODEL.replace("[100, -200, 300]", "[100.5, -200, 300]"),
     "m.yaml:12: constant 'b' is int32: its values must be integers"),
    ("declared but never written", MODEL.replace("  yq: {", "  zz: {dtype: int8, quant: "
                                                 "{scale: [1.0], zero_point: [0]}}\n  yq: {"),
     "m.yaml:8: tensor 'zz' is declared under tensors but no operator writes it"),
    ("bias dtype", MODEL.replace("b: {shape: [3], dtype: int32", "b: {shape: [3], dtype: int8")
     .replace("[100, -200, 300]}", "[100, -100, 30], quant: {scale: [1.0], zero_point: [0]}}"),
     "m.yaml:15: operator 'fc' (fully_connected): int8 fully_connected: input 2 is int8; its "
     "int8 kernels take int32"),
    ("scales per channel", MODEL.replace("quant: {scale: [0.01], zero_point: [0]}",
                                         "quant: {scale: [0.01, 0.02], zero_point: [0, 0]}"),
     "m.yaml:11: quant of constant 'w': 2 scales, but the tensor has 3 slices along axis 0"),
    ("float op on int8", MODEL.replace("op: dequantize", "op: relu"),
     "m.yaml:16: operator 'dq' (relu): relu has no int8 form yet"),
]


POOL = """\
name: pool8
inputs:
  x: {shape: [1, 4, 4, 2], dtype: int8, quant: {scale: [0.1], zero_point: [3]}}
outputs:
  y: {shape: [1, 2, 2, 2], dtype: int8, quant: {scale: [0.1], zero_point: [3]}}
  z: {shape: [1, 2, 2, 2], dtype: float32}
tensors:
  s: {dtype: int8, quant: {scale: [0.00390625], zero_point: [-128]}}
operators:
  - {name: p, op: avgpool2d, inputs: [x], outputs: [y],
     attrs: {kernel_shape: [2, 2], strides: [2, 2], layout: NHWC, activation: RELU}}
  - {name: s, op: softmax, inputs: [y], outputs: [s], attrs: {beta: 0.5}}
  - {name: dq, op: dequantize, inputs: [s], outputs: [z]}
"""

BAD += [
    ("int8 pool requantizing", POOL.replace("y: {shape: [1, 2, 2, 2], dtype: int8, quant: "
                                            "{scale: [0.1]", "y: {shape: [1, 2, 2, 2], "
                                            "dtype: int8, quant: {scale: [0.2]"),
     "m.yaml:10: operator 'p' (avgpool2d): int8 pooling needs the output quantized as the "
     "input (TFLM refuses otherwise)"),
    ("int8 softmax output", POOL.replace("[0.00390625], zero_point: [-128]",
                                         "[0.00390625], zero_point: [0]"),
     "m.yaml:12: operator 's' (softmax): an int8 softmax output must have scale 1/256 and "
     "zero point -128"),
    ("int8 fused TANH", POOL.replace("activation: RELU", "activation: TANH"),
     "m.yaml:10: operator 'p' (avgpool2d): the fused activation TANH has no int8 form"),
    ("float pool activation",
     "name: fp\ninputs:\n  x: {shape: [1, 2, 4, 4], dtype: float32}\noutputs:\n"
     "  y: {shape: [1, 2, 2, 2], dtype: float32}\noperators:\n"
     "  - {name: p, op: maxpool2d, inputs: [x], outputs: [y], "
     "attrs: {kernel_shape: [2, 2], strides: [2, 2], activation: RELU}}\n",
     "m.yaml:7: operator 'p' (maxpool2d): a float32 pool has no fused activation (RELU; "
     "int8 pools have): put the activation after it"),
    ("float softmax beta", MODEL.replace(
        "  - {name: dq, op: dequantize, inputs: [yq], outputs: [y]}",
        "  - {name: dq, op: dequantize, inputs: [yq], outputs: [y0]}\n"
        "  - {name: sm, op: softmax, inputs: [y0], outputs: [y], attrs: {beta: 2.0}}"),
     "m.yaml:17: operator 'sm' (softmax): a float32 softmax takes beta 1 only, not 2 "
     "(int8 softmax takes any)"),
]


def test_int8_pool_and_softmax_load() -> None:
    """The int8 model BAD's pool cases spoil loads (pool with a fused RELU, softmax with
    beta 0.5): its params are TFLM's."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.yaml"
        path.write_text(POOL)
        m = load_model(path)
    pool, sm = m.operators[0], m.operators[1]
    assert m.operator_params(pool)[0] == "tvmk_pool2d_s8_params"
    # RELU on zero point 3: the clamp starts at 3.
    pool_params = m.operator_params(pool)[1]
    assert (pool_params["act_min"], pool_params["act_max"]) == (3, 127)
    assert m.operator_params(sm)[0] == "tvmk_softmax_s8_params"


@pytest.mark.parametrize("text, message", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_int8_model(text: str, message: str, cli: Callable[..., Result],
                        tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text(text)
    r = cli("aot", str(tmp_path / "m.yaml"), "-o", str(tmp_path / "out"))
    assert r.code == 1
    assert r.err.startswith("tvmdev: ") and message in r.err.splitlines()[0], r.err
    assert not (tmp_path / "out").exists()


def test_int8_npy_dtype_is_checked(cli: Callable[..., Result], tmp_path: Path) -> None:
    np.save(tmp_path / "w.npy", np.zeros((3, 4), np.int16))
    (tmp_path / "m.yaml").write_text(MODEL.replace(
        "values: [1, -2, 3, 127, -128, 5, 6, 7, 8, 9, 10, -11]", "npy: w.npy"))
    r = cli("aot", str(tmp_path / "m.yaml"), "-o", str(tmp_path / "out"))
    assert r.code == 1 and "constant 'w': w.npy holds int16, declared int8" in r.err, r.err


def test_int8_inputs_file_dtype_is_checked(cli: Callable[..., Result], tmp_path: Path) -> None:
    """An int8 input's --inputs file must hold int8 (nothing is built otherwise)."""
    text = MODEL.replace("  x: {shape: [2, 4], dtype: float32}",
                         "  x: {shape: [2, 4], dtype: int8, quant: {scale: [0.1], "
                         "zero_point: [0]}}")
    text = text.replace("  - {name: q, op: quantize, inputs: [x], outputs: [xq]}",
                        "  - {name: q, op: quantize, inputs: [x], outputs: [xq]}  # requantize")
    (tmp_path / "m.yaml").write_text(text)
    (tmp_path / "in").mkdir()
    np.save(tmp_path / "in" / "x.npy", np.zeros((2, 4), np.float32))
    r = cli("run", str(tmp_path / "m.yaml"), "--inputs", str(tmp_path / "in"),
            "--build-dir", str(tmp_path / "b"))
    assert r.code == 1
    assert r.err.splitlines()[0].endswith("x.npy: input 'x' is int8 in the model, the file "
                                          "holds float32"), r.err
    assert not (tmp_path / "b").exists()


OVERFLOWING_FC = """\
name: fc8
inputs:
  x: {shape: [2, 4], dtype: float32}
outputs:
  y: {shape: [2, 3], dtype: float32}
tensors:
  xq: {dtype: int8, quant: {scale: [0.02], zero_point: [3]}}
  yq: {dtype: int8, quant: {scale: [0.05], zero_point: [-5]}}
constants:
  w: {shape: [3, 4], dtype: int8, values: [127, 127, 127, 127, 127, 127, 127, 127, 127,
                                           127, 127, 127],
      quant: {scale: [0.01], zero_point: [0]}}
  b: {shape: [3], dtype: int32, values: [BIAS, BIAS, BIAS]}
operators:
  - {name: q, op: quantize, inputs: [x], outputs: [xq]}
  - {name: fc, op: fully_connected, inputs: [xq, w, b], outputs: [yq]}
  - {name: dq, op: dequantize, inputs: [yq], outputs: [y]}
"""


def test_reference_overflow_is_one_line(tmp_path: Path) -> None:
    """Inputs that take an int8 accumulator beyond int32 (where TFLM's kernels overflow)
    stop the run's reference with one line naming the operator, not a traceback; the
    same model with a small bias computes."""
    from tvmdev.errors import TvmdevError
    from tvmdev.model import reference
    path = tmp_path / "fc8.yaml"
    path.write_text(OVERFLOWING_FC.replace("BIAS", str(2**31 - 1)))
    m = load_model(path)
    x = {"x": np.ones((2, 4), np.float32)}
    with pytest.raises(TvmdevError) as err:
        reference.evaluate(m, x)
    assert str(err.value.where) == f"{path}:16"  # the fc operator's line
    assert err.value.message.startswith("operator 'fc' (fully_connected): these inputs take "
                                        "it where TFLM's integer kernels overflow")
    path.write_text(OVERFLOWING_FC.replace("BIAS", "100"))
    assert reference.evaluate(load_model(path), x)["y"].shape == (2, 3)


def test_requantize_beyond_int32_is_refused(tmp_path: Path) -> None:
    """int8 -> int8 by 2^24: (x - zp) << 25 overflows TFLM's int32 (it wraps to garbage),
    refused when the model is checked; by 2^22 it still fits and is accepted."""
    from tvmdev.errors import TvmdevError
    text = """\
name: rq
inputs:
  x: {shape: [4], dtype: int8, quant: {scale: [1.0], zero_point: [0]}}
outputs:
  y: {shape: [4], dtype: int8, quant: {scale: [SCALE], zero_point: [0]}}
operators:
  - {name: q, op: quantize, inputs: [x], outputs: [y]}
"""
    path = tmp_path / "rq.yaml"
    path.write_text(text.replace("SCALE", repr(2.0 ** -24)))
    with pytest.raises(TvmdevError, match="overflows TFLM's int32 arithmetic"):
        load_model(path)
    path.write_text(text.replace("SCALE", repr(2.0 ** -22)))
    load_model(path)
