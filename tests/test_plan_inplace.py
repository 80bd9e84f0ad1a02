"""In-place kernels and views, checked by replaying each plan on the bytes of its arena.

The replay is independent of the planner: it walks the operators in order over a map of
which tensor each byte of the arena holds, and fails when an operator reads a tensor
whose bytes another has overwritten, or writes over a tensor (or scratch) that is still to
be read. The one exception is the alias the plan declares at that operator, and only
where a kernel of the operator's chain says so in its library (``inplace:``) for every
kernel of the chain, or the operator is a view, and the output starts at the input's
address with as many elements, none larger. Random graphs mix float and int8 operators,
QUANTIZE, requantization, DEQUANTIZE and reshapes; they are planned with the portable
kernels and, with the tree present, with CMSIS-NN's.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest
from conftest import Result, need_tool

from tvmdev.load.board import board_by_name
from tvmdev.load.library import Kernel
from tvmdev.load.model import load_model
from tvmdev.model.graph import Model
from tvmdev.model.ops import OPS
from tvmdev.model.shapes import numel
from tvmdev.plan.memory import MemoryPlan, plan_memory
from tvmdev.plan.pipeline import Options, compile_model

Q8 = "quant: {{scale: [{s}], zero_point: [{z}]}}"
TANH_OUT = Q8.format(s=0.0078125, z=0)


class Replay(AssertionError):
    """What the replay found wrong with a plan."""


def replay(m: Model, plan: MemoryPlan, chains: Mapping[int, Sequence[Kernel]]) -> None:
    """Run ``m``'s operators in order on a map of the arena's bytes (which tensor each
    holds) and raise :class:`Replay` at the first byte overwritten while still needed."""
    arena = _Arena(m, plan)
    aliases = dict(plan.inplace)
    for op in m.operators:
        reads = [t for t in op.inputs if t is not None and t in plan.offsets]
        for t in reads:
            if not arena.holds(t):
                raise Replay(f"operator {op.index} reads {t}, overwritten")
        out = op.outputs[0]
        alias = aliases.get(out)
        if alias is not None:
            _check_alias(m, plan, chains, op.index, alias, out)
            if _keeps(m, chains, op.index):
                _check_ring(m, plan, op.index, alias)
        if op.index in plan.scratch:
            offset, nbytes = plan.scratch[op.index]
            where = slice(offset, offset + nbytes)
            arena.write(where, -2, op.index, reads, None)
            if out in plan.offsets and _meet(where, arena.span(out)):
                raise Replay(f"operator {op.index}: scratch meets its output")
        if out in plan.offsets:
            arena.write(arena.span(out), arena.ident[out], op.index, reads, alias)


class _Arena:
    """Which tensor each byte of the arena holds (-1: none yet, -2: scratch)."""

    def __init__(self, m: Model, plan: MemoryPlan) -> None:
        self.m, self.plan = m, plan
        self.names = list(m.tensors)
        self.ident = {n: i for i, n in enumerate(self.names)}
        self.held = np.full(plan.arena_size, -1, np.int64)
        # the last reader of each tensor; an output in the arena: the caller, after all
        self.last_read = {n: len(m.operators) for n in m.outputs}
        for op in m.operators:
            for t in op.inputs:
                if t is not None and t not in m.outputs:
                    self.last_read[t] = op.index
        for n in m.inputs:  # the caller's input in the arena (--io workspace)
            if n in plan.offsets:
                self.held[self.span(n)] = self.ident[n]

    def span(self, t: str) -> slice:
        return slice(self.plan.offsets[t], self.plan.offsets[t] + self.m.tensors[t].nbytes)

    def holds(self, t: str) -> bool:
        return bool((self.held[self.span(t)] == self.ident[t]).all())

    def write(self, where: slice, what: int, index: int, reads: list[str], alias: str | None
              ) -> None:
        """Operator ``index`` writes ``where``: nothing still to be read is there but the
        declared ``alias``."""
        for u in {int(v) for v in np.unique(self.held[where])} - {-1, -2}:
            n = self.names[u]
            if (self.last_read.get(n, -1) > index or n in reads) and n != alias:
                raise Replay(f"operator {index} writes over {n}, still to be read")
        self.held[where] = what


def _meet(a: slice, b: slice) -> bool:
    return bool(a.start < b.stop and b.start < a.stop)


def _check_alias(m: Model, plan: MemoryPlan, chains: Mapping[int, Sequence[Kernel]],
                 index: int, src: str, out: str) -> None:
    """The declared alias: allowed by every kernel of the chain (or a view), at the
    input's address, with as many elements as the input and none larger."""
    op = m.operators[index]
    position = op.inputs.index(src)
    if not OPS[op.op].view and not all(position in k.inplace for k in chains[index]):
        raise Replay(f"operator {index} writes over {src}: not every kernel allows it")
    s, o = m.tensors[src], m.tensors[out]
    if plan.offsets[src] != plan.offsets[out]:
        raise Replay(f"operator {index}: {out} is not at {src}'s address")
    if o.nbytes > s.nbytes or (numel(s.shape) != numel(o.shape)
                               and not _keeps(m, chains, index)):
        raise Replay(f"operator {index}: {out}'s elements outgrow {src}'s")


def _keeps(m: Model, chains: Mapping[int, Sequence[Kernel]], index: int) -> bool:
    """Whether every kernel of the operator's chain keeps what it still reads of the
    input it writes over (a depthwise convolution's ring of rows)."""
    return not OPS[m.operators[index].op].view and all(k.inplace_keep for k in chains[index])


def _check_ring(m: Model, plan: MemoryPlan, index: int, src: str) -> None:
    """A depthwise convolution writing its output rows, in order, over its input's
    bytes: every input row it has written over that it still reads (for that output row
    or a later one) must be held in its scratch, at most scratch bytes / row bytes rows at
    once. The rows each output row reads come from the filter's taps, row by row."""
    _, p = m.operator_params(m.operators[index])
    elem = m.tensors[src].nbytes // numel(m.tensors[src].shape)
    row_in, row_out = p["W"] * p["C"] * elem, p["OW"] * p["C"] * p["mult"] * elem
    held = plan.scratch.get(index, (0, 0))[1] // row_in
    n_in = p["N"] * p["H"]
    reads = [{n * p["H"] + y for k in range(p["KH"])
              for y in [oy * p["stride_h"] - p["pad_top"] + k * p["dil_h"]] if 0 <= y < p["H"]}
             for n in range(p["N"]) for oy in range(p["OH"])]
    for g in range(len(reads)):
        covered = min(((g + 1) * row_out - 1) // row_in, n_in - 1)
        over = {y for later in reads[g:] for y in later if y <= covered}
        if len(over) > held:
            raise Replay(f"operator {index}: its ring of {held} rows is short of the "
                         f"{len(over)} rows of {src} it still reads after writing over them")


def random_mixed_model(tmp: Path, n_ops: int, seed: int) -> Model:
    """A random chain with skips of float and int8 tensors of shape [1, w]: gemm, relu,
    add, reshape, QUANTIZE (float to int8, and int8 to int8 at another scale), int8 tanh
    and add, DEQUANTIZE."""
    rng = random.Random(seed)
    tensors: list[str] = []
    quants: dict[str, str] = {}
    consts: list[str] = []
    ops: list[str] = []
    made: list[tuple[str, str, int]] = [("t0", "f", 32)]  # name, kind, width

    def new(kind: str, width: int, quant: str = "") -> str:
        name = f"t{len(made)}"
        if kind == "q":
            q = quant or Q8.format(s=rng.choice([0.02, 0.05, 0.1]), z=rng.randint(-8, 8))
            quants[name] = q
            tensors.append(f"  {name}: {{dtype: int8, {q}}}")
        made.append((name, kind, width))
        return name

    for i in range(1, n_ops + 1):
        src, kind, w = made[-1]
        same = [t for t, k, tw in made[-10:-1] if k == kind and tw == w]
        roll = rng.random()
        if kind == "f" and roll < 0.25:
            w2 = rng.choice([16, 32, 64])
            consts.append(f"  w{i}: {{shape: [{w}, {w2}], dtype: float32, "
                          f"random: {{seed: {i}, low: -0.3, high: 0.3}}}}")
            ops.append(f"{{name: o{i}, op: gemm, inputs: [{src}, w{i}], "
                       f"outputs: [{new('f', w2)}]}}")
        elif roll < 0.4 and same:
            ops.append(f"{{name: o{i}, op: add, inputs: [{src}, {rng.choice(same)}], "
                       f"outputs: [{new(kind, w)}]}}")
        elif roll < 0.5:
            out = new(kind, w, quants.get(src, ""))  # a reshape keeps the quantization
            ops.append(f"{{name: o{i}, op: reshape, inputs: [{src}], outputs: [{out}], "
                       f"attrs: {{shape: [1, {w}]}}}}")
        elif kind == "f" and roll < 0.7:
            ops.append(f"{{name: o{i}, op: relu, inputs: [{src}], outputs: [{new('f', w)}]}}")
        elif kind == "q" and roll < 0.65:
            ops.append(f"{{name: o{i}, op: tanh, inputs: [{src}], "
                       f"outputs: [{new('q', w, TANH_OUT)}]}}")
        elif kind == "q" and roll < 0.8:
            ops.append(f"{{name: o{i}, op: dequantize, inputs: [{src}], "
                       f"outputs: [{new('f', w)}]}}")
        else:  # QUANTIZE: float to int8, or int8 to int8 at another scale
            ops.append(f"{{name: o{i}, op: quantize, inputs: [{src}], "
                       f"outputs: [{new('q', w)}]}}")
    last, kind, w = made[-1]
    if kind == "q":
        ops.append(f"{{name: o{n_ops + 1}, op: dequantize, inputs: [{last}], "
                   f"outputs: [{new('f', w)}]}}")
        last = made[-1][0]
    out_tensors = [t for t in tensors if not t.startswith(f"  {last}:")]
    text = "\n".join(["name: mixed", "inputs:", "  t0: {shape: [1, 32], dtype: float32}",
                      "outputs:", f"  {last}: {{shape: [1, {made[-1][2]}], dtype: float32}}",
                      "tensors:" if out_tensors else "tensors: {}", *out_tensors,
                      "constants:" if consts else "constants: {}", *consts,
                      "operators:", *(f"  - {o}" for o in ops)]) + "\n"
    path = tmp / f"mixed{seed}.yaml"
    path.write_text(text)
    return load_model(path)


def _portable_chains(m: Model) -> dict[int, tuple[Kernel, ...]]:
    from tvmdev.plan.kernels import build_registry, resolve

    return resolve(m, build_registry([], []))


@pytest.mark.parametrize("seed", range(10))
def test_random_graphs_replay_safely_in_place(seed: int, tmp_path: Path) -> None:
    """Planned with the portable kernels' data, with and without the model's I/O in the
    workspace, each plan replays without a byte overwritten while still needed; and the
    data is used: the aliases the plan makes cover every kind of kernel that allows it."""
    m = random_mixed_model(tmp_path, 25 + 8 * seed, seed)
    chains = _portable_chains(m)
    for io in (False, True):
        plan = plan_memory(m, io=io)
        replay(m, plan, chains)
    compiled = compile_model(m, board_by_name("host"))
    replay(m, compiled.memory, compiled.chains)
    assert compiled.memory.inplace == plan_memory(m).inplace
    off = plan_memory(m, inplace=False)
    # Sharing a buffer never adds live bytes at any operator.
    assert off.inplace == () and off.lower_bound >= plan_memory(m).lower_bound


def test_random_graphs_go_in_place_where_the_kernels_say() -> None:
    """Across the random graphs, every operator kind the kernels allow goes in place
    somewhere (QUANTIZE from float into a quarter of the bytes included), and none the
    kernels refuse does (DEQUANTIZE's output is larger; gemm reads its input whole)."""
    import tempfile

    seen: set[str] = set()
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(10):
            m = random_mixed_model(Path(tmp), 25 + 8 * seed, seed)
            plan = plan_memory(m)
            writer = {op.outputs[0]: op for op in m.operators}
            for out, src in plan.inplace:
                seen.add(f"{writer[out].op} {m.tensors[src].dtype}->{m.tensors[out].dtype}")
    assert {"add float32->float32", "add int8->int8", "relu float32->float32",
            "tanh int8->int8", "quantize float32->int8", "quantize int8->int8",
            "reshape float32->float32", "reshape int8->int8"} <= seen, seen
    assert not any(k.startswith(("dequantize", "gemm")) for k in seen), seen


def test_the_replay_catches_a_bad_plan(tmp_path: Path) -> None:
    """The replay is not a rubber stamp: an alias no kernel declares, a tensor moved onto
    a live one, and an alias whose output outgrows its input are each caught."""
    m = random_mixed_model(tmp_path, 40, 3)
    chains = _portable_chains(m)
    plan = plan_memory(m)
    replay(m, plan, chains)
    # The same plan, with the kernels' in-place data taken away.
    bare = {i: tuple(dataclasses.replace(k, inplace=()) for k in c) for i, c in chains.items()}
    kernel_pairs = [(o, s) for o, s in plan.inplace
                    if not OPS[next(op for op in m.operators if o in op.outputs).op].view]
    assert kernel_pairs
    with pytest.raises(Replay, match="not every kernel allows it"):
        replay(m, plan, bare)
    # Every tensor moved to offset 0: two live tensors meet.
    squashed = dataclasses.replace(plan, offsets={t: 0 for t in plan.offsets})
    with pytest.raises(Replay):
        replay(m, squashed, chains)
    # An alias declared where the output is not at the input's address.
    out, src = kernel_pairs[0]
    moved = dataclasses.replace(plan, offsets={**plan.offsets,
                                               out: plan.offsets[out] + 16})
    with pytest.raises(Replay):
        replay(m, moved, chains)


@pytest.mark.parametrize("seed", range(8))
def test_random_depthwise_graphs_replay_safely_in_place(seed: int, tmp_path: Path) -> None:
    """NHWC graphs around depthwise convolutions (float and int8; strides 1 and 2,
    dilation, a channel multiplier), planned with the portable kernels' data, with and
    without the I/O in the workspace, and compiled for the host and the Cortex-M4
    (tvmdev_cm's depthwise, whose plane holds a channel): each replays without a byte
    overwritten while still needed, every ring long enough for the rows it keeps."""
    from dw_graphs import random_dw_model
    m = random_dw_model(tmp_path, 20 + 3 * seed, seed)
    chains = _portable_chains(m)
    for io in (False, True):
        replay(m, plan_memory(m, io=io), chains)
    for board in ("host", "mps2_an386"):  # (unpatched: the replay knows no row slices)
        compiled = compile_model(m, board_by_name(board), Options(patch="off"))
        replay(compiled.model, compiled.memory, compiled.chains)
    off = plan_memory(m, inplace=False)
    assert off.inplace == () and off.lower_bound >= plan_memory(m).lower_bound


def _depthwise_in_place(tmp: Path) -> list[tuple[Model, MemoryPlan, str]]:
    """Across the random depthwise graphs: (model, plan, depthwise output) for every
    depthwise convolution the plan puts over its input."""
    from dw_graphs import random_dw_model
    out = []
    for seed in range(8):
        m = random_dw_model(tmp, 20 + 3 * seed, seed)
        plan = plan_memory(m)
        writer = {op.outputs[0]: op for op in m.operators}
        out += [(m, plan, o) for o, _ in plan.inplace if writer[o].op == "depthwise_conv2d"]
    return out


def test_depthwise_goes_in_place_through_its_ring(tmp_path: Path) -> None:
    """Float and int8 depthwise convolutions go in place, with fewer output elements too
    (stride 2), each with the scratch of its ring (none where the output stays behind
    what it reads); out of place, a depthwise convolution has no scratch."""
    from tvmdev.model.scratch import ring_rows
    seen = set()
    for m, plan, o in _depthwise_in_place(tmp_path):
        op = next(op for op in m.operators if op.outputs[0] == o)
        _, p = m.operator_params(op)
        src = m.tensors[op.inputs[0]]
        elem = src.nbytes // numel(src.shape)
        ring = ring_rows(p) * p["W"] * p["C"] * elem
        assert plan.scratch.get(op.index, (0, 0))[1] == ring
        seen.add((src.dtype, "fewer" if numel(m.tensors[o].shape) < numel(src.shape)
                  else "as many", "ring" if ring else "no ring"))
        off = plan_memory(m, inplace=False)
        assert op.index not in off.scratch
    assert {("float32", "as many", "ring"), ("int8", "as many", "ring"),
            ("float32", "fewer", "ring"), ("int8", "fewer", "ring")} <= seen, seen


def test_the_replay_catches_a_short_ring(tmp_path: Path) -> None:
    """Mutation: each depthwise convolution in place with a ring, given one row of
    scratch less, fails the replay; with its scratch as planned, it passes."""
    caught = 0
    for m, plan, o in _depthwise_in_place(tmp_path):
        op = next(op for op in m.operators if op.outputs[0] == o)
        if op.index not in plan.scratch:
            continue
        chains = _portable_chains(m)
        replay(m, plan, chains)
        _, p = m.operator_params(op)
        src = m.tensors[op.inputs[0]]
        row = p["W"] * p["C"] * (src.nbytes // numel(src.shape))
        offset, nbytes = plan.scratch[op.index]
        short = dataclasses.replace(plan, scratch={**plan.scratch,
                                                   op.index: (offset, nbytes - row)})
        with pytest.raises(Replay, match="ring of .* rows is short"):
            replay(m, short, chains)
        caught += 1
    assert caught >= 10


SHRINKING = """\
name: shrink
inputs:
  x: {shape: [1, 4, 64], dtype: float32}
outputs:
  y: {shape: [1, 256], dtype: float32}
tensors:
  q: {dtype: int8, quant: {scale: [0.02], zero_point: [3]}}
  t: {dtype: int8, quant: {scale: [0.0078125], zero_point: [0]}}
  v: {dtype: int8, quant: {scale: [0.0078125], zero_point: [0]}}
  r: {dtype: int8, quant: {scale: [0.01], zero_point: [-4]}}
operators:
  - {name: act, op: relu, inputs: [x], outputs: [h]}
  - {name: quant, op: quantize, inputs: [h], outputs: [q]}
  - {name: squash, op: tanh, inputs: [q], outputs: [t]}
  - {name: flat, op: reshape, inputs: [t], outputs: [v], attrs: {shape: [1, 256]}}
  - {name: requant, op: quantize, inputs: [v], outputs: [r]}
  - {name: back, op: dequantize, inputs: [r], outputs: [y]}
"""


@pytest.mark.slow
@pytest.mark.parametrize("board", ["host", "mps2_an386"])
def test_in_place_chain_runs_and_matches_the_reference(board: str, cli: Callable[..., Result],
                                                       tmp_path: Path) -> None:
    """relu, QUANTIZE from float into a quarter of its bytes, int8 tanh, a reshape (no
    call) and a requantization, each over the tensor before it: built and run, the
    output is the reference's, as it is with --no-inplace; plan.json notes each alias.
    On mps2_an386 the input is in the workspace (its default): relu writes over it."""
    need_tool("gcc" if board == "host" else "qemu-system-arm")
    path = tmp_path / "shrink.yaml"
    path.write_text(SHRINKING)
    plans = {}
    for label, extra in (("on", ()), ("off", ("--no-inplace",))):
        build = tmp_path / label
        r = cli("run", str(path), "--board", board, "--build-dir", str(build), *extra)
        assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
        plans[label] = json.loads((build / "model/tvmgen_shrink_plan.json").read_text())
    aliases = {o["name"]: o.get("alias") for o in plans["on"]["operators"]}
    assert aliases == {
        "act": {"input": "x", "kind": "in place"} if board != "host" else None,
        "quant": {"input": "h", "kind": "in place"},
        "squash": {"input": "q", "kind": "in place"},
        "flat": {"input": "t", "kind": "view, no call"},
        "requant": {"input": "v", "kind": "in place"}, "back": None}
    assert all("alias" not in o for o in plans["off"]["operators"])
    executor = (tmp_path / "on/model/tvmgen_shrink.c").read_text()
    assert "tvmk_reshape_s8" not in executor and "a view, no call" in executor
    assert plans["on"]["arena"]["size"] < plans["off"]["arena"]["size"]


def test_every_kernel_of_the_chain_must_allow_it(tmp_path: Path) -> None:
    """A user's relu kernel, tried before the portable one: without ``inplace`` its
    operator writes a buffer of its own (the user's kernel may take over at run time);
    with ``inplace: [X]`` it goes in place as the portable kernel alone would."""
    from tvmdev.plan.inplace import inplace_inputs
    from tvmdev.plan.kernels import build_registry, resolve

    (tmp_path / "m.yaml").write_text(
        "name: m\ninputs:\n  x: {shape: [1, 64], dtype: float32}\noutputs:\n"
        "  y: {shape: [1, 64], dtype: float32}\noperators:\n"
        "  - {name: a, op: tanh, inputs: [x], outputs: [h]}\n"
        "  - {name: b, op: relu, inputs: [h], outputs: [r]}\n"
        "  - {name: c, op: tanh, inputs: [r], outputs: [y]}\n")
    m = load_model(tmp_path / "m.yaml")
    got = {}
    for label, extra in (("silent", ""), ("says", ", inplace: [X]")):
        lib = tmp_path / f"{label}.yaml"
        lib.write_text("- op: relu\n  header: mine.h\n  kernels:\n"
                       f"    - {{arg_meta: null, kernel_name: my_relu{extra}}}\n")
        chains = resolve(m, build_registry([lib], []))
        assert [k.name for k in chains[1]] == ["my_relu", "tvmk_relu_f32"]
        got[label] = plan_memory(m, inplace_inputs(m, chains)).inplace
    assert got == {"silent": (), "says": (("r", "h"),)}
    assert plan_memory(m).inplace == (("r", "h"),)


def test_a_graph_output_is_never_written_over(tmp_path: Path) -> None:
    """An operator reading a graph output last does not write over it: the caller reads
    it after the run (with the outputs in the workspace, it is a buffer of the plan).
    Found by fuse25: a conv's output that is a graph output came out wrong on the M4."""
    (tmp_path / "m.yaml").write_text(
        "name: m\ninputs:\n  x: {shape: [1, 64], dtype: float32}\noutputs:\n"
        "  h: {shape: [1, 64], dtype: float32}\n  y: {shape: [1, 64], dtype: float32}\n"
        "operators:\n"
        "  - {name: a, op: tanh, inputs: [x], outputs: [h]}\n"
        "  - {name: b, op: relu, inputs: [h], outputs: [y]}\n")
    m = load_model(tmp_path / "m.yaml")
    plan = plan_memory(m, io=True)
    assert ("y", "h") not in plan.inplace and plan.offsets["h"] != plan.offsets["y"]
