"""SUB, MAXIMUM and MINIMUM beyond tests/test_tflite_field_ops.py's TFLM comparisons: int8
MAXIMUM and MINIMUM compare raw values (as TFLM), so a model whose inputs and output are
quantized differently is refused with one line naming the operator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import need_module
from s8_cases import Case, Tensor, merged
from tflite_binary_cases import MAXIMUM, MINIMUM

from tvmdev.errors import TvmdevError
from tvmdev.model.quant import Quant

need_module("tflite", "pip install -e '.[tflite]'")


@pytest.mark.parametrize("code", [MAXIMUM, MINIMUM])
def test_int8_min_max_of_unlike_quantizations_is_refused(code: int, tmp_path: Path) -> None:
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import evaluate
    qa, qb = Quant((0.05,), (3,)), Quant((0.1,), (3,))
    a = np.zeros((2, 3), np.int8)
    case = Case("unlike", code, [Tensor([2, 3], qa), Tensor([2, 3], qb)], Tensor([2, 3], qa),
                None, [a, a])
    data, arrays = merged([case])
    (tmp_path / "m.tflite").write_bytes(data)
    with pytest.raises(TvmdevError) as e:
        m = import_file(tmp_path / "m.tflite").to_model()
        evaluate(m, dict(zip(m.inputs, arrays, strict=True)))
    assert "must share one quantization" in str(e.value)
    assert "\n" not in str(e.value)
