"""What an ONNX converter sees: the graph as the reader made it (:class:`Graph`) and the
node being converted (:class:`Context`), and how it emits a chain of tvmdev operators."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..model.shapes import Shape
from .graph import Builder, Unsupported

# Where each operator domain's operators are defined: ONNX's, and ONNX Runtime's contrib
# operators (QGemm, QLinearAdd... of quantize_static's QOperator models).
ONNX_PAGE = "https://onnx.ai/onnx/operators/onnx__{op}.html"
CONTRIB_PAGE = ("https://github.com/microsoft/onnxruntime/blob/main/docs/ContribOperators.md"
                "#com.microsoft.{op}")


def op_kind(node: Any) -> str:
    """A node's operator as messages name it: ``Conv``, or ``com.microsoft.QGemm`` outside
    the default domain."""
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"


def operator_page(kind: str) -> str:
    """The hint for an operator whose operands or attributes do not fit: its definition's
    page (ONNX's, or ONNX Runtime's for com.microsoft operators)."""
    domain, _, op = kind.rpartition(".")
    page = (CONTRIB_PAGE if domain == "com.microsoft" else ONNX_PAGE).format(op=op)
    return f"{op}'s operands and attributes: {page}"


def node_label(node: Any, i: int) -> str:
    """How messages name node ``i``: its name, else its first output's."""
    return f"node {i} '{node.name or (node.output[0] if node.output else '')}'"


@dataclass
class Graph:
    """What the reader made of an ONNX graph, shared by the converters."""

    path: Path
    opset: int  # of the default domain
    cname: dict[str, str]  # ONNX tensor name -> tvmdev tensor name
    alias: dict[str, str]  # output of a removed node (Identity, Dropout) -> its input
    consts: dict[str, np.ndarray]  # values known at import: initializers, folded nodes
    dtypes: dict[str, str]  # numpy dtype names, where ONNX's shape inference knows them
    hints: dict[str, Shape]  # static shapes from ONNX's shape inference
    uses: dict[str, int]  # readers of each tensor (nodes' operands and graph outputs)
    outputs: tuple[str, ...]
    producer: dict[str, int] = field(default_factory=dict)  # tvmdev tensor -> operator

    def resolve(self, name: str) -> str:
        """The tensor a removed node's output stands for."""
        while name in self.alias:
            name = self.alias[name]
        return name


@dataclass(frozen=True)
class Context:
    """One ONNX node being converted."""

    b: Builder
    g: Graph
    node: Any  # onnx.NodeProto
    index: int
    attrs: dict[str, Any]

    @property
    def opset(self) -> int:
        """The model's opset of the default domain."""
        return self.g.opset

    def has(self, i: int) -> bool:
        """Whether optional operand ``i`` is given."""
        return len(self.node.input) > i and self.node.input[i] != ""

    def name(self, i: int) -> str:
        """The ONNX tensor of operand ``i`` (through removed nodes)."""
        return self.g.resolve(self.node.input[i])

    def const(self, i: int) -> np.ndarray | None:
        """Operand ``i``'s value when known at import."""
        return self.g.consts.get(self.name(i)) if self.has(i) else None

    def static(self, i: int, what: str) -> np.ndarray:
        """Operand ``i``'s value, which must be known at import."""
        value = self.const(i)
        if value is None:
            raise Unsupported(f"{what} not constant")
        return value

    def ints(self, i: int, what: str) -> list[int]:
        """An integer operand known at import (a shape, pads, axes) as a list."""
        return [int(v) for v in np.ravel(self.static(i, what))]

    def inp(self, i: int) -> str:
        """The tvmdev tensor of operand ``i``; a constant is added on first use."""
        value = self.const(i)
        if value is not None:
            if value.dtype != np.float32:
                raise Unsupported(f"{value.dtype} operand")
            return self.b.constant(self.g.cname[self.name(i)], value)
        return self.g.cname[self.name(i)]

    def shape(self, i: int) -> Shape:
        """The static shape of operand ``i``."""
        value = self.const(i)
        if value is not None:
            return tuple(value.shape)
        return self.b.shapes[self.g.cname[self.name(i)]]

    def out(self, j: int = 0) -> str:
        """The tvmdev tensor of output ``j``."""
        return self.g.cname[self.node.output[j]]

    def attr(self, key: str, default: Any = None) -> Any:
        """An attribute of the node, ``default`` when absent."""
        return self.attrs.get(key, default)


Step = tuple[str, list[str | None], dict[str, Any]]


def chain(ctx: Context, steps: list[Step], out: str | None = None) -> str:
    """Emit ``steps``; each after the first takes the previous result as its first input;
    the last writes ``out`` (default: the node's output). Returns the last tensor."""
    prev: str | None = None
    last = out or ctx.out()
    for k, (op, inputs, attrs) in enumerate(steps):
        dest = last if k == len(steps) - 1 else ctx.b.fresh(f"{last}_{op}")
        ctx.b.emit(ctx.node.op_type, op, ([prev] if prev else []) + inputs, dest, attrs)
        prev = dest
    return last
