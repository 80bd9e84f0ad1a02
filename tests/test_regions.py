"""The board's memory regions (issue 24 item 4): the plan puts each pool (the workspace,
the harness's outputs, the constants, the inputs the firmware compiles in) in the fastest
region that holds it, or where --place-memory says; the firmware's linker script gives
each region used its sections, which the startup code copies and zeroes; a pool no region
holds is refused in one line.

The slow tests run what did not fit mps3_an547's 512 KiB TCMs before the board listed its
other memories, and compare the outputs with TFLM's interpreter (tests/tflm_ref.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import field_models
import numpy as np
import pytest
import tflm_ref
from conftest import REPO, Result, need_tool
from models import model_path

from tvmdev.errors import TvmdevError
from tvmdev.frontends.importer import import_file
from tvmdev.frontends.tflite import read
from tvmdev.load.board import board_by_name
from tvmdev.load.model import load_model
from tvmdev.plan.fit import check_fit, link_overflow
from tvmdev.plan.memory import plan_memory
from tvmdev.plan.memory_map import parse_places
from tvmdev.render.linker import linker_script

WIDE = """\
name: wide
inputs:
  x: {{shape: [1, {n}], dtype: float32}}
outputs:
  y: {{shape: [1, {n}], dtype: float32}}
operators:
  - {{name: r, op: relu, inputs: [x], outputs: [h]}}
  - {{name: t, op: tanh, inputs: [h], outputs: [y]}}
"""


def _model(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "m.yaml"
    path.write_text(WIDE.format(n=n))
    return path


def _regions(tmp_path: Path, n: int, board: str, places: list[str] | None = None
             ) -> dict[str, str]:
    m = load_model(_model(tmp_path, n))
    placed = check_fit(m, plan_memory(m), board_by_name(board), parse_places(places))
    assert placed is not None
    return {p.pool.name: p.region.name for p in placed.placed}


def test_the_fastest_region_that_holds_each_pool(tmp_path: Path) -> None:
    # 2,400,000 bytes of activations: more than mps3_an547's DTCM and its 2 MiB SRAM
    # (rank 1, listed first), so the 4 MiB internal SRAM; the 2.4 MB of outputs no longer
    # fit there, so the DDR (rank 2); the 2.4 MB of compiled-in inputs go to the QSPI
    # flash, not the 512 KiB ITCM.
    assert _regions(tmp_path, 600_000, "mps3_an547") == {
        "workspace": "isram", "outputs": "ddr", "constants": "itcm", "inputs": "qspi"}
    # A small model stays where every model was before boards listed regions.
    assert _regions(tmp_path, 1000, "mps3_an547") == {
        "workspace": "dtcm", "outputs": "dtcm", "constants": "itcm", "inputs": "itcm"}
    # mps2_an385: the 16 KiB block RAM is as fast as the ZBT SSRAM, which comes first.
    assert _regions(tmp_path, 1000, "mps2_an385")["workspace"] == "ram"
    # 2.4 MB of workspace and 2.4 MB of outputs: together more than the 4 MiB SSRAM (the
    # model tests/test_memory_fit.py refuses on the board without its other regions).
    got = _regions(tmp_path, 600_000, "mps2_an385")
    assert got["workspace"] == "ram" and got["outputs"] == "psram"


def test_place_memory_puts_a_pool_where_asked(tmp_path: Path) -> None:
    got = _regions(tmp_path, 1000, "mps3_an547", ["workspace=ddr,constants=qspi"])
    assert got["workspace"] == "ddr" and got["constants"] == "qspi"
    assert _regions(tmp_path, 1000, "mps2_an385", ["workspace=blockram"])["workspace"] \
        == "blockram"


@pytest.mark.parametrize("places, message, hint", [
    (["constants=psram"], "--place-memory: pool constants cannot go in region psram: it is "
     "a ram region", "regions that can hold it: code"),
    (["state=psram"], "--place-memory: no pool 'state'",
     "pools: constants, inputs, outputs, workspace"),
    (["workspace"], "--place-memory: 'workspace' is not POOL=REGION",
     "for example --place-memory workspace=sram,constants=qspi (tvmdev list boards --json "
     "shows regions)"),
])
def test_a_bad_place_is_refused(tmp_path: Path, places: list[str], message: str, hint: str
                                ) -> None:
    with pytest.raises(TvmdevError) as err:
        _regions(tmp_path, 1000, "mps2_an385", places)
    assert (err.value.message, err.value.hint) == (message, hint)


def test_a_bad_place_is_one_line(cli: Callable[..., Result], tmp_path: Path) -> None:
    build = tmp_path / "build"
    r = cli("run", str(_model(tmp_path, 1000)), "--board", "mps2_an385", "--place-memory",
            "workspace=sram", "--build-dir", str(build))
    assert r.code == 1 and r.out == "" and "Traceback" not in r.err
    board = board_by_name("mps2_an385")  # the error points at the board's name
    assert r.err.splitlines() == [
        f"tvmdev: {board.path}:{board.line}: --place-memory: board mps2_an385 has no "
        "region 'sram'", "  hint: its regions: code, ram, blockram, psram"]
    assert not build.exists()


def test_list_boards_shows_the_regions(cli: Callable[..., Result]) -> None:
    r = cli("list", "boards", "--json")
    regions = {b["name"]: b["regions"] for b in json.loads(r.out)}
    assert regions["host"] == []
    an547 = {x["name"]: x for x in regions["mps3_an547"]}
    assert list(an547) == ["itcm", "dtcm", "sram", "isram", "ddr", "qspi"]
    assert an547["sram"] == {"name": "sram", "origin": 0x11000000, "length": 2 << 20,
                             "kind": "ram", "rank": 1, "masters": ["cpu", "dma", "npu"]}
    assert an547["dtcm"]["masters"] == ["cpu"] and an547["qspi"]["kind"] == "flash"


def test_a_pool_too_large_for_its_asked_region(tmp_path: Path) -> None:
    with pytest.raises(TvmdevError) as err:
        _regions(tmp_path, 10_000, "mps2_an385", ["workspace=blockram"])
    assert re.search(r"does not fit region blockram of board mps2_an385: it needs "
                     r"40,000 bytes \(workspace 40,000\); the region has 16,384$",
                     err.value.message)


def test_a_pool_no_region_holds_is_refused(cli: Callable[..., Result], tmp_path: Path
                                           ) -> None:
    """20 MB of workspace (the 20 MB input, which relu and tanh overwrite in place, the
    output last; 40 MB without in place): more than the 16 MiB PSRAM, mps2_an385's
    largest RAM."""
    path = _model(tmp_path, 5_000_000)
    build = tmp_path / "build"
    r = cli("run", str(path), "--board", "mps2_an385", "--build-dir", str(build))
    assert r.code == 1 and r.out == "" and not build.exists()
    assert r.err.splitlines() == [
        f"tvmdev: {path}: pool workspace (20,000,000 bytes) fits no region of board "
        "mps2_an385: the largest that can hold it, psram, has 16,777,216 bytes "
        "(16,777,216 free)",
        "  hint: a board with more memory (tvmdev list boards), or smaller activations "
        "(tvmdev aot --show-plan shows what is live at once)"]
    plan = plan_memory(load_model(path), io=True)
    assert plan.arena_size == plan.lower_bound == 20_000_000
    plan = plan_memory(load_model(path), inplace=False, io=True)
    assert plan.arena_size == plan.lower_bound == 40_000_000


def test_a_region_the_linker_overflows_is_one_line(tmp_path: Path) -> None:
    """The linker's overflow of another region (SRAM) names it with what the plan put
    there (the workspace where asked; the 800,000 bytes of outputs, too many for the
    DTCM), and the rest the estimate left out."""
    board = board_by_name("mps3_an547")
    m = load_model(_model(tmp_path, 200_000))
    plan = plan_memory(m)
    placed = check_fit(m, plan, board, parse_places(["workspace=sram"]))
    assert placed is not None
    err = link_overflow("ld: region `SRAM' overflowed by 96 bytes\n", m, plan, board,
                        regions=placed)
    assert err is not None and err.message == (
        f"model wide does not fit region sram of board mps3_an547: it needs "
        f"{2 * 1024 * 1024 + 96:,} bytes (workspace {plan.arena_size:,} + outputs 800,000 "
        f"+ the rest {2 * 1024 * 1024 + 96 - plan.arena_size - 800_000:,}); the region has "
        "2,097,152 (the "
        "linker: region SRAM overflowed by 96 bytes)")
    assert link_overflow("ld: undefined reference to `f'\n", m, plan, board,
                         regions=placed) is None


def test_the_linker_script_has_a_section_per_region(tmp_path: Path) -> None:
    board = board_by_name("mps3_an547")
    assert board.memory is not None
    m = load_model(_model(tmp_path, 600_000))
    placed = check_fit(m, plan_memory(m), board, parse_places(["constants=qspi"]))
    text = linker_script(board.memory, placed, board.name, "/* banner */")
    assert "ISRAM (rw) : ORIGIN = 0x31000000, LENGTH = 0x400000" in text
    assert "QSPI (rx) : ORIGIN = 0x38000000, LENGTH = 0x800000" in text
    assert "DDR (rw) : ORIGIN = 0x70000000" in text
    assert " SRAM (rw)" not in text  # an unused region is left out
    bss = re.search(r"\.isram\.bss \(NOLOAD\) :\n    \{\n(.*?)\n    \} > ISRAM\n", text, re.S)
    assert bss and "*(.bss.noinit.tvm)" in bss[1] and "*(.bss.tvm_outputs)" not in bss[1]
    ddr = re.search(r"\.ddr\.bss \(NOLOAD\) :\n    \{\n(.*?)\n    \} > DDR\n", text, re.S)
    assert ddr and "*(.bss.tvm_outputs)" in ddr[1]
    ro = re.search(r"\.qspi\.rodata :\n    \{\n(.*?)\n    \} > QSPI\n", text, re.S)
    assert ro and "*(.rodata.tvm)" in ro[1] and "*(.rodata.tvm_inputs)" in ro[1]
    # The pools' sections come before the catch-alls, which would take them otherwise.
    assert text.index(".isram.bss") < text.index("*(.bss*)")
    assert text.index(".qspi.rodata") < text.index("*(.rodata*)")
    assert ("LONG(__isram_data_load__) LONG(__isram_data_start__) LONG(__isram_data_end__)"
            in text and "LONG(__isram_bss_start__) LONG(__isram_bss_end__)" in text)


def _symbols(elf: Path) -> dict[str, int]:
    out = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    return {p[2]: int(p[0], 16) for p in (ln.split() for ln in out.splitlines()) if len(p) == 3}


def _run(cli: Callable[..., Result], path: Path, tmp_path: Path, xs: list[np.ndarray],
         names: list[str]) -> Path:
    """``tvmdev run`` on mps3_an547 with ``xs`` saved as the inputs; the build folder.
    Unpatched (--patch off): patch-based inference would shrink these workspaces into the
    DTCM, and these tests are of the regions beyond it."""
    need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi")
    need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    (tmp_path / "in").mkdir()
    for name, x in zip(names, xs, strict=True):
        np.save(tmp_path / "in" / f"{name}.npy", x)
    build = tmp_path / "build"
    r = cli("run", str(path), "--board", "mps3_an547", "--inputs", str(tmp_path / "in"),
            "--save-outputs", str(tmp_path / "out"), "--build-dir", str(build), "--patch",
            "off")
    assert r.code == 0 and "\nPASS" in r.out, r.out + r.err
    return build


@pytest.mark.slow
def test_rock_paper_scissors_runs_from_sram(cli: Callable[..., Result], tmp_path: Path
                                            ) -> None:
    """A 537,920-byte float32 arena: more than the DTCM, so the 2 MiB SRAM; the outputs
    agree with TFLM's interpreter within the float tolerance of the repo's runs."""
    path = model_path("rock_paper_scissors.float32.tflite")
    if path is None:
        pytest.skip("python3 tests/models.py rock_paper_scissors.float32.tflite fetches it")
    m = import_file(path).to_model()
    x = np.random.default_rng(3).uniform(0, 1, m.tensors[m.inputs[0]].shape).astype("float32")
    build = _run(cli, path, tmp_path, [x], list(m.inputs))
    sym = _symbols(build / f"{m.name}.elf")
    assert 0x11000000 <= sym[f"tvmgen_{m.name}_workspace"] < 0x11200000  # sram
    want = tflm_ref.outputs(path.read_bytes(), [x], 1)[0]
    got = np.load(tmp_path / "out" / f"{m.outputs[0]}.npy")
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mcunetv2_large", "mobilenet_v2"])
def test_field_models_run_bit_exact(cli: Callable[..., Result], tmp_path: Path, name: str
                                    ) -> None:
    """MCUNetV2 (a 2.45 MB arena: the 4 MiB internal SRAM; 2.6 MB of weights and a 602 KB
    image: the QSPI flash) and MobileNetV2 (3.5 MB of weights) on mps3_an547, bit-exact
    with TFLM's interpreter on the same inputs."""
    path = field_models.locate(name)
    if isinstance(path, str):
        pytest.skip(path)
    sys.path.insert(0, str(REPO / "benchmarks"))
    import _tflm_peer as peer

    m = import_file(path).to_model()
    xs = peer.model_inputs(read(path, path.read_bytes()))
    build = _run(cli, path, tmp_path, xs, list(m.inputs))
    want = peer.reference_outputs(path, xs, len(m.outputs))
    got = [np.load(tmp_path / "out" / f"{n}.npy").tobytes() for n in m.outputs]
    assert got == want
    # The workspace is where plan.json says, and that is not the 512 KiB DTCM.
    plan = json.loads((build / f"model/tvmgen_{m.name}_plan.json").read_text())
    region = next(r for r in plan["regions"] if r["pool"] == "workspace")
    assert region["bytes"] > 512 * 1024 and region["region"] != "dtcm"
    address = _symbols(build / f"{m.name}.elf")[f"tvmgen_{m.name}_workspace"]
    assert region["origin"] <= address < region["origin"] + region["length"]


# A program whose data lives in the sram region: .data.sram is loaded in CODE and must be
# copied by the startup code's copy table to SRAM; .bss.sram is in the zero table (QEMU's
# RAM starts zeroed, so only the copy can fail here).
REGION_PROGRAM = r"""
#include <stdint.h>
uint32_t copied[4] __attribute__((section(".data.sram"))) = {0x12345678U, 1U, 2U, 3U};
uint32_t zeroed[4] __attribute__((section(".bss.sram")));
int main(void)
{
    uintptr_t at = (uintptr_t)&copied[0];
    if (at < 0x11000000U || at >= 0x11200000U || (uintptr_t)&zeroed[0] < 0x11000000U) {
        return 3; /* not where the linker script was to put it */
    }
    if (copied[0] != 0x12345678U || copied[3] != 3U) {
        return 1; /* not copied from its load address in CODE */
    }
    return zeroed[0] == 0U && zeroed[3] == 0U ? 0 : 2;
}
"""


@pytest.mark.slow
def test_startup_copies_the_data_of_another_region(tmp_path: Path) -> None:
    cc = need_tool("arm-none-eabi-gcc",
                   "apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi")
    qemu = need_tool("qemu-system-arm", "apt-get install qemu-system-arm")
    board = board_by_name("mps3_an547")
    assert board.memory is not None
    m = load_model(_model(tmp_path, 16))
    placed = check_fit(m, plan_memory(m), board, parse_places(["workspace=sram"]))
    (tmp_path / "link.ld").write_text(linker_script(board.memory, placed, board.name,
                                                    "/* test */"))
    (tmp_path / "main.c").write_text(REGION_PROGRAM)
    sup = board.support
    elf = tmp_path / "p.elf"
    subprocess.run([cc, *board.toolchain.cflags, *(f"-D{d}" for d in board.toolchain.defines),
                    *(f"-I{d}" for d in sup.include), str(tmp_path / "main.c"),
                    str(sup.sources[0]), str(sup.sources[1]), f"-T{tmp_path / 'link.ld'}",
                    "-o", str(elf), *board.toolchain.ldflags], check=True)
    run = board.run
    proc = subprocess.run([qemu, *run.args, "-kernel", str(elf)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_host_runs_with_the_io_in_the_workspace(cli: Callable[..., Result], tmp_path: Path
                                                ) -> None:
    """--io workspace on the host: the harness fills the mapped inputs before each run of
    each thread and the outputs agree with the reference."""
    need_tool("gcc")
    r = cli("run", str(REPO / "examples/cnn/cnn.yaml"), "--io", "workspace", "--threads",
            "2", "--iterations", "2", "--build-dir", str(tmp_path / "b"))
    assert r.code == 0 and "\nPASS" in r.out, r.out + r.err
    header = (tmp_path / "b/model/tvmgen_cnn.h").read_text()
    assert "int32_t tvmgen_cnn_run(const struct tvmgen_cnn_devices *devices);" in header
    assert "struct tvmgen_cnn_inputs tvmgen_cnn_map_inputs(void *workspace);" in header
