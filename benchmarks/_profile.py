"""Where a firmware's instructions go, for cmsis_nn_bench.py's breakdown: one call of a
function of a Cortex-M3/M4/M7 firmware (tvmdev's, the TFLM peer's or TinyEngine's: all
three link tvmdev's startup, semihosting exit and UART) run whole in Unicorn
(_cortex_m3_emu's memory map and loader), with every executed basic block counted.

API::

    profile(elf, function, dispatcher, cpu) -> Profile
        by_operator   instructions by the function the dispatcher called (one per
                      operator: tvmgen_<m>_run_with_workspace's kernel calls, TFLM's
                      MicroInterpreterGraph::InvokeSubgraph's Eval functions,
                      TinyEngine's invoke's kernels), callees included
        by_library    instructions by the library of the function executing them
        by_class      instructions by class (multiply-accumulate, multiply, saturate,
                      load, store, branch, other), from the disassembly
        total         all of them

The method (an approximation of the -icount count, whose difference the bench prints):
each translated block Unicorn executes is counted once per execution, with all its
instructions, and each instruction is classed by its mnemonic in ``arm-none-eabi-objdump
-d``'s disassembly of the ELF. Like QEMU's -icount, a predicated instruction whose
condition fails counts; unlike it, a block left early by a predicated write of PC (``it
ne; popne {r4, pc}``) counts whole. Unicorn has no Helium, so no Cortex-M55.

The classes are instruction kinds, not phases: ``mac`` is the convolutions' arithmetic
(SMLAD, SMLABB, MLA: 16-bit pairs or 32-bit products accumulated), ``long`` the 32 x 32
multiplies of requantization (SMULL, SMLAL, SMMULR: CMSIS-NN's, TFLM's and tvmdev_cm's
fixed-point multiply; TinyEngine's float requantization is VMUL, under ``other``),
``mul`` the other multiplies; ``sat`` is
SSAT/USAT and the saturating adds; ``widen`` the int8 to int16 sign
extensions and packing (SXTB16, SXTAB16, PKHBT: what CMSIS-NN's DSP path does to its
operands at run time); ``load`` and ``store`` are memory traffic (LDR*, LDM,
POP; STR*, STM, PUSH); ``branch`` every branch and compare-and-branch.
"""

from __future__ import annotations

import bisect
import re
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _cortex_m3_emu as emu

CLASSES = ("mac", "long", "mul", "sat", "widen", "load", "store", "branch", "other")
_LONG = re.compile(r"^(smull|umull|smlal(?![bt]{2}|d)|umlal|umaal|smmul|smmla|smmls)")
_MAC = re.compile(r"^(smla|smls|smuad|smusd|mla|mls)")
_MUL = re.compile(r"^(mul|smul|umul)")
_SAT = re.compile(r"^(ssat|usat|qadd|qsub|qdadd|qdsub|sqrdmulh)")
_WIDEN = re.compile(r"^(sxt|uxt|pkh)")
_LOAD = re.compile(r"^(ldr|ldm|pop|vldr|vldm|vpop)")
_STORE = re.compile(r"^(str|stm|push|vstr|vstm|vpush)")
_BRANCH = re.compile(r"^(b|bl|blx|bx|cbz|cbnz|tbb|tbh)(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|"
                     r"ge|lt|gt|le|al)?(\.[nw])?$")
_LINE = re.compile(r"^\s*([0-9a-f]+):\s+(?:[0-9a-f]{4}(?: [0-9a-f]{4})?\s+)?([a-z][\w.]*)",
                   re.M)
_LIBC = re.compile(r"^(__\w+|mem\w+|str\w+|l?l?roundf?|floorf?|ceilf?|expf?|logf?|sqrtf?|"
                   r"frexpf?|ldexpf?|scalbnf?|abort|_exit)$")
_HARNESS = re.compile(r"^(main|put\w*|stack_paint|Reset_Handler|\w+_Handler|tvmdev_\w+|uart\w+|"
                      r"copy_bytes)$")


@dataclass
class Profile:
    """One counted call, broken down."""

    total: int = 0
    by_operator: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    by_kind: Counter[str] = field(default_factory=Counter)  # by_operator by operator kind
    by_library: Counter[str] = field(default_factory=Counter)
    by_class: Counter[str] = field(default_factory=Counter)
    fault: str | None = None
    measured: int | None = None  # the -icount count of the same run, to compare


_KINDS = (("depthwise", "depthwise"), ("conv", "conv"), ("fully_connected", "fc"),
          ("add", "add"), ("pad", "pad"), ("quantize", "(de)quantize"),
          ("mean", "mean/pool"), ("reduce", "mean/pool"), ("pool", "mean/pool"),
          ("transpose", "transpose"), ("softmax", "softmax"), ("reshape", "reshape"))
_MAP_TEXT = re.compile(r"^ \.text\.(\S+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+\S*?\(?([\w-]+)\.o\)?$",
                       re.M)


def operator_kind(label: str) -> str:
    """The operator kind a kernel's function name (and its object file) says."""
    low = label.lower()
    return next((kind for key, kind in _KINDS if key in low), "other")


def origins(elf: Path) -> dict[str, str]:
    """Each function's object file (stem), from the linker map beside ``elf``, if any:
    TFLM's Eval functions share names (conv.o's EvalInt8, depthwise_conv.o's...)."""
    found: dict[str, str] = {}
    for map_path in Path(elf).parent.glob("*.map"):
        text = re.sub(r"^ (\.text\.\S+)\n\s+", r" \1 ", map_path.read_text(errors="replace"),
                      flags=re.M)
        found.update({f"{int(a, 16):x}": obj for _, a, obj in _MAP_TEXT.findall(text)})
    return found


def instruction_class(mnemonic: str) -> str:
    """The class of a Thumb-2 mnemonic as objdump prints it."""
    m = mnemonic.split(".")[0] if not mnemonic.startswith("b") else mnemonic
    for name, pattern in (("long", _LONG), ("mac", _MAC), ("mul", _MUL), ("sat", _SAT),
                          ("widen", _WIDEN), ("load", _LOAD), ("store", _STORE),
                          ("branch", _BRANCH)):
        if pattern.match(m):
            return name
    return "other"


def library(name: str, own: str = "other") -> str:
    """The library a function belongs to, by its name (``own``: what the rest is)."""
    if name.startswith("tvmk_cm_"):
        return "tvmdev_cm"
    if name.startswith(("tvmk_cmsis_nn_", "arm_")):
        return "cmsis_nn"
    if name.startswith("tvmk_"):
        return "portable"
    if name.startswith("tvmgen_"):
        return "executor"
    if name.startswith(("_ZN6tflite", "_ZNK6tflite", "_ZN12_GLOBAL")):
        return "tflm"
    if _LIBC.match(name):
        return "libc"
    if _HARNESS.match(name):
        return "harness"
    return own


def disassembly(elf: Path) -> dict[int, str]:
    """Each instruction's address and mnemonic, from arm-none-eabi-objdump -d."""
    out = subprocess.run(["arm-none-eabi-objdump", "-d", str(elf)], capture_output=True,
                         text=True, check=True).stdout
    return {int(a, 16): m for a, m in _LINE.findall(out)}


def profile(elf: Path, function: str, dispatcher: str, cpu: str = "cortex-m4",
            own: str = "other") -> Profile:
    """Run ``elf`` in Unicorn and break down the one call of ``function`` (module
    docstring); ``dispatcher`` is the function whose callees are the operators."""
    import unicorn
    import unicorn.arm_const as arm

    uc, symbols, sp, reset = emu._load(Path(elf), cpu)
    code = disassembly(Path(elf))
    addresses = sorted(code)
    starts = set(symbols.starts)
    entry, disp = symbols.by_name[function], symbols.by_name[dispatcher]
    disp_end = symbols.starts[bisect.bisect_right(symbols.starts, disp)]
    stops = {symbols.by_name["tvmdev_semihosting_exit"]: "exit",
             symbols.by_name["Fault_Handler"]: "fault",
             symbols.by_name["Default_Handler"]: "unexpected interrupt"}
    done = emu.FirmwareRun()
    state: dict[str, Any] = {"ret": None, "op": "(outside)", "on": False}
    blocks: Counter[tuple[str, int, int]] = Counter()
    calls: Counter[str] = Counter()

    def block(uc_: Any, address: int, size: int, _: Any) -> None:
        if address == entry and not state["on"]:
            state.update(on=True, ret=uc_.reg_read(arm.UC_ARM_REG_LR) & ~1)
        elif state["on"] and address == state["ret"]:
            state["on"] = False
        if address in stops:
            emu._stop(uc_, done, stops[address], arm)
            return
        if not state["on"]:
            return
        if disp <= address < disp_end:
            state["op"] = "(dispatch)"
        elif address in starts and disp <= (uc_.reg_read(arm.UC_ARM_REG_LR) & ~1) < disp_end:
            state["op"] = f"{symbols.name_at(address)}@{address:x}"
            calls[state["op"]] += 1
        blocks[(state["op"], address, size)] += 1

    uc.mmio_map(emu.UART0, emu.UART_SPAN, lambda *a: 0, None, lambda *a: None, None)
    uc.hook_add(unicorn.UC_HOOK_BLOCK, block)
    uc.reg_write(arm.UC_ARM_REG_SP, sp)
    uc.emu_start(reset | 1, 0xFFFFFFFF, count=emu.LIMIT)
    result = Profile(fault=done.fault if done.exit_status is not None or done.fault else
                     "no exit")
    if done.exit_status not in (0, None):
        result.fault = f"exit status {done.exit_status}"
    objs = origins(Path(elf))
    _tally(result, blocks, code, addresses, symbols, own, objs)
    named = Counter[str]()
    for op, n in result.by_operator.items():
        name, _, at = op.partition("@")
        named[name] += n
        result.by_kind[operator_kind(f"{name} {objs.get(at, '')}")] += n
    result.by_operator = named
    result.calls = Counter()
    for op, n in calls.items():
        result.calls[op.partition("@")[0]] += n
    return result


def _tally(result: Profile, blocks: Counter[tuple[str, int, int]], code: dict[int, str],
           addresses: list[int], symbols: Any, own: str, objs: dict[str, str]) -> None:
    seen: dict[tuple[int, int], tuple[str, Counter[str]]] = {}
    for (op, address, size), times in blocks.items():
        if (address, size) not in seen:
            lo = bisect.bisect_left(addresses, address)
            hi = bisect.bisect_left(addresses, address + size)
            kinds = Counter(instruction_class(code[a]) for a in addresses[lo:hi])
            lib = library(symbols.name_at(address), own)
            start = symbols.starts[bisect.bisect_right(symbols.starts, address) - 1]
            if lib == own and "arm_" in objs.get(f"{start:x}", ""):
                lib = "cmsis_nn"  # a static function of CMSIS-NN's (its object file says)
            seen[(address, size)] = (lib, kinds)
        lib, kinds = seen[(address, size)]
        n = sum(kinds.values()) * times
        result.total += n
        result.by_operator[op] += n
        result.by_library[lib] += n
        for k, v in kinds.items():
            result.by_class[k] += v * times
