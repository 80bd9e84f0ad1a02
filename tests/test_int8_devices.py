"""int8 models on accelerators: the convolutions of an int8 TFLite model on one woofles
instance (npu0) and its fully connected layers on another (npu1), through the woofles
kernels' int8 forms (new-device's scaffolds, simulated), bit-exact with TFLM's
interpreter; and a failure injected at every device call site, under both schedules,
leaves every device balanced and returns the injected code.

keyword_spotting (DS-CNN: 5 CONV_2D, 4 DEPTHWISE_CONV_2D, 1 FULLY_CONNECTED, with
AVERAGE_POOL_2D and SOFTMAX) is the model of issue #14; until its pooling and softmax
import, its cases skip saying so, and anomaly_detection (10 FULLY_CONNECTED) and a
small model built here (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED) stand in.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import tflm_ref
from conftest import Result, need_module, need_tool
from test_run_host import CODES

from tvmdev.frontends.graph import Imported
from tvmdev.frontends.importer import import_file
from tvmdev.load.board import board_by_name
from tvmdev.model import reference
from tvmdev.plan.schedule import schedule
from tvmdev.run.backend import RunOptions
from tvmdev.run.job import execute, prepare

need_module("tflite", "pip install -e '.[tflite]'")
import tflite  # noqa: E402

pytestmark = pytest.mark.slow  # builds and runs host programs

CONVS, FCS = ("conv2d", "depthwise_conv2d"), ("fully_connected",)
PLACES = {"npu0": CONVS, "npu1": FCS}


def conv_fc_model() -> bytes:
    """x float [1, 7, 6, 4] -> QUANTIZE -> CONV_2D (SAME, RELU6, per-channel weights) ->
    DEPTHWISE_CONV_2D (stride 2, depth multiplier 2) -> FULLY_CONNECTED (per-tensor
    weights [10, 144], RELU) -> DEQUANTIZE -> y [1, 10]."""
    from tflite_build import Graph, Op, T, build
    c = {k: v for k, v in vars(tflite.BuiltinOperator).items() if isinstance(v, int)}
    rng = np.random.default_rng(11)
    s_in, s_a, s_b, s_out = 2.0 / 255, 4.0 / 255, 6.0 / 255, 16.0 / 255
    s_w1 = list(rng.uniform(0.5, 2.0, 6) / 254)
    s_w2 = list(rng.uniform(0.5, 2.0, 12) / 254)
    s_w3 = 0.25 / 127
    w1 = rng.integers(-127, 128, (6, 3, 3, 4)).astype(np.int8)
    w2 = rng.integers(-127, 128, (1, 3, 3, 12)).astype(np.int8)
    w3 = rng.integers(-127, 128, (10, 144)).astype(np.int8)
    ts = [T("x", [1, 7, 6, 4]), T("xq", [1, 7, 6, 4], type=9, quant=([s_in], [-1])),
          T("w1", [6, 3, 3, 4], w1, type=9, quant=(s_w1, [0] * 6)),
          T("b1", [6], rng.integers(-2000, 2000, 6).astype(np.int32), type=2,
            quant=([s_in * s for s in s_w1], [0] * 6)),
          T("a", [1, 7, 6, 6], type=9, quant=([s_a], [3])),
          T("w2", [1, 3, 3, 12], w2, type=9, quant=(s_w2, [0] * 12), quant_axis=3),
          T("b2", [12], rng.integers(-2000, 2000, 12).astype(np.int32), type=2,
            quant=([s_a * s for s in s_w2], [0] * 12)),
          T("b", [1, 4, 3, 12], type=9, quant=([s_b], [-7])),
          T("w3", [10, 144], w3, type=9, quant=([s_w3], [0])),
          T("b3", [10], rng.integers(-500, 500, 10).astype(np.int32), type=2,
            quant=([s_b * s_w3], [0])),
          T("yq", [1, 10], type=9, quant=([s_out], [-20])),
          T("y", [1, 10])]
    conv = ("Conv2DOptions", {"Padding": 0, "StrideH": 1, "StrideW": 1,
                              "FusedActivationFunction": 3})
    dw = ("DepthwiseConv2DOptions", {"Padding": 0, "StrideH": 2, "StrideW": 2,
                                     "DepthMultiplier": 2, "FusedActivationFunction": 0})
    fc = ("FullyConnectedOptions", {"FusedActivationFunction": 1, "KeepNumDims": 0})
    ops = [Op(c["QUANTIZE"], [0], [1]), Op(c["CONV_2D"], [1, 2, 3], [4], conv),
           Op(c["DEPTHWISE_CONV_2D"], [4, 5, 6], [7], dw),
           Op(c["FULLY_CONNECTED"], [7, 8, 9], [10], fc), Op(c["DEQUANTIZE"], [10], [11])]
    return build(Graph(ts, ops, [0], [11]))


MODELS = ("keyword_spotting", "anomaly_detection", "conv_fc")


@pytest.fixture
def model_path(request: pytest.FixtureRequest, tflite_model: Callable[[str], Path],
               tmp_path: Path) -> Path:
    """The .tflite file of the case."""
    name = request.param
    if name == "conv_fc":
        path = tmp_path / "conv_fc.tflite"
        path.write_bytes(conv_fc_model())
        return path
    return tflite_model(f"{name}.tflite")


def placement(path: Path) -> tuple[list[str], list[str]]:
    """``--device`` and ``--place`` values: npu0 for the model's convolutions, npu1 for
    its fully connected layers (an instance only when the model has such operators)."""
    kinds = {op.op for op in import_file(path).to_model().operators}
    devices, places = [], []
    for dev, ops in PLACES.items():
        mine = [o for o in ops if o in kinds]
        if mine:
            devices.append(f"{dev}:woofles")
            places.append(f"{','.join(mine)}={dev}")
    return devices, places


def placement_args(path: Path) -> list[str]:
    """:func:`placement` as command-line arguments."""
    devices, places = placement(path)
    return [a for d in devices for a in ("--device", d)] + \
        [a for p in places for a in ("--place", p)]


def placed(path: Path) -> Imported:
    """The model imported in memory with :func:`placement`'s devices."""
    im = import_file(path)
    im.place(*placement(path))
    return im


def tflm_inputs(path: Path, seed: int) -> tuple[list[str], list[np.ndarray]]:
    """Input names and seeded inputs spanning each input's quantized range (as
    reference.random_inputs draws them)."""
    m = import_file(path).to_model()
    inputs = reference.random_inputs(m, seed)
    return list(m.inputs), [inputs[n] for n in m.inputs]


@pytest.mark.parametrize("model_path", MODELS, indirect=True)
def test_convolutions_and_fully_connected_on_two_instances(
        model_path: Path, cli: Callable[..., Result], tmp_path: Path) -> None:
    need_tool("gcc", "apt install gcc")
    names, inputs = tflm_inputs(model_path, 5)
    (tmp_path / "in").mkdir()
    for name, x in zip(names, inputs, strict=True):
        np.save(tmp_path / "in" / f"{name}.npy", x)
    r = cli("run", str(model_path), *placement_args(model_path), "--inputs", str(tmp_path / "in"),
            "--save-outputs", str(tmp_path / "out"), "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS"), r.out
    plan = json.loads(next((tmp_path / "b/model").glob("*_plan.json")).read_text())
    on_device = [o for o in plan["operators"] if o["op"] in CONVS + FCS]
    assert on_device
    for o in on_device:
        dev = "npu0" if o["op"] in CONVS else "npu1"
        assert o["device"] == dev, o
        assert o["kernels"][0] == f"woofles_{o['op']}_s8", o
    for dev in {o["device"] for o in on_device}:
        assert f"device {dev}: " in r.out and "balanced" in r.out
    outputs = import_file(model_path).to_model().outputs
    expected = tflm_ref.outputs(model_path.read_bytes(), inputs, len(outputs))
    for name, want in zip(outputs, expected, strict=True):
        got = np.load(tmp_path / "out" / f"{name}.npy")
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want), (
            f"{name}: {np.count_nonzero(got != want)} of {got.size} elements differ")
        assert np.abs(got).sum() > 0


@pytest.mark.parametrize("sched", ["eager", "lazy"])
@pytest.mark.parametrize("model_path", MODELS, indirect=True)
def test_fault_at_every_device_call_site(model_path: Path, sched: str,
                                         tmp_path: Path) -> None:
    need_tool("gcc", "apt install gcc")
    m = placed(model_path).to_model()
    prep = prepare(m, board_by_name("host"), tmp_path / "b", sched)
    prep.backend.build(prep)
    m = prep.model
    steps = schedule(m, sched)
    device_ops = sum(1 for op in m.operators if op.device is not None)
    sites = {"activate": sum(s.action == "activate" for s in steps), "open": device_ops,
             "operator": device_ops, "close": device_ops,
             "deactivate": sum(s.action == "deactivate" for s in steps)}
    assert all(sites.values()), sites
    names, inputs = tflm_inputs(model_path, 9)
    given = dict(zip(names, inputs, strict=True))
    injected = 0
    for fn, count in sites.items():
        for nth in range(1, count + 1):
            res = execute(prep, given, RunOptions(fault=f"{fn}:{nth}:{CODES[fn]}",
                                                  trace=False))
            assert res.status == CODES[fn], f"{fn}:{nth}: status {res.status}"
            assert res.balanced() == [], f"{fn}:{nth}: {res.devices}"
            for name, c in res.devices.items():
                # Every successful Open got exactly one Close, every Activate one Deactivate.
                assert c["open"] == c["close"] and c["activate"] == c["deactivate"], name
            injected += 1
        # One past the last call site: no failure, TFLM's outputs.
        res = execute(prep, given, RunOptions(fault=f"{fn}:{count + 1}:{CODES[fn]}",
                                              trace=False))
        assert res.status == 0 and not res.mismatches() and not res.balanced()
    assert injected == sum(sites.values())
    expected = tflm_ref.outputs(model_path.read_bytes(), inputs, len(m.outputs))
    for name, want in zip(m.outputs, expected, strict=True):
        assert np.array_equal(res.outputs[name], want), name
