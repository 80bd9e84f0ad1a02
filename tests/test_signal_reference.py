"""tvmdev's numpy references of TFLM's signal ops (tvmdev/model/signal) against TFLM
itself: micro_speech's audio preprocessor run by TFLM's interpreter over seeded 30 ms
windows, its interpreter keeping every tensor; each signal op's reference, given the
tensors TFLM fed that op, computes the tensors TFLM computed, bit for bit, and the
spectral subtraction's noise estimate carried from window to window is TFLM's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import signal_model
import tflm_ref
from conftest import Result

from tvmdev.model.signal import reference as sig

pytest.importorskip("tflite")


def _reference(name: str, x: list[np.ndarray], o: dict[str, Any], state: dict[int, Any],
               key: int) -> list[np.ndarray]:
    """The op's outputs by tvmdev's reference; ``state`` keeps the noise estimates."""
    if name == "SignalWindow":
        return [sig.window(x[0], x[1], o["shift"])]
    if name == "SignalFftAutoScale":
        return list(sig.fft_auto_scale(x[0]))
    if name == "SignalRfft":
        return [sig.rfft(x[0], o["fft_length"])]
    if name == "SignalEnergy":
        return [sig.energy(x[0], o["start_index"], o["end_index"])]
    if name == "SignalFilterBank":
        return [sig.filter_bank(x[0], x[1], x[2], x[3], x[4], x[5], o["num_channels"])]
    if name == "SignalFilterBankSquareRoot":
        return [sig.filter_bank_square_root(x[0], int(x[1]))]
    if name == "SignalFilterBankSpectralSubtraction":
        noise = state.get(key, np.zeros(o["num_channels"], np.uint32))
        out, state[key] = sig.spectral_subtraction(x[0], noise, o)
        return [out, state[key]]
    if name == "SignalPCAN":
        return [sig.pcan(x[0], x[1], x[2], o["snr_shift"])]
    assert name == "SignalFilterBankLog"
    return [sig.filter_bank_log(x[0], o["output_scale"], o["input_correction_bits"])]


def test_signal_references_match_tflm() -> None:
    """Twelve windows through one TFLM interpreter (state carried); every signal op's
    every output (eleven), bit for bit (SignalEnergy's in [start_index, end_index), the bins it
    writes)."""
    rt = tflm_ref.runtime()
    data = signal_model.model_path("int8").read_bytes()
    g = signal_model.Graph(data)
    interp = rt.Interpreter.from_bytes(
        data, intrepreter_config=rt.InterpreterConfig.kPreserveAllTensors)
    state: dict[int, Any] = {}
    checked = 0
    scales = set()
    for w in signal_model.windows(12):
        interp.set_input(w, 0)
        interp.invoke()
        tensor = {}
        for i in range(g.sg.TensorsLength()):
            tensor[i] = (g.const(i) if g.sg.Tensors(i).Buffer() and
                         g.model.Buffers(g.sg.Tensors(i).Buffer()).DataLength()
                         else np.asarray(interp.GetTensor(i, 0)["tensor_data"]))
        tensor[0] = w
        for j, (name, ins, outs, opts) in enumerate(g.ops()):
            if not name.startswith("Signal"):
                continue
            got = _reference(name, [tensor[i] for i in ins], opts, state, j)
            for k, (o, v) in enumerate(zip(outs, got, strict=True)):
                want = tensor[o]
                if name == "SignalEnergy":
                    lo, hi = opts["start_index"], opts["end_index"]
                    v, want = v[lo:hi], want[lo:hi]
                assert v.dtype == want.dtype, (name, k)
                assert np.array_equal(v.ravel(), want.ravel()), (name, k)
                checked += 1
        scales.add(int(tensor[22]))
    assert checked == 12 * 11  # nine ops, two of them with two outputs
    assert len(scales) > 3  # the windows' loudness varies the FFT's auto-scale


@pytest.mark.parametrize("kind", ["int8", "float"])
def test_preprocessor_imports_and_evaluates_bit_exact(kind: str) -> None:
    """The whole preprocessor (int8: int8 features; float: float32 ones), imported and
    evaluated by tvmdev's numpy reference window after window, its noise estimate carried
    in ``state`` as TFLM's interpreter carries it: every output equals TFLM's, bit for
    bit; and the estimate matters (a fresh state gives other features)."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import evaluate
    path = signal_model.model_path(kind)
    m = import_file(path).to_model()
    assert {m.op_dtype(op) for op in m.operators} == (
        {"raw"} if kind == "int8" else {"raw", "float32"})
    interp = tflm_ref.runtime().Interpreter.from_bytes(path.read_bytes())
    state: dict[str, np.ndarray] = {}
    fresh_differs = 0
    for i, w in enumerate(signal_model.windows(8, seed=3)):
        got = evaluate(m, {m.inputs[0]: w}, state=state)[m.outputs[0]]
        interp.set_input(w, 0)
        interp.invoke()
        want = interp.get_output(0)
        assert got.dtype == want.dtype and np.array_equal(got, want)
        if i % 2:  # a fresh state, now and then
            fresh = evaluate(m, {m.inputs[0]: w})[m.outputs[0]]
            fresh_differs += not np.array_equal(fresh, got)
    assert state and fresh_differs >= 3


@pytest.mark.parametrize("kind", ["int8", "float"])
def test_imported_description_loads_again(kind: str, cli: Callable[..., Result],
                                          tmp_path: Path) -> None:
    """``tvmdev import`` writes the preprocessor as a description that loads again (its
    int8 output, which a CAST writes, unquantized: a raw integer) and computes the same
    features as the .tflite."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.load.model import load_model
    from tvmdev.model.reference import evaluate
    path = signal_model.model_path(kind)
    r = cli("import", str(path), "-o", str(tmp_path / "ap"))
    assert r.code == 0, r.err
    m, again = import_file(path).to_model(), load_model(tmp_path / "ap" / f"{path.stem}.yaml")
    w = signal_model.windows(2, seed=5)[1]
    assert np.array_equal(evaluate(m, {m.inputs[0]: w})[m.outputs[0]],
                          evaluate(again, {again.inputs[0]: w})[again.outputs[0]])
