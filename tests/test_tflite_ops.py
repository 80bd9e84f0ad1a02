"""Each TFLite converter with its options (tests/tflite_cases.py): how it maps (fast, import
only) and what it computes, one host build for every case compared with TFLM's interpreter
(slow). Refusals: quantisation, variants without a mapping, wrong declared shapes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tflite_cases
import tflm_ref
from conftest import Result, need_module, need_tool

from tvmdev.run.compare import ATOL, RTOL

need_module("tflite", "pip install -e '.[tflite]'")
import tflite  # noqa: E402

CODES = {k: v for k, v in vars(tflite.BuiltinOperator).items() if isinstance(v, int)}


def _chains(doc: dict[str, Any]) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Each output's operators, from the one reading x to the one writing it."""
    writer = {op["outputs"][0]: op for op in doc["operators"]}
    chains = {}
    for out in doc["outputs"]:
        chain, t = [], out
        while t in writer:
            op = writer[t]
            chain.insert(0, (op["op"], op.get("attrs", {})))
            t = op["inputs"][0]
        assert t == "x", (out, t)
        chains[out] = chain
    return chains


def test_every_converter_maps(cli: Callable[..., Result], tmp_path: Path) -> None:
    """Each case becomes the tvmdev operators and attributes it should, weights as stored
    (OHWI, [1, KH, KW, C * mult], [out, in]: never transposed)."""
    import yaml
    model = tmp_path / "cases.tflite"
    model.write_bytes(tflite_cases.model(tflite_cases.CASES))
    r = cli("import", str(model), "-o", str(tmp_path / "o"))
    assert r.code == 0, r.err
    doc = yaml.safe_load((tmp_path / "o" / "cases.yaml").read_text())
    chains = _chains(doc)
    assert list(chains) == [c.name for c in tflite_cases.CASES]
    for case in tflite_cases.CASES:
        assert chains[case.name] == case.ops, case.name
        assert doc["outputs"][case.name]["shape"] == case.out
        for k, operand in enumerate(case.operands):
            if isinstance(operand, np.ndarray) and case.kind != "PADV2" and (
                    operand.dtype == np.float32):
                np.testing.assert_array_equal(np.load(tmp_path / "o" / f"{case.name}_c{k}.npy"),
                                              operand)


@pytest.mark.slow
def test_every_converter_matches_tflm(cli: Callable[..., Result], tmp_path: Path) -> None:
    """One host build runs every case; TFLM runs the model without the cases it has no
    kernel for (numpy is their reference)."""
    need_tool("gcc", "apt install gcc")
    cases = tflite_cases.CASES
    model = tmp_path / "cases.tflite"
    model.write_bytes(tflite_cases.model(cases))
    x = np.random.default_rng(3).uniform(*tflite_cases.X_RANGE,
                                         tflite_cases.X_SHAPE).astype(np.float32)
    (tmp_path / "in").mkdir()
    np.save(tmp_path / "in" / "x.npy", x)
    r = cli("run", str(model), "--inputs", str(tmp_path / "in"), "--save-outputs",
            str(tmp_path / "out"), "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS")
    on_tflm = [c for c in cases if c.numpy is None]
    tflm = dict(zip([c.name for c in on_tflm],
                    tflm_ref.outputs(tflite_cases.model(on_tflm), [x], len(on_tflm)),
                    strict=True))
    wrong = []
    for case in cases:
        got = np.load(tmp_path / "out" / f"{case.name}.npy")
        want = case.numpy(x) if case.numpy else tflm[case.name]
        if case.after_tflm:
            want = case.after_tflm(want)
        if got.shape != want.shape or not np.allclose(got, want, atol=ATOL, rtol=RTOL):
            wrong.append(f"{case.name}: max abs diff "
                         f"{np.max(np.abs(got - want)) if got.shape == want.shape else '-'}")
    assert wrong == []


def _import_err(cli: Callable[..., Result], tmp_path: Path, data: bytes) -> str:
    model = tmp_path / "m.tflite"
    model.write_bytes(data)
    r = cli("import", str(model), "-o", str(tmp_path / "o"))
    assert r.code == 1
    assert not (tmp_path / "o").exists()
    first = r.err.splitlines()[0]
    assert first.startswith(f"tvmdev: {model}: ")
    return first[len(f"tvmdev: {model}: "):]


def _quantized() -> bytes:
    """x -> QUANTIZE -> int8 q -> DEQUANTIZE -> y."""
    from tflite_build import Graph, Op, T, build
    ts = [T("x", [1, 4]), T("q", [1, 4], type=9, quant=([0.25], [3])), T("y", [1, 4])]
    return build(Graph(ts, [Op(CODES["QUANTIZE"], [0], [1]),
                            Op(CODES["DEQUANTIZE"], [1], [2])], [0], [2]))


def test_quantize_mapped_quant_params_kept(cli: Callable[..., Result],
                                           tmp_path: Path) -> None:
    """QUANTIZE and DEQUANTIZE map; the int8 tensor between them keeps its quantization
    in the YAML (tensors:); an int8 operator without an int8 form is refused, naming the
    dtype."""
    import yaml
    from tflite_build import Graph, Op, T, build

    from tvmdev.frontends.tflite import read
    from tvmdev.model.quant import Quant
    data = _quantized()
    g = read(tmp_path / "m.tflite", data)
    assert (g.tensors[1].dtype, g.tensors[1].quant) == ("int8", Quant((0.25,), (3,), 0))
    assert (g.tensors[0].dtype, g.tensors[0].quant) == ("float32", None)
    (tmp_path / "m.tflite").write_bytes(data)
    r = cli("import", str(tmp_path / "m.tflite"), "-o", str(tmp_path / "o"))
    assert r.code == 0, r.err
    doc = yaml.safe_load((tmp_path / "o" / "m.yaml").read_text())
    assert [op["op"] for op in doc["operators"]] == ["quantize", "dequantize"]
    # its C name comes from the operator that writes it (tvmdev.frontends.graph.c_names)
    assert doc["tensors"] == {"q": {"dtype": "int8", "c_name": "quantize_1_out",
                                    "quant": {"scale": [0.25], "zero_point": [3]}}}
    q8 = ([0.25], [3])
    ts = [T("x", [1, 4], type=9, quant=q8), T("r", [1, 4], type=9, quant=([0.5], [0])),
          T("t", [1, 4], type=9, quant=q8)]
    ops = [Op(CODES["QUANTIZE"], [0], [1]), Op(CODES["RELU6"], [1], [2])]
    bad = tmp_path / "bad"
    bad.mkdir()
    assert _import_err(cli, bad, build(Graph(ts, ops, [0], [2]))) == (
        "1 unsupported operator: RELU6 (int8) x1 (first: operator 1 't')")


def _one(kind: str, x: list[int], operands: list[np.ndarray], out: list[int],
         options: tuple[str, dict[str, float]] | None) -> bytes:
    from tflite_build import Graph, Op, T, build
    ts = [T("x", x)] + [T(f"c{k}", list(a.shape), a, type=2 if a.dtype == np.int32 else 0)
                        for k, a in enumerate(operands)] + [T("y", out)]
    return build(Graph(ts, [Op(CODES[kind], list(range(len(ts) - 1)), [len(ts) - 1],
                               options)], [0], [len(ts) - 1]))


def test_depth_multiplier_from_shapes(cli: Callable[..., Result], tmp_path: Path) -> None:
    """The option says 1, the filter has 2 channels per input channel: shapes win."""
    import yaml
    opts = ("DepthwiseConv2DOptions", {"Padding": 1, "StrideH": 1, "StrideW": 1,
                                       "DepthMultiplier": 1})
    model = tmp_path / "dw.tflite"
    model.write_bytes(_one("DEPTHWISE_CONV_2D", [1, 3, 3, 2],
                           [np.ones((1, 2, 2, 4), np.float32)], [1, 2, 2, 4], opts))
    r = cli("import", str(model), "-o", str(tmp_path / "o"))
    assert r.code == 0, r.err
    doc = yaml.safe_load((tmp_path / "o" / "dw.yaml").read_text())
    assert doc["operators"][0]["attrs"]["depth_multiplier"] == 2


def test_unmapped_variants(cli: Callable[..., Result], tmp_path: Path) -> None:
    """Filter channels not a multiple of the input's, a SIGN_BIT activation, paddings not
    constant: each one line naming the variant."""
    dw = ("DepthwiseConv2DOptions", {"Padding": 1, "StrideH": 1, "StrideW": 1})
    assert _import_err(cli, tmp_path, _one("DEPTHWISE_CONV_2D", [1, 3, 3, 2],
                                           [np.ones((1, 2, 2, 3), np.float32)],
                                           [1, 2, 2, 3], dw)) == (
        "1 unsupported operator: DEPTHWISE_CONV_2D (3 filter channels for 2 input "
        "channels) x1 (first: operator 0 'y')")
    assert _import_err(cli, tmp_path, _one("ADD", [1, 4], [np.ones(4, np.float32)], [1, 4],
                                           ("AddOptions", {"FusedActivationFunction": 5}))
                       ) == ("1 unsupported operator: ADD (fused SIGN_BIT) x1 (first: "
                             "operator 0 'y')")
    from tflite_build import Graph, Op, T, build
    ts = [T("x", [1, 4]), T("p", [2, 2], type=2), T("y", [1, 6])]
    assert _import_err(cli, tmp_path, build(Graph(ts, [Op(CODES["PAD"], [0, 1], [2])], [0],
                                                  [2]))) == (
        "1 unsupported operator: PAD (paddings not a constant integer tensor) x1 (first: "
        "operator 0 'y')")


def test_declared_shape_checked(cli: Callable[..., Result], tmp_path: Path) -> None:
    """An output shape the model declares wrongly is one line, not a wrong model."""
    opts = ("Pool2DOptions", {"Padding": 0, "StrideH": 2, "StrideW": 2, "FilterHeight": 2,
                              "FilterWidth": 2})
    assert _import_err(cli, tmp_path, _one("MAX_POOL_2D", [1, 5, 5, 1], [], [1, 2, 2, 1],
                                           opts)) == (
        "operator 0 MAX_POOL_2D 'y': tvmdev infers [1, 3, 3, 1] where the model declares "
        "[1, 2, 2, 1]")


def test_dangling_tensors(cli: Callable[..., Result], tmp_path: Path) -> None:
    """An operand nothing writes, an output nothing writes: one line each."""
    from tflite_build import Graph, Op, T, build
    ts = [T("x", [1, 4]), T("ghost", [1, 4]), T("y", [1, 4])]
    assert _import_err(cli, tmp_path, build(Graph(ts, [Op(CODES["ADD"], [0, 1], [2])], [0],
                                                  [2]))) == (
        "operator 0 (ADD) reads tensor 'ghost', which is neither an input, a constant nor "
        "written before it")
    assert _import_err(cli, tmp_path, build(Graph(ts, [Op(CODES["RELU"], [0], [2])], [0],
                                                  [2, 1]))) == (
        "output 'ghost' is not an input and no operator writes it")
