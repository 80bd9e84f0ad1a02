"""The AOT executor: ``tvmgen_<model>.h/.c`` and the plan metadata, from a compiled model
(:mod:`tvmdev.plan.pipeline`): this module only lays out what the pipeline decided.

Python computes every name, offset and initializer; the templates only lay them out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import TvmdevError
from ..load.library import Kernel
from ..model import status
from ..model.cnames import Names
from ..model.device import MAX_DEVICES
from ..model.graph import Model, Operator
from ..model.ops import CTYPES, OPS, kernel_params
from ..model.shapes import ACTIVATIONS, numel
from ..model.windowed import LAYOUTS
from ..naming import camel
from ..plan.device_layouts import LaidOut
from ..plan.device_memory import DeviceMemoryPlan
from ..plan.memory import MemoryPlan
from ..plan.pipeline import Compiled
from ..plan.prepare import Prepared
from ..plan.schedule import Step
from ..write.files import OutFile
from .cvalues import (
    DECIMAL_LIMIT,
    c_float,
    c_ints,
    c_string,
    constant_data,
    params_arrays,
)
from .engine import banner, c_call, c_declarator, c_split, render
from .executor_io import io_context, io_signatures
from .executor_memory import memory_call, memory_context, memory_steps
from .plan_picture import plan_svg
from .planfile import plan_json

CTYPE = CTYPES


# Params fields whose values are codes, spelt with tvmk_portable.h's names.
_CODE_NAMES = {"activation": tuple(f"TVMK_ACT_{a}" for a in ACTIVATIONS),
               "layout": tuple(f"TVMK_LAYOUT_{x}" for x in LAYOUTS)}


def _field_value(key: str, v: Any) -> str:
    if key in _CODE_NAMES and isinstance(v, int):
        return _CODE_NAMES[key][v]
    return _init_value(v)


def _init_value(v: Any) -> str:
    if v is None:  # a pointer field without its array
        return "NULL"
    if isinstance(v, float):
        return c_float(v)
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(_init_value(x) for x in v) + "}"
    return str(v)


def _tensor_expr(model: Model, name: str | None, names: Names, ws_io: bool = False) -> str:
    """The C expression of tensor ``name`` in the run function (``ws_io``: the model's
    inputs and outputs are in the workspace, as its intermediates)."""
    if name is None:
        return "NULL"
    if name in model.slices:  # rows of another tensor (patch-based inference)
        parent, offset = model.slices[name]
        return f"({_tensor_expr(model, parent, names, ws_io)} + {offset})"
    t = model.tensors[name]
    if ws_io and t.role in ("input", "output"):
        return names.local(t.cname)
    if t.role == "input":
        return f"inputs->{t.cname}"
    if t.role == "output":
        return f"outputs->{t.cname}"
    if t.role == "constant":
        if t.dtype == "q4c32":
            return f"&{names.const(t.cname)}"
        suffix = ".values" if numel(t.shape) > DECIMAL_LIMIT and t.dtype == "float32" else ""
        return f"{names.const(t.cname)}{suffix}"
    return names.local(t.cname)


def _input_exprs(model: Model, op: Operator, names: Names, ws_io: bool) -> dict[str, str]:
    """The C expression of each input argument of ``op``'s kernels: NULL for an absent
    optional input, and for one whose data the kernel reads from a layout of it
    (Model.replaced); the tensors of a variadic argument as a C99 compound literal array."""
    opdef = OPS[op.op]
    given = ["NULL" if (op.index, i) in model.replaced else _tensor_expr(model, t, names, ws_io)
             for i, t in enumerate(op.inputs)]
    if opdef.variadic:
        fixed = len(opdef.inputs) - 1
        exprs = dict(zip(opdef.inputs[:fixed], given[:fixed], strict=True))
        ctype = CTYPE[model.tensors[op.inputs[-1] or ""].dtype]
        exprs[opdef.inputs[-1]] = (f"(const {ctype} *const[]){{" + ", ".join(given[fixed:])
                                   + "}")
        return exprs
    return dict(zip(opdef.inputs, given + ["NULL"] * (len(opdef.inputs) - len(given)),
                    strict=True))


def _op_context(model: Model, prep: Prepared, names: Names, ws_io: bool,
                shared: dict[tuple[str, tuple[Any, ...]], str]) -> dict[str, Any]:
    op = model.operators[prep.index]
    chain = prep.chain
    opdef = OPS[op.op]
    out = model.tensors[op.outputs[0]]
    params_name = names.params(op.cname)
    arrays, params = params_arrays(dict(prep.params), params_name, shared)
    scratch_offset, scratch_bytes = prep.scratch
    struct = prep.struct
    if prep.takes_scratch:
        params["scratch_bytes"] = scratch_bytes  # the pointer is set at run time
    dev = model.device(op.device) if op.device else None
    exprs = _input_exprs(model, op, names, ws_io)
    exprs.update(zip(opdef.outputs, [_tensor_expr(model, t, names, ws_io)
                                     for t in op.outputs], strict=True))
    # With scratch, the kernels get a copy of the params pointing into the workspace.
    exprs["params"] = f"&{names.scratch_local(struct)}" if scratch_bytes else f"&{params_name}"
    exprs["resource_handle"] = f"devices->{dev.name}" if dev else "NULL"
    default_order = [n for _, n in kernel_params(opdef)]

    def call(k: Kernel, lead: str, indent: int) -> str:
        return c_call(lead, k.name, [exprs[a] for a in (k.args or default_order)], indent)

    return {
        "index": op.index,
        "name": op.name,
        "cname": op.cname,
        "op": op.op,
        "device": dev.name if dev else None,
        "kind_camel": camel(dev.kind) if dev else None,
        "params_struct": struct,
        "params_name": params_name,
        "params_arrays": [{**a, "decl": c_split(
            f"static const {a['ctype']} {a['name']}[{a['count']}]",
            f"{names.macro}_CONST = {{")} for a in arrays],
        "params_decl": c_split(f"static const struct {struct}", f"{params_name} = {{"),
        "params": [(k, _field_value(k, v)) for k, v in params.items()],
        "first_call": call(chain[0], "ret = ", 4),
        "fallback_calls": [call(k, "ret = ", 8) for k in chain[1:]],
        "scratch": {"local": names.scratch_local(struct), "offset": scratch_offset,
                    "bytes": scratch_bytes} if scratch_bytes else None,
        "kernels": [k.name for k in chain],
        "out_expr": _tensor_expr(model, op.outputs[0], names, ws_io),
        "trace_call": c_call("", f"{names.macro}_TRACE", [
            str(op.index), c_string(op.name),
            # a view's bytes are its input's, where its output points
            _tensor_expr(model, op.outputs[0], names, ws_io),
            f"{out.nbytes}U"], 4),
        "out_bytes": out.nbytes,
        "out_shape": list(out.shape),
        "memory": False,  # run from a device's memory (_with_memory)
        # a view planned in its input's buffer: no call, no params
        "view_of": prep.view_of,
    }


def _device_bits(model: Model, steps: tuple[Step, ...], names: Names) -> dict[str, str]:
    """The name of each activated device's bit in the unwind masks, in activation order
    (bit i: the i-th device the run activates)."""
    activation = [s.device for s in steps if s.action == "activate" and s.device is not None]
    if len(activation) > MAX_DEVICES:
        raise TvmdevError(f"the model uses {len(activation)} devices; at most {MAX_DEVICES} "
                          "are supported", model.path)
    return {name: names.bit(name) for name in activation}


def _steps_context(model: Model, steps: tuple[Step, ...], ops: dict[int, dict[str, Any]],
                   bits: dict[str, str], prefix: str) -> list[dict[str, Any]]:
    """Each step of the run function with the statement that leaves it on a failure:
    ``return ret;`` when nothing is open or active, else the unwind call with the masks
    of what is. The schedule is static, so every failure site knows exactly that."""

    def leave(open_: list[str], active: list[str]) -> str:
        if not open_ and not active:
            return "        return ret;"
        mask = [" | ".join(m) if m else "0U" for m in (open_, active)]
        return c_call("return ", f"{prefix}_unwind", ["devices", *mask, "ret"], 8)

    out = []
    active: list[str] = []
    for s in steps:
        ctx: dict[str, Any] = {
            "action": s.action, "device": s.device, "memory_step": False,
            "camel": camel(model.device(s.device).kind) if s.device else None,
            "op": ops[s.op] if s.op is not None else None}
        if s.action == "activate":
            ctx["leave"] = leave([], active)  # failed: not active
            active = [*active, bits[s.device or ""]]
        elif s.action == "deactivate":
            active = [b for b in active if b != bits[s.device or ""]]
            ctx["leave"] = leave([], active)  # called once, even when it fails
        else:
            ctx["leave"] = leave([], active)
            if s.device is not None:  # the kernel failed: close its device too
                ctx["leave_open"] = leave([bits[s.device]], active)
        out.append(ctx)
    return out


def _signatures(prefix: str, ws_io: bool) -> dict[str, str]:
    """The declarators of the public functions and of the unwind helper (``ws_io``: the
    run functions take no inputs or outputs: they are in the workspace)."""
    io = [f"const struct {prefix}_inputs *inputs", f"struct {prefix}_outputs *outputs",
          f"const struct {prefix}_devices *devices"]
    if ws_io:
        io = io[2:]
    return {
        **io_signatures(prefix),
        "run": c_declarator(f"int32_t {prefix}_run", io),
        "run_with_workspace": c_declarator(f"int32_t {prefix}_run_with_workspace",
                                           [*io, "void *workspace"]),
        "reset": c_declarator(f"int32_t {prefix}_reset", ["void"]),
        "reset_workspace": c_declarator(f"int32_t {prefix}_reset_workspace",
                                        ["void *workspace"]),
        "unwind": c_declarator(f"static int32_t {prefix}_unwind",
                               [f"const struct {prefix}_devices *devices",
                                "uint32_t open_mask", "uint32_t active_mask",
                                "int32_t status"]),
    }


def _constants_context(model: Model, names: Names,
                       laid: Mapping[str, LaidOut] | None = None) -> dict[str, Any]:
    """The constants the operators read (one no operator reads is not emitted: C would
    warn that it is unused); ``laid``: those stored in a device kind's layout."""
    unread = model.unread_constants
    laid = laid or {}
    values = {n: laid[n].data if n in laid else v for n, v in model.constants.items()}

    def symbols(n: str) -> dict[str, str]:
        c = model.tensors[n].cname
        return {"name": n, "symbol": names.const(c), "data_symbol": names.const(c, "_data"),
                "scales_symbol": names.const(c, "_scales")}

    const = f"{names.macro}_CONST"

    def decl(ctype: str, symbol: str, count: int) -> str:
        return c_split(f"static const {ctype} {symbol}[{count}]", f"{const} = {{")

    return {
        "constants": [{**symbols(n), "count": int(v.size), "layout": laid[n].layout.describe()
                       if n in laid else None,
                       "shape": list(v.shape), "bits": v.size > DECIMAL_LIMIT
                       and v.dtype.kind == "f", "data": constant_data(v),
                       "decl": decl(CTYPE[model.tensors[n].dtype], names.const(
                           model.tensors[n].cname), int(v.size)),
                       "bits_decl": c_split(names.const(model.tensors[n].cname), const, 96)}
                      for n, v in values.items()
                      if n not in model.quantized and n not in unread],
        "quantized": [{**symbols(n), "shape": list(model.tensors[n].shape),
                       "n": q.n, "k": q.k, "block": q.block, "data": c_ints(q.data.ravel(), 16),
                       "scales": c_ints(q.scales.ravel(), 12),
                       "data_decl": decl("uint8_t", symbols(n)["data_symbol"], int(q.data.size)),
                       "scales_decl": decl("uint16_t", symbols(n)["scales_symbol"],
                                           int(q.scales.size))}
                      for n, q in model.quantized.items()],
    }


def executor_files(compiled: Compiled, command: str) -> list[OutFile]:
    """``tvmgen_<model>.h``, ``.c``, ``_plan.json`` and the plan's picture ``_plan.svg``
    of a compiled model; ``command`` is what their banners record."""
    model = compiled.model
    names = Names(model.name)
    ctx = _context(model, compiled.schedule_kind, compiled.steps, compiled.ops,
                   compiled.memory, names, compiled.workspace_io)
    if compiled.device_memory is not None:
        ctx = _with_memory(ctx, model, compiled.device_memory, compiled.ops, names)
    c_banner = banner("c", command, "owned")
    return [OutFile(f"{names.prefix}.h", render("executor.h.j2", banner=c_banner, **ctx),
                    "owned"),
            OutFile(f"{names.prefix}.c", render("executor.c.j2", banner=c_banner, **ctx),
                    "owned"),
            OutFile(f"{names.prefix}_plan.json", plan_json(compiled) + "\n", "owned"),
            OutFile(f"{names.prefix}_plan.svg", plan_svg(model, compiled.memory, tuple(
                line.removeprefix("# ") for line in
                banner("hash", command, "owned").splitlines())), "owned")]


def _with_memory(ctx: dict[str, Any], model: Model, plan: DeviceMemoryPlan,
                 prepared: tuple[Prepared, ...], names: Names) -> dict[str, Any]:
    """The context of a model with devices with memory of their own: their operators call
    the device's kernel with addresses, an operator its kind has no kernel for runs on the
    CPU with no Open, and the steps open, load, copy, wait and close."""
    ops = {o["index"]: o for o in ctx["ops"]}
    pools = {p.device: p for p in plan.pools}
    for p in prepared:
        device = model.operators[p.index].device
        if p.index in plan.mem_ops:
            ops[p.index].update(memory=True, scratch=None, fallback_calls=[],
                                first_call=memory_call(model, p, pools[plan.mem_ops[p.index]],
                                                       names))
        elif device is not None and model.device(device).kind in {
                model.device(d).kind for d in pools}:
            ops[p.index]["device"] = None
    bits = {d["name"]: d["bit"] for d in ctx["used_devices"]}
    return {**ctx, "steps": memory_steps(model, plan, ops, bits, names),
            **memory_context(model, plan, names, bits),
            **(_constants_context(model, names, plan.laid_out) if plan.laid_out else {})}


def _context(model: Model, schedule_kind: str, steps: tuple[Step, ...],
             prepared: tuple[Prepared, ...], memory: MemoryPlan, names: Names,
             ws_io: bool = False) -> dict[str, Any]:
    """What the executor templates lay out; every name comes from ``names``."""
    shared: dict[tuple[str, tuple[Any, ...]], str] = {}  # params arrays, by values
    ops = {p.index: _op_context(model, p, names, ws_io, shared) for p in prepared}
    bits = _device_bits(model, steps, names)
    structs = [p.struct for p in prepared if p.index in memory.scratch]
    scratch_params = [{"struct": st, "name": names.scratch_local(st)} for st in structs]
    # the tensors the run's statements name: a called operator's inputs and outputs, and
    # the output a view traces (a graph input no operator reads has no local, nor the
    # input of a view that only the view reads: C would warn that it is unused)
    touched = {t for p in prepared for t in (
        (*model.operators[p.index].inputs, *model.operators[p.index].outputs)
        if p.view_of is None else model.operators[p.index].outputs) if t}
    touched |= {model.slices[t][0] for t in touched if t in model.slices}  # rows of these

    def tensor_ctx(name: str) -> dict[str, Any]:
        t = model.tensors[name]
        return {"name": t.name, "cname": t.cname, "ctype": CTYPE[t.dtype],
                "shape": list(t.shape), "bytes": t.nbytes, "size": names.size(t.cname)}

    return {
        "model": model.name, "prefix": names.prefix, "macro": names.macro,
        "guard": names.guard, "workspace": f"{names.prefix}_workspace",
        "api_version": status.API_VERSION, "schedule": schedule_kind,
        "inputs": [tensor_ctx(n) for n in model.inputs],
        "outputs": [tensor_ctx(n) for n in model.outputs],
        "devices": [{"name": d.name, "kind": d.kind, "camel": camel(d.kind),
                     "type": f"tvm_device_{d.kind}_t"} for d in model.devices],
        "used_devices": [{"name": name, "camel": camel(model.device(name).kind),
                          "bit": bit, "value": f"0x{1 << i:x}U"}
                         for i, (name, bit) in enumerate(bits.items())],
        "kinds": list(model.kinds),
        "mem_pools": [],  # devices with memory of their own (_with_memory)
        **_constants_context(model, names),
        "ops": [ops[i] for i in sorted(ops)],
        "steps": _steps_context(model, steps, ops, bits, names.prefix),
        "signatures": _signatures(names.prefix, ws_io),
        **io_context(model, memory, names, ws_io),
        "workspace_size": memory.arena_size,
        "run_call": c_call("return ", f"{names.prefix}_run_with_workspace",
                           [*([] if ws_io else ["inputs", "outputs"]), "devices",
                            f"{names.prefix}_workspace"], 4),
        "trace_hook": c_declarator(f"void {names.macro}_TRACE_HOOK", [
            "int32_t index", "const char *name", "const void *data", "uint32_t size"]),
        "static_workspace_size": max(memory.arena_size, 1),  # C has no empty arrays
        "alignment": memory.alignment,
        "intermediates": [
            {"local": names.local(model.tensors[t].cname), "offset": off,
             "shape": list(model.tensors[t].shape), "ctype": CTYPE[model.tensors[t].dtype]}
            for t, off in memory.offsets.items() if t in touched],
        "scratch_params": list({p["name"]: p for p in scratch_params}.values()),
        "states": [{"name": st.name, "offset": st.offset, "bytes": st.size,
                    "fill": f"0x{st.fill:02x}U"} for st in memory.states],
        "state_offset": memory.state_region[0], "state_size": memory.state_region[1],
        "kernel_headers": list(dict.fromkeys(k.header for p in prepared if p.view_of is None
                                             for k in p.chain)),
    }
