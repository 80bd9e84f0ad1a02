"""Custom operators brought in a --kernels file (README 'Custom operators'): a TFLite
CUSTOM operator with flexbuffer options and an ONNX node of a custom domain, each run on
the host with the user's C kernel checked against the user's Python reference; the saved
outputs are checked once more against numpy here, with the params the test wrote into
the model, so a param decoded wrongly (which kernel and reference would share) fails.
onnxruntime cannot run an operator of an unknown domain, so the Python reference is the
check there. Every refusal is one line at the line of the file that must change."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, Result, need_module, need_tool, run_ok, tree

need_module("tflite", "pip install -e '.[tflite]'")

EXAMPLE = REPO / "examples/custom_op/kernels"
TANH = 28
CUSTOM = 32
X = np.random.default_rng(5).uniform(-1, 1, (2, 10)).astype(np.float32)


def _flex(options: dict[str, object]) -> bytes:
    from flatbuffers import flexbuffers
    return bytes(flexbuffers.Dumps(options))


def tflite_model(options: dict[str, object], width: int = 10, out: int = 8,
                 code: str = "MovingAverage") -> bytes:
    """x [2, width] -> CUSTOM code (options) -> [2, out] -> TANH -> y."""
    from tflite_build import Graph, Op, T, build
    return build(Graph([T("x", [2, width]), T("avg", [2, out]), T("y", [2, out])],
                       [Op(CUSTOM, [0], [1], custom_code=code, custom_options=_flex(options)),
                        Op(TANH, [1], [2])], [0], [2]))


def expected(x: np.ndarray, window: int, scale: float, absolute: bool) -> np.ndarray:
    """The moving average written out here, loop by loop (not the example's reference)."""
    v = np.abs(x.astype(np.float64)) if absolute else x.astype(np.float64)
    cols = v.shape[-1] - window + 1
    y = np.array([[v[r, o:o + window].sum() / window for o in range(cols)]
                  for r in range(v.shape[0])])
    return np.tanh(y * scale)


def _kernels(tmp: Path, **edits: str) -> Path:
    """A copy of the example's files, with ``ops.yaml`` edited (old text -> new)."""
    folder = tmp / "ops"
    if not folder.exists():
        shutil.copytree(EXAMPLE, folder)
    text = (EXAMPLE / "ops.yaml").read_text()
    for old, new in edits.items():
        assert old in text, old
        text = text.replace(old, new)
    (folder / "ops.yaml").write_text(text)
    return folder / "ops.yaml"


def _run(cli: Callable[..., Result], tmp: Path, model: Path, kernels: Path, *extra: str
         ) -> Result:
    np.save(tmp / "x.npy", X)
    return cli("run", str(model), "--kernels", str(kernels), "--inputs", str(tmp),
               "--build-dir", str(tmp / "build"), "--save-outputs", str(tmp / "out"), *extra)


def test_tflite_custom_op_runs_on_host(cli: Callable[..., Result], tmp_path: Path) -> None:
    need_tool("gcc")
    model = tmp_path / "m.tflite"
    model.write_bytes(tflite_model({"window": 3, "scale": 0.5, "absolute": True,
                                    "unused": "a key no param reads"}))
    r = _run(cli, tmp_path, model, _kernels(tmp_path))
    assert r.code == 0, r.out + r.err
    assert "moving_average  -       moving_average_f32" in r.out and "PASS" in r.out
    y = np.load(tmp_path / "out/y.npy")
    np.testing.assert_allclose(y, expected(X, 3, 0.5, True), rtol=1e-5, atol=1e-6)
    header = (tmp_path / "build/model/tvmgen_op_moving_average.h").read_text()
    assert "int32_t window;\n    float scale;\n    bool absolute;" in header
    assert "void *scratch;" in header


@pytest.mark.slow
def test_a_wrong_kernel_fails_the_run(cli: Callable[..., Result], tmp_path: Path) -> None:
    """The check can fail: a kernel that forgets the scale differs from the reference."""
    need_tool("gcc")
    kernels = _kernels(tmp_path)
    c = kernels.parent / "moving_average.c"
    c.write_text(c.read_text().replace(" * params->scale;", ";"))
    model = tmp_path / "m.tflite"
    model.write_bytes(tflite_model({"window": 3, "scale": 0.5}))
    r = _run(cli, tmp_path, model, kernels)
    assert r.code == 1 and "FAIL: outputs differ from the reference: y" in r.out


@pytest.mark.slow
def test_onnx_custom_domain_op_runs_on_host(cli: Callable[..., Result], tmp_path: Path
                                            ) -> None:
    need_module("onnx", "pip install -e '.[onnx]'")
    need_tool("gcc")
    from onnx import helper
    from onnx_build import model, tensor
    node = helper.make_node("MovingAverage", ["x"], ["avg"], domain="com.example", window=4,
                            absolute=0, scale=3.0)
    tanh = helper.make_node("Tanh", ["avg"], ["y"])
    path = tmp_path / "m.onnx"
    path.write_bytes(model([node, tanh], [tensor("x", [2, 10])], [tensor("y", [2, 7])],
                           domains={"com.example": 1}))
    r = _run(cli, tmp_path, path, _kernels(tmp_path))
    assert r.code == 0, r.out + r.err
    np.testing.assert_allclose(np.load(tmp_path / "out/y.npy"), expected(X, 4, 3.0, False),
                               rtol=1e-5, atol=1e-6)


SMOOTH = """\
name: smooth
inputs:
  x: {shape: [2, 16], dtype: float32}
outputs:
  y: {shape: [2, 12], dtype: float32}
operators:
  - {name: avg, op: moving_average, inputs: [x], outputs: [a],
     attrs: {window: 5, scale: 2.0, absolute: 1}}
  - {name: act, op: tanh, inputs: [a], outputs: [y]}
"""


def test_model_description_and_aot(cli: Callable[..., Result], tmp_path: Path) -> None:
    """A model description calls a custom op too; aot writes its header and plans its
    scratch (a row of 16 floats)."""
    (tmp_path / "smooth.yaml").write_text(SMOOTH)
    r = cli("aot", str(tmp_path / "smooth.yaml"), "--kernels", str(EXAMPLE / "ops.yaml"),
            "-o", str(tmp_path / "aot"))
    assert r.code == 0, r.err
    assert "kernels: moving_average_f32, tvmk_tanh_f32" in r.out
    header = (tmp_path / "aot/tvmgen_op_moving_average.h").read_text()
    assert "struct moving_average_params {" in header
    assert ("int32_t moving_average_f32(const float *X, float *Y, const struct "
            "moving_average_params *params,") in header
    executor = (tmp_path / "aot/tvmgen_smooth.c").read_text()
    assert "moving_average_params.scratch = ws + 96; /* 64 bytes */" in executor


@pytest.mark.slow
def test_example_model_runs(cli: Callable[..., Result], tmp_path: Path) -> None:
    """examples/custom_op as its README says: make_model.py, then tvmdev run."""
    need_tool("gcc")
    run_ok([sys.executable, str(EXAMPLE.parent / "make_model.py"), str(tmp_path / "s.tflite")])
    r = cli("run", str(tmp_path / "s.tflite"), "--kernels", str(EXAMPLE / "ops.yaml"),
            "--build-dir", str(tmp_path / "build"))
    assert r.code == 0 and "PASS" in r.out, r.out + r.err


@pytest.mark.slow
def test_custom_op_on_cortex_m4(cli: Callable[..., Result], tmp_path: Path) -> None:
    need_tool("arm-none-eabi-gcc")
    need_tool("qemu-system-arm")
    model = tmp_path / "m.tflite"
    model.write_bytes(tflite_model({"window": 3, "scale": 0.5, "absolute": True}))
    r = _run(cli, tmp_path, model, _kernels(tmp_path), "--board", "mps2_an386")
    assert r.code == 0, r.out + r.err
    np.testing.assert_allclose(np.load(tmp_path / "out/y.npy"), expected(X, 3, 0.5, True),
                               rtol=1e-5, atol=1e-6)


ENTRY_ERRORS = [
    ({"  shape:": "  shape_rule:"}, "ops.yaml:16: unknown key 'shape_rule'"),
    ({"op: moving_average": "op: relu"}, "ops.yaml:6: op relu is already known to tvmdev"),
    ({"{custom_code: MovingAverage}": "{builtin: ADD}"},
     "ops.yaml:7: TFLite builtin ADD is already an operator tvmdev maps"),
    ({"{custom_code: MovingAverage}": "{builtin: NOT_AN_OP}"},
     "ops.yaml:7: NOT_AN_OP is not a TFLite builtin operator"),
    ({"{domain: com.example, op_type: MovingAverage}": "{op_type: Relu}"},
     "ops.yaml:8: ONNX Relu is already an operator tvmdev maps"),
    ({"[moving_average.c]": "[nope.c]"},
     "ops.yaml:21: source 'nope.c' of moving_average_f32 does not exist"),
    ({"kernel_name: moving_average_f32": "kernel_name: moving_avg_f32"},
     "ops.yaml:20: no source of kernel moving_avg_f32 defines it (moving_average.c)"),
    ({"scale: {type: float, default: 1.0}": "scale: {type: float, default: fast}"},
     "ops.yaml:13: param scale: its default is string 'fast', not a float"),
    ({"window: int32 ": "window: long "}, "ops.yaml:12: param window: unknown type 'long'"),
    ({'shape: "(*X[:-1], X[-1] - window + 1)"': 'shape: "X.shape"'},
     "ops.yaml:16: shape: Attribute is not part of the rule language (+ - * // %, "
     "comparisons, and/or/not, if-else, [i], [i:j], *X, min, max, len, numel)"),
    ({'shape: "(*X[:-1], X[-1] - window + 1)"': 'shape: "(X[0], width)"'},
     "ops.yaml:16: shape: unknown name 'width' (names: X, absolute, scale, window)"),
    ({"moving_average_ref.py:": "missing_ref.py:"},
     "ops.yaml:17: reference file 'missing_ref.py' does not exist"),
    ({"  inputs: [X]\n": ""}, "ops.yaml:6: custom op moving_average needs 'inputs'"),
    ({"op: moving_average": "op: tvmk_average"},
     "ops.yaml:6: custom op name tvmk_average starts with tvmk_, which tvmdev keeps for its "
     "own C names"),
]


@pytest.mark.parametrize("edits,message", ENTRY_ERRORS,
                         ids=[m.split(": ", 1)[1][:40] for _, m in ENTRY_ERRORS])
def test_bad_entry(edits: dict[str, str], message: str, cli: Callable[..., Result],
                   tmp_path: Path) -> None:
    kernels = _kernels(tmp_path, **edits)
    model = tmp_path / "m.tflite"
    model.write_bytes(tflite_model({"window": 3}))
    before = tree(tmp_path)
    r = cli("aot", str(model), "--kernels", str(kernels), "-o", str(tmp_path / "aot"),
            cwd=tmp_path)
    assert r.code == 1
    assert r.err.splitlines()[0] == f"tvmdev: {kernels.parent}/{message}"
    assert r.err.splitlines()[1].startswith("  hint: ")
    assert "Traceback" not in r.err
    assert tree(tmp_path) == before


MODEL_ERRORS = [
    ({"window": 3.5}, 10, 8, "ops.yaml:12: param window: m.tflite operator 0 "
     "(CUSTOM:MovingAverage) gives float 3.5, not an int32"),
    ({"window": 3, "absolute": "yes"}, 10, 8, "ops.yaml:14: param absolute: m.tflite "
     "operator 0 (CUSTOM:MovingAverage) gives string 'yes', not a bool"),
    ({"window": 300}, 10, 8, "ops.yaml:15: custom op moving_average: require "
     "'window <= X[-1]' is false for X [2, 10], window 300, scale 1.0, absolute 0"),
    ({"scale": 2.0}, 10, 8, "ops.yaml:12: param window: m.tflite operator 0 "
     "(CUSTOM:MovingAverage) does not give it and it has no default"),
    ({"window": 3}, 10, 7, "m.tflite: operator 0 CUSTOM:MovingAverage 'avg': tvmdev infers "
     "[2, 8] where the model declares [2, 7]"),
]


@pytest.mark.parametrize("options,width,out,message", MODEL_ERRORS,
                         ids=[m.split(": ", 1)[1][:40] for *_, m in MODEL_ERRORS])
def test_bad_model_for_entry(options: dict[str, object], width: int, out: int, message: str,
                             cli: Callable[..., Result], tmp_path: Path) -> None:
    kernels = _kernels(tmp_path)
    (tmp_path / "m.tflite").write_bytes(tflite_model(options, width, out))
    r = cli("aot", "m.tflite", "--kernels", str(kernels), "-o", "aot", cwd=tmp_path)
    assert r.code == 1
    where = "" if message.startswith("m.tflite") else f"{kernels.parent}/"
    assert r.err.splitlines()[0] == f"tvmdev: {where}{message}"
    assert "Traceback" not in r.err


def test_shape_rule_failing_names_the_operands(cli: Callable[..., Result], tmp_path: Path
                                               ) -> None:
    kernels = _kernels(tmp_path, **{'shape: "(*X[:-1], X[-1] - window + 1)"':
                                    'shape: "(X[0], X[2] - window + 1)"'})
    (tmp_path / "m.tflite").write_bytes(tflite_model({"window": 3}))
    r = cli("aot", "m.tflite", "--kernels", str(kernels), "-o", "aot", cwd=tmp_path)
    assert r.code == 1
    assert r.err.splitlines() == [
        f"tvmdev: {kernels.parent}/ops.yaml:16: custom op moving_average: shape rule "
        "'(X[0], X[2] - window + 1)' fails for X [2, 10], window 3, scale 1.0, absolute 0: "
        "index 2 is out of range for a shape of 2 dims",
        "  hint: the rule must hold for every shape the model gives the operator: fix the "
        "rule or the model"]


def test_custom_op_no_kernels_file_covers(cli: Callable[..., Result], tmp_path: Path) -> None:
    (tmp_path / "m.tflite").write_bytes(tflite_model({"window": 3}, code="FancyOp"))
    r = cli("aot", "m.tflite", "-o", "aot", cwd=tmp_path)
    assert r.code == 1
    assert r.err.splitlines() == [
        "tvmdev: m.tflite: 1 unsupported operator: CUSTOM:FancyOp x1 (first: operator 0 "
        "'avg')",
        "  hint: custom operators need their kernels: give --kernels FILE with an entry "
        "'tflite: {custom_code: FancyOp}' (README 'Custom operators')"]


@pytest.mark.slow
def test_reference_without_the_function(cli: Callable[..., Result], tmp_path: Path) -> None:
    need_tool("gcc")
    kernels = _kernels(tmp_path, **{"moving_average_ref.py:moving_average":
                                    "moving_average_ref.py:smooth"})
    model = tmp_path / "m.tflite"
    model.write_bytes(tflite_model({"window": 3}))
    r = _run(cli, tmp_path, model, kernels)
    assert r.code == 1
    assert r.err.splitlines()[0] == (
        f"tvmdev: {kernels.parent}/ops.yaml:17: custom op moving_average: "
        "moving_average_ref.py has no function 'smooth'")


def test_two_entries_claiming_one_code(cli: Callable[..., Result], tmp_path: Path) -> None:
    kernels = _kernels(tmp_path)
    other = kernels.parent / "more.yaml"
    other.write_text((EXAMPLE / "ops.yaml").read_text().replace(
        "op: moving_average", "op: moving_mean").replace("moving_average_f32",
                                                           "moving_mean_f32"))
    (kernels.parent / "moving_average.c").write_text(
        (EXAMPLE / "moving_average.c").read_text() + "\nint32_t moving_mean_f32(void) {\n"
        "    return 0;\n}\n")
    (tmp_path / "m.tflite").write_bytes(tflite_model({"window": 3}))
    r = cli("aot", "m.tflite", "--kernels", str(kernels), "--kernels", str(other), "-o",
            "aot", cwd=tmp_path)
    assert r.code == 1
    assert r.err.splitlines()[0] == (
        f'tvmdev: {other}:6: TFLite custom "MovingAverage" is claimed by custom ops '
        f"moving_average ({kernels}:6) and moving_mean")


@pytest.mark.slow
def test_tflite_builtin_tvmdev_lacks(cli: Callable[..., Result], tmp_path: Path) -> None:
    """CUMSUM as a custom op: its params read from CumsumOptions, its constant axis an
    int32 argument of the kernel."""
    need_tool("gcc")
    from tflite_build import Graph, Op, T, build
    x = np.random.default_rng(9).uniform(-1, 1, (2, 5, 3)).astype(np.float32)
    g = Graph([T("x", [2, 5, 3]), T("axis", [1], np.array([1], np.int32), type=2),
               T("y", [2, 5, 3])],
              [Op(128, [0, 1], [2], options=("CumsumOptions", {"Exclusive": True,
                                                                "Reverse": True}))], [0], [2])
    (tmp_path / "m.tflite").write_bytes(build(g))
    np.save(tmp_path / "x.npy", x)
    r = cli("run", str(tmp_path / "m.tflite"), "--kernels",
            str(REPO / "tests/custom_ops/cumsum.yaml"), "--inputs", str(tmp_path),
            "--build-dir", str(tmp_path / "build"), "--save-outputs", str(tmp_path / "out"))
    assert r.code == 0, r.out + r.err
    want = np.zeros((2, 5, 3))
    for k in range(5):  # exclusive and reversed: the sum of the values after k
        want[:, k, :] = x[:, k + 1:, :].astype(np.float64).sum(axis=1)
    np.testing.assert_allclose(np.load(tmp_path / "out/y.npy"), want, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_int8_custom_op_reads_zero_points(cli: Callable[..., Result], tmp_path: Path) -> None:
    """int8 tensors in, int8 out: the zero points reach the kernel's params, and the int8
    output is compared exactly."""
    need_tool("gcc")
    from tflite_build import Graph, Op, T, build
    q_in, q_out = ([0.1], [3]), ([0.1], [-5])
    g = Graph([T("x", [4, 8], type=9, quant=q_in), T("y", [4, 8], type=9, quant=q_out)],
              [Op(CUSTOM, [0], [1], custom_code="ShiftS8", custom_options=_flex(
                  {"offset": 20}))], [0], [1])
    (tmp_path / "m.tflite").write_bytes(build(g))
    x = np.arange(-128, 128, 8, dtype=np.int8).reshape(4, 8)
    np.save(tmp_path / "x.npy", x)
    r = cli("run", str(tmp_path / "m.tflite"), "--kernels",
            str(REPO / "tests/custom_ops/offset.yaml"), "--inputs", str(tmp_path),
            "--build-dir", str(tmp_path / "build"), "--save-outputs", str(tmp_path / "out"))
    assert r.code == 0, r.out + r.err
    y = np.load(tmp_path / "out/y.npy")
    assert y.dtype == np.int8
    np.testing.assert_array_equal(y, np.clip(x.astype(int) + 12, -128, 127))


@pytest.mark.slow
def test_host_reference_on_the_host(cli: Callable[..., Result], tmp_path: Path) -> None:
    """reference: host runs the C kernel built for this machine (under reference/ of the
    build folder); the outputs are checked here against numpy."""
    need_tool("gcc")
    kernels = _kernels(tmp_path, **{"moving_average_ref.py:moving_average": "host"})
    model = tmp_path / "m.tflite"
    model.write_bytes(tflite_model({"window": 3, "scale": 0.5, "absolute": True}))
    r = _run(cli, tmp_path, model, kernels)
    assert r.code == 0, r.out + r.err
    assert (tmp_path / "build/reference/moving_average_1/reference.out").is_file()
    np.testing.assert_allclose(np.load(tmp_path / "out/y.npy"), expected(X, 3, 0.5, True),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_host_reference_catches_a_kernel_that_differs_on_the_board(
        cli: Callable[..., Result], tmp_path: Path) -> None:
    """On Cortex-M the host's build of the kernel is the reference: a kernel that computes
    otherwise on Arm fails the run."""
    need_tool("arm-none-eabi-gcc")
    need_tool("qemu-system-arm")
    kernels = _kernels(tmp_path, **{"moving_average_ref.py:moving_average": "host"})
    c = kernels.parent / "moving_average.c"
    c.write_text(c.read_text().replace(
        "            Y[r * out + o] = sum / (float)params->window * params->scale;\n",
        "            Y[r * out + o] = sum / (float)params->window * params->scale;\n"
        "#ifdef __arm__\n            Y[r * out + o] += 0.25f;\n#endif\n"))
    model = tmp_path / "m.tflite"
    model.write_bytes(tflite_model({"window": 3}))
    r = _run(cli, tmp_path, model, kernels, "--board", "mps2_an386")
    assert r.code == 1 and "FAIL: outputs differ from the reference: y" in r.out, r.out
