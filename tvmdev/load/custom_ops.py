"""The entry of a ``--kernels`` file that declares a custom operator
(:class:`~tvmdev.model.custom.CustomOp`): an ``op`` tvmdev does not know, with what it
stands for in a model, its arguments, params, shape rule and reference, beside its
kernels as any entry lists them::

    - op: softsign_scaled
      tflite: {custom_code: SoftsignScaled}          # or {builtin: NAME}
      onnx: {domain: com.example, op_type: SoftsignScaled}
      inputs: [X]
      outputs: [Y]
      params:
        alpha: float                                 # or {type: int32, default: 1}
      shape: X                                       # a rule (tvmdev.model.expr)
      reference: softsign_ref.py:softsign_scaled     # FILE.py:FUNCTION, beside this file
      kernels:
        - arg_meta: {X: [float32], Y: [float32]}
          kernel_name: softsign_scaled_f32
          sources: [softsign_scaled.c]               # includes tvmgen_op_softsign_scaled.h
          scratch: "numel(X) * 4"                    # optional: bytes, or a rule

tvmdev generates the header (``tvmgen_op_<op>.h``: the params struct and the kernels'
prototypes), so such an entry has no ``header``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .. import naming
from ..errors import TvmdevError, Where, shown
from ..model.custom import PARAM_TYPES, TENSOR_DTYPES, CustomOp, CustomScratch, Param
from ..model.expr import Expr, ExprError, parse
from ..model.limits import float32
from ..model.shapes import MAX_DIMS
from . import yamlio
from .fields import optional

# The keys that make an entry a custom operator's declaration, and those it must have.
CUSTOM_KEYS = ("tflite", "onnx", "inputs", "outputs", "params", "shape", "dtype", "require",
               "reference")
REQUIRED = ("inputs", "outputs", "shape", "reference")
RESERVED = ("tvmk_", "tvmgen_", "tvm_")  # the prefixes of tvmdev's C names
HINT = "README 'Custom operators' shows an entry"
_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def is_custom(entry: dict[str, Any]) -> bool:
    """Whether a library entry declares a custom operator."""
    return any(k in entry for k in CUSTOM_KEYS)


def read_custom(op: str, entry: dict[str, Any], path: Path, w: Where) -> CustomOp:
    """The custom operator an entry declares (``path``: the library file)."""
    if "header" in entry:
        raise TvmdevError(f"custom op {op}: tvmdev generates its header (tvmgen_op_{op}.h)",
                          yamlio.where_of(entry, "header"),
                          hint="drop 'header'; include tvmgen_op_" + op + ".h in the kernel's "
                               "source")
    for key in REQUIRED:
        if key not in entry:
            raise TvmdevError(f"custom op {op} needs '{key}'", w, hint=HINT)
    naming.check_identifier(op, "custom op name", yamlio.where_of(entry, "op"))
    if op.lower().startswith(RESERVED):
        raise TvmdevError(f"custom op name {op} starts with {op.split('_')[0]}_, which tvmdev "
                          "keeps for its own C names", yamlio.where_of(entry, "op"),
                          hint="name it after what it computes: moving_average")
    inputs = _args(entry, "inputs")
    outputs = _args(entry, "outputs")
    if len(outputs) != 1:
        raise TvmdevError(f"custom op {op} has {len(outputs)} outputs; tvmdev takes one",
                          yamlio.where_of(entry, "outputs"))
    clash = set(inputs) & set(outputs)
    if clash or len(set(inputs)) != len(inputs):
        raise TvmdevError(f"custom op {op}: argument names must differ", yamlio.where_of(
            entry, "inputs"))
    params = _params(entry)
    if {*inputs, *outputs} & {p.name for p in params}:
        raise TvmdevError(f"custom op {op}: a param and an argument share a name",
                          yamlio.where_of(entry, "params"))
    names = frozenset([*inputs, *(p.name for p in params)])
    places = {k: yamlio.where_of(entry, k) for k in entry}
    tfl = _tflite(entry)
    return CustomOp(
        op, inputs, outputs[0], params, _shape(entry, names), _dtype(entry, inputs),
        tuple(_rule(entry, "require", r, names) for r in _list(entry, "require")),
        _reference(entry, path), w, places, tflite_custom=tfl.get("custom_code"),
        tflite_builtin=tfl.get("builtin"), onnx=_onnx(entry),
        scratch=any(isinstance(k, dict) and "scratch" in k
                    for k in entry.get("kernels") or []))


def custom_scratch(custom: CustomOp, item: dict[str, Any]) -> int | CustomScratch:
    """A custom kernel's ``scratch``: bytes, or a rule over its shapes and params."""
    value = item["scratch"]
    where = yamlio.where_of(item, "scratch")
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**31 - 1:
        return value
    names = frozenset([*custom.inputs, custom.output, *(p.name for p in custom.params)])
    return CustomScratch(custom.name, _parsed(value, names, where, "scratch"), where)


def check_defined(kname: str, sources: tuple[Path, ...], where: Where) -> None:
    """A custom op's kernel must have sources, and one of them must define it."""
    if not sources:
        raise TvmdevError(f"kernel {kname} of a custom op needs its C sources",
                          where, hint="sources: [my_kernel.c], relative to this file")
    pattern = re.compile(r"\b" + re.escape(kname) + r"\s*\([^;{]*\)\s*\{")
    for s in sources:
        if pattern.search(_COMMENTS.sub("", s.read_text(encoding="utf-8", errors="replace"))):
            return
    names = ", ".join(s.name for s in sources)
    raise TvmdevError(f"no source of kernel {kname} defines it ({names})", where,
                      hint="define int32_t " + kname + "(...) in one of the sources, as "
                           "the generated header declares it")


def _args(entry: dict[str, Any], key: str) -> tuple[str, ...]:
    value = entry[key]
    where = yamlio.where_of(entry, key)
    if not isinstance(value, list) or not value:
        raise TvmdevError(f"{key} must be a list of argument names", where)
    for v in value:
        naming.check_identifier(v, f"{key[:-1]} name", where)
    return tuple(value)


def _params(entry: dict[str, Any]) -> tuple[Param, ...]:
    node = optional(entry, "params", {})
    if not isinstance(node, dict):
        raise TvmdevError("params must be a mapping of name: type",
                          yamlio.where_of(entry, "params"))
    out = []
    for name, spec in node.items():
        where = yamlio.where_of(node, name)
        naming.check_identifier(name, "param name", where)
        default = None
        if isinstance(spec, dict):
            for key in spec:
                if key not in ("type", "default"):
                    raise TvmdevError(f"unknown key {shown(key)}", yamlio.where_of(spec, key),
                                      hint="param keys: type, default")
            default, spec = spec.get("default"), spec.get("type")
        if not isinstance(spec, str) or spec not in PARAM_TYPES:
            raise TvmdevError(f"param {name}: unknown type {shown(spec)}", where,
                              hint="types: " + ", ".join(PARAM_TYPES))
        param = Param(str(name), spec, None, where)
        if default is not None:
            param = Param(param.name, spec, param_value(param, default, "its default is"), where)
        out.append(param)
    return tuple(out)


def param_value(p: Param, value: Any, what: str) -> float | int:
    """``value`` as param ``p``'s type: a float takes a number a float32 holds; an integer
    type an integer in its range; a bool a boolean (or 0, 1). Raises at the declaration;
    ``what`` says where the value is from ("m.tflite operator 0 (CUSTOM:Op) gives")."""
    ctype, kind, bounds = PARAM_TYPES[p.type]
    ok: float | int | None = None
    if kind == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
        ok = float(value) if float32(float(value)) is not None else None
    elif kind == "bool" and (isinstance(value, bool) or value in (0, 1)) and not isinstance(
            value, float):
        ok = int(value)
    elif kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        assert bounds is not None
        ok = value if bounds[0] <= value <= bounds[1] else None
    if ok is None:
        article = "an" if p.type[0] in "aeiou" else "a"
        raise TvmdevError(f"param {p.name}: {what} {_typed(value)}, not {article} {p.type}",
                          p.where, hint=f"{p.name} is declared {p.type} ({ctype} in C)")
    return ok


def _typed(value: Any) -> str:
    kind = {bool: "boolean", int: "integer", float: "float", str: "string"}.get(
        type(value), type(value).__name__)
    return f"{kind} {shown(value)}"


def _shape(entry: dict[str, Any], names: frozenset[str]) -> tuple[Expr, ...] | Expr:
    value = entry["shape"]
    if isinstance(value, list):
        if len(value) > MAX_DIMS:
            raise TvmdevError(f"shape has {len(value)} dims; at most {MAX_DIMS}",
                              yamlio.where_of(entry, "shape"))
        return tuple(_rule(entry, "shape", v, names) for v in value)
    return _rule(entry, "shape", value, names)


def _rule(entry: dict[str, Any], key: str, text: Any, names: frozenset[str]) -> Expr:
    return _parsed(text, names, yamlio.where_of(entry, key), key)


def _parsed(text: Any, names: frozenset[str], where: Where, key: str) -> Expr:
    try:
        return parse(text, names)
    except ExprError as exc:
        raise TvmdevError(f"{key}: {exc}", where,
                          hint="rules use the inputs' shapes (X[0], len(X), numel(X)), the "
                               "params, numbers, + - * // %, comparisons, min, max") from None


def _list(entry: dict[str, Any], key: str) -> list[Any]:
    value = optional(entry, key, [])
    if not isinstance(value, list):
        raise TvmdevError(f"{key} must be a list of rules", yamlio.where_of(entry, key))
    return value


def _dtype(entry: dict[str, Any], inputs: tuple[str, ...]) -> str:
    value = optional(entry, "dtype", inputs[0])
    if value not in (*inputs, *TENSOR_DTYPES):
        raise TvmdevError(f"dtype {shown(value)} is neither an input nor a dtype",
                          yamlio.where_of(entry, "dtype"),
                          hint="dtype: an input (its dtype) or one of "
                               + ", ".join(TENSOR_DTYPES))
    return str(value)


def _reference(entry: dict[str, Any], path: Path) -> tuple[Path, str] | None:
    value = entry["reference"]
    where = yamlio.where_of(entry, "reference")
    if value == "host":
        return None
    file, _, fn = str(value).rpartition(":")
    if not isinstance(value, str) or not file.endswith(".py") or not fn.isidentifier():
        raise TvmdevError(f"reference must be FILE.py:FUNCTION or host, not {shown(value)}",
                          where, hint="a Python function beside this file (ref.py:my_op), "
                                      "or host: the C kernel compiled for this machine")
    found = (path.parent / file).resolve()
    if not found.is_file():
        raise TvmdevError(f"reference file {shown(file)} does not exist", where,
                          hint=f"paths are relative to {path.parent}")
    return found, fn


def _mapping(entry: dict[str, Any], key: str, keys: tuple[str, ...]) -> dict[str, str]:
    node = optional(entry, key, {})
    where = yamlio.where_of(entry, key)
    if not isinstance(node, dict) or not node:
        raise TvmdevError(f"{key} must be a mapping of " + ", ".join(keys), where)
    for k, v in node.items():
        if k not in keys:
            raise TvmdevError(f"unknown key {shown(k)}", yamlio.where_of(node, k),
                              hint=f"{key} keys: " + ", ".join(keys))
        if not isinstance(v, str) or not v:
            raise TvmdevError(f"{key}.{k} must be a name, not {shown(v)}",
                              yamlio.where_of(node, k))
    return {str(k): str(v) for k, v in node.items()}


def _tflite(entry: dict[str, Any]) -> dict[str, str]:
    if "tflite" not in entry:
        return {}
    node = _mapping(entry, "tflite", ("custom_code", "builtin"))
    if len(node) != 1:
        raise TvmdevError("tflite names one of custom_code and builtin",
                          yamlio.where_of(entry, "tflite"))
    return node


def _onnx(entry: dict[str, Any]) -> tuple[str, str] | None:
    if "onnx" not in entry:
        return None
    node = _mapping(entry, "onnx", ("op_type", "domain"))
    if "op_type" not in node:
        raise TvmdevError("onnx needs op_type (and domain, default ai.onnx)",
                          yamlio.where_of(entry, "onnx"))
    domain = node.get("domain", "")
    return ("" if domain == "ai.onnx" else domain), node["op_type"]
