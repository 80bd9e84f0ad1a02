"""The small expression language of a custom operator's rules (its output shape, what it
requires of its inputs, its kernels' scratch), as a ``--kernels`` file writes them::

    shape: [X[0], "X[1] * repeats"]      # or "X": the same shape as input X
    require: ["X[-1] % 2 == 0"]
    scratch: "numel(X) * 4"

A name is an input or output argument (its shape, a tuple of ints: ``X[0]``, ``len(X)``,
``numel(X)``) or a declared param. Integers and floats, ``+ - * // %``, comparisons,
``and``/``or``/``not``, ``a if c else b``, tuples and lists (``*X`` unpacks a shape in
one), indexing and slicing a shape (``X[-1]``, ``X[:-1]``), ``min``, ``max``, ``len``,
``numel``. Nothing else (no attributes, no other calls, no ``**``): a rule is read with
:mod:`ast` and evaluated by walking it, so generation never runs a user's code, an unknown
name is found when the file loads, and a failure says which rule and which operands.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge}
_CALLS: dict[str, Callable[..., Any]] = {
    "min": min, "max": max, "len": len,
    "numel": lambda s: math.prod(s)}
LIMIT = 1 << 62  # any value beyond this is refused, before it grows further


class ExprError(Exception):
    """A rule that cannot be read, or fails for these operands."""


@dataclass(frozen=True)
class Expr:
    """One rule, parsed and checked against the names it may use."""

    text: str
    tree: ast.Expression

    def __call__(self, env: Mapping[str, Any]) -> Any:
        """The rule's value with ``env``'s names; raises ExprError."""
        try:
            return _eval(self.tree.body, env)
        except ExprError:
            raise
        except (ArithmeticError, IndexError, TypeError, ValueError) as exc:
            raise ExprError(str(exc) or type(exc).__name__) from None


def parse(text: object, names: frozenset[str]) -> Expr:
    """``text`` (a string, or a YAML int) as a rule over ``names``; raises ExprError."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise ExprError(f"a rule is an expression in quotes or a number, not {text!r}")
    source = str(text)
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"cannot read {source!r}: {exc.msg}") from None
    for node in ast.walk(tree):
        _check(node, names)
    return Expr(source, tree)


def _check(node: ast.AST, names: frozenset[str]) -> None:
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp,
               ast.Tuple, ast.List, ast.Subscript, ast.Slice, ast.Starred, ast.Name,
               ast.Load, ast.Constant,
               ast.Call, ast.USub, ast.UAdd, ast.Not, ast.And, ast.Or, *_BINARY, *_COMPARE)
    if not isinstance(node, allowed):
        raise ExprError(f"{type(node).__name__} is not part of the rule language "
                        "(+ - * // %, comparisons, and/or/not, if-else, [i], [i:j], *X, "
                        "min, max, len, numel)")
    if isinstance(node, ast.Constant) and (
            isinstance(node.value, bool) or not isinstance(node.value, (int, float))):
        raise ExprError(f"constant {node.value!r}: rules take numbers only")
    if isinstance(node, ast.Name) and node.id not in names and node.id not in _CALLS:
        raise ExprError(f"unknown name {node.id!r} (names: {', '.join(sorted(names))})")
    if isinstance(node, ast.Call) and (not isinstance(node.func, ast.Name)
                                       or node.func.id not in _CALLS or node.keywords):
        raise ExprError("the only calls are min, max, len and numel")


def _eval(node: ast.AST, env: Mapping[str, Any]) -> Any:
    value = _node(node, env)
    if isinstance(value, int) and abs(value) > LIMIT:
        raise ExprError(f"a value beyond 2^62 ({value})")
    return value


def _node(node: ast.AST, env: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env[node.id] if node.id in env else _CALLS[node.id]
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_eval(node.left, env), _eval(node.right, env))
    if isinstance(node, (ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp)):
        return _logic(node, env)
    if isinstance(node, (ast.Tuple, ast.List)):
        return _sequence(node, env)
    if isinstance(node, ast.Subscript):
        return _subscript(node, env)
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return _CALLS[node.func.id](*(_eval(a, env) for a in node.args))


def _logic(node: ast.AST, env: Mapping[str, Any]) -> Any:
    """A unary operator, and/or, a comparison chain or a conditional."""
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        return not v if isinstance(node.op, ast.Not) else -v if isinstance(
            node.op, ast.USub) else +v
    if isinstance(node, ast.BoolOp):
        values = (_eval(v, env) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, env)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    assert isinstance(node, ast.IfExp)
    return _eval(node.body if _eval(node.test, env) else node.orelse, env)


def _sequence(node: ast.Tuple | ast.List, env: Mapping[str, Any]) -> tuple[Any, ...]:
    """A tuple or list, a shape unpacked into it with ``*``."""
    out: list[Any] = []
    for e in node.elts:
        if isinstance(e, ast.Starred):
            inner = _eval(e.value, env)
            if not isinstance(inner, tuple):
                raise ExprError("only a shape is unpacked with *")
            out += inner
        else:
            out.append(_eval(e, env))
    return tuple(out)


def _subscript(node: ast.Subscript, env: Mapping[str, Any]) -> Any:
    """A shape's dim (``X[i]``) or dims (``X[i:j]``)."""
    seq = _eval(node.value, env)
    if isinstance(node.slice, ast.Slice):
        sl = node.slice
        bounds = [None if b is None else _eval(b, env) for b in (sl.lower, sl.upper, sl.step)]
        if not isinstance(seq, tuple) or not all(
                b is None or (isinstance(b, int) and not isinstance(b, bool)) for b in bounds):
            raise ExprError("only a shape is sliced, by integers")
        if bounds[2] == 0:
            raise ExprError("a slice step of 0")
        return seq[slice(*bounds)]
    index = _eval(node.slice, env)
    if not isinstance(seq, tuple) or isinstance(index, bool) or not isinstance(index, int):
        raise ExprError("only a shape is indexed, by an integer")
    if not -len(seq) <= index < len(seq):
        raise ExprError(f"index {index} is out of range for a shape of {len(seq)} dims")
    return seq[index]
