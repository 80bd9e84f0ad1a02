"""Shape inference and kernel params of the ops that move or reduce regions of a tensor:
fully_connected, clip (and leaky_relu's params beside it), pad, mean,
global_average_pool and concat."""

from __future__ import annotations

from typing import Any

from .shapes import (
    MAX_DIMS,
    Shape,
    ShapeError,
    activation_code,
    contiguous_strides,
    norm_axis,
    numel,
    padded,
)

FLOAT_MAX = 3.4028234663852886e38  # the largest float32: clip's default bounds
CONCAT_MAX_INPUTS = 16  # tvmk_portable.h: TVMK_CONCAT_MAX_INPUTS


def _fc_dims(shapes: list[Shape | None]) -> tuple[int, int, int]:
    x, w = shapes[0], shapes[1]
    assert x is not None and w is not None
    if len(w) != 2:
        raise ShapeError(f"weights must be 2-D [out, in], got {list(w)}")
    out_size, in_size = w
    if not x or in_size == 0 or numel(x) % in_size:
        raise ShapeError(f"input {list(x)} does not flatten to rows of {in_size} values "
                         f"(weights {list(w)})")
    if len(shapes) > 2 and shapes[2] is not None and shapes[2] != (out_size,):
        raise ShapeError(f"bias must have shape [{out_size}], got {list(shapes[2])}")
    return numel(x) // in_size, in_size, out_size


def fc_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of fully_connected: [batch, out], or with keep_num_dims the input's
    dims with the last one replaced by out (TFLite)."""
    batch, in_size, out_size = _fc_dims(shapes)
    x = shapes[0]
    assert x is not None
    if attrs["keep_num_dims"]:
        if x[-1] != in_size:
            raise ShapeError(f"keep_num_dims: the input's last dim {x[-1]} must be {in_size}")
        return (*x[:-1], out_size)
    return (batch, out_size)


def fc_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
               ) -> dict[str, Any]:
    """The kernel params of fully_connected."""
    batch, in_size, out_size = _fc_dims(shapes)
    return {"batch": batch, "in_size": in_size, "out_size": out_size,
            "activation": activation_code(attrs),
            "weights_constant": int(attrs.get("_b_constant", 0))}


def clip_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                 ) -> dict[str, Any]:
    """The kernel params of clip (and relu6: clip to [0, 6])."""
    lo, hi = attrs.get("min", 0.0), attrs.get("max", 6.0)
    if lo > hi:
        raise ShapeError(f"clip: min {lo} is larger than max {hi}")
    return {"count": numel(out), "min": lo, "max": hi}


def leaky_relu_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                      ) -> dict[str, Any]:
    """The kernel params of leaky_relu."""
    return {"count": numel(out), "alpha": attrs["alpha"]}


def clip_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of clip and relu6 (and a check of the bounds)."""
    x = shapes[0]
    assert x is not None
    clip_params(shapes, x, attrs)
    return x


def _pads(x: Shape, attrs: dict[str, Any]) -> tuple[list[int], list[int]]:
    pads = list(attrs["pads"])
    if len(pads) != 2 * len(x):
        raise ShapeError(f"pad: pads must have {2 * len(x)} values (begin of each dim, then "
                         f"end of each) for a {len(x)}-D input, got {len(pads)}")
    if min(pads, default=0) < 0:
        raise ShapeError("pad: pads must be >= 0")
    if len(x) > MAX_DIMS:
        raise ShapeError(f"at most {MAX_DIMS} dims are supported")
    return pads[:len(x)], pads[len(x):]


def pad_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of pad."""
    x = shapes[0]
    assert x is not None
    begin, end = _pads(x, attrs)
    return tuple(d + b + e for d, b, e in zip(x, begin, end, strict=True))


def pad_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                ) -> dict[str, Any]:
    """The kernel params of pad."""
    x = shapes[0]
    assert x is not None
    begin, _ = _pads(x, attrs)
    return {"ndim": len(x), "count": numel(out), "out_shape": padded(out, 1),
            "in_shape": padded(x, 1), "begin": padded(begin), "value": attrs["value"]}


def _reduced_axes(x: Shape, attrs: dict[str, Any]) -> list[int]:
    axes = attrs.get("axes")
    if axes is None:
        return list(range(len(x)))
    norm = [norm_axis(a, len(x)) for a in axes]
    if len(set(norm)) != len(norm):
        dup = next(d for d in norm if norm.count(d) > 1)
        same = [a for a, d in zip(axes, norm, strict=True) if d == dup]
        raise ShapeError(f"mean: axes {list(axes)} repeat a dim ({' and '.join(map(str, same))}"
                         f" are both dim {dup} of a {len(x)}-D input)")
    return norm


def mean_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of mean (keepdims keeps the reduced dims as 1)."""
    x = shapes[0]
    assert x is not None
    if len(x) > MAX_DIMS:
        raise ShapeError(f"at most {MAX_DIMS} dims are supported")
    axes = _reduced_axes(x, attrs)
    if attrs["keepdims"]:
        return tuple(1 if i in axes else d for i, d in enumerate(x))
    return tuple(d for i, d in enumerate(x) if i not in axes)


def mean_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                 ) -> dict[str, Any]:
    """The kernel params of mean: each input dim's stride in the output (0 if reduced)."""
    x = shapes[0]
    assert x is not None
    axes = _reduced_axes(x, attrs)
    kept = tuple(1 if i in axes else d for i, d in enumerate(x))
    strides = [0 if i in axes else s for i, s in enumerate(contiguous_strides(kept))]
    return {"ndim": len(x), "count": numel(x), "shape": padded(x, 1),
            "out_strides": padded(strides), "out_count": numel(out),
            "reduced": numel(tuple(x[i] for i in axes))}


def global_pool_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of global_average_pool (NCHW...: every dim after C becomes 1)."""
    x = shapes[0]
    assert x is not None
    if len(x) < 3:
        raise ShapeError(f"X must be N x C x D1 x ..., got {list(x)}")
    return mean_infer(shapes, _global_attrs(x))


def _global_attrs(x: Shape) -> dict[str, Any]:
    return {"axes": tuple(range(2, len(x))), "keepdims": 1}


def global_pool_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                        ) -> dict[str, Any]:
    """The kernel params of global_average_pool: a mean over the spatial dims."""
    x = shapes[0]
    assert x is not None
    return mean_params(shapes, out, _global_attrs(x))


def concat_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The output shape of concat: the inputs' dims, summed along axis."""
    first = shapes[0]
    assert first is not None
    if len(shapes) > CONCAT_MAX_INPUTS:
        raise ShapeError(f"concat: at most {CONCAT_MAX_INPUTS} inputs are supported, got "
                         f"{len(shapes)}")
    axis = norm_axis(attrs["axis"], max(len(first), 1))
    total = 0
    for s in shapes:
        assert s is not None
        if len(s) != len(first) or any(a != b for i, (a, b) in enumerate(zip(s, first,
                                                                               strict=True))
                                       if i != axis):
            raise ShapeError(f"concat: input {list(s)} does not match {list(first)} outside "
                             f"axis {axis}")
        total += s[axis]
    return (*first[:axis], total, *first[axis + 1:])


def concat_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                   ) -> dict[str, Any]:
    """The kernel params of concat: each input a block of (its axis dim x inner) values
    per outer index."""
    axis = norm_axis(attrs["axis"], max(len(out), 1))
    inner = numel(out[axis + 1:])
    blocks = [s[axis] * inner for s in shapes if s is not None]
    return {"ninputs": len(blocks), "outer": numel(out[:axis]),
            "blocks": blocks + [0] * (CONCAT_MAX_INPUTS - len(blocks))}
