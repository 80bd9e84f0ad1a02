"""A tvmdev firmware for mps2_an385 (Cortex-M3), run whole in Unicorn: from the reset
vector to the semihosting exit, with the console UART's writes captured, counting the
instructions of one call of a function (entry to return, callees included).

Used by int8_bench.py. Unicorn (the ``bench`` extra) is imported only when a firmware is
run, so the benchmark scripts import without it.

What is counted: every instruction executed from the first one of the function to its
return to the caller (the block that begins at the address the caller left in LR), in
the callees too (kernels, libgcc's soft float, memcpy), as Unicorn's per-instruction code
hook sees them, which is how executor_overhead.py counts: an instruction of an IT block
whose condition fails is not counted (QEMU skips it before the hook).

How, fast: a block hook (one Python call per translated block, not per instruction, so a
ResNet takes a minute, not ten) adds the instructions of the block, from the Thumb-2
lengths (a halfword whose top five bits are 0b11101, 0b11110 or 0b11111 starts a 32-bit
instruction). Two things make a block run other than whole, both from IT blocks: a
predicated instruction whose condition fails, and a predicated write of PC (``it ne;
popne {r4, pc}``) after which QEMU's block goes on. So a first run finds the IT blocks
of the code executed (decoding a little past each block's end: QEMU cuts blocks at 1 KiB
pages, even inside an IT block), and the second puts a code hook on each predicated
instruction (counted when it fires) and on the instruction after each IT block (the rest
of the block ran only if it fires). ``exact=True`` also counts with a code hook on every
instruction; int8_bench.py checks the two agree (--exact-limit).

``failed=True`` counts the predicated instructions whose condition fails too, as QEMU's
``-icount`` does (it charges a translated block's every instruction) and as Arm's
architecture does ("architecturally executed", what the PMU's INST_RETIRED counts):
then the count is comparable with _icount.py's. ``cpu`` runs the same memory map with a
Cortex-M4 or M7 (mps2_an386, mps2_an500: AN385's map; Unicorn has no MVE, so no M55,
and its M7 stops at some FPv5 double-precision code: an invalid-instruction error).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elftools.elf.elffile import ELFFile

# The mps2_an385 memory map as link.ld and the board's YAML give it.
CODE = (0x00000000, 0x400000)
RAM = (0x20000000, 0x400000)
UART0 = 0x40004000  # TVMDEV_UART0_BASE: the console (DATA at +0, STATE at +4)
UART_SPAN = 0x3000  # UART0..UART2
SCS = (0xE000E000, 0x1000)  # system control space, as plain memory (nothing reads it back)
LIMIT = 5_000_000_000  # instructions: a runaway firmware stops here
CPUS = {"cortex-m3": "UC_CPU_ARM_CORTEX_M3", "cortex-m4": "UC_CPU_ARM_CORTEX_M4",
        "cortex-m7": "UC_CPU_ARM_CORTEX_M7"}


@dataclass
class FirmwareRun:
    """One firmware run: its exit status, what it printed, and the count."""

    exit_status: int | None = None
    fault: str | None = None
    console: bytearray = field(default_factory=bytearray)
    instructions: int = 0  # one call of the counted function, callees included
    exact: int | None = None  # the same, counted one instruction at a time
    by_function: dict[str, int] = field(default_factory=dict)
    # the predicated instructions and the checkpoints (the first run finds them)
    watch: tuple[set[int], set[int]] = field(default_factory=lambda: (set(), set()))

    @property
    def lines(self) -> list[str]:
        """The ``tvmdev:`` lines the firmware printed."""
        text = self.console.decode("ascii", errors="replace")
        return [ln for ln in text.splitlines() if ln.startswith("tvmdev:")]


class _Symbols:
    """Function symbols of the ELF, for naming the function a block is in."""

    def __init__(self, elf: ELFFile) -> None:
        symtab: Any = elf.get_section_by_name(".symtab")
        assert symtab is not None, "the firmware has no symbol table"
        funcs = sorted((s["st_value"] & ~1, s.name) for s in symtab.iter_symbols()
                       if s["st_info"]["type"] == "STT_FUNC" and s["st_size"])
        self.starts = [a for a, _ in funcs]
        self.names = [n for _, n in funcs]
        self.by_name = {s.name: s["st_value"] & ~1 for s in symtab.iter_symbols()
                        if s["st_info"]["type"] == "STT_FUNC"}

    def name_at(self, address: int) -> str:
        """The function whose code holds ``address``."""
        i = bisect.bisect_right(self.starts, address) - 1
        return self.names[i] if i >= 0 else "?"


def _load(elf_path: Path, cpu: str = "cortex-m3") -> tuple[Any, _Symbols, int, int]:
    import unicorn
    import unicorn.arm_const as arm

    uc: Any = unicorn.Uc(unicorn.UC_ARCH_ARM, unicorn.UC_MODE_THUMB | unicorn.UC_MODE_MCLASS)
    uc.ctl_set_cpu_model(getattr(arm, CPUS[cpu]))
    for base, size in (CODE, RAM, SCS):
        uc.mem_map(base, size)
    with elf_path.open("rb") as fh:
        elf = ELFFile(fh)
        for seg in elf.iter_segments():
            if seg["p_type"] == "PT_LOAD" and seg["p_filesz"]:
                uc.mem_write(seg["p_paddr"], seg.data())
        symbols = _Symbols(elf)
    vectors = uc.mem_read(0, 8)
    return uc, symbols, int.from_bytes(vectors[:4], "little"), int.from_bytes(vectors[4:],
                                                                             "little")


def thumb_starts(code: bytes, address: int) -> list[int]:
    """Addresses of the instructions in a block of Thumb-2 code: 16-bit ones, and 32-bit
    ones whose first halfword has 0b11101, 0b11110 or 0b11111 as its top five bits."""
    starts: list[int] = []
    i = 0
    while i + 1 < len(code):
        starts.append(address + i)
        first = int.from_bytes(code[i:i + 2], "little")
        i += 4 if (first >> 11) in (0b11101, 0b11110, 0b11111) else 2
    return starts


def it_blocks(code: bytes, address: int, size: int) -> list[tuple[list[int], int | None]]:
    """The IT blocks that start in the ``size`` bytes of code at ``address``: (the
    predicated instructions, the instruction after them). ``code`` goes on 24 bytes
    further, since QEMU may end a block inside an IT block (at a 1 KiB page boundary)
    and the next block then starts with predicated instructions."""
    starts = thumb_starts(code, address)
    found = []
    for k, at in enumerate(starts):
        if at >= address + size:
            break
        half = int.from_bytes(code[at - address:at - address + 2], "little")
        mask = half & 0xF
        if half & 0xFF00 == 0xBF00 and mask:
            n = 5 - (mask & -mask).bit_length()  # mask 1000: one, x100: two, ...
            preds = starts[k + 1:k + 1 + n]
            after = starts[k + 1 + n] if k + 1 + n < len(starts) else None
            found.append((preds, after))
    return found


def layout(starts: list[int], preds: set[int], checkpoints: set[int]
           ) -> tuple[int, list[tuple[int, tuple[int, ...], int]]]:
    """How to count a block: (its plain instructions when it has no predicated one, or
    pieces: plain instructions, the predicated ones after them (each counted if its hook
    fired), the checkpoint that must have been reached to go on)."""
    if not any(a in preds for a in starts):
        return len(starts), []
    pieces: list[tuple[int, tuple[int, ...], int]] = []
    plain, pending = 0, list[int]()
    for a in starts:
        if a in checkpoints and a != starts[0]:
            pieces.append((plain, tuple(pending), a))
            plain, pending = 0, list[int]()
        if a in preds:
            pending.append(a)
        else:
            plain += 1
    pieces.append((plain, tuple(pending), -1))
    return 0, pieces


def run_firmware(elf_path: Path, function: str, exact: bool = False, failed: bool = False,
                 cpu: str = "cortex-m3") -> FirmwareRun:
    """Run the firmware from reset to its semihosting exit; count one call of
    ``function`` (``failed``: with the predicated instructions whose condition fails,
    as QEMU -icount counts). Two runs: the first finds the IT blocks of the code
    executed, the second hooks their instructions and counts."""
    first = _emulate(elf_path, function, None, exact=False, cpu=cpu)
    if first.fault is not None:
        return first
    counted = _emulate(elf_path, function, first.watch, exact, failed, cpu)
    if counted.fault is None and counted.instructions == 0:
        counted.fault = f"{function} was not called, or did not return"
    return counted


def _emulate(elf_path: Path, function: str, watch: tuple[set[int], set[int]] | None,
             exact: bool, failed: bool = False, cpu: str = "cortex-m3") -> FirmwareRun:
    import unicorn
    import unicorn.arm_const as arm

    uc, symbols, sp, reset = _load(elf_path, cpu)
    result = FirmwareRun()
    stops = {symbols.by_name["tvmdev_semihosting_exit"]: "exit",
             symbols.by_name["Fault_Handler"]: "fault",
             symbols.by_name["Default_Handler"]: "unexpected interrupt"}
    entry = symbols.by_name[function]
    counter = _Counter(symbols, result, watch, failed)

    def uart_read(uc_: Any, offset: int, size: int, _: Any) -> int:
        return 0  # STATE: never full, nothing received

    def uart_write(uc_: Any, offset: int, size: int, value: int, _: Any) -> None:
        if offset == 0:  # UART0 DATA
            result.console.append(value & 0xFF)

    def block(uc_: Any, address: int, size: int, _: Any) -> None:
        counter.close_block()
        if address == entry and counter.start is None:
            counter.start, counter.ret = counter.n, uc_.reg_read(arm.UC_ARM_REG_LR) & ~1
        elif address == counter.ret and counter.start is not None:
            result.instructions, counter.ret = counter.n - counter.start, None
        if address in stops:
            _stop(uc_, result, stops[address], arm)
            return
        counter.open_block(uc_, address, size)

    def fired(uc_: Any, address: int, size: int, _: Any) -> None:
        counter.fired.add(address)

    def code(uc_: Any, address: int, size: int, _: Any) -> None:
        if counter.ret is not None:
            counter.exact += 1

    uc.mmio_map(UART0, UART_SPAN, uart_read, None, uart_write, None)
    uc.hook_add(unicorn.UC_HOOK_BLOCK, block)
    for address in sorted(set().union(*watch) if watch else ()):
        uc.hook_add(unicorn.UC_HOOK_CODE, fired, begin=address, end=address)
    if exact:
        uc.hook_add(unicorn.UC_HOOK_CODE, code)
    uc.reg_write(arm.UC_ARM_REG_SP, sp)
    uc.emu_start(reset | 1, 0xFFFFFFFF, count=LIMIT)
    result.exact = counter.exact if exact else None
    result.watch = (counter.preds, counter.checkpoints)
    if result.exit_status is None and result.fault is None:
        result.fault = f"no exit after {LIMIT} instructions"
    return result


Layout = tuple[int, list[tuple[int, tuple[int, ...], int]], str]


class _Counter:
    """Instructions executed so far: each block is added when the next one starts. The
    first run only finds the IT blocks (its count is not exact); the second counts a
    predicated instruction when its hook fired (QEMU skips it when its condition fails,
    and so does the per-instruction hook) and stops a block at a checkpoint not reached
    (QEMU goes on past a predicated write of PC, ``it ne; popne {r4, pc}``)."""

    def __init__(self, symbols: _Symbols, result: FirmwareRun,
                 watch: tuple[set[int], set[int]] | None, failed: bool = False) -> None:
        self.symbols, self.result = symbols, result
        self.failed = failed  # count a predicated instruction even when its hook did not fire
        self.n = self.exact = 0
        self.start: int | None = None
        self.ret: int | None = None
        self.known = watch is not None
        self.preds, self.checkpoints = watch if watch else (set(), set())
        self.layouts: dict[tuple[int, int], Layout] = {}
        self.current: Layout | None = None
        self.fired: set[int] = set()

    def open_block(self, uc: Any, address: int, size: int) -> None:
        key = (address, size)
        if key not in self.layouts:
            code = bytes(uc.mem_read(address, size + 24))
            if not self.known:
                for preds, after in it_blocks(code, address, size):
                    self.preds.update(preds)
                    self.checkpoints.update([after] if after is not None else [])
            n, pieces = layout(thumb_starts(code[:size], address), self.preds,
                               self.checkpoints)
            self.layouts[key] = (n, pieces, self.symbols.name_at(address))
        self.current = self.layouts[key]
        self.fired.clear()

    def close_block(self) -> None:
        if self.current is None:
            return
        ran, pieces, name = self.current
        for plain, preds, checkpoint in pieces:
            ran += plain + (len(preds) if self.failed else
                            sum(1 for a in preds if a in self.fired))
            if checkpoint != -1 and checkpoint not in self.fired:
                break
        self.n += ran
        if self.ret is not None:
            by = self.result.by_function
            by[name] = by.get(name, 0) + ran
        self.current = None


def _stop(uc: Any, result: FirmwareRun, what: str, arm: Any) -> None:
    if what == "exit":
        status = int(uc.reg_read(arm.UC_ARM_REG_R0))  # tvmdev_semihosting_exit(status)
        result.exit_status = status - (1 << 32) if status >> 31 else status
    else:
        result.fault = f"{what} at lr {uc.reg_read(arm.UC_ARM_REG_LR):#x}"
    uc.emu_stop()
