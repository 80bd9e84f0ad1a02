"""The activation schedules and the static memory plan."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import REPO

from tvmdev.load.model import load_model
from tvmdev.model.graph import Model
from tvmdev.model.scratch import Tuning
from tvmdev.plan.kernels import build_registry, operator_scratch, resolve
from tvmdev.plan.memory import ALIGN, MemoryPlan, plan_memory
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


HOST = Tuning()
MCU = Tuning(4, 4, 64, 4096)  # boards/mps2_an385.yaml


def scratch_of(m: Model, tuning: Tuning) -> dict[int, int]:
    """Each operator's scratch with the portable kernels (the chains of a plain run)."""
    return operator_scratch(m, resolve(m, build_registry([], [])), tuning)


def check_disjoint(plan: MemoryPlan) -> None:
    """Buffers alive at the same operator share no bytes, but where one continues the
    other in place there: same offset, fewer bytes, written over the other as it is read
    (a declared in-place pair)."""
    pairs = set(plan.inplace)
    bufs = plan.buffers
    for i, a in enumerate(bufs):
        for b in bufs[i + 1:]:
            if not (a.start <= b.end and b.start <= a.end):
                continue
            first, then = (a, b) if a.start <= b.start else (b, a)
            if (then.continues and then.start == first.end and then.offset == first.offset
                    and then.size <= first.size and (then.tensors[0], first.tensors[-1])
                    in pairs):
                continue
            assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset, (a, b)


def check_plan(m: Model, scratch: dict[int, int] | None = None) -> MemoryPlan:
    plan = plan_memory(m, scratch=scratch)
    # Each buffer lives from its first writer to its last reader, whatever they write.
    for b in plan.buffers:
        for t in b.tensors:
            uses = [op.index for op in m.operators if t in op.inputs or t in op.outputs]
            assert b.start <= min(uses) and max(uses) <= b.end, (t, b)
    # Buffers alive at the same operator never share bytes (scratch included).
    bufs = plan.buffers
    assert all(b.offset % plan.alignment == 0 for b in bufs)
    check_disjoint(plan)
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
    # Each operator's scratch: its own buffer, live during that operator only, in the arena.
    assert plan.scratch.keys() == {i for i, n in (scratch or {}).items() if n}
    for index, (offset, nbytes) in plan.scratch.items():
        assert nbytes == (scratch or {})[index]
        (buf,) = [b for b in bufs if b.scratch_of == index]
        assert (buf.start, buf.end, buf.offset, buf.tensors) == (index, index, offset, ())
        assert buf.size >= nbytes and offset + buf.size <= plan.arena_size
    return plan


@pytest.mark.parametrize("seed", range(12))
def test_random_graphs_plan_safely(seed: int, tmp_path: Path) -> None:
    m = random_model(tmp_path, 20 + seed * 15, seed)
    check_plan(m)
    check_plan(m, scratch_of(m, HOST if seed % 2 else MCU))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.parent.name for p in EXAMPLES])
def test_examples_plan_safely(path: Path) -> None:
    m = load_model(path)
    check_plan(m)
    check_plan(m, scratch_of(m, HOST))
    check_plan(m, scratch_of(m, MCU))


# Each example's arena without and with the portable kernels' scratch, and the scratch of
# each gemm: (name, M, N, K) -> bytes. A gemm with M <= MR gets the tile, one sliver of A
# and one strip of B (4 * (MR * NR + MR * KC + NR * KC) with KC = min(64, K)).
ARENAS = {
    ("mlp", "host"): (176, 5824, {"fc1": 5696, "fc2": 3008}),
    ("mlp", "mcu"): (176, 2240, {"fc1": 2112, "fc2": 1088}),
    ("cnn", "host"): (10240, 10240, {"fc": 5696}),
    ("cnn", "mcu"): (10240, 10240, {"fc": 2112}),
    ("decoder", "host"): (2048, 7232, {"down": 5696, "proj": 5696}),
    ("decoder", "mcu"): (2048, 3648, {"down": 2112, "proj": 2112}),
}


@pytest.mark.parametrize("name,tuning", list(ARENAS), ids=[f"{n}-{t}" for n, t in ARENAS])
def test_scratch_grows_the_arena_only_where_it_fits_no_gap(name: str, tuning: str) -> None:
    """Scratch moves no tensor; each operator's goes to the lowest offset free during that
    operator, and the arena grows by exactly the part of it above the tensors' arena."""
    m = load_model(REPO / f"examples/{name}/{name}.yaml")
    scratch = scratch_of(m, HOST if tuning == "host" else MCU)
    before = plan_memory(m)
    after = check_plan(m, scratch)
    want_before, want_after, want_scratch = ARENAS[(name, tuning)]
    assert (before.arena_size, after.arena_size) == (want_before, want_after)
    assert {m.operators[i].name: n for i, n in scratch.items()} == want_scratch
    assert after.offsets == before.offsets
    assert after.tensor_arena_size == before.arena_size
    tops = [off + -(-n // ALIGN) * ALIGN for off, n in after.scratch.values()]
    assert after.arena_size == max([before.arena_size, *tops])
    for index, (offset, nbytes) in after.scratch.items():
        live = [(b.offset, b.offset + b.size) for b in before.buffers
                if b.start <= index <= b.end]
        size = -(-nbytes // ALIGN) * ALIGN
        assert all(offset + size <= lo or hi <= offset for lo, hi in live)
        assert all(any(o + size > lo and hi > o for lo, hi in live)
                   for o in range(0, offset, ALIGN)), "a lower offset was free"
    # The lower bound counts the scratch with the tensors live beside it.
    assert after.lower_bound >= max(
        n + sum(b.size for b in before.buffers if b.start <= i <= b.end)
        for i, (_, n) in after.scratch.items())


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


def check_io_plan(m: Model) -> MemoryPlan:
    """With the model's inputs and outputs in the workspace (--io workspace): each has its
    own buffer from its first use (an input: the start) to its last reader (an output:
    the end of the run), they share no bytes with any buffer alive with them, and the
    lower bound counts them."""
    plan = plan_memory(m, io=True)
    last = len(m.operators) - 1
    by_tensor = {t: b for b in plan.buffers for t in b.tensors}
    aliased = {t for pair in plan.inplace for t in pair}
    for name in (*m.inputs, *m.outputs):
        b = by_tensor[name]
        assert plan.offsets[name] == b.offset
        assert b.offset + m.tensors[name].nbytes <= plan.arena_size
        readers = [op.index for op in m.operators if name in op.inputs]
        if name in m.outputs:
            writer = next(op.index for op in m.operators if name in op.outputs)
            assert b.start <= writer and b.end == last
        else:
            assert b.start == 0 and b.end >= max(readers)
        if name not in aliased:  # its own buffer, for exactly its lifetime
            assert b.tensors == (name,)
            assert (b.start, b.end) == ((writer, last) if name in m.outputs
                                        else (0, max(readers)))
    bufs = plan.buffers
    check_disjoint(plan)
    assert plan.lower_bound <= plan.arena_size
    # The bound is the most bytes live at one operator, the I/O's included (a buffer that
    # continues another in fewer bytes counts from the operator after the one that writes
    # it); the I/O adds at most its own bytes to it.
    live = [sum(b.size for b in bufs if b.start + b.continues <= k <= b.end)
            for k in range(last + 1)]
    assert plan.lower_bound == max(live)
    caller = plan_memory(m)
    io_bytes = sum(by_tensor[n].size for n in (*m.inputs, *m.outputs))
    assert caller.lower_bound <= plan.lower_bound <= caller.lower_bound + io_bytes
    return plan


@pytest.mark.parametrize("seed", range(0, 12, 4))
def test_random_graphs_plan_io_safely(seed: int, tmp_path: Path) -> None:
    check_io_plan(random_model(tmp_path, 20 + seed * 15, seed))


QUANTIZED_INPUT = """\
name: qin
inputs:
  x: {shape: [1, 1024], dtype: float32}
outputs:
  y: {shape: [1, 1024], dtype: int8, quant: {scale: [0.02], zero_point: [0]}}
tensors:
  xq: {dtype: int8, quant: {scale: [0.02], zero_point: [0]}}
  h: {dtype: int8, quant: {scale: [0.0078125], zero_point: [0]}}
operators:
  - {name: q, op: quantize, inputs: [x], outputs: [xq]}
  - {name: r, op: tanh, inputs: [xq], outputs: [h]}
  - {name: a, op: add, inputs: [h, xq], outputs: [y]}
"""


def test_a_float_input_is_free_once_quantize_has_read_it(tmp_path: Path) -> None:
    """The 4,096-byte float input dies at QUANTIZE: without in place, the int8 tensors
    after it reuse its bytes, so the workspace holds it only as long as it is needed
    (4,096 + 1,024 bytes at QUANTIZE, then three int8 tensors of 1,024). In place,
    QUANTIZE writes its 1,024 bytes over the input's first as it reads them (its kernel
    allows it): 4,096 bytes at QUANTIZE, the rest free after it."""
    (tmp_path / "m.yaml").write_text(QUANTIZED_INPUT)
    m = load_model(tmp_path / "m.yaml")
    with pytest.MonkeyPatch.context() as mp:  # the same checks without in place
        mp.setattr("tvmdev.plan.memory.portable_inplace", lambda model: {})
        plan = check_io_plan(m)
    x = next(b for b in plan.buffers if b.tensors == ("x",))
    assert (x.start, x.end) == (0, 0)
    assert plan.lower_bound == 4096 + 1024
    later = [b for b in plan.buffers if b.start >= 1]
    assert any(b.offset < x.offset + x.size and x.offset < b.offset + b.size for b in later)
    assert plan.arena_size == plan.lower_bound
    plan = check_io_plan(m)
    assert ("xq", "x") in plan.inplace and plan.offsets["xq"] == plan.offsets["x"]
    xq = next(b for b in plan.buffers if b.tensors[0] == "xq")
    assert xq.continues and xq.size == 1024
    assert plan.arena_size == plan.lower_bound == 4096
