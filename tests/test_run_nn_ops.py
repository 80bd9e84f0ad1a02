"""The TFLite-style operators through `tvmdev run` on the host and the cross boards: an NHWC
network (conv2d, depthwise_conv2d, fused activations on conv, add, mul and
fully_connected, pad, the pools, mean, clip) and an NCHW one (conv2d, relu6,
global_average_pool, fully_connected with keep_num_dims), every output compared with the
numpy reference; concat of any number of inputs; and the reference's NHWC paths against
its NCHW ones.

Tolerance: |c - r| <= 1e-5 + 1e-4 * |r| (tvmdev.run.compare).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import Result, need_tool

from tvmdev.load.model import load_model
from tvmdev.model import reference
from tvmdev.run.compare import ATOL, RTOL

NN_MODEL = """\
name: nn
devices:
  npu0: {kind: woofles}
inputs:
  img: {shape: [1, 12, 12, 3], dtype: float32}
  chw: {shape: [2, 3, 9, 9], dtype: float32}
outputs:
  logits: {shape: [1, 5], dtype: float32}
  pooled: {shape: [1, 2, 2, 4], dtype: float32}
  gap: {shape: [2, 6, 1, 1], dtype: float32}
  rows: {shape: [2, 6, 4], dtype: float32}
constants:
  w1: {shape: [8, 3, 3, 3], dtype: float32, random: {seed: 1, low: -0.5, high: 0.5}}
  b1: {shape: [8], dtype: float32, random: {seed: 2, low: -0.5, high: 0.5}}
  dw: {shape: [1, 3, 3, 16], dtype: float32, random: {seed: 3, low: -0.5, high: 0.5}}
  db: {shape: [16], dtype: float32, random: {seed: 4, low: -0.5, high: 0.5}}
  fw: {shape: [5, 16], dtype: float32, random: {seed: 5, low: -0.5, high: 0.5}}
  fb: {shape: [5], dtype: float32, random: {seed: 6, low: -0.5, high: 0.5}}
  sc: {shape: [16], dtype: float32, random: {seed: 7, low: 0.5, high: 1.5}}
  w2: {shape: [6, 3, 3, 3], dtype: float32, random: {seed: 8, low: -0.5, high: 0.5}}
  w3: {shape: [4, 2, 2, 4], dtype: float32, random: {seed: 9, low: -0.5, high: 0.5}}
  fw2: {shape: [4, 3], dtype: float32, random: {seed: 10, low: -0.5, high: 0.5}}
operators:
  - {name: conv1, op: conv2d, inputs: [img, w1, b1], outputs: [c1],
     attrs: {layout: NHWC, strides: [2, 2], pads: [1, 1, 1, 1], activation: RELU6}}
  - {name: dw1, op: depthwise_conv2d, inputs: [c1, dw, db], outputs: [d1],
     attrs: {depth_multiplier: 2, pads: [1, 1, 1, 1], activation: RELU}}
  - {name: scale, op: mul, inputs: [d1, sc], outputs: [m1], attrs: {activation: RELU_N1_TO_1}}
  - {name: res, op: add, inputs: [m1, d1], outputs: [a1], attrs: {activation: TANH}}
  - {name: padded, op: pad, inputs: [a1], outputs: [p1],
     attrs: {pads: [0, 1, 0, 0, 0, 0, 1, 0], value: -0.25}}
  - {name: mp, op: maxpool2d, inputs: [p1], outputs: [mp1],
     attrs: {layout: NHWC, kernel_shape: [2, 2], strides: [2, 2]}}
  - {name: conv2, op: conv2d, inputs: [mp1, w3], outputs: [c2],
     attrs: {layout: NHWC, group: 4, pads: [0, 0, 1, 1], activation: NONE}}
  - {name: ap, op: avgpool2d, inputs: [c2], outputs: [pooled],
     attrs: {layout: NHWC, kernel_shape: [2, 2], dilations: [2, 2], pads: [1, 1, 0, 0]}}
  - {name: avg, op: mean, inputs: [a1], outputs: [v1], attrs: {axes: [1, 2], keepdims: 0}}
  - {name: fc, op: fully_connected, inputs: [v1, fw, fb], outputs: [f1], device: npu0,
     attrs: {activation: RELU6}}
  - {name: clamp, op: clip, inputs: [f1], outputs: [logits], attrs: {min: 0.1, max: 2.0}}
  - {name: conv3, op: conv2d, inputs: [chw, w2], outputs: [c3],
     attrs: {pads: [1, 1, 1, 1], activation: RELU}}
  - {name: r6, op: relu6, inputs: [c3], outputs: [c3r]}
  - {name: gp, op: global_average_pool, inputs: [c3r], outputs: [gap]}
  - {name: cut, op: avgpool2d, inputs: [c3r], outputs: [c3p],
     attrs: {kernel_shape: [3, 3], strides: [3, 3]}}
  - {name: flat, op: reshape, inputs: [c3p], outputs: [c3f], attrs: {shape: [2, 6, 3, 3]}}
  - {name: rowsum, op: mean, inputs: [c3f], outputs: [c3m], attrs: {axes: [2], keepdims: 0}}
  - {name: fc2, op: fully_connected, inputs: [c3m, fw2], outputs: [rows], attrs: {keep_num_dims: 1}}
"""


@pytest.mark.slow
def test_nn_model_matches_reference(cli: Callable[..., Result], tmp_path: Path) -> None:
    need_tool("gcc")
    path = tmp_path / "nn.yaml"
    path.write_text(NN_MODEL)
    r = cli("run", str(path), "--build-dir", str(tmp_path / "b"), "--save-outputs",
            str(tmp_path / "out"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS")
    for kernel in ("tvmk_depthwise_conv2d_f32", "tvmk_pad_f32", "tvmk_mean_f32",
                   "tvmk_clip_f32", "tvmk_fully_connected_f32"):
        assert kernel in r.out
    m = load_model(path)
    ref = reference.evaluate(m, reference.random_inputs(m))
    for name in m.outputs:
        got = np.load(tmp_path / "out" / f"{name}.npy")
        np.testing.assert_allclose(got, ref[name], rtol=RTOL, atol=ATOL, err_msg=name)
        assert np.abs(got).sum() > 0, name
    logits = np.load(tmp_path / "out" / "logits.npy")
    assert logits.min() >= np.float32(0.1) and logits.max() <= np.float32(2.0)


ARM_GCC = "apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi"
ARM_QEMU = "apt-get install qemu-system-arm"
BOARD_TOOLS = {
    "mps2_an385": [("arm-none-eabi-gcc", ARM_GCC), ("qemu-system-arm", ARM_QEMU)],
    "mps3_an547": [("arm-none-eabi-gcc", ARM_GCC), ("qemu-system-arm", ARM_QEMU)],
    "linux_aarch64": [("aarch64-linux-gnu-gcc", "apt-get install gcc-aarch64-linux-gnu"),
                      ("qemu-aarch64", "apt-get install qemu-user")],
}


@pytest.mark.slow
@pytest.mark.parametrize("board", list(BOARD_TOOLS))
def test_nn_model_on_cross_targets(board: str, cli: Callable[..., Result], tmp_path: Path
                                   ) -> None:
    """The same model as firmware on a Cortex-M3 (soft float) and a Cortex-M55 under QEMU,
    and as an AArch64 Linux program, against the reference."""
    for tool, hint in BOARD_TOOLS[board]:
        need_tool(tool, hint)
    path = tmp_path / "nn.yaml"
    path.write_text(NN_MODEL)
    r = cli("run", str(path), "--board", board, "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS")


def _evaluate(text: str) -> dict[str, np.ndarray]:
    """The reference's values for a model given as YAML text, on seeded inputs."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.yaml"
        path.write_text(text)
        m = load_model(path)
        return reference.evaluate(m, reference.random_inputs(m))


LAYOUT_MODEL = """\
name: lay
inputs:
  x: {{shape: {xshape}, dtype: float32}}
outputs:
  y: {{shape: {yshape}, dtype: float32}}
constants:
  w: {{shape: {wshape}, dtype: float32, random: {{seed: 1, low: -1, high: 1}}}}
operators:
  - {{name: c, op: conv2d, inputs: [x, w], outputs: [t],
     attrs: {{layout: {layout}, strides: [2, 1], pads: [1, 0, 1, 2], dilations: [1, 2],
             group: 2}}}}
  - {{name: p, op: {pool}, inputs: [t], outputs: [y],
     attrs: {{layout: {layout}, kernel_shape: [2, 3], pads: [1, 1, 0, 1], dilations: [2, 1]}}}}
"""


@pytest.mark.parametrize("pool", ["maxpool2d", "avgpool2d"])
def test_reference_nhwc_is_nchw_transposed(pool: str) -> None:
    """The reference computes NHWC natively; transposed, it must agree with NCHW."""
    nchw = _evaluate(LAYOUT_MODEL.format(xshape=[1, 4, 7, 8], yshape=[1, 6, 3, 8],
                                         wshape=[6, 2, 3, 2], layout="NCHW", pool=pool))
    x = nchw["x"]
    w = nchw["w"]
    text = LAYOUT_MODEL.format(xshape=[1, 7, 8, 4], yshape=[1, 3, 8, 6],
                               wshape=[6, 3, 2, 2], layout="NHWC", pool=pool)
    m_path_vals = _evaluate_with(text, {"x": x.transpose(0, 2, 3, 1)},
                                 {"w": w.transpose(0, 2, 3, 1)})
    np.testing.assert_allclose(m_path_vals["y"], nchw["y"].transpose(0, 2, 3, 1), rtol=1e-6,
                               atol=1e-6)


def _evaluate_with(text: str, inputs: dict[str, np.ndarray], constants: dict[str, np.ndarray]
                   ) -> dict[str, np.ndarray]:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.yaml"
        path.write_text(text)
        m = load_model(path)
        m.constants.update({k: np.ascontiguousarray(v) for k, v in constants.items()})
        return reference.evaluate(m, inputs)


CONCAT_MODEL = """\
name: cat
devices:
  npu0: {kind: woofles}
inputs:
  a: {shape: [2, 3, 4], dtype: float32}
  b: {shape: [2, 1, 4], dtype: float32}
outputs:
  y: {shape: [2, 6, 4], dtype: float32}
  z: {shape: [2, 6, 12], dtype: float32}
constants:
  c: {shape: [2, 2, 4], dtype: float32, random: {seed: 1, low: -1, high: 1}}
operators:
  - {name: neg, op: mul, inputs: [b, b], outputs: [bb]}
  - {name: cat1, op: concat, inputs: [a, bb, c], outputs: [y], attrs: {axis: 1}}
  - {name: cat2, op: concat, inputs: [y, y, y], outputs: [z], attrs: {axis: -1},
     device: npu0}
"""


@pytest.mark.slow
def test_concat_of_inputs_constants_and_intermediates(cli: Callable[..., Result],
                                                      tmp_path: Path) -> None:
    """concat takes any number of inputs (a model input, a constant, an intermediate, one
    tensor three times), here on the host and on a device."""
    need_tool("gcc")
    path = tmp_path / "cat.yaml"
    path.write_text(CONCAT_MODEL)
    r = cli("run", str(path), "--build-dir", str(tmp_path / "b"), "--save-outputs",
            str(tmp_path / "out"))
    assert r.code == 0, r.out + r.err
    m = load_model(path)
    x = reference.random_inputs(m)
    c = m.constants["c"].astype(np.float64)
    y = np.concatenate([x["a"], x["b"].astype(np.float64) ** 2, c], axis=1)
    np.testing.assert_allclose(np.load(tmp_path / "out" / "y.npy"), y, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(np.load(tmp_path / "out" / "z.npy"),
                               np.concatenate([y, y, y], axis=-1), rtol=RTOL, atol=ATOL)
