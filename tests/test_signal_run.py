"""micro_speech's audio preprocessor (TFLM's signal-library ops, raw integer builtins)
built and run by ``tvmdev run``: on the host over seeded 30 ms windows, and for several
runs in a row carrying the noise estimate (``--iterations``), and on the Cortex-M55
board in QEMU; every output bit for bit TFLM's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import signal_model
import tflm_ref
from conftest import Result, need_tool

pytest.importorskip("tflite")


def _run(cli: Callable[..., Result], path: Path, window: np.ndarray, tmp_path: Path,
         *options: str) -> np.ndarray:
    """``tvmdev run`` of the preprocessor at ``path`` on one window: its output (the run
    must PASS against tvmdev's reference)."""
    from tvmdev.frontends.importer import import_file
    m = import_file(path).to_model()
    inputs, out = tmp_path / "in", tmp_path / "out"
    inputs.mkdir(parents=True)
    np.save(inputs / f"{m.inputs[0]}.npy", window)
    r = cli("run", str(path), "--inputs", str(inputs), "--save-outputs", str(out),
            "--build-dir", str(tmp_path / "build"), *options)
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    return np.asarray(np.load(out / f"{m.outputs[0]}.npy"))


def _tflm(path: Path, window: np.ndarray, runs: int = 1) -> np.ndarray:
    interp = tflm_ref.runtime().Interpreter.from_bytes(path.read_bytes())
    for _ in range(runs):
        interp.set_input(window, 0)
        interp.invoke()
    return np.asarray(interp.get_output(0))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["int8", "float"])
def test_preprocessor_bit_exact_on_host(kind: str, cli: Callable[..., Result],
                                        tmp_path: Path) -> None:
    """Three windows (quiet, loud, a tone) each a first run; then four runs in a row on
    one window, the noise estimate carried: TFLM's output after its fourth invoke, which
    is not its first."""
    need_tool("gcc", "apt install gcc")
    path = signal_model.model_path(kind)
    windows = signal_model.windows(5, seed=11)
    for i, w in enumerate(windows[:3] + windows[4:]):
        got = _run(cli, path, w, tmp_path / str(i))
        want = _tflm(path, w)
        assert got.dtype == want.dtype and np.array_equal(got, want), i
    w = windows[1]
    got = _run(cli, path, w, tmp_path / "runs", "--iterations", "4")
    assert np.array_equal(got, _tflm(path, w, 4))
    assert not np.array_equal(got, _tflm(path, w, 1))


@pytest.mark.slow
def test_preprocessor_bit_exact_on_mps3_an547(cli: Callable[..., Result],
                                              tmp_path: Path) -> None:
    """The int8 preprocessor on the Cortex-M55 board, in QEMU: two windows, each TFLM's
    output bit for bit."""
    need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    path = signal_model.model_path("int8")
    for i, w in enumerate(signal_model.windows(3, seed=5)[1:]):
        got = _run(cli, path, w, tmp_path / str(i), "--board", "mps3_an547")
        assert np.array_equal(got, _tflm(path, w)), i


def test_noise_estimate_is_a_state_tensor() -> None:
    """The spectral subtraction's noise estimate is a state tensor of the model (uint32,
    one per channel) that the kernel updates in place: planned in the state region at
    the end of the workspace, which no other tensor overlaps, and zero after a reset."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.model.values import reset_state
    from tvmdev.plan.pipeline import compile_model
    m = import_file(signal_model.model_path("int8")).to_model()
    assert len(m.states) == 1
    t = m.tensors[m.states[0]]
    assert (t.role, t.dtype, t.shape) == ("state", "uint32", (40,))
    (op,) = [op for op in m.operators if op.op == "signal_noise_estimate"]
    assert op.inputs[1] == t.name
    assert not reset_state(m)[t.name].any()
    mem = compile_model(m, board_by_name("host")).memory
    start, size = mem.state_region
    assert [s.name for s in mem.states] == [t.name] and size >= 4 * 40
    assert start + size == mem.arena_size
    assert all(off + m.tensors[n].nbytes <= start for n, off in mem.offsets.items()
               if n != t.name)


@pytest.mark.slow
def test_threads_keep_their_own_estimate(cli: Callable[..., Result],
                                         tmp_path: Path) -> None:
    """Two threads, three runs each: each thread's workspace holds its own noise estimate,
    so both give TFLM's output after its third invoke."""
    need_tool("gcc", "apt install gcc")
    path = signal_model.model_path("int8")
    w = signal_model.windows(3, seed=7)[1]
    got = _run(cli, path, w, tmp_path, "--threads", "2", "--iterations", "3")
    assert np.array_equal(got, _tflm(path, w, 3))
    assert not np.array_equal(got, _tflm(path, w, 1))


def test_params_are_the_structs_fields() -> None:
    """Every operator of both preprocessors compiled for the host: the fields tvmdev
    computes are exactly those of its params struct in tvmk_rawint.h (pycparser)."""
    from test_params_structs import struct_fields

    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import compile_model
    fields = struct_fields()
    seen = set()
    for kind in ("int8", "float"):
        compiled = compile_model(import_file(signal_model.model_path(kind)).to_model(),
                                 board_by_name("host"))
        for prep in compiled.ops:
            assert tuple(prep.params) == fields[prep.struct], prep.struct
            seen.add(prep.struct)
    assert {s for s in seen if s.startswith("tvmk_signal")} == {
        "tvmk_signal_window_params", "tvmk_signal_rfft_params", "tvmk_signal_energy_params",
        "tvmk_signal_filter_bank_params", "tvmk_signal_noise_params",
        "tvmk_signal_subtraction_params", "tvmk_signal_pcan_params",
        "tvmk_signal_log_params"}
