"""tvmdev run --board linux_aarch64: cross-compiled, run under qemu-aarch64, gemm, matmul
and fully_connected offloaded to the KleidiAI device kind; compared with the numpy reference like
every board (|c - r| <= 1e-5 + 1e-4 |r|).

Without KLEIDIAI_SOURCE_DIR the integration runs on tvmdev's reference micro-kernels;
with it, on KleidiAI's."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import MATMUL_BROADCAST_MODEL, REPO, Result, need_tool

pytestmark = pytest.mark.slow  # programs under qemu-aarch64

EXAMPLES = sorted((REPO / "examples").glob("*/*.yaml"))


def _tools() -> None:
    need_tool("aarch64-linux-gnu-gcc", "apt-get install gcc-aarch64-linux-gnu")
    need_tool("qemu-aarch64", "apt-get install qemu-user")


@pytest.mark.parametrize("cpu", ["max", "cortex-a53"])
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.parent.name for p in EXAMPLES])
def test_examples_on_linux_aarch64(path: Path, cpu: str, cli: Callable[..., Result],
                                   tmp_path: Path) -> None:
    _tools()
    r = cli("run", str(path), "--board", "linux_aarch64", "--cpu", cpu, "--build-dir",
            str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS")
    plan = json.loads(next((tmp_path / "b/model").glob("*_plan.json")).read_text())
    offloaded = [o for o in plan["operators"] if o["device"] == "cpu"]
    for op in offloaded:
        assert op["op"] in ("gemm", "matmul", "fully_connected")
        assert op["kernels"][0].startswith("tvmdev_kai_") and op["kernels"][-1].startswith(
            "tvmk_"), op
    if path.parent.name == "decoder":
        assert len(offloaded) == 3
        assert {"name": "cpu", "kind": "kleidiai"} in plan["devices"]


def test_matmul_batch_broadcasting_on_linux_aarch64(cli: Callable[..., Result],
                                                    tmp_path: Path) -> None:
    """matmuls on no device go to KleidiAI: the one without batch dims runs there, the
    batched and broadcast ones are declined to the portable kernel; all match numpy."""
    _tools()
    path = tmp_path / "bmm.yaml"
    path.write_text(MATMUL_BROADCAST_MODEL)
    r = cli("run", str(path), "--board", "linux_aarch64", "--build-dir", str(tmp_path / "b"))
    assert r.code == 0, r.out + r.err
    assert r.out.rstrip().endswith("PASS")
    plan = json.loads((tmp_path / "b/model/tvmgen_bmm_plan.json").read_text())
    kernels = {o["name"]: o["kernels"] for o in plan["operators"] if o["op"] == "matmul"}
    for name in ("mm2", "mm4", "mm5", "mm6"):
        assert kernels[name] == ["tvmdev_kai_matmul_f32", "tvmk_matmul_f32"], name


def test_cpu_only_for_qemu_user_boards(cli: Callable[..., Result], tmp_path: Path) -> None:
    r = cli("run", str(REPO / "examples/mlp/mlp.yaml"), "--cpu", "cortex-a53", "--build-dir",
            str(tmp_path / "b"))
    assert r.code == 1
    assert "does not run under qemu-user" in r.err
