"""The TFLite front end: real models (tests/models.py) imported, run on the host and
compared with the TFLM interpreter; bad models refused with one line, nothing written."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import tflm_ref
from conftest import Result, need_module, need_tool
from tflite_cases import CASES, _conv, _dw, _pool
from tflite_cases import model as cases_model

from tvmdev.run.compare import ATOL, RTOL

need_module("tflite", "pip install -e '.[tflite]'")

# Each float32 model with its inputs' natural range (for seeded random inputs).
RANGES = {
    "sine_float.tflite": (0.0, 2 * math.pi),
    "autoencoder_example.float32.tflite": (-1.0, 1.0),
    "image_example1.float32.tflite": (0.0, 1.0),
}
# Softmax outputs saturate on these inputs (image_example1 gives [1e-18, 1, 1e-12]), so
# their logs are compared too: log-softmax is the logits less one constant, so this checks
# every class's logit, which the absolute tolerance alone would not.
LOG_COMPARED = {"image_example1.float32.tflite"}
LOG_ATOL = 1e-3  # on logits of magnitude ~40


def run_against_tflm(cli: Callable[..., Result], model: Path, tmp_path: Path,
                     *extra: str) -> float:
    """Run ``model`` with ``tvmdev run`` (``extra``: --board, placement) on seeded inputs
    in its natural range and compare every output with TFLM's; the largest difference."""
    from tvmdev.frontends.importer import import_file
    m = import_file(model).to_model()
    low, high = RANGES[model.name]
    rng = np.random.default_rng(7)
    inputs = []
    (tmp_path / "in").mkdir()
    for iname in m.inputs:
        x = rng.uniform(low, high, m.tensors[iname].shape).astype(np.float32)
        np.save(tmp_path / "in" / f"{iname}.npy", x)
        inputs.append(x)
    r = cli("run", str(model), "--inputs", str(tmp_path / "in"), "--save-outputs",
            str(tmp_path / "out"), "--build-dir", str(tmp_path / "build"), *extra)
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS")
    expected = tflm_ref.outputs(model.read_bytes(), inputs, len(m.outputs))
    got = [np.load(tmp_path / "out" / f"{o}.npy") for o in m.outputs]
    assert len(got) == len(expected)
    worst = 0.0
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, atol=ATOL, rtol=RTOL)
        if model.name in LOG_COMPARED:
            np.testing.assert_allclose(np.log(g), np.log(e), atol=LOG_ATOL, rtol=0)
        worst = max(worst, float(np.max(np.abs(g.astype(np.float64) - e))))
    return worst


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RANGES))
def test_matches_tflm(name: str, tflite_model: Callable[[str], Path],
                      cli: Callable[..., Result], tmp_path: Path) -> None:
    need_tool("gcc", "apt install gcc")
    model = tflite_model(name)
    r = cli("import", str(model), "-o", str(tmp_path / "imported"))
    assert r.code == 0, r.err
    run_against_tflm(cli, model, tmp_path)


# --- models built in the test --------------------------------------------------------

def _codes() -> dict[str, int]:
    import tflite
    return {k: v for k, v in vars(tflite.BuiltinOperator).items() if isinstance(v, int)}


def _every_converter() -> bytes:
    """FULLY_CONNECTED on a 3-D input, RELU, shape arithmetic feeding a RESHAPE, TRANSPOSE,
    ADD, MUL, LOGISTIC, TANH, SOFTMAX; two outputs."""
    from tflite_build import Graph, Op, T
    c = _codes()
    rng = np.random.default_rng(1)
    f = np.float32
    ts = [T("in:0", [2, 3, 4]), T("fc/w", [5, 4], rng.uniform(-1, 1, (5, 4)).astype(f)),
          T("fc/b", [5], rng.uniform(-1, 1, 5).astype(f)), T("fc;fused", [6, 5]),
          T("relu", [6, 5]), T("shape", [2], type=2), T("begin", [1], np.int32([0]), type=2),
          T("end", [1], np.int32([1]), type=2), T("one", [1], np.int32([1]), type=2),
          T("s1", [1], type=2), T("thirty", [1], np.int32([30]), type=2),
          T("packed", [2], type=2), T("flat", [1, 30]),
          T("perm", [2], np.int32([1, 0]), type=2), T("tr", [30, 1]),
          T("bias2", [1], np.float32([0.25])), T("added", [30, 1]), T("sq", [30, 1]),
          T("sig", [30, 1]), T("out/tanh", [30, 1]), T("out/soft", [1, 30])]
    ops = [Op(c["FULLY_CONNECTED"], [0, 1, 2], [3]), Op(c["RELU"], [3], [4]),
           Op(c["SHAPE"], [4], [5]), Op(c["STRIDED_SLICE"], [5, 6, 7, 8], [9]),
           Op(c["PACK"], [9, 10], [11]), Op(c["RESHAPE"], [4, 11], [12]),
           Op(c["TRANSPOSE"], [12, 13], [14]), Op(c["ADD"], [14, 15], [16]),
           Op(c["MUL"], [16, 16], [17]), Op(c["LOGISTIC"], [17], [18]),
           Op(c["TANH"], [18], [19]), Op(c["SOFTMAX"], [12], [20])]
    from tflite_build import build
    return build(Graph(ts, ops, [0], [19, 20]))


def test_import_every_converter(cli: Callable[..., Result], tmp_path: Path) -> None:
    model = tmp_path / "every.tflite"
    model.write_bytes(_every_converter())
    r = cli("import", str(model), "-o", str(tmp_path / "o"), "--device", "npu0:woofles",
            "--place", "fully_connected,softmax=npu0")
    assert r.code == 0, r.err
    assert r.out.splitlines()[-4:] == [
        "input in_0: [2, 3, 4] float32",
        "output out_tanh: [30, 1] float32",
        "output out_soft: [1, 30] float32",
        "operators: FULLY_CONNECTED x1, RELU x1, SHAPE x1, STRIDED_SLICE x1, PACK x1, "
        "RESHAPE x1, TRANSPOSE x1, ADD x1, MUL x1, LOGISTIC x1, TANH x1, SOFTMAX x1 -> "
        "fully_connected x1, relu x1, reshape x2, add x1, mul x1, sigmoid x1, tanh x1, "
        "softmax x1"]
    import yaml
    doc = yaml.safe_load((tmp_path / "o" / "every.yaml").read_text())
    # TRANSPOSE [1, 30] -> [30, 1] moves no data: a reshape (a view)
    assert [(o["op"], o.get("device")) for o in doc["operators"]] == [
        ("fully_connected", "npu0"), ("relu", None), ("reshape", None),
        ("reshape", None), ("add", None), ("mul", None), ("sigmoid", None),
        ("tanh", None), ("softmax", "npu0")]
    assert doc["operators"][2]["attrs"] == {"shape": [1, 30]}  # folded SHAPE/SLICE/PACK
    assert sorted(doc["constants"]) == ["bias2", "fc_b", "fc_w"]
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "fc_w.npy"),
                                  np.random.default_rng(1).uniform(-1, 1, (5, 4)
                                                                   ).astype(np.float32))


@pytest.mark.slow
def test_run_every_converter(cli: Callable[..., Result], tmp_path: Path) -> None:
    """Imported in memory, placed, built and checked against the numpy reference."""
    need_tool("gcc", "apt install gcc")
    model = tmp_path / "every.tflite"
    model.write_bytes(_every_converter())
    r = cli("run", str(model), "--device", "npu0:woofles", "--place", "fully_connected=npu0",
            "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    assert "device npu0: activate 1 / deactivate 1" in r.out
    assert r.out.rstrip().endswith("PASS")


# --- bad models: one line each, exit 1, nothing written --------------------------------

def _small(**kw: object) -> bytes:
    """x -> RELU -> y, with the tensors' fields overridden by ``kw``."""
    from tflite_build import Graph, Op, T, build
    x = T(**{"name": "x", "shape": [1, 4], **kw.pop("x", {})})  # type: ignore[dict-item]
    y = T(**{"name": "y", "shape": [1, 4], **kw.pop("y", {})})  # type: ignore[dict-item]
    return build(Graph([x, y], [Op(_codes()["RELU"], [0], [1])], [0], [1], **kw))  # type: ignore



def _stepped(kind: int, options: tuple[str, dict[str, float]]) -> bytes:
    """One case of tests/tflite_cases.py (CASES[kind]) with its options replaced."""
    return cases_model([dataclasses.replace(CASES[kind], name="win", options=options)])


STEP_HINT = "a window steps by one element or more: the model is corrupt or was edited by hand"
BAD = {
    "truncated": ("t.tflite", lambda sine: sine.read_bytes()[:1500],
                  "corrupt or truncated TFLite model (1500 bytes)", None),
    "not_flatbuffer": ("t.tflite", lambda sine: b"name: m\n",
                       "not a TFLite model (no TFL3 identifier)", None),
    "neither": ("t.bin", lambda sine: b"\x00" * 64, "neither a TFLite nor an ONNX model",
                "tvmdev import reads .tflite and .onnx files"),
    "subgraphs": ("t.tflite", lambda sine: _small(extra_subgraphs=1),
                  "the model has 2 subgraphs (control flow or several signatures); "
                  "tvmdev imports one", "export the model without control flow"),
    "dynamic": ("t.tflite", lambda sine: _small(x={"shape": [1, 1],
                                                   "signature": [1, -1]}),
                "input 'x' has a dynamic shape [1, -1]", "fix it: --input-shape x=1,1"),
    "int8": ("t.tflite", lambda sine: _small(x={"type": 9}),
             "input 'x' is int8 without quantization (scale, zero point)", None),
    "conv_stride_0": ("t.tflite", lambda sine: _stepped(0, _conv(0, (0, 1), 0)),
                      "CONV_2D writing 'win': strides [0, 1] must each be >= 1", STEP_HINT),
    "depthwise_dilation_0": ("t.tflite", lambda sine: _stepped(6, _dw(1, (1, 1), 0, 1, (1, 0))),
                             "DEPTHWISE_CONV_2D writing 'win': dilations [1, 0] must each be "
                             ">= 1", STEP_HINT),
    "pool_stride_neg": ("t.tflite", lambda sine: _stepped(8, _pool(0, 3, -2, 0)),
                        "MAX_POOL_2D writing 'win': strides [-2, -2] must each be >= 1",
                        STEP_HINT),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_model(case: str, tflite_model: Callable[[str], Path],
                   cli: Callable[..., Result], tmp_path: Path) -> None:
    fname, make, message, hint = BAD[case]
    model = tmp_path / fname
    model.write_bytes(make(tflite_model("sine_float.tflite")))
    commands = [["import", str(model), "-o", str(tmp_path / "o")]]
    if fname.endswith(".tflite"):  # aot reads anything else as a description
        commands.append(["aot", str(model), "-o", str(tmp_path / "o")])
    for argv in commands:
        r = cli(*argv)
        assert r.code == 1
        assert r.err.splitlines() == [f"tvmdev: {model}: {message}"] + (
            [f"  hint: {hint}"] if hint else [])
        assert not (tmp_path / "o").exists()


def test_dynamic_shape_fixed_by_option(cli: Callable[..., Result], tmp_path: Path) -> None:
    model = tmp_path / "dyn.tflite"
    model.write_bytes(_small(x={"shape": [1, 1], "signature": [1, -1]},
                             y={"shape": [1, 1], "signature": [1, -1]}))
    r = cli("import", str(model), "-o", str(tmp_path / "o"), "--input-shape", "x=1,7")
    assert r.code == 0, r.err
    assert "input x: [1, 7] float32" in r.out and "output y: [1, 7] float32" in r.out
    r = cli("import", str(model), "-o", str(tmp_path / "o"), "--input-shape", "z=1,7")
    assert r.code == 1
    assert r.err.splitlines()[0] == f"tvmdev: {model}: --input-shape z: no such input"


@pytest.mark.parametrize("given,fixed", [("2,7", "1,7"), ("1,7,1", "1,1"), ("7", "1,1")])
def test_input_shape_sets_dynamic_dims_only(given: str, fixed: str,
                                            cli: Callable[..., Result], tmp_path: Path) -> None:
    """--input-shape keeps the declared rank and static dims (x is [1, -1])."""
    model = tmp_path / "dyn.tflite"
    model.write_bytes(_small(x={"shape": [1, 1], "signature": [1, -1]},
                             y={"shape": [1, 1], "signature": [1, -1]}))
    r = cli("import", str(model), "-o", str(tmp_path / "o"), "--input-shape", f"x={given}")
    assert r.code == 1
    assert r.err.splitlines() == [
        f"tvmdev: {model}: --input-shape x={given}: input 'x' is declared [1, -1]; the option "
        "sets its dynamic dims (-1) only", f"  hint: fix it: --input-shape x={fixed}"]
    assert not (tmp_path / "o").exists()


def test_input_shape_of_a_static_model(tflite_model: Callable[[str], Path],
                                       cli: Callable[..., Result], tmp_path: Path) -> None:
    """The sine model's input is [-1, 1]: its batch can be set, not its rank or feature."""
    sine = tflite_model("sine_float.tflite")
    name = "serving_default_dense_input_0"
    for given in ("1,1,1,1", "3,2"):
        r = cli("import", str(sine), "-o", str(tmp_path / "o"), "--input-shape",
                f"{name}={given}")
        assert r.code == 1
        assert r.err.splitlines()[0] == (
            f"tvmdev: {sine}: --input-shape {name}={given}: input "
            "'serving_default_dense_input:0' is declared [-1, 1]; the option sets its "
            "dynamic dims (-1) only")
    r = cli("import", str(sine), "-o", str(tmp_path / "o"), "--input-shape", f"{name}=3,1")
    assert r.code == 0, r.err
    assert "output StatefulPartitionedCall_0: [3, 1] float32" in r.out


def test_input_shape_keeps_static_declared_dims(cli: Callable[..., Result],
                                                tmp_path: Path) -> None:
    """With a dynamic dim set, what the model declares static is still checked: y is
    declared [1, 4] with no signature (static), which a RELU of x [1, 7] is not."""
    model = tmp_path / "dyn.tflite"
    model.write_bytes(_small(x={"shape": [1, 1], "signature": [1, -1]},
                             y={"shape": [1, 4]}))
    r = cli("import", str(model), "-o", str(tmp_path / "o"), "--input-shape", "x=1,7")
    assert r.code == 1
    assert r.err.splitlines() == [f"tvmdev: {model}: operator 0 RELU 'y': tvmdev infers "
                                  "[1, 7] where the model declares [1, 4]"]


def test_unsupported_operators_all_listed(cli: Callable[..., Result], tmp_path: Path) -> None:
    from tflite_build import Graph, Op, T, build
    c = _codes()
    pool = ("Pool2DOptions", {"Padding": 1, "StrideH": 2, "StrideW": 2, "FilterHeight": 2,
                              "FilterWidth": 2})
    ts = [T("x", [1, 4, 4, 2]), T("a", [1, 4, 4, 2]), T("b", [1, 2, 2, 2]),
          T("c", [1, 1, 1, 2]), T("d", [1, 1, 1, 2])]
    ops = [Op(c["FLOOR"], [0], [1]), Op(c["L2_POOL_2D"], [1], [2], pool),
           Op(c["L2_POOL_2D"], [2], [3], pool), Op(c["RELU"], [3], [4])]
    model = tmp_path / "u.tflite"
    model.write_bytes(build(Graph(ts, ops, [0], [4])))
    r = cli("run", str(model))
    assert r.code == 1
    assert r.err.splitlines() == [
        f"tvmdev: {model}: 3 unsupported operators: FLOOR x1 (first: operator 0 'a'); "
        "L2_POOL_2D x2 (first: operator 1 'b')",
        "  hint: README 'tvmdev import' lists the TFLite operators that map (float32; int8: "
        "all but BATCH_MATMUL, RELU, RELU6, RELU_N1_TO_1; raw integers: TFLM's signal ops "
        "and ADD, CAST, CONCATENATION, DIV, MAXIMUM, MINIMUM, MUL, RESHAPE, STRIDED_SLICE)"]


def test_without_the_extra(cli: Callable[..., Result], tmp_path: Path,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    monkeypatch.setitem(sys.modules, "tflite", None)
    model = tmp_path / "m.tflite"
    model.write_bytes(b"\x00" * 4 + b"TFL3" + b"\x00" * 8)
    r = cli("import", str(model), "-o", str(tmp_path / "o"))
    assert r.code == 1
    assert r.err.splitlines() == [f"tvmdev: {model}: reading a .tflite model needs the tflite "
                                  "extra: pip install 'tvmdev[tflite]'"]


def test_import_options_refused_for_descriptions(cli: Callable[..., Result]) -> None:
    from conftest import REPO
    mlp = REPO / "examples/mlp/mlp.yaml"
    r = cli("aot", str(mlp), "-o", "unused", "--device", "npu9:woofles")
    assert r.code == 1
    assert r.err.splitlines()[0] == (f"tvmdev: {mlp}: --device apply to imported models "
                                     "(.tflite, .onnx), not to a model description")


BOARDS = {"mps2_an385": "qemu-system-arm", "mps2_an386": "qemu-system-arm",
          "mps2_an500": "qemu-system-arm", "mps3_an547": "qemu-system-arm",
          "linux_aarch64": "qemu-aarch64"}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RANGES))
@pytest.mark.parametrize("board", sorted(BOARDS))
def test_imported_models_on_boards(board: str, name: str, tflite_model: Callable[[str], Path],
                                   cli: Callable[..., Result], tmp_path: Path) -> None:
    """Every real float32 model on every emulated board, its outputs compared with
    TFLM's; the autoencoder's fully_connected on a device on the Cortex-M boards (on
    linux_aarch64 they stay unplaced, for the board's KleidiAI offload)."""
    need_tool(BOARDS[board], "scripts/test.sh installs it")
    extra = ["--board", board]
    if name.startswith("autoencoder") and board != "linux_aarch64":
        extra += ["--device", "npu0:woofles", "--place", "fully_connected=npu0"]
    run_against_tflm(cli, tflite_model(name), tmp_path, *extra)


@pytest.mark.slow
def test_corrupt_files_are_one_line(tflite_model: Callable[[str], Path],
                                    cli: Callable[..., Result], tmp_path: Path) -> None:
    """Every truncation of the sine model and 200 seeded corruptions, and 60 sparser ones of
    the CNN (its options are read as operators convert): exit 1 with one tvmdev line, or
    (when the damage hits only weights) a model; never a traceback, never a file written."""
    src = tflite_model("sine_float.tflite").read_bytes()
    cases = [src[:n] for n in range(0, len(src), 61)]
    cnn = tflite_model("image_example1.float32.tflite").read_bytes()
    for seed in range(260):
        rng = np.random.default_rng(seed)
        data = np.frombuffer(src if seed < 200 else cnn, np.uint8).copy()
        hit = rng.random(len(data)) < (0.01 if seed < 200 else 0.0003)
        hit[:8] = False
        data[hit] = rng.integers(0, 256, int(hit.sum()))
        cases.append(data.tobytes())
    model = tmp_path / "c.tflite"
    for data in cases:
        model.write_bytes(data)
        r = cli("import", str(model), "-o", str(tmp_path / "o"), "--dry-run")
        assert r.code in (0, 1), r.err
        if r.code:
            assert r.err.startswith(f"tvmdev: {model}: ") and "Traceback" not in r.err
        assert not (tmp_path / "o").exists()


def test_placement_errors(cli: Callable[..., Result], tmp_path: Path) -> None:
    model = tmp_path / "m.tflite"
    model.write_bytes(_small())
    cases = [(["--device", "npu0"], "--device npu0: expected ID:KIND"),
             (["--place", "relu=npu0"], "--place relu=npu0: no device 'npu0'"),
             (["--device", "npu0:woofles", "--place", "conv2d=npu0"],
              "--place conv2d=npu0: no operator of kind conv2d in the model")]
    for extra, message in cases:
        r = cli("import", str(model), "-o", str(tmp_path / "o"), *extra)
        assert r.code == 1
        assert r.err.splitlines()[0] == f"tvmdev: {message}"
        assert not (tmp_path / "o").exists()
    r = cli("import", str(model), "-o", str(tmp_path / "o"), "--device", "npu0:woofles",
            "--place", "relu,cnov2d=npu0")
    assert r.code == 1
    assert r.err.splitlines()[0] == ("tvmdev: --place relu,cnov2d=npu0: no operator of kind "
                                     "cnov2d in the model")


def test_one_placement_serves_many_models(cli: Callable[..., Result], tmp_path: Path) -> None:
    """A tvmdev op the model lacks is a note (one --place for every model), not an error."""
    import yaml
    model = tmp_path / "m.tflite"
    model.write_bytes(_small())
    r = cli("import", str(model), "-o", str(tmp_path / "o"), "--device", "npu0:woofles",
            "--place", "conv2d,depthwise_conv2d,relu=npu0")
    assert r.code == 0, r.err
    assert r.err.splitlines() == [
        "note: --place conv2d,depthwise_conv2d,relu=npu0: the model has no conv2d operator",
        "note: --place conv2d,depthwise_conv2d,relu=npu0: the model has no depthwise_conv2d "
        "operator"]
    doc = yaml.safe_load((tmp_path / "o" / "m.yaml").read_text())
    assert [o.get("device") for o in doc["operators"]] == ["npu0"]
