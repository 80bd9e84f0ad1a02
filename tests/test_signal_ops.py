"""TFLM's signal-library ops one at a time (tests/signal_cases.py: one-op .tflite models
on seeded inputs reaching each op's edges) against TFLM's interpreter: imported and
evaluated by tvmdev's numpy reference (fast), and built and run by ``tvmdev run`` on the
host (slow); every output bit for bit, the spectral subtraction's over runs that carry
its noise estimate."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import signal_cases as sc
import signal_model
import tflm_ref
from conftest import Result, need_tool

pytest.importorskip("tflite")


def _tables() -> dict[str, np.ndarray]:
    g = signal_model.Graph(signal_model.model_path("int8").read_bytes())
    ops = {name: ins for name, ins, _, _ in g.ops()}
    fb, pcan = ops["SignalFilterBank"], ops["SignalPCAN"]
    keys = ("weights", "unweights", "freq_starts", "weight_starts", "widths")
    return {**{k: g.const(i) for k, i in zip(keys, fb[1:], strict=True)},
            "gain_lut": g.const(pcan[2])}


def _cases() -> list[sc.Case]:
    return sc.cases(_tables())


def _tflm(c: sc.Case, data: bytes) -> list[np.ndarray]:
    interp = tflm_ref.runtime().Interpreter.from_bytes(data, arena_size=1 << 20)
    for _ in range(c.repeat):
        for i, v in enumerate(c.values):
            interp.set_input(v, i)
        interp.invoke()
    return [interp.get_output(i) for i in range(len(c.outputs))]


LABELS = ["window shift 12", "window shift 0", "fft auto scale quiet", "fft auto scale silent",
          "fft auto scale with -32768", "rfft 512", "rfft 64", "rfft 16", "energy",
          "filter bank", "square root", "spectral subtraction", "spectral subtraction",
          "pcan", "log"]


def test_cases_listed() -> None:
    """The parametrized labels below are the cases'."""
    assert [c.label for c in _cases()] == LABELS


def _case(index: int) -> sc.Case:
    return _cases()[index]


def _outputs(c: sc.Case, m: object, got: dict[str, np.ndarray]) -> list[np.ndarray]:
    """tvmdev's values of the op's outputs, in the op's order (an op tvmdev splits in two
    writes them from two operators; energy's bins outside its range are not TFLM's)."""
    names = [f"t{i}" for i in c.outputs]
    return [got[n] for n in names]


def _same(c: sc.Case, got: list[np.ndarray], want: list[np.ndarray]) -> list[str]:
    bad = []
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        if c.code == "SignalEnergy":
            lo, hi = c.options["start_index"], c.options["end_index"]
            g, w = g[lo:hi], w[lo:hi]
        if g.dtype != w.dtype or not np.array_equal(g.reshape(w.shape), w):
            bad.append(f"{c.label} output {k}: {np.count_nonzero(g.reshape(w.shape) != w)} "
                       f"of {w.size} differ")
    return bad


@pytest.mark.parametrize("index", range(len(LABELS)), ids=LABELS)
def test_reference_matches_tflm(index: int, tmp_path: Path) -> None:
    """The one-op model imported and evaluated (state carried over ``repeat`` runs): its
    outputs are TFLM's, and they vary."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import evaluate
    c = _case(index)
    data = sc.build(c)
    (tmp_path / "m.tflite").write_bytes(data)
    m = import_file(tmp_path / "m.tflite").to_model()
    state: dict[str, np.ndarray] = {}
    for _ in range(c.repeat):
        got = evaluate(m, dict(zip(m.inputs, c.values, strict=True)), state=state)
    want = _tflm(c, data)
    assert _same(c, _outputs(c, m, got), want) == []
    assert len(np.unique(want[0])) > 1 or c.label.endswith("silent")


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(LABELS)), ids=LABELS)
def test_run_on_host_matches_tflm(index: int, cli: Callable[..., Result],
                                  tmp_path: Path) -> None:
    """The same one-op model through ``tvmdev run`` on the host (``--iterations`` for the
    runs that carry state): its outputs are TFLM's."""
    need_tool("gcc", "apt install gcc")
    from tvmdev.frontends.importer import import_file
    c = _case(index)
    data = sc.build(c)
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    m = import_file(path).to_model()
    (tmp_path / "in").mkdir()
    for name, x in zip(m.inputs, c.values, strict=True):
        np.save(tmp_path / "in" / f"{name}.npy", x)
    r = cli("run", str(path), "--inputs", str(tmp_path / "in"), "--save-outputs",
            str(tmp_path / "out"), "--build-dir", str(tmp_path / "build"),
            "--iterations", str(c.repeat))
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    got = {n: np.load(tmp_path / "out" / f"{n}.npy") for n in m.outputs}
    assert _same(c, _outputs(c, m, got), _tflm(c, data)) == []


def test_refusals_are_one_line(cli: Callable[..., Result], tmp_path: Path) -> None:
    """A float32 SignalRfft and a signal op tvmdev lacks (SignalFramer): one line each,
    naming the operator and why."""
    hint = ("  hint: README 'tvmdev import' lists the TFLite operators that map (float32; "
            "int8: all but BATCH_MATMUL, RELU, RELU6, RELU_N1_TO_1; raw integers: TFLM's "
            "signal ops and ADD, CAST, CONCATENATION, DIV, MAXIMUM, MINIMUM, MUL, RESHAPE, "
            "STRIDED_SLICE)")
    custom = ("  hint: custom operators need their kernels: give --kernels FILE with an "
              "entry 'tflite: {custom_code: SignalFramer}' (README 'Custom operators')")
    for name, case, why, said in (
            ("rf", sc.Case("rfft f32", "SignalRfft", [sc.Tensor([3, 48], 0),
                           sc.Tensor([3, 66], 0)], [0], [1], {"T": 0, "fft_length": 64}),
             "CUSTOM:SignalRfft (T 0: tvmdev takes int16, T 7)", hint),
            ("fr", sc.Case("framer", "SignalFramer", [sc.Tensor([480], sc.INT16),
                           sc.Tensor([2, 240], sc.INT16)], [0], [1], {"frame_size": 240}),
             "CUSTOM:SignalFramer", custom)):
        path = tmp_path / f"{name}.tflite"
        path.write_bytes(sc.build(case))
        r = cli("import", str(path), "-o", str(tmp_path / f"{name}.yaml"))
        assert r.code == 1
        assert r.err.splitlines() == [
            f"tvmdev: {path}: 1 unsupported operator: {why} x1 (first: operator 0 't1')", said]
