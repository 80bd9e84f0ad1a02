"""Devices with memory of their own: which operators run from it, the run function's steps
with the copies, waits, opens and closes they need, and one pool per device instance
(docs/device-memory.md).

    dev = plan_device_memory(model, steps, mem_ops, memories, scratch)

``mem_ops`` are the operators placed on an instance of a kind with memory whose first
kernel is the kind's own; every other operator, including one placed on such an instance
that its kind has no kernel for, runs from CPU memory as before. The steps are the
activation schedule's, with each such operator's Open, Close, copies and Waits inserted as
late as the schedule allows: a device's results are copied back only when something else
reads them, so CPU operators that do not read them run while its job runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import TvmdevError
from ..model.device import DeviceMemory
from ..model.graph import Model
from ..model.ops import OPS
from .memory import ALIGN, Buffer, _greedy, lower_bound
from .schedule import Step


@dataclass(frozen=True)
class Pool:
    """The memory of one device instance: where each tensor lives in it, its constants
    (loaded once, in a region at the end) and each operator's scratch."""

    device: str
    capacity: int  # what the kind declares
    alignment: int
    size: int  # the bytes the plan uses: the high-water mark
    lower_bound: int  # the most bytes live at any one step, constants included
    addresses: dict[str, int]  # tensor -> address
    constants: tuple[str, ...]  # loaded once, in this order
    constant_region: tuple[int, int]  # (address, bytes)
    scratch: dict[int, tuple[int, int]] = field(default_factory=dict)  # op -> addr, bytes
    buffers: tuple[Buffer, ...] = ()  # the run's buffers, over step indices

    @property
    def ratio(self) -> float:
        """Size over its lower bound (1.0 is optimal)."""
        return self.size / self.lower_bound if self.lower_bound else 1.0


@dataclass(frozen=True)
class DeviceMemoryPlan:
    """The pools, the expanded steps and what the CPU workspace leaves out."""

    pools: tuple[Pool, ...]
    steps: tuple[Step, ...]
    mem_ops: dict[int, str]  # operator index -> device instance, run from its memory
    device_only: frozenset[str]  # intermediates that never exist in CPU memory

    def pool(self, device: str) -> Pool:
        """The pool of ``device``."""
        return next(p for p in self.pools if p.device == device)

    def bytes_copied(self, model: Model, action: str) -> int:
        """Bytes a run copies one way (``copy_to`` or ``copy_from``)."""
        return sum(model.tensors[s.tensor].nbytes for s in self.steps
                   if s.action == action and s.tensor is not None)

    def bytes_loaded(self, model: Model) -> int:
        """Bytes of constants a load sends, over every device."""
        return sum(model.tensors[c].nbytes for p in self.pools for c in p.constants)


def _aligned(n: int, align: int) -> int:
    return (n + align - 1) // align * align


class _Expander:
    """Walks the activation schedule and inserts the memory devices' steps."""

    def __init__(self, model: Model, mem_ops: Mapping[int, str]) -> None:
        self.model = model
        self.mem_ops = mem_ops
        self.out: list[Step] = []
        self.open: list[str] = []
        self.pending: set[str] = set()
        self.opened: set[str] = set()  # opened at least once in the run (loads there)
        self.on_device: dict[str, set[str]] = {}
        self.unflushed: dict[str, list[str]] = {}
        self.producer: dict[str, str] = {}  # tensor -> the device that wrote it
        # Tensors something besides the device that wrote them reads: copied back.
        writer = {t: mem_ops.get(op.index) for op in model.operators for t in op.outputs}
        self.cpu_readers: set[str] = set(model.outputs)
        self.pos = 0  # the operator being placed
        self.last_read = {(dev, t): op.index for op in model.operators
                          if (dev := mem_ops.get(op.index)) is not None
                          for t in op.inputs if t is not None}
        for op in model.operators:
            dev = mem_ops.get(op.index)
            self.cpu_readers |= {t for t in op.inputs if t is not None
                                 and writer.get(t) is not None and writer.get(t) != dev}

    def emit(self, action: str, device: str, tensor: str | None = None,
             op: int | None = None) -> None:
        if action in ("copy_to", "copy_from", "op", "close") and device in self.pending:
            self.out.append(Step("wait", device))
            self.pending.discard(device)
        self.out.append(Step(action, device, op, tensor))
        if action in ("copy_to", "copy_from", "op"):
            self.pending.add(device)
        if action == "close":
            self.open.remove(device)

    def flush(self, device: str) -> None:
        """Wait for ``device``, copy back what others (or its own later operators) read,
        wait, and close it."""
        if device not in self.open:
            return
        # Nothing but the constants survives a Close (another user of the device may
        # come between): what the device's later operators read goes back to the CPU too.
        later = [t for t in self.on_device.get(device, set())
                 if self.producer.get(t) == device and t not in self.unflushed.get(device, [])
                 and self.last_read.get((device, t), -1) >= self.pos]
        for t in [*self.unflushed.get(device, []), *sorted(later)]:
            self.emit("copy_from", device, t)
        self.unflushed[device] = []
        if device in self.pending:
            self.out.append(Step("wait", device))
            self.pending.discard(device)
        self.on_device[device] = set()
        self.emit("close", device)

    def ensure_cpu(self, tensor: str) -> None:
        """Make the CPU copy of ``tensor`` current (copy it back from its device)."""
        dev = self.producer.get(tensor)
        if dev is not None and tensor in self.unflushed.get(dev, []):
            self.flush(dev)

    def device_op(self, index: int, device: str) -> None:
        op = self.model.operators[index]
        todo = []
        for t in op.inputs:
            if t is None or t in self.on_device.setdefault(device, set()):
                continue
            if self.model.tensors[t].role != "constant":
                self.ensure_cpu(t)
                todo.append(t)
        if device not in self.open:
            self.out.append(Step("open", device))
            self.open.append(device)
            if device not in self.opened:
                self.opened.add(device)
                self.out.append(Step("load", device))
                self.pending.discard(device)
        for t in dict.fromkeys(todo):
            self.emit("copy_to", device, t)
            self.on_device[device].add(t)
        self.emit("op", device, op=index)
        for t in op.outputs:
            self.producer[t] = device
            self.on_device[device].add(t)
            if t in self.cpu_readers:
                self.unflushed.setdefault(device, []).append(t)

    def step(self, s: Step) -> None:
        self.pos = s.op if s.op is not None else self.pos
        if s.action == "activate":
            self.out.append(s)
        elif s.action == "deactivate":
            self.pos += 1  # after the operator before it
            self.flush(s.device or "")
            self.out.append(s)
        elif s.op is not None and s.op in self.mem_ops:
            self.device_op(s.op, self.mem_ops[s.op])
        else:
            op = self.model.operators[s.op or 0]
            for t in op.inputs:
                if t is not None:
                    self.ensure_cpu(t)
            self.out.append(s)

    def finish(self) -> tuple[Step, ...]:
        self.pos = len(self.model.operators)
        for dev in list(self.open):
            self.flush(dev)
        return tuple(self.out)


def expand_steps(model: Model, steps: tuple[Step, ...], mem_ops: Mapping[int, str]
                 ) -> tuple[Step, ...]:
    """The run function's steps with each memory device's Open, Close, load, copies and
    Waits (``mem_ops``: operator index -> the device instance it runs from)."""
    ex = _Expander(model, mem_ops)
    for s in steps:
        ex.step(s)
    return ex.finish()


def _requests(model: Model, device: str, steps: tuple[Step, ...], mem_ops: Mapping[int, str],
              scratch: Mapping[int, int], align: int
              ) -> tuple[dict[str, tuple[int, int, int]], list[str]]:
    """Each tensor's (bytes, first step, last step) in ``device``'s memory, scratch as
    ``#<op>``; and the constants its operators read, in first-read order."""
    spans: dict[str, list[int]] = {}
    constants: list[str] = []
    sizes: dict[str, int] = {}
    for i, s in enumerate(steps):
        if s.device != device:
            continue
        touched: list[str] = []
        if s.action in ("copy_to", "copy_from") and s.tensor is not None:
            touched = [s.tensor]
        elif s.action == "op" and s.op is not None and mem_ops.get(s.op) == device:
            op = model.operators[s.op]
            touched = [t for t in (*op.inputs, *op.outputs) if t is not None]
            if scratch.get(s.op, 0) > 0:
                key = f"#{s.op}"
                spans[key] = [i, i]
                sizes[key] = _aligned(scratch[s.op], align)
        for t in touched:
            if model.tensors[t].role == "constant":
                if t not in constants:
                    constants.append(t)
                continue
            span = spans.setdefault(t, [i, i])
            span[1] = i
            sizes[t] = _aligned(model.tensors[t].nbytes, align)
    return {k: (sizes[k], v[0], v[1]) for k, v in spans.items()}, constants


def plan_pool(model: Model, device: str, memory: DeviceMemory, steps: tuple[Step, ...],
              mem_ops: Mapping[int, str], scratch: Mapping[int, int]) -> Pool:
    """``device``'s pool: the run's tensors and scratch placed as the CPU workspace's are
    (largest first, lowest free address), then its constants after them. Refused in one
    line when it does not fit the memory the kind declares."""
    align = max(ALIGN, memory.alignment)
    reqs, constants = _requests(model, device, steps, mem_ops, scratch, align)
    roots = sorted(reqs)
    sizes = {r: reqs[r][0] for r in roots}
    start = {r: reqs[r][1] for r in roots}
    end = {r: reqs[r][2] for r in roots}
    candidates = [_greedy(roots, sizes, start, end, lambda r: (-sizes[r], start[r], r)),
                  _greedy(roots, sizes, start, end,
                          lambda r: (-sizes[r], start[r] - end[r], r))]
    offsets = min(candidates, key=lambda o: max((o[r] + sizes[r] for r in roots), default=0))
    buffers = tuple(Buffer((r,) if not r.startswith("#") else (), sizes[r], start[r], end[r],
                           offsets[r], int(r[1:]) if r.startswith("#") else None)
                    for r in roots)
    top = max((b.offset + b.size for b in buffers), default=0)
    addresses = {r: offsets[r] for r in roots if not r.startswith("#")}
    base = at = _aligned(top, align)
    for c in constants:
        addresses[c] = at
        at += _aligned(model.tensors[c].nbytes, align)
    size = at
    if size > memory.size:
        kind = model.device(device).kind
        raise TvmdevError(f"device {device} needs {size} bytes of memory ({top} for tensors "
                          f"and scratch, {at - base} for constants); its kind {kind} has "
                          f"{memory.size}", model.path,
                          hint="place fewer operators on it, or declare more memory "
                               "(tvmdev run --device-option memory=SIZE)")
    return Pool(device, memory.size, align, size, lower_bound(buffers) + (at - base),
                addresses, tuple(constants), (base, at - base),
                {int(r[1:]): (offsets[r], scratch[int(r[1:])]) for r in roots
                 if r.startswith("#")}, buffers)


def check_runnable(model: Model, mem_ops: Mapping[int, str]) -> None:
    """Refuse, in one line, an operator a device cannot run from its memory yet: one that
    updates state in place, takes a variable number of tensors, or reads 4-bit blocks."""
    for i, dev in mem_ops.items():
        op = model.operators[i]
        opdef = OPS[op.op]
        why = ("updates its state in place" if opdef.states else
               "takes a variable number of tensors" if opdef.variadic else
               "reads 4-bit weight blocks" if any(t in model.quantized for t in op.inputs)
               else None)
        if why is not None:
            raise TvmdevError(f"operator {op.name} ({op.op}) on device {dev} {why}: a device "
                              "with memory of its own cannot run it yet", op.where,
                              hint=f"place it on the CPU, or give {dev}'s kind no memory")


def plan_device_memory(model: Model, steps: tuple[Step, ...], mem_ops: Mapping[int, str],
                       memories: Mapping[str, DeviceMemory], scratch: Mapping[int, int]
                       ) -> DeviceMemoryPlan:
    """The expanded steps and a pool for each device instance that runs operators from
    its memory (``memories``: device instance -> its kind's memory)."""
    check_runnable(model, mem_ops)
    expanded = expand_steps(model, steps, mem_ops)
    used = [d.name for d in model.devices if d.name in set(mem_ops.values())]
    pools = tuple(plan_pool(model, d, memories[d], expanded, mem_ops, scratch) for d in used)
    cpu_read = {t for op in model.operators if op.index not in mem_ops
                for t in op.inputs if t is not None}
    cpu_read |= {s.tensor for s in expanded if s.action in ("copy_to", "copy_from")
                 and s.tensor is not None}
    device_only = frozenset(t for op in model.operators if op.index in mem_ops
                            for t in op.outputs
                            if t not in cpu_read and model.tensors[t].role == "intermediate")
    return DeviceMemoryPlan(pools, expanded, dict(mem_ops), device_only)
