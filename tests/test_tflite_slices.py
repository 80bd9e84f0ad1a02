"""STRIDED_SLICE beyond tests/test_tflite_field_ops.py's TFLM comparisons: what TFLM's
strided_slice ignores (ellipsis and new-axis masks, offset) or where its kernel writes no
element (a shrunk axis with a negative stride) is refused in one line naming the
operator; a slice stepping through contiguous runs copies them whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import Result, need_module
from s8_cases import INT32, Case, Tensor, merged
from tflite_slice_cases import FLOAT32, STRIDED_SLICE

from tvmdev.errors import TvmdevError

need_module("tflite", "pip install -e '.[tflite]'")


def _case(shape: list[int], bounds: list[list[int]], out: list[int], **masks: int) -> Case:
    consts = [Tensor([len(shape)], None, np.array(v, np.int32), INT32) for v in bounds]
    return Case("slice", STRIDED_SLICE, [Tensor(shape, None, type=FLOAT32), *consts],
                Tensor(out, None, type=FLOAT32), ("StridedSliceOptions", masks),
                [np.zeros(shape, np.float32)])


@pytest.mark.parametrize("masks,bounds,detail", [
    ({"EllipsisMask": 1}, [[0, 0], [2, 3], [1, 1]],
     "STRIDED_SLICE (EllipsisMask set: TFLM's strided_slice ignores it and computes another "
     "slice)"),
    ({"NewAxisMask": 2}, [[0, 0], [2, 3], [1, 1]],
     "STRIDED_SLICE (NewAxisMask set: TFLM's strided_slice ignores it and computes another "
     "slice)"),
])
def test_masks_tflm_ignores_are_refused(masks: dict[str, int], bounds: list[list[int]],
                                         detail: str, tmp_path: Path) -> None:
    from tvmdev.frontends.importer import import_file
    data, _ = merged([_case([2, 3], bounds, [2, 3], **masks)])
    (tmp_path / "m.tflite").write_bytes(data)
    with pytest.raises(TvmdevError) as e:
        import_file(tmp_path / "m.tflite").to_model()
    assert detail in str(e.value)
    assert "\n" not in str(e.value)


def test_shrink_with_negative_stride_is_refused(tmp_path: Path) -> None:
    from tvmdev.frontends.importer import import_file
    data, _ = merged([_case([4, 3], [[1, 0], [2, 3], [-1, 1]], [3], ShrinkAxisMask=1)])
    (tmp_path / "m.tflite").write_bytes(data)
    with pytest.raises(TvmdevError) as e:
        import_file(tmp_path / "m.tflite").to_model()
    assert "axis 0 is shrunk at begin 1 with stride -1, where TFLM's kernel writes no " \
           "element" in str(e.value)
    assert "\n" not in str(e.value)


def test_contiguous_runs_merge() -> None:
    """Rows of a slice that keeps whole inner dims are one run: [2, 3:5, :, :] of
    [4, 6, 5, 7] is 70 contiguous elements; a backward step stays a strided dim."""
    from tvmdev.model.slicing import strided_slice_params
    full = {"begin_mask": 0, "end_mask": 0, "shrink_axis_mask": 1}
    p = strided_slice_params([(4, 6, 5, 7)], (2, 5, 7),
                             {**full, "begin": (2, 3, 0, 0), "end": (3, 5, 5, 7),
                              "strides": (1, 1, 1, 1)})
    assert (p["ndim"], p["count"], p["offset"], p["shape"][0], p["in_strides"][0]) == (
        1, 70, 2 * 210 + 3 * 35, 70, 1)
    p = strided_slice_params([(4, 6)], (2, 6), {**full, "shrink_axis_mask": 0,
                                                "begin": (3, 0), "end": (0, 6),
                                                "strides": (-2, 1)})
    assert p["shape"][:2] == [2, 6] and p["in_strides"][:2] == [-12, 1] and p["offset"] == 18


INT16 = 7  # TensorType INT16
RAW_CASES = [  # (shape, begin, end, strides, masks): backward steps, a shrunk axis, masks
    ([4, 6], [3, 1], [0, 6], [-1, 2], {}),
    ([3, 5, 4], [1, 0, -1], [3, 4, 0], [1, 3, -1], {"BeginMask": 2, "ShrinkAxisMask": 0}),
    ([2, 5, 3], [1, 4, 0], [2, 0, 3], [1, -2, 1], {"ShrinkAxisMask": 1, "EndMask": 4}),
]


def _raw_case(i: int, ttype: int, dtype: type) -> Case:
    shape, b, e, s, masks = RAW_CASES[i]
    x = np.random.default_rng(i).integers(np.iinfo(dtype).min, np.iinfo(dtype).max,
                                          shape, endpoint=True).astype(dtype)
    consts = [Tensor([len(shape)], None, np.array(v, np.int32), INT32) for v in (b, e, s)]
    want = x[tuple(slice(bb, None if ee < 0 else ee, ss) for bb, ee, ss in zip(
        b, e, s, strict=True))]
    return Case(f"raw{i}", STRIDED_SLICE, [Tensor(shape, None, type=ttype), *consts],
                Tensor(list(want.shape), None, type=ttype),
                ("StridedSliceOptions", masks), [x])


@pytest.mark.parametrize("ttype,dtype", [(INT32, np.int32), (INT16, np.int16)],
                         ids=["int32", "int16"])
def test_raw_integer_slices_match_tflm(ttype: int, dtype: type, tmp_path: Path) -> None:
    """STRIDED_SLICE on raw int32 and int16 (micro_speech slices int32) is strided_slice
    in its raw-integer form: TFLM's masks, backward steps and shrunk axes, each output
    TFLM's."""
    import tflm_ref

    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import evaluate
    cases = [_raw_case(i, ttype, dtype) for i in range(len(RAW_CASES))]
    cases[2] = Case(cases[2].label, cases[2].code, cases[2].inputs,
                    Tensor([2, 3], None, type=ttype), cases[2].options, cases[2].arrays)
    data, arrays = merged(cases)
    (tmp_path / "m.tflite").write_bytes(data)
    m = import_file(tmp_path / "m.tflite").to_model()
    assert {(op.op, m.op_dtype(op)) for op in m.operators} == {("strided_slice", "raw")}
    got = evaluate(m, dict(zip(m.inputs, arrays, strict=True)))
    want = tflm_ref.outputs(data, arrays, len(m.outputs))
    for name, w in zip(m.outputs, want, strict=True):
        assert got[name].dtype == w.dtype and np.array_equal(got[name], w), name


@pytest.mark.slow
def test_raw_integer_slices_run_on_host(cli: Callable[..., Result], tmp_path: Path) -> None:
    """The int32 and int16 slices above built and run on the host: every output TFLM's."""
    import tflm_ref
    from conftest import need_tool

    from tvmdev.frontends.importer import import_file
    need_tool("gcc", "apt install gcc")
    cases = [_raw_case(i, t, d) for t, d in ((INT32, np.int32), (INT16, np.int16))
             for i in range(2)]
    data, arrays = merged(cases)
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    m = import_file(path).to_model()
    (tmp_path / "in").mkdir()
    for name, x in zip(m.inputs, arrays, strict=True):
        np.save(tmp_path / "in" / f"{name}.npy", x)
    r = cli("run", str(path), "--inputs", str(tmp_path / "in"), "--save-outputs",
            str(tmp_path / "out"), "--build-dir", str(tmp_path / "build"))
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    want = tflm_ref.outputs(data, arrays, len(m.outputs))
    for name, w in zip(m.outputs, want, strict=True):
        assert np.array_equal(np.load(tmp_path / "out" / f"{name}.npy"), w), name
