"""Executor overhead on Cortex-M3: instructions the run function executes around each
operator call (Open, the call, Close, with their status checks), counted exactly by
emulating the compiled code with Unicorn, next to the same model's wrapper written the
way TVM's AOT output does it (``if (f() != 0) return -1;`` after each call).

    python benchmarks/executor_overhead.py

Device functions and kernels are no-ops (they return 0 at once), so only the wrappers
differ. Two models of 1 and 9 operators on one device give the cost of one more operator
call as the difference over 8. The wrapper's count is every instruction executed outside
the no-op callees (so tvmdev's tail call from tvmgen_<m>_run into
tvmgen_<m>_run_with_workspace is included); "all" adds the callees, the same for both. The
target: tvmdev's cleanup-correct wrapper costs at most 1.2x TVM's on the success path.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import unicorn
import unicorn.arm_const as arm
from elftools.elf.elffile import ELFFile

from tvmdev.load.board import board_by_name
from tvmdev.load.model import load_model
from tvmdev.plan.pipeline import Compiled, Options, compile_model
from tvmdev.render.executor import executor_files

CFLAGS = ["-mcpu=cortex-m3", "-mthumb", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror",
          "-ffreestanding", "-ffunction-sections"]
ROOT = Path(__file__).resolve().parent.parent
STACK_TOP = 0x20080000
STRUCTS = 0x20070000
STOP = 0x00000100


def model_yaml(n_ops: int) -> str:
    ops = "\n".join(
        f"  - {{name: fc{i}, op: gemm, inputs: [{'x' if i == 0 else f'h{i - 1}'}, w], "
        f"outputs: [{'y' if i == n_ops - 1 else f'h{i}'}], device: npu0}}"
        for i in range(n_ops))
    return (f"name: m{n_ops}\ndevices:\n  npu0: {{kind: woofles}}\n"
            "inputs:\n  x: {shape: [1, 4], dtype: float32}\n"
            "outputs:\n  y: {shape: [1, 4], dtype: float32}\n"
            "constants:\n  w: {shape: [4, 4], dtype: float32, values: "
            f"[{', '.join(['0.5'] * 16)}]}}\noperators:\n{ops}\n")


def tvm_style(gen: Compiled) -> str:
    """The run function as TVM's AOT executor writes it: -1 at the first failure."""
    m = gen.model
    prefix = f"tvmgen_{m.name}"
    lines = [f"int32_t tvm_style_run(const struct {prefix}_inputs *inputs,",
             f"                      struct {prefix}_outputs *outputs,",
             f"                      const struct {prefix}_devices *devices);",
             f"int32_t tvm_style_run(const struct {prefix}_inputs *inputs,",
             f"                      struct {prefix}_outputs *outputs,",
             f"                      const struct {prefix}_devices *devices)", "{",
             "    uint8_t *const ws = tvm_style_workspace;"]
    src = executor_files(gen, "tvmdev aot")[1].content
    # Reuse the generated code's own tensor pointers, params and calls.
    body = src[src.index("uint8_t *const ws = (uint8_t *)workspace;") + 41:]
    decls = [ln for ln in body.splitlines() if ln.startswith("    float *const t_")]
    lines += decls + ["    (void)ws;"]
    for s in gen.steps:
        if s.action == "op":
            assert s.op is not None
            op = m.operators[s.op]
            call = next(ln.strip()[6:-1] for ln in body.splitlines()
                        if ln.strip().startswith("ret = ") and f"params_{op.cname}," in ln)
            lines += ["    if (TVMDeviceWooflesOpen(devices->npu0) != 0) return -1;",
                      f"    if ({call} != 0) return -1;",
                      "    if (TVMDeviceWooflesClose(devices->npu0) != 0) return -1;"]
        else:
            fn = "Activate" if s.action == "activate" else "Deactivate"
            lines.append(f"    if (TVMDeviceWoofles{fn}(devices->npu0) != 0) return -1;")
    lines += ["    (void)inputs;", "    (void)outputs;", "    return 0;", "}"]
    return "\n".join(lines) + "\n"


STUBS = """\
#include <stdint.h>
#include "tvm/device/woofles.h"
#include "tvmk_portable.h"
struct tvm_device_woofles { int unused; };
int32_t TVMDeviceWooflesActivate(tvm_device_woofles_t *d) { (void)d; return 0; }
int32_t TVMDeviceWooflesOpen(tvm_device_woofles_t *d) { (void)d; return 0; }
int32_t TVMDeviceWooflesClose(tvm_device_woofles_t *d) { (void)d; return 0; }
int32_t TVMDeviceWooflesDeactivate(tvm_device_woofles_t *d) { (void)d; return 0; }
int32_t tvmk_gemm_f32(const float *A, const float *B, const float *C, float *Y,
                      const struct tvmk_gemm_params *p, void *h)
{ (void)A; (void)B; (void)C; (void)Y; (void)p; (void)h; return 0; }
"""

LINK = """\
SECTIONS {
  . = 0x1000;
  .text : { *(.text*) *(.rodata*) }
  . = 0x20000000;
  .data : { *(.data*) }
  .bss : { *(.bss*) *(COMMON) }
}
"""


def build(tmp: Path, n_ops: int) -> tuple[Path, str]:
    (tmp / f"m{n_ops}.yaml").write_text(model_yaml(n_ops))
    m = load_model(tmp / f"m{n_ops}.yaml")
    gen = compile_model(m, board_by_name("host"), Options("eager"))
    out = tmp / f"m{n_ops}"
    out.mkdir(exist_ok=True)
    for f in executor_files(gen, "tvmdev aot"):
        (out / f.path).write_text(f.content)
    prefix = f"tvmgen_{m.name}"
    (out / "tvm_style.c").write_text(
        f'#include <stddef.h>\n#include "{prefix}.h"\n#include "tvmk_portable.h"\n'
        f"static uint8_t tvm_style_workspace[{gen.memory.arena_size or 1}];\n"
                + tvm_style(gen).replace(f"{prefix}_const_w", "tvm_style_const_w")
        .replace(f"&{prefix}_params_", "&tvm_style_params_"))
    # The TVM-style file needs the same constants and params: take them from ours.
    ours = (out / f"{prefix}.c").read_text()
    # The constants and params blocks: from the first constant to the unwind helper.
    consts = ours[ours.index("/* w:"):ours.index("/*\n * The way out after a failure")]
    consts = consts.replace(f"{prefix}_const_", "tvm_style_const_").replace(
        f"{prefix}_params_", "tvm_style_params_").replace("TVMGEN_M", "TVM_STYLE_M")
    style = (out / "tvm_style.c").read_text()
    style = style.replace("static uint8_t tvm_style_workspace",
                          "#define TVM_STYLE_M" + str(n_ops).upper()
                          + "_ALIGNED\n" + consts + "\nstatic uint8_t tvm_style_workspace")
    (out / "tvm_style.c").write_text(style)
    dev = tmp / "dev"
    if not dev.exists():
        subprocess.run(["tvmdev", "new-device", "woofles", "--platform", "posix", "-o",
                        str(dev)], check=True, capture_output=True)
    (tmp / "stubs.c").write_text(STUBS)
    (tmp / "link.ld").write_text(LINK)
    elf = out / "fw.elf"
    subprocess.run(["arm-none-eabi-gcc", *CFLAGS, "-nostdlib", f"-I{out}",
                    f"-I{dev / 'include'}", f"-I{ROOT / 'runtime/kernels/portable'}",
                    str(out / f"{prefix}.c"), str(out / "tvm_style.c"), str(tmp / "stubs.c"),
                    "-T", str(tmp / "link.ld"), "-Wl,--entry=0", "-o", str(elf)], check=True)
    return elf, prefix


CALLEES = ("TVMDeviceWooflesActivate", "TVMDeviceWooflesOpen", "TVMDeviceWooflesClose",
           "TVMDeviceWooflesDeactivate", "tvmk_gemm_f32")


def count(elf: Path, function: str) -> tuple[int, int, int]:
    """(instructions of the wrapper, i.e. outside the no-op callees; in all; return value)
    for one call of ``function``."""
    with elf.open("rb") as fh:
        e = ELFFile(fh)
        symtab = e.get_section_by_name(".symtab")
        sym = symtab.get_symbol_by_name(function)[0]
        start = sym["st_value"] & ~1
        callees = []
        for name in CALLEES:
            c = symtab.get_symbol_by_name(name)[0]
            callees.append((c["st_value"] & ~1, (c["st_value"] & ~1) + c["st_size"]))
        uc = unicorn.Uc(unicorn.UC_ARCH_ARM, unicorn.UC_MODE_THUMB | unicorn.UC_MODE_MCLASS)
        uc.ctl_set_cpu_model(arm.UC_CPU_ARM_CORTEX_M3)
        uc.mem_map(0x0, 0x100000)
        uc.mem_map(0x20000000, 0x100000)
        for seg in e.iter_segments():
            if seg["p_type"] == "PT_LOAD" and seg["p_filesz"]:
                uc.mem_write(seg["p_paddr"], seg.data())
    uc.mem_write(STOP, b"\x00\xbf\x00\xbf")  # nop; nop
    # inputs, outputs and devices: one pointer each, to buffers in RAM.
    buf, dev = STRUCTS + 0x100, STRUCTS + 0x200
    uc.mem_write(STRUCTS, buf.to_bytes(4, "little"))          # inputs->x
    uc.mem_write(STRUCTS + 4, buf.to_bytes(4, "little"))      # outputs->y
    uc.mem_write(STRUCTS + 8, dev.to_bytes(4, "little"))      # devices->npu0
    counts = {"in": 0, "all": 0}

    def hook(uc: unicorn.Uc, address: int, size_: int, _: object) -> None:
        counts["all"] += 1
        if not any(lo <= address < hi for lo, hi in callees) and address != STOP:
            counts["in"] += 1

    uc.hook_add(unicorn.UC_HOOK_CODE, hook)
    uc.reg_write(arm.UC_ARM_REG_SP, STACK_TOP)
    uc.reg_write(arm.UC_ARM_REG_R0, STRUCTS)
    uc.reg_write(arm.UC_ARM_REG_R1, STRUCTS + 4)
    uc.reg_write(arm.UC_ARM_REG_R2, STRUCTS + 8)
    uc.reg_write(arm.UC_ARM_REG_LR, STOP | 1)
    uc.emu_start(start | 1, STOP, count=1_000_000)
    return counts["in"], counts["all"], uc.reg_read(arm.UC_ARM_REG_R0)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        rows = {}
        for n in (1, 9):
            elf, prefix = build(tmp, n)
            ours = count(elf, f"{prefix}_run")
            tvm = count(elf, "tvm_style_run")
            assert ours[2] == 0 and tvm[2] == 0, "a run did not return 0"
            rows[n] = (ours[0], tvm[0], ours[1], tvm[1])
    per_op_ours = (rows[9][0] - rows[1][0]) / 8
    per_op_tvm = (rows[9][1] - rows[1][1]) / 8
    print("Cortex-M3 (arm-none-eabi-gcc -O2), instructions executed by the wrapper (all "
          "but those inside the no-op device functions and kernel), success path")
    print(f"{'operators':>10} {'tvmdev':>8} {'TVM-style':>10} {'tvmdev (all)':>13} "
          f"{'TVM-style (all)':>16}")
    for n, (a, b, c, d) in rows.items():
        print(f"{n:>10} {a:>8} {b:>10} {c:>13} {d:>16}")
    print(f"per operator call (Open, call, Close, checks): tvmdev {per_op_ours:.1f}, "
          f"TVM-style {per_op_tvm:.1f}, ratio {per_op_ours / per_op_tvm:.2f} (target <= 1.2)")
    print(f"whole run, 9 operators: ratio {rows[9][0] / rows[9][1]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
