"""Depthwise convolution in place through a ring of input rows (issue 24, item 2).

The portable float kernel, called with its output at its input's address and the ring
tvmdev sizes (tvmdev.model.scratch.ring_rows), against numpy in float64 (the NCHW loop
reference of test_portable_kernels): strides 1, 2 and 3, dilation, a channel multiplier,
two images, asymmetric padding. The scratch is the planner's, with a guard after it the
kernel must not touch; one row less and the kernel refuses the call.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import Result, need_tool
from test_portable_kernels import (
    ERR_INVALID,
    OK,
    SCRATCH_CALL,
    Build,
    Case,
    body,
    compile_kernels,
    conv_ref,
    rand,
    run_cases,
)
from test_portable_kernels_nn import op_params, to_nchw, to_nhwc

from tvmdev.model.ops import OPS, resolved_attrs
from tvmdev.model.scratch import Tuning, depthwise_rows_f32, ring_rows

# (N, H, W, C), mult, (KH, KW), strides, pads (t, l, b, r), dilations
CONFIGS = [
    ((1, 7, 6, 4), 1, (3, 3), [1, 1], [1, 1, 1, 1], [1, 1]),  # SAME, stride 1
    ((1, 9, 9, 3), 1, (5, 5), [1, 1], [2, 2, 2, 2], [1, 1]),
    ((1, 8, 8, 4), 1, (3, 3), [2, 2], [0, 0, 1, 1], [1, 1]),  # TF SAME, stride 2
    ((1, 9, 7, 2), 1, (3, 3), [2, 2], [1, 1, 1, 1], [1, 1]),
    ((2, 6, 5, 3), 1, (3, 3), [1, 1], [1, 1, 1, 1], [1, 1]),  # two images
    ((2, 8, 6, 2), 1, (3, 3), [2, 2], [1, 0, 0, 1], [1, 1]),
    ((1, 10, 9, 2), 1, (3, 3), [1, 1], [2, 2, 2, 2], [2, 2]),  # dilation reads back
    ((1, 11, 8, 3), 1, (3, 3), [1, 1], [4, 1, 0, 1], [3, 1]),
    ((1, 8, 8, 2), 2, (3, 3), [2, 2], [1, 1, 1, 1], [1, 1]),  # mult 2: as many bytes
    ((1, 9, 9, 3), 1, (3, 3), [3, 3], [0, 0, 0, 0], [1, 1]),  # VALID, stride 3
    ((1, 5, 4, 3), 1, (3, 2), [1, 2], [0, 1, 0, 0], [1, 1]),  # taller than wide
]

IN_PLACE = body("tvmk_depthwise_conv2d_params", SCRATCH_CALL.replace(
    "CALL", "status = tvmk_depthwise_conv2d_f32(y, arr[1], arr[2], y, &p, NULL);"))


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    return compile_kernels(tmp_path_factory.mktemp("inplace_depthwise"))


def _params(shapes: list[tuple[int, ...]], attrs: dict[str, object]) -> dict[str, int]:
    a = resolved_attrs(OPS["depthwise_conv2d"], shapes, attrs)
    return dict(OPS["depthwise_conv2d"].params(shapes, OPS["depthwise_conv2d"].infer(
        shapes, a), a))


@pytest.mark.slow
def test_in_place_equals_numpy(build: Build) -> None:
    """Every geometry in place, with the ring the planner sizes: numpy's result in the
    output's bytes (the input's first), the scratch's guard untouched. With one row of the
    ring less, the kernel refuses the call (and writes nothing past its scratch)."""
    cases, expects = [], []
    for (n, h, wd, c), mult, (kh, kw), st, pads, dil in CONFIGS:
        x, w, b = rand(n, h, wd, c, scale=2.0), rand(1, kh, kw, c * mult), rand(c * mult)
        attrs = {"strides": st, "pads": pads, "dilations": dil, "depth_multiplier": mult}
        shapes = [x.shape, w.shape, b.shape]
        packed, out = op_params("depthwise_conv2d", shapes, attrs)
        ring = depthwise_rows_f32(_params(shapes, attrs), Tuning())
        expect = to_nhwc(conv_ref(to_nchw(x), w[0].transpose(2, 0, 1)[:, None], b,
                                  tuple(st), tuple(pads), tuple(dil), c))
        assert expect.shape == out and expect.size <= x.size
        label = f"{x.shape} k={kh}x{kw} mult={mult} stride={st} pads={pads} dil={dil}"
        for nbytes, tag in ((ring, ""), (ring - 4 * wd * c, " short")):
            if nbytes < 0:
                continue
            cases.append(Case(packed + struct.pack("@iP", nbytes, 0), [x, w, b],
                              x.astype(np.float32).ravel().copy(), 1, None, label + tag))
            expects.append(expect if not tag else None)
    results = run_cases(build, "depthwise_in_place", IN_PLACE, cases)
    assert sum(e is None for e in expects) >= 8  # the short rings
    for case, want, (status, got) in zip(cases, expects, results, strict=True):
        if want is None:
            assert status == ERR_INVALID, case.label
            continue
        assert status == OK, case.label
        np.testing.assert_allclose(got[:want.size], want.ravel(), rtol=1e-5, atol=1e-5,
                                   err_msg=case.label)


def test_ring_rows() -> None:
    """The rows the ring holds, counted by hand: a 3x3 SAME filter at stride 1 reads one
    row back and covers the row it is on (2); 5x5 SAME, two back (3); VALID, or at stride
    2 or 3, output row 0 covers input row 0 and reads it, and later rows have moved past
    what they cover (1); a dilated 3x3 whose rows start in the padding: output row 2
    reads row 0 again after row 1 covered rows 0 and 1, so rows 0 to 2 are kept (3)."""
    base = {"N": 1, "mult": 1, "dil_h": 1}

    def rows(h: int, w: int, c: int, oh: int, ow: int, k: int, s: int, pad: int,
             **more: int) -> int:
        return ring_rows({**base, "H": h, "W": w, "C": c, "OH": oh, "OW": ow, "KH": k,
                          "stride_h": s, "pad_top": pad, **more})

    assert rows(8, 8, 4, 8, 8, 3, 1, 1) == 2
    assert rows(8, 8, 4, 8, 8, 5, 1, 2) == 3
    assert rows(8, 8, 4, 6, 6, 3, 1, 0) == 1  # VALID: output row o over input row o
    assert rows(8, 8, 4, 4, 4, 3, 2, 0) == 1
    assert rows(9, 9, 3, 3, 3, 3, 3, 0) == 1
    # dilation 2, pad 2: output row 0 reads 0, 2; row 1 reads 1, 3; row 2 reads 0, 2, 4.
    assert rows(10, 9, 2, 10, 9, 3, 1, 2, dil_h=2) == 3
    assert rows(4, 4, 2, 4, 4, 3, 1, 1, N=2) == 2
    # mult 2 at stride 2: half the rows of twice the width; output row 0 covers input
    # row 0 and reads rows 0 and 1 (pad 1): one row kept
    assert rows(8, 8, 2, 4, 4, 3, 2, 1, mult=2) == 1


# --- int8, bit-exact with TFLM, in place and not ------------------------------------------

def _chain() -> tuple[bytes, list[np.ndarray]]:
    """A small int8 model: depthwise 3x3 SAME, depthwise 5x5 at stride 2 (VALID), a 1x1
    convolution, depthwise 3x3 at stride 2 (SAME), depthwise 7x7 SAME; each depthwise
    input dies at it, so each may go in place."""
    from cm_cases import ACTIVATIONS, CONV_2D, DEPTHWISE_CONV_2D, INT8, INT32
    from tflite_build import Graph, Op, T, build
    r = np.random.default_rng(24)
    layers = [("dw", 3, 1, True, 0), ("dw", 5, 2, False, 0), ("conv", 1, 1, True, 6),
              ("dw", 3, 2, True, 0), ("dw", 7, 1, True, 0)]
    h, w, c, scale = 17, 15, 4, 0.03
    tensors = [T("x", [1, h, w, c], type=INT8, quant=([scale], [5]))]
    ops = []
    for i, (kind, k, s, same, m) in enumerate(layers):
        ch = m or c
        s_w = [float(np.float32(v)) for v in r.uniform(0.3, 2.0, ch) / 127 / 4]
        shape = [ch, k, k, c] if kind == "conv" else [1, k, k, ch]
        oh = -(-h // s) if same else (h - k) // s + 1
        ow = -(-w // s) if same else (w - k) // s + 1
        out_scale = float(np.float32(scale * r.uniform(0.8, 1.6)))
        base = len(tensors)
        tensors += [T(f"w{i}", shape, r.integers(-127, 128, shape).astype(np.int8), type=INT8,
                      quant=(s_w, [0] * ch), quant_axis=0 if kind == "conv" else 3),
                    T(f"b{i}", [ch], r.integers(-3000, 3000, ch).astype(np.int32), type=INT32,
                      quant=([scale * v for v in s_w], [0] * ch)),
                    T(f"y{i}", [1, oh, ow, ch], type=INT8, quant=([out_scale], [-3 + i]))]
        common = {"Padding": 0 if same else 1, "StrideW": s, "StrideH": s,
                  "FusedActivationFunction": ACTIVATIONS["RELU6" if i % 2 else "NONE"]}
        opts = (("Conv2DOptions", common) if kind == "conv" else
                ("DepthwiseConv2DOptions", {**common, "DepthMultiplier": 1}))
        ops.append(Op(CONV_2D if kind == "conv" else DEPTHWISE_CONV_2D,
                      [base - 1 if i else 0, base, base + 1], [base + 2], opts))
        h, w, c, scale = oh, ow, ch, out_scale
    x = r.integers(-128, 128, (1, 17, 15, 4)).astype(np.int8)
    return build(Graph(tensors, ops, [0], [len(tensors) - 1])), [x]


def _plan(tmp: Path) -> dict[str, object]:
    return json.loads(next((tmp / "build/model").glob("*_plan.json")).read_text())


def _in_place(plan: dict[str, object]) -> list[str]:
    ops = plan["operators"]
    assert isinstance(ops, list)
    out = [o for o in ops if o["op"] == "depthwise_conv2d" and o.get("alias")]
    assert all(o["alias"]["kind"] == "in place, keeping what it reads" for o in out)
    return [o["name"] for o in out]


@pytest.mark.slow
@pytest.mark.parametrize("board", ["host", "mps2_an386"])
@pytest.mark.parametrize("what", ["single", "chain"])
def test_bit_exact_with_tflm_in_place_and_not(board: str, what: str, cli: Callable[..., Result],
                                              tmp_path: Path) -> None:
    """tvmdev_cm's edge cases of depthwise convolution one operator each (the input in the
    workspace: --io workspace), and a small model of four depthwise convolutions and a
    1x1 convolution: every output equal to TFLM's interpreter's, in place and with
    --no-inplace. On the host the portable kernel keeps its ring; on the Cortex-M4
    tvmdev_cm's plane holds a channel (the cases it declines go to CMSIS-NN, which does
    not go in place, or without its tree to the portable kernel)."""
    import cm_cases
    from test_tflite_int8_ops import run_against_tflm
    need_tool("gcc" if board == "host" else "qemu-system-arm")
    model, arrays = cm_cases.merged() if what == "single" else _chain()
    cases = len(cm_cases.CASES) if what == "single" else 1
    tree = os.environ.get("CMSIS_NN_SOURCE_DIR") or "off"
    extra = ("--io", "workspace") if board == "host" else ("--board", board, "--cmsis-nn", tree)
    aliased = {}
    for label, more in (("on", ()), ("off", ("--no-inplace",))):
        (tmp_path / label).mkdir()
        outputs, _ = run_against_tflm(cli, model, arrays, tmp_path / label, *extra, *more)
        assert outputs == cases
        aliased[label] = _in_place(_plan(tmp_path / label))
        libraries = {o["name"]: o["library"] for o in _plan(tmp_path / label)["operators"]}
    assert aliased["off"] == []
    if what == "chain":
        assert len(aliased["on"]) == 4
    else:
        # all but the multiplier of 2 (twice the bytes), and what CMSIS-NN takes
        want = {f"y{i}" for i, d in enumerate(cm_cases.CASES) if d.mult == 1}
        assert set(aliased["on"]) == {n for n in want if libraries.get(n) != "cmsis_nn"}


def test_a_chain_goes_in_place_only_if_its_kernels_agree(tmp_path: Path) -> None:
    """A user's depthwise kernel tried before the portable one: one that keeps its rows
    as the portable one does goes in place, with the ring (the most of the two: its own
    rule); one that says only ``inplace`` (it reads in order, so no ring) does not, since
    the portable kernel may take over at run time and would need a ring the plan lacks;
    one that says nothing does not either."""
    from tvmdev.load.model import load_model
    from tvmdev.plan.inplace import inplace_inputs, keeping
    from tvmdev.plan.kernels import build_registry, operator_scratch, resolve
    from tvmdev.plan.memory import plan_memory

    (tmp_path / "m.yaml").write_text(
        "name: m\ninputs:\n  x: {shape: [1, 6, 5, 3], dtype: float32}\noutputs:\n"
        "  y: {shape: [1, 6, 5, 3], dtype: float32}\nconstants:\n"
        "  w: {shape: [1, 3, 3, 3], dtype: float32, random: {seed: 1, low: -1, high: 1}}\n"
        "operators:\n"
        "  - {name: a, op: relu, inputs: [x], outputs: [h]}\n"
        "  - {name: d, op: depthwise_conv2d, inputs: [h, w], outputs: [r], "
        "attrs: {pads: [1, 1, 1, 1]}}\n"
        "  - {name: b, op: relu, inputs: [r], outputs: [y]}\n")
    m = load_model(tmp_path / "m.yaml")
    got = {}
    for label, extra in (("keeps", ", inplace: [input], inplace_keep: depthwise_rows_f32"),
                         ("in order", ", inplace: [input]"), ("silent", "")):
        lib = tmp_path / f"{label.replace(' ', '_')}.yaml"
        lib.write_text("- op: depthwise_conv2d\n  header: mine.h\n  kernels:\n"
                       f"    - {{arg_meta: null, kernel_name: my_dw{extra}}}\n")
        chains = resolve(m, build_registry([lib], []))
        assert [k.name for k in chains[1]] == ["my_dw", "tvmk_depthwise_conv2d_f32"]
        plan = plan_memory(m, inplace_inputs(m, chains), keeps=keeping(
            m, chains, Tuning(), operator_scratch(m, chains, Tuning())))
        got[label] = (("r", "h") in plan.inplace, plan.scratch.get(1, (0, 0))[1])
    ring = 2 * 5 * 3 * 4  # two rows of 5 x 3 floats
    assert got == {"keeps": (True, ring), "in order": (False, 0), "silent": (False, 0)}
