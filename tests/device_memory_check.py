"""Checks of a device memory plan (tvmdev.plan.device_memory) that do not trust it: the run
function's steps are replayed against where each tensor's bytes are valid, and each pool's
buffers against one another."""

from __future__ import annotations

from collections import Counter

from tvmdev.model.graph import Model
from tvmdev.plan.device_memory import DeviceMemoryPlan


def _replay_op(m: Model, plan: DeviceMemoryPlan, index: int, st: dict[str, set[str]],
               active: set[str], open_: set[str], pending: set[str]) -> None:
    """One operator: on its device with memory, or on the CPU."""
    op = m.operators[index]
    dev = plan.mem_ops.get(index)
    ins = [t for t in op.inputs if t is not None]
    if dev is None:
        missing = [t for t in ins if t not in st["cpu"]]
        assert not missing, f"CPU operator {op.name} reads {missing} before they arrive"
        st["cpu"] |= set(op.outputs)
        return
    assert dev in open_ and dev in active and dev not in pending, (op.name, dev)
    missing = [t for t in ins if t not in st[dev]]
    assert not missing, f"{op.name} on {dev} reads {missing}: not in its memory"
    st[dev] |= set(op.outputs)
    pending.add(dev)


def replay(m: Model, plan: DeviceMemoryPlan) -> dict[str, int]:
    """Replay the steps: every operator reads bytes that are where it runs (on a device,
    only what was copied or computed there since its Open), every call on
    a device follows the Wait that ends the one before (at most one outstanding), Opens and
    Closes and Activates and Deactivates balance, each tensor crosses to a device at most
    once and back at most once between an Open and its Close. Returns counts of what happened."""
    st: dict[str, set[str]] = {"cpu": set(m.inputs) | set(m.constants)}
    for p in plan.pools:
        st[p.device] = set(p.constants)  # loaded at the first Open
    active: set[str] = set()
    open_: set[str] = set()
    pending: set[str] = set()
    arriving: dict[str, list[str]] = {}
    copies: Counter[tuple[str, str | None, str | None]] = Counter()
    counts: Counter[str] = Counter()
    sessions: list[dict[tuple[str, str | None, str | None], int]] = []  # closed ones
    for i, s in enumerate(plan.steps):
        d = s.device or ""
        counts[s.action] += 1
        if s.action == "activate":
            active.add(d)
        elif s.action == "deactivate":
            assert d not in open_, f"step {i}: {d} deactivated while open"
            active.discard(d)
        elif s.action == "open":
            assert d in active and d not in open_, (i, s)
            open_.add(d)
        elif s.action == "close":
            assert d in open_ and d not in pending, f"step {i}: close {d} before its Wait"
            open_.discard(d)
            # Another user may come between a Close and the next Open: only the
            # constants stay valid in the device's memory.
            st[d] = set(plan.pool(d).constants)
            sessions.append({k: n for k, n in copies.items() if k[1] == d})
            for k in [k for k in copies if k[1] == d]:
                del copies[k]
        elif s.action == "load":
            assert d in open_
        elif s.action == "wait":
            assert d in open_, (i, s)
            pending.discard(d)
            st["cpu"] |= set(arriving.pop(d, []))
        elif s.action in ("copy_to", "copy_from"):
            assert d in open_ and d not in pending, f"step {i}: {s} before the last Wait"
            t = s.tensor or ""
            copies[(s.action, d, t)] += 1
            if s.action == "copy_to":
                assert t in st["cpu"], f"step {i}: {t} copied to {d} before it is ready"
                st[d].add(t)
            else:
                assert t in st[d], f"step {i}: {t} copied back from {d}, which lacks it"
                arriving.setdefault(d, []).append(t)
            pending.add(d)
        elif s.action == "op" and s.op is not None:
            before = set(pending)
            _replay_op(m, plan, s.op, st, active, open_, pending)
            if s.op not in plan.mem_ops and before:
                counts["cpu_ops_while_pending"] += 1
    assert not open_ and not pending and not active, (open_, pending, active)
    # Within one Open..Close of a device, each tensor crosses each way at most once.
    for session in sessions:
        assert all(n == 1 for n in session.values()), session
    assert set(m.outputs) <= st["cpu"], "an output never reached the CPU"
    return dict(counts)


def check_pools(m: Model, plan: DeviceMemoryPlan) -> None:
    """Every pool: buffers live at one step never share bytes, every address is aligned and
    inside the pool, the constants after every run buffer, the size within the capacity
    and at least the lower bound."""
    for p in plan.pools:
        for i, a in enumerate(p.buffers):
            assert a.offset % p.alignment == 0
            for b in p.buffers[i + 1:]:
                if a.start <= b.end and b.start <= a.end:
                    assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset, (a, b)
        top = max((b.offset + b.size for b in p.buffers), default=0)
        base, size = p.constant_region
        assert top <= base and base + size == p.size <= p.capacity
        for c in p.constants:
            assert base <= p.addresses[c] and p.addresses[c] + m.tensors[c].nbytes <= p.size
        for t, a in p.addresses.items():
            assert a % p.alignment == 0 and a + m.tensors[t].nbytes <= p.size
        assert p.lower_bound <= p.size
