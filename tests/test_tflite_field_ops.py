"""The TFLite operators the field's models need (tests/tflite_field_cases.py), int8 and
float32, against TFLM's interpreter: each operator's seeded one-op cases merged into one
.tflite per dtype, imported and evaluated by tvmdev's numpy reference (fast), and built
and run with ``tvmdev run`` on the host (slow); int8 bit for bit, float32 within
``tvmdev run``'s tolerance. Then the models of the field these operators let in: TFLM's
person_detect, MIT TinyEngine's MCUNet models and the PyTorch-exported MobileNetV2 in
TFLM's tree, bit-exact with TFLM on the host."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import field_models
import numpy as np
import pytest
import tflite_field_cases as fc
import tflm_ref
from conftest import Result, need_module, need_tool
from s8_cases import merged, output_labels

from tvmdev.run.compare import ATOL, RTOL

need_module("tflite", "pip install -e '.[tflite]'")

ARENA = 1 << 20  # TFLM's arena for the merged one-op models


def _same(got: np.ndarray, want: np.ndarray, dtype: str) -> bool:
    if got.shape != want.shape:
        return False
    if dtype == "int8":
        return got.dtype == want.dtype and np.array_equal(got, want)
    return bool(np.allclose(got, want, atol=ATOL, rtol=RTOL))


def _wrong(names: list[str], got: dict[str, np.ndarray], want: list[np.ndarray],
           labels: list[str], dtype: str) -> list[str]:
    return [f"{label}: {np.count_nonzero(np.asarray(got[n]) != w)} of {w.size} differ"
            for n, w, label in zip(names, want, labels, strict=True)
            if not _same(np.asarray(got[n]), w, dtype)]


@pytest.mark.parametrize("op,dtype", fc.KEYS)
def test_reference_matches_tflm(op: str, dtype: str, tmp_path: Path) -> None:
    """Every case merged into one model, imported (the converter, the op table, the
    loader's checks) and evaluated by tvmdev's numpy reference: each output is TFLM's."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import evaluate
    cases = fc.cases(op, dtype)
    data, arrays = merged(cases)
    (tmp_path / "m.tflite").write_bytes(data)
    m = import_file(tmp_path / "m.tflite").to_model()
    assert {m.tensors[o].dtype for o in m.outputs} == {dtype}
    got = evaluate(m, dict(zip(m.inputs, arrays, strict=True)))
    labels = output_labels(cases)
    want = tflm_ref.outputs(data, arrays, len(labels), ARENA)
    assert _wrong(m.outputs, got, want, labels, dtype) == []
    # not trivial: outputs that vary (int8: over most of the range)
    assert len(np.unique(np.concatenate([w.ravel() for w in want]))) > (
        100 if dtype == "int8" else 300)


def _run(cli: Callable[..., Result], data: bytes, arrays: list[np.ndarray], tmp_path: Path,
         *options: str) -> tuple[list[str], dict[str, np.ndarray]]:
    """``tvmdev run`` of the .tflite ``data`` on ``arrays`` (the C kernels, which must PASS
    against the reference): the model's outputs and the values it saved."""
    need_tool("gcc", "apt install gcc")
    from tvmdev.frontends.importer import import_file
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    m = import_file(path).to_model()
    (tmp_path / "in").mkdir()
    for name, x in zip(m.inputs, arrays, strict=True):
        np.save(tmp_path / "in" / f"{name}.npy", x)
    r = cli("run", str(path), "--inputs", str(tmp_path / "in"), "--save-outputs",
            str(tmp_path / "out"), "--build-dir", str(tmp_path / "build"), *options)
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    return list(m.outputs), {n: np.load(tmp_path / "out" / f"{n}.npy") for n in m.outputs}


@pytest.mark.slow
@pytest.mark.parametrize("op,dtype", fc.KEYS)
def test_run_matches_tflm(op: str, dtype: str, cli: Callable[..., Result],
                          tmp_path: Path) -> None:
    """The same merged model through ``tvmdev run`` on the host, every output saved and
    held against TFLM's."""
    cases = fc.cases(op, dtype)
    data, arrays = merged(cases)
    names, got = _run(cli, data, arrays, tmp_path)
    labels = output_labels(cases)
    want = tflm_ref.outputs(data, arrays, len(labels), ARENA)
    assert _wrong(names, got, want, labels, dtype) == []


@pytest.mark.parametrize("op,dtype", fc.KEYS)
def test_params_are_the_structs_fields(op: str, dtype: str, tmp_path: Path) -> None:
    """The params generation computes for each operator are exactly the fields of its C
    struct in the portable headers (read with pycparser), so none is left 0 silently."""
    from test_params_structs import struct_fields

    from tvmdev.frontends.importer import import_file
    from tvmdev.load.board import board_by_name
    from tvmdev.plan.pipeline import compile_model
    data, _ = merged(fc.cases(op, dtype))
    (tmp_path / "m.tflite").write_bytes(data)
    compiled = compile_model(import_file(tmp_path / "m.tflite").to_model(),
                             board_by_name("host"))
    fields = struct_fields()
    structs = set()
    for prep in compiled.ops:
        # a struct that ends with scratch_bytes and scratch gets them when rendered
        scratch = ["scratch", "scratch_bytes"] if prep.takes_scratch else []
        assert sorted([*prep.params, *scratch]) == sorted(fields[prep.struct]), prep.struct
        structs.add(prep.struct)
    assert structs


def test_transpose_moving_no_data_is_a_view(tmp_path: Path) -> None:
    """A permutation that reorders only dims of size 1 becomes a reshape (no copy); the
    others a transpose."""
    from tvmdev.frontends.importer import import_file
    cases = fc.cases("transpose", "int8")
    data, _ = merged(cases)
    (tmp_path / "m.tflite").write_bytes(data)
    m = import_file(tmp_path / "m.tflite").to_model()
    ops = [o.op for o in m.operators]
    views = [c.label for c, o in zip(cases, ops, strict=True) if o == "reshape"]
    assert views == ["transpose [5] [0]", "transpose [1, 1, 5, 3] [1, 0, 2, 3]",
                     "transpose [1, 4, 1, 3] [0, 2, 1, 3]", "transpose [3, 1, 1] [1, 0, 2]",
                     "transpose [1, 7, 1, 1, 2] [2, 1, 3, 4, 0]"]
    assert ops.count("transpose") == len(cases) - len(views)


# --- quantization fields TFLM ignores -----------------------------------------------------

def _conv(bias_axis: int, bias_scales: int, weight_zero_points: int) -> bytes:
    """x int8 [1, 5, 5, 2] -> CONV_2D 3x3 SAME, 4 output channels, weights per channel
    (``weight_zero_points`` zero points: 4, or the 1 TFLM repeats), the int32 bias's
    quantization with ``bias_scales`` scales along ``bias_axis``."""
    from s8_cases import INT8, INT32
    from tflite_build import Graph, Op, T, build
    r = np.random.default_rng(5)
    s_w = [float(np.float32(s)) for s in r.uniform(0.002, 0.02, 4)]
    s_b = [0.05 * s for s in s_w]
    ts = [T("x", [1, 5, 5, 2], type=INT8, quant=([0.05], [3])),
          T("w", [4, 3, 3, 2], r.integers(-127, 128, (4, 3, 3, 2)).astype(np.int8),
            type=INT8, quant=(s_w, [0] * weight_zero_points)),
          T("b", [4], r.integers(-900, 900, 4).astype(np.int32), type=INT32,
            quant=(s_b[:bias_scales], [0] * bias_scales), quant_axis=bias_axis),
          T("y", [1, 5, 5, 4], type=INT8, quant=([0.1], [-7]))]
    return build(Graph(ts, [Op(3, [0, 1, 2], [3], ("Conv2DOptions", {
        "Padding": 0, "StrideH": 1, "StrideW": 1}))], [0], [3]))


@pytest.mark.parametrize("axis,scales,zero_points", [(3, 4, 4), (3, 1, 4), (0, 4, 1),
                                                      (3, 4, 1)])
def test_quant_fields_tflm_ignores(axis: int, scales: int, zero_points: int,
                                   tmp_path: Path) -> None:
    """As older converters write them (person_detect): a 1-D int32 bias quantized along
    dim 3, per element or with one scale, whose quantization TFLM's kernels never read;
    per-channel weights with one zero point, which TFLM repeats for every channel. Each
    imports and computes what TFLM computes."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import evaluate
    data = _conv(axis, scales, zero_points)
    (tmp_path / "m.tflite").write_bytes(data)
    m = import_file(tmp_path / "m.tflite").to_model()
    x = np.random.default_rng(6).integers(-128, 128, (1, 5, 5, 2)).astype(np.int8)
    got = evaluate(m, {m.inputs[0]: x})[m.outputs[0]]
    want = tflm_ref.outputs(data, [x], 1)[0]
    assert np.array_equal(got, want) and len(np.unique(want)) > 20


def test_quant_axis_still_checked(cli: Callable[..., Result], tmp_path: Path) -> None:
    """No more than that: a bias with a scale count that is not its length, along a dim it
    lacks, is refused in one line, as before."""
    model = tmp_path / "m.tflite"
    model.write_bytes(_conv(3, 2, 4))
    r = cli("import", str(model), "-o", str(tmp_path / "o"))
    assert r.code == 1 and r.err.splitlines()[0] == (
        f"tvmdev: {model}: quant of constant 'b': axis must be a dim of the tensor, not 3")


# --- the models of the field --------------------------------------------------------------

# The field's models these tests run (tests/field_models.py says where each is).
FIELD = ("person_detect", "mobilenet_v2", "vww", "mcunetv2_large", "detection", "lenet")


def field_model(name: str) -> Path:
    """A model of the field from its tree: skip, saying why, without the tree."""
    path = field_models.locate(name)
    if isinstance(path, str):
        if "is not set" not in path:
            pytest.fail(path)
        pytest.skip(path)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FIELD))
def test_field_model_bit_exact_on_host(name: str, cli: Callable[..., Result],
                                       tmp_path: Path) -> None:
    """person_detect (its int32 biases quantized along dim 3), the MCUNet models and the
    PyTorch MobileNetV2 (each with a TRANSPOSE), TinyEngine's detection
    (RESIZE_NEAREST_NEIGHBOR) and post-training-quantized LeNet (a float LOG_SOFTMAX
    after its DEQUANTIZE), on seeded inputs: every tensor tvmdev's reference computes is
    TFLM's (its interpreter keeping them all; mcunetv2_large's output is the same for
    every input), int8 ones bit for bit, and so are the outputs ``tvmdev run`` computes
    on the host."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.frontends.tflite import read
    from tvmdev.model.reference import evaluate, random_inputs
    path = field_model(name)
    data = path.read_bytes()
    m = import_file(path).to_model()
    given = random_inputs(m, 0)
    arrays = list(given.values())
    values = evaluate(m, given)
    computed = {t.index: t.cname for t in read(path, data).tensors
                if t.data is None and t.cname in values}
    assert len(computed) > len(m.operators) / 2
    tflm = tflm_ref.tensors(data, arrays, sorted(computed))
    differ = [c for i, c in computed.items()
              if not _same(values[c], tflm[i], m.tensors[c].dtype)]
    assert differ == []
    names, got = _run(cli, data, arrays, tmp_path)
    for n in names:
        i = next(i for i, c in computed.items() if c == n)
        assert got[n].dtype == tflm[i].dtype and _same(got[n], tflm[i], m.tensors[n].dtype), n


@pytest.mark.slow
@pytest.mark.parametrize("name", ["detection", "lenet", "person_detect"])
def test_field_model_bit_exact_on_mps3_an547(name: str, cli: Callable[..., Result],
                                             tmp_path: Path) -> None:
    """The field models that fit the Cortex-M55 board (the others' constants overflow its
    flash) on it, in QEMU, with CMSIS-NN where CMSIS_NN_SOURCE_DIR names its tree: the
    outputs are TFLM's (int8 bit for bit)."""
    need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.reference import random_inputs
    path = field_model(name)
    data = path.read_bytes()
    m = import_file(path).to_model()
    arrays = list(random_inputs(m, 1).values())
    names, got = _run(cli, data, arrays, tmp_path, "--board", "mps3_an547")
    want = tflm_ref.outputs(data, arrays, len(names))
    for n, w in zip(names, want, strict=True):
        assert got[n].dtype == w.dtype and _same(got[n], w, m.tensors[n].dtype), n


SHAPE_OPS = ["strided_slice", "split", "split_v", "resize_bilinear", "transpose_conv"]


@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps2_an386", "mps3_an547"])
def test_shape_ops_bit_exact_on_cortex_m(board: str, cli: Callable[..., Result],
                                         tmp_path: Path) -> None:
    """The int8 cases of STRIDED_SLICE, SPLIT, SPLIT_V, RESIZE_BILINEAR and TRANSPOSE_CONV
    in one model, run in QEMU on the Cortex-M4 and Cortex-M55 boards (portable kernels;
    CMSIS-NN has none of these but transpose conv, which tvmdev does not use yet): every
    output TFLM's, bit for bit."""
    need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    cases = [c for op in SHAPE_OPS for c in fc.cases(op, "int8")]
    data, arrays = merged(cases)
    names, got = _run(cli, data, arrays, tmp_path, "--board", board)
    labels = output_labels(cases)
    want = tflm_ref.outputs(data, arrays, len(labels), ARENA)
    assert _wrong(names, got, want, labels, "int8") == []
