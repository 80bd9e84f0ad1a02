"""Write signal.tflite, a small model with a TFLite custom operator, as a converter
writes one (TensorFlow's with ``allow_custom_ops=True``): x [2, 10] -> CUSTOM
"MovingAverage", its options a flexbuffer map {window: 3, scale: 0.5, absolute: true}
-> [2, 8] -> TANH -> y. Needs the tflite package (pip install 'tvmdev[tflite]').

    python3 examples/custom_op/make_model.py signal.tflite
    tvmdev run signal.tflite --kernels examples/custom_op/kernels/ops.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path

import flatbuffers
import tflite as tfl
from flatbuffers import flexbuffers

TANH, CUSTOM = 28, 32
OPTIONS = {"window": 3, "scale": 0.5, "absolute": True}


def _ints(b: flatbuffers.Builder, start, values: list[int]) -> int:  # type: ignore[no-untyped-def]
    start(b, len(values))
    for v in reversed(values):
        b.PrependInt32(v)
    return b.EndVector()  # type: ignore[no-any-return]


def _offsets(b: flatbuffers.Builder, start, offs: list[int]) -> int:  # type: ignore[no-untyped-def]
    start(b, len(offs))
    for o in reversed(offs):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()  # type: ignore[no-any-return]


def model() -> bytes:
    """The model's bytes."""
    b = flatbuffers.Builder(1024)
    tfl.BufferStart(b)
    buffers = [tfl.BufferEnd(b)]  # buffer 0: empty, as the schema asks
    codes = []
    for code, custom in ((CUSTOM, "MovingAverage"), (TANH, None)):
        name = b.CreateString(custom) if custom else None
        tfl.OperatorCodeStart(b)
        tfl.OperatorCodeAddBuiltinCode(b, code)
        tfl.OperatorCodeAddDeprecatedBuiltinCode(b, code)
        if name is not None:
            tfl.OperatorCodeAddCustomCode(b, name)
        codes.append(tfl.OperatorCodeEnd(b))
    tensors = []
    for tname, shape in (("x", [2, 10]), ("avg", [2, 8]), ("y", [2, 8])):
        name, dims = b.CreateString(tname), _ints(b, tfl.TensorStartShapeVector, shape)
        tfl.TensorStart(b)
        tfl.TensorAddName(b, name)
        tfl.TensorAddShape(b, dims)
        tfl.TensorAddType(b, tfl.TensorType.FLOAT32)
        tensors.append(tfl.TensorEnd(b))
    options = b.CreateByteVector(bytes(flexbuffers.Dumps(OPTIONS)))
    ops = []
    for index, ins, outs in ((0, [0], [1]), (1, [1], [2])):
        i, o = _ints(b, tfl.OperatorStartInputsVector, ins), _ints(
            b, tfl.OperatorStartOutputsVector, outs)
        tfl.OperatorStart(b)
        tfl.OperatorAddOpcodeIndex(b, index)
        tfl.OperatorAddInputs(b, i)
        tfl.OperatorAddOutputs(b, o)
        if index == 0:
            tfl.OperatorAddCustomOptions(b, options)
            tfl.OperatorAddCustomOptionsFormat(b, tfl.CustomOptionsFormat.FLEXBUFFERS)
        ops.append(tfl.OperatorEnd(b))
    t, o = (_offsets(b, tfl.SubGraphStartTensorsVector, tensors),
            _offsets(b, tfl.SubGraphStartOperatorsVector, ops))
    i, out = _ints(b, tfl.SubGraphStartInputsVector, [0]), _ints(
        b, tfl.SubGraphStartOutputsVector, [2])
    tfl.SubGraphStart(b)
    tfl.SubGraphAddTensors(b, t)
    tfl.SubGraphAddOperators(b, o)
    tfl.SubGraphAddInputs(b, i)
    tfl.SubGraphAddOutputs(b, out)
    subgraph = tfl.SubGraphEnd(b)
    vectors = [_offsets(b, tfl.ModelStartBuffersVector, buffers),
               _offsets(b, tfl.ModelStartOperatorCodesVector, codes),
               _offsets(b, tfl.ModelStartSubgraphsVector, [subgraph])]
    tfl.ModelStart(b)
    tfl.ModelAddVersion(b, 3)
    tfl.ModelAddBuffers(b, vectors[0])
    tfl.ModelAddOperatorCodes(b, vectors[1])
    tfl.ModelAddSubgraphs(b, vectors[2])
    b.Finish(tfl.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())


if __name__ == "__main__":
    Path(sys.argv[1] if len(sys.argv) > 1 else "signal.tflite").write_bytes(model())
