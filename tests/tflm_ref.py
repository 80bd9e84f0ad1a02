"""TFLM's interpreter as the reference for the TFLite front end's tests."""

from __future__ import annotations

import platform
import sys
from typing import Any

import numpy as np
import pytest
from conftest import IN_CI


def runtime() -> Any:
    """TFLM's Python runtime module; skips (fails under CI on Linux x86-64, where TFLM has
    wheels) without tflite-micro."""
    try:
        from tflite_micro.python.tflite_micro import runtime as tflm_runtime
    except ImportError:
        if IN_CI and sys.platform == "linux" and platform.machine() == "x86_64":
            pytest.fail("tflite-micro is not installed (pip install -e .[test])")
        pytest.skip("tflite-micro is not installed: pip install -e .[test]")
    return tflm_runtime


def outputs(model: bytes, inputs: list[np.ndarray], n: int, arena: int | None = None
            ) -> list[np.ndarray]:
    """TFLM's ``n`` outputs of ``model`` (the .tflite bytes) for ``inputs`` (skips without
    tflite-micro, as ``runtime``); ``arena``: its size in bytes (default: TFLM's guess, ten
    times the model's, too small for a model of few constants)."""
    interp = runtime().Interpreter.from_bytes(model, arena_size=arena)
    for i, x in enumerate(inputs):
        interp.set_input(x, i)
    interp.invoke()
    return [interp.get_output(i) for i in range(n)]


def tensors(model: bytes, inputs: list[np.ndarray], indices: list[int]
            ) -> dict[int, np.ndarray]:
    """The tensors ``indices`` of ``model``'s subgraph 0 (each must exist: TFLM does not
    check) after TFLM runs it on ``inputs``, its interpreter keeping every tensor (skips
    as ``runtime``)."""
    rt = runtime()
    interp = rt.Interpreter.from_bytes(
        model, intrepreter_config=rt.InterpreterConfig.kPreserveAllTensors)
    for i, x in enumerate(inputs):
        interp.set_input(x, i)
    interp.invoke()
    return {i: np.asarray(interp.GetTensor(i, 0)["tensor_data"]) for i in indices}
