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
