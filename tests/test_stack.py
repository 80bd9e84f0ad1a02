"""The firmware's stack: the worst case below tvmgen_<model>_run that each firmware build
finds (gcc's call graph and frames, library code read from the ELF), checked against
what the firmware measures in QEMU, against gcc's own frames, and against a kernel made
to use 2 KiB more; the analysis itself on hand-written call graphs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, Result, need_tool

from tvmdev.inspect.stack import (
    INDIRECT,
    Function,
    disassemble,
    read_callgraph,
    read_elf_code,
    worst_case,
)
from tvmdev.load.board import board_by_name
from tvmdev.load.model import load_model
from tvmdev.run.job import prepare
from tvmdev.write.journal import STAGING

pytestmark = pytest.mark.slow  # builds and runs firmware

BOARDS = ["mps2_an385", "mps3_an547"]

# A tanh kernel that puts 2 KiB on the stack before it calls the portable one.
BIG_TANH_YAML = """\
- op: tanh
  header: big_tanh.h
  kernels:
    - arg_meta: null
      kernel_name: big_tanh
      sources: [big_tanh.c]
"""
BIG_TANH_H = """\
#include "tvmk_portable.h"
int32_t big_tanh(const float *input, float *output, const struct tvmk_unary_params *params,
                 void *resource_handle);
"""
BIG_TANH_C = """\
#include "big_tanh.h"
int32_t big_tanh(const float *input, float *output, const struct tvmk_unary_params *params,
                 void *resource_handle)
{
    volatile float pad[512];
    int32_t i;

    for (i = 0; i < 512; ++i) {
        pad[i] = (float)i;
    }
    if (pad[511] < 0.0f) {
        return TVM_DEVICE_ERR_INVALID;
    }
    return tvmk_tanh_f32(input, output, params, resource_handle);
}
"""


def _tools() -> None:
    need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi")
    need_tool("qemu-system-arm", "apt-get install qemu-system-arm")


def _run(cli: Callable[..., Result], build: Path, board: str, *extra: str,
         example: str = "decoder") -> tuple[dict[str, object], str]:
    r = cli("run", str(REPO / f"examples/{example}/{example}.yaml"), "--board", board,
            "--build-dir", str(build), *extra)
    assert r.code == 0, r.out + r.err
    facts = json.loads((build / "build.json").read_text())
    assert (facts["model"], facts["board"]) == (example, board)
    return facts["stack"], r.out


def test_plan_json_is_written_once_and_the_build_facts_apart(cli: Callable[..., Result],
                                                             tmp_path: Path) -> None:
    """What the build finds goes to build.json; plan.json keeps the bytes generation
    wrote (those of a build folder that was never built), and a second run leaves it
    alone."""
    _tools()
    build = tmp_path / "b"
    stack, _ = _run(cli, build, "mps2_an385")
    plan = build / "model/tvmgen_decoder_plan.json"
    board = board_by_name("mps2_an385")
    prepare(load_model(REPO / "examples/decoder/decoder.yaml"), board, tmp_path / "fresh")
    assert plan.read_bytes() == (tmp_path / "fresh/model/tvmgen_decoder_plan.json").read_bytes()
    assert "stack" not in json.loads(plan.read_text())
    before = plan.stat()
    again, _ = _run(cli, build, "mps2_an385")
    assert (plan.stat().st_ino, plan.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    facts = json.loads((build / "build.json").read_text())
    assert facts["program"] == "decoder.elf" and (build / "decoder.elf").is_file()
    assert facts["stack"] == again and again["peak_bytes"] == stack["peak_bytes"]
    assert isinstance(again["measured_bytes"], int)
    assert not (build / STAGING).exists()  # the writer's commit finished


@pytest.mark.parametrize("board", BOARDS)
def test_worst_case_bounds_what_the_run_measures(board: str, cli: Callable[..., Result],
                                                  tmp_path: Path) -> None:
    """The decoder calls no device: its stack is bounded, and the deepest chain (the gemm)
    runs, so the measured figure reaches the worst case."""
    _tools()
    stack, out = _run(cli, tmp_path / "b", board)
    assert stack["bounded"] is True and stack["unbounded_by"] == []
    assert stack["path"][:3] == ["tvmgen_decoder_run", "tvmgen_decoder_run_with_workspace",
                                 "tvmk_gemm_f32"]
    peak, used = stack["peak_bytes"], stack["measured_bytes"]
    assert isinstance(peak, int) and isinstance(used, int)
    assert 0 < used <= peak <= used + 64
    assert peak < 1024  # it was 4.5 KiB with gemm's packing buffer on the stack
    assert f"stack: {peak} bytes worst case below tvmgen_decoder_run (" in out
    assert f"; this run used {used} bytes\n" in out


def test_a_kernel_that_uses_more_stack_moves_both_figures(cli: Callable[..., Result],
                                                          tmp_path: Path) -> None:
    _tools()
    (tmp_path / "big_tanh.yaml").write_text(BIG_TANH_YAML)
    (tmp_path / "big_tanh.h").write_text(BIG_TANH_H)
    (tmp_path / "big_tanh.c").write_text(BIG_TANH_C)
    before, _ = _run(cli, tmp_path / "before", "mps2_an385")
    after, _ = _run(cli, tmp_path / "after", "mps2_an385", "--kernels",
                    str(tmp_path / "big_tanh.yaml"))
    assert after["path"][:3] == ["tvmgen_decoder_run", "tvmgen_decoder_run_with_workspace",
                                 "big_tanh"]
    peak, used = after["peak_bytes"], after["measured_bytes"]
    assert isinstance(peak, int) and isinstance(used, int)
    assert isinstance(before["peak_bytes"], int) and isinstance(before["measured_bytes"], int)
    # gcc's frame for big_tanh holds the 2 KiB; the worst case stacks it on its callers'.
    su = {line.split("\t")[0].rsplit(":", 1)[-1]: int(line.split("\t")[1])
          for f in (tmp_path / "after/obj").glob("*.su") for line in f.read_text().splitlines()}
    assert 2048 <= su["big_tanh"] <= 2048 + 64
    assert peak >= su["tvmgen_decoder_run_with_workspace"] + su["big_tanh"] + su["tvmk_tanh_f32"]
    # The run goes that deep too. The worst case counts tvmk_tanh_f32 and tanhf on top of
    # big_tanh's frame, which its tail call to them has already popped: a few words more.
    assert used <= peak <= used + 64
    assert before["peak_bytes"] < 1024 and before["measured_bytes"] < 1024
    assert used > 2048 + su["tvmgen_decoder_run_with_workspace"]


def test_calls_through_pointers_are_unbounded_and_named(cli: Callable[..., Result],
                                                        tmp_path: Path) -> None:
    """The CMSIS devices reach their UART driver through its function table."""
    _tools()
    stack, out = _run(cli, tmp_path / "b", "mps2_an385", example="mlp")
    assert stack["bounded"] is False
    reasons = stack["unbounded_by"]
    assert isinstance(reasons, list)
    assert any(str(r).startswith("a call through a pointer in TVMDeviceWooflesActivate (")
               and "cmsis.c:" in str(r) for r in reasons)
    assert "stack: unbounded below tvmgen_mlp_run (a call through a pointer in " in out


def test_elf_reading_agrees_with_gccs_frames(cli: Callable[..., Result],
                                             tmp_path: Path) -> None:
    """Library functions are read from the ELF; on the functions gcc compiled (whose .su
    frames are known) that reading must give gcc's figures, every one."""
    _tools()
    for board in BOARDS:
        _run(cli, tmp_path / board, board, example="mlp")
        compiled = read_callgraph(sorted((tmp_path / board / "obj").glob("*.ci")))
        elf = read_elf_code(disassemble(tmp_path / board / "mlp.elf", "arm-none-eabi-objdump"))
        pairs = [(f.name, f.frame, elf[f.name].frame) for f in compiled.values()
                 if f.frame is not None and f.name in elf]
        assert len(pairs) > 30
        assert [p for p in pairs if p[1] != p[2]] == []
        su = {line.split("\t")[0].rsplit(":", 1)[-1]: int(line.split("\t")[1])
              for s in (tmp_path / board / "obj").glob("*.su")
              for line in s.read_text().splitlines()}
        assert su["tvmgen_mlp_run_with_workspace"] == elf["tvmgen_mlp_run_with_workspace"].frame


# --- the analysis on hand-written inputs --------------------------------------------------

DISASSEMBLY = """\
00000100 <leaf>:
 100:	push	{r4, r5, r6, lr}
 102:	vpush	{d8-d9}
 106:	sub	sp, #8
 108:	bne.n	110 <leaf+0x10>
 10a:	pop	{r4, r5, r6, pc}
00000120 <middle>:
 120:	push	{r4, lr}
 122:	sub.w	sp, sp, #1024	@ 0x400
 126:	bl	100 <leaf>
 12a:	ldr	r3, [pc, #4]	@ (130 <middle+0x10>)
 12c:	b.w	140 <tail>
00000140 <tail>:
 140:	stmdb	sp!, {r4, r5, r6, r7, r8, lr}
 144:	blx	r3
 146:	pop	{r4, r5, r6, r7, r8, pc}
00000150 <alloca>:
 150:	push	{r7, lr}
 152:	sub	sp, sp, r0
 154:	bl	150 <alloca>
"""


def test_reading_thumb_code() -> None:
    funcs = read_elf_code(DISASSEMBLY)
    assert funcs["leaf"].frame == 16 + 16 + 8 and funcs["leaf"].calls == []
    assert funcs["middle"].frame == 8 + 1024
    assert [c for c, _ in funcs["middle"].calls] == ["leaf", "tail"]  # bl, tail call
    assert funcs["tail"].frame == 24 and funcs["tail"].calls == [(INDIRECT, "tail+0x144")]
    assert funcs["alloca"].kind == "dynamic"
    usage = worst_case("middle", {}, funcs, "test")
    assert (usage.peak_bytes, usage.path) == (1032 + 40, ("middle", "leaf"))
    assert usage.unbounded_by == ("a call through a pointer in tail (tail+0x144)",)
    usage = worst_case("alloca", {}, funcs, "test")
    assert not usage.bounded
    assert usage.unbounded_by == ("a frame of dynamic size in alloca (ELF)",
                                  "recursion: alloca -> alloca")


CI = '''\
graph: { title: "a.c"
node: { title: "run" label: "run\\\\na.c:1:1\\\\n40 bytes (static)" }
node: { title: "a.c:helper" label: "helper\\\\na.c:9:13\\\\n16 bytes (static)" }
edge: { sourcename: "run" targetname: "a.c:helper" label: "a.c:3:5" }
node: { title: "kernel" label: "kernel\\\\nk.h:2:9" shape : ellipse }
edge: { sourcename: "run" targetname: "kernel" label: "a.c:4:5" }
node: { title: "memset" label: "__builtin_memset\\\\n<built-in>" shape : ellipse }
edge: { sourcename: "a.c:helper" targetname: "memset" }
node: { title: "missing" label: "missing\\\\nm.h:1:1" shape : ellipse }
}
graph: { title: "k.c"
node: { title: "kernel" label: "kernel\\\\nk.c:5:9\\\\n300 bytes (static)" }
node: { title: "expf" label: "expf\\\\nmath.h:1:1" shape : ellipse }
edge: { sourcename: "kernel" targetname: "expf" label: "k.c:7:9" }
edge: { sourcename: "kernel" targetname: "kernel" label: "k.c:8:9" }
}
'''


def test_call_graph_across_objects(tmp_path: Path) -> None:
    """A call resolves to the object that defines the callee; a library function to the
    ELF; a builtin the compiler expanded costs nothing; recursion is unbounded."""
    a, k = CI.split("}\ngraph")
    (tmp_path / "a.ci").write_text(a + "}\n")
    (tmp_path / "k.ci").write_text("graph" + k)
    funcs = read_callgraph([tmp_path / "a.ci", tmp_path / "k.ci"])
    assert (funcs["run"].frame, funcs["a.c:helper"].frame, funcs["kernel"].frame) == (40, 16, 300)
    library = {"expf": Function("expf", 24, "elf", "ELF")}
    usage = worst_case("run", funcs, library, "test")
    assert (usage.peak_bytes, usage.path) == (40 + 300 + 24, ("run", "kernel", "expf"))
    assert usage.unbounded_by == ("recursion: kernel -> kernel",)
    funcs["run"].calls.append(("missing", "a.c:5:5"))
    usage = worst_case("run", funcs, library, "test")
    assert "no stack information for missing" in usage.unbounded_by
