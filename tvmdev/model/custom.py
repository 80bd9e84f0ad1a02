"""Custom operators: an operator tvmdev does not know, brought by the user in a
``--kernels`` file (:mod:`tvmdev.load.custom_ops` reads it), as TFLM's
``MicroMutableOpResolver::AddCustom`` brings one to TFLM.

A :class:`CustomOp` holds what the file declares: the op's arguments, its params with
their C types, its shape rule (:mod:`.expr`), the reference ``tvmdev run`` checks its
kernels against, and the source operator it stands for (a TFLite custom code or builtin,
an ONNX domain and op type). :func:`registered` puts it in the op table
(:data:`tvmdev.model.ops.OPS`) for one command, as an :class:`~.opdef.OpDef` like any
other, so that import, planning, rendering and the reference treat it as one.

Its kernels take the generated params struct ``struct <op>_params``: the declared params
in order, then for each argument ``<arg>_ndim``, ``<arg>_shape[6]`` (1 past ndim),
``<arg>_count``, ``<arg>_scale`` and ``<arg>_zero_point`` (per-tensor quantization; 1 and
0 on a float tensor), then ``scratch_bytes`` and ``scratch`` when a kernel has scratch.
"""

from __future__ import annotations

import importlib.util
import inspect
import math
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TvmdevError, Where
from .expr import Expr, ExprError
from .opdef import Attr, OpDef
from .quant import Quant
from .shapes import MAX_DIMS, Shape, ShapeError

# A param's type in the file -> its C type, the attribute kind it checks as, its range.
PARAM_TYPES: dict[str, tuple[str, str, tuple[int, int] | None]] = {
    "float": ("float", "float", None),
    "int32": ("int32_t", "int", (-(1 << 31), (1 << 31) - 1)),
    "int16": ("int16_t", "int", (-(1 << 15), (1 << 15) - 1)),
    "int8": ("int8_t", "int", (-128, 127)),
    "uint8": ("uint8_t", "int", (0, 255)),
    "bool": ("bool", "bool", (0, 1)),
}
TENSOR_DTYPES = ("float32", "int8", "int32")
# The fields every argument adds to the params struct, with their C types.
ARG_FIELDS = (("ndim", "int32_t"), ("shape", "int32_t"), ("count", "int32_t"),
              ("scale", "float"), ("zero_point", "int32_t"))


@dataclass(frozen=True)
class Param:
    """A declared param: its name (the C field, the option's key), type and default."""

    name: str
    type: str  # a key of PARAM_TYPES
    default: float | int | None  # None: the model must give it
    where: Where

    @property
    def ctype(self) -> str:
        """Its C type."""
        return PARAM_TYPES[self.type][0]


@dataclass(frozen=True)
class CustomScratch:
    """A custom kernel's ``scratch`` rule: bytes from the call's shapes and params."""

    op: str
    rule: Expr
    where: Where

    def need(self, params: Mapping[str, Any]) -> int:
        """The bytes one call needs, from its params struct's values."""
        custom = CUSTOM[self.op]
        value = custom.evaluate(self.rule, custom.env_of(params), "scratch rule", self.where)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 31:
            raise TvmdevError(f"custom op {self.op}: scratch rule {self.rule.text!r} gives "
                              f"{value!r}, not a number of bytes (0 to 2^31-1)", self.where)
        return value


@dataclass(frozen=True, eq=False)
class CustomOp:
    """One custom operator as its ``--kernels`` entry declares it."""

    name: str
    inputs: tuple[str, ...]
    output: str
    params: tuple[Param, ...]
    shape: tuple[Expr, ...] | Expr  # each dim, or one rule giving the whole shape
    dtype: str  # the output's dtype, or the input argument whose dtype it takes
    require: tuple[Expr, ...]
    # A Python file and the function in it; None: the C kernel, compiled for the host
    # (tvmdev.run.custom_reference runs it).
    reference: tuple[Path, str] | None
    where: Where  # the entry
    places: Mapping[str, Where] = field(default_factory=dict)  # key -> its line
    tflite_custom: str | None = None
    tflite_builtin: str | None = None
    onnx: tuple[str, str] | None = None  # (domain, op_type)
    scratch: bool = False  # whether a kernel has a scratch rule

    @property
    def struct(self) -> str:
        """The C params struct its kernels take."""
        return f"{self.name}_params"

    @property
    def header(self) -> str:
        """The header tvmdev generates for it (the struct and its kernels' prototypes)."""
        return f"tvmgen_op_{self.name}.h"

    @property
    def sources(self) -> str:
        """What it stands for, for messages and comments."""
        parts = ([f'TFLite custom "{self.tflite_custom}"'] if self.tflite_custom else []) + (
            [f"TFLite builtin {self.tflite_builtin}"] if self.tflite_builtin else []) + (
            [f"ONNX {self.onnx[0] or 'ai.onnx'}:{self.onnx[1]}"] if self.onnx else [])
        return ", ".join(parts) or "no source operator (model descriptions only)"

    def where_of(self, key: str) -> Where:
        """The line of one of its keys (the entry's when not given)."""
        return self.places.get(key, self.where)

    def fields(self) -> list[tuple[str, str]]:
        """(C declaration type, field) of its params struct, in order."""
        out = [(p.ctype, p.name) for p in self.params]
        for arg in (*self.inputs, self.output):
            out += [(ctype, f"{arg}_{f}" + (f"[{MAX_DIMS}]" if f == "shape" else ""))
                    for f, ctype in ARG_FIELDS]
        if self.scratch:
            out += [("int32_t", "scratch_bytes"), ("void *", "scratch")]
        return out

    def env(self, shapes: Sequence[Shape | None], attrs: Mapping[str, Any]) -> dict[str, Any]:
        """The names a rule sees: every input's shape and every param."""
        env: dict[str, Any] = {p.name: attrs[p.name] for p in self.params}
        env.update({a: tuple(s) for a, s in zip(self.inputs, shapes, strict=True)
                    if s is not None})
        return env

    def env_of(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The names a scratch rule sees, from a call's params struct values: the params
        and every argument's shape (the output's too)."""
        env = {p.name: params[p.name] for p in self.params}
        for arg in (*self.inputs, self.output):
            env[arg] = tuple(params[f"{arg}_shape"][:params[f"{arg}_ndim"]])
        return env

    def operands(self, env: Mapping[str, Any]) -> str:
        """The shapes and params a rule saw, for a message: ``X [2, 10], window 3``."""
        return ", ".join([f"{a} {list(env[a])}" for a in (*self.inputs, self.output)
                          if a in env] + [f"{p.name} {env[p.name]}" for p in self.params])

    def evaluate(self, rule: Expr, env: Mapping[str, Any], what: str, where: Where) -> Any:
        """``rule`` with ``env``; a failure is one line at the rule, naming the operands."""
        try:
            return rule(env)
        except ExprError as exc:
            raise TvmdevError(f"custom op {self.name}: {what} {rule.text!r} fails for "
                              f"{self.operands(env)}: {exc}", where,
                              hint="the rule must hold for every shape the model gives "
                                   "the operator: fix the rule or the model") from None

    def infer(self, shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
        """The output shape, after every ``require`` holds."""
        env = self.env(shapes, attrs)
        for rule in self.require:
            if not self.evaluate(rule, env, "require", self.where_of("require")):
                raise TvmdevError(f"custom op {self.name}: require {rule.text!r} is false "
                                  f"for {self.operands(env)}", self.where_of("require"),
                                  hint="the operator's inputs break what its entry "
                                       "requires of them")
        where = self.where_of("shape")
        if isinstance(self.shape, Expr):
            dims = self.evaluate(self.shape, env, "shape rule", where)
        else:
            dims = tuple(self.evaluate(r, env, "shape rule", where) for r in self.shape)
        if not isinstance(dims, tuple) or len(dims) > MAX_DIMS or not all(
                isinstance(d, int) and not isinstance(d, bool) and 1 <= d < 1 << 31
                for d in dims):
            raise TvmdevError(f"custom op {self.name}: the shape rule gives {dims!r}, not a "
                              f"shape (at most {MAX_DIMS} dims, each 1 to 2^31-1)", where,
                              hint="a rule's dims are integers: use // to divide")
        return dims

    def values(self, shapes: list[Shape | None], out: Shape, attrs: dict[str, Any],
               dtypes: list[str | None], quants: list[Quant | None]) -> dict[str, Any]:
        """The params struct's values for one call (``dtypes`` and ``quants``: of each
        input, then of the output)."""
        want = dtypes[self.inputs.index(self.dtype)] if self.dtype in self.inputs \
            else self.dtype
        if dtypes[-1] != want:
            raise ShapeError(f"custom op {self.name} writes {want} (its entry's dtype), not "
                             f"{dtypes[-1]}")
        odd = sorted({d for d in dtypes if d is not None and d not in TENSOR_DTYPES})
        if odd:
            raise ShapeError(f"custom op {self.name} takes {', '.join(TENSOR_DTYPES)} "
                             f"tensors, not {', '.join(odd)}")
        vals: dict[str, Any] = {p.name: int(attrs[p.name]) if p.type == "bool"
                                else attrs[p.name] for p in self.params}
        for arg, shape, quant in zip((*self.inputs, self.output), [*shapes, out], quants,
                                     strict=True):
            dims = tuple(shape or ())
            if quant is not None and quant.per_channel:
                raise ShapeError(f"custom op {self.name}: {arg} is quantized per channel; "
                                 "custom kernels get one scale and zero point per tensor")
            vals.update({f"{arg}_ndim": len(dims),
                         f"{arg}_shape": [*dims, *[1] * (MAX_DIMS - len(dims))],
                         f"{arg}_count": math.prod(dims) if shape is not None else 0,
                         f"{arg}_scale": float(quant.scale[0]) if quant else 1.0,
                         f"{arg}_zero_point": int(quant.zero_point[0])
                         if quant and quant.zero_point else 0})
        if self.scratch:
            vals.update(scratch_bytes=0, scratch=None)
        return vals

    def opdef(self) -> OpDef:
        """The op table's entry for it."""
        attrs = {p.name: Attr(PARAM_TYPES[p.type][1], p.default) for p in self.params}
        return OpDef(self.name, self.inputs, frozenset(), (self.output,), attrs, self.struct,
                     self.infer,
                     lambda s, o, a: self.values(s, o, a, ["float32"] * (len(s) + 1),
                                                 [None] * (len(s) + 1)),
                     scratch=self.scratch, doc=f"custom: {self.sources}")

    def run_reference(self, args: list[np.ndarray | None], attrs: Mapping[str, Any],
                      dtypes: list[str], shape: Shape,
                      quants: Sequence[Quant | None] = ()) -> np.ndarray:
        """The user's reference on one call's inputs (each in its dtype), as float64. A
        function with a ``quant`` parameter also gets each quantized argument's (scale,
        zero point), by argument name (``quants``: of the inputs, then the output)."""
        if self.reference is None:
            raise TvmdevError(f"custom op {self.name}: its reference is its C kernel on the "
                              "host, which only tvmdev run computes", self.where_of(
                                  "reference"))
        fn = _reference_function(self, self.reference)
        kwargs: dict[str, Any] = {p.name: bool(attrs[p.name]) if p.type == "bool"
                                  else attrs[p.name] for p in self.params}
        if "quant" in inspect.signature(fn).parameters:
            kwargs["quant"] = {a: (q.scale[0], q.zero_point[0] if q.zero_point else 0)
                               for a, q in zip((*self.inputs, self.output), quants,
                                               strict=False) if q is not None}
        where = self.where_of("reference")
        label = f"{self.reference[0].name}:{self.reference[1]}"
        arrays = [None if a is None else np.asarray(a).astype(d) for a, d in
                  zip(args, dtypes, strict=False)]
        try:
            y = np.asarray(fn(*arrays, **kwargs))
        except Exception as exc:  # the user's code: any failure is reported, not raised
            raise TvmdevError(f"custom op {self.name}: reference {label} raised "
                              f"{type(exc).__name__}: {exc}", where) from None
        if tuple(y.shape) != tuple(shape):
            raise TvmdevError(f"custom op {self.name}: reference {label} returned shape "
                              f"{list(y.shape)}, where the shape rule gives {list(shape)}",
                              where, hint="the reference and the shape rule must agree")
        return np.asarray(y, np.float64)


_LOADED: dict[tuple[Path, str], Callable[..., Any]] = {}


def _reference_function(op: CustomOp, reference: tuple[Path, str]) -> Callable[..., Any]:
    """The reference function, its file imported once (only ``tvmdev run`` does)."""
    path, name = reference
    if (path, name) in _LOADED:
        return _LOADED[path, name]
    where = op.where_of("reference")
    module_name = f"tvmdev_custom_reference_{op.name}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise TvmdevError(f"custom op {op.name}: cannot import {path.name}", where)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's module: report its failure in one line
        raise TvmdevError(f"custom op {op.name}: importing {path.name} raised "
                          f"{type(exc).__name__}: {exc}", where) from None
    fn: Callable[..., Any] | None = getattr(module, name, None)
    if fn is None or not callable(fn):
        raise TvmdevError(f"custom op {op.name}: {path.name} has no function {name!r}",
                          where, hint="reference: FILE.py:FUNCTION, FUNCTION(*inputs, "
                                      "**params) returning the output array")
    _LOADED[path, name] = fn
    return fn


# The custom operators of the running command, by op name.
CUSTOM: dict[str, CustomOp] = {}


@contextmanager
def registered(ops: Sequence[CustomOp]) -> Iterator[None]:
    """``ops`` in the op table while the block runs (one command); each op once."""
    from .ops import OPS

    added: list[str] = []
    try:
        for c in ops:
            if c.name in CUSTOM and CUSTOM[c.name] is not c:
                first = CUSTOM[c.name].where
                if first == c.where:
                    continue  # the same entry, read twice
                raise TvmdevError(f"custom op {c.name} is declared twice (first at {first})",
                                  c.where, hint="declare each custom op in one entry")
            if c.name in OPS and c.name not in CUSTOM:
                raise TvmdevError(f"op {c.name} is already known to tvmdev", c.where,
                                  hint="a custom op needs a name of its own")
            OPS[c.name] = c.opdef()
            CUSTOM[c.name] = c
            added.append(c.name)
        yield
    finally:
        for name in added:
            OPS.pop(name, None)
            CUSTOM.pop(name, None)
