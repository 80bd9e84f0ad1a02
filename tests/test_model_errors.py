"""Bad model descriptions: one clear error naming file, line and item; exit 1; nothing
written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import Result, tree

GOOD = """\
name: m
devices:
  npu0: {kind: woofles}
inputs:
  x: {shape: [1, 4], dtype: float32}
outputs:
  y: {shape: [1, 3], dtype: float32}
constants:
  w: {shape: [4, 3], dtype: float32, random: {seed: 1, low: -1, high: 1}}
operators:
  - {name: fc, op: gemm, inputs: [x, w], outputs: [h], device: npu0}
  - {name: act, op: relu, inputs: [h], outputs: [y]}
"""

CASES = [
    ("unknown op", GOOD.replace("op: relu", "op: selu"),
     "m.yaml:12: operator 'act': unknown op 'selu'"),
    ("unknown dtype", GOOD.replace("[1, 4], dtype: float32", "[1, 4], dtype: float16"),
     "m.yaml:5: unknown dtype 'float16' for input 'x'"),
    ("shape mismatch", GOOD.replace("shape: [4, 3]", "shape: [5, 3]"),
     "m.yaml:11: operator 'fc' (gemm): A is [1, 4] and B is [5, 3]: inner dimensions 4 and "
     "5 differ"),
    ("declared output shape", GOOD.replace("y: {shape: [1, 3]", "y: {shape: [1, 2]"),
     "m.yaml:12: output 'y' is declared [1, 2] but 'act' (relu) produces [1, 3]"),
    ("reads an unwritten tensor", GOOD.replace("inputs: [h], outputs: [y]",
                                               "inputs: [g], outputs: [y]"),
     "m.yaml:12: operator 'act' reads 'g', which no earlier operator writes and which is not "
     "an input or constant"),
    ("reads a later tensor", GOOD.replace("inputs: [x, w], outputs: [h]",
                                          "inputs: [h, w], outputs: [h]"),
     "m.yaml:11: operator 'fc' reads 'h', which no earlier operator writes and which is not "
     "an input or constant"),
    ("two writers", GOOD + "  - {name: act2, op: relu, inputs: [h], outputs: [y]}\n",
     "m.yaml:13: tensor 'y' has two writers: 'act' and 'act2'"),
    ("unknown device instance", GOOD.replace("device: npu0}", "device: npu9}"),
     "m.yaml:11: operator 'fc' runs on unknown device 'npu9'"),
    ("bad device kind", GOOD.replace("kind: woofles", "kind: int"),
     "m.yaml:3: device name 'int' is a C keyword"),
    ("duplicate operator names", GOOD.replace("name: act,", "name: fc,"),
     "m.yaml:12: duplicate name 'fc'"),
    ("duplicate keys", GOOD.replace("constants:\n", "constants:\n  w: {shape: [1], dtype: "
                                    "float32, values: [1]}\n"),
     "m.yaml:10: duplicate key 'w' (first defined at line 9)"),
    ("input and constant share a name", GOOD.replace("  w: {shape", "  x: {shape")
     .replace("[x, w]", "[x, x]"),
     "m.yaml:9: duplicate name 'x'"),
    ("empty model", "", "m.yaml:1: the model is empty"),
    ("no operators", GOOD.split("operators:")[0] + "operators: []\n",
     "m.yaml:10: the model has no operators"),
    ("missing npy", GOOD.replace("random: {seed: 1, low: -1, high: 1}", "npy: missing.npy"),
     "m.yaml:9: constant 'w': no such .npy file: missing.npy"),
    ("unknown key", GOOD.replace("name: m\n", "name: m\nversion: 2\n"),
     "m.yaml:2: unknown key 'version' in the model"),
    ("model name keyword", GOOD.replace("name: m\n", "name: float\n"),
     "m.yaml:1: model name 'float' is a C keyword"),
    ("bad attribute", GOOD.replace("device: npu0}", "device: npu0, attrs: {alpha: x}}"),
     "m.yaml:11: operator 'fc' (gemm): attribute 'alpha' must be a number, got 'x'"),
    ("unknown attribute", GOOD.replace("device: npu0}", "device: npu0, attrs: {gamma: 1}}"),
     "m.yaml:11: operator 'fc' (gemm): unknown attribute 'gamma' for gemm (known: alpha, "
     "beta, transA, transB)"),
    ("matmul batch dims", GOOD.replace("op: gemm", "op: matmul")
     .replace("x: {shape: [1, 4]", "x: {shape: [2, 1, 1, 4]")
     .replace("w: {shape: [4, 3]", "w: {shape: [3, 1, 4, 3]"),
     "m.yaml:11: operator 'fc' (matmul): batch dims of [2, 1, 1, 4] and [3, 1, 4, 3] do not "
     "broadcast: [2, 1] and [3, 1]"),
]


@pytest.mark.parametrize("text,message", [(t, m) for _, t, m in CASES],
                         ids=[c[0] for c in CASES])
def test_bad_model(text: str, message: str, cli: Callable[..., Result],
                   tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text(text)
    (tmp_path / "out").mkdir()
    before = tree(tmp_path)
    r = cli("aot", "m.yaml", "-o", "out", cwd=tmp_path)
    assert r.code == 1, r.out + r.err
    assert r.err.splitlines()[0] == f"tvmdev: {message}"
    assert "Traceback" not in r.err
    assert tree(tmp_path) == before


def test_good_model_is_accepted(cli: Callable[..., Result], tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text(GOOD)
    r = cli("aot", "m.yaml", "-o", "out", cwd=tmp_path)
    assert r.code == 0, r.err


def test_json_models_are_accepted(cli: Callable[..., Result], tmp_path: Path) -> None:
    import json

    import yaml
    (tmp_path / "m.json").write_text(json.dumps(yaml.safe_load(GOOD)))
    assert cli("aot", "m.json", "-o", "out", cwd=tmp_path).code == 0
    assert (tmp_path / "out/tvmgen_m.c").is_file()


def test_npy_shape_mismatch(cli: Callable[..., Result], tmp_path: Path) -> None:
    np.save(tmp_path / "w.npy", np.zeros((3, 4), np.float32))
    (tmp_path / "m.yaml").write_text(GOOD.replace("random: {seed: 1, low: -1, high: 1}",
                                                  "npy: w.npy"))
    r = cli("aot", "m.yaml", "-o", "out", cwd=tmp_path)
    assert r.code == 1
    assert r.err.splitlines()[0] == ("tvmdev: m.yaml:9: constant 'w': w.npy has shape [3, 4], "
                                     "declared [4, 3]")


def test_invalid_yaml(cli: Callable[..., Result], tmp_path: Path) -> None:
    # libyaml and PyYAML's pure-Python parser word this differently; both name the line.
    (tmp_path / "m.yaml").write_text(GOOD.replace("inputs:\n  x:", "inputs:\n x:\n   - ["))
    r = cli("aot", "m.yaml", "-o", "out", cwd=tmp_path)
    assert r.code == 1
    line = r.err.splitlines()[0]
    assert line.startswith("tvmdev: m.yaml:7: invalid YAML: ") and "expected ',' or ']'" in line
    assert not (tmp_path / "out").exists()
