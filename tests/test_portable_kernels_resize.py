"""The portable resize kernel (runtime/kernels/portable/resize.c: ONNX's Resize) against
ONNX Runtime, through the C drivers of tests/test_portable_kernels.py: every mode, the
coordinate transformations (tf_crop_and_resize's extrapolation), exclude_outside and
antialias, the scales given and read from
the operand; and the run-time checks: scales that do not give the output's static shape,
another scale than 1 outside H and W, a non-positive or NaN scale, each an invalid call."""

from __future__ import annotations

import contextlib
import io
import struct
from typing import Any

import numpy as np
import pytest
from conftest import need_module, need_tool, run_ok
from test_portable_kernels import (
    ERR_INVALID,
    PORTABLE,
    STRICT,
    Build,
    Case,
    body,
    check,
    nan_out,
    rand,
    run_cases,
)

from tvmdev.cli import main
from tvmdev.model.ops import OPS
from tvmdev.model.resize_interp import interp_params

pytestmark = pytest.mark.slow  # compiles and runs C drivers

CODE = body("tvmk_resize_params", """
status = tvmk_resize_f32(arr[0], mode ? arr[1] : NULL, y, &p, NULL);""")


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    root = tmp_path_factory.mktemp("resize_kernel")
    gcc = need_tool("gcc", "compiles the portable kernels")
    dev = root / "dev"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["new-device", "woofles", "--platform", "posix", "-o", str(dev)]) == 0
    includes = [f"-I{PORTABLE}", f"-I{dev / 'include'}"]
    (root / "obj").mkdir()
    run_ok([gcc, *STRICT, *includes, "-c", str(PORTABLE / "resize.c")], cwd=root / "obj")
    return Build(root, includes, [str(root / "obj" / "resize.o")])


def _params(x: tuple[int, ...], size: list[int], scales: list[float] | None,
            run_time: bool, **attrs: Any) -> bytes:
    full = {k: a.default for k, a in OPS["resize"].attrs.items()}
    full.update(attrs, size=size)
    if scales and not run_time:
        full["scale_h"], full["scale_w"] = scales[2], scales[3]
    shapes = [x, (len(scales),) if run_time and scales else None]
    p = interp_params(shapes, (*x[:-2], *size), full)
    return struct.pack("<5i2f3if5i5f", p["outer"], p["H"], p["W"], p["OH"], p["OW"],
                       p["scale_h"], p["scale_w"], p["mode"], p["coord"], p["nearest_mode"],
                       p["cubic_a"], p["exclude_outside"], p["antialias"],
                       p["scales_count"], p["index_h"], p["index_w"], p["roi_h_start"],
                       p["roi_h_end"], p["roi_w_start"], p["roi_w_end"],
                       p["extrapolation_value"])


def _ort(x: np.ndarray, scales: list[float] | None, sizes: list[int] | None,
         **attrs: Any) -> np.ndarray:
    """ONNX Runtime's Resize of x (opset 19; a tf_crop_and_resize's roi from attrs)."""
    from onnx import helper
    from onnx_build import init, model, tensor
    from onnx_cases import ort_run
    inits = [init("scales", np.array(scales, np.float32))] if scales else [
        init("sizes", np.array(sizes, np.int64))]
    ins = ["X", "", "scales"] if scales else ["X", "", "", "sizes"]
    if "roi_h_start" in attrs:
        roi = [0, 0, attrs.pop("roi_h_start"), attrs.pop("roi_w_start"), 1, 1,
               attrs.pop("roi_h_end"), attrs.pop("roi_w_end")]
        inits.append(init("roi", np.array(roi, np.float32)))
        ins[1] = "roi"
    node = helper.make_node("Resize", ins, ["Y"], **attrs)
    raw = model([node], [tensor("X", list(x.shape))], [tensor("Y", None)], inits, opset=19)
    return np.asarray(ort_run(raw, {"X": x})[0])


CASES = [  # (input shape, scales or None, output H and W, attributes)
    ((1, 2, 5, 7), [1, 1, 1.7, 0.6], [8, 4], {"mode": "nearest"}),
    ((2, 1, 4, 6), [1, 1, 0.6, 2.0], [2, 12], {"mode": "nearest", "nearest_mode": "ceil",
                                                "coordinate_transformation_mode":
                                                    "tf_half_pixel_for_nn"}),
    ((1, 3, 6, 5), [1, 1, 1.5, 0.8], [9, 4], {"mode": "linear"}),
    ((1, 1, 6, 6), None, [4, 9], {"mode": "linear",
                                  "coordinate_transformation_mode": "align_corners"}),
    ((1, 2, 5, 5), [1, 1, 1.6, 2.2], [8, 11], {"mode": "cubic"}),
    ((1, 1, 7, 4), None, [3, 9], {"mode": "cubic", "cubic_coeff_a": -0.5,
                                  "exclude_outside": 1}),
    ((1, 2, 9, 12), [1, 1, 0.45, 0.3], [4, 3], {"mode": "linear", "antialias": 1}),
    ((1, 1, 11, 8), [1, 1, 0.3, 0.5], [3, 4], {"mode": "cubic", "antialias": 1}),
    ((1, 2, 4, 6), [1, 1, 2.3, 0.6], [9, 3], {"mode": "linear",
                                              "coordinate_transformation_mode":
                                                  "half_pixel_symmetric"}),
    ((1, 1, 5, 3), None, [1, 5], {"mode": "cubic",
                                  "coordinate_transformation_mode": "asymmetric"}),
    ((1, 2, 6, 5), None, [4, 7], {"mode": "linear", "extrapolation_value": -5.0,
                                  "coordinate_transformation_mode": "tf_crop_and_resize",
                                  "roi_h_start": 0.2, "roi_h_end": 0.9, "roi_w_start": -0.1,
                                  "roi_w_end": 0.7}),
    ((1, 1, 7, 6), None, [1, 9], {"mode": "cubic",
                                  "coordinate_transformation_mode": "tf_crop_and_resize",
                                  "roi_h_start": 0.4, "roi_h_end": 0.8, "roi_w_start": 0.1,
                                  "roi_w_end": 1.2}),
]


def test_resize_against_onnxruntime(build: Build) -> None:
    """Each case with its scales given (mode 0) and read from the operand (mode 1)."""
    need_module("onnxruntime", "pip install -e '.[test]'")
    cases = []
    for k, (shape, scales, size, attrs) in enumerate(CASES):
        x = rand(*shape, scale=3.0)
        sizes = None if scales else [*shape[:2], *size]
        want = _ort(x, scales, sizes, **dict(attrs))
        assert list(want.shape[-2:]) == size, (k, want.shape)
        params = _params(shape, size, scales, False, **attrs)
        n = int(np.prod(want.shape))
        cases.append(Case(params, [x], nan_out(n), 0, want, f"case {k} given"))
        if scales:
            cases.append(Case(_params(shape, size, scales, True, **attrs),
                              [x, np.array(scales, np.float32)], nan_out(n), 1, want,
                              f"case {k} at run time"))
    check(build, "resize", CODE, cases)


def test_run_time_scales_checked(build: Build) -> None:
    """The static output is [4, 3] from [2, 6] at scales 2, 0.5: those pass, any others
    (another H, a C scale not 1, 0, NaN, negative) are an invalid call."""
    x = rand(1, 2, 2, 6)
    params = _params((1, 2, 2, 6), [4, 3], [1, 1, 2.0, 0.5], True)
    runs = [[1, 1, 2.0, 0.5], [1, 1, 2.5, 0.5], [1, 2, 2.0, 0.5], [1, 1, 0.0, 0.5],
            [1, 1, float("nan"), 0.5], [1, 1, -2.0, 0.5], [1, 1, 2.0, 0.7]]
    got = run_cases(build, "resize_checked", CODE, [
        Case(params, [x, np.array(s, np.float32)], nan_out(24), 1) for s in runs])
    assert [status for status, _ in got] == [0] + [ERR_INVALID] * (len(runs) - 1)
