"""Zephyr: the generated module built for real in zephyr_app, the examples on
native_sim_64 and qemu_cortex_m3 against the numpy reference, an imported TFLite model
with its fully-connected layers on a device against TFLM's interpreter, the ztest suite
under twister, and `west tvmdev`. These need a Zephyr tree (ZEPHYR_BASE), which no
package registry provides: without one they skip, saying so."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import IN_CI, REPO, Result, need_tool, run_ok

from tvmdev.load.board import board_by_name
from tvmdev.load.model import load_model
from tvmdev.model.scratch import Tuning
from tvmdev.run.compare import ATOL, RTOL
from tvmdev.run.job import prepare

pytestmark = pytest.mark.slow  # west builds

ZEPHYR_BASE = os.environ.get("ZEPHYR_BASE")
needs_zephyr = pytest.mark.skipif(
    not ZEPHYR_BASE, reason="ZEPHYR_BASE is not set: the Zephyr tests need a Zephyr tree "
    "(3.4 or newer; see the README)")


@needs_zephyr
@pytest.mark.parametrize("board", ["native_sim/native/64", "qemu_cortex_m3"])
@pytest.mark.parametrize("example", ["mlp", "cnn", "decoder"])
def test_example_on_zephyr(example: str, board: str, cli: Callable[..., Result],
                           tmp_path: Path) -> None:
    need_tool("west", "pip install west")
    if board == "qemu_cortex_m3":
        need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
        need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    r = cli("run", str(REPO / f"examples/{example}/{example}.yaml"), "--board", board,
            "--schedule", "lazy", "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS")
    overlay = (tmp_path / "b/app.overlay").read_text()
    if example != "decoder":
        assert 'compatible = "tvmdev,woofles";' in overlay


def _tflm_outputs(path: Path, inputs: list[np.ndarray], n: int) -> list[np.ndarray]:
    """TFLM's interpreter on ``inputs`` (skips without tflite-micro, which has wheels for
    Linux x86-64 only; fails there under CI)."""
    try:
        from tflite_micro.python.tflite_micro import runtime
    except ImportError:
        if IN_CI and sys.platform == "linux" and platform.machine() == "x86_64":
            pytest.fail("tflite-micro is not installed (pip install -e .[test])")
        pytest.skip("tflite-micro is not installed: pip install -e .[test]")
    interp = runtime.Interpreter.from_file(str(path))
    for i, x in enumerate(inputs):
        interp.set_input(x, i)
    interp.invoke()
    return [interp.get_output(i) for i in range(n)]


@needs_zephyr
def test_imported_tflite_model_on_native_sim_64_with_a_device(
        cli: Callable[..., Result], tflite_model: Callable[[str], Path], tmp_path: Path
        ) -> None:
    """The autoencoder (.tflite, imported in memory) with every operator that came from a
    FULLY_CONNECTED (gemm or fully_connected, and the relu split from it) on a woofles
    device in zephyr_app, its outputs against TFLM's on the same seeded inputs."""
    need_tool("west", "pip install west")
    if not IN_CI:
        pytest.importorskip("tflite", reason="the tflite package is not installed: "
                            "pip install -e '.[tflite]'")
    model = tflite_model("autoencoder_example.float32.tflite")
    place = ["--device", "npu0:woofles", "--place", "fully_connected=npu0"]
    r = cli("import", str(model), "-o", str(tmp_path / "imported"), *place)
    assert r.code == 0, r.err
    found = re.search(r"FULLY_CONNECTED x(\d+)", r.out)
    assert found, r.out
    import yaml
    doc = yaml.safe_load((tmp_path / "imported/autoencoder_example.yaml").read_text())
    rng = np.random.default_rng(7)
    inputs = []
    (tmp_path / "in").mkdir()
    for name, spec in doc["inputs"].items():
        x = rng.uniform(-1.0, 1.0, spec["shape"]).astype(np.float32)
        np.save(tmp_path / "in" / f"{name}.npy", x)
        inputs.append(x)
    r = cli("run", str(model), "--board", "native_sim_64", *place, "--inputs",
            str(tmp_path / "in"), "--save-outputs", str(tmp_path / "out"), "--build-dir",
            str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS")
    plan = json.loads((tmp_path / "b/model/tvmgen_autoencoder_example_plan.json").read_text())
    layers = [o for o in plan["operators"] if o["op"] in ("gemm", "fully_connected")]
    assert len(layers) == int(found.group(1)) and all(o["device"] == "npu0" for o in layers)
    assert all(o["kernels"][0].startswith("woofles_") for o in layers), layers
    assert 'compatible = "tvmdev,woofles";' in (tmp_path / "b/app.overlay").read_text()
    expected = _tflm_outputs(model, inputs, len(doc["outputs"]))
    got = [np.load(tmp_path / "out" / f"{o}.npy") for o in doc["outputs"]]
    assert len(got) == len(expected) == 1
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, atol=ATOL, rtol=RTOL)


def _need_tflite() -> None:
    """Skips without the tflite package (fails under CI, which installs it)."""
    if not IN_CI:
        pytest.importorskip("tflite", reason="the tflite package is not installed: "
                            "pip install -e '.[tflite]'")


def _int8_model(tflite_model: Callable[[str], Path], name: str) -> Path:
    """A real int8 model (the test fails if it does not import)."""
    _need_tflite()
    return tflite_model(f"{name}.tflite")


def _zephyr_bit_exact(cli: Callable[..., Result], model: Path, board: str, tmp_path: Path,
                      *extra: str) -> None:
    """``tvmdev run`` in zephyr_app on seeded inputs spanning the quantized input range:
    every float output, a DEQUANTIZE's, equal to TFLM's, and the app's own check exact
    (tolerance 0)."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.model import reference
    need_tool("west", "pip install west")
    if board == "qemu_cortex_m3":
        need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
        need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    m = import_file(model).to_model()
    given = reference.random_inputs(m, 3)
    (tmp_path / "in").mkdir()
    for name, x in given.items():
        np.save(tmp_path / "in" / f"{name}.npy", x)
    r = cli("run", str(model), "--board", board, *extra, "--inputs", str(tmp_path / "in"),
            "--save-outputs", str(tmp_path / "out"), "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS"), r.out
    app = (tmp_path / "b/app/tvmdev_app.c").read_text()
    expected = _tflm_outputs(model, [given[n] for n in m.inputs], len(m.outputs))
    for name, want in zip(m.outputs, expected, strict=True):
        assert want.dtype == np.float32  # the Zephyr app takes float I/O models
        got = np.load(tmp_path / "out" / f"{name}.npy")
        assert got.shape == want.shape
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (
            f"{name}: {np.count_nonzero(got != want)} of {got.size} elements differ")
        assert f"output {name} " in r.out and "max abs err 0, max rel err 0" in r.out
        assert "(atol 0, rtol 0)" in r.out, r.out
        # thread 0's first output (out_of[0][0]) against the reference, exactly
        assert re.search(rf"matches\([\w\[\]]+, \w+\.values, {got.size}U,\s+0\.0f,\s+0\.0f\)",
                         app), app


@needs_zephyr
@pytest.mark.parametrize("board", ["native_sim_64", "qemu_cortex_m3"])
def test_keyword_spotting_on_zephyr_bit_exact(board: str, cli: Callable[..., Result],
                                              tflite_model: Callable[[str], Path],
                                              tmp_path: Path) -> None:
    """keyword_spotting (DS-CNN, int8 inside, float input and output) in zephyr_app, on
    the portable int8 kernels."""
    _zephyr_bit_exact(cli, _int8_model(tflite_model, "keyword_spotting"), board, tmp_path,
                      "--cmsis-nn", "off")


@needs_zephyr
def test_keyword_spotting_on_zephyr_cmsis_nn_bit_exact(cli: Callable[..., Result],
                                                       tflite_model: Callable[[str], Path],
                                                       tmp_path: Path) -> None:
    """keyword_spotting in zephyr_app on qemu_cortex_m3 with its convolutions, pooling, fully
    connected layer and softmax on CMSIS-NN (the tree of CMSIS_NN_SOURCE_DIR: this Zephyr
    has no cmsis-nn module)."""
    from test_cmsis_nn import tree
    root = tree()
    _zephyr_bit_exact(cli, _int8_model(tflite_model, "keyword_spotting"), "qemu_cortex_m3",
                      tmp_path, "--cmsis-nn", root)
    plan = json.loads((tmp_path / "b/model/tvmgen_keyword_spotting_plan.json").read_text())
    assert sum(o["library"] == "cmsis_nn" for o in plan["operators"]) == 12


@needs_zephyr
def test_anomaly_detection_on_native_sim_64_bit_exact(
        cli: Callable[..., Result], tflite_model: Callable[[str], Path], tmp_path: Path
        ) -> None:
    """anomaly_detection (int8 inside, float I/O; too big for qemu_cortex_m3's flash) with
    its fully connected layers on a woofles device (the kernels' int8 forms)."""
    model = _int8_model(tflite_model, "anomaly_detection")
    _zephyr_bit_exact(cli, model, "native_sim_64", tmp_path, "--device", "npu0:woofles",
                      "--place", "fully_connected=npu0")
    plan = json.loads((tmp_path / "b/model/tvmgen_anomaly_detection_plan.json").read_text())
    fcs = [o for o in plan["operators"] if o["op"] == "fully_connected"]
    assert len(fcs) == 10 and all(o["kernels"][0] == "woofles_fully_connected_s8"
                                  for o in fcs), fcs


@needs_zephyr
@pytest.mark.parametrize("board", ["native_sim_64", "qemu_cortex_m3"])
def test_keyword_spotting_convolutions_on_zephyr_bit_exact(
        board: str, cli: Callable[..., Result], tflite_model: Callable[[str], Path],
        tmp_path: Path) -> None:
    """keyword_spotting up to its last convolution, then a DEQUANTIZE (its 9 int8
    convolutions, per channel), in zephyr_app on both boards."""
    _need_tflite()
    from test_tflite_int8 import truncated
    model = tmp_path / "kws_convs.tflite"
    model.write_bytes(truncated(tflite_model("keyword_spotting.tflite"), 9))
    _zephyr_bit_exact(cli, model, board, tmp_path)


@needs_zephyr
def test_ztest_suite_under_twister(cli: Callable[..., Result], tmp_path: Path) -> None:
    need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    assert cli("new-device", "woofles", "--platform", "zephyr", "--zephyr-driver", "-o",
               str(tmp_path / "dev")).code == 0
    env = dict(os.environ, ZEPHYR_EXTRA_MODULES=str(tmp_path / "dev"),
               ZEPHYR_TOOLCHAIN_VARIANT=os.environ.get("ZEPHYR_TOOLCHAIN_VARIANT", "gnuarmemb"),
               GNUARMEMB_TOOLCHAIN_PATH=os.environ.get("GNUARMEMB_TOOLCHAIN_PATH", "/usr"))
    proc = subprocess.run([sys.executable, f"{ZEPHYR_BASE}/scripts/twister", "-T",
                           str(REPO / "zephyr_app/tests"), "-p", "native_sim_64", "-p",
                           "qemu_cortex_m3", "--inline-logs", "-O", str(tmp_path / "tw")],
                          capture_output=True, text=True, env=env, timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "2 of 2 test configurations passed" in out
    assert "6 test cases were executed" in out


def test_west_tvmdev_extension(tmp_path: Path) -> None:
    west = need_tool("west", "pip install west")
    # A west workspace whose manifest repository provides tvmdev's extension command.
    manifest = tmp_path / "ws/manifest"
    manifest.mkdir(parents=True)
    (manifest / "west.yml").write_text("manifest:\n  self:\n    west-commands: "
                                       "west-commands.yml\n")
    shutil.copy(REPO / "west-commands.yml", manifest / "west-commands.yml")
    (manifest / "tvmdev/cli").mkdir(parents=True)
    (manifest / "tvmdev/cli/west.py").write_text(
        "from tvmdev.cli.west import TvmdevCommand  # noqa: F401\n")
    # ZEPHYR_BASE would make west look for the workspace of that Zephyr tree instead.
    env = {k: v for k, v in os.environ.items() if k != "ZEPHYR_BASE"}
    run_ok([west, "init", "-l", str(manifest)], cwd=tmp_path / "ws", env=env)
    out = run_ok([west, "tvmdev", "list", "boards"], cwd=tmp_path / "ws", env=env).stdout
    assert "native_sim_64" in out and "mps2_an385" in out
    out = run_ok([west, "tvmdev", "new-device", "woofles", "--platform", "zephyr", "-o",
                  str(tmp_path / "dev")], cwd=tmp_path / "ws", env=env).stdout
    assert "create  src/device/woofles/zephyr.c" in out
    proc = subprocess.run([west, "tvmdev", "new-device", "int", "--platform", "zephyr"],
                          cwd=tmp_path / "ws", capture_output=True, text=True, env=env)
    assert proc.returncode == 1
    assert "tvmdev: device name 'int' is a C keyword" in proc.stderr


def test_zephyr_board_without_zephyr_base(cli: Callable[..., Result], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    need_tool("west", "pip install west")
    monkeypatch.delenv("ZEPHYR_BASE", raising=False)
    r = cli("run", str(REPO / "examples/mlp/mlp.yaml"), "--board", "native_sim_64",
            "--build-dir", str(tmp_path / "b"))
    assert r.code == 1
    assert r.err.splitlines()[0] == ("tvmdev: ZEPHYR_BASE is not set (board native_sim_64 "
                                     "builds with Zephyr)")


def test_model_cmake_carries_the_boards_kernel_tuning(tmp_path: Path) -> None:
    """zephyr_app compiles the portable kernels with the tuning their scratch was planned
    for (tvmgen_<model>.cmake's TVMGEN_DEFINES), whatever Zephyr's compiler defaults."""
    board = board_by_name("qemu_cortex_m3")
    job = prepare(load_model(REPO / "examples/mlp/mlp.yaml"), board, tmp_path / "b")
    assert job.compiled.tuning == board.tuning == Tuning(4, 4, 64, 4096)
    cmake = (tmp_path / "b/model/tvmgen_mlp.cmake").read_text()
    assert "set(TVMGEN_DEFINES\n  TVMK_GEMM_MR=4\n  TVMK_GEMM_NR=4\n  TVMK_GEMM_KC=64\n)" \
        in cmake
    assert "target_compile_definitions(app PRIVATE ${TVMGEN_DEFINES} ${TVMDEV_APP_DEFINES})" \
        in (REPO / "zephyr_app/CMakeLists.txt").read_text()
