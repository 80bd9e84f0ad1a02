"""Patch-based inference (MCUNetV2, Lin et al., NeurIPS 2021): a stage of a CNN run band
by band of its output's rows, so that only a band of each tensor inside the stage exists.

A stage is a run of operators, in the model's order, that ends in one tensor (the stage's
output) and whose other outputs are read only inside the stage. Every operator in it is
rowwise: a window operator (convolution, depthwise convolution, max or average pool) on
NHWC tensors, whose output row r reads input rows ``r*stride - pad_top + k*dilation``, or
an elementwise operator whose non-constant inputs have its output's shape. The stage's
output is split into ``patches`` bands of rows; for each band, each tensor of the stage
needs the rows its readers read (:func:`needed_rows`, walking the stage backwards), and
each operator computes exactly those rows, again for every band: the overlap of the
bands' windows is computed twice, which is what patching costs.

The rewrite is a model of ordinary operators, so every later stage of the pipeline (the
kernels, their hooks and scratch, the memory plan, the executor) treats them as it treats
any: an operator of band k reads rows of its inputs through a row slice
(:attr:`~tvmdev.model.graph.Model.slices`) of a tensor outside the stage or of a band
tensor, and writes a band tensor of its own or rows of the stage's output. A window
operator of a band pads at the top only where its first window reaches above row 0 of
the whole input (``pad_top`` shrinks by the rows the band starts below it), and at the
bottom only where its last window reaches below the input's last row: the kernels pad
exactly as they pad the whole tensor. The arithmetic per element is unchanged, so the
result is bit-exact with the unpatched plan's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..model.graph import Model, Operator, Tensor
from ..model.shapes import numel

WINDOWED = ("conv2d", "depthwise_conv2d", "maxpool2d", "avgpool2d")
# Elementwise operators: output element i reads input element i (and constants that
# broadcast over the rows), so a band of rows reads the same band of its inputs.
ROWWISE = frozenset({"add", "sub", "mul", "maximum", "minimum", "relu", "relu6", "clip",
                     "leaky_relu", "hard_swish", "sigmoid", "tanh", "quantize", "abs",
                     "neg"})

Rows = tuple[int, int]  # [first, end) rows of a tensor


@dataclass(frozen=True)
class Stage:
    """Operators ``first`` to ``last`` (model indices), run in ``patches`` bands."""

    first: int
    last: int
    patches: int


@dataclass(frozen=True)
class Patched:
    """A stage as the report and plan.json name it: by its operators' names."""

    first: str
    last: str
    operators: int
    patches: int
    output: str  # the stage's output tensor, computed band by band

    def describe(self) -> str:
        """One line for ``tvmdev aot``'s report."""
        return (f"{self.first} .. {self.last} ({self.operators} operators) in "
                f"{self.patches} bands of {self.output}'s rows")


def patched(model: Model, stage: Stage) -> Patched:
    """``stage`` of ``model`` (before patching), named."""
    ops = model.operators
    return Patched(ops[stage.first].name, ops[stage.last].name, stage.last - stage.first + 1,
                   stage.patches, ops[stage.last].outputs[0])


@dataclass(frozen=True)
class Window:
    """How a window operator's output rows read its input's rows."""

    height: int  # the input's rows
    kernel: int  # rows a window spans: (KH - 1) * dilation + 1
    stride: int
    pad_top: int
    taps: int = 1  # multiply-accumulates (or reads) per output element


class Geometry:
    """A model's operators' windows, each computed once (by operator index)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self._windows: dict[int, Window | None] = {}
        self._numbered: dict[tuple[int, int], Operator] = {}

    def window(self, op: Operator) -> Window | None:
        """``op``'s window along the rows, or None when it is no NHWC window operator."""
        if op.index not in self._windows:
            self._windows[op.index] = window(self.model, op)
        return self._windows[op.index]

    def numbered(self, index: int, at: int) -> Operator:
        """Operator ``index`` as operator ``at`` of a patched model (the search makes the
        same few shifts of the same operators many times)."""
        op = self.model.operators[index]
        if at == index:
            return op
        if (index, at) not in self._numbered:
            self._numbered[index, at] = replace(op, index=at)
        return self._numbered[index, at]


def window(model: Model, op: Operator) -> Window | None:
    """``op``'s window along the rows, or None when it is no NHWC window operator."""
    if op.op not in WINDOWED:
        return None
    attrs = op.attr_dict
    if op.op != "depthwise_conv2d" and attrs.get("layout", "NCHW") != "NHWC":
        return None
    if attrs.get("ceil_mode", 0):
        return None
    p = model.operator_params(op)[1]
    taps = p["KH"] * p["KW"] * (p["C"] // max(p.get("group", 1), 1) if op.op == "conv2d"
                                else 1)
    return Window(p["H"], (p["KH"] - 1) * p.get("dil_h", 1) + 1, p["stride_h"], p["pad_top"],
                  taps)


def _is_activation(model: Model, name: str | None) -> bool:
    t = model.tensors[name] if name is not None else None
    return t is not None and t.role != "constant" and len(t.shape) == 4 and t.shape[0] == 1


def rowwise(geo: Geometry, op: Operator) -> bool:
    """Whether ``op`` may run on a band of rows: a window operator, or an elementwise one
    whose non-constant inputs have its output's shape and whose constants broadcast over
    the rows, on the CPU."""
    model = geo.model
    out = model.tensors[op.outputs[0]]
    if op.device is not None or len(op.outputs) != 1 or not _is_activation(model, out.name):
        return False
    if op.op in WINDOWED:
        return geo.window(op) is not None and _is_activation(model, op.inputs[0]) and all(
            t is None or model.tensors[t].role == "constant" for t in op.inputs[1:])
    if op.op not in ROWWISE:
        return False
    for t in op.inputs:
        if t is None:
            continue
        tensor = model.tensors[t]
        if tensor.role == "constant":
            if len(tensor.shape) >= 3 and tensor.shape[-3] != 1:
                return False
        elif tensor.shape != out.shape:
            return False
    return True


def input_rows(geo: Geometry, op: Operator, rows: Rows) -> Rows:
    """The rows of ``op``'s first input that its output ``rows`` read."""
    w = geo.window(op)
    if w is None:
        return rows
    first = max(0, rows[0] * w.stride - w.pad_top)
    end = min(w.height, (rows[1] - 1) * w.stride - w.pad_top + w.kernel)
    return first, end


def bands(height: int, patches: int) -> list[Rows]:
    """``height`` rows in ``patches`` bands as even as can be, the larger ones first."""
    base, extra = divmod(height, patches)
    out, start = [], 0
    for k in range(patches):
        size = base + (k < extra)
        out.append((start, start + size))
        start += size
    return out


def needed_rows(geo: Geometry, stage: Stage, rows: Rows) -> dict[str, Rows]:
    """The rows of each tensor of ``stage`` (its operators' outputs, and the activations
    it reads from outside) that the stage's output ``rows`` need: walking the stage
    backwards, each reader's input rows, the hull where several read one tensor."""
    model = geo.model
    ops = model.operators[stage.first:stage.last + 1]
    need: dict[str, Rows] = {ops[-1].outputs[0]: rows}
    for op in reversed(ops):
        got = need.get(op.outputs[0])
        if got is None:
            continue
        want = input_rows(geo, op, got)
        for t in op.inputs if op.op not in WINDOWED else op.inputs[:1]:
            if t is None or model.tensors[t].role == "constant":
                continue
            old = need.get(t)
            need[t] = want if old is None else (min(old[0], want[0]), max(old[1], want[1]))
    return need


def stage_problem(geo: Geometry, first: int, last: int) -> str | None:
    """Why operators ``first``..``last`` are no stage (None: they are one)."""
    model = geo.model
    ops = model.operators[first:last + 1]
    for op in ops:
        if not rowwise(geo, op):
            return f"operator '{op.name}' ({op.op}) does not run on a band of rows"
    inside = {op.outputs[0] for op in ops}
    out = ops[-1].outputs[0]
    for op in model.operators[last + 1:]:
        for t in op.inputs:
            if t in inside and t != out:
                return f"tensor '{t}' is read after the stage"
    for t in inside - {out}:
        if t in model.outputs or t in model.states:
            return f"tensor '{t}' is a graph output"
    return None


class _Rewrite:
    """The new tensors and operators of one rewrite, with C names that clash with none."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.tensors = dict(model.tensors)
        self.slices = dict(model.slices)
        self.cnames = {t.cname for t in model.tensors.values()}
        self.cnames |= {op.cname for op in model.operators}

    def cname(self, want: str) -> str:
        name, n = want, 1
        while name in self.cnames:
            n += 1
            name = f"{want}_{n}"
        self.cnames.add(name)
        return name

    def band(self, name: str, k: int, rows: Rows) -> str:
        """Band ``k`` of tensor ``name``: its ``rows``, a tensor of their shape."""
        t = self.model.tensors[name]
        new = f"{name}:patch{k}"
        self.tensors[new] = replace(t, name=new, role="intermediate",
                                    shape=(1, rows[1] - rows[0], *t.shape[2:]),
                                    cname=self.cname(f"{t.cname}_p{k}"))
        return new

    def rows_of(self, name: str, held: Rows, rows: Rows) -> str:
        """Tensor ``name``, which holds ``held`` rows of its whole, as its ``rows``: itself,
        or a row slice of it."""
        if rows == held:
            return name
        t = self.tensors[name]
        row_elems = numel(t.shape[2:])
        new = f"{name}:rows{rows[0]}_{rows[1]}"
        if new not in self.tensors:
            parent, offset = self.slices.get(name, (name, 0))
            self.tensors[new] = Tensor(new, (1, rows[1] - rows[0], *t.shape[2:]), t.dtype,
                                       "intermediate", self.cname(
                                           f"{t.cname}_r{rows[0]}_{rows[1]}"),
                                       t.where, t.quant)
            self.slices[new] = (parent, offset + (rows[0] - held[0]) * row_elems)
        return new


def _pads(geo: Geometry, op: Operator, out_rows: Rows, in_rows: Rows) -> tuple[int, ...]:
    """The window operator's pads for output ``out_rows`` read from input ``in_rows``."""
    w = geo.window(op)
    assert w is not None
    top = w.pad_top + in_rows[0] - out_rows[0] * w.stride
    bottom = (out_rows[1] - out_rows[0] - 1) * w.stride + w.kernel - (in_rows[1] - in_rows[0]
                                                                      ) - top
    old = tuple(op.attr_dict.get("pads") or (0, 0, 0, 0))
    return (top, old[1], bottom, old[3])


def _band_ops(rw: _Rewrite, geo: Geometry, stage: Stage, k: int, rows: Rows, index: int
              ) -> list[Operator]:
    """The operators of band ``k`` (the stage's output ``rows``), from model index
    ``index`` on."""
    model = rw.model
    ops = model.operators[stage.first:stage.last + 1]
    out = ops[-1].outputs[0]
    need = needed_rows(geo, stage, rows)
    inside = {op.outputs[0] for op in ops}
    held: dict[str, tuple[str, Rows]] = {}  # tensor -> (what holds it, the rows held)
    made: list[Operator] = []
    for op in ops:
        o = op.outputs[0]
        o_rows = need[o]
        if o == out:
            target = rw.rows_of(o, (0, model.tensors[o].shape[1]), o_rows)
        else:
            target = rw.band(o, k, o_rows)
        in_rows = input_rows(geo, op, o_rows)
        inputs = []
        for i, t in enumerate(op.inputs):
            if t is None or model.tensors[t].role == "constant" or (
                    op.op in WINDOWED and i > 0):
                inputs.append(t)
                continue
            src, src_rows = held[t] if t in inside else (t, (0, model.tensors[t].shape[1]))
            inputs.append(rw.rows_of(src, src_rows, in_rows))
        attrs = op.attrs
        if op.op in WINDOWED:
            attrs = (*((a, v) for a, v in op.attrs if a != "pads"),
                     ("pads", _pads(geo, op, o_rows, in_rows)))
        held[o] = (target, o_rows)
        made.append(replace(op, index=index + len(made), name=f"{op.name}:patch{k}",
                            inputs=tuple(inputs), outputs=(target,), attrs=attrs, given=(),
                            cname=rw.cname(f"{op.cname}_p{k}")))
    return made


def patch_model(model: Model, stages: tuple[Stage, ...], geo: Geometry | None = None
                ) -> tuple[Model, tuple[int, ...]]:
    """``model`` with each of ``stages`` (in order, not overlapping) run band by band, and
    the index in ``model`` of each of its operators (``geo``: ``model``'s windows)."""
    geo = geo or Geometry(model)
    for s in stages:
        problem = stage_problem(geo, s.first, s.last)
        if problem is not None or not 1 <= s.patches <= model.tensors[
                model.operators[s.last].outputs[0]].shape[1]:
            raise ValueError(f"{s}: {problem or 'more patches than rows'}")
    if not stages:
        return model, tuple(range(len(model.operators)))
    rw = _Rewrite(model)
    by_first = {s.first: s for s in stages}
    ops: list[Operator] = []
    origin: list[int] = []
    i = 0
    while i < len(model.operators):
        stage = by_first.get(i)
        if stage is None:
            ops.append(geo.numbered(i, len(ops)))
            origin.append(i)
            i += 1
            continue
        out = model.tensors[model.operators[stage.last].outputs[0]]
        for k, rows in enumerate(bands(out.shape[1], stage.patches)):
            made = _band_ops(rw, geo, stage, k, rows, len(ops))
            ops += made
            origin += range(stage.first, stage.first + len(made))
        i = stage.last + 1
    gone = {model.operators[i].outputs[0] for s in stages for i in range(s.first, s.last)}
    return replace(model, operators=tuple(ops),
                   tensors={n: t for n, t in rw.tensors.items() if n not in gone},
                   slices=rw.slices), tuple(origin)

