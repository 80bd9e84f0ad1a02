"""The portable kernels of elementwise math, pow, clip_bounds, the reductions, gather,
layer_norm and inv_std_dev (runtime/kernels/portable) against numpy in float64, through
the C drivers of tests/test_portable_kernels.py: special values, in place, broadcasting,
NaN through max and min, indices out of range, invalid params."""

from __future__ import annotations

import contextlib
import io
import math
import struct

import numpy as np
import pytest
from conftest import need_tool, run_ok
from test_portable_kernels import (
    ERR_INVALID,
    OK,
    PORTABLE,
    STRICT,
    Build,
    Case,
    body,
    check,
    i32,
    nan_out,
    rand,
    run_cases,
)

from tvmdev.cli import main
from tvmdev.model.math_ops import gather_params
from tvmdev.model.regions import mean_params
from tvmdev.model.shapes import binary_params

pytestmark = pytest.mark.slow  # compiles and runs C drivers

SOURCES = ["unary_math.c", "pow.c", "clip_bounds.c", "reduce.c", "gather.c", "layer_norm.c"]


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """These kernels compiled once with the strict flags; status.h from tvmdev itself."""
    root = tmp_path_factory.mktemp("math_kernels")
    gcc = need_tool("gcc", "compiles the portable kernels")
    dev = root / "dev"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["new-device", "woofles", "--platform", "posix", "-o", str(dev)]) == 0
    includes = [f"-I{PORTABLE}", f"-I{dev / 'include'}"]
    (root / "obj").mkdir()
    run_ok([gcc, *STRICT, *includes, "-c", *[str(PORTABLE / s) for s in SOURCES]],
           cwd=root / "obj")
    return Build(root, includes, [str(root / "obj" / s.replace(".c", ".o")) for s in SOURCES])


SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-3, 30.0, -30.0, np.inf, -np.inf,
                    np.nan], np.float32)
_ERF = np.frompyfunc(math.erf, 1, 1)
UNARY = {
    "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "neg": np.negative, "abs": np.abs,
    "erf": lambda x: np.asarray(_ERF(x), np.float64),
}


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_math(build: Build, op: str) -> None:
    """Every element as C99's function gives it (NaN for sqrt and log of a negative,
    infinities where they overflow), in place too."""
    code = body("tvmk_unary_params", f"""
if (mode == 1) {{
    status = tvmk_{op}_f32(y, y, &p, NULL); /* in place */
}} else {{
    status = tvmk_{op}_f32(arr[0], y, &p, NULL);
}}""")
    cases = []
    with np.errstate(all="ignore"):
        for x in (SPECIAL, rand(3, 7, scale=4.0), np.abs(rand(40, scale=9.0))):
            want = UNARY[op](x.astype(np.float64)).astype(np.float32)
            cases.append(Case(i32(x.size), [x], nan_out(x.size), 0, want, f"{op} {x.shape}"))
            cases.append(Case(i32(x.size), [x], x.copy(), 1, want, f"{op} in place"))
    check(build, op, code, cases)


def test_gelu(build: Build) -> None:
    """Both of ONNX's forms: erf (approximate 0) and tanh (1)."""
    code = body("tvmk_gelu_params", "status = tvmk_gelu_f32(arr[0], y, &p, NULL);")
    x = np.concatenate([rand(30, scale=5.0), np.array([0.0, 8.0, -8.0], np.float32)])
    v = x.astype(np.float64)
    exact = 0.5 * v * (1.0 + np.asarray(_ERF(v / math.sqrt(2.0)), np.float64))
    tanh = 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3)))
    check(build, "gelu", code, [Case(i32(x.size, 0), [x], nan_out(x.size), 0, exact, "erf"),
                                Case(i32(x.size, 1), [x], nan_out(x.size), 0, tanh, "tanh")])
    ((status, got),) = run_cases(build, "gelu_bad", code,
                                 [Case(i32(x.size, 2), [x], nan_out(x.size))])
    assert status == ERR_INVALID and np.isnan(got).all()


def _binary(a: tuple[int, ...], b: tuple[int, ...], out: tuple[int, ...],
            activation: int = 0) -> bytes:
    p = binary_params([a, b], out, {})
    return i32(p["ndim"], p["count"], *p["shape"], *p["a_strides"], *p["b_strides"],
               activation)


def test_pow(build: Build) -> None:
    """numpy broadcasting (a row, a scalar, both ways), in place; a fused activation is
    invalid."""
    code = body("tvmk_binary_params", """
if (mode == 1) {
    status = tvmk_pow_f32(y, arr[1], y, &p, NULL);
} else {
    status = tvmk_pow_f32(arr[0], arr[1], y, &p, NULL);
}""")
    base = np.abs(rand(2, 3, scale=3.0)) + 0.1
    row, scalar = rand(3, scale=2.0), np.array([2.0], np.float32)
    col = rand(2, 1, scale=2.0)
    f64 = np.float64
    cases = [Case(_binary((2, 3), (3,), (2, 3)), [base, row], nan_out(6), 0,
                  np.power(base.astype(f64), row.astype(f64)), "row"),
             Case(_binary((2, 3), (), (2, 3)), [base, scalar], base.copy(), 1,
                  np.power(base.astype(f64), 2.0), "scalar, in place"),
             Case(_binary((2, 1), (3,), (2, 3)), [np.abs(col) + 0.5, row], nan_out(6), 0,
                  np.power(np.abs(col).astype(f64) + 0.5, row.astype(f64)), "outer"),
             Case(_binary((3,), (3,), (3,)), [np.array([-2.0, -2.0, 0.0], np.float32),
                                              np.array([3.0, 0.5, -1.0], np.float32)],
                  nan_out(3), 0, np.array([-8.0, np.nan, np.inf]), "special")]
    with np.errstate(all="ignore"):
        check(build, "pow", code, cases)
    ((status, _),) = run_cases(build, "pow_act", code,
                               [Case(_binary((3,), (3,), (3,), 1), [row, row], nan_out(3))])
    assert status == ERR_INVALID


def test_clip_bounds(build: Build) -> None:
    """min and max each given or NULL; min above max gives max; NaN passes through."""
    code = body("tvmk_unary_params", """
status = tvmk_clip_bounds_f32(arr[0], (mode & 1) ? arr[1] : NULL, (mode & 2) ? arr[2] : NULL,
                              y, &p, NULL);""")
    x = np.concatenate([rand(20, scale=3.0), np.array([np.nan, np.inf, -np.inf], np.float32)])
    lo, hi = np.array([-1.0], np.float32), np.array([0.5], np.float32)
    f = x.astype(np.float64)
    cases = [Case(i32(x.size), [x, lo, hi], nan_out(x.size), 3, np.minimum(np.maximum(
                 f, -1.0), 0.5), "both"),
             Case(i32(x.size), [x, lo, hi], nan_out(x.size), 1, np.maximum(f, -1.0), "min"),
             Case(i32(x.size), [x, lo, hi], nan_out(x.size), 2, np.minimum(f, 0.5), "max"),
             Case(i32(x.size), [x, lo, hi], nan_out(x.size), 0, f, "none"),
             Case(i32(x.size), [x, hi, lo], nan_out(x.size), 3,
                  np.where(np.isnan(f), np.nan, -1.0), "min above max")]
    check(build, "clip_bounds", code, cases)


REDUCE = {"reduce_max": np.max, "reduce_min": np.min, "reduce_sum": np.sum,
          "reduce_prod": np.prod}


def _mean_struct(shape: tuple[int, ...], axes: list[int] | None) -> tuple[bytes, int]:
    out = tuple(1 if axes is None or i in axes else d for i, d in enumerate(shape))
    p = mean_params([shape], out, {"axes": axes, "keepdims": 1})
    return i32(p["ndim"], p["count"], *p["shape"], *p["out_strides"], p["out_count"],
               p["reduced"]), p["out_count"]


@pytest.mark.parametrize("op", list(REDUCE))
def test_reductions(build: Build, op: str) -> None:
    """Over every axis set of a 3-D input and all of it; max and min propagate NaN and
    keep infinities; the output starts at the identity (its initial contents ignored)."""
    code = body("tvmk_mean_params", f"status = tvmk_{op}_f32(arr[0], y, &p, NULL);")
    x = rand(2, 3, 4, scale=1.5)
    cases = []
    for axes in ([0], [1], [2], [0, 2], [1, 2], None):
        params, count = _mean_struct(x.shape, axes)
        want = REDUCE[op](x.astype(np.float64), axis=None if axes is None else tuple(axes))
        cases.append(Case(params, [x], np.full(count, 7.0, np.float32), 0, want, str(axes)))
    special = np.array([[1.0, np.nan, 2.0], [-np.inf, -np.inf, -np.inf]], np.float32)
    params, _ = _mean_struct(special.shape, [1])
    with np.errstate(all="ignore"):
        want = REDUCE[op](special.astype(np.float64), axis=1)
    cases.append(Case(params, [special], nan_out(2), 0, want, "NaN and infinities"))
    check(build, op, code, cases)


def _gather_case(data: np.ndarray, indices: np.ndarray, axis: int) -> Case:
    p = gather_params([data.shape, indices.shape], (), {"axis": axis})
    bits = np.ascontiguousarray(indices, np.int32).view(np.float32)  # passed as their bytes
    want = np.take(data.astype(np.float64), np.where(indices < 0, indices + data.shape[axis],
                                                     indices), axis=axis)
    return Case(i32(p["outer"], p["axis_size"], p["inner"], p["count"]), [data, bits],
                nan_out(want.size), 0, want, f"axis {axis} {indices.tolist()}")


GATHER_CODE = body("tvmk_gather_params",
                   "status = tvmk_gather_f32(arr[0], (const int32_t *)(void *)arr[1], y, &p, "
                   "NULL);")


def test_gather(build: Build) -> None:
    """Along each axis, negative indices from the end, repeated, a 2-D set of indices."""
    x = rand(3, 4, 5)
    cases = [_gather_case(x, np.array([2, 0, -1, 2]), 0),
             _gather_case(x, np.array([[3, -4], [1, 1]]), 1),
             _gather_case(x, np.array([-5, 4]), 2), _gather_case(x, np.array(1), 1)]
    check(build, "gather", GATHER_CODE, cases)


def test_gather_out_of_range_writes_nothing(build: Build) -> None:
    x = rand(3, 4)
    bad = [_gather_case(x, np.array([0, 0]), 0) for _ in range(2)]
    bad[0].arrays[1] = np.array([0, 3], np.int32).view(np.float32)
    bad[1].arrays[1] = np.array([-4, 1], np.int32).view(np.float32)
    for status, got in run_cases(build, "gather_bad", GATHER_CODE, bad):
        assert status == ERR_INVALID and np.isnan(got).all()


def _layer_norm_want(x: np.ndarray, scale: np.ndarray, bias: np.ndarray | None,
                     eps: float) -> np.ndarray:
    v = x.astype(np.float64)
    mean = v.mean(axis=-1, keepdims=True)
    var = ((v - mean) ** 2).mean(axis=-1, keepdims=True)
    y = (v - mean) / np.sqrt(var + eps) * scale
    return y if bias is None else y + bias


def test_layer_norm(build: Build) -> None:
    """Per element or one-value scale and bias, no bias, in place; inv_std_dev."""
    code = body("tvmk_layer_norm_params", """
if (mode == 2) {
    status = tvmk_layer_norm_f32(y, arr[1], arr[2], y, &p, NULL);
} else {
    status = tvmk_layer_norm_f32(arr[0], arr[1], mode == 1 ? NULL : arr[2], y, &p, NULL);
}""")
    x = rand(3, 8, scale=4.0) + 2.0
    scale, bias = rand(8) + 1.5, rand(8)
    one, eps = np.array([0.5], np.float32), 1e-3

    def params(s: int, b: int) -> bytes:
        return i32(3, 8) + struct.pack("<f", eps) + i32(s, b)
    cases = [Case(params(1, 1), [x, scale, bias], nan_out(24), 0,
                  _layer_norm_want(x, scale, bias, eps), "per element"),
             Case(params(0, 0), [x, one, one], nan_out(24), 0,
                  _layer_norm_want(x, one, one, eps), "one value"),
             Case(params(1, 0), [x, scale, one], nan_out(24), 1,
                  _layer_norm_want(x, scale, None, eps), "no bias"),
             Case(params(1, 1), [x, scale, bias], x.copy(), 2,
                  _layer_norm_want(x, scale, bias, eps), "in place")]
    check(build, "layer_norm", code, cases)
    inv = body("tvmk_inv_std_dev_params", "status = tvmk_inv_std_dev_f32(arr[0], y, &p, NULL);")
    var = ((x - x.astype(np.float64).mean(axis=-1, keepdims=True)) ** 2).mean(axis=-1)
    check(build, "inv_std_dev", inv, [Case(i32(3, 8) + struct.pack("<f", eps), [x],
                                           nan_out(3), 0, 1.0 / np.sqrt(var + eps), "rows")])


def test_null_and_bad_params_are_invalid(build: Build) -> None:
    calls = [
        "tvmk_sqrt_f32(NULL, y0, &up, NULL)", "tvmk_erf_f32(x, NULL, &up, NULL)",
        "tvmk_exp_f32(x, y0, NULL, NULL)", "tvmk_pow_f32(x, NULL, y0, &bp, NULL)",
        "tvmk_clip_bounds_f32(NULL, x, x, y0, &up, NULL)",
        "tvmk_reduce_max_f32(x, NULL, &mp, NULL)", "tvmk_reduce_sum_f32(x, y0, &mbad, NULL)",
        "tvmk_gather_f32(x, NULL, y0, &gp, NULL)", "tvmk_gather_f32(x, ix, y0, &gbad, NULL)",
        "tvmk_layer_norm_f32(x, NULL, NULL, y0, &lp, NULL)",
        "tvmk_layer_norm_f32(x, x, NULL, y0, &lbad, NULL)",
        "tvmk_inv_std_dev_f32(x, y0, NULL, NULL)",
    ]
    code = (
        "static const float x[4] = {0};\n"
        "static const int32_t ix[1] = {0};\n"
        "float y0[4];\n"
        "struct tvmk_unary_params up = {1};\n"
        "struct tvmk_binary_params bp;\n"
        "struct tvmk_mean_params mp, mbad;\n"
        "struct tvmk_gather_params gp = {1, 1, 1, 1}, gbad = {1, 0, 1, 1};\n"
        "struct tvmk_layer_norm_params lp = {1, 1, 1e-5f, 0, 0}, lbad = {1, 1, 1e-5f, 2, 0};\n"
        "memset(&bp, 0, sizeof bp); memset(&mp, 0, sizeof mp); memset(&mbad, 0, sizeof mbad);\n"
        "mbad.ndim = 7;\n"
        "status = 0;\n"
        + "".join(f"y[{i}] = (float){call};\n" for i, call in enumerate(calls))
    )
    ((status, got),) = run_cases(build, "nulls", code, [Case(b"", [], nan_out(len(calls)))])
    assert status == OK
    assert got.tolist() == [float(ERR_INVALID)] * len(calls)


def test_sources_are_in_the_registry() -> None:
    """Each source here is one that kernels.yaml names."""
    text = (PORTABLE / "kernels.yaml").read_text()
    assert [s for s in SOURCES if f"[{s}]" not in text] == []
