"""tvmdev run on the host: the examples against the numpy reference, fault injection at
every device call site, two threads on shared devices under ThreadSanitizer, and a
user's own device implementation.

Tolerance: float32 outputs must satisfy |c - r| <= 1e-5 + 1e-4 * |r| against the float64
numpy reference rounded to float32 (ATOL, RTOL).
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import MATMUL_BROADCAST_MODEL, REPO, Result, need_tool

from tvmdev.load.board import board_by_name
from tvmdev.load.model import load_model
from tvmdev.model import reference
from tvmdev.plan.schedule import schedule
from tvmdev.run.backend import Job, RunOptions
from tvmdev.run.compare import ATOL, RTOL
from tvmdev.run.job import execute, prepare

pytestmark = pytest.mark.slow  # builds and runs host programs

EXAMPLES = sorted((REPO / "examples").glob("*/*.yaml"))
IDS = [p.parent.name for p in EXAMPLES]
WITH_DEVICES = [p for p in EXAMPLES if load_model(p).devices]
CODES = {"activate": -11, "open": -12, "operator": -13, "close": -14, "deactivate": -15}


def _prepare(path: Path, sched: str, build: Path, extra: tuple[str, ...] = ()
             ) -> Job:
    need_tool("gcc")
    m = load_model(path)
    prep = prepare(m, board_by_name("host"), build, sched)
    prep.backend.build(prep, extra_cflags=extra)
    return prep


@pytest.mark.parametrize("sched", ["eager", "lazy"])
@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_example_matches_reference(path: Path, sched: str, cli: Callable[..., Result],
                                   tmp_path: Path) -> None:
    need_tool("gcc")
    r = cli("run", str(path), "--schedule", sched, "--build-dir", str(tmp_path / "b"),
            "--save-outputs", str(tmp_path / "outs"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS")
    m = load_model(path)
    ref = reference.evaluate(m, reference.random_inputs(m))
    for name in m.outputs:
        got = np.load(tmp_path / "outs" / f"{name}.npy")
        np.testing.assert_allclose(got, ref[name], rtol=RTOL, atol=ATOL)
        assert np.abs(got).sum() > 0  # not a zero output that happens to pass


@pytest.mark.parametrize("sched", ["eager", "lazy"])
@pytest.mark.parametrize("path", WITH_DEVICES, ids=[p.parent.name for p in WITH_DEVICES])
def test_fault_at_every_call_site(path: Path, sched: str, tmp_path: Path) -> None:
    prep = _prepare(path, sched, tmp_path / "b")
    m = prep.model
    steps = schedule(m, sched)
    device_ops = sum(1 for op in m.operators if op.device is not None)
    sites = {"activate": sum(s.action == "activate" for s in steps), "open": device_ops,
             "operator": device_ops, "close": device_ops,
             "deactivate": sum(s.action == "deactivate" for s in steps)}
    assert all(sites.values())
    inputs = reference.random_inputs(m)
    injected = 0
    for fn, count in sites.items():
        for nth in range(1, count + 1):
            res = execute(prep, inputs, RunOptions(fault=f"{fn}:{nth}:{CODES[fn]}", trace=False))
            assert res.status == CODES[fn], f"{fn}:{nth}: status {res.status}"
            assert res.balanced() == [], f"{fn}:{nth}: {res.devices}"
            for name, c in res.devices.items():
                # Every successful Open got exactly one Close, every Activate one Deactivate.
                assert c["open"] == c["close"] and c["activate"] == c["deactivate"], name
            injected += 1
        # One past the last call site: no failure, the right result.
        res = execute(prep, inputs, RunOptions(fault=f"{fn}:{count + 1}:{CODES[fn]}",
                                              trace=False))
        assert res.status == 0 and not res.mismatches() and not res.balanced()
    assert injected == sum(sites.values())


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_two_threads_share_devices_under_tsan(path: Path, tmp_path: Path) -> None:
    prep = _prepare(path, "lazy", tmp_path / "b", ("-fsanitize=thread", "-g"))
    res = execute(prep, reference.random_inputs(prep.model),
                  RunOptions(threads=2, iterations=25, trace=False))
    assert "ThreadSanitizer" not in res.stderr, res.stderr
    assert res.status == 0 and not res.mismatches()
    device_ops = {d.name: sum(op.device == d.name for op in prep.model.operators)
                  for d in prep.model.devices}
    for name, c in res.devices.items():
        assert c["operator"] == 2 * 25 * device_ops[name]
        assert c["max_inside"] == 1, "two threads ran operators on one device at once"
    assert res.balanced() == []


def test_inputs_from_npy(cli: Callable[..., Result], tmp_path: Path) -> None:
    need_tool("gcc")
    path = REPO / "examples/mlp/mlp.yaml"
    m = load_model(path)
    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(1, 64)
    (tmp_path / "in").mkdir()
    np.save(tmp_path / "in/x.npy", x)
    r = cli("run", str(path), "--inputs", str(tmp_path / "in"), "--save-outputs",
            str(tmp_path / "out"), "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    ref = reference.evaluate(m, {"x": x})["y"]
    np.testing.assert_allclose(np.load(tmp_path / "out/y.npy"), ref, rtol=1e-4, atol=1e-5)
    # A wrong input shape is bad input.
    np.save(tmp_path / "in/x.npy", np.zeros((2, 64), np.float32))
    r = cli("run", str(path), "--inputs", str(tmp_path / "in"), "--build-dir",
            str(tmp_path / "b"))
    assert r.code == 1
    assert "input 'x' has shape [2, 64], the model wants [1, 64]" in r.err


def test_matmul_numpy_batch_broadcasting(cli: Callable[..., Result], tmp_path: Path) -> None:
    """Every output against np.matmul of the same arrays (inputs from .npy files; the
    constants as the README defines ``random``)."""
    need_tool("gcc")
    path = tmp_path / "bmm.yaml"
    path.write_text(MATMUL_BROADCAST_MODEL)
    rng = np.random.default_rng(42)
    (tmp_path / "in").mkdir()
    shapes = {"a": (3, 1, 3, 4), "b": (1, 2, 4, 2), "r": (2, 1, 5), "v": (5,), "s": (1, 2, 3),
              "x": (2, 6, 4)}
    x = {name: rng.uniform(-1, 1, shape).astype(np.float32) for name, shape in shapes.items()}
    for name, arr in x.items():
        np.save(tmp_path / "in" / f"{name}.npy", arr)
    for name, seed, shape in (("c", 3, (2, 5, 3)), ("t", 4, (4, 1, 3, 2)), ("w", 5, (4, 3))):
        x[name] = np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)
    r = cli("run", str(path), "--inputs", str(tmp_path / "in"), "--save-outputs",
            str(tmp_path / "out"), "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    want = {"y1": ("a", "b"), "y2": ("r", "v"), "y3": ("v", "c"), "y4": ("s", "t"),
            "y5": ("x", "w")}
    for out, (a, b) in want.items():
        ref = np.matmul(x[a].astype(np.float64), x[b].astype(np.float64))
        got = np.load(tmp_path / "out" / f"{out}.npy")
        assert got.shape == ref.shape, out
        np.testing.assert_allclose(got, ref, rtol=RTOL, atol=ATOL, err_msg=out)
    np.testing.assert_allclose(np.load(tmp_path / "out/y6.npy"),
                               np.load(tmp_path / "out/y5.npy").reshape(12, 3),
                               rtol=RTOL, atol=ATOL)


def test_user_device_implementation_is_used(cli: Callable[..., Result], tmp_path: Path) -> None:
    need_tool("gcc")
    assert cli("new-device", "woofles", "--platform", "posix", "-o", str(tmp_path / "dev"),
               ).code == 0
    path = REPO / "examples/mlp/mlp.yaml"
    gemm = tmp_path / "dev/src/kernels/woofles/gemm.c"
    text = gemm.read_text()
    # 1. The accelerator declines every call: the portable kernel serves, output right.
    gemm.write_text(text.replace("    return tvmk_gemm_f32(A, B, C, Y, params, resource_handle);",
                                 "    (void)A; (void)B; (void)C; (void)Y; (void)params;\n"
                                 "    (void)resource_handle;\n"
                                 "    return TVM_DEVICE_DECLINED;"))
    r = cli("run", str(path), "--device-dir", str(tmp_path / "dev"), "--build-dir",
            str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    # 2. A broken accelerator kernel: the run must catch the wrong output.
    gemm.write_text(text.replace("    return tvmk_gemm_f32(A, B, C, Y, params, resource_handle);",
                                 "    int32_t s = tvmk_gemm_f32(A, B, C, Y, params, "
                                 "resource_handle);\n    Y[0] += 1.0f;\n    return s;"))
    r = cli("run", str(path), "--device-dir", str(tmp_path / "dev"), "--build-dir",
            str(tmp_path / "b"))
    assert r.code == 1
    assert "FAIL: outputs differ from the reference: y" in r.out


BROKEN_TANH_YAML = """\
- op: tanh
  header: broken_tanh.h
  kernels:
    - arg_meta: null
      kernel_name: broken_tanh
      sources: [broken_tanh.c]
"""
BROKEN_TANH_H = """\
#include "tvmk_portable.h"
int32_t broken_tanh(const float *input, float *output, const struct tvmk_unary_params *params,
                    void *resource_handle);
"""
BROKEN_TANH_C = """\
#include "broken_tanh.h"
int32_t broken_tanh(const float *input, float *output, const struct tvmk_unary_params *params,
                    void *resource_handle)
{
\treturn nope + tvmk_tanh_f32(input, output, params, resource_handle);
}
"""


def test_a_build_failure_prints_the_compiler_log_line_by_line(cli: Callable[..., Result],
                                                               tmp_path: Path) -> None:
    """One line says what failed; below it, indented, are the compiler's own lines (not
    one line of literal \\n), exactly those gcc prints; the hint comes last."""
    need_tool("gcc")
    for name, text in (("broken_tanh.yaml", BROKEN_TANH_YAML), ("broken_tanh.h", BROKEN_TANH_H),
                       ("broken_tanh.c", BROKEN_TANH_C)):
        (tmp_path / name).write_text(text)
    build = tmp_path / "b"
    r = cli("run", str(REPO / "examples/decoder/decoder.yaml"), "--kernels",
            str(tmp_path / "broken_tanh.yaml"), "--build-dir", str(build))
    assert r.code == 1, r.out + r.err
    lines = r.err.splitlines()
    assert lines[0] == f"tvmdev: {build}: the build failed (gcc exited 1)"
    assert lines[-1] == "  hint: the full command is in build.cmd in the build folder"
    assert "\\n" not in r.err and "Traceback" not in r.err
    log = lines[1:-1]
    assert any(line.startswith(f"    {tmp_path / 'broken_tanh.c'}:5:") and
               "error: " in line and "nope" in line for line in log), log
    # The same lines gcc prints for the command the build ran, each indented 4 spaces.
    (command,) = (build / "build.cmd").read_text().splitlines()
    proc = subprocess.run(shlex.split(command), capture_output=True, text=True)
    want = [line.rstrip().expandtabs(8) for line in proc.stderr.strip("\n").splitlines()]
    assert proc.returncode == 1 and len(want) >= 3
    assert log == [f"    {line}" if line else "" for line in want]


def test_a_model_named_like_the_build_folders_own_entries(
        cli: Callable[..., Result], tmp_path: Path,
        tflite_model: Callable[[str], Path]) -> None:
    """The program is named so that no model name can clash with the build folder's
    model/, devices/ or run/ (issue 21): model.tflite imports as a model named model."""
    need_tool("gcc")
    shutil.copyfile(tflite_model("sine_float.tflite"), tmp_path / "model.tflite")
    mlp = (REPO / "examples/mlp/mlp.yaml").read_text().split("\n", 4)[4]
    shutil.copyfile(REPO / "examples/mlp/w1.npy", tmp_path / "w1.npy")
    for name in ("devices", "run"):
        (tmp_path / f"{name}.yaml").write_text(f"name: {name}\n{mlp}")
    for path, name in (("model.tflite", "model"), ("devices.yaml", "devices"),
                       ("run.yaml", "run")):
        r = cli("run", path, cwd=tmp_path)
        assert r.code == 0, r.out + r.err
        assert r.out.rstrip().endswith("PASS")
        build = tmp_path / f"tvmdev-build/{name}-host"
        assert (build / f"{name}.out").is_file() and (build / "model").is_dir()
