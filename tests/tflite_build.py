"""Small .tflite files built in the tests with the flatbuffers builder of the ``tflite``
package: each case the real models do not cover (several subgraphs, dynamic shapes,
shape arithmetic, operators without a converter), and every converter with its options
(tests/tflite_cases.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class T:
    name: str
    shape: list[int]
    data: np.ndarray | None = None
    signature: list[int] | None = None
    type: int = 0  # TensorType: FLOAT32 0, INT32 2, INT8 9
    quant: tuple[list[float], list[int]] | None = None  # scales, zero points
    quant_axis: int = 0  # the quantized dimension of per-channel scales
    variable: bool = False  # a variable tensor (an LSTM's or SVDF's state)


@dataclass
class Op:
    code: int  # BuiltinOperator
    inputs: list[int]
    outputs: list[int]
    # builtin options: the table's name (Conv2DOptions) and its fields (Padding: 1)
    options: tuple[str, dict[str, float]] | None = None
    # A CUSTOM operator (code 32): its custom code and its options (flexbuffer bytes).
    custom_code: str | None = None
    custom_options: bytes | None = None


@dataclass
class Graph:
    tensors: list[T]
    ops: list[Op]
    inputs: list[int]
    outputs: list[int]
    extra_subgraphs: int = 0
    codes: list[int] = field(default_factory=list)


def _ivec(b: object, start: object, values: list[int]) -> int:
    start(b, len(values))  # type: ignore[operator]
    for v in reversed(values):
        b.PrependInt32(v)  # type: ignore[attr-defined]
    return b.EndVector()  # type: ignore[attr-defined, no-any-return]


def build(g: Graph) -> bytes:
    """The bytes of a .tflite model with ``g`` as its subgraph (repeated when
    ``extra_subgraphs``)."""
    import flatbuffers
    import tflite as tfl

    b = flatbuffers.Builder(1024)
    buffers = [b""] + [t.data.tobytes() for t in g.tensors if t.data is not None]
    buf_offs = []
    for data in buffers:
        vec = b.CreateByteVector(data) if data else None
        tfl.BufferStart(b)
        if vec is not None:
            tfl.BufferAddData(b, vec)
        buf_offs.append(tfl.BufferEnd(b))
    codes = sorted({(op.code, op.custom_code or "") for op in g.ops})
    code_offs = []
    for c, custom in codes:
        name = b.CreateString(custom) if custom else None
        tfl.OperatorCodeStart(b)
        tfl.OperatorCodeAddBuiltinCode(b, c)
        tfl.OperatorCodeAddDeprecatedBuiltinCode(b, min(c, 127))
        if name is not None:
            tfl.OperatorCodeAddCustomCode(b, name)
        code_offs.append(tfl.OperatorCodeEnd(b))
    subgraphs = [_subgraph(b, tfl, g, codes) for _ in range(1 + g.extra_subgraphs)]
    vecs = []
    for start, offs in ((tfl.ModelStartBuffersVector, buf_offs),
                        (tfl.ModelStartOperatorCodesVector, code_offs),
                        (tfl.ModelStartSubgraphsVector, subgraphs)):
        start(b, len(offs))
        for o in reversed(offs):
            b.PrependUOffsetTRelative(o)
        vecs.append(b.EndVector())
    tfl.ModelStart(b)
    tfl.ModelAddVersion(b, 3)
    tfl.ModelAddBuffers(b, vecs[0])
    tfl.ModelAddOperatorCodes(b, vecs[1])
    tfl.ModelAddSubgraphs(b, vecs[2])
    b.Finish(tfl.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def _quant(b: object, tfl: object, scales: list[float], zeros: list[int], axis: int = 0
           ) -> int:
    vecs = []
    for start, values, prepend in ((tfl.QuantizationParametersStartScaleVector,  # type: ignore
                                    scales, "PrependFloat32"),
                                   (tfl.QuantizationParametersStartZeroPointVector,  # type: ignore
                                    zeros, "PrependInt64")):
        start(b, len(values))
        for v in reversed(values):
            getattr(b, prepend)(v)
        vecs.append(b.EndVector())  # type: ignore[attr-defined]
    tfl.QuantizationParametersStart(b)  # type: ignore[attr-defined]
    tfl.QuantizationParametersAddScale(b, vecs[0])  # type: ignore[attr-defined]
    tfl.QuantizationParametersAddZeroPoint(b, vecs[1])  # type: ignore[attr-defined]
    tfl.QuantizationParametersAddQuantizedDimension(b, axis)  # type: ignore[attr-defined]
    return tfl.QuantizationParametersEnd(b)  # type: ignore[attr-defined, no-any-return]


def _options(b: object, tfl: object, options: tuple[str, dict[str, float]]) -> int:
    cls, fields = options
    getattr(tfl, f"{cls}Start")(b)
    for key, value in fields.items():
        getattr(tfl, f"{cls}Add{key}")(b, value)
    return getattr(tfl, f"{cls}End")(b)  # type: ignore[no-any-return]


def _subgraph(b: object, tfl: object, g: Graph, codes: list[tuple[int, str]]) -> int:
    t_offs, nbuf = [], 0
    for t in g.tensors:
        name = b.CreateString(t.name)  # type: ignore[attr-defined]
        shape = _ivec(b, tfl.TensorStartShapeVector, t.shape)  # type: ignore[attr-defined]
        sig = (_ivec(b, tfl.TensorStartShapeSignatureVector, t.signature)  # type: ignore
               if t.signature else None)
        quant = _quant(b, tfl, *t.quant, t.quant_axis) if t.quant else None
        if t.data is not None:
            nbuf += 1
        tfl.TensorStart(b)  # type: ignore[attr-defined]
        tfl.TensorAddName(b, name)  # type: ignore[attr-defined]
        tfl.TensorAddShape(b, shape)  # type: ignore[attr-defined]
        if sig is not None:
            tfl.TensorAddShapeSignature(b, sig)  # type: ignore[attr-defined]
        if quant is not None:
            tfl.TensorAddQuantization(b, quant)  # type: ignore[attr-defined]
        tfl.TensorAddType(b, t.type)  # type: ignore[attr-defined]
        if t.variable:
            tfl.TensorAddIsVariable(b, True)  # type: ignore[attr-defined]
        tfl.TensorAddBuffer(b, nbuf if t.data is not None else 0)  # type: ignore
        t_offs.append(tfl.TensorEnd(b))  # type: ignore[attr-defined]
    o_offs = []
    for op in g.ops:
        ins = _ivec(b, tfl.OperatorStartInputsVector, op.inputs)  # type: ignore[attr-defined]
        outs = _ivec(b, tfl.OperatorStartOutputsVector, op.outputs)  # type: ignore
        opts = _options(b, tfl, op.options) if op.options else None
        custom = (b.CreateByteVector(op.custom_options)  # type: ignore[attr-defined]
                  if op.custom_options else None)
        tfl.OperatorStart(b)  # type: ignore[attr-defined]
        tfl.OperatorAddOpcodeIndex(b, codes.index((op.code, op.custom_code or "")))  # type: ignore
        if custom is not None:
            tfl.OperatorAddCustomOptions(b, custom)  # type: ignore[attr-defined]
            tfl.OperatorAddCustomOptionsFormat(b, 0)  # type: ignore[attr-defined] # flexbuffers
        tfl.OperatorAddInputs(b, ins)  # type: ignore[attr-defined]
        tfl.OperatorAddOutputs(b, outs)  # type: ignore[attr-defined]
        if op.options and opts is not None:
            kind = getattr(tfl.BuiltinOptions, op.options[0])  # type: ignore[attr-defined]
            tfl.OperatorAddBuiltinOptionsType(b, kind)  # type: ignore[attr-defined]
            tfl.OperatorAddBuiltinOptions(b, opts)  # type: ignore[attr-defined]
        o_offs.append(tfl.OperatorEnd(b))  # type: ignore[attr-defined]
    vecs = []
    for start, offs in ((tfl.SubGraphStartTensorsVector, t_offs),  # type: ignore
                        (tfl.SubGraphStartOperatorsVector, o_offs)):  # type: ignore
        start(b, len(offs))
        for o in reversed(offs):
            b.PrependUOffsetTRelative(o)  # type: ignore[attr-defined]
        vecs.append(b.EndVector())  # type: ignore[attr-defined]
    ins = _ivec(b, tfl.SubGraphStartInputsVector, g.inputs)  # type: ignore[attr-defined]
    outs = _ivec(b, tfl.SubGraphStartOutputsVector, g.outputs)  # type: ignore
    tfl.SubGraphStart(b)  # type: ignore[attr-defined]
    tfl.SubGraphAddTensors(b, vecs[0])  # type: ignore[attr-defined]
    tfl.SubGraphAddOperators(b, vecs[1])  # type: ignore[attr-defined]
    tfl.SubGraphAddInputs(b, ins)  # type: ignore[attr-defined]
    tfl.SubGraphAddOutputs(b, outs)  # type: ignore[attr-defined]
    return tfl.SubGraphEnd(b)  # type: ignore[attr-defined, no-any-return]
