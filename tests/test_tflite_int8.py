"""int8 TFLite models run with ``tvmdev run`` and compared bit for bit with TFLM's
interpreter: the MLPerf Tiny models (anomaly_detection, keyword_spotting,
image_classification, visual_wake_words) on the host and the Cortex-M boards, their
activation arenas against TFLM's,
and small models built here (fully_connected with each fused activation, with and
without bias, keep_num_dims; quantize and dequantize; int8 inputs and outputs). Also a
hand-written int8 YAML model."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
import tflm_ref
from conftest import Result, need_module, need_tool
from test_s8 import MODEL

need_module("tflite", "pip install -e '.[tflite]'")
import tflite  # noqa: E402

pytestmark = pytest.mark.slow

BOARDS = {"host": "gcc", "mps2_an385": "qemu-system-arm", "mps2_an386": "qemu-system-arm",
          "mps2_an500": "qemu-system-arm", "mps3_an547": "qemu-system-arm"}


def natural_inputs(model: Path, seed: int) -> list[np.ndarray]:
    """Seeded inputs spanning each input's quantized range: int8 inputs over [-128, 127],
    float inputs over what the QUANTIZE that reads them can represent (and 5% beyond, so
    that the clamps are exercised)."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import input_range
    imported = import_file(model)
    m = imported.to_model()
    rng = np.random.default_rng(seed)
    out = []
    for name in m.inputs:
        t = m.tensors[name]
        if t.dtype == "int8":
            out.append(rng.integers(-128, 128, t.shape).astype(np.int8))
        else:
            lo, hi = input_range(m, name)
            pad = 0.05 * (hi - lo)
            out.append(rng.uniform(lo - pad, hi + pad, t.shape).astype(np.float32))
    return out


def run_bit_exact(cli: Callable[..., Result], model: Path, tmp_path: Path, board: str,
                  seed: int = 7, extra: Sequence[str] = ("--cmsis-nn", "off")) -> int:
    """``tvmdev run`` on seeded inputs, every output equal to TFLM's; the element count.
    ``extra``: more options (by default the portable int8 kernels on every board; see
    tests/test_cmsis_nn.py for CMSIS-NN's)."""
    from tvmdev.frontends.importer import import_file
    m = import_file(model).to_model()
    inputs = natural_inputs(model, seed)
    (tmp_path / "in").mkdir()
    for name, x in zip(m.inputs, inputs, strict=True):
        np.save(tmp_path / "in" / f"{name}.npy", x)
    r = cli("run", str(model), "--board", board, "--inputs", str(tmp_path / "in"),
            "--save-outputs", str(tmp_path / "out"), "--build-dir", str(tmp_path / "build"),
            *extra)
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS"), r.out
    expected = tflm_ref.outputs(model.read_bytes(), inputs, len(m.outputs))
    count = 0
    for name, want in zip(m.outputs, expected, strict=True):
        got = np.load(tmp_path / "out" / f"{name}.npy")
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want), (
            f"{name}: {np.count_nonzero(got != want)} of {got.size} elements differ")
        if got.dtype == np.int8:
            assert f"output {name} " in r.out and "0 of" in r.out and "bit-exact" in r.out
        count += got.size
    return count


# The MLPerf Tiny models and their output elements. keyword_spotting and
# visual_wake_words have float input and output (QUANTIZE, DEQUANTIZE inside),
# image_classification int8 ones, anomaly_detection float ones with its shape arithmetic
# folded.
MLPERF_TINY = {"anomaly_detection": 640, "keyword_spotting": 12, "image_classification": 10,
               "visual_wake_words": 2}


@pytest.mark.parametrize("board", sorted(BOARDS))
@pytest.mark.parametrize("name", sorted(MLPERF_TINY))
def test_mlperf_tiny_bit_exact(name: str, board: str, tflite_model: Callable[[str], Path],
                               cli: Callable[..., Result], tmp_path: Path) -> None:
    need_tool(BOARDS[board], "scripts/test.sh installs it")
    model = tflite_model(f"{name}.tflite")
    assert run_bit_exact(cli, model, tmp_path, board) == MLPERF_TINY[name]


def tflm_arena_head(model: Path) -> int:
    """The activation arena TFLM's interpreter plans for ``model`` ("Arena allocation
    head" of its allocation report, which its C++ prints: run in a child process)."""
    tflm_ref.runtime()  # skips without tflite-micro
    code = ("import sys; from tflite_micro.python.tflite_micro import runtime; "
            "runtime.Interpreter.from_bytes(open(sys.argv[1], 'rb').read())"
            ".print_allocations()")
    run = subprocess.run([sys.executable, "-c", code, str(model)], capture_output=True,
                         text=True, check=True)
    out = run.stdout + run.stderr
    heads = re.findall(r"Arena allocation head (\d+) bytes", out)
    assert len(heads) == 1, out
    return int(heads[0])


@pytest.mark.parametrize("name", sorted(MLPERF_TINY))
def test_arena_within_tflm(name: str, tflite_model: Callable[[str], Path],
                           cli: Callable[..., Result], tmp_path: Path) -> None:
    """tvmdev's workspace (every kernel scratch included) is at most the arena TFLM's
    interpreter plans (whose head also holds the model's input and output tensors)."""
    model = tflite_model(f"{name}.tflite")
    r = cli("aot", str(model), "-o", str(tmp_path / "aot"))
    assert r.code == 0, r.out + r.err
    arena = re.search(r"^arena: (\d+) bytes", r.out, re.M)
    assert arena is not None, r.out
    assert 0 < int(arena.group(1)) <= tflm_arena_head(model)


_OPTION_FIELDS = {
    "CONV_2D": ("Conv2DOptions", ("Padding", "StrideW", "StrideH", "FusedActivationFunction",
                                  "DilationWFactor", "DilationHFactor")),
    "DEPTHWISE_CONV_2D": ("DepthwiseConv2DOptions", (
        "Padding", "StrideW", "StrideH", "DepthMultiplier", "FusedActivationFunction",
        "DilationWFactor", "DilationHFactor")),
}


def truncated(model: Path, last: int) -> bytes:
    """``model``'s operators up to ``last`` (QUANTIZE, convolutions), then a DEQUANTIZE of
    that operator's output as the model's output: a real model's int8 convolutions,
    each of their output values compared (not only what the model's end makes of them)."""
    from tflite_build import Graph, Op, T, build

    from tvmdev.frontends.tflite import read
    g = read(model, model.read_bytes())
    c = _codes()
    keep = sorted({i for op in g.ops[:last + 1] for i in (*op.inputs, *op.outputs) if i >= 0})
    index = {i: k for k, i in enumerate(keep)}
    ts = []
    for i in keep:
        t = g.tensors[i]
        q = t.quant
        ts.append(T(t.name, list(t.shape), t.data,
                    type={"float32": 0, "int32": 2, "int8": 9}[t.dtype],
                    quant=(list(q.scale), list(q.zero_point)) if q else None,
                    quant_axis=q.axis if q else 0))
    ops = []
    for op in g.ops[:last + 1]:
        opts = None
        if op.kind in _OPTION_FIELDS:
            cls, fields = _OPTION_FIELDS[op.kind]
            o = getattr(tflite, cls)()
            table = op.raw.BuiltinOptions()
            o.Init(table.Bytes, table.Pos)
            opts = (cls, {f: getattr(o, f)() for f in fields})
        ops.append(Op(c[op.kind], [index[i] for i in op.inputs], [index[op.outputs[0]]],
                      opts))
    last_out = index[g.ops[last].outputs[0]]
    ts.append(T("y", list(g.tensors[g.ops[last].outputs[0]].shape)))
    ops.append(Op(c["DEQUANTIZE"], [last_out], [len(ts) - 1]))
    return build(Graph(ts, ops, [index[g.inputs[0]]], [len(ts) - 1]))


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_keyword_spotting_convolutions_bit_exact(board: str,
                                                 tflite_model: Callable[[str], Path],
                                                 cli: Callable[..., Result],
                                                 tmp_path: Path) -> None:
    """keyword_spotting (DS-CNN) up to its last convolution (5 CONV_2D, 4
    DEPTHWISE_CONV_2D, per-channel weights): 8000 values of the convolutions compared,
    where the whole model's output has 12."""
    need_tool(BOARDS[board], "scripts/test.sh installs it")
    model = tmp_path / "kws_convs.tflite"
    model.write_bytes(truncated(tflite_model("keyword_spotting.tflite"), 9))
    assert run_bit_exact(cli, model, tmp_path, board) == 25 * 5 * 64


# --- small int8 models ------------------------------------------------------------------

def _codes() -> dict[str, int]:
    return {k: v for k, v in vars(tflite.BuiltinOperator).items() if isinstance(v, int)}


ACT = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}
S_IN, ZP_IN = 2.0 / 255, -1
# Outputs reach about +-8: RELU6 and RELU_N1_TO_1 clamp inside the int8 range, which
# clamps too.
S_W = 6.0 / 127
S_OUT, ZP_OUT = 16.0 / 255, -20


def fc_model(act: str = "NONE", bias: bool = True, keep_num_dims: bool = False,
             int8_io: bool = False, per_channel: bool = False) -> bytes:
    """x (float, or int8) -> QUANTIZE -> FULLY_CONNECTED (int8 weights [8, 6] per tensor,
    int32 bias) -> DEQUANTIZE -> y (float, or int8 without the two)."""
    from tflite_build import Graph, Op, T, build
    c = _codes()
    rng = np.random.default_rng(3)
    in_shape = [2, 3, 6] if keep_num_dims else [4, 6]
    out_shape = [2, 3, 8] if keep_num_dims else [4, 8]
    w = rng.integers(-127, 128, (8, 6)).astype(np.int8)
    b = rng.integers(-300, 300, 8).astype(np.int32)
    qin, qout = ([S_IN], [ZP_IN]), ([S_OUT], [ZP_OUT])
    s_w = list(np.linspace(0.5, 1.5, 8) * S_W) if per_channel else [S_W]
    ts = [T("x", in_shape, type=9 if int8_io else 0, quant=qin if int8_io else None),
          T("xq", in_shape, type=9, quant=qin),
          T("w", [8, 6], w, type=9, quant=(s_w, [0] * len(s_w))),
          T("b", [8], b, type=2, quant=([S_IN * s for s in s_w], [0] * len(s_w))),
          T("yq", out_shape, type=9, quant=qout),
          T("y", out_shape, type=9 if int8_io else 0, quant=qout if int8_io else None)]
    opts = ("FullyConnectedOptions", {"FusedActivationFunction": ACT[act],
                                      "KeepNumDims": int(keep_num_dims)})
    fc = Op(c["FULLY_CONNECTED"], [1, 2, 3 if bias else -1], [4], opts)
    if int8_io:
        fc = Op(c["FULLY_CONNECTED"], [0, 2, 3 if bias else -1], [5], opts)
        return build(Graph(ts, [fc], [0], [5]))
    ops = [Op(c["QUANTIZE"], [0], [1]), fc, Op(c["DEQUANTIZE"], [4], [5])]
    return build(Graph(ts, ops, [0], [5]))


FC_CASES = {
    **{f"act_{a}": {"act": a} for a in ACT},
    "no_bias": {"bias": False},
    "keep_num_dims_relu": {"keep_num_dims": True, "act": "RELU"},
    "int8_io": {"int8_io": True, "act": "RELU6"},
    "per_channel_weights": {"per_channel": True, "act": "RELU"},
}


@pytest.mark.parametrize("case", sorted(FC_CASES))
def test_small_int8_models_bit_exact(case: str, cli: Callable[..., Result],
                                     tmp_path: Path) -> None:
    need_tool("gcc", "apt install gcc")
    model = tmp_path / f"{case}.tflite"
    model.write_bytes(fc_model(**FC_CASES[case]))  # type: ignore[arg-type]
    for seed in (1, 2):
        sub = tmp_path / f"seed{seed}"
        sub.mkdir()
        run_bit_exact(cli, model, sub, "host", seed)


@pytest.mark.parametrize("board", ["mps2_an385"])
def test_int8_io_on_firmware(board: str, cli: Callable[..., Result], tmp_path: Path) -> None:
    """int8 inputs compiled into firmware, int8 outputs printed back."""
    need_tool(BOARDS[board], "scripts/test.sh installs it")
    model = tmp_path / "io.tflite"
    model.write_bytes(fc_model(int8_io=True, act="RELU"))
    run_bit_exact(cli, model, tmp_path, board)


def conv_model(act: str = "RELU6", padding: int = 0, stride: int = 1, mult: int = 2,
               bias: bool = True, group: int = 1) -> bytes:
    """x float [1, 7, 6, 4] -> QUANTIZE -> CONV_2D (int8 OHWI [6, 3, 3, 4 / group], per
    channel) -> DEPTHWISE_CONV_2D (per channel, depth multiplier ``mult``) ->
    DEQUANTIZE; padding 0 SAME, 1 VALID."""
    from tflite_build import Graph, Op, T, build
    c = _codes()
    rng = np.random.default_rng(5)
    h, w = 7, 6

    def out(n: int, k: int) -> int:
        return -(-n // stride) if padding == 0 else (n - k) // stride + 1

    h1, w1 = out(h, 3), out(w, 3)
    h2, w2 = (h1 + 1) // 2 if padding == 0 else (h1 - 3) // 2 + 1, \
        (w1 + 1) // 2 if padding == 0 else (w1 - 3) // 2 + 1
    m, dm = 6, 6 * mult
    s_w1 = list(rng.uniform(0.5, 2.0, m) / 127 / 2)
    s_w2 = list(rng.uniform(0.5, 2.0, dm) / 127 / 2)
    s_a, s_b = 4.0 / 255, 6.0 / 255
    w1v = rng.integers(-127, 128, (m, 3, 3, 4 // group)).astype(np.int8)
    w2v = rng.integers(-127, 128, (1, 3, 3, dm)).astype(np.int8)
    b1 = rng.integers(-2000, 2000, m).astype(np.int32)
    b2 = rng.integers(-2000, 2000, dm).astype(np.int32)
    ts = [T("x", [1, h, w, 4]), T("xq", [1, h, w, 4], type=9, quant=([S_IN], [ZP_IN])),
          T("w1", list(w1v.shape), w1v, type=9, quant=(s_w1, [0] * m)),
          T("b1", [m], b1, type=2, quant=([S_IN * s for s in s_w1], [0] * m)),
          T("a", [1, h1, w1, m], type=9, quant=([s_a], [3])),
          T("w2", [1, 3, 3, dm], w2v, type=9, quant=(s_w2, [0] * dm), quant_axis=3),
          T("b2", [dm], b2, type=2, quant=([s_a * s for s in s_w2], [0] * dm),
            quant_axis=0),
          T("bq", [1, h2, w2, dm], type=9, quant=([s_b], [-7])),
          T("y", [1, h2, w2, dm])]
    conv = ("Conv2DOptions", {"Padding": padding, "StrideH": stride, "StrideW": stride,
                              "FusedActivationFunction": ACT[act]})
    dw = ("DepthwiseConv2DOptions", {"Padding": padding, "StrideH": 2, "StrideW": 2,
                                     "DepthMultiplier": mult,
                                     "FusedActivationFunction": ACT["NONE"]})
    ops = [Op(c["QUANTIZE"], [0], [1]),
           Op(c["CONV_2D"], [1, 2, 3 if bias else -1], [4], conv),
           Op(c["DEPTHWISE_CONV_2D"], [4, 5, 6 if bias else -1], [7], dw),
           Op(c["DEQUANTIZE"], [7], [8])]
    return build(Graph(ts, ops, [0], [8]))


CONV_CASES = {
    "same_relu6": {},
    "valid_relu": {"padding": 1, "act": "RELU"},
    "same_stride2": {"stride": 2},
    "mult1_none": {"mult": 1, "act": "NONE"},
    "grouped": {"group": 2, "act": "RELU_N1_TO_1"},
}


# Without bias, TFLM's Python interpreter (tflite-micro 0.dev) crashes on these models;
# the case is checked against the numpy reference only (test_int8_conv_without_bias).
@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_int8_convolutions_bit_exact(case: str, cli: Callable[..., Result],
                                     tmp_path: Path) -> None:
    need_tool("gcc", "apt install gcc")
    model = tmp_path / f"{case}.tflite"
    model.write_bytes(conv_model(**CONV_CASES[case]))  # type: ignore[arg-type]
    run_bit_exact(cli, model, tmp_path, "host", 4)


def test_int8_conv_without_bias(cli: Callable[..., Result], tmp_path: Path) -> None:
    need_tool("gcc", "apt install gcc")
    model = tmp_path / "nobias.tflite"
    model.write_bytes(conv_model(bias=False, act="NONE"))
    r = cli("run", str(model), "--build-dir", str(tmp_path / "b"))
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    assert "max abs err 0, max rel err 0" in r.out, r.out


@pytest.mark.parametrize("scales", [(0.02, 0.05), (0.05, 0.013), (0.031, 0.031)])
def test_requantize_bit_exact(scales: tuple[float, float], cli: Callable[..., Result],
                              tmp_path: Path) -> None:
    """x -> QUANTIZE (int8) -> QUANTIZE (int8 to int8: another scale and zero point) ->
    DEQUANTIZE."""
    from tflite_build import Graph, Op, T, build
    need_tool("gcc", "apt install gcc")
    c = _codes()
    ts = [T("x", [3, 40]), T("a", [3, 40], type=9, quant=([scales[0]], [7])),
          T("b", [3, 40], type=9, quant=([scales[1]], [-9])), T("y", [3, 40])]
    ops = [Op(c["QUANTIZE"], [0], [1]), Op(c["QUANTIZE"], [1], [2]),
           Op(c["DEQUANTIZE"], [2], [3])]
    model = tmp_path / "rq.tflite"
    model.write_bytes(build(Graph(ts, ops, [0], [3])))
    run_bit_exact(cli, model, tmp_path, "host", 2)


def test_hand_written_int8_model(cli: Callable[..., Result], tmp_path: Path) -> None:
    """The YAML model of test_s8 with its int8 result as a second output: run on the host
    against the numpy integer reference, bit-exact."""
    need_tool("gcc", "apt install gcc")
    text = MODEL.replace("  y: {shape: [2, 3], dtype: float32}",
                         "  y: {shape: [2, 3], dtype: float32}\n"
                         "  yq: {shape: [2, 3], dtype: int8, "
                         "quant: {scale: [0.05], zero_point: [-5]}}")
    text = text.replace("  yq: {dtype: int8, quant: {scale: [0.05], zero_point: [-5]}}\n", "")
    (tmp_path / "m.yaml").write_text(text)
    r = cli("run", str(tmp_path / "m.yaml"), "--build-dir", str(tmp_path / "b"),
            "--save-outputs", str(tmp_path / "out"))
    assert r.code == 0, r.out + r.err
    assert "output yq [2, 3] int8: 0 of 6 elements differ, largest difference 0 steps: " \
           "bit-exact" in r.out, r.out
    yq = np.load(tmp_path / "out" / "yq.npy")
    y = np.load(tmp_path / "out" / "y.npy")
    assert yq.dtype == np.int8 and y.dtype == np.float32
    # The dequantized output is the int8 one scaled (float32 product), exactly.
    assert np.array_equal(y, (yq.astype(np.float32) + 5) * np.float32(0.05))
    assert len(np.unique(yq)) > 2  # not all clamped


QUANTIZE_ONLY = """\
name: qz
inputs:
  x: {shape: [16], dtype: float32}
outputs:
  y: {shape: [16], dtype: int8, quant: {scale: [0.5], zero_point: [1]}}
operators:
  - {name: q, op: quantize, inputs: [x], outputs: [y]}
"""


def _run_quantize(cli: Callable[..., Result], tmp_path: Path, board: str, model_text: str,
                  x: np.ndarray) -> np.ndarray:
    """``tvmdev run`` of a one-QUANTIZE model on ``board`` with input ``x`` (PASS: the
    numpy reference agrees): the output."""
    need_tool(BOARDS[board], "scripts/test.sh installs it")
    model = tmp_path / "qz.yaml"
    model.write_text(model_text)
    (tmp_path / "in").mkdir()
    np.save(tmp_path / "in/x.npy", x)
    r = cli("run", str(model), "--board", board, "--inputs", str(tmp_path / "in"),
            "--save-outputs", str(tmp_path / "out"), "--build-dir", str(tmp_path / "b"))
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    return np.asarray(np.load(tmp_path / "out/y.npy"))


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_quantize_edges_on_every_core(board: str, cli: Callable[..., Result],
                                      tmp_path: Path) -> None:
    """QUANTIZE's C kernel has a loop per FPU (Armv8's VMAXNM on M55, SSAT on M3/M4/M7,
    plain compares elsewhere): halves, the clamps, values beyond int32, infinities and NaN
    give the numpy reference's int8 on each."""
    x = np.array([0.25, -0.25, 0.74, 0.75, 1000.0, -1000.0, np.nan, 0.2499999, 63.0, 63.5,
                  -64.5, -65.0, 3e9, -3e38, np.inf, -np.inf], np.float32)
    got = _run_quantize(cli, tmp_path, board, QUANTIZE_ONLY, x)
    assert got.tolist() == [2, 0, 2, 3, 127, -128, -128, 1, 127, 127, -128, -128, 127,
                            -128, 127, -128]


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_int16_quantize_edges_on_every_core(board: str, cli: Callable[..., Result],
                                            tmp_path: Path) -> None:
    """The int16 QUANTIZE is the int8 kernel's body (quantize_int.h), so it has the same
    loop per FPU: halves, int16's clamps, values beyond int32, infinities and NaN give
    x / scale rounded half away from zero (TFLM's std::round), offset and clamped (NaN:
    the lowest value), on each."""
    x = np.array([0.25, -0.25, 0.74, 0.75, 16383.0, 16383.25, 16383.5, -16384.5, -16385.0,
                  1e6, np.nan, 3e9, -3e38, np.inf, -np.inf, -0.0], np.float32)
    got = _run_quantize(cli, tmp_path, board, QUANTIZE_ONLY.replace("int8", "int16"), x)
    v = x.astype(np.float64) / 0.5
    with np.errstate(invalid="ignore"):
        rounded = np.sign(v) * np.floor(np.abs(v) + 0.5)
    want = np.clip(np.nan_to_num(rounded, nan=-1e10) + 1, -32768, 32767)
    assert got.dtype == np.int16 and got.tolist() == want.astype(np.int16).tolist()
    assert {-32768, 32767} <= set(got.tolist())
