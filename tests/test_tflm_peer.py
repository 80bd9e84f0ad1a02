"""benchmarks/_tflm_peer.py, the TFLM peer of the CMSIS-NN benchmark: the parts that need
no tflite-micro tree (the build and the run are the benchmark's, by hand)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))

import _tflm_build  # noqa: E402


def test_missing_trees_are_each_named(monkeypatch: pytest.MonkeyPatch) -> None:
    for var, _, _ in _tflm_build.TREES.values():
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(_tflm_build.PeerUnavailable) as err:
        _tflm_build.trees()
    for name, (var, _, _) in _tflm_build.TREES.items():
        assert (f"{var} (" in str(err.value)) == (name not in _tflm_build.OPTIONAL_TREES)


def test_the_signal_library_needs_kissfft_patched_as_tflm_patches_it(tmp_path: Path) -> None:
    """kissfft is asked for only by a model with a signal operator, and only with TFLM's
    patch (unpatched, its FFT calls malloc and fprintf)."""
    with pytest.raises(_tflm_build.PeerUnavailable,
                       match=r"needs KISSFFT_TFLM_DIR \(.*v130.*\) for the signal .*not set"):
        _tflm_build.signal_tree({})
    (tmp_path / "kiss_fft.h").write_text("#define KISS_FFT_MALLOC malloc\n")
    with pytest.raises(_tflm_build.PeerUnavailable,
                       match=r"kiss_fft.h is not patched; apply tflite-micro's third_party"):
        _tflm_build.signal_tree({"kissfft": tmp_path})
    (tmp_path / "kiss_fft.h").write_text("#define KISS_FFT_MALLOC(X) (void*)(0x0) "
                                         "/* Patched. */\n")
    _tflm_build.signal_tree({"kissfft": tmp_path})


def test_a_tree_without_its_marker_is_refused(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    monkeypatch.setenv("TFLITE_MICRO_SOURCE_DIR", str(tmp_path))
    with pytest.raises(_tflm_build.PeerUnavailable,
                       match=r"TFLITE_MICRO_SOURCE_DIR .*has no tensorflow/lite/micro"):
        _tflm_build.trees()


def test_registrations_are_int8_where_tflm_has_them() -> None:
    got = _tflm_build.registrations(["CONV_2D", "RESHAPE", "SOFTMAX"],
                                    frozenset({"CONV_2D", "RESHAPE", "SOFTMAX"}))
    assert "(r).AddConv2D(tflite::Register_CONV_2D_INT8());" in got
    assert "(r).AddReshape();" in got
    assert "(r).AddSoftmax(tflite::Register_SOFTMAX_INT8());" in got
    assert "(r).AddWindow();" in _tflm_build.registrations(["CUSTOM:SignalWindow"])
    with pytest.raises(_tflm_build.PeerUnavailable, match="registers no LSTM"):
        _tflm_build.registrations(["CONV_2D", "LSTM"])


def test_registrations_are_the_default_where_a_use_is_not_int8() -> None:
    """An int16 (16x8) or float convolution needs TFLM's default registration: the int8
    one would refuse it at Prepare."""
    got = _tflm_build.registrations(["CONV_2D", "SOFTMAX"], frozenset({"SOFTMAX"}))
    assert "(r).AddConv2D();" in got
    assert "(r).AddSoftmax(tflite::Register_SOFTMAX_INT8());" in got


def test_a_model_too_large_for_the_program_goes_to_the_boards_larger_memories() -> None:
    """mps3_an547's ITCM (512 KiB) holds keyword_spotting but not MobileNetV2's 4 MB: the
    peer then puts the model in the QSPI flash and the arena in the DDR, as tvmdev's plan
    puts its constants and workspace in a region that holds them; mps2_an386 lists no
    other code or flash memory, so a model that does not fit stays (and overflows)."""
    import _tflm_layout

    from tvmdev.load.board import board_by_name

    an547 = board_by_name("mps3_an547")
    small = _tflm_layout.layout(an547, 60_000)
    assert (small.model_region.name, small.arena_region.name) == ("itcm", "dtcm")
    assert small.arena == _tflm_layout.arena_bytes(an547)
    script = _tflm_layout.link_script(an547, small)
    assert "QSPI (" not in script and "DDR (" not in script
    assert "*(.bss.tflm_peer_arena) }} > RAM".replace("}}", "}") in script

    big = _tflm_layout.layout(an547, 4_130_000)
    assert (big.model_region.name, big.arena_region.name) == ("qspi", "ddr")
    assert big.arena == _tflm_layout.LARGE_ARENA
    script = _tflm_layout.link_script(an547, big)
    assert "    QSPI (r) : ORIGIN = 0x38000000, LENGTH = 0x800000\n" in script
    assert "    DDR (rwx) : ORIGIN = 0x70000000, LENGTH = 0x10000000\n" in script
    assert "*(.rodata.tflm_peer_input)\n        . = ALIGN(4); } > QSPI\n" in script
    assert "*(.bss.tflm_peer_arena) } > DDR\n" in script

    an386 = board_by_name("mps2_an386")
    kept = _tflm_layout.layout(an386, 4_130_000)
    assert kept.model_region is an386.memory.code  # type: ignore[union-attr]


def test_an_int8_registration_only_where_every_use_is_int8_in_and_out() -> None:
    """keyword_scrambled's SOFTMAX reads int8 and writes int16: TFLM's int8 registration
    would run CMSIS-NN's int8-to-int8 softmax on it (its firmware then disagreed with
    TFLM's interpreter), so it gets the default one; its SVDFs and fully connected layers
    are int8 in and out."""
    sys.path.insert(0, str(REPO / "tests"))
    import _tflm_peer
    import field_models

    from tvmdev.frontends.tflite import read

    path = field_models.locate("keyword_scrambled")
    if isinstance(path, str):
        pytest.skip(path)
    got = _tflm_peer.int8_ops(read(path, path.read_bytes()))
    assert got == frozenset({"SVDF", "FULLY_CONNECTED"})
