"""plan.json: what generation decided, written once beside the executor for people and
tools (one line per top-level item, so that it diffs well). What a build finds goes into
its own file (:mod:`.buildfile`)."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..plan.memory import MemoryPlan

if TYPE_CHECKING:
    from ..plan.pipeline import Compiled


def plan_json(gen: Compiled) -> str:
    """The metadata written beside the sources: what was decided, for people and tools."""
    m = gen.model
    mem = gen.memory
    notes = {op: f"pad folded from {pad}" for op, pad in gen.folds}
    for op, add in gen.fusions:  # the fused operator keeps the conv's name
        notes[op] = "; ".join([*filter(None, [notes.get(op)]), f"fused with {add}"])
    aliases = _aliases(gen)
    doc = {
        "generator": f"tvmdev {__version__}",
        "model": m.name,
        "schedule": gen.schedule_kind,
        "devices": [{"name": d.name, "kind": d.kind} for d in m.devices],
        "steps": [{"action": s.action, "device": s.device,
                   "operator": m.operators[s.op].name if s.op is not None else None,
                   **({"tensor": s.tensor} if s.tensor is not None else {})}
                  for s in gen.steps],
        "operators": [{"name": op.name, **({"c_name": op.cname} if op.cname != op.name else {}),
                       "op": op.op, "device": op.device,
                       # an int8 or int16 operator (its kernels and params are those)
                       **({"dtype": m.op_dtype(op)} if m.op_dtype(op) != "float32" else {}),
                       "kernels": [k.name for k in gen.chains[op.index]],
                       **_placement_json(gen, op.index),
                       **({"note": notes[op.name]} if op.name in notes else {}),
                       **({"alias": aliases[op.index]} if op.index in aliases else {}),
                       "inputs": list(op.inputs), "outputs": list(op.outputs),
                       "scratch": _scratch_json(mem, op.index)}
                      for op in m.operators],
        "tensors": _tensors_json(gen),
        "arena": {"size": mem.arena_size, "lower_bound": mem.lower_bound,
                  "alignment": mem.alignment,
                  "ratio": round(mem.ratio, 4),
                  "in_place": [list(p) for p in mem.inplace],
                  "size_without_scratch": mem.tensor_arena_size,
                  # the model's state: its own region, kept across runs
                  **({"state": {"offset": mem.state_region[0], "size": mem.state_region[1]}}
                     if mem.states else {})},
        # the stages run band by band of their output's rows (patch-based inference)
        **({"patches": [asdict(p) for p in gen.patches]} if gen.patches else {}),
        **(_pools_json(gen) if gen.device_memory is not None else {}),
        **_regions_json(gen),
        "tuning": asdict(gen.tuning),
        "kernels": [{"name": k.name, "op": k.op, "library": k.library,
                     "header": k.header} for k in gen.kernels],
        # the board libraries' trees: the pin and the sources a build compiles (relative
        # to the tree, which is never copied)
        "trees": [{"library": t.library, "tag": t.tag,
                   "sources": [str(s.relative_to(t.root)) for s in t.sources]}
                  for t in gen.trees],
    }
    return json_lines(doc)


def _tensors_json(gen: Compiled) -> dict[str, Any]:
    """Each tensor: shape, dtype, role, bytes, and where the plan put it."""
    m, mem, unread = gen.model, gen.memory, gen.model.unread_constants
    laid = m.replaced_constants
    return {name: {
        "shape": list(t.shape), "dtype": t.dtype, "role": t.role, "bytes": t.nbytes,
        **({"offset": mem.offsets[name]} if name in mem.offsets else {}),
        **({"quant": {"scale": list(t.quant.scale), "zero_point": list(t.quant.zero_point),
                      "axis": t.quant.axis}} if t.quant else {}),
        # rows of another tensor, from this element on (patch-based inference)
        **({"slice_of": {"tensor": m.slices[name][0], "element": m.slices[name][1]}}
           if name in m.slices else {}),
        # the C spelling, where the name is not one (tvmdev.naming)
        **({"c_name": t.cname} if t.cname != name else {}),
        # no operator reads it: not emitted
        **({"unread": True} if name in unread and name not in laid else {}),
        # its kernels read a layout of it (a params array) instead: not emitted
        **({"laid_out": True} if name in laid else {})}
        for name, t in m.tensors.items()}


def _aliases(gen: Compiled) -> dict[int, dict[str, str]]:
    """Each operator whose output the plan put over an input's bytes: that input, and how
    (a view calls nothing; in place, its kernels write over the input as they read it, or
    keep in their scratch what they still read of it: a depthwise convolution's rows)."""
    writer = {op.outputs[0]: op.index for op in gen.model.operators}
    views = {p.index for p in gen.ops if p.view_of is not None}
    keeps = {p.index for p in gen.ops if p.chain and all(k.inplace_keep for k in p.chain)}
    return {writer[out]: {"input": src,
                          "kind": "view, no call" if writer[out] in views else
                          "in place, keeping what it reads" if writer[out] in keeps else
                          "in place"}
            for out, src in gen.memory.inplace}


def _regions_json(gen: Compiled) -> dict[str, Any]:
    """Each pool's region of the board's memory map (tvmdev.plan.memory_map), if any."""
    if gen.regions is None:
        return {}
    return {"regions": [{"pool": p.pool.name, "bytes": p.pool.size, "region": p.region.name,
                         "origin": p.region.origin, "length": p.region.length,
                         **({"asked": True} if p.asked else {})}
                        for p in gen.regions.placed]}


def _pools_json(gen: Compiled) -> dict[str, Any]:
    """The devices with memory of their own: each pool, and the bytes a run copies."""
    plan = gen.device_memory
    assert plan is not None
    m = gen.model
    return {"pools": [{"device": p.device, "size": p.size, "capacity": p.capacity,
                       "alignment": p.alignment, "lower_bound": p.lower_bound,
                       "ratio": round(p.ratio, 4),
                       "constants": {"address": p.constant_region[0],
                                     "size": p.constant_region[1],
                                     "tensors": list(p.constants),
                                     **({"layouts": {c: plan.laid_out[c].layout.describe()
                                                     for c in p.constants
                                                     if c in plan.laid_out}}
                                        if plan.laid_out else {})},
                       "addresses": dict(sorted(p.addresses.items(), key=lambda a: a[1])),
                       "scratch": {m.operators[i].name: {"address": a, "bytes": n}
                                   for i, (a, n) in p.scratch.items()}}
                      for p in plan.pools],
            "copies": {"to_devices": plan.bytes_copied(m, "copy_to"),
                       "from_devices": plan.bytes_copied(m, "copy_from"),
                       "constants_per_load": plan.bytes_loaded(m)}}


def _placement_json(gen: Compiled, index: int) -> dict[str, str]:
    """An operator's library, and why a board library declined it."""
    p = gen.placements.get(index)
    if p is None:
        return {}
    return {"library": p.library, **({"declined": p.declined} if p.declined else {})}


def _scratch_json(mem: MemoryPlan, index: int) -> dict[str, int] | None:
    if index not in mem.scratch:
        return None
    offset, nbytes = mem.scratch[index]
    return {"bytes": nbytes, "offset": offset}


def json_lines(doc: dict[str, Any]) -> str:
    """JSON with one line per top-level key and per item of a top-level list or mapping:
    readable, diff-friendly, and written by json's fast C encoder."""
    out = ["{"]
    keys = list(doc)
    for i, key in enumerate(keys):
        value = doc[key]
        comma = "," if i < len(keys) - 1 else ""
        if isinstance(value, list) and value:
            out.append(f"  {json.dumps(key)}: [")
            out += [f"    {json.dumps(v)}," for v in value[:-1]]
            out.append(f"    {json.dumps(value[-1])}")
            out.append(f"  ]{comma}")
        elif isinstance(value, dict) and value:
            out.append(f"  {json.dumps(key)}: {{")
            items = list(value.items())
            out += [f"    {json.dumps(k)}: {json.dumps(v)}," for k, v in items[:-1]]
            out.append(f"    {json.dumps(items[-1][0])}: {json.dumps(items[-1][1])}")
            out.append(f"  }}{comma}")
        else:
            out.append(f"  {json.dumps(key)}: {json.dumps(value)}{comma}")
    out.append("}")
    return "\n".join(out)

