"""A model `tvmdev aot` accepts always compiles: hostile names and values (tests/hostile.py,
seeded) either stop aot cleanly (exit 1, at most three lines, no traceback, nothing
written) or give an executor that gcc compiles with -std=c99 -Wall -Wextra -Werror
-pedantic, with the device headers of its kinds. A few accepted ones also run on the host
and match the reference (slow)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml
from conftest import REPO, need_tool, run_ok
from hostile import Case, cases

from tvmdev.cli import main
from tvmdev.model.device import DeviceSpec
from tvmdev.render.device import device_files, project_files

SEED = int(os.environ.get("TVMDEV_HOSTILE_SEED", "8"))
SHARDS, PER_SHARD = 6, 50  # 300 cases
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]


def _aot(case: Case, root: Path) -> tuple[int, str, str, Path]:
    folder = root / f"case{case.index}"
    folder.mkdir()
    model = folder / "m.yaml"
    model.write_text(yaml.dump(case.doc, Dumper=yaml.CSafeDumper, allow_unicode=True,
                               sort_keys=False))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["aot", str(model), "-o", str(folder / "out")])
    return code, out.getvalue(), err.getvalue(), folder / "out"


def _device_headers(kinds: set[str], root: Path) -> Path:
    """The headers the executors include (status.h and tvm/device/<kind>.h) for ``kinds``,
    as new-device writes them."""
    specs = [DeviceSpec(k, ("posix",)) for k in sorted(kinds)]
    files = project_files(specs or [DeviceSpec("any", ("posix",))])
    for spec in specs:
        files += device_files(spec)
    for f in files:
        if f.path.startswith("include/"):
            (root / f.path).parent.mkdir(parents=True, exist_ok=True)
            (root / f.path).write_text(f.content)
    return root / "include"


def _kinds(out: Path) -> set[str]:
    header = next(out.glob("tvmgen_*.h")).read_text()
    return set(re.findall(r'#include "tvm/device/(\w+)\.h"', header)) - {"status"}


def run_cases(batch: list[Case], root: Path) -> Counter[tuple[str, str]]:
    """Generate every case, check each refusal, compile every accepted executor in one gcc
    run; the outcomes by (class, outcome)."""
    outcomes: Counter[tuple[str, str]] = Counter()
    sources: dict[str, Case] = {}
    kinds: set[str] = set()
    for case in batch:
        code, out, err, folder = _aot(case, root)
        lines = err.splitlines()
        if code == 1:
            assert 1 <= len(lines) <= 3 and lines[0].startswith("tvmdev: "), case.describe() + err
            assert "Traceback" not in err, case.describe() + err
            assert not folder.exists(), case.describe() + ": refused, yet wrote " + str(folder)
            outcomes[case.cls, "refused"] += 1
            continue
        assert code == 0 and not err, f"{case.describe()}: exit {code}\n{out}{err}"
        (c_file,) = folder.glob("tvmgen_*.c")
        renamed = c_file.with_name(f"case{case.index}.c")  # one object file per case
        c_file.rename(renamed)
        sources[str(renamed)] = case
        kinds |= _kinds(folder)
        outcomes[case.cls, "compiled"] += 1
    if sources:
        include = _device_headers(kinds, root / "devices")
        proc = subprocess.run(
            [need_tool("gcc"), *STRICT, "-S", f"-I{include}",
             f"-I{REPO / 'runtime/kernels/portable'}", *sources],
            cwd=root, capture_output=True, text=True)
        failed = sorted({m for m in re.findall(r"^(/\S+?\.c):", proc.stderr, re.M)})
        assert proc.returncode == 0, "\n".join(
            [sources[f].describe() for f in failed if f in sources] + [proc.stderr[:4000]])
    return outcomes


# The first shard stays in the fast lane; the other five (compiling 250 models) are slow.
@pytest.mark.parametrize("shard", [0, *(pytest.param(s, marks=pytest.mark.slow)
                                        for s in range(1, SHARDS))])
def test_hostile_models_are_refused_or_compile(shard: int, tmp_path: Path) -> None:
    outcomes = run_cases(cases(SEED, PER_SHARD, shard * PER_SHARD), tmp_path)
    # The generator reaches both ends for both classes; a shard that only refused or
    # only compiled would test half of what it claims.
    for cls in ("names", "values"):
        assert outcomes[cls, "refused"] >= 3 and outcomes[cls, "compiled"] >= 3, outcomes


def _accepted(example_filter: str, count: int) -> list[Case]:
    """Accepted name cases with hostile input/output names, for the runs."""
    picked = []
    for case in cases(SEED, 400):
        if (case.cls == "names" and case.example == example_filter
                and any(w.startswith(("input", "output", "tensors", "operator"))
                        for w in case.what)):
            picked.append(case)
    return picked[:count]


@pytest.mark.slow
@pytest.mark.parametrize("example", ["mlp", "cnn", "decoder"])
def test_accepted_hostile_models_run_and_match(example: str, tmp_path: Path) -> None:
    need_tool("gcc")
    ran = 0
    for case in _accepted(example, 6):
        code, _, _, folder = _aot(case, tmp_path)
        if code != 0:
            continue
        r = subprocess.run(["python3", "-m", "tvmdev", "run", str(folder.parent / "m.yaml"),
                            "--build-dir", str(folder.parent / "build")],
                           capture_output=True, text=True, cwd=tmp_path,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
        assert r.returncode == 0 and r.stdout.rstrip().endswith("PASS"), (
            case.describe() + "\n" + r.stdout + r.stderr)
        ran += 1
    assert ran >= 2, "the generator gave fewer than two accepted cases to run"


OPTIONAL = """\
name: opt
devices:
  npu0: {kind: woofles}
inputs:
  x: {shape: [3, 4], dtype: float32}
  im: {shape: [1, 2, 5, 5], dtype: float32}
  cin: C_SHAPE_IN
  bin: {shape: [3], dtype: float32}
outputs:
  y: {shape: [3, 5], dtype: float32}
  z: {shape: [1, 3, 3, 3], dtype: float32}
constants:
  w: {shape: [4, 5], dtype: float32, random: {seed: 1, low: -1, high: 1}}
  cw: {shape: [3, 2, 3, 3], dtype: float32, random: {seed: 2, low: -1, high: 1}}
  cc: C_SHAPE_CONST
  bc: {shape: [3], dtype: float32, random: {seed: 4, low: -1, high: 1}}
operators:
  - {name: fc, op: gemm, inputs: GEMM_INPUTS, outputs: [y], attrs: {beta: 0.5}DEVICE}
  - {name: cv, op: conv2d, inputs: CONV_INPUTS, outputs: [z]DEVICE}
"""
C_ARGS = {"absent": "[x, w]", "null": "[x, w, null]", "empty": "[x, w, '']",
          "constant": "[x, w, cc]", "input": "[x, w, cin]"}
B_ARGS = {"absent": "[im, cw]", "null": "[im, cw, null]", "empty": "[im, cw, '']",
          "constant": "[im, cw, bc]", "input": "[im, cw, bin]"}
C_SHAPES = {"scalar": "[]", "1": "[1]", "N": "[5]", "1N": "[1, 5]", "M1": "[3, 1]",
            "MN": "[3, 5]"}


def optional_model(c: str, b: str, shape: str, device: bool) -> str:
    """The model with gemm's C and conv2d's B given as ``c`` and ``b``."""
    spec = f"{{shape: {C_SHAPES[shape]}, dtype: float32"
    return (OPTIONAL.replace("GEMM_INPUTS", C_ARGS[c]).replace("CONV_INPUTS", B_ARGS[b])
            .replace("C_SHAPE_IN", spec + "}")
            .replace("C_SHAPE_CONST", spec + ", random: {seed: 3, low: -1, high: 1}}")
            .replace("DEVICE", ", device: npu0" if device else ""))


OPTIONAL_CASES = [(c, b, s, d) for c in C_ARGS for b in B_ARGS for s in C_SHAPES
                  for d in (False, True)
                  if (s == "MN" or c in ("constant", "input")) and (b == c or b == "absent")]


@pytest.mark.slow
def test_every_optional_input_way_compiles(tmp_path: Path) -> None:
    """gemm's C and conv2d's B: absent, null, '', a constant or an input of each broadcast
    shape, on a device or not: each compiles strictly (an unread constant is not emitted,
    an absent input is NULL)."""
    sources = []
    for i, (c, b, shape, device) in enumerate(OPTIONAL_CASES):
        folder = tmp_path / f"case{i}"
        folder.mkdir()
        (folder / "m.yaml").write_text(optional_model(c, b, shape, device))
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["aot", str(folder / "m.yaml"), "-o", str(folder)]) == 0
        text = (folder / "tvmgen_opt.c").read_text()
        assert ("tvmgen_opt_const_cc" in text) == (c == "constant"), (c, b, shape)
        assert ("tvmgen_opt_const_bc" in text) == (b == "constant"), (c, b, shape)
        sources.append(str((folder / "tvmgen_opt.c").rename(folder / f"case{i}.c")))
    include = _device_headers({"woofles"}, tmp_path / "dev")
    run_ok([need_tool("gcc"), *STRICT, "-S", f"-I{include}",
            f"-I{REPO / 'runtime/kernels/portable'}", *sources], cwd=tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("c,b,shape,device", OPTIONAL_CASES,
                         ids=[f"C-{c}-{s}-B-{b}{'-npu' if d else ''}"
                              for c, b, s, d in OPTIONAL_CASES])
def test_every_optional_input_way_runs(c: str, b: str, shape: str, device: bool,
                                       tmp_path: Path) -> None:
    need_tool("gcc")
    (tmp_path / "m.yaml").write_text(optional_model(c, b, shape, device))
    r = subprocess.run(["python3", "-m", "tvmdev", "run", "m.yaml", "--build-dir", "build"],
                       capture_output=True, text=True, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0 and r.stdout.rstrip().endswith("PASS"), r.stdout + r.stderr


HOSTILE_CONCAT = """\
name: cat
devices:
  npu0: {kind: woofles}
inputs:
  'a"b': {shape: [2, 3, 4], dtype: float32}
  '*/': {shape: [2, 1, 4], dtype: float32}
outputs:
  INT32_MAX: {shape: [2, 6, 4], dtype: float32}
  concat_params: {shape: [2, 6, 12], dtype: float32}
constants:
  workspace: {shape: [2, 2, 4], dtype: float32, random: {seed: 1, low: -1, high: 1}}
operators:
  - {name: 'gemm_params', op: mul, inputs: ['*/', '*/'], outputs: [t_x]}
  - {name: inputs, op: concat, inputs: ['a"b', t_x, workspace], outputs: [INT32_MAX],
     attrs: {axis: 1}}
  - {name: '%s', op: concat, inputs: [INT32_MAX, INT32_MAX, INT32_MAX],
     outputs: [concat_params], attrs: {axis: -1}, device: npu0}
"""


def test_hostile_names_in_a_variadic_call_compile(tmp_path: Path) -> None:
    """concat's compound-literal argument takes its tensors' registered spellings: names
    like macros, generated locals and params structs are mangled and the executor compiles
    strictly."""
    (tmp_path / "m.yaml").write_text(HOSTILE_CONCAT)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["aot", str(tmp_path / "m.yaml"), "-o", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "tvmgen_cat.c").read_text()
    assert text.count("(const float *const[]){") == 2
    include = _device_headers({"woofles"}, tmp_path / "dev")
    run_ok([need_tool("gcc"), *STRICT, "-S", f"-I{include}",
            f"-I{REPO / 'runtime/kernels/portable'}", str(tmp_path / "out" / "tvmgen_cat.c")],
           cwd=tmp_path)
