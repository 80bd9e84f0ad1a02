"""The activation schedules and the static memory plan."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import REPO

from tvmdev.load.model import load_model
from tvmdev.model.graph import Model
from tvmdev.plan.memory import plan_memory
from tvmdev.plan.schedule import schedule

EXAMPLES = sorted((REPO / "examples").glob("*/*.yaml"))


def random_model(tmp: Path, n_ops: int, seed: int) -> Model:
    """A random chain-with-skips graph of elementwise and gemm operators."""
    rng = random.Random(seed)
    widths = [rng.choice([8, 16, 32, 64, 128]) for _ in range(n_ops + 1)]
    lines = ["name: rnd", "inputs:", f"  t0: {{shape: [1, {widths[0]}], dtype: float32}}",
             "outputs:", f"  t{n_ops}: {{shape: [1, {widths[n_ops]}], dtype: float32}}",
             "constants:"]
    ops = []
    produced = [0]
    for i in range(1, n_ops + 1):
        src = produced[-1]
        kind = rng.random()
        if kind < 0.35 or widths[i] != widths[src]:
            lines.append(f"  w{i}: {{shape: [{widths[src]}, {widths[i]}], dtype: float32, "
                         f"random: {{seed: {i}, low: -1, high: 1}}}}")
            ops.append(f"  - {{name: o{i}, op: gemm, inputs: [t{src}, w{i}], outputs: [t{i}]}}")
        elif kind < 0.7:
            ops.append(f"  - {{name: o{i}, op: relu, inputs: [t{src}], outputs: [t{i}]}}")
        else:
            same = [p for p in produced[-12:] if widths[p] == widths[i]]
            other = rng.choice(same)
            ops.append(f"  - {{name: o{i}, op: add, inputs: [t{src}, t{other}], "
                       f"outputs: [t{i}]}}")
        produced.append(i)
    if not any(line.startswith("  w") for line in lines):
        lines[-1] = "constants: {}"
    path = tmp / f"rnd{seed}.yaml"
    path.write_text("\n".join(lines + ["operators:"] + ops) + "\n")
    return load_model(path)


def check_plan(m: Model) -> None:
    plan = plan_memory(m)
    # Buffers alive at the same operator never share bytes.
    bufs = plan.buffers
    for i, a in enumerate(bufs):
        assert a.offset % plan.alignment == 0
        for b in bufs[i + 1:]:
            if a.start <= b.end and b.start <= a.end:
                assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset, (a, b)
    assert plan.lower_bound <= plan.arena_size
    # Every intermediate has an offset inside the arena.
    for name, t in m.tensors.items():
        if t.role == "intermediate":
            assert plan.offsets[name] + t.nbytes <= plan.arena_size
    # In place only where the input dies at that operator.
    for out, src in plan.inplace:
        users = [op.index for op in m.operators if src in op.inputs]
        writer = next(op.index for op in m.operators if out in op.outputs)
        assert max(users) == writer


@pytest.mark.parametrize("seed", range(12))
def test_random_graphs_plan_safely(seed: int, tmp_path: Path) -> None:
    check_plan(random_model(tmp_path, 20 + seed * 15, seed))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.parent.name for p in EXAMPLES])
def test_examples_plan_safely(path: Path) -> None:
    m = load_model(path)
    check_plan(m)


def test_chain_shares_memory_and_goes_in_place(tmp_path: Path) -> None:
    m = random_model(tmp_path, 40, 3)
    plan = plan_memory(m)
    total = sum(t.nbytes for t in m.tensors.values() if t.role == "intermediate")
    assert plan.arena_size < total / 4
    assert plan.inplace, "relu/add chains should run in place"
    assert plan_memory(m, inplace=False).arena_size >= plan.arena_size


def test_schedules(tmp_path: Path) -> None:
    m = load_model(REPO / "examples/cnn/cnn.yaml")
    eager = [(s.action, s.device, s.op) for s in schedule(m, "eager")]
    assert eager[:2] == [("activate", "npu0", None), ("activate", "npu1", None)]
    assert eager[-2:] == [("deactivate", "npu1", None), ("deactivate", "npu0", None)]
    lazy = [(s.action, s.device, s.op) for s in schedule(m, "lazy")]
    # npu1 serves only conv2 (operator 3): activated right before it, deactivated right after.
    i = lazy.index(("op", "npu1", 3))
    assert lazy[i - 1] == ("activate", "npu1", None)
    assert lazy[i + 1] == ("deactivate", "npu1", None)
    # npu0 serves conv1 (0) and fc (8): active across both.
    assert lazy[0] == ("activate", "npu0", None)
    assert lazy.index(("deactivate", "npu0", None)) == lazy.index(("op", "npu0", 8)) + 1
