"""Operator definitions: ONNX argument and attribute names, and for each op its shape
inference and kernel params (in :mod:`tvmdev.model.shapes`).

The numpy reference lives apart, in :mod:`tvmdev.model.reference`, so that it stays an
independent implementation of the same semantics.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ..errors import shown
from .custom import CUSTOM
from .fused import FUSED_OPS
from .limits import float32, int32_problem
from .math_ops import MATH_OPS, MATH_OPTIONAL_NO_DEFAULT
from .opdef import Attr as Attr  # re-exported: the op table's types
from .opdef import OpDef as OpDef
from .quant import Quant
from .rawint.form import RAW_CTYPES, RAW_DTYPES, is_raw
from .rawint.form import check_dtypes as check_int_dtypes
from .rawint.table import INT_OPDEFS, INT_OPS
from .recurrent import OPS as RECURRENT_OPS
from .regions import (
    FLOAT_MAX,
    clip_infer,
    clip_params,
    concat_infer,
    concat_params,
    fc_infer,
    fc_params,
    global_pool_infer,
    global_pool_params,
    leaky_relu_params,
    mean_infer,
    mean_params,
    pad_infer,
    pad_params,
)
from .resize import ROUNDINGS, resize_infer, resize_params
from .resize_bilinear import bilinear_params
from .s8.call import QUANTIZED, S8Call, S8Op, check_dtypes, op_dtype
from .s8.table import S8OPS
from .s16.table import S16OPS
from .shapes import (
    ACTIVATIONS,
    Shape,
    ShapeError,
    binary_infer,
    binary_params,
    count_params,
    flatten_infer,
    gemm_infer,
    gemm_params,
    matmul_infer,
    matmul_params,
    reshape_infer,
    same_infer,
    softmax_infer,
    softmax_params,
    transpose_infer,
    transpose_params,
)
from .slicing import SLICE_OPS
from .transpose_conv import TRANSPOSE_CONV_OPS
from .windowed import (
    AUTO_PADS,
    LAYOUTS,
    conv_infer,
    conv_params,
    depthwise_infer,
    depthwise_params,
    pool_infer,
    pool_params,
    resolve_window,
)


def _float_pool_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                       ) -> dict[str, Any]:
    """A float32 pool's params: its kernels clamp nothing (only the int8 ones do)."""
    if attrs.get("activation", "NONE") != "NONE":
        raise ShapeError(f"a float32 pool has no fused activation ({attrs['activation']}; "
                         "int8 pools have): put the activation after it")
    return pool_params(shapes, out, attrs)


def _float_softmax_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                          ) -> dict[str, Any]:
    """A float32 softmax's params: beta 1 only (int8 softmax takes any)."""
    if attrs.get("beta", 1.0) != 1.0:
        raise ShapeError(f"a float32 softmax takes beta 1 only, not {attrs['beta']:g} "
                         "(int8 softmax takes any)")
    return softmax_params(shapes, out, attrs)


_LAYOUT = Attr("str", "NCHW", choices=LAYOUTS)
_ACT = Attr("str", "NONE", choices=ACTIVATIONS)
# Per spatial dim (two for 2-D, one for 1-D; () is every stride and dilation 1, no pads);
# pads are [x1_begin, x2_begin, x1_end, x2_end]: [top, left, bottom, right] in 2-D.
_WINDOW_ATTRS = {"strides": Attr("ints", ()), "pads": Attr("ints", ()),
                 "dilations": Attr("ints", ()),
                 "auto_pad": Attr("str", "NOTSET", choices=AUTO_PADS)}
_POOL_ATTRS = {**_WINDOW_ATTRS, "kernel_shape": Attr("ints", None),
               "ceil_mode": Attr("bool", 0), "layout": _LAYOUT, "activation": _ACT}
_CONV_ATTRS = {**_WINDOW_ATTRS, "activation": _ACT}
# scale_h, scale_w: the ratios of input to output positions instead of TFLM's (0: TFLM's)
_RESIZE_ATTRS = {"size": Attr("ints", None, length=2), "align_corners": Attr("bool", 0),
                 "half_pixel_centers": Attr("bool", 0), "scale_h": Attr("float", 0.0),
                 "scale_w": Attr("float", 0.0)}

OPS: dict[str, OpDef] = {o.name: o for o in [
    OpDef("gemm", ("A", "B", "C"), frozenset({"C"}), ("Y",),
          {"alpha": Attr("float", 1.0), "beta": Attr("float", 1.0),
           "transA": Attr("bool", 0), "transB": Attr("bool", 0)},
          "tvmk_gemm_params", gemm_infer, gemm_params, scratch=True,
          doc="Y = alpha * A' @ B' + beta * C"),
    OpDef("matmul", ("A", "B"), frozenset(), ("Y",), {}, "tvmk_matmul_params",
          matmul_infer, matmul_params, scratch=True, doc="numpy matmul"),
    OpDef("add", ("A", "B"), frozenset(), ("C",), {"activation": _ACT}, "tvmk_binary_params",
          binary_infer, binary_params, doc="C = act(A + B), broadcasting"),
    OpDef("mul", ("A", "B"), frozenset(), ("C",), {"activation": _ACT}, "tvmk_binary_params",
          binary_infer, binary_params, doc="C = act(A * B), broadcasting"),
    OpDef("sub", ("A", "B"), frozenset(), ("C",), {"activation": _ACT}, "tvmk_binary_params",
          binary_infer, binary_params, doc="C = act(A - B), broadcasting"),
    OpDef("div", ("A", "B"), frozenset(), ("C",), {"activation": _ACT}, "tvmk_binary_params",
          binary_infer, binary_params, doc="C = act(A / B), broadcasting"),
    OpDef("maximum", ("A", "B"), frozenset(), ("C",), {}, "tvmk_binary_params",
          binary_infer, binary_params, doc="C = max(A, B), broadcasting"),
    OpDef("minimum", ("A", "B"), frozenset(), ("C",), {}, "tvmk_binary_params",
          binary_infer, binary_params, doc="C = min(A, B), broadcasting"),
    OpDef("relu", ("X",), frozenset(), ("Y",), {}, "tvmk_unary_params", same_infer,
          count_params, doc="Y = max(X, 0)"),
    OpDef("sigmoid", ("X",), frozenset(), ("Y",), {}, "tvmk_unary_params", same_infer,
          count_params, doc="Y = 1 / (1 + exp(-X))"),
    OpDef("tanh", ("input",), frozenset(), ("output",), {}, "tvmk_unary_params", same_infer,
          count_params, doc="tanh"),
    OpDef("softmax", ("input",), frozenset(), ("output",),
          {"axis": Attr("int", -1), "beta": Attr("float", 1.0)},
          "tvmk_softmax_params", softmax_infer, _float_softmax_params,
          doc="softmax of beta * input along axis (beta other than 1: int8 only)"),
    OpDef("reshape", ("data",), frozenset(), ("reshaped",), {"shape": Attr("ints", None)},
          "tvmk_unary_params", reshape_infer, count_params, view=True,
          doc="reshape (0 copies a dim, -1 infers one)"),
    OpDef("flatten", ("input",), frozenset(), ("output",), {"axis": Attr("int", 1)},
          "tvmk_unary_params", flatten_infer, count_params, view=True,
          doc="flatten to 2-D at axis"),
    OpDef("transpose", ("data",), frozenset(), ("transposed",), {"perm": Attr("ints", None)},
          "tvmk_transpose_params", transpose_infer, transpose_params,
          doc="permute dims (default: reverse)"),
    OpDef("conv2d", ("X", "W", "B"), frozenset({"B"}), ("Y",),
          {**_CONV_ATTRS, "group": Attr("int", 1), "kernel_shape": Attr("ints", None),
           "layout": _LAYOUT},
          "tvmk_conv2d_params", conv_infer, conv_params, resolve=partial(resolve_window,
                                                                          "conv2d"),
          doc="convolution, NCHW (W OIHW) or NHWC (W OHWI); pads [top, left, bottom, right]"),
    OpDef("depthwise_conv2d", ("input", "filter", "bias"), frozenset({"bias"}), ("output",),
          {**_CONV_ATTRS, "depth_multiplier": Attr("int", 1)},
          "tvmk_depthwise_conv2d_params", depthwise_infer, depthwise_params, scratch=True,
          resolve=partial(resolve_window, "depthwise_conv2d"),
          doc="TFLite depthwise convolution, NHWC, filter [1, KH, KW, C * depth_multiplier]"),
    OpDef("maxpool2d", ("X",), frozenset(), ("Y",), dict(_POOL_ATTRS),
          "tvmk_pool2d_params", pool_infer, _float_pool_params,
          resolve=partial(resolve_window, "maxpool2d"),
          doc="max pooling, NCHW or NHWC (a fused activation: int8 only)"),
    OpDef("avgpool2d", ("X",), frozenset(), ("Y",),
          {**_POOL_ATTRS, "count_include_pad": Attr("bool", 0)},
          "tvmk_pool2d_params", pool_infer, _float_pool_params,
          resolve=partial(resolve_window, "avgpool2d"),
          doc="average pooling, NCHW or NHWC (a fused activation: int8 only)"),
    OpDef("fully_connected", ("input", "weights", "bias"), frozenset({"bias"}), ("output",),
          {"keep_num_dims": Attr("bool", 0), "activation": _ACT},
          "tvmk_fully_connected_params", fc_infer, fc_params,
          doc="TFLite: act(input as [batch, in] @ weights[out, in]^T + bias)"),
    OpDef("clip", ("input",), frozenset(), ("output",),
          {"min": Attr("float", -FLOAT_MAX), "max": Attr("float", FLOAT_MAX)},
          "tvmk_clip_params", clip_infer, clip_params,
          doc="min(max(input, min), max)"),
    OpDef("relu6", ("X",), frozenset(), ("Y",), {}, "tvmk_clip_params", clip_infer,
          clip_params, doc="min(max(X, 0), 6)"),
    OpDef("pad", ("data",), frozenset(), ("output",),
          {"pads": Attr("ints", None), "value": Attr("float", 0.0),
           "mode": Attr("str", "constant", choices=("constant",))},
          "tvmk_pad_params", pad_infer, pad_params,
          doc="constant padding; pads [x1_begin, x2_begin, ..., x1_end, x2_end, ...]"),
    OpDef("mean", ("data",), frozenset(), ("reduced",),
          {"axes": Attr("ints", None), "keepdims": Attr("bool", 1)},
          "tvmk_mean_params", mean_infer, mean_params,
          doc="mean over axes (default: all)"),
    OpDef("global_average_pool", ("X",), frozenset(), ("Y",), {}, "tvmk_mean_params",
          global_pool_infer, global_pool_params, doc="mean over the dims after N, C"),
    OpDef("concat", ("inputs",), frozenset(), ("concat_result",), {"axis": Attr("int", None)},
          "tvmk_concat_params", concat_infer, concat_params, variadic=True,
          doc="concatenate any number of tensors along axis"),
    *MATH_OPS,
    OpDef("quantize", ("input",), frozenset(), ("output",), {}, "tvmk_quantize_s8_params",
          same_infer, count_params,
          doc="float32 to int8: round(input / scale) + zero_point (the output's quant)"),
    OpDef("dequantize", ("input",), frozenset(), ("output",), {}, "tvmk_quantize_s8_params",
          same_infer, count_params,
          doc="int8 to float32: (input - zero_point) * scale (the input's quant)"),
    # TFLite's activations beyond ONNX's first ones (int8 as TFLM computes them)
    OpDef("leaky_relu", ("X",), frozenset(), ("Y",), {"alpha": Attr("float", 0.01)},
          "tvmk_leaky_relu_params", same_infer, leaky_relu_params,
          doc="Y = X where X > 0, else alpha * X"),
    OpDef("hard_swish", ("X",), frozenset(), ("Y",), {}, "tvmk_unary_params", same_infer,
          count_params, doc="Y = X * min(max(X + 3, 0), 6) / 6"),
    OpDef("log_softmax", ("input",), frozenset(), ("output",), {"axis": Attr("int", -1)},
          "tvmk_softmax_params", softmax_infer, softmax_params,
          doc="log of softmax along axis (int8: the last)"),
    OpDef("resize_nearest", ("X",), frozenset(), ("Y",),
          {**_RESIZE_ATTRS, "rounding": Attr("str", "tflm", choices=ROUNDINGS),
           "offset": Attr("float", 0.0)},
          "tvmk_resize_nearest_params", resize_infer, resize_params,
          doc="TFLite's nearest-neighbour resize of NHWC's H and W to size [OH, OW]"),
    *INT_OPDEFS,
    *RECURRENT_OPS,
    OpDef("resize_bilinear", ("X",), frozenset(), ("Y",),
          _RESIZE_ATTRS,
          "tvmk_resize_bilinear_params", resize_infer, bilinear_params,
          doc="TFLite's bilinear resize of NHWC's H and W to size [OH, OW]"),
    *SLICE_OPS,
    *TRANSPOSE_CONV_OPS, *FUSED_OPS,
]}

# Attributes that may be left unset even without a default (kernel_shape of conv2d and
# perm of transpose are derived).
OPTIONAL_NO_DEFAULT = {("conv2d", "kernel_shape"), ("transpose", "perm"), ("mean", "axes"),
                       *MATH_OPTIONAL_NO_DEFAULT}

# int16: TFLite's 16x8 activations (or raw int16); int64: 16x8 conv and fully_connected
# biases.
DTYPES = ("float32", "int8", "int32", *sorted(set(RAW_DTYPES) - {"int8", "int32"}), "int64")
# Dtypes a kernel library may name beyond those a model declares: q4c32 is a float32
# constant quantised to 4 bits in blocks (tvmdev/quant.py).
KERNEL_DTYPES = ("float32", "q4c32", *DTYPES[1:])
CTYPES = {"float32": "float", "q4c32": "struct tvmk_q4c32", "int8": "int8_t",
          "int32": "int32_t", "int64": "int64_t", **RAW_CTYPES}
# Ops with an int8 form only: between float32 and int8, and the plan's fusions.
QUANT_OPS = ("quantize", "dequantize", *(o.name for o in FUSED_OPS))


def op_params(name: str, shapes: list[Shape | None], out: Shape, attrs: dict[str, Any],
              dtypes: list[str | None], quants: list[Quant | None]) -> tuple[str, dict[str, Any]]:
    """The params struct of an operator's kernels and its values: the float op's, or, for
    an operator on int8 tensors, its int8 form's (:mod:`tvmdev.model.s8`). ``dtypes`` and
    ``quants``: of each input (None when absent), then of the output. Raises ShapeError
    for a mix of dtypes no kernel takes. A custom op's are its own (:mod:`.custom`)."""
    custom = CUSTOM.get(name)
    if custom is not None:
        return custom.struct, custom.values(shapes, out, attrs, dtypes, quants)
    raw = INT_OPS.get(name)
    if raw is not None and is_raw(raw, dtypes, quants):
        call = S8Call(shapes, out, attrs, dtypes, quants)
        check_int_dtypes(name, raw, call)
        return raw.params_struct, raw.params(call)
    form = op_dtype(dtypes)
    if name in QUANT_OPS or form in QUANTIZED:
        table = quantized_forms(form)
        entry = table.get(name)
        if entry is None:
            raise ShapeError(f"{name} has no {form} form yet ({form} ops: "
                             f"{', '.join(table)})")
        call = S8Call(shapes, out, attrs, dtypes, quants)
        check_dtypes(name, entry, call)
        return entry.params_struct, entry.params(call)
    opdef = OPS[name]
    index = {i for i, a in enumerate(opdef.arg_names(len(dtypes) - 1))
             if a in opdef.index_inputs}
    odd = sorted({d for i, d in enumerate(dtypes)
                  if i not in index and d not in (None, "float32", "q4c32")})
    if odd:
        raise ShapeError(f"{name} on float32 takes float32 tensors, not {', '.join(odd)}")
    for i in sorted(index):
        if dtypes[i] not in (None, "int32"):
            raise ShapeError(f"{name}: {opdef.inputs[i]} must be int32, not {dtypes[i]}")
    return opdef.params_struct, opdef.params(shapes, out, attrs)


def quantized_forms(form: str) -> dict[str, S8Op]:
    """The table of an operator dtype's integer forms: int16's (TFLite's 16x8) or int8's
    (quantize and dequantize between float32 and int8 too)."""
    return S16OPS if form == "int16" else S8OPS


def scratch_structs() -> frozenset[str]:
    """The params structs that end with scratch_bytes and scratch: the float ops' with
    ``scratch`` and the int8 forms' with ``scratch``."""
    return frozenset([o.params_struct for o in OPS.values() if o.scratch]
                     + [e.params_struct for t in (S8OPS, S16OPS) for e in t.values()
                        if e.scratch])


def check_attrs(op: OpDef, given: dict[str, Any]) -> dict[str, Any]:
    """Validate and complete an operator's attributes; raises ShapeError naming the key."""
    out: dict[str, Any] = {}
    for key in given:
        if key not in op.attrs:
            known = ", ".join(op.attrs) or "none"
            raise ShapeError(f"unknown attribute {shown(key)} for {op.name} (known: {known})")
    for key, spec in op.attrs.items():
        if key in given:
            out[key] = _attr_value(key, spec, given[key])
        elif spec.default is None and (op.name, key) not in OPTIONAL_NO_DEFAULT:
            raise ShapeError(f"{op.name} needs the attribute '{key}'")
        else:
            out[key] = spec.default
    return out


def _attr_value(key: str, spec: Attr, value: Any) -> Any:
    """One given attribute, checked against its spec and what C can hold, and
    normalised."""
    if spec.kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ShapeError(f"attribute '{key}' must be a number, got {shown(value)}")
        if float32(value) is None:
            raise ShapeError(f"attribute '{key}' is {shown(value)}, which is not a finite "
                             "float32")
        return float(value)
    if spec.kind == "str":
        if not isinstance(value, str) or value not in spec.choices:
            raise ShapeError(f"attribute '{key}' must be one of {', '.join(spec.choices)}, "
                             f"got {shown(value)}")
        return value
    if spec.kind in ("int", "bool"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ShapeError(f"attribute '{key}' must be an integer, got {shown(value)}")
        if spec.kind == "bool" and value not in (0, 1):
            raise ShapeError(f"attribute '{key}' must be 0 or 1, got {shown(value)}")
    elif not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ShapeError(f"attribute '{key}' must be a list of integers, got "
                         f"{shown(value)}")
    elif spec.length is not None and len(value) != spec.length:
        raise ShapeError(f"attribute '{key}' must have {spec.length} values, got "
                         f"{len(value)}")
    problem = int32_problem(value)
    if problem is not None:
        raise ShapeError(f"attribute '{key}': {problem}")
    return tuple(value) if isinstance(value, list) else value


def resolved_attrs(op: OpDef, shapes: list[Shape | None], given: dict[str, Any]
                   ) -> dict[str, Any]:
    """The attributes checked and completed (:func:`check_attrs`), then resolved into the
    form the op's shape inference and params take."""
    attrs = check_attrs(op, given)
    return op.resolve(shapes, attrs) if op.resolve is not None else attrs


def kernel_params(op: OpDef, dtypes: dict[str, str] | None = None,
                  struct: str | None = None) -> list[tuple[str, str]]:
    """(C type, name) of every parameter of a kernel for ``op``, in calling order:
    ``dtypes`` gives each argument's (default float32), ``struct`` the params struct
    (default the float op's; an int8 kernel's is its :data:`S8OPS` entry's)."""
    dtypes = dtypes or {}
    params = [(f"{'' if a in op.states else 'const '}{CTYPES[dtypes.get(a, 'float32')]} *", a)
              for a in op.inputs]
    if op.variadic:
        params[-1] = (f"const {CTYPES[dtypes.get(op.inputs[-1], 'float32')]} *const *",
                      op.inputs[-1])
    params += [(f"{CTYPES[dtypes.get(a, 'float32')]} *", a) for a in op.outputs]
    params += [(f"const struct {struct or op.params_struct} *", "params"),
               ("void *", "resource_handle")]
    return params


def kernel_prototype(op: OpDef, name: str, dtypes: dict[str, str] | None = None,
                     struct: str | None = None) -> str:
    """``int32_t name(const float *A, ..., void *resource_handle)``, wrapped at 100 columns
    (``dtypes`` and ``struct`` as :func:`kernel_params`)."""
    return wrapped_prototype(name, kernel_params(op, dtypes, struct))


def wrapped_prototype(name: str, params: list[tuple[str, str]]) -> str:
    """``int32_t name(<type><name>, ...)`` of (C type, name) pairs, wrapped at 100 columns
    with the continuation lines under the first parameter."""
    parts = [f"{t}{n}" for t, n in params]
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


def memory_params(op: OpDef, kind: str, dtypes: dict[str, str], struct: str
                  ) -> list[tuple[str, str]]:
    """(C type, name) of each parameter of a memory kind's kernel: every tensor an
    address, then params, resource_handle and the scratch address."""
    addr = f"tvm_device_{kind}_addr_t "
    tensors = {*op.inputs, *op.outputs}
    return ([(addr if n in tensors else t, n) for t, n in kernel_params(op, dtypes, struct)]
            + [(addr, "scratch")])
