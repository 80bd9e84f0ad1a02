"""Integer inputs of an ONNX model (PyTorch exports token ids and positions as int64):
taken only where tvmdev can compute with them, as the indices of a Gather of float32
data (the executor's input is then int32) or read only for their shape, and refused in
one line anywhere else. Integer constants are shape arithmetic, folded at import
(:mod:`.onnx_fold`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import TvmdevError
from .onnx_context import node_label

INDEX_DTYPES = ("int32", "int64")
PASS_THROUGH = ("Identity",)
# The operand an integer input may be, by operator: Gather's indices.
INDEX_OPERANDS = {"Gather": 1}


def _readers(model: Any, name: str) -> list[tuple[int, Any, int]]:
    """(node index, node, operand position) of every node reading ``name``, through
    Identity nodes."""
    out, todo, seen = [], [name], set()
    while todo:
        t = todo.pop()
        seen.add(t)
        for i, n in enumerate(model.graph.node):
            for pos, src in enumerate(n.input):
                if src != t:
                    continue
                if n.op_type in PASS_THROUGH and n.output and n.output[0] not in seen:
                    todo.append(n.output[0])
                else:
                    out.append((i, n, pos))
    return out


def check_index_input(model: Any, vi: Any, dtype: str, path: Path) -> str:
    """The note for an int32 or int64 input that only Gathers read as indices or only
    Shape reads (empty for int32); else a one-line refusal naming the first reader that
    needs more. (A Gather of data other than float32 is refused as it converts.)"""
    outputs = {o.name for o in model.graph.output}
    for i, n, pos in _readers(model, vi.name):
        if n.op_type == "Shape" or INDEX_OPERANDS.get(n.op_type) == pos:
            continue
        use = (f"the data of {n.op_type}" if n.op_type in INDEX_OPERANDS
               else f"operand {pos} of {n.op_type}")
        raise TvmdevError(f"input '{vi.name}' is {dtype} and is {use} ({node_label(n, i)}); "
                          "tvmdev takes int32 and int64 inputs only as the indices of a "
                          "Gather (or read only by Shape)", str(path),
                          hint="a value the model needs at import (a shape, axes, pads) "
                               "must be an initializer: export it as a constant")
    if vi.name in outputs:
        raise TvmdevError(f"input '{vi.name}' is {dtype} and a graph output", str(path))
    return (f"{path}: input '{vi.name}' is {dtype} in the model; the executor takes it as "
            "int32 (Gather indices)" if dtype == "int64" else "")
