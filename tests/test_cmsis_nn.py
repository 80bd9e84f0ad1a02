"""The cmsis_nn kernel library (runtime/kernels/cmsis_nn): int8 operators on Arm CMSIS-NN
for the Cortex-M boards that list it, bit-exact with TFLM's interpreter.

Without a CMSIS-NN tree (CMSIS_NN_SOURCE_DIR, v7.0.0 of ARM-software/CMSIS-NN) only the
data and the refusals are checked; the tests that need the tree skip, saying so (no
package registry has it). With it: the scratch each kernel gets is what CMSIS-NN's own
buffer-size functions say for the board's core, only the sources the kernels reach are
compiled, broadcasts go to the portable kernels, the generated CMakeLists.txt builds
(from the tree and by FetchContent), a buffer planned for another core is refused at run
time, and the MLPerf Tiny models and one-op models of every kernel are bit-exact with
TFLM on Cortex-M3 (CMSIS-NN's pure C), M4 (DSP) and M55 (Helium).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, Result, need_module, need_tool
from test_s8 import MODEL

from tvmdev.errors import TvmdevError
from tvmdev.load.board import all_boards, load_board
from tvmdev.load.kernel_tree import activate, board_library
from tvmdev.plan.hooks import cmsis_nn
from tvmdev.plan.kernels import portable_library

TREE = os.environ.get("CMSIS_NN_SOURCE_DIR")
# The boards of the issue: pure C, DSP and Helium.
CORES = {"mps2_an385": "c", "mps2_an386": "dsp", "mps3_an547": "mve"}


def tree() -> str:
    """The CMSIS-NN tree: skip, saying why, without one."""
    if not TREE:
        pytest.skip("CMSIS_NN_SOURCE_DIR is not set: the CMSIS-NN tree (ARM-software/"
                    "CMSIS-NN v7.0.0) is in no package registry; check it out and set it")
    return TREE


# --- data and refusals (no tree) ----------------------------------------------------------

def test_library_is_data_every_kernel_has_a_portable_fallback() -> None:
    lib = board_library("cmsis_nn")
    portable = portable_library().kernels
    assert {k.op for k in lib.kernels.kernels} == {
        "conv2d", "depthwise_conv2d", "fully_connected", "avgpool2d", "maxpool2d", "softmax",
        "add", "mul", "svdf", "pad", "sigmoid", "tanh", "conv2d_add"}
    for k in lib.kernels.kernels:
        int8 = {a: d[0] for a, d in k.arg_meta or ()}
        assert any(p.op == k.op and p.matches(int8) for p in portable), k.name
        # CMSIS-NN's functions, and the tables they read (arm_nntables.c's)
        assert k.calls and all(c.startswith("arm_") or c.endswith("_table_uint16")
                               for c in k.calls), k.name
        assert k.buffer is None or k.buffer in cmsis_nn.REQUESTS, k.name
    assert lib.tree.pin.tag == "v7.0.0"


def test_every_cortex_m_board_takes_cmsis_nn() -> None:
    arch = board_library("cmsis_nn").arch
    for board in all_boards().values():
        if board.cpu.startswith("cortex-m"):
            assert board.cpu in arch, board.name
            # last: tvmdev's own kernels (tvmdev_cm) come first where a board lists them
            assert board.libraries[-1] == "cmsis_nn", board.name
        else:
            assert board.libraries == (), board.name


def test_without_a_tree_int8_stays_portable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CMSIS_NN_SOURCE_DIR", raising=False)
    monkeypatch.delenv("ZEPHYR_MODULES", raising=False)
    active, notes = activate(("cmsis_nn",), "cortex-m4")
    assert active == () and notes == [
        "cmsis_nn: no tree (--cmsis-nn PATH or CMSIS_NN_SOURCE_DIR, v7.0.0); int8 operators "
        "use the portable kernels"]
    active, notes = activate(("cmsis_nn",), "cortex-m4", {"cmsis_nn": "off"})
    assert active == () and "off (--cmsis-nn off)" in notes[0]
    active, notes = activate(("cmsis_nn",), "cortex-a53")
    assert active == () and "not for CPU cortex-a53" in notes[0]


def fake_tree(root: Path, revision: str) -> Path:
    (root / "Include").mkdir(parents=True)
    (root / "Source").mkdir()
    (root / "Include/arm_nnfunctions.h").write_text(f" * $Revision:    {revision}\n")
    return root


@pytest.mark.parametrize("revision", ["V.19.1.0", "none"])
def test_a_tree_at_another_release_is_one_line(revision: str, cli: Callable[..., Result],
                                               tmp_path: Path) -> None:
    model = tmp_path / "m.yaml"
    model.write_text(MODEL)
    fake = fake_tree(tmp_path / "cmsis-nn", revision)
    if revision == "none":
        (fake / "Include/arm_nnfunctions.h").unlink()
    build = tmp_path / "build"
    r = cli("run", str(model), "--board", "mps2_an386", "--cmsis-nn", str(fake),
            "--build-dir", str(build))
    assert r.code == 1 and r.out == "", r.out
    first, hint = r.err.splitlines()
    shown = revision if revision != "none" else "unknown"
    assert first == (f"tvmdev: {fake}: --cmsis-nn: Include/arm_nnfunctions.h is revision "
                     f"{shown}, not V.18.0.0 of cmsis_nn v7.0.0, which tvmdev's kernels are "
                     "pinned to")
    assert hint.startswith("  hint: check out https://github.com/ARM-software/CMSIS-NN.git at")
    assert not build.exists()


def test_a_board_naming_an_unknown_library_is_one_line(tmp_path: Path) -> None:
    text = (REPO / "boards/mps2_an386.yaml").read_text()
    board = tmp_path / "b.yaml"
    board.write_text(text.replace("libraries: [tvmdev_cm, cmsis_nn]",
                                  "libraries: [cmsis_nn, arm_nn]"))
    line = next(i for i, s in enumerate(board.read_text().splitlines(), 1)
                if s.startswith("libraries:"))
    with pytest.raises(TvmdevError) as err:
        load_board(board)
    assert str(err.value) == f"{board}:{line}: libraries[1]: unknown kernel library 'arm_nn'"
    assert err.value.hint == "kernel libraries: cmsis_nn, tvmdev_cm"


# --- generation with the tree (no emulator) ------------------------------------------------

def plan_of(cli: Callable[..., Result], model: Path, board: str, out: Path,
            *extra: str) -> dict[str, object]:
    r = cli("aot", str(model), "--board", board, "--cmsis-nn", tree(), "-o", str(out), *extra)
    assert r.code == 0, r.out + r.err
    plans = list(out.glob("*_plan.json"))
    return dict(json.loads(plans[0].read_text()))


def _kws(tflite_model: Callable[[str], Path]) -> Path:
    need_module("tflite", "pip install -e '.[tflite]'")
    return tflite_model("keyword_spotting.tflite")


def test_scratch_is_cmsis_nns_own_answer_for_the_core(tflite_model: Callable[[str], Path],
                                                     cli: Callable[..., Result],
                                                     tmp_path: Path) -> None:
    from tvmdev.plan.tree_build import buffer_sizes
    model = _kws(tflite_model)
    lib = board_library("cmsis_nn")
    plans = {b: plan_of(cli, model, b, tmp_path / b) for b in CORES}
    for board in CORES:
        ops = plans[board]["operators"]
        assert isinstance(ops, list)
        for op in ops:  # tvmdev's own depthwise, fully connected and convolution kernels
            # (1x1, and general: the 10x4) come first on the M4 and the M55
            own = board != "mps2_an385" and op["op"] in (
                "depthwise_conv2d", "fully_connected", "conv2d")
            assert op["library"] == ("tvmdev_cm" if own else "cmsis_nn" if op["op"] not in (
                "quantize", "reshape", "dequantize") else "portable"), (board, op)
    # The same operators planned for the three cores: each gets what the probe of its
    # core's variant answers (depthwise and pooling buffers exist on DSP only; Helium's
    # convolutions want more than DSP's).
    by = {b: {op["name"]: (op["scratch"] or {}).get("bytes", 0)
              for op in plans[b]["operators"]} for b in CORES}  # type: ignore[union-attr]
    assert by["mps2_an385"] != by["mps2_an386"] != by["mps3_an547"]
    avgpool = next(op for op in plans["mps2_an386"]["operators"]  # type: ignore[union-attr]
                   if op["op"] == "avgpool2d")
    assert by["mps2_an385"][avgpool["name"]] == 0
    assert by["mps2_an386"][avgpool["name"]] == buffer_sizes(lib, Path(tree()),
                                                             ["avgpool dsp 1 64"])[0] > 0
    # The arena holds the scratch: the DSP plan is never smaller than the pure C one.
    arena = {b: plans[b]["arena"]["size"] for b in CORES}  # type: ignore[index]
    assert arena["mps2_an386"] >= arena["mps2_an385"]


def test_only_the_sources_the_kernels_reach_are_compiled(tflite_model: Callable[[str], Path],
                                                        cli: Callable[..., Result],
                                                        tmp_path: Path) -> None:
    # (the M3: on the M4, tvmdev_cm takes every convolution of keyword_spotting)
    plan = plan_of(cli, _kws(tflite_model), "mps2_an385", tmp_path / "o")
    (entry,) = plan["trees"]  # type: ignore[misc]
    sources = entry["sources"]
    assert entry["library"] == "cmsis_nn" and entry["tag"] == "v7.0.0"
    assert "Source/ConvolutionFunctions/arm_convolve_wrapper_s8.c" in sources
    assert "Source/SoftmaxFunctions/arm_softmax_s8.c" in sources
    every = sorted(str(p.relative_to(tree())) for p in Path(tree(), "Source").rglob("*.c"))
    assert len(sources) < len(every) / 3
    other_types = [s for s in sources if s.endswith("_s4.c")
                   or (s.endswith("_s16.c") and "_s8_" not in s)]
    assert not other_types and not [s for s in sources if "LSTM" in s or "SVDF" in s]
    # Written relative to the tree: no path of this machine in generated files.
    for f in (tmp_path / "o").rglob("*"):
        if f.is_file():
            assert tree() not in f.read_text(), f


def test_a_broadcast_goes_to_the_portable_kernel(cli: Callable[..., Result],
                                                  tmp_path: Path) -> None:
    need_module("tflite", "pip install -e '.[tflite]'")
    from s8_cases import merged
    from test_tflite_int8_ops import SUBSETS
    cases = SUBSETS["add"]() + SUBSETS["mul"]()  # every broadcast pair of shapes
    model, _ = merged(cases)
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    plan = plan_of(cli, path, "mps2_an386", tmp_path / "o")
    ops = plan["operators"]
    assert isinstance(ops, list) and len(ops) == len(cases)
    for case, op in zip(cases, ops, strict=True):
        shapes = [t.shape for t in case.inputs]
        broadcast = any(s != case.output.shape for s in shapes)
        if broadcast:
            assert op["library"] == "portable" and "broadcast" in op["declined"], op
        else:
            assert op["library"] == "cmsis_nn" and "declined" not in op, op
    assert {op["library"] for op in ops} == {"portable", "cmsis_nn"}


@pytest.mark.slow
def test_the_generated_cmakelists_builds(tflite_model: Callable[[str], Path],
                                         cli: Callable[..., Result], tmp_path: Path) -> None:
    """kernels/cmsis_nn/CMakeLists.txt builds for a Cortex-M4 from the tree, and from the
    pinned commit by FetchContent (from the tree's own git history, as a mirror)."""
    tree()
    need_tool("cmake", "apt install cmake")
    need_tool("arm-none-eabi-gcc", "scripts/test.sh installs it")
    out = tmp_path / "o"
    plan_of(cli, _kws(tflite_model), "mps2_an386", out)
    r = cli("new-device", "npu", "--platform", "posix", "-o", str(tmp_path / "dev"))
    assert r.code == 0, r.err
    toolchain = tmp_path / "arm.cmake"
    toolchain.write_text(
        "set(CMAKE_SYSTEM_NAME Generic)\nset(CMAKE_C_COMPILER arm-none-eabi-gcc)\n"
        "set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)\n"
        'set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 '
        '-mfloat-abi=hard -O2 -Wall -Wextra -Werror")\n')
    common = [f"-DCMAKE_TOOLCHAIN_FILE={toolchain}",
              f"-DTVM_DEVICE_INCLUDE_DIR={tmp_path / 'dev/include'}"]
    ways = {"tree": [f"-DCMSIS_NN_SOURCE_DIR={tree()}"]}
    if (Path(tree()) / ".git").exists():
        ways["fetch"] = [f"-DCMSIS_NN_GIT_REPOSITORY=file://{tree()}"]
    env = {k: v for k, v in os.environ.items() if k != "CMSIS_NN_SOURCE_DIR"}
    for way, flags in ways.items():
        build = tmp_path / way
        for cmd in (["cmake", "-S", str(out / "kernels/cmsis_nn"), "-B", str(build),
                     *common, *flags], ["cmake", "--build", str(build), "-j2"]):
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
            assert proc.returncode == 0, proc.stdout + proc.stderr
        nm = subprocess.run(["arm-none-eabi-nm", str(build / "libtvmk_cmsis_nn.a")],
                            capture_output=True, text=True, check=True).stdout
        # (keyword_spotting's convolutions and fully connected layer are tvmdev_cm's on
        # the M4)
        assert " T tvmk_cmsis_nn_softmax_s8" in nm
        assert " T arm_softmax_s8" in nm
        assert "arm_lstm" not in nm


# --- on the boards (emulated) ------------------------------------------------------------

MLPERF = ("anomaly_detection", "keyword_spotting", "image_classification",
          "visual_wake_words")


@pytest.mark.slow
@pytest.mark.parametrize("board", sorted(CORES))
@pytest.mark.parametrize("name", MLPERF)
def test_mlperf_tiny_bit_exact_on_cmsis_nn(name: str, board: str,
                                           tflite_model: Callable[[str], Path],
                                           cli: Callable[..., Result], tmp_path: Path) -> None:
    from test_tflite_int8 import MLPERF_TINY, run_bit_exact
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    model = tflite_model(f"{name}.tflite")
    assert run_bit_exact(cli, model, tmp_path, board,
                         extra=("--cmsis-nn", tree())) == MLPERF_TINY[name]
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    # tvmdev's own kernels (tvmdev_cm: dsp on the Cortex-M4, mve on the M55) take what
    # they serve first
    own = {"tvmdev_cm"}
    libs = {op["library"] for op in plan["operators"] if op["op"] in (
        "conv2d", "depthwise_conv2d", "fully_connected")}
    # CMSIS-NN serves the rest (on the M3, which has no tvmdev_cm, all of them; on the M4,
    # tvmdev_cm may take every one: anomaly_detection, visual_wake_words)
    assert libs <= own | {"cmsis_nn"}
    assert libs == {"cmsis_nn"} if board == "mps2_an385" else libs & own


def cmsis_nn_only(board: str, tmp_path: Path) -> str:
    """A copy of ``board`` whose only library is CMSIS-NN (no tvmdev_cm ahead of it)."""
    copy = tmp_path / f"{board}_cmsis_nn.yaml"
    copy.write_text((REPO / f"boards/{board}.yaml").read_text().replace(
        "libraries: [tvmdev_cm, cmsis_nn]", "libraries: [cmsis_nn]").replace(
        "library_flash: {tvmdev_cm: 32768}", "").replace("${runtime}", str(REPO / "runtime")))
    return str(copy)


@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps2_an386", "mps3_an547"])
@pytest.mark.parametrize("op", ["add", "mul", "avgpool2d", "maxpool2d", "softmax", "pad"])
def test_one_op_models_bit_exact_on_cmsis_nn(op: str, board: str, cli: Callable[..., Result],
                                             tmp_path: Path) -> None:
    from s8_cases import merged
    from test_tflite_int8_ops import SUBSETS, run_against_tflm
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    cases = SUBSETS[op]()
    model, arrays = merged(cases)
    # the board without tvmdev_cm, whose Helium ADD would otherwise come first
    outputs, _ = run_against_tflm(cli, model, arrays, tmp_path, "--board",
                                  cmsis_nn_only(board, tmp_path), "--cmsis-nn", tree())
    assert outputs == len(cases)
    plan = json.loads(next((tmp_path / "build/model").glob("*_plan.json")).read_text())
    assert "cmsis_nn" in {o["library"] for o in plan["operators"]}


@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps2_an386", "mps3_an547"])
@pytest.mark.parametrize("case", ["same_relu6", "valid_relu", "same_stride2", "mult1_none",
                                  "grouped"])
def test_convolutions_bit_exact_on_cmsis_nn(case: str, board: str, cli: Callable[..., Result],
                                            tmp_path: Path) -> None:
    """conv2d (3x3, strided, grouped) then depthwise (channel multiplier 1 and 2)."""
    from test_tflite_int8 import CONV_CASES, conv_model, run_bit_exact
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    model = tmp_path / f"{case}.tflite"
    model.write_bytes(conv_model(**CONV_CASES[case]))  # type: ignore[arg-type]
    run_bit_exact(cli, model, tmp_path, board, 4, extra=("--cmsis-nn", tree()))


@pytest.mark.slow
@pytest.mark.parametrize("case", ["act_NONE", "act_RELU6", "no_bias", "keep_num_dims_relu",
                                  "int8_io", "per_channel_weights"])
def test_fully_connected_bit_exact_on_cmsis_nn(case: str, cli: Callable[..., Result],
                                               tmp_path: Path) -> None:
    """Per tensor and per channel, with and without bias, on Helium (where the kernel's
    buffer holds the weights' row sums)."""
    from test_tflite_int8 import FC_CASES, fc_model, run_bit_exact
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    model = tmp_path / f"{case}.tflite"
    model.write_bytes(fc_model(**FC_CASES[case]))  # type: ignore[arg-type]
    run_bit_exact(cli, model, tmp_path, "mps3_an547", 3, extra=("--cmsis-nn", tree()))


@pytest.mark.slow
def test_a_buffer_planned_for_another_core_is_refused(tflite_model: Callable[[str], Path],
                                                      cli: Callable[..., Result],
                                                      tmp_path: Path) -> None:
    """A board that claims a Cortex-M3 (pure C: average pooling needs no buffer) but
    compiles for a Cortex-M4 (DSP: it needs one): the kernel asks CMSIS-NN again on the
    core and returns TVM_DEVICE_ERR_INVALID instead of overrunning its scratch."""
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    text = (REPO / "boards/mps2_an386.yaml").read_text()
    board = tmp_path / "mislabelled.yaml"
    board.write_text(text.replace("cpu: cortex-m4", "cpu: cortex-m3").replace(
        "${runtime}", str(REPO / "runtime")))
    model = _kws(tflite_model)
    r = cli("run", str(model), "--board", str(board), "--cmsis-nn", tree(), "--build-dir",
            str(tmp_path / "b"))
    assert r.code == 1, r.out + r.err
    assert "FAIL: the model returned TVM_DEVICE_ERR_INVALID (-4)" in r.out, r.out
    right = cli("run", str(model), "--board", "mps2_an386", "--cmsis-nn", tree(),
                "--build-dir", str(tmp_path / "ok"))
    assert right.code == 0 and right.out.rstrip().endswith("PASS"), right.out


@pytest.mark.slow
def test_keyword_spotting_names_its_kernels(tflite_model: Callable[[str], Path],
                                           cli: Callable[..., Result], tmp_path: Path) -> None:
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    r = cli("run", str(_kws(tflite_model)), "--board", "mps2_an386", "--cmsis-nn", tree(),
            "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    lines = r.out.splitlines()
    # tvmdev_cm (tvmdev's own, ahead of CMSIS-NN on the M4) takes the convolutions (the
    # 10x4 on its general kernel, the 1x1s), the depthwise ones and the fully connected one.
    assert lines[1] == ("kernels: portable 3 (quantize, reshape, dequantize), tvmdev_cm 10 "
                        "(conv2d 5, depthwise_conv2d 4, fully_connected), cmsis_nn 2 "
                        "(avgpool2d, softmax)")
    table = [ln.split() for ln in lines if ln[:1].isdigit()]
    assert len(table) == 15
    assert {row[4] for row in table if row[2] == "conv2d"} == {"tvmk_cm_conv2d_s8"}
    # inspect counts CMSIS-NN's code (the plan's tree sources) as the kernels'.
    found = cli("inspect", str(tmp_path / "b/keyword_spotting.elf"), "--model",
                str(tmp_path / "b"), "--json")
    assert found.code == 0, found.out + found.err
    report = json.loads(found.out)
    assert report["kernels"]["unexpected"] == [] and report["kernels"]["missing"] == []
    text = {c: v["text"] for c, v in report["footprint"].items()}
    assert text["kernels"] > 10_000 > text["rest"], text


def test_list_kernels_shows_a_boards_libraries(cli: Callable[..., Result]) -> None:
    r = cli("list", "kernels", "--board", "mps2_an386", "--json")
    assert r.code == 0, r.err
    rows = json.loads(r.out)
    board = [row for row in rows if row["level"] == "board"]
    assert {row["kernel"] for row in board} == {
        k.name for lib in ("tvmdev_cm", "cmsis_nn") for k in board_library(lib).kernels.kernels}
    conv = [row["kernel"] for row in rows if row["op"] == "conv2d"]
    assert conv.index("tvmk_cmsis_nn_conv2d_s8") < conv.index("tvmk_conv2d_s8")
    host = json.loads(cli("list", "kernels", "--board", "host", "--json").out)
    assert not [row for row in host if row["level"] == "board"]


@pytest.mark.parametrize("revision", ["V.18.0.0", "V.19.1.0"])
def test_a_zephyr_workspace_module_is_the_tree_at_the_pin(revision: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """Zephyr boards take the cmsis-nn module of the Zephyr tree's module list (west.yml),
    when it is at the pin; another release is passed over (the kernels are written for
    v7.0.0), and firmware boards never look."""
    monkeypatch.delenv("CMSIS_NN_SOURCE_DIR", raising=False)
    monkeypatch.delenv("ZEPHYR_MODULES", raising=False)
    (tmp_path / "zephyr").mkdir()
    (tmp_path / "zephyr/west.yml").write_text(
        "manifest:\n  projects:\n    - name: cmsis\n      path: modules/hal/cmsis\n"
        "    - name: cmsis-nn\n      revision: abc\n      path: modules/lib/cmsis-nn\n")
    module = fake_tree(tmp_path / "modules/lib/cmsis-nn", revision)
    monkeypatch.setenv("ZEPHYR_BASE", str(tmp_path / "zephyr"))
    active, notes = activate(("cmsis_nn",), "cortex-m3", zephyr=True)
    if revision == "V.18.0.0":
        assert [a.root for a in active] == [module.resolve()] and notes == []
    else:
        assert active == () and "no tree" in notes[0]
    assert activate(("cmsis_nn",), "cortex-m3")[0] == ()


WEIGHTS_AS_INPUT = """\
name: fcw
inputs:
  x: {shape: [2, 40], dtype: float32}
  w: {shape: [24, 40], dtype: int8, quant: {scale: [0.01], zero_point: [0]}}
outputs:
  y: {shape: [2, 24], dtype: float32}
tensors:
  xq: {dtype: int8, quant: {scale: [0.02], zero_point: [3]}}
  yq: {dtype: int8, quant: {scale: [0.05], zero_point: [-5]}}
constants:
  b: {shape: [24], dtype: int32, values: [@B@]}
operators:
  - {name: q, op: quantize, inputs: [x], outputs: [xq]}
  - {name: fc, op: fully_connected, inputs: [xq, w, b], outputs: [yq], attrs: {activation: RELU}}
  - {name: dq, op: dequantize, inputs: [yq], outputs: [y]}
""".replace("@B@", ", ".join(str(v) for v in range(-300, 300, 25)))


@pytest.mark.slow
@pytest.mark.parametrize("weights", ["input", "constant"])
def test_helium_fully_connected_row_sums(weights: str, cli: Callable[..., Result],
                                         tmp_path: Path) -> None:
    """On Helium, CMSIS-NN's fully connected kernel takes its weights' row sums: computed
    at generation time for constant weights (kernel_sums in flash, no scratch), by
    arm_vector_sum_s8 into planned scratch for weights that are a model input. (A board
    without tvmdev_cm, whose fully connected kernel takes constant weights first.)"""
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    board = tmp_path / "an547_cmsis_nn.yaml"
    board.write_text((REPO / "boards/mps3_an547.yaml").read_text().replace(
        "libraries: [tvmdev_cm, cmsis_nn]", "libraries: [cmsis_nn]").replace(
        "${runtime}", str(REPO / "runtime")))
    text = WEIGHTS_AS_INPUT
    if weights == "constant":
        values = ", ".join(str((i * 37) % 255 - 127) for i in range(24 * 40))
        text = text.replace("  w: {shape: [24, 40], dtype: int8, quant: {scale: [0.01], "
                            "zero_point: [0]}}\n", "").replace(
            "constants:\n", "constants:\n  w: {shape: [24, 40], dtype: int8, quant: "
            f"{{scale: [0.01], zero_point: [0]}}, values: [{values}]}}\n")
    model = tmp_path / "fcw.yaml"
    model.write_text(text)
    r = cli("run", str(model), "--board", str(board), "--cmsis-nn", tree(), "--build-dir",
            str(tmp_path / "b"))
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    assert "max abs err 0, max rel err 0" in r.out
    plan = json.loads((tmp_path / "b/model/tvmgen_fcw_plan.json").read_text())
    fc = next(o for o in plan["operators"] if o["name"] == "fc")
    executor = (tmp_path / "b/model/tvmgen_fcw.c").read_text()
    assert fc["library"] == "cmsis_nn"
    if weights == "constant":
        assert fc["scratch"] is None and "tvmgen_fcw_params_fc_kernel_sums" in executor
    else:  # no row sums in flash: the kernel sums into planned scratch
        assert fc["scratch"]["bytes"] > 0 and ".kernel_sums = NULL," in executor
        assert "tvmgen_fcw_params_fc_kernel_sums" not in executor


def padded_model(op: str, x: list[int], w: list[int], y: list[int], pads: list[int],
                 strides: list[int]) -> str:
    """A one-operator int8 model (seeded weights) with explicit pads [top, left, bottom,
    right], as ONNX and tvmdev's YAML can give them."""
    import numpy as np
    r = np.random.default_rng(9)
    wv = r.integers(-127, 128, w).ravel().tolist()
    bias = r.integers(-400, 400, y[-1]).tolist()
    attrs = (f"{{layout: NHWC, pads: {pads}, strides: {strides}, group: 1}}" if op == "conv2d"
             else f"{{pads: {pads}, strides: {strides}, depth_multiplier: 1}}")
    return f"""\
name: padded
inputs:
  x: {{shape: {x}, dtype: int8, quant: {{scale: [0.02], zero_point: [3]}}}}
outputs:
  y: {{shape: {y}, dtype: int8, quant: {{scale: [0.5], zero_point: [-5]}}}}
constants:
  w: {{shape: {w}, dtype: int8, values: {wv}, quant: {{scale: [0.01], zero_point: [0]}}}}
  b: {{shape: [{y[-1]}], dtype: int32, values: {bias}}}
operators:
  - {{name: k, op: {op}, inputs: [x, w, b], outputs: [y], attrs: {attrs}}}
"""


# (op, input, weights, output, pads, strides, the boards whose CMSIS-NN path cannot take
# the padding); every case runs on all three cores.
PADDED = {
    # VALID, stride 2: the last window stops one column short of the input's end.
    "conv_1xn_valid_short": ("conv2d", [1, 1, 10, 4], [8, 1, 3, 4], [1, 1, 4, 8],
                             [0, 0, 0, 0], [1, 2], {"mps3_an547"}),
    "conv_1xn_valid_s3": ("conv2d", [1, 1, 10, 4], [8, 1, 2, 4], [1, 1, 3, 8],
                          [0, 0, 0, 0], [1, 3], {"mps3_an547"}),
    "conv_1xn_right_only": ("conv2d", [1, 1, 10, 4], [8, 1, 3, 4], [1, 1, 10, 8],
                            [0, 0, 0, 2], [1, 1], {"mps3_an547"}),
    # TFLite's SAME: the odd column of padding on the right.
    "conv_1xn_same": ("conv2d", [1, 1, 10, 4], [8, 1, 3, 4], [1, 1, 5, 8],
                      [0, 0, 0, 1], [1, 2], set()),
    "conv_1xn_pad_both_sides": ("conv2d", [1, 1, 10, 4], [8, 1, 3, 4], [1, 1, 5, 8],
                                [0, 1, 0, 1], [1, 2], {"mps3_an547"}),
    "dw_3x3_right_2": ("depthwise_conv2d", [1, 5, 6, 4], [1, 3, 3, 4], [1, 5, 6, 4],
                       [1, 0, 1, 2], [1, 1], {"mps2_an385", "mps2_an386"}),
    "dw_3x3_same": ("depthwise_conv2d", [1, 5, 6, 4], [1, 3, 3, 4], [1, 5, 6, 4],
                    [1, 1, 1, 1], [1, 1], set()),
}


@pytest.mark.slow
@pytest.mark.parametrize("board", sorted(CORES))
@pytest.mark.parametrize("case", sorted(PADDED))
def test_padding_a_fast_path_cannot_take_goes_portable(case: str, board: str,
                                                       cli: Callable[..., Result],
                                                       tmp_path: Path) -> None:
    """CMSIS-NN's Helium 1xN convolution gets a VALID convolution that stops short, or a
    padding other than TFLite's SAME split, wrong (or fails); its 3x3 depthwise kernel off
    Helium reads past the row with two columns of right padding. tvmdev declines those to
    the portable kernel, and takes everything else to CMSIS-NN, exact either way.
    tvmdev_cm, ahead of CMSIS-NN on the M4 (all of these) and the M55 (the
    convolutions), takes them whatever the padding; CMSIS-NN's rule is then checked on
    the board without it."""
    need_tool("qemu-system-arm", "scripts/test.sh installs it")
    op, x, w, y, pads, strides, bad = PADDED[case]
    model = tmp_path / "padded.yaml"
    model.write_text(padded_model(op, x, w, y, pads, strides))

    def planned(where: str, build: str) -> dict[str, Any]:
        r = cli("run", str(model), "--board", where, "--cmsis-nn", tree(), "--build-dir",
                str(tmp_path / build))
        assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
        assert "largest difference 0 steps: bit-exact" in r.out, r.out
        (got,) = json.loads((tmp_path / build / "model/tvmgen_padded_plan.json"
                             ).read_text())["operators"]
        return dict(got)

    k = planned(board, "b")
    if board == "mps2_an386" or (board == "mps3_an547" and op == "conv2d"):
        assert k["library"] == "tvmdev_cm" and "declined" not in k, k
        if board == "mps2_an386":
            return
        k = planned(cmsis_nn_only(board, tmp_path), "b_cmsis_nn")
    if board in bad:
        assert k["library"] == "portable" and "padding" in k["declined"], k
    else:
        assert k["library"] == "cmsis_nn" and "declined" not in k, k
