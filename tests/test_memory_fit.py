"""A model that does not fit a board's memory map stops when `tvmdev run` generates it:
one line with the bytes of RAM and flash needed, item by item, and the board's, exit 1,
nothing written (tvmdev/plan/fit.py). A model that passes that estimate but does not
link gets the same line from the linker's `region overflowed` message.

These are the checks of a board with the program's two regions only: the built-in boards
list more (memory.regions, where the plan puts what does not fit: tests/test_regions.py),
so the tests use each board's copy without them (`two_regions`), with the model's inputs
and outputs in the caller's buffers (--io caller; --io workspace counts them in the
arena: tests/test_regions.py).

The figures are checked against what they stand for: the arena against the plan.json
`tvmdev aot` writes for the same model, the rest against the tensors' shapes and the
board file."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import Result, need_tool

from tvmdev.errors import TvmdevError
from tvmdev.load.board import board_by_name, load_board
from tvmdev.load.model import load_model
from tvmdev.plan.fit import CODE_FLOOR, check_fit, link_overflow
from tvmdev.plan.memory import plan_memory

# Activations too large for mps2_an385's 4 MiB of RAM (a relu then a tanh of n floats).
ACTIVATIONS = """\
name: wide
inputs:
  x: {{shape: [1, {n}], dtype: float32}}
outputs:
  y: {{shape: [1, {n}], dtype: float32}}
operators:
  - {{name: r, op: relu, inputs: [x], outputs: [h]}}
  - {{name: t, op: tanh, inputs: [h], outputs: [y]}}
"""
# A weight too large for mps3_an547's 512 KiB of flash.
WEIGHTS = """\
name: heavy
inputs:
  x: {shape: [1, 350], dtype: float32}
outputs:
  y: {shape: [1, 400], dtype: float32}
constants:
  w: {shape: [350, 400], dtype: float32, random: {seed: 1, low: -1, high: 1}}
  unread: {shape: [1000], dtype: float32, random: {seed: 2, low: -1, high: 1}}
operators:
  - {name: fc, op: gemm, inputs: [x, w], outputs: [y]}
"""


def two_regions(board: str, tmp_path: Path) -> Path:
    """A copy of built-in ``board``'s file without ``memory.regions``: the program's code
    and RAM regions only, as boards were before they listed their other memories."""
    text = board_by_name(board).path.read_text()
    path = tmp_path / "boards" / f"{board}.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(re.sub(r"^  regions:\n(    .*\n|       .*\n)+", "", text, flags=re.M))
    assert "regions:" not in path.read_text()
    return path


def figures(line: str) -> dict[str, int]:
    """'arena 2,400,000' -> {'arena': 2400000}, and 'RAM'/'flash' for the totals needed
    and 'board RAM'/'board flash' for the board's."""
    num = r"([\d,]+)"
    out = {k: int(v.replace(",", "")) for k, v in
           re.findall(r"(arena|outputs|stack|constants|inputs|code at least|the rest) "
                      + num, line)}
    m = re.search(rf"needs {num} bytes of RAM \(.*\) and {num} of flash", line)
    b = re.search(rf"the board has {num} of RAM and {num} of flash", line)
    assert m and b, line
    out["RAM"], out["flash"] = (int(g.replace(",", "")) for g in m.groups())
    out["board RAM"], out["board flash"] = (int(g.replace(",", "")) for g in b.groups())
    return out


def refused(cli: Callable[..., Result], tmp_path: Path, text: str, board: str
            ) -> tuple[dict[str, int], str]:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    build = tmp_path / "build"
    r = cli("run", str(path), "--board", str(two_regions(board, tmp_path)), "--io", "caller",
            "--build-dir", str(build))
    assert r.code == 1, r.out + r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"tvmdev: {path}: ") and lines[1].startswith(
        "  hint: "), r.err
    assert "Traceback" not in r.err and r.out == ""
    assert not build.exists()  # nothing written
    return figures(lines[0]), r.err


def arena_of(cli: Callable[..., Result], tmp_path: Path, name: str) -> int:
    """The arena `tvmdev aot` plans for the model (with the portable tuning of a
    Cortex-M, as the board has it)."""
    m = load_model(tmp_path / "m.yaml")
    assert cli("aot", str(tmp_path / "m.yaml"), "-o", str(tmp_path / "aot")).code == 0
    plan = json.loads((tmp_path / f"aot/tvmgen_{name}_plan.json").read_text())
    # The tensors' arena is the board's too (only gemm scratch depends on the tuning).
    assert plan["arena"]["size_without_scratch"] == plan_memory(m).tensor_arena_size
    return int(plan["arena"]["size"])


def test_activations_beyond_ram(cli: Callable[..., Result], tmp_path: Path) -> None:
    n = 600_000
    f, err = refused(cli, tmp_path, ACTIVATIONS.format(n=n), "mps2_an385")
    mem = board_by_name("mps2_an385").memory
    assert mem is not None
    assert f["arena"] == arena_of(cli, tmp_path, "wide") >= 4 * n
    assert f["outputs"] == 4 * n and f["stack"] == mem.stack
    assert f["RAM"] == f["arena"] + f["outputs"] + f["stack"] > mem.ram.length
    assert f["board RAM"] == mem.ram.length and f["board flash"] == mem.code.length
    assert f["inputs"] == 4 * n and f["constants"] == 0 and f["code at least"] == CODE_FLOOR
    assert f["flash"] == f["inputs"] + CODE_FLOOR <= mem.code.length
    assert "for RAM, a board with more" in err and "for flash" not in err


def test_weights_beyond_flash(cli: Callable[..., Result], tmp_path: Path) -> None:
    f, err = refused(cli, tmp_path, WEIGHTS, "mps3_an547")
    mem = board_by_name("mps3_an547").memory
    assert mem is not None
    assert f["constants"] == 350 * 400 * 4  # the constant no operator reads is not emitted
    assert f["inputs"] == 350 * 4
    assert f["flash"] == f["constants"] + f["inputs"] + CODE_FLOOR > mem.code.length
    assert f["RAM"] <= mem.ram.length and f["outputs"] == 400 * 4
    assert "for flash, a board with more" in err and "for RAM" not in err


def test_a_model_that_just_fits_passes(tmp_path: Path) -> None:
    """At exactly the board's RAM the estimate lets the model through (the linker has
    the last word); 16 bytes more of arena and it is refused."""
    board = load_board(two_regions("mps3_an547", tmp_path))
    assert board.memory is not None
    path = tmp_path / "m.yaml"
    path.write_text(ACTIVATIONS.format(n=1000))
    m = load_model(path)
    plan = plan_memory(m)
    spare = board.memory.ram.length - (plan.arena_size + 4000 + board.memory.stack)
    check_fit(m, replace(plan, arena_size=plan.arena_size + spare), board)
    with pytest.raises(TvmdevError, match="does not fit board mps3_an547"):
        check_fit(m, replace(plan, arena_size=plan.arena_size + spare + 16), board)


def test_link_overflow_is_the_same_line(tmp_path: Path) -> None:
    board = board_by_name("mps3_an547")
    assert board.memory is not None
    path = tmp_path / "m.yaml"
    path.write_text(ACTIVATIONS.format(n=61_437))
    m = load_model(path)
    stderr = ("/usr/bin/ld: edge.elf section `.stack' will not fit in region `RAM'\n"
              "/usr/bin/ld: region `RAM' overflowed by 136 bytes\n"
              "collect2: error: ld returned 1 exit status\n")
    err = link_overflow(stderr, m, plan_memory(m), board)
    assert err is not None
    f = figures(err.message)
    assert f["RAM"] == board.memory.ram.length + 136
    assert f["RAM"] == f["arena"] + f["outputs"] + f["stack"] + f["the rest"]
    assert "region RAM overflowed by 136 bytes" in err.message and "\n" not in str(err)
    assert link_overflow("undefined reference to `foo'", m, plan_memory(m), board) is None
    assert link_overflow(stderr, m, plan_memory(m), board_by_name("host")) is None


def test_zephyr_board_is_checked_before_west(cli: Callable[..., Result], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """qemu_cortex_m3's 64 KiB of SRAM: refused when generating, before west or a Zephyr
    tree is needed (ZEPHYR_BASE unset), nothing written."""
    monkeypatch.delenv("ZEPHYR_BASE", raising=False)
    f, _ = refused(cli, tmp_path, ACTIVATIONS.format(n=9000), "qemu_cortex_m3")
    assert f["board RAM"] == 64 * 1024 and f["board flash"] == 256 * 1024
    assert f["RAM"] == f["arena"] + 4 * 9000 + 2048 > 64 * 1024


def test_zephyr_link_overflow_names_flash(tmp_path: Path) -> None:
    """Zephyr's linker script calls the flash region FLASH."""
    board = board_by_name("qemu_cortex_m3")
    assert board.memory is not None
    path = tmp_path / "m.yaml"
    path.write_text(ACTIVATIONS.format(n=1000))
    m = load_model(path)
    err = link_overflow("ld: region `FLASH' overflowed by 9000 bytes\n", m, plan_memory(m),
                        board)
    assert err is not None
    f = figures(err.message)
    assert f["flash"] == board.memory.code.length + 9000
    assert f["flash"] == f["constants"] + f["inputs"] + f["code at least"] + f["the rest"]
    assert "region FLASH overflowed by 9,000 bytes" in err.message


@pytest.mark.slow
def test_link_overflow_on_mps3_an547(cli: Callable[..., Result], tmp_path: Path) -> None:
    """Activations that pass the estimate by a few bytes: the C library's and the
    harness's .data and .bss do not fit, and the linker says so."""
    need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi")
    path = tmp_path / "m.yaml"
    path.write_text(ACTIVATIONS.format(n=61_437))
    r = cli("run", str(path), "--board", str(two_regions("mps3_an547", tmp_path)),
            "--io", "caller", "--build-dir", str(tmp_path / "b"))
    assert r.code == 1, r.out + r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 2 and "does not fit board mps3_an547" in lines[0], r.err
    f = figures(lines[0])
    mem = board_by_name("mps3_an547").memory
    assert mem is not None
    assert f["arena"] + f["outputs"] + f["stack"] <= mem.ram.length < f["RAM"]
    assert "(the linker: region RAM overflowed by" in lines[0]
