"""tvmdev inspect on ELFs the tests build: a host program (x86-64) and Cortex-M ones."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, Result, need_tool, run_ok

pytestmark = pytest.mark.slow  # builds host programs and firmware

MLP = REPO / "examples/mlp/mlp.yaml"

HEAPY = """\
#include <stdlib.h>
#include <stdint.h>
int32_t TVMDeviceWooflesInit(void *d, void *h) { (void)d; (void)h; return 0; }
int32_t TVMDeviceWooflesActivate(void *d) { (void)d; return 0; }
int32_t TVMDeviceWooflesOpen(void *d) { (void)d; return 0; }
int32_t TVMDeviceWooflesClose(void *d) { (void)d; return 0; }
int32_t TVMDeviceWooflesDeactivate(void *d) { (void)d; return 0; }
float *grab_scratch(int n) { return (float *)malloc((size_t)n * sizeof(float)); }
int main(int argc, char **argv) { (void)argv; float *p = grab_scratch(argc); free(p); return 0; }
"""


def test_host_program_is_clean(cli: Callable[..., Result], tmp_path: Path) -> None:
    need_tool("gcc")
    build = tmp_path / "b"
    assert cli("run", str(MLP), "--build-dir", str(build)).code == 0
    r = cli("inspect", str(build / "mlp.out"), "--model", str(build), "--json")
    assert r.code == 0, r.out
    rep = json.loads(r.out)
    assert rep["machine"] == "EM_X86_64"
    assert rep["device_api"]["woofles"] == dict.fromkeys(
        ["Init", "Activate", "Open", "Close", "Deactivate", "Destroy"], "defined")
    assert rep["kernels"]["present"] == sorted(rep["kernels"]["expected"]) == [
        "tvmk_gemm_f32", "tvmk_relu_f32", "tvmk_softmax_f32", "woofles_gemm_f32"]
    assert rep["heap"] == []
    fp = rep["footprint"]
    assert fp["constants"]["rodata"] == (64 * 32 + 32 + 32 * 10) * 4
    assert fp["kernels"]["text"] > 0 and fp["device layer"]["text"] > 0
    assert fp["executor"]["bss"] >= 16  # the workspace
    r = cli("inspect", str(build / "mlp.out"), "--model", str(build))
    assert "device API woofles: all six functions defined" in r.out
    assert "component" in r.out and "constants" in r.out


def _heapy(tmp: Path, cc: str, flags: list[str]) -> Path:
    (tmp / "heapy.c").write_text(HEAPY)
    exe = tmp / "heapy.elf"
    run_ok([cc, *flags, "-O1", "-fno-inline", str(tmp / "heapy.c"), "-o", str(exe)])
    return exe


def test_heap_and_missing_device_function_host(cli: Callable[..., Result],
                                               tmp_path: Path) -> None:
    exe = _heapy(tmp_path, need_tool("gcc"), [])
    plan = tmp_path / "plan"
    plan.mkdir()
    (plan / "tvmgen_x_plan.json").write_text(json.dumps(
        {"model": "x", "devices": [{"name": "npu0", "kind": "woofles"}], "kernels": []}))
    r = cli("inspect", str(exe), "--model", str(plan))
    assert r.code == 1
    assert "device API woofles: MISSING Destroy (missing)" in r.out
    assert "HEAP: malloc is linked in, called from: grab_scratch" in r.out
    assert "HEAP: free is linked in, called from: main" in r.out


def test_heap_in_cortex_m_firmware(cli: Callable[..., Result], tmp_path: Path) -> None:
    arm = need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    exe = _heapy(tmp_path, arm, ["-mcpu=cortex-m3", "-mthumb", "--specs=nosys.specs"])
    r = cli("inspect", str(exe), "--json")
    assert r.code == 1
    rep = json.loads(r.out)
    assert rep["machine"] == "EM_ARM"
    heap = {h["symbol"]: h["callers"] for h in rep["heap"]}
    assert any(c.startswith("grab_scratch") for c in heap["malloc"]), heap
    assert "_sbrk" in heap or "_sbrk_r" in heap  # newlib's malloc grows the heap


def test_not_an_elf_and_truncated(cli: Callable[..., Result], tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    r = cli("inspect", str(tmp_path / "notes.txt"))
    assert r.code == 1
    assert r.err.splitlines()[0] == f"tvmdev: {tmp_path / 'notes.txt'}: not an ELF file"
    exe = _heapy(tmp_path, need_tool("gcc"), [])
    cut = tmp_path / "cut.elf"
    cut.write_bytes(exe.read_bytes()[:200])
    r = cli("inspect", str(cut))
    assert r.code == 1
    assert r.err.startswith(f"tvmdev: {cut}: truncated or corrupt ELF (200 bytes)")
    assert "Traceback" not in r.err
    r = cli("inspect", str(tmp_path / "nope.elf"))
    assert (r.code, r.err) == (1, f"tvmdev: {tmp_path / 'nope.elf'}: no such program\n")


def _rebuild(build: Path, cflags: tuple[str, ...] = ()) -> None:
    """Run the commands of a firmware build again (build.cmd: each source compiled, then
    the link, which writes the map), the compiles with ``cflags`` added."""
    for line in (build / "build.cmd").read_text().splitlines():
        cmd = shlex.split(line)
        if "-c" in cmd:
            cmd[1:1] = cflags
        run_ok(cmd)


def test_a_destroy_the_linker_removed_is_not_missing(cli: Callable[..., Result],
                                                     tmp_path: Path) -> None:
    """A firmware whose main never calls Destroy: --gc-sections drops it, which the map
    beside the ELF records, and that is no finding. Destroy defined under another name
    (so the device API really lacks it) is one, map or not."""
    need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi")
    need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    build = tmp_path / "b"
    r = cli("run", str(MLP), "--board", "mps2_an386", "--build-dir", str(build))
    assert r.code == 0, r.out + r.err
    elf, link_map = build / "mlp.elf", build / "mlp.map"
    r = cli("inspect", str(elf), "--model", str(build))
    assert (r.code, r.out.splitlines()[1]) == (0, "device API woofles: all six functions defined")
    main = build / "main.c"
    main.write_text(re.sub(r"TVMDeviceWooflesDestroy\(&\w+\)", "TVM_DEVICE_OK",
                           main.read_text()))
    _rebuild(build)
    nm = run_ok(["arm-none-eabi-nm", str(elf)]).stdout
    assert "TVMDeviceWooflesInit" in nm and "TVMDeviceWooflesDestroy" not in nm
    assert re.search(r"^ \.text\.TVMDeviceWooflesDestroy$", link_map.read_text(), re.M)
    r = cli("inspect", str(elf), "--model", str(build))
    assert r.code == 0, r.out
    assert r.out.splitlines()[1] == ("device API woofles: all six functions defined "
                                     "(Destroy removed by the linker: never called)")
    rep = json.loads(cli("inspect", str(elf), "--model", str(build), "--json").out)
    assert rep["link_map"] == str(link_map) and rep["missing_device_functions"] == []
    assert rep["device_api"]["woofles"]["Destroy"] == "removed by the linker"
    assert rep["ok"] is True
    # Really missing: the device code names it woofles_teardown (which the linker removes).
    _rebuild(build, ("-DTVMDeviceWooflesDestroy=woofles_teardown",))
    assert re.search(r"^ \.text\.woofles_teardown$", link_map.read_text(), re.M)
    r = cli("inspect", str(elf), "--model", str(build))
    assert r.code == 1
    assert r.out.splitlines()[1] == "device API woofles: MISSING Destroy (missing)"
    rep = json.loads(cli("inspect", str(elf), "--model", str(build), "--json").out)
    assert rep["missing_device_functions"] == ["TVMDeviceWooflesDestroy"]
    assert rep["link_map"] == str(link_map) and rep["ok"] is False
    # Without the map nothing tells a removed function from a missing one: a finding.
    _rebuild(build)
    link_map.unlink()
    r = cli("inspect", str(elf), "--model", str(build))
    assert (r.code, r.out.splitlines()[1]) == (1, "device API woofles: MISSING Destroy (missing)")
