"""What ``tvmdev aot`` prints of a compiled model's memory before anything is built: RAM
(the workspace, and in it or beside it the model's inputs and outputs; the stack the
board reserves; on an RTOS kernel, the kernel's heap and its own threads' stacks, the
sections of the firmware's linker script) and flash (the constants; the params arrays; the
code, estimated from the sizes measured for the board's CPU, :mod:`tvmdev.plan.code_size`,
or at least the floor of :data:`tvmdev.plan.fit.CODE_FLOOR`), each with the region of the
board it goes to."""

from __future__ import annotations

from ..load.rtos import load_rtos
from ..plan.code_size import estimate_code, params_bytes
from ..plan.fit import CODE_FLOOR, constant_bytes
from ..plan.pipeline import Compiled
from .harness import MAX_THREADS
from .rtos import kernel_heap


def _row(what: str, size: int, region: str, note: str) -> tuple[str, int, str, str]:
    return (what, size, region, note)


def _code_row(c: Compiled, region: str) -> tuple[str, int, str, str]:
    """The code: the estimate from the measured sizes of the board's CPU, or the floor."""
    est = estimate_code(c)
    if est is None:
        return _row("code", CODE_FLOOR, region, "at least (the smallest firmware's; no "
                    f"code sizes measured for {c.board.cpu}); a build's map file has the "
                    "figure")
    note = (f"estimate: executor {est.executor:,} + kernels {est.kernels:,}, sizes measured "
            f"on {est.cpu} (runtime/kernels/code_bytes.yaml)")
    if not est.unmeasured:
        return _row("code", est.total, region, note)
    return _row("code", max(est.total, CODE_FLOOR), region,
                f"at least: {note}; never measured there, not counted: "
                f"{', '.join(est.unmeasured)}")


def memory_report(c: Compiled) -> list[str]:
    """The report's lines."""
    m, plan, mem = c.model, c.memory, c.board.memory
    ins = sum(m.tensors[n].nbytes for n in m.inputs)
    outs = sum(m.tensors[n].nbytes for n in m.outputs)

    def region(pool: str, default: str) -> str:
        r = c.regions.region_of(pool) if c.regions is not None else None
        return r.name if r is not None else default

    state = f"; state {plan.state_region[1]:,}" if plan.states else ""
    io_note = (f"inputs {ins:,} + outputs {outs:,} in it" if c.workspace_io
               else "the inputs and outputs are the caller's")
    ram = [_row("workspace", plan.arena_size, region("workspace", "-"),
                f"lower bound {plan.lower_bound:,}; {io_note}{state}")]
    if not c.workspace_io:
        ram += [_row("inputs", ins, "-", "the caller's buffers"),
                _row("outputs", outs, "-", "the caller's buffers")]
    ram.append(_row("stack", mem.stack, mem.ram.name, "the board's memory.stack")
               if mem is not None else _row("stack", 0, "-", "the caller's thread's"))
    if c.board.rtos is not None and mem is not None:  # the linker script's kernel sections
        heap = kernel_heap(mem.stack, MAX_THREADS)
        ram += [_row(f".{k.name}", k.size(heap), mem.ram.name, k.what)
                for k in load_rtos(c.board.rtos).sections]
    code_region = mem.code.name if mem is not None else "-"
    flash = [_row("constants", constant_bytes(m), region("constants", code_region), ""),
             _row("params", params_bytes(c), region("constants", code_region),
                  "the per-channel arrays of the params structs, beside the constants"),
             _code_row(c, code_region)]
    floor = flash[-1][3].startswith("at least")
    width = max(len(f"{r[1]:,}") for r in ram + flash)
    regions = max(len(r[2]) for r in ram + flash)

    def lines(rows: list[tuple[str, int, str, str]]) -> list[str]:
        return [f"    {what:<10} {size:>{width},}  {reg:<{regions}}  {note}".rstrip()
                for what, size, reg, note in rows]

    return [f"RAM: {sum(r[1] for r in ram):,} bytes", *lines(ram),
            f"flash: {sum(r[1] for r in flash):,} bytes{' at least' if floor else ''}",
            *lines(flash)]
