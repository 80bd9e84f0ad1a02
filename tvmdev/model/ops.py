"""Operator definitions: ONNX argument and attribute names, shape inference, and the
kernel params each call is resolved into at generation time.

The numpy reference lives apart, in :mod:`tvmdev.reference`, so that it stays an
independent implementation of the same semantics.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Shape = tuple[int, ...]
MAX_DIMS = 6


class ShapeError(ValueError):
    """An operator's inputs or attributes don't fit; the message names what is wrong."""


@dataclass(frozen=True)
class Attr:
    kind: str  # "float", "int", "bool", "ints"
    default: Any  # None: required
    length: int | None = None  # for "ints": required length


@dataclass(frozen=True)
class OpDef:
    """One operator: its ONNX signature and how it maps to a C kernel."""

    name: str
    inputs: tuple[str, ...]
    optional: frozenset[str]
    outputs: tuple[str, ...]
    attrs: dict[str, Attr]
    params_struct: str
    infer: Callable[[list[Shape | None], dict[str, Any]], Shape]
    params: Callable[[list[Shape | None], Shape, dict[str, Any]], dict[str, Any]]
    # Inputs the output may share memory with (elementwise: the planner may go in place).
    inplace: tuple[int, ...] = ()
    # The params struct ends with scratch_bytes and scratch: its kernels may be given
    # scratch in the workspace (tvmdev.model.scratch).
    scratch: bool = False
    # Inputs that must be constants (known at generation time).
    doc: str = ""

    @property
    def required_inputs(self) -> int:
        return sum(1 for a in self.inputs if a not in self.optional)


def numel(shape: Shape) -> int:
    return math.prod(shape)


def contiguous_strides(shape: Shape) -> list[int]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return strides[::-1]


def _norm_axis(axis: int, ndim: int, what: str = "axis") -> int:
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


def _gemm_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    m, n, _ = _gemm_dims(shapes, attrs)
    if len(shapes) > 2 and shapes[2] is not None:
        _broadcast_to(shapes[2], (m, n), "C")
    return (m, n)


def _gemm_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                 ) -> dict[str, Any]:
    m, n, k = _gemm_dims(shapes, attrs)
    c_m = c_n = 0
    if len(shapes) > 2 and shapes[2] is not None:
        c_m, c_n = _broadcast_to(shapes[2], (m, n), "C")
    return {"M": m, "N": n, "K": k, "trans_a": int(attrs["transA"]),
            "trans_b": int(attrs["transB"]), "alpha": float(attrs["alpha"]),
            "beta": float(attrs["beta"]), "c_stride_m": c_m, "c_stride_n": c_n,
            "b_constant": int(attrs.get("_b_constant", 0))}


def _matmul_parts(shapes: list[Shape | None]) -> tuple[Shape, int, int, int, int, int, int]:
    a, b = shapes[0], shapes[1]
    assert a is not None and b is not None
    if len(a) < 1 or len(b) < 1:
        raise ShapeError("matmul needs inputs of at least 1 dim")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    m, ka = a2[-2], a2[-1]
    kb, n = b2[-2], b2[-1]
    if ka != kb:
        raise ShapeError(f"A is {list(a)} and B is {list(b)}: inner dimensions {ka} and {kb} "
                         "differ")
    ab, bb = a2[:-2], b2[:-2]
    nb = max(len(ab), len(bb))
    ab = (1,) * (nb - len(ab)) + ab
    bb = (1,) * (nb - len(bb)) + bb
    batch_shape = []
    for x, y in zip(ab, bb, strict=True):
        if x != y and 1 not in (x, y):
            raise ShapeError(f"batch dims of {list(a)} and {list(b)} do not broadcast")
        batch_shape.append(max(x, y))
    batch = numel(tuple(batch_shape))
    na, nbb = numel(ab), numel(bb)
    if na not in (1, batch) or nbb not in (1, batch):
        raise ShapeError(f"batch dims of {list(a)} and {list(b)}: only whole-batch "
                         "broadcasting is supported")
    out: list[int] = list(batch_shape)
    if len(a) > 1:
        out.append(m)
    if len(b) > 1:
        out.append(n)
    a_stride = m * ka if na == batch and batch > 1 else 0
    b_stride = kb * n if nbb == batch and batch > 1 else 0
    return tuple(out), batch, m, n, ka, a_stride, b_stride


def _matmul_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    return _matmul_parts(shapes)[0]


def _matmul_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                   ) -> dict[str, Any]:
    _, batch, m, n, k, a_stride, b_stride = _matmul_parts(shapes)
    return {"batch": batch, "M": m, "N": n, "K": k, "a_batch_stride": a_stride,
            "b_batch_stride": b_stride, "b_constant": int(attrs.get("_b_constant", 0))}


# --- elementwise ----------------------------------------------------------------------

def _binary_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
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


def _padded(values: Sequence[int], fill: int = 0) -> list[int]:
    return list(values) + [fill] * (MAX_DIMS - len(values))


def _binary_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                   ) -> dict[str, Any]:
    a, b = shapes[0], shapes[1]
    assert a is not None and b is not None
    shape = out if out else (1,)
    return {"ndim": len(shape), "count": numel(out), "shape": _padded(shape, 1),
            "a_strides": _padded(_broadcast_to(a or (1,), shape, "A")),
            "b_strides": _padded(_broadcast_to(b or (1,), shape, "B"))}


def _same_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    assert shapes[0] is not None
    return shapes[0]


def _count_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                  ) -> dict[str, Any]:
    return {"count": numel(out)}


def _softmax_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    x = shapes[0]
    assert x is not None
    _norm_axis(attrs["axis"], max(len(x), 1))
    return x


def _softmax_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                    ) -> dict[str, Any]:
    shape = out or (1,)
    ax = _norm_axis(attrs["axis"], len(shape))
    return {"outer": numel(shape[:ax]), "axis": shape[ax], "inner": numel(shape[ax + 1:])}


# --- layout ---------------------------------------------------------------------------

def _reshape_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
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


def _flatten_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
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


def _transpose_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    x = shapes[0]
    assert x is not None
    if len(x) > MAX_DIMS:
        raise ShapeError(f"at most {MAX_DIMS} dims are supported")
    return tuple(x[p] for p in _perm(x, attrs))


def _transpose_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                      ) -> dict[str, Any]:
    x = shapes[0]
    assert x is not None
    perm = _perm(x, attrs)
    strides = contiguous_strides(x)
    shape = out or (1,)
    return {"ndim": len(shape), "count": numel(out), "shape": _padded(shape, 1),
            "in_strides": _padded([strides[p] for p in perm] or [1])}


# --- convolution and pooling ----------------------------------------------------------

def _window(size: int, k: int, stride: int, pad0: int, pad1: int, dil: int,
            ceil_mode: bool, what: str) -> int:
    span = dil * (k - 1) + 1
    room = size + pad0 + pad1 - span
    if room < 0:
        raise ShapeError(f"{what}: the window ({span}) is larger than the padded input "
                         f"({size + pad0 + pad1})")
    out = (-(-room // stride) if ceil_mode else room // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pad0:
        out -= 1  # the last window would start in the padding
    return out


def _check_nchw(x: Shape | None, what: str) -> Shape:
    assert x is not None
    if len(x) != 4:
        raise ShapeError(f"{what} must be 4-D NCHW, got {list(x)}")
    return x


def _conv_dims(shapes: list[Shape | None], attrs: dict[str, Any]) -> dict[str, int]:
    x = _check_nchw(shapes[0], "X")
    w = _check_nchw(shapes[1], "W")
    n, c, h, wd = x
    m, cg, kh, kw = w
    group = attrs["group"]
    if group < 1 or c % group or m % group:
        raise ShapeError(f"group {group} must divide the input channels {c} and the output "
                         f"channels {m}")
    if cg != c // group:
        raise ShapeError(f"W is {list(w)}: expected {c // group} input channels per group "
                         f"(X has {c} channels, group {group})")
    if attrs["kernel_shape"] is not None and list(attrs["kernel_shape"]) != [kh, kw]:
        raise ShapeError(f"kernel_shape {list(attrs['kernel_shape'])} does not match W "
                         f"{list(w)}")
    if len(shapes) > 2 and shapes[2] is not None and shapes[2] != (m,):
        raise ShapeError(f"B must have shape [{m}], got {list(shapes[2])}")
    sh, sw = attrs["strides"]
    pt, pl, pb, pr = attrs["pads"]
    dh, dw = attrs["dilations"]
    if min(sh, sw, dh, dw) < 1 or min(pt, pl, pb, pr) < 0:
        raise ShapeError("strides and dilations must be >= 1 and pads >= 0")
    oh = _window(h, kh, sh, pt, pb, dh, False, "conv2d")
    ow = _window(wd, kw, sw, pl, pr, dw, False, "conv2d")
    return {"N": n, "C": c, "H": h, "W": wd, "M": m, "KH": kh, "KW": kw, "OH": oh, "OW": ow,
            "stride_h": sh, "stride_w": sw, "pad_top": pt, "pad_left": pl, "dil_h": dh,
            "dil_w": dw, "group": group}


def _conv_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    d = _conv_dims(shapes, attrs)
    return (d["N"], d["M"], d["OH"], d["OW"])


def _conv_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                 ) -> dict[str, Any]:
    return dict(_conv_dims(shapes, attrs))


def _pool_dims(shapes: list[Shape | None], attrs: dict[str, Any], avg: bool) -> dict[str, int]:
    n, c, h, w = _check_nchw(shapes[0], "X")
    kh, kw = attrs["kernel_shape"]
    sh, sw = attrs["strides"]
    pt, pl, pb, pr = attrs["pads"]
    dh, dw = (1, 1) if avg else attrs["dilations"]
    if min(kh, kw, sh, sw, dh, dw) < 1 or min(pt, pl, pb, pr) < 0:
        raise ShapeError("kernel_shape, strides and dilations must be >= 1 and pads >= 0")
    if pt >= kh or pb >= kh or pl >= kw or pr >= kw:
        raise ShapeError("pads must be smaller than the kernel")
    ceil = bool(attrs["ceil_mode"])
    oh = _window(h, kh, sh, pt, pb, dh, ceil, "pool")
    ow = _window(w, kw, sw, pl, pr, dw, ceil, "pool")
    return {"N": n, "C": c, "H": h, "W": w, "KH": kh, "KW": kw, "OH": oh, "OW": ow,
            "stride_h": sh, "stride_w": sw, "pad_top": pt, "pad_left": pl,
            "pad_bottom": pb, "pad_right": pr, "dil_h": dh, "dil_w": dw,
            "count_include_pad": int(attrs.get("count_include_pad", 0))}


def _maxpool_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    d = _pool_dims(shapes, attrs, False)
    return (d["N"], d["C"], d["OH"], d["OW"])


def _avgpool_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    d = _pool_dims(shapes, attrs, True)
    return (d["N"], d["C"], d["OH"], d["OW"])


def _maxpool_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                    ) -> dict[str, Any]:
    return _pool_dims(shapes, attrs, False)


def _avgpool_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                    ) -> dict[str, Any]:
    return _pool_dims(shapes, attrs, True)


_POOL_ATTRS = {"kernel_shape": Attr("ints", None, 2), "strides": Attr("ints", (1, 1), 2),
               "pads": Attr("ints", (0, 0, 0, 0), 4), "ceil_mode": Attr("bool", 0)}

OPS: dict[str, OpDef] = {o.name: o for o in [
    OpDef("gemm", ("A", "B", "C"), frozenset({"C"}), ("Y",),
          {"alpha": Attr("float", 1.0), "beta": Attr("float", 1.0),
           "transA": Attr("bool", 0), "transB": Attr("bool", 0)},
          "tvmk_gemm_params", _gemm_infer, _gemm_params, scratch=True,
          doc="Y = alpha * A' @ B' + beta * C"),
    OpDef("matmul", ("A", "B"), frozenset(), ("Y",), {}, "tvmk_matmul_params",
          _matmul_infer, _matmul_params, scratch=True, doc="numpy matmul"),
    OpDef("add", ("A", "B"), frozenset(), ("C",), {}, "tvmk_binary_params",
          _binary_infer, _binary_params, inplace=(0, 1), doc="C = A + B, broadcasting"),
    OpDef("mul", ("A", "B"), frozenset(), ("C",), {}, "tvmk_binary_params",
          _binary_infer, _binary_params, inplace=(0, 1), doc="C = A * B, broadcasting"),
    OpDef("relu", ("X",), frozenset(), ("Y",), {}, "tvmk_unary_params", _same_infer,
          _count_params, inplace=(0,), doc="Y = max(X, 0)"),
    OpDef("sigmoid", ("X",), frozenset(), ("Y",), {}, "tvmk_unary_params", _same_infer,
          _count_params, inplace=(0,), doc="Y = 1 / (1 + exp(-X))"),
    OpDef("tanh", ("input",), frozenset(), ("output",), {}, "tvmk_unary_params", _same_infer,
          _count_params, inplace=(0,), doc="tanh"),
    OpDef("softmax", ("input",), frozenset(), ("output",), {"axis": Attr("int", -1)},
          "tvmk_softmax_params", _softmax_infer, _softmax_params, inplace=(0,),
          doc="softmax along axis"),
    OpDef("reshape", ("data",), frozenset(), ("reshaped",), {"shape": Attr("ints", None)},
          "tvmk_unary_params", _reshape_infer, _count_params, inplace=(0,),
          doc="reshape (0 copies a dim, -1 infers one)"),
    OpDef("flatten", ("input",), frozenset(), ("output",), {"axis": Attr("int", 1)},
          "tvmk_unary_params", _flatten_infer, _count_params, inplace=(0,),
          doc="flatten to 2-D at axis"),
    OpDef("transpose", ("data",), frozenset(), ("transposed",), {"perm": Attr("ints", None)},
          "tvmk_transpose_params", _transpose_infer, _transpose_params,
          doc="permute dims (default: reverse)"),
    OpDef("conv2d", ("X", "W", "B"), frozenset({"B"}), ("Y",),
          {"strides": Attr("ints", (1, 1), 2), "pads": Attr("ints", (0, 0, 0, 0), 4),
           "dilations": Attr("ints", (1, 1), 2), "group": Attr("int", 1),
           "kernel_shape": Attr("ints", None, 2)},
          "tvmk_conv2d_params", _conv_infer, _conv_params,
          doc="NCHW convolution; pads are [top, left, bottom, right]"),
    OpDef("maxpool2d", ("X",), frozenset(), ("Y",),
          {**_POOL_ATTRS, "dilations": Attr("ints", (1, 1), 2)},
          "tvmk_pool2d_params", _maxpool_infer, _maxpool_params, doc="NCHW max pooling"),
    OpDef("avgpool2d", ("X",), frozenset(), ("Y",),
          {**_POOL_ATTRS, "count_include_pad": Attr("bool", 0)},
          "tvmk_pool2d_params", _avgpool_infer, _avgpool_params, doc="NCHW average pooling"),
]}

# Attributes that may be left unset even without a default (kernel_shape of conv2d and
# perm of transpose are derived).
OPTIONAL_NO_DEFAULT = {("conv2d", "kernel_shape"), ("transpose", "perm")}

DTYPES = ("float32",)
# Dtypes a kernel library may name beyond those a model declares: q4c32 is a float32
# constant quantised to 4 bits in blocks (tvmdev/quant.py).
KERNEL_DTYPES = ("float32", "q4c32")
CTYPES = {"float32": "float", "q4c32": "struct tvmk_q4c32"}


def check_attrs(op: OpDef, given: dict[str, Any]) -> dict[str, Any]:
    """Validate and complete an operator's attributes; raises ShapeError naming the key."""
    out: dict[str, Any] = {}
    for key in given:
        if key not in op.attrs:
            known = ", ".join(op.attrs) or "none"
            raise ShapeError(f"unknown attribute '{key}' for {op.name} (known: {known})")
    for key, spec in op.attrs.items():
        if key not in given:
            if spec.default is None and (op.name, key) not in OPTIONAL_NO_DEFAULT:
                raise ShapeError(f"{op.name} needs the attribute '{key}'")
            out[key] = spec.default
            continue
        value = given[key]
        if spec.kind == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ShapeError(f"attribute '{key}' must be a number, got {value!r}")
            if not math.isfinite(value):
                raise ShapeError(f"attribute '{key}' must be finite")
            out[key] = float(value)
        elif spec.kind in ("int", "bool"):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ShapeError(f"attribute '{key}' must be an integer, got {value!r}")
            if spec.kind == "bool" and value not in (0, 1):
                raise ShapeError(f"attribute '{key}' must be 0 or 1, got {value}")
            out[key] = value
        else:
            if not isinstance(value, list) or not all(
                    isinstance(v, int) and not isinstance(v, bool) for v in value):
                raise ShapeError(f"attribute '{key}' must be a list of integers, got {value!r}")
            if spec.length is not None and len(value) != spec.length:
                raise ShapeError(f"attribute '{key}' must have {spec.length} values, got "
                                 f"{len(value)}")
            out[key] = tuple(value)
    return out


def kernel_params(op: OpDef, dtypes: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(C type, name) of every parameter of a kernel for ``op``, in calling order."""
    dtypes = dtypes or {}
    params = [(f"const {CTYPES[dtypes.get(a, 'float32')]} *", a) for a in op.inputs]
    params += [("float *", a) for a in op.outputs]
    params += [(f"const struct {op.params_struct} *", "params"), ("void *", "resource_handle")]
    return params


def kernel_prototype(op: OpDef, name: str) -> str:
    """``int32_t name(const float *A, ..., void *resource_handle)``, wrapped at 100 columns."""
    parts = [f"{t}{n}" for t, n in kernel_params(op)]
    head = f"int32_t {name}("
    lines, line = [], head
    for i, part in enumerate(parts):
        piece = part + (", " if i < len(parts) - 1 else ")")
        if len(line) + len(piece.rstrip()) > 100 and line.strip() != head.strip():
            lines.append(line.rstrip())
            line = " " * len(head)
        line += piece
    lines.append(line)
    return "\n".join(lines)
