"""The TFLite front end: a ``.tflite`` flatbuffer read with the ``tflite`` package (the
``tflite`` extra), its one subgraph converted operator by operator (the table in
:mod:`.tflite_ops`) into a tvmdev model; each operator's output shape, inferred by
tvmdev, is checked against the one the model declares.

Tensors keep their shape, dtype, constant data and quantisation parameters; inputs and
outputs keep the model's order and are named after its tensor names made into C
identifiers. Shape arithmetic feeding a RESHAPE (SHAPE, STRIDED_SLICE, PACK on static
shapes) is folded: the RESHAPE takes its static output shape.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ..errors import TvmdevError
from ..model.quant import Quant
from ..model.shapes import Shape
from .custom import tflite_converter
from .graph import Builder, Imported, Unsupported, c_names
from .tflite_context import Context
from .tflite_ops import CONVERTERS, INT8_KINDS, INT16_KINDS, NOT_INT16, SHAPE_KINDS
from .tflite_rawint import BUILTINS as RAW_BUILTINS
from .tflite_rawint import RAW, SIGNAL
from .tflite_rawint import converter as raw_converter
from .tflite_slice import MULTI_OUTPUT

IDENTIFIER = b"TFL3"
FLOAT_ONLY = frozenset(CONVERTERS) - INT8_KINDS  # the kinds that map on float32 only
EXTRA_HINT = "pip install 'tvmdev[tflite]'"
# Errors the flatbuffer accessors raise on a truncated or corrupt buffer.
_CORRUPT = (struct.error, IndexError, ValueError, TypeError, UnicodeDecodeError,
            AttributeError, OverflowError)


@dataclass(frozen=True)
class TfTensor:
    index: int
    name: str  # the model's name
    cname: str  # as a C identifier
    shape: Shape
    signature: tuple[int, ...]  # -1: a dynamic dimension
    dtype: str  # numpy's name ("float32", "int8"), or "type N"
    data: np.ndarray | None  # a constant's values
    quant: Quant | None
    variable: bool = False  # a variable tensor (persistent state)


@dataclass(frozen=True)
class TfOp:
    index: int
    kind: str  # BUILTIN_NAME, or CUSTOM:code
    inputs: tuple[int, ...]  # -1: an absent optional input
    outputs: tuple[int, ...]
    raw: Any  # the flatbuffer Operator (for its options)


@dataclass(frozen=True)
class TfGraph:
    tensors: tuple[TfTensor, ...]
    ops: tuple[TfOp, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


def _package(path: Path) -> ModuleType:
    try:
        import tflite
    except ImportError:
        raise TvmdevError("reading a .tflite model needs the tflite extra: " + EXTRA_HINT,
                          str(path)) from None
    return tflite  # type: ignore[no-any-return]


def _names(cls: Any) -> dict[int, str]:
    return {v: k for k, v in vars(cls).items() if isinstance(v, int) and not k.startswith("_")}


def _quant(t: Any, shape: Shape, dtype: str) -> Quant | None:
    q = t.Quantization()
    if q is None or q.ScaleLength() == 0:
        return None
    scales = tuple(float(s) for s in q.ScaleAsNumpy())
    axis = int(q.QuantizedDimension())
    # TFLM ignores the axis where it does not apply, and tvmdev too: with one scale, and
    # on a 1-D int32 bias with a scale per element, whose quantization TFLM's kernels
    # never read (older converters write the weights' dimension, 3, there).
    if len(scales) == 1 or (dtype == "int32" and len(shape) == 1 and axis >= 1
                            and len(scales) == shape[0]):
        axis = 0
    zeros = tuple(int(z) for z in q.ZeroPointAsNumpy()) if q.ZeroPointLength() else ()
    if len(zeros) == 1 and len(scales) > 1:  # TFLM repeats one zero point per channel
        zeros *= len(scales)
    return Quant(scales, zeros, axis)


def _tensor(tfl: ModuleType, model: Any, raw: bytes, t: Any, i: int, cname: str) -> TfTensor:
    shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() else ()
    sig = (tuple(int(d) for d in t.ShapeSignatureAsNumpy())
           if t.ShapeSignatureLength() else shape)
    tname = _names(tfl.TensorType).get(t.Type(), f"TYPE {t.Type()}").lower()
    dtype = tname if tname in ("float32", "float16", "float64", "int8", "uint8", "int16",
                               "int32", "int64", "bool") else tname
    data = None
    buf = model.Buffers(t.Buffer()) if t.Buffer() > 0 else None
    if buf is not None:
        if buf.Offset() > 1:  # data stored after the flatbuffer
            payload = raw[buf.Offset():buf.Offset() + buf.Size()]
        else:
            payload = buf.DataAsNumpy().tobytes() if buf.DataLength() else b""
        if payload:
            size = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            if len(payload) != size:
                raise ValueError(f"tensor {i}: {len(payload)} bytes of data for "
                                 f"{list(shape)} {dtype}")
            data = np.frombuffer(payload, dtype=dtype).reshape(shape)
    name = t.Name().decode("utf-8") if t.Name() else f"tensor{i}"
    return TfTensor(i, name, cname, shape, sig, dtype, data, _quant(t, shape, dtype),
                    bool(t.IsVariable()))


def read(path: Path, raw: bytes) -> TfGraph:
    """The one subgraph of a .tflite model."""
    tfl = _package(path)
    if len(raw) < 8 or raw[4:8] != IDENTIFIER:
        raise TvmdevError("not a TFLite model (no TFL3 identifier)", str(path))
    try:
        model = tfl.Model.GetRootAsModel(raw, 0)
        if model.SubgraphsLength() * 4 > len(raw):  # flatbuffers checks no vector length
            raise ValueError("a vector longer than the file")
        if model.Version() != 3:
            raise TvmdevError(f"TFLite schema version {model.Version()}; tvmdev reads "
                              "version 3", str(path))
        if model.SubgraphsLength() != 1:
            raise TvmdevError(f"the model has {model.SubgraphsLength()} subgraphs (control "
                              "flow or several signatures); tvmdev imports one", str(path),
                              hint="export the model without control flow")
        return _subgraph(tfl, model, raw)
    except _CORRUPT:
        raise TvmdevError(f"corrupt or truncated TFLite model ({len(raw)} bytes)",
                          str(path)) from None


def _subgraph(tfl: ModuleType, model: Any, raw: bytes) -> TfGraph:
    g = model.Subgraphs(0)
    builtin = _names(tfl.BuiltinOperator)
    traw = [g.Tensors(i) for i in range(g.TensorsLength())]
    # Fused tensors are named "a;b;c" after every TF op folded into them: the first names it.
    cnames = c_names([t.Name().decode("utf-8").split(";")[0] if t.Name() else f"tensor{i}"
                      for i, t in enumerate(traw)])
    tensors = tuple(_tensor(tfl, model, raw, t, i, cnames[i]) for i, t in enumerate(traw))
    ops = []
    for i in range(g.OperatorsLength()):
        op = g.Operators(i)
        code = model.OperatorCodes(op.OpcodeIndex())
        num = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        kind = builtin.get(num, f"BUILTIN {num}")
        if kind == "CUSTOM":
            kind = "CUSTOM:" + (code.CustomCode() or b"").decode("utf-8")
        ins = tuple(int(j) for j in op.InputsAsNumpy()) if op.InputsLength() else ()
        outs = tuple(int(j) for j in op.OutputsAsNumpy()) if op.OutputsLength() else ()
        if any(not -1 <= j < len(tensors) for j in ins) or any(
                not 0 <= j < len(tensors) for j in outs):
            raise IndexError(f"operator {i} refers to a tensor that does not exist")
        ops.append(TfOp(i, kind, ins, outs, op))
    io = (tuple(int(j) for j in g.InputsAsNumpy()) if g.InputsLength() else (),
          tuple(int(j) for j in g.OutputsAsNumpy()) if g.OutputsLength() else ())
    if any(not 0 <= j < len(tensors) for j in io[0] + io[1]):
        raise IndexError("a model input or output refers to a tensor that does not exist")
    return TfGraph(tensors, tuple(ops), *io)


def _dynamic(t: TfTensor) -> list[bool]:
    """Which of a tensor's dims are dynamic: -1 in its shape signature (or not a size)."""
    sig = t.signature if len(t.signature) == len(t.shape) else t.shape
    return [s < 0 or d <= 0 for s, d in zip(sig, t.shape, strict=True)]


def _given_shape(t: TfTensor, key: str, shape: Shape, path: Path) -> Shape:
    """An --input-shape for ``t``: it sets dynamic dims only (the declared rank, and every
    static dim as declared)."""
    dyn = _dynamic(t)
    if len(shape) == len(t.shape) and all(
            y or d == s for y, d, s in zip(dyn, t.shape, shape, strict=True)):
        return shape
    fixed = [s if y else d for y, d, s in zip(dyn, t.shape, shape, strict=True)] \
        if len(shape) == len(t.shape) else [1 if y else d for y, d in zip(dyn, t.shape,
                                                                          strict=True)]
    declared = [-1 if y else d for y, d in zip(dyn, t.shape, strict=True)]
    raise TvmdevError(f"--input-shape {key}={','.join(map(str, shape))}: input '{t.name}' "
                      f"is declared {declared}; the option sets its dynamic dims (-1) only",
                      str(path), hint=f"fix it: --input-shape {t.cname}="
                                      + ",".join(map(str, fixed)))


def _input_shape(t: TfTensor, given: dict[str, Shape], path: Path) -> Shape:
    for key in (t.name, t.cname):
        if key in given:
            return _given_shape(t, key, given.pop(key), path)
    # A dynamic batch (-1 in the signature's first dim) runs with the stored batch, as in
    # TFLM; any other dynamic dimension needs a size.
    if any(d <= 0 for d in t.shape) or any(d < 0 for d in t.signature[1:]):
        example = ",".join(str(d if d > 0 else 1) for d in t.signature)
        raise TvmdevError(f"input '{t.name}' has a dynamic shape {list(t.signature)}",
                          str(path), hint=f"fix it: --input-shape {t.cname}={example}")
    return t.shape


def _check_input(t: TfTensor, path: Path) -> None:
    """A model input tvmdev takes: float32, int8 or int16 (quantized), a quantized int32
    (a QUANTIZE's input, as TFLM takes it), or raw integers (int16, int32, uint32, uint64
    without quantization: tflite_rawint)."""
    quantized = ("int8", "int16", "int32")
    if t.dtype in RAW and t.quant is None:
        return
    if t.dtype not in ("float32", *quantized):
        raise TvmdevError(f"input '{t.name}' is {t.dtype}; tvmdev imports float32, int8 and "
                          "int16 inputs (quantized), and raw integer ones", str(path))
    if t.dtype == "int8" and t.quant is None:
        raise TvmdevError(f"input '{t.name}' is {t.dtype} without quantization (scale, zero "
                          "point)", str(path))


def _folded(g: TfGraph) -> set[int]:
    """Shape arithmetic whose every use is, in the end, a RESHAPE's shape operand."""
    users: dict[int, list[tuple[TfOp, int]]] = {}
    for op in g.ops:
        for j, t in enumerate(op.inputs):
            users.setdefault(t, []).append((op, j))
    folded: set[int] = set()
    for op in reversed(g.ops):
        if op.kind in SHAPE_KINDS and not set(op.outputs) & set(g.outputs) and all(
                (u.kind == "RESHAPE" and j == 1) or u.index in folded
                for t in op.outputs for u, j in users.get(t, [])):
            folded.add(op.index)
    return folded


def convert(path: Path, raw: bytes, name: str,
            input_shapes: dict[str, Shape] | None = None) -> Imported:
    """Import the .tflite model in ``raw`` (read from ``path``) as model ``name``."""
    g = read(path, raw)
    given = dict(input_shapes or {})
    b = Builder(path)
    for t in g.tensors:
        b.reserve(t.cname)
    unknown = set(given) - {n for j in g.inputs for n in (g.tensors[j].name,
                                                          g.tensors[j].cname)}
    if unknown:
        raise TvmdevError(f"--input-shape {', '.join(sorted(unknown))}: no such input",
                          str(path),
                          hint="inputs: " + ", ".join(g.tensors[j].cname for j in g.inputs))
    for j in g.inputs:
        t = g.tensors[j]
        shape = _input_shape(t, given, path)
        _check_input(t, path)
        b.add_input(t.cname, shape, t.dtype, t.quant)
    folded = _folded(g)
    # A dynamic dim set to a size other than the stored one: each output's dims are then
    # checked where its signature is static.
    relaxed = any(b.shapes[g.tensors[j].cname] != g.tensors[j].shape for j in g.inputs)
    for op in g.ops:
        b.summary[op.kind] = b.summary.get(op.kind, 0) + 1
        if op.index not in folded:
            _convert_op(b, g, op, relaxed)
    # custom codes tvmdev does not know (a signal op it refused has its reason instead)
    customs = sorted({k.split(" ")[0].removeprefix("CUSTOM:") for k in b.unsupported
                      if k.startswith("CUSTOM:") and k.split(" ")[0] not in SIGNAL})
    hint = ("README 'tvmdev import' lists the TFLite operators that map (float32; int8: "
            "all but " + ", ".join(sorted(FLOAT_ONLY)) + "; raw integers: TFLM's signal ops "
            "and " + ", ".join(sorted(RAW_BUILTINS)) + ")")
    if customs:
        hint = (f"custom operators need their kernels: give --kernels FILE with an entry "
                f"'tflite: {{custom_code: {customs[0]}}}' (README 'Custom operators')")
    return b.finish(name, [g.tensors[j].cname for j in g.outputs], hint=hint)


def _in_reader(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by the flatbuffer reader (corrupt data), not tvmdev."""
    tb, where = exc.__traceback__, ""
    while tb is not None:
        where, tb = tb.tb_frame.f_code.co_filename, tb.tb_next
    return any(part in Path(where).parts for part in ("flatbuffers", "tflite"))


def _declared(shape: Shape, t: TfTensor, relaxed: bool) -> bool:
    """Whether ``shape`` is ``t``'s declared one (``relaxed``: in its rank and every dim
    its signature makes static)."""
    if not relaxed:
        return shape == t.shape
    return len(shape) == len(t.shape) and all(
        y or d == s for y, d, s in zip(_dynamic(t), t.shape, shape, strict=True))


def _convert_float_int8(g: TfGraph, op: TfOp, outs: list[TfTensor]
                        ) -> Callable[[Context], None]:
    """The converter of an operator on float32, int8 or int16 (16x8); Unsupported for
    other dtypes."""
    converter = CONVERTERS.get(op.kind)
    if converter is None:
        raise Unsupported()
    if len(outs) != 1 and op.kind not in MULTI_OUTPUT:
        raise Unsupported(f"{len(outs)} outputs")
    bad = sorted({t.dtype for t in outs if t.dtype != "float32"})
    if bad and not (op.kind in INT8_KINDS and bad == ["int8"]
                    or op.kind in INT16_KINDS and bad in (["int16"], ["int32"])):
        if bad == ["int16"] and op.kind in NOT_INT16:
            raise Unsupported(f"int16: {NOT_INT16[op.kind]}")
        raise Unsupported(", ".join(bad))
    return converter


def _convert_op(b: Builder, g: TfGraph, op: TfOp, relaxed: bool) -> None:
    outs = [g.tensors[j] for j in op.outputs]
    first = outs[0].name.split(";")[0] if outs else f"operator {op.index}"
    try:
        custom = tflite_converter(op.kind)
        raw = None if custom else raw_converter(g, op)  # raw integers: checks of its own
        if custom is not None:
            if len(outs) != 1:
                raise Unsupported(f"{len(outs)} outputs")
            custom(Context(b, g, op))
        elif raw is not None:
            raw(Context(b, g, op))
        else:
            _convert_float_int8(g, op, outs)(Context(b, g, op))
    except _CORRUPT as exc:  # options are read here, lazily: a corrupt table shows now
        if not _in_reader(exc):
            raise
        raise TvmdevError(f"corrupt TFLite model: operator {op.index} ({op.kind}) has "
                          "unreadable options", str(b.source)) from None
    except Unsupported as exc:
        b.refuse(op.kind, exc.detail, f"operator {op.index} '{first}'")
        for t in outs:  # later operators still convert, to list every refusal at once
            if t.cname not in b.shapes:
                b.tensor(t.cname, t.shape, t.dtype, t.quant)
        return
    for t in outs:
        if not _declared(b.shapes[t.cname], t, relaxed):
            raise TvmdevError(f"operator {op.index} {op.kind} '{first}': tvmdev infers "
                              f"{list(b.shapes[t.cname])} where the model declares "
                              f"{list(t.shape)}", str(b.source))
