"""micro_speech's audio preprocessor (TFLM's signal-library custom ops) for the tests:
its path in TFLM's tree, its constants and custom options read with the ``tflite``
package, and seeded 30 ms audio windows (16 kHz int16) of varied loudness."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

REL = "tensorflow/lite/micro/examples/micro_speech/models/audio_preprocessor_{}.tflite"


def model_path(kind: str = "int8") -> Path:
    """The preprocessor's .tflite (``kind`` int8 or float); skips, saying why, without
    TFLM's tree."""
    root = os.environ.get("TFLM_SOURCE_DIR")
    if not root:
        pytest.skip("TFLM_SOURCE_DIR is not set: TFLM's tree (github.com/tensorflow/"
                    "tflite-micro) holds micro_speech's audio preprocessor")
    path = Path(root) / REL.format(kind)
    assert path.is_file(), f"TFLM_SOURCE_DIR={root} has no {REL.format(kind)}"
    return path


def windows(count: int, seed: int = 0) -> list[np.ndarray]:
    """``count`` seeded (1, 480) int16 windows: noise from near silence to clipping, a
    tone, silence, and one with -32768 (int16's magnitude that does not fit int16)."""
    r = np.random.default_rng(seed)
    out = []
    for i in range(count):
        kind = i % 6
        amp = [30.0, 800.0, 6000.0, 40000.0][int(r.integers(4))]
        if kind == 4:
            t = np.arange(480) / 16000.0
            x = amp * np.sin(2 * np.pi * float(r.uniform(100, 7900)) * t)
        elif kind == 5 and i % 12 == 5:
            x = np.zeros(480)
        else:
            x = r.normal(0.0, amp, 480)
        w = np.clip(np.rint(x), -32768, 32767).astype(np.int16).reshape(1, 480)
        if kind == 3:
            w[0, int(r.integers(480))] = -32768
        out.append(w)
    return out


class Graph:
    """The model's subgraph 0, read with the ``tflite`` package."""

    def __init__(self, data: bytes) -> None:
        import tflite
        self.model = tflite.Model.GetRootAsModel(data, 0)
        self.sg = self.model.Subgraphs(0)

    def const(self, i: int) -> np.ndarray:
        """Constant tensor ``i``'s values (int16 or int32)."""
        import tflite
        t = self.sg.Tensors(i)
        raw = self.model.Buffers(t.Buffer()).DataAsNumpy().tobytes()
        dtype = {tflite.TensorType.INT16: np.int16, tflite.TensorType.INT32: np.int32}
        return np.frombuffer(raw, dtype[t.Type()])

    def ops(self) -> list[tuple[str, list[int], list[int], dict[str, Any]]]:
        """Each operator: its custom code (or builtin code as text), inputs, outputs and
        custom options."""
        from flatbuffers import flexbuffers
        out = []
        for j in range(self.sg.OperatorsLength()):
            op = self.sg.Operators(j)
            code = self.model.OperatorCodes(op.OpcodeIndex())
            name = (code.CustomCode() or b"").decode() or str(
                max(code.BuiltinCode(), code.DeprecatedBuiltinCode()))
            opts = (flexbuffers.Loads(bytes(op.CustomOptionsAsNumpy()))
                    if op.CustomOptionsLength() else {})
            out.append((name, list(op.InputsAsNumpy()), list(op.OutputsAsNumpy()), opts))
        return out
