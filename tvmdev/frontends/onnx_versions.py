"""Which versions of each ONNX operator tvmdev implements.

A model's opset says which version of each operator is in effect: the newest version
whose ``since_version`` is at most the opset (``onnx.defs.get_schema(op,
max_inclusive_version=opset)``). tvmdev imports any opset from 7 to the newest the
installed ``onnx`` package defines, and checks each node: the version in effect must be
one listed here, each reviewed against the operator's changelog. A version that only adds
element types tvmdev refuses anyway (bfloat16, float16, float8, int4...) keeps the
meaning; a change of meaning is handled by the converter (``ctx.opset``, noted). A
version not listed (an ``onnx`` release newer than this table) is refused in one line.
"""

from __future__ import annotations

from types import ModuleType

OLDEST_OPSET = 7  # of the default domain

# op -> since_versions tvmdev implements; what changed is noted where it is not types.
VERSIONS: dict[str, tuple[int, ...]] = {
    "Abs": (1, 6, 13),
    "Add": (1, 6, 7, 13, 14),  # 7: numpy broadcasting (before: the broadcast attribute)
    "AveragePool": (1, 7, 10, 11, 19, 22),  # 7 count_include_pad, 10 ceil_mode, 19 dilations
    "BatchNormalization": (1, 6, 7, 9, 14, 15),  # before 9: spatial
    "Cast": (1, 6, 9, 13, 19, 21, 23, 24, 25, 28),  # 19: saturate, 28: round_mode (float8)
    "Clip": (1, 6, 11, 12, 13),  # 11: min and max become operands
    "Concat": (1, 4, 11, 13),
    "Constant": (1, 9, 11, 12, 13, 19, 21, 23, 24, 25),  # 12: value_float(s), value_int(s)
    "ConstantOfShape": (9, 20, 21, 23, 24, 25),
    "Conv": (1, 11, 22),
    "ConvTranspose": (1, 11, 22),
    "DequantizeLinear": (10, 13, 19, 21, 23, 24, 25, 28),  # 13: axis, 21: block_size
    "Div": (1, 6, 7, 13, 14),
    "Dropout": (1, 6, 7, 10, 12, 13, 22),  # 12: ratio and training_mode operands
    "Erf": (9, 13),
    "Exp": (1, 6, 13),
    "Flatten": (1, 9, 11, 13, 21, 23, 24, 25),
    "Gather": (1, 11, 13),
    "Gelu": (20,),
    "Gemm": (1, 6, 7, 9, 11, 13),  # 11: C optional
    "GlobalAveragePool": (1, 22),
    "Identity": (1, 13, 14, 16, 19, 21, 23, 24, 25),
    "LayerNormalization": (17,),  # stash_type 1 (float32 statistics) only
    "Log": (1, 6, 13),
    "MatMul": (1, 9, 13),
    "MaxPool": (1, 8, 10, 11, 12, 22),  # 8 Indices, 10 ceil_mode and dilations
    "Mul": (1, 6, 7, 13, 14),
    "Neg": (1, 6, 13),
    "Pad": (1, 2, 11, 13, 18, 19, 21, 23, 24, 25),  # 11: operands, 18: axes
    "Pow": (1, 7, 12, 13, 15),  # 7: numpy broadcasting, 12: an integer exponent
    "QLinearConv": (10,),
    "QLinearMatMul": (10, 21),
    "QuantizeLinear": (10, 13, 19, 21, 23, 24, 25, 28),  # 13: axis, 21: block_size
    "ReduceMax": (1, 11, 12, 13, 18, 20),  # 18: axes an operand, noop_with_empty_axes
    "ReduceMean": (1, 11, 13, 18),  # 18: axes an operand, noop_with_empty_axes
    "ReduceMin": (1, 11, 12, 13, 18, 20),  # 18: axes an operand, noop_with_empty_axes
    "ReduceProd": (1, 11, 13, 18),  # 18: axes an operand, noop_with_empty_axes
    "ReduceSum": (1, 11, 13),  # 13: axes an operand, noop_with_empty_axes
    "Relu": (1, 6, 13, 14),
    "Reshape": (1, 5, 13, 14, 19, 21, 23, 24, 25),  # 5: shape an operand, 14: allowzero
    "Resize": (11, 13, 18, 19),  # 18: antialias, axes, keep_aspect_ratio_policy; 19: a mode
    "Shape": (1, 13, 15, 19, 21, 23, 24, 25),  # 15: start and end
    "Sigmoid": (1, 6, 13),
    "Slice": (1, 10, 11, 13),  # 10: operands
    "Softmax": (1, 11, 13),  # 13: along axis (before: the input flattened at axis)
    "Split": (2, 11, 13, 18),  # 13: split an operand, 18: num_outputs
    "Sqrt": (1, 6, 13),
    "Squeeze": (1, 11, 13, 21, 23, 24, 25),  # 13: axes an operand
    "Sub": (1, 6, 7, 13, 14),
    "Tanh": (1, 6, 13),
    "Transpose": (1, 13, 21, 23, 24, 25),
    "Unsqueeze": (1, 11, 13, 21, 23, 24, 25),  # 13: axes an operand
}


def newest_opset(onnx: ModuleType) -> int:
    """The newest opset of the default domain the installed onnx package defines."""
    return int(onnx.defs.onnx_opset_version())


def unknown_version(onnx: ModuleType, op: str, opset: int) -> str | None:
    """Why ``op`` at ``opset`` is not imported (a version in effect tvmdev has not
    reviewed), or None. Operators tvmdev does not map are not this function's to
    refuse."""
    known = VERSIONS.get(op)
    if known is None:
        return None
    try:
        since = int(onnx.defs.get_schema(op, max_inclusive_version=opset).since_version)
    except onnx.defs.SchemaError:
        return f"no version at opset {opset}"
    if since in known:
        return None
    return (f"version {since}, in effect at opset {opset}; tvmdev implements versions "
            f"{', '.join(map(str, known))}")
