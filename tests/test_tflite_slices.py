"""STRIDED_SLICE beyond tests/test_tflite_field_ops.py's TFLM comparisons: what TFLM's
strided_slice ignores (ellipsis and new-axis masks, offset) or where its kernel writes no
element (a shrunk axis with a negative stride) is refused in one line naming the
operator; a slice stepping through contiguous runs copies them whole."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import need_module
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
