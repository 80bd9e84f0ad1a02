"""The portable kernels of the TFLite-style operators against numpy: NHWC conv2d and
pooling, depthwise_conv2d, fully_connected, fused activations, clip / relu6, pad, mean
and global_average_pool.

The params structs are packed from what tvmdev's own params functions compute for the
call (so the generator's params are checked too); the expected values come from the
NCHW loop references of test_portable_kernels, with the operands transposed, or from
numpy directly, in float64.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pytest
from test_portable_kernels import (
    ERR_INVALID,
    Build,
    Case,
    body,
    check,
    compile_kernels,
    conv_ref,
    nan_out,
    pool_ref,
    rand,
    run_cases,
)

from tvmdev.model.ops import OPS, resolved_attrs

pytestmark = pytest.mark.slow  # compiles and runs C drivers


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """Every kernel compiled once with the strict flags."""
    return compile_kernels(tmp_path_factory.mktemp("portable_kernels_nn"))

ACTS: dict[str, Any] = {
    "NONE": lambda v: v,
    "RELU": lambda v: np.maximum(v, 0.0),
    "RELU6": lambda v: np.clip(v, 0.0, 6.0),
    "RELU_N1_TO_1": lambda v: np.clip(v, -1.0, 1.0),
    "TANH": np.tanh,
}


def pack(params: dict[str, Any]) -> bytes:
    """A params dict as its struct's bytes: every field is a 4-byte int or float."""
    out = b""
    for v in params.values():
        for x in (v if isinstance(v, list) else [v]):
            out += struct.pack("<f" if isinstance(x, float) else "<i", x)
    return out


def op_params(op: str, shapes: list[tuple[int, ...] | None], attrs: dict[str, Any]
              ) -> tuple[bytes, tuple[int, ...]]:
    """The packed params and the output shape tvmdev computes for a call of ``op``."""
    a = resolved_attrs(OPS[op], shapes, attrs)
    out = OPS[op].infer(shapes, a)
    return pack(OPS[op].params(shapes, out, a)), out


def to_nchw(v: np.ndarray) -> np.ndarray:
    return v.transpose(0, 3, 1, 2)


def to_nhwc(v: np.ndarray) -> np.ndarray:
    return v.transpose(0, 2, 3, 1)


CONV_CONFIGS = [  # (N, H, W, C), (M, KH, KW), strides, pads (t, l, b, r), dilations, group
    ((2, 9, 11, 4), (6, 3, 2), [2, 2], [1, 2, 1, 0], [2, 2], 2),
    ((1, 8, 8, 3), (4, 3, 3), [1, 1], [0, 0, 0, 0], [1, 1], 1),
    ((1, 7, 6, 4), (4, 3, 3), [1, 2], [1, 1, 1, 1], [1, 1], 4),
    ((1, 5, 5, 2), (3, 1, 1), [1, 1], [0, 0, 0, 0], [1, 1], 1),
    ((1, 4, 4, 1), (1, 4, 4), [3, 3], [2, 2, 2, 2], [1, 1], 1),
]


def test_conv2d_nhwc_and_activations(build: Build) -> None:
    """NHWC input and OHWI weights, each with another fused activation; NCHW with an
    activation too."""
    code = body("tvmk_conv2d_params",
            "status = tvmk_conv2d_f32(arr[0], arr[1], mode == 1 ? arr[2] : NULL, y, &p, NULL);")
    cases = []
    for i, ((n, h, wd, c), (m, kh, kw), st, pads, dil, group) in enumerate(CONV_CONFIGS):
        act = list(ACTS)[i % len(ACTS)]
        x = rand(n, h, wd, c, scale=2.0)
        w = rand(m, kh, kw, c // group)
        b = rand(m)
        for layout in ("NHWC", "NCHW"):
            xl = x if layout == "NHWC" else to_nchw(x).copy()
            wl = w if layout == "NHWC" else to_nchw(w).copy()
            attrs = {"strides": st, "pads": pads, "dilations": dil, "group": group,
                     "layout": layout, "activation": act}
            params, out = op_params("conv2d", [xl.shape, wl.shape, b.shape], attrs)
            for bias in (1, 0):
                ref = ACTS[act](conv_ref(to_nchw(x), to_nchw(w), b if bias else None,
                                         tuple(st), tuple(pads), tuple(dil), group))
                expect = to_nhwc(ref) if layout == "NHWC" else ref
                assert expect.shape == out
                cases.append(Case(params, [xl, wl, b], nan_out(expect.size), bias, expect,
                                  f"conv {layout} {x.shape} {w.shape} g={group} {act} "
                                  f"bias={bias}"))
    check(build, "conv2d_nhwc", code, cases)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool2d_nhwc(build: Build, kind: str) -> None:
    code = body("tvmk_pool2d_params",
            f"status = tvmk_{kind}pool2d_f32(arr[0], y, &p, NULL);")
    configs = [((2, 9, 10, 3), [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 0),
               ((1, 11, 12, 2), [3, 2], [2, 2], [2, 1, 0, 1], [2, 3], 0),
               ((1, 7, 7, 5), [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 1)]
    cases = []
    for shape, k, st, pads, dil, ceil in configs:
        x = rand(*shape)
        for cip in ((0,) if kind == "max" else (1, 0)):
            attrs: dict[str, Any] = {"kernel_shape": k, "strides": st, "pads": pads,
                                     "dilations": dil, "ceil_mode": ceil, "layout": "NHWC"}
            if kind == "avg":
                attrs["count_include_pad"] = cip
            params, out = op_params(f"{kind}pool2d", [x.shape], attrs)
            expect = to_nhwc(pool_ref(to_nchw(x), kind, tuple(k), tuple(st), tuple(pads),
                                      tuple(dil), out[1], out[2], cip))
            cases.append(Case(params, [x], nan_out(expect.size), 0, expect,
                              f"{kind}pool NHWC {shape} k={k} d={dil} cip={cip}"))
    check(build, f"{kind}pool2d_nhwc", code, cases)


def test_depthwise_conv2d(build: Build) -> None:
    """TFLite semantics: output channel c * mult + j reads input channel c; checked as an
    NCHW grouped convolution with group = C."""
    code = body("tvmk_depthwise_conv2d_params",
            "status = tvmk_depthwise_conv2d_f32(arr[0], arr[1], mode == 1 ? arr[2] : NULL, y,"
            " &p, NULL);")
    configs = [((1, 7, 6, 4), 1, (3, 3), [1, 1], [1, 1, 1, 1], [1, 1], "RELU6"),
               ((2, 9, 8, 3), 2, (3, 2), [2, 1], [0, 1, 1, 0], [2, 1], "NONE"),
               ((1, 5, 5, 2), 3, (1, 1), [1, 1], [0, 0, 0, 0], [1, 1], "TANH")]
    cases = []
    for (n, h, wd, c), mult, (kh, kw), st, pads, dil, act in configs:
        x = rand(n, h, wd, c, scale=2.0)
        w = rand(1, kh, kw, c * mult)
        b = rand(c * mult)
        attrs = {"strides": st, "pads": pads, "dilations": dil, "depth_multiplier": mult,
                 "activation": act}
        params, out = op_params("depthwise_conv2d", [x.shape, w.shape, b.shape], attrs)
        params += struct.pack("@iP", 0, 0)  # no scratch: the output is apart
        w_oihw = w[0].transpose(2, 0, 1)[:, None]  # C * mult, 1, KH, KW
        for bias in (1, 0):
            expect = to_nhwc(ACTS[act](conv_ref(to_nchw(x), w_oihw, b if bias else None,
                                                tuple(st), tuple(pads), tuple(dil), c)))
            assert expect.shape == out
            cases.append(Case(params, [x, w, b], nan_out(expect.size), bias, expect,
                              f"depthwise {x.shape} mult={mult} {act} bias={bias}"))
    check(build, "depthwise_conv2d", code, cases)


def test_fully_connected(build: Build) -> None:
    code = body("tvmk_fully_connected_params",
            "status = tvmk_fully_connected_f32(arr[0], arr[1], mode == 1 ? arr[2] : NULL, y,"
            " &p, NULL);")
    cases = []
    for i, (xshape, out_size, keep) in enumerate([((1, 16), 10, 0), ((3, 2, 5), 7, 1),
                                                  ((2, 3, 4), 6, 0), ((1, 1), 1, 0)]):
        act = list(ACTS)[i % len(ACTS)]
        in_size = xshape[-1] if keep else int(np.prod(xshape[1:]))
        x, w, b = rand(*xshape, scale=2.0), rand(out_size, in_size), rand(out_size)
        attrs = {"keep_num_dims": keep, "activation": act}
        params, out = op_params("fully_connected", [x.shape, w.shape, b.shape], attrs)
        for bias in (1, 0):
            y = x.reshape(-1, in_size).astype(np.float64) @ w.T.astype(np.float64)
            expect = ACTS[act](y + (b if bias else 0.0))
            assert expect.size == int(np.prod(out))
            cases.append(Case(params, [x, w, b], nan_out(expect.size), bias, expect,
                              f"fully_connected {xshape} -> {out} {act} bias={bias}"))
    check(build, "fully_connected", code, cases)


@pytest.mark.parametrize("op", ["add", "mul"])
def test_binary_activations(build: Build, op: str) -> None:
    code = body("tvmk_binary_params",
            f"status = tvmk_{op}_f32(arr[0], arr[1], y, &p, NULL);")
    fn = np.add if op == "add" else np.multiply
    cases = []
    for act in ACTS:
        for sa, sb in [((3, 4, 5), (3, 4, 5)), ((4, 5), (5,)), ((2, 1, 3), (4, 1))]:
            a, b = rand(*sa, scale=4.0), rand(*sb, scale=4.0)
            params, _ = op_params(op, [a.shape, b.shape], {"activation": act})
            expect = ACTS[act](fn(a.astype(np.float64), b.astype(np.float64)))
            cases.append(Case(params, [a, b], nan_out(expect.size), 0, expect,
                              f"{op} {sa} {sb} {act}"))
    check(build, f"{op}_act", code, cases)


def test_clip_and_relu6(build: Build) -> None:
    code = body("tvmk_clip_params",
            "status = tvmk_clip_f32(mode == 1 ? y : arr[0], y, &p, NULL);")
    x = rand(3, 7, scale=10.0)
    cases = []
    for op, attrs, lo, hi in [("clip", {"min": -0.5, "max": 2.0}, -0.5, 2.0),
                              ("clip", {"min": 1.0}, 1.0, np.inf), ("clip", {}, -np.inf, np.inf),
                              ("relu6", {}, 0.0, 6.0)]:
        params, _ = op_params(op, [x.shape], attrs)
        expect = np.clip(x.astype(np.float64), lo, hi)
        cases.append(Case(params, [x], nan_out(x.size), 0, expect, f"{op} {attrs}"))
        cases.append(Case(params, [x], x.copy(), 1, expect, f"{op} {attrs} in place"))
    check(build, "clip", code, cases)


def test_pad(build: Build) -> None:
    code = body("tvmk_pad_params",
            "status = tvmk_pad_f32(arr[0], y, &p, NULL);")
    cases = []
    for shape, pads, value in [((1, 4, 5, 3), [0, 1, 2, 0, 0, 2, 1, 0], 0.0),
                               ((2, 3), [1, 0, 2, 3], -1.5), ((5,), [3, 0], 2.0),
                               ((2, 1, 3, 1, 2, 2), [1, 0, 0, 1, 0, 1, 0, 2, 1, 0, 1, 0], 0.5),
                               ((3, 4), [0, 0, 0, 0], 9.0)]:
        x = rand(*shape)
        params, out = op_params("pad", [x.shape], {"pads": pads, "value": value})
        n = len(shape)
        expect = np.pad(x, list(zip(pads[:n], pads[n:], strict=True)), constant_values=value)
        assert expect.shape == out
        cases.append(Case(params, [x], nan_out(expect.size), 0, expect, f"pad {shape} {pads}"))
    check(build, "pad", code, cases)


def test_mean_and_global_average_pool(build: Build) -> None:
    code = body("tvmk_mean_params",
            "status = tvmk_mean_f32(arr[0], y, &p, NULL);")
    cases = []
    for shape, axes, keep in [((2, 5, 6, 3), [1, 2], 1), ((2, 5, 6, 3), [1, 2], 0),
                              ((4, 3, 5), [0, 2], 0), ((4, 3, 5), [-1], 1), ((7, 3), None, 0),
                              ((2, 3, 4, 5, 2, 3), [5, 1, 3], 1)]:
        x = rand(*shape)
        attrs: dict[str, Any] = {"keepdims": keep} if axes is None else {"axes": axes,
                                                                       "keepdims": keep}
        params, out = op_params("mean", [x.shape], attrs)
        expect = np.mean(x.astype(np.float64), axis=None if axes is None else tuple(axes),
                         keepdims=bool(keep))
        assert expect.shape == out
        cases.append(Case(params, [x], nan_out(max(expect.size, 1)), 0, expect,
                          f"mean {shape} {axes} keepdims={keep}"))
    for shape in [(2, 3, 5, 4), (1, 4, 7), (1, 2, 3, 2, 2)]:
        x = rand(*shape)
        params, out = op_params("global_average_pool", [x.shape], {})
        expect = x.astype(np.float64).mean(axis=tuple(range(2, len(shape))), keepdims=True)
        assert expect.shape == out
        cases.append(Case(params, [x], nan_out(expect.size), 0, expect, f"gap {shape}"))
    check(build, "mean", code, cases)


def test_concat(build: Build) -> None:
    code = body("tvmk_concat_params", """
const float *ins[MAX_ARRAYS];
int32_t i;
for (i = 0; i < narr; ++i) { ins[i] = arr[i]; }
status = tvmk_concat_f32(ins, y, &p, NULL);""")
    cases = []
    for shapes, axis in [([(2, 3, 4), (2, 1, 4), (2, 2, 4)], 1), ([(3, 2), (3, 5)], -1),
                         ([(1, 4), (2, 4), (3, 4), (1, 4)], 0), ([(5,)], 0),
                         ([(2, 2, 1, 3)] * 8, 2)]:
        xs = [rand(*shape) for shape in shapes]
        params, out = op_params("concat", [x.shape for x in xs], {"axis": axis})
        expect = np.concatenate(xs, axis=axis)
        assert expect.shape == out
        cases.append(Case(params, xs, nan_out(expect.size), 0, expect,
                          f"concat {shapes} axis={axis}"))
    check(build, "concat", code, cases)


def test_bad_params_are_invalid(build: Build) -> None:
    """An unknown activation or layout, or clip's min above max, is TVM_DEVICE_ERR_INVALID."""
    code = (
        "static const float x[64] = {0};\n"
        "struct tvmk_conv2d_params cp = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 9};\n"
        "struct tvmk_conv2d_params cl = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 2, 0};\n"
        "struct tvmk_pool2d_params pp = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 5};\n"
        "struct tvmk_fully_connected_params fp = {1, 1, 1, -1, 0};\n"
        "struct tvmk_clip_params clp = {1, 2.0f, 1.0f};\n"
        "struct tvmk_depthwise_conv2d_params dp = {1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 0, 1, 1,"
        " 0, 0, NULL};\n"
        "status = 0;\n"
        "y[0] = (float)tvmk_conv2d_f32(x, x, NULL, y + 8, &cp, NULL);\n"
        "y[1] = (float)tvmk_conv2d_f32(x, x, NULL, y + 8, &cl, NULL);\n"
        "y[2] = (float)tvmk_maxpool2d_f32(x, y + 8, &pp, NULL);\n"
        "y[3] = (float)tvmk_fully_connected_f32(x, x, NULL, y + 8, &fp, NULL);\n"
        "y[4] = (float)tvmk_clip_f32(x, y + 8, &clp, NULL);\n"
        "y[5] = (float)tvmk_depthwise_conv2d_f32(x, x, NULL, y + 8, &dp, NULL);\n"
        "y[6] = (float)tvmk_pad_f32(x, NULL, NULL, NULL);\n"
        "y[7] = (float)tvmk_mean_f32(NULL, y, NULL, NULL);\n"
        "{ const float *two[2] = {x, NULL};\n"
        "  struct tvmk_concat_params kp = {2, 1, {1, 1}};\n"
        "  y[8] = (float)tvmk_concat_f32(two, y + 12, &kp, NULL);\n"
        "  kp.ninputs = 17;\n"
        "  y[9] = (float)tvmk_concat_f32(two, y + 12, &kp, NULL); }\n")
    ((status, got),) = run_cases(build, "bad_nn", code, [Case(b"", [], nan_out(16))])
    assert status == 0
    assert got[:10].tolist() == [float(ERR_INVALID)] * 10
