"""The executor's part for devices with memory of their own (docs/device-memory.md): the
steps that open, load, copy, wait and close, each with the way out after a failure; the
load functions; the kernel calls with addresses. Python computes every name, address and
size; the templates lay them out (executor.c.j2).
"""

from __future__ import annotations

from typing import Any

from ..model.cnames import Names
from ..model.graph import Model
from ..model.ops import OPS, kernel_params
from ..naming import camel, upper
from ..plan.device_memory import DeviceMemoryPlan, Pool
from ..plan.prepare import Prepared
from ..plan.schedule import Step
from .engine import c_call, c_declarator

DEFAULT_WAIT_MS = 1000


def wait_macro(macro: str, kind: str, op: str | None = None) -> str:
    """The macro of a Wait's timeout: the kind's, or the one after a kernel of ``op``."""
    return f"{macro}_WAIT_MS_{upper(kind)}" + (f"_{upper(op)}" if op else "")


def _addr(pool: Pool, tensor: str | None, none: str) -> str:
    return none if tensor is None else f"{pool.addresses[tensor]}U"


def memory_call(model: Model, prep: Prepared, pool: Pool, names: Names) -> str:
    """``ret = <kind>_<op>_s8(addresses..., &params, devices->d, scratch);``: the device's
    own kernel, every tensor an address in its memory, the scratch address last."""
    op = model.operators[prep.index]
    kind = model.device(pool.device).kind
    opdef = OPS[op.op]
    none = f"TVM_DEVICE_{upper(kind)}_ADDR_NONE"
    tensors = dict(zip(opdef.inputs, op.inputs, strict=False))
    tensors.update(zip(opdef.outputs, op.outputs, strict=True))
    exprs = {a: _addr(pool, tensors.get(a), none) for a in (*opdef.inputs, *opdef.outputs)}
    exprs["params"] = f"&{names.params(op.cname)}"
    exprs["resource_handle"] = f"devices->{pool.device}"
    kernel = prep.chain[0]
    order = kernel.args or [n for _, n in kernel_params(opdef)]
    scratch = f"{pool.scratch[prep.index][0]}U" if prep.index in pool.scratch else "0U"
    return c_call("ret = ", kernel.name, [*(exprs[a] for a in order), scratch], 4)


def _tensor_ref(model: Model, name: str, names: Names) -> str:
    """The CPU expression of a tensor a copy reads or writes."""
    from .executor import _tensor_expr  # one spelling of every tensor expression
    return _tensor_expr(model, name, names)


class _Unwind:
    """What is waited for, open and active at each step: the way out from there."""

    def __init__(self, prefix: str, bits: dict[str, str]) -> None:
        self.prefix, self.bits = prefix, bits
        self.active: list[str] = []
        self.open: list[str] = []
        self.pending: list[str] = []

    def leave(self, wait: list[str] | None = None, open_: list[str] | None = None,
              indent: int = 8) -> str:
        masks = [" | ".join(self.bits[d] for d in m) if m else "0U"
                 for m in (self.pending if wait is None else wait,
                           self.open if open_ is None else open_, self.active)]
        return c_call("return ", f"{self.prefix}_unwind", ["devices", *masks, "ret"], indent)


def _memory_step(s: Step, model: Model, plan: DeviceMemoryPlan, names: Names,
                 state: _Unwind, last_op: dict[str, str]) -> dict[str, Any]:
    """One step on a device with memory: its call, how success is tested, the way out."""
    dev = s.device or ""
    kind = model.device(dev).kind
    fn = f"TVMDevice{camel(kind)}"
    ctx: dict[str, Any] = {"action": s.action, "device": dev, "memory_step": True,
                           "comment": None}
    if s.action == "open":
        ctx["call"] = f"    ret = {fn}Open(devices->{dev});"
        ctx["leave"] = state.leave()
        state.open.append(dev)
    elif s.action == "load":
        ctx.update(loaded=f"{names.prefix}_loaded_{dev}", load=f"{names.prefix}_load_{dev}",
                   leave=state.leave(indent=12), skip=not plan.pool(dev).constants)
    elif s.action in ("copy_to", "copy_from"):
        t = s.tensor or ""
        addr = f"{plan.pool(dev).addresses[t]}U"
        args = ([f"devices->{dev}", addr, _tensor_ref(model, t, names)] if s.action == "copy_to"
                else [f"devices->{dev}", _tensor_ref(model, t, names), addr])
        ctx["call"] = c_call("ret = ", f"{fn}{camel(s.action)}",
                             [*args, f"{model.tensors[t].nbytes}U"], 4)
        ctx["comment"] = f"{t} ({model.tensors[t].nbytes} bytes)"
        state.pending = [*dict.fromkeys([*state.pending, dev])]
        ctx["leave"] = state.leave()
        last_op[dev] = ""
    elif s.action == "wait":
        macro = wait_macro(names.macro, kind, last_op.get(dev) or None)
        ctx["call"] = f"    ret = {fn}Wait(devices->{dev}, {macro});"
        state.pending = [d for d in state.pending if d != dev]
        ctx["leave"] = state.leave()  # a Wait that failed is not waited for again
    elif s.action == "close":
        ctx["call"] = f"    ret = {fn}Close(devices->{dev});"
        state.open = [d for d in state.open if d != dev]
        ctx["leave"] = state.leave()  # called once, even when it fails
    return ctx


def memory_steps(model: Model, plan: DeviceMemoryPlan, ops: dict[int, dict[str, Any]],
                 bits: dict[str, str], names: Names) -> list[dict[str, Any]]:
    """Every step of the run function of a model with memory devices, with the statement
    that leaves it on a failure (the unwind always runs: it marks the devices not
    loaded)."""
    state = _Unwind(names.prefix, bits)
    last_op: dict[str, str] = {}
    out = []
    for s in plan.steps:
        if s.action not in ("activate", "deactivate", "op") or (
                s.action == "op" and s.op in plan.mem_ops):
            if s.action == "op" and s.op is not None:
                dev = s.device or ""
                state.pending = [*dict.fromkeys([*state.pending, dev])]
                last_op[dev] = model.operators[s.op].op
                out.append({"action": "op", "device": dev, "op": ops[s.op], "memory_step": False,
                            "leave": state.leave()})
                continue
            out.append(_memory_step(s, model, plan, names, state, last_op))
            continue
        ctx: dict[str, Any] = {
            "action": s.action, "device": s.device, "memory_step": False,
            "camel": camel(model.device(s.device).kind) if s.device else None,
            "op": ops[s.op] if s.op is not None else None}
        if s.action == "activate":
            ctx["leave"] = state.leave()
            state.active.append(s.device or "")
        elif s.action == "deactivate":
            state.active = [d for d in state.active if d != s.device]
            ctx["leave"] = state.leave()
        else:
            ctx["leave"] = state.leave()
            if s.device is not None and ops[s.op or 0]["device"]:
                ctx["leave_open"] = state.leave(open_=[*state.open, s.device])
        out.append(ctx)
    return out


def memory_context(model: Model, plan: DeviceMemoryPlan, names: Names, bits: dict[str, str]
                   ) -> dict[str, Any]:
    """The load functions, the loaded markers, the Wait timeouts and the unwind of a
    model with devices with memory."""
    waits: dict[str, str] = {}
    for p in plan.pools:
        kind = model.device(p.device).kind
        waits.setdefault(wait_macro(names.macro, kind), str(DEFAULT_WAIT_MS))
        for i, d in plan.mem_ops.items():
            if d == p.device:
                op = model.operators[i].op
                waits.setdefault(wait_macro(names.macro, kind, op), wait_macro(names.macro, kind))
    pools = []
    for p in plan.pools:
        kind = model.device(p.device).kind
        fn = f"TVMDevice{camel(kind)}"
        loads = [c_call("ret = ", f"{fn}CopyTo",
                        ["dev", f"{p.addresses[c]}U", _tensor_ref(model, c, names),
                         f"{plan.constant_bytes(model, c)}U"], 4) for c in p.constants]
        pools.append({
            "device": p.device, "camel": camel(kind), "bit": bits[p.device],
            "loaded": f"{names.prefix}_loaded_{p.device}",
            "load": c_declarator(f"static int32_t {names.prefix}_load_{p.device}",
                                 [f"tvm_device_{kind}_t *dev"]),
            "wait": f"{fn}Wait(dev, {wait_macro(names.macro, kind)})",
            "unwind_wait": f"{fn}Wait(devices->{p.device}, {wait_macro(names.macro, kind)})",
            "loads": [{"call": call, "name": c, "bytes": plan.constant_bytes(model, c)}
                      for call, c in zip(loads, p.constants, strict=True)],
            "load_bytes": p.constant_region[1], "size": p.size, "capacity": p.capacity})
    return {
        "mem_pools": pools,
        "wait_macros": [{"macro": m, "value": v} for m, v in waits.items()],
        "device_lost": c_declarator(f"void {names.prefix}_device_lost", ["void"]),
        "mem_unwind": c_declarator(f"static int32_t {names.prefix}_unwind", [
            f"const struct {names.prefix}_devices *devices", "uint32_t wait_mask",
            "uint32_t open_mask", "uint32_t active_mask", "int32_t status"]),
    }
