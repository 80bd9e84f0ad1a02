"""Shape inference and kernel parameters, op by op: what each operator's output shape
is, and the values of the params struct its kernels receive, both computed at generation
time. The op table (:mod:`tvmdev.model.ops`) names these functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Shape = tuple[int, ...]
MAX_DIMS = 6
# Fused activations, in the order of their codes (tvmk_portable.h: TVMK_ACT_*).
ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1", "TANH")


class ShapeError(ValueError):
    """An operator's inputs or attributes don't fit; the message names what is wrong."""



def activation_code(attrs: dict[str, Any]) -> int:
    """The fused activation of an op's attributes as the kernels' code."""
    return ACTIVATIONS.index(attrs.get("activation", "NONE"))


def numel(shape: Shape) -> int:
    """The number of elements of a shape."""
    return math.prod(shape)


def contiguous_strides(shape: Shape) -> list[int]:
    """Row-major strides, in elements, of a shape."""
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return strides[::-1]


def norm_axis(axis: int, ndim: int, what: str = "axis") -> int:
    """``axis`` in [0, ndim), from numpy's [-ndim, ndim); raises ShapeError outside."""
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{what} {axis} is out of range for a {ndim}-D tensor")
    return axis % ndim


# --- gemm / matmul --------------------------------------------------------------------

def _gemm_dims(shapes: list[Shape | None], attrs: dict[str, Any]) -> tuple[int, int, int]:
    a, b = shapes[0], shapes[1]
    assert a is not None and b is not None
    if len(a) != 2 or len(b) != 2:
        raise ShapeError(f"A and B must be 2-D, got {list(a)} and {list(b)}")
    m, ka = (a[1], a[0]) if attrs["transA"] else a
    kb, n = (b[1], b[0]) if attrs["transB"] else b
    if ka != kb:
        raise ShapeError(f"A is {list(a)} and B is {list(b)}: inner dimensions {ka} and {kb} "
                         "differ" + (" (after transA/transB)" if attrs["transA"]
                                     or attrs["transB"] else ""))
    return m, n, ka


def _broadcast_to(src: Shape, dst: Shape, what: str) -> list[int]:
    """Strides (in elements) of ``src`` read as ``dst`` under numpy broadcasting."""
    if len(src) > len(dst):
        raise ShapeError(f"{what} {list(src)} has more dims than {list(dst)}")
    padded = (1,) * (len(dst) - len(src)) + tuple(src)
    base = contiguous_strides(padded)
    strides = []
    for s, d, st in zip(padded, dst, base, strict=True):
        if s == d:
            strides.append(st if d != 1 else 0)
        elif s == 1:
            strides.append(0)
        else:
            raise ShapeError(f"{what} {list(src)} does not broadcast to {list(dst)}")
    return strides


def gemm_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of gemm."""
    m, n, _ = _gemm_dims(shapes, attrs)
    if len(shapes) > 2 and shapes[2] is not None:
        _broadcast_to(shapes[2], (m, n), "C")
    return (m, n)


def gemm_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                 ) -> dict[str, Any]:
    """The kernel params of gemm."""
    m, n, k = _gemm_dims(shapes, attrs)
    c_m = c_n = 0
    if len(shapes) > 2 and shapes[2] is not None:
        c_m, c_n = _broadcast_to(shapes[2], (m, n), "C")
    return {"M": m, "N": n, "K": k, "trans_a": int(attrs["transA"]),
            "trans_b": int(attrs["transB"]), "alpha": float(attrs["alpha"]),
            "beta": float(attrs["beta"]), "c_stride_m": c_m, "c_stride_n": c_n,
            "b_constant": int(attrs.get("_b_constant", 0))}


@dataclass(frozen=True)
class _MatMul:
    """A matmul resolved numpy's way: a batch of M x K @ K x N products."""

    out: Shape
    batch_shape: Shape
    m: int
    n: int
    k: int
    a_strides: tuple[int, ...]  # per batch dim, in elements; 0 where A broadcasts
    b_strides: tuple[int, ...]


def _batch_strides(dims: Shape, batch_shape: Shape, matrix: int) -> tuple[int, ...]:
    """The stride (in elements) of an operand with batch ``dims`` along each dim of
    ``batch_shape``: 0 where it broadcasts (a missing or size-1 dim)."""
    full = (1,) * (len(batch_shape) - len(dims)) + dims
    contig = contiguous_strides(full)
    return tuple(0 if d == 1 else s * matrix for d, s in zip(full, contig, strict=True))


def _matmul_parts(shapes: list[Shape | None]) -> _MatMul:
    a, b = shapes[0], shapes[1]
    assert a is not None and b is not None
    if len(a) < 1 or len(b) < 1:
        raise ShapeError("matmul needs inputs of at least 1 dim")
    # numpy: a 1-D A is a row [1, K], a 1-D B a column [K, 1]; the added dim is dropped.
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    m, ka = a2[-2], a2[-1]
    kb, n = b2[-2], b2[-1]
    if ka != kb:
        raise ShapeError(f"A is {list(a)} and B is {list(b)}: inner dimensions {ka} and {kb} "
                         "differ")
    ab, bb = a2[:-2], b2[:-2]
    nb = max(len(ab), len(bb))
    batch_shape = []
    for x, y in zip((1,) * (nb - len(ab)) + ab, (1,) * (nb - len(bb)) + bb, strict=True):
        if x != y and 1 not in (x, y):
            raise ShapeError(f"batch dims of {list(a)} and {list(b)} do not broadcast: "
                             f"{list(ab)} and {list(bb)}")
        batch_shape.append(max(x, y))
    out: list[int] = list(batch_shape)
    if len(a) > 1:
        out.append(m)
    if len(b) > 1:
        out.append(n)
    bs = tuple(batch_shape)
    return _MatMul(tuple(out), bs, m, n, ka, _batch_strides(ab, bs, m * ka),
                   _batch_strides(bb, bs, kb * n))


def matmul_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of matmul."""
    return _matmul_parts(shapes).out


def matmul_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                   ) -> dict[str, Any]:
    """The kernel params of matmul."""
    mm = _matmul_parts(shapes)
    fill = MAX_DIMS - 2 - len(mm.batch_shape)
    return {"batch": numel(mm.batch_shape), "M": mm.m, "N": mm.n, "K": mm.k,
            "ndim": len(mm.batch_shape), "shape": [*mm.batch_shape, *[1] * fill],
            "a_strides": [*mm.a_strides, *[0] * fill],
            "b_strides": [*mm.b_strides, *[0] * fill],
            "b_constant": int(attrs.get("_b_constant", 0))}


# --- elementwise ----------------------------------------------------------------------

def binary_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of add and mul."""
    a, b = shapes[0], shapes[1]
    assert a is not None and b is not None
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + a
    pb = (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(pa, pb, strict=True):
        if x != y and 1 not in (x, y):
            raise ShapeError(f"shapes {list(a)} and {list(b)} do not broadcast")
        out.append(max(x, y))
    if len(out) > MAX_DIMS:
        raise ShapeError(f"at most {MAX_DIMS} dims are supported")
    return tuple(out)


def padded(values: Sequence[int], fill: int = 0) -> list[int]:
    """``values`` filled with ``fill`` to MAX_DIMS entries (a params array)."""
    return list(values) + [fill] * (MAX_DIMS - len(values))


def binary_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                   ) -> dict[str, Any]:
    """The kernel params of add and mul."""
    a, b = shapes[0], shapes[1]
    assert a is not None and b is not None
    shape = out if out else (1,)
    return {"ndim": len(shape), "count": numel(out), "shape": padded(shape, 1),
            "a_strides": padded(_broadcast_to(a or (1,), shape, "A")),
            "b_strides": padded(_broadcast_to(b or (1,), shape, "B")),
            "activation": activation_code(attrs)}


def same_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of an elementwise unary op."""
    assert shapes[0] is not None
    return shapes[0]


def count_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                  ) -> dict[str, Any]:
    """The kernel params of an op over a count of elements."""
    return {"count": numel(out)}


def softmax_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of softmax."""
    x = shapes[0]
    assert x is not None
    norm_axis(attrs["axis"], max(len(x), 1))
    return x


def softmax_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                    ) -> dict[str, Any]:
    """The kernel params of softmax."""
    shape = out or (1,)
    ax = norm_axis(attrs["axis"], len(shape))
    return {"outer": numel(shape[:ax]), "axis": shape[ax], "inner": numel(shape[ax + 1:])}


# --- layout ---------------------------------------------------------------------------

def reshape_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of reshape."""
    x = shapes[0]
    assert x is not None
    target = list(attrs["shape"])
    if target.count(-1) > 1:
        raise ShapeError("reshape: at most one dim may be -1")
    out = []
    for i, d in enumerate(target):
        if d == 0:
            if i >= len(x):
                raise ShapeError(f"reshape: dim {i} is 0 (copy) but the input has {len(x)} dims")
            out.append(x[i])
        elif d < -1:
            raise ShapeError(f"reshape: dim {d} is invalid")
        else:
            out.append(d)
    if -1 in out:
        known = numel(tuple(d for d in out if d != -1))
        if known == 0 or numel(x) % known:
            raise ShapeError(f"reshape: cannot reshape {list(x)} into {target}")
        out[out.index(-1)] = numel(x) // known
    if numel(tuple(out)) != numel(x):
        raise ShapeError(f"reshape: cannot reshape {list(x)} ({numel(x)} elements) into "
                         f"{out} ({numel(tuple(out))} elements)")
    return tuple(out)


def flatten_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of flatten."""
    x = shapes[0]
    assert x is not None
    axis = attrs["axis"]
    if not -len(x) <= axis <= len(x):
        raise ShapeError(f"flatten: axis {axis} is out of range for a {len(x)}-D tensor")
    if axis < 0:
        axis += len(x)
    return (numel(x[:axis]), numel(x[axis:]))


def _perm(x: Shape, attrs: dict[str, Any]) -> list[int]:
    perm = attrs["perm"]
    if perm is None:
        return list(range(len(x)))[::-1]
    if sorted(perm) != list(range(len(x))):
        raise ShapeError(f"transpose: perm {list(perm)} is not a permutation of "
                         f"{list(range(len(x)))}")
    return list(perm)


def transpose_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of transpose."""
    x = shapes[0]
    assert x is not None
    if len(x) > MAX_DIMS:
        raise ShapeError(f"at most {MAX_DIMS} dims are supported")
    return tuple(x[p] for p in _perm(x, attrs))


def transpose_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                      ) -> dict[str, Any]:
    """The kernel params of transpose."""
    x = shapes[0]
    assert x is not None
    perm = _perm(x, attrs)
    strides = contiguous_strides(x)
    shape = out or (1,)
    return {"ndim": len(shape), "count": numel(out), "shape": padded(shape, 1),
            "in_strides": padded([strides[p] for p in perm] or [1])}
