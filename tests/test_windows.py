"""auto_pad and 1-D windows: resolved at load time into the explicit 2-D attributes the
kernels take, checked against values worked out by hand from the ONNX definitions; and a
model of 1-D and auto-padded operators through `tvmdev run` on the host."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import Result, need_tool

from tvmdev.model.ops import OPS, resolved_attrs
from tvmdev.model.shapes import ShapeError


def _resolve(op: str, shapes: list[tuple[int, ...] | None], attrs: dict[str, Any]
             ) -> tuple[dict[str, Any], tuple[int, ...]]:
    a = resolved_attrs(OPS[op], shapes, attrs)
    return a, OPS[op].infer(shapes, a)


# SAME: output ceil(in / stride), total pad (out - 1) * stride + (k - 1) * dil + 1 - in,
# the odd one at the end (UPPER) or the beginning (LOWER).
@pytest.mark.parametrize(("x", "k", "attrs", "pads", "out"), [
    ((1, 1, 7, 7), [3, 3], {"strides": [2, 2], "auto_pad": "SAME_UPPER"}, (1, 1, 1, 1),
     (1, 1, 4, 4)),
    ((1, 1, 8, 8), [3, 3], {"strides": [2, 2], "auto_pad": "SAME_UPPER"}, (0, 0, 1, 1),
     (1, 1, 4, 4)),
    ((1, 1, 8, 8), [3, 3], {"strides": [2, 2], "auto_pad": "SAME_LOWER"}, (1, 1, 0, 0),
     (1, 1, 4, 4)),
    ((1, 1, 5, 6), [2, 4], {"auto_pad": "SAME_UPPER"}, (0, 1, 1, 2), (1, 1, 5, 6)),
    ((1, 1, 5, 6), [2, 4], {"auto_pad": "VALID", "strides": [2, 1]}, (0, 0, 0, 0),
     (1, 1, 2, 3)),
    ((1, 2, 9), [3], {"strides": [2], "auto_pad": "SAME_LOWER"}, (0, 1, 0, 1), (1, 2, 5)),
    ((1, 2, 9), [3], {"strides": [2], "pads": [1, 0]}, (0, 1, 0, 0), (1, 2, 4)),
])
def test_pool_auto_pad_and_1d(x: tuple[int, ...], k: list[int], attrs: dict[str, Any],
                              pads: tuple[int, ...], out: tuple[int, ...]) -> None:
    a, shape = _resolve("maxpool2d", [x], {"kernel_shape": k, **attrs})
    assert a["pads"] == pads
    assert a["auto_pad"] == "NOTSET"
    assert shape == out


def test_conv_auto_pad_with_dilation_and_1d_layouts() -> None:
    # k 3, dilation 2: span 5; in 10, stride 3: out 4, total 3 * 3 + 5 - 10 = 4.
    a, out = _resolve("conv2d", [(1, 3, 10, 10), (4, 3, 3, 3)],
                      {"strides": [3, 3], "dilations": [2, 2], "auto_pad": "SAME_UPPER"})
    assert (a["pads"], out) == ((2, 2, 2, 2), (1, 4, 4, 4))
    a, out = _resolve("conv2d", [(2, 3, 11), (5, 3, 4)], {"auto_pad": "SAME_UPPER"})
    assert (a["pads"], a["strides"], out) == ((0, 1, 0, 2), (1, 1), (2, 5, 11))
    a, out = _resolve("conv2d", [(2, 11, 3), (5, 4, 3)],
                      {"layout": "NHWC", "strides": [2], "auto_pad": "VALID"})
    assert (a["pads"], out) == ((0, 0, 0, 0), (2, 4, 5))
    a, out = _resolve("depthwise_conv2d", [(1, 6, 6, 2), (1, 3, 3, 2)],
                      {"auto_pad": "SAME_UPPER", "strides": [2, 2]})
    assert (a["pads"], out) == ((0, 0, 1, 1), (1, 3, 3, 2))


@pytest.mark.parametrize(("op", "shapes", "attrs", "message"), [
    ("maxpool2d", [(1, 1, 5, 5)], {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1],
                                   "auto_pad": "SAME_UPPER"},
     "pads [1, 1, 1, 1] and auto_pad SAME_UPPER are both given"),
    ("maxpool2d", [(1, 1, 5, 5)], {"kernel_shape": [2, 2], "strides": [0, 2],
                                   "auto_pad": "SAME_UPPER"},
     "strides and dilations must be >= 1"),
    ("maxpool2d", [(1, 1, 5)], {"kernel_shape": [2, 2]},
     "attribute 'kernel_shape' must have 1 values for a 1-D window, got 2"),
    ("conv2d", [(1, 1, 5, 5), (1, 1, 3)], {}, "W must be 4-D like X, got [1, 1, 3]"),
    ("avgpool2d", [(1, 5)], {"kernel_shape": [2]}, "X must be 4-D NCHW (or 3-D for 1-D), "
     "got [1, 5]"),
    ("conv2d", [(1, 1, 5, 5), (1, 1, 3, 3)], {"auto_pad": "SAME"},
     "attribute 'auto_pad' must be one of NOTSET, SAME_UPPER, SAME_LOWER, VALID, got 'SAME'"),
    # Beyond what the kernels' int32_t counts and indices hold (issue 21).
    ("maxpool2d", [(1, 1, 4, 4)], {"kernel_shape": [65536, 32768], "auto_pad": "SAME_UPPER"},
     "pool: a window of 65536 x 32768 has more than 2^31-1 elements; the kernels count a "
     "window's elements in int32_t"),
    ("maxpool2d", [(1, 1, 4, 4)], {"kernel_shape": [2**31 - 1, 1], "auto_pad": "SAME_UPPER"},
     "pool: along H the windows reach 2147483650 positions (input 4, pads 1073741823 and "
     "1073741823, window 2147483647, dilation 1, stride 1), more than 2^31-1; the kernels "
     "index them with int32_t"),
    ("conv2d", [(1, 2, 4, 4), (3, 2, 3, 3)], {"dilations": [1, 2**30], "auto_pad": "SAME_LOWER"},
     "conv2d: along W the windows reach 2147483652 positions (input 4, pads 1073741824 and "
     "1073741824, window 3, dilation 1073741824, stride 1), more than 2^31-1; the kernels "
     "index them with int32_t"),
    ("depthwise_conv2d", [(1, 4, 4, 2), (1, 2, 2, 2)],
     {"pads": [2**31 - 4, 0, 0, 0]},
     "depthwise_conv2d: along H the windows reach 2147483648 positions (input 4, pads "
     "2147483644 and 0, window 2, dilation 1, stride 1), more than 2^31-1; the kernels index "
     "them with int32_t"),
])
def test_window_mistakes(op: str, shapes: list[tuple[int, ...] | None], attrs: dict[str, Any],
                         message: str) -> None:
    with pytest.raises(ShapeError) as exc:
        _resolve(op, shapes, attrs)
    assert str(exc.value) == message


WINDOWS_MODEL = """\
name: win
inputs:
  x: {shape: [2, 3, 10], dtype: float32}
  v: {shape: [1, 9, 4], dtype: float32}
  img: {shape: [1, 2, 8, 7], dtype: float32}
outputs:
  y: {shape: [2, 4, 5], dtype: float32}
  z: {shape: [1, 5, 5], dtype: float32}
  q: {shape: [1, 3, 4, 4], dtype: float32}
constants:
  w: {shape: [4, 3, 3], dtype: float32, random: {seed: 1, low: -1, high: 1}}
  wn: {shape: [5, 2, 4], dtype: float32, random: {seed: 2, low: -1, high: 1}}
  wi: {shape: [3, 2, 3, 2], dtype: float32, random: {seed: 3, low: -1, high: 1}}
operators:
  - {name: c1, op: conv2d, inputs: [x, w], outputs: [t1],
     attrs: {strides: [2], auto_pad: SAME_UPPER, activation: RELU}}
  - {name: p1, op: maxpool2d, inputs: [t1], outputs: [t2], attrs: {kernel_shape: [2],
     pads: [1, 0]}}
  - {name: p2, op: avgpool2d, inputs: [t2], outputs: [y], attrs: {kernel_shape: [2],
     dilations: [2], auto_pad: SAME_LOWER, count_include_pad: 1}}
  - {name: c2, op: conv2d, inputs: [v, wn], outputs: [t3],
     attrs: {layout: NHWC, strides: [2], auto_pad: SAME_LOWER}}
  - {name: p3, op: avgpool2d, inputs: [t3], outputs: [zt], attrs: {layout: NHWC,
     kernel_shape: [3], strides: [1], auto_pad: SAME_UPPER}}
  - {name: tr, op: transpose, inputs: [zt], outputs: [z], attrs: {perm: [0, 2, 1]}}
  - {name: c3, op: conv2d, inputs: [img, wi], outputs: [t4],
     attrs: {strides: [2, 2], dilations: [2, 1], auto_pad: SAME_UPPER}}
  - {name: p4, op: maxpool2d, inputs: [t4], outputs: [q],
     attrs: {kernel_shape: [3, 3], auto_pad: SAME_LOWER}}
"""


@pytest.mark.slow
def test_1d_and_auto_pad_model_runs(cli: Callable[..., Result], tmp_path: Path) -> None:
    """C against the reference, and the reference against itself with the pads written
    out by hand: SAME_UPPER on 10 with k 3, stride 2 pads (0, 1); SAME_LOWER for the
    2-wide pool with dilation 2 on 5 pads (1, 1); SAME_LOWER on 9 with k 2, stride 2 pads
    (1, 0); SAME_UPPER with k 3 on 5 pads (1, 1); the 2-D conv (k 3 x 2, dilation 2 x 1,
    stride 2 on 8 x 7) pads (1, 0, 2, 1); the 3 x 3 pool on 4 x 4 pads (1, 1, 1, 1)."""
    need_tool("gcc")
    path = tmp_path / "win.yaml"
    path.write_text(WINDOWS_MODEL)
    r = cli("run", str(path), "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS")

    from tvmdev.load.model import load_model
    from tvmdev.model import reference

    explicit = tmp_path / "explicit.yaml"
    text = WINDOWS_MODEL
    for old, new in [("strides: [2], auto_pad: SAME_UPPER, activation", "strides: [2], "
                      "pads: [0, 1], activation"),
                     ("dilations: [2], auto_pad: SAME_LOWER", "dilations: [2], pads: [1, 1]"),
                     ("strides: [2], auto_pad: SAME_LOWER", "strides: [2], pads: [1, 0]"),
                     ("strides: [1], auto_pad: SAME_UPPER", "strides: [1], pads: [1, 1]"),
                     ("dilations: [2, 1], auto_pad: SAME_UPPER",
                      "dilations: [2, 1], pads: [1, 0, 2, 1]"),
                     ("kernel_shape: [3, 3], auto_pad: SAME_LOWER",
                      "kernel_shape: [3, 3], pads: [1, 1, 1, 1]")]:
        assert old in text
        text = text.replace(old, new)
    explicit.write_text(text)
    m1, m2 = load_model(path), load_model(explicit)
    x = reference.random_inputs(m1)
    r1, r2 = reference.evaluate(m1, x), reference.evaluate(m2, x)
    for name in m1.outputs:
        np.testing.assert_array_equal(r1[name], r2[name])
        assert np.abs(r1[name]).sum() > 0


@pytest.mark.parametrize(("op", "shapes", "attrs", "message"), [
    ("clip", [(1, 4)], {"min": 1e39}, "attribute 'min' is 1e+39, which is not a finite float32"),
    ("pad", [(1, 4)], {"pads": [0, 2**31, 0, 0]},
     "attribute 'pads': 2147483648 does not fit int32_t"),
    ("concat", [(1, 4), (1, 4)], {"axis": 2**40},
     "attribute 'axis': 1099511627776 does not fit int32_t"),
    ("conv2d", [(1, 1, 5, 5), (1, 1, 3, 3)], {"layout": ["NHWC"]},
     "attribute 'layout' must be one of NCHW, NHWC, got ['NHWC']"),
    ("fully_connected", [(1, 4), (3, 4)], {"activation": "RELU\n*/"},
     "attribute 'activation' must be one of NONE, RELU, RELU6, RELU_N1_TO_1, TANH, "
     "got 'RELU\\n*/'"),
])
def test_new_attrs_meet_the_input_limits(op: str, shapes: list[tuple[int, ...] | None],
                                         attrs: dict[str, Any], message: str) -> None:
    """The NHWC/TFLite operators' attributes are held to the same limits as the others:
    floats finite float32, integers int32, user text quoted through shown (one line)."""
    with pytest.raises(ShapeError) as exc:
        _resolve(op, shapes, attrs)
    assert str(exc.value) == message


# Windows, dilations and pads far larger than the input, which the kernels compute (they
# skip the padding) and so must the reference, without a padded copy of the input (issue
# 21): a 2^31-1 pool over one row (SAME pads it by 2^31-2), dilations 2^28 (only the
# centre tap meets the input), a 2^20 x 2^10 average, and int8 depthwise and conv with
# dilation 2^28 or a 2^16-tall window.
GIANT_MODEL = """\
name: giant
inputs:
  row: {shape: [1, 2, 1, 4], dtype: float32}
  img: {shape: [1, 2, 4, 4], dtype: float32}
  x8: {shape: [1, 4, 4, 2], dtype: float32}
outputs:
  pooled: {shape: [1, 2, 1, 4], dtype: float32}
  dilated: {shape: [1, 3, 4, 4], dtype: float32}
  centre: {shape: [1, 3, 4, 4], dtype: float32}
  mean: {shape: [1, 2, 4, 4], dtype: float32}
  dw8: {shape: [1, 4, 4, 2], dtype: float32}
  tall8: {shape: [1, 4, 4, 3], dtype: float32}
tensors:
  q8: {dtype: int8, quant: {scale: [0.02], zero_point: [3]}}
  d8: {dtype: int8, quant: {scale: [0.03], zero_point: [-1]}}
  t8: {dtype: int8, quant: {scale: [0.05], zero_point: [2]}}
constants:
  w: {shape: [3, 2, 3, 3], dtype: float32, random: {seed: 1, low: -1, high: 1}}
  wc: {shape: [3, 2, 1, 1], dtype: float32, values: [W_CENTRE]}
  wd: {shape: [1, 3, 3, 2], dtype: int8, random: {seed: 2, low: -100, high: 100},
       quant: {scale: [0.01], zero_point: [0]}}
  wt: {shape: [3, 65536, 1, 2], dtype: int8, random: {seed: 3, low: -3, high: 3},
       quant: {scale: [0.01], zero_point: [0]}}
operators:
  - {name: pool, op: maxpool2d, inputs: [row], outputs: [pooled],
     attrs: {kernel_shape: [2147483647, 1], auto_pad: SAME_UPPER}}
  - {name: dil, op: conv2d, inputs: [img, w], outputs: [dilated],
     attrs: {dilations: [268435456, 268435456], auto_pad: SAME_UPPER}}
  - {name: ctr, op: conv2d, inputs: [img, wc], outputs: [centre]}
  - {name: avg, op: avgpool2d, inputs: [img], outputs: [mean],
     attrs: {kernel_shape: [1048576, 1024], auto_pad: SAME_LOWER}}
  - {name: q, op: quantize, inputs: [x8], outputs: [q8]}
  - {name: dw, op: depthwise_conv2d, inputs: [q8, wd], outputs: [d8],
     attrs: {dilations: [268435456, 268435456], auto_pad: SAME_UPPER}}
  - {name: dq, op: dequantize, inputs: [d8], outputs: [dw8]}
  - {name: tall, op: conv2d, inputs: [q8, wt], outputs: [t8],
     attrs: {layout: NHWC, auto_pad: SAME_UPPER}}
  - {name: dqt, op: dequantize, inputs: [t8], outputs: [tall8]}
"""


def _giant(tmp_path: Path) -> Path:
    w = np.random.default_rng(1).uniform(-1, 1, (3, 2, 3, 3)).astype(np.float32)
    path = tmp_path / "giant.yaml"
    path.write_text(GIANT_MODEL.replace("W_CENTRE", ", ".join(
        repr(float(v)) for v in w[:, :, 1, 1].ravel())))
    return path


def test_giant_windows_computed_over_the_input_alone(tmp_path: Path) -> None:
    """Each output against what it is by hand: the pool over one row is that row, the
    dilated conv is its centre tap (a 1x1 conv by the centre weights), the average is
    the input's mean (padding left out), the int8 depthwise is a 1x1 one by the centre
    weights, as the references compute them."""
    from tvmdev.load.model import load_model
    from tvmdev.model import reference

    m = load_model(_giant(tmp_path))
    assert m.constants["w"].shape == (3, 2, 3, 3)
    x = reference.random_inputs(m)
    y = reference.evaluate(m, x)
    np.testing.assert_array_equal(y["pooled"], x["row"])
    np.testing.assert_allclose(y["dilated"], y["centre"], rtol=1e-6, atol=1e-6)
    assert np.abs(y["dilated"]).sum() > 0
    means = x["img"].astype(np.float64).mean(axis=(2, 3), keepdims=True)
    np.testing.assert_allclose(y["mean"], np.broadcast_to(means, (1, 2, 4, 4)), rtol=1e-6)
    small = tmp_path / "small.yaml"
    small.write_text(GIANT_MODEL.replace(
        "wd: {shape: [1, 3, 3, 2], dtype: int8, random: {seed: 2, low: -100, high: 100}",
        "wd: {shape: [1, 1, 1, 2], dtype: int8, values: [WD]").replace(
        "attrs: {dilations: [268435456, 268435456], auto_pad: SAME_UPPER}}\n  - {name: dq",
        "attrs: {}}\n  - {name: dq").replace("W_CENTRE", "0, 0, 0, 0, 0, 0").replace(
        "WD", ", ".join(str(int(v)) for v in m.constants["wd"][0, 1, 1])))
    assert reference.evaluate(load_model(small), x)["dw8"].tolist() == y["dw8"].tolist()
    assert np.unique(y["tall8"]).size > 1


def test_giant_windows_refused_at_load(cli: Callable[..., Result], tmp_path: Path) -> None:
    """Past int32_t: one line naming the operator's line, nothing written."""
    path = _giant(tmp_path)
    text = path.read_text()
    for old, new, line, message in [
            ("kernel_shape: [2147483647, 1]", "kernel_shape: [2147483647, 2]", 25,
             "operator 'pool' (maxpool2d): pool: a window of 2147483647 x 2 has more than "
             "2^31-1 elements; the kernels count a window's elements in int32_t"),
            ("[268435456, 268435456], auto_pad: SAME_UPPER}}\n  - {name: ctr",
             "[268435456, 1073741824], auto_pad: SAME_UPPER}}\n  - {name: ctr", 27,
             "operator 'dil' (conv2d): conv2d: along W the windows reach 2147483652 "
             "positions (input 4, pads 1073741824 and 1073741824, window 3, dilation "
             "1073741824, stride 1), more than 2^31-1; the kernels index them with int32_t")]:
        assert old in text
        path.write_text(text.replace(old, new))
        r = cli("aot", str(path), "-o", str(tmp_path / "o"))
        assert r.code == 1
        assert r.err.splitlines() == [f"tvmdev: {path}:{line}: {message}"]
        assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_giant_windows_run(cli: Callable[..., Result], tmp_path: Path) -> None:
    """The kernels agree with the reference on them."""
    need_tool("gcc")
    r = cli("run", str(_giant(tmp_path)), "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS")
