"""Every TFLite converter with its options, as one model: each case an operator reading the
same input ``x`` (NHWC [1, 7, 6, 3]; odd sizes give SAME uneven pads) and writing its own
output, named after the case. One build runs them all; TFLM's interpreter is the reference.

Output shapes are worked out by hand from TFLite's rules (SAME: ceil(in / stride); VALID:
(in - dilated kernel) // stride + 1), so the importer's check against the model's shapes
is a check too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

X_SHAPE = [1, 7, 6, 3]
X_RANGE = (-3.0, 3.0)  # conv sums reach past 6 (RELU6) and inside +-1 (RELU_N1_TO_1)
SAME, VALID = 0, 1
NONE, RELU, N1_TO_1, RELU6, TANH = 0, 1, 2, 3, 4


@dataclass
class Case:
    name: str
    kind: str  # BuiltinOperator
    out: list[int]  # the output's shape
    operands: list[Any] = field(default_factory=list)  # after x: "x", an array, None (-1)
    options: tuple[str, dict[str, float]] | None = None
    ops: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # tvmdev's, in order
    # TFLM has no kernel for it (RELU_N1_TO_1 as an operator of its own, a fused activation
    # on CONCATENATION): numpy is the reference instead, given x.
    numpy: Any = None
    # What TFLM leaves out, applied to its output: a fused TANH, which TFLM (like TFLite)
    # ignores in CONV_2D and FULLY_CONNECTED (CalculateActivationRange clamps RELU, RELU6
    # and RELU_N1_TO_1 only), though the schema defines it.
    after_tflm: Any = None


def _w(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def _conv(pad: int, s: tuple[int, int], act: int, d: tuple[int, int] = (1, 1)
          ) -> tuple[str, dict[str, float]]:
    return ("Conv2DOptions", {"Padding": pad, "StrideH": s[0], "StrideW": s[1],
                              "FusedActivationFunction": act, "DilationHFactor": d[0],
                              "DilationWFactor": d[1]})


def _dw(pad: int, s: tuple[int, int], act: int, mult: int, d: tuple[int, int] = (1, 1)
        ) -> tuple[str, dict[str, float]]:
    return ("DepthwiseConv2DOptions", {**_conv(pad, s, act, d)[1], "DepthMultiplier": mult})


def _pool(pad: int, k: int, s: int, act: int) -> tuple[str, dict[str, float]]:
    return ("Pool2DOptions", {"Padding": pad, "StrideH": s, "StrideW": s, "FilterHeight": k,
                              "FilterWidth": k, "FusedActivationFunction": act})


NHWC = {"layout": "NHWC"}
CASES = [
    Case("conv_same", "CONV_2D", [1, 7, 6, 4], [_w(1, 4, 3, 3, 3), _w(2, 4)],
         _conv(SAME, (1, 1), NONE), [("conv2d", {**NHWC, "auto_pad": "SAME_UPPER"})]),
    Case("conv_valid_s2_relu", "CONV_2D", [1, 3, 2, 4], [_w(3, 4, 3, 3, 3), _w(4, 4)],
         _conv(VALID, (2, 2), RELU),
         [("conv2d", {**NHWC, "auto_pad": "VALID", "strides": [2, 2], "activation": "RELU"})]),
    Case("conv_same_s2_relu6", "CONV_2D", [1, 4, 3, 5], [_w(5, 5, 3, 2, 3), _w(6, 5)],
         _conv(SAME, (2, 2), RELU6), [("conv2d", {**NHWC, "auto_pad": "SAME_UPPER",
                                                  "strides": [2, 2], "activation": "RELU6"})]),
    Case("conv_same_d2_n1to1", "CONV_2D", [1, 7, 6, 4], [_w(7, 4, 3, 3, 3), _w(8, 4)],
         _conv(SAME, (1, 1), N1_TO_1, (2, 2)),
         [("conv2d", {**NHWC, "auto_pad": "SAME_UPPER", "dilations": [2, 2],
                      "activation": "RELU_N1_TO_1"})]),
    Case("conv_valid_d21_tanh_nobias", "CONV_2D", [1, 5, 2, 2], [_w(9, 2, 2, 3, 3), None],
         _conv(VALID, (1, 2), TANH, (2, 1)),
         [("conv2d", {**NHWC, "auto_pad": "VALID", "strides": [1, 2], "dilations": [2, 1],
                      "activation": "TANH"})], after_tflm=np.tanh),
    Case("conv_group3", "CONV_2D", [1, 7, 6, 6], [_w(20, 6, 3, 3, 1), _w(21, 6)],
         _conv(SAME, (1, 1), NONE),
         [("conv2d", {**NHWC, "auto_pad": "SAME_UPPER", "group": 3})]),
    Case("dw_m1_s2_relu", "DEPTHWISE_CONV_2D", [1, 4, 3, 3], [_w(10, 1, 3, 3, 3), _w(11, 3)],
         _dw(SAME, (2, 2), RELU, 1),
         [("depthwise_conv2d", {"auto_pad": "SAME_UPPER", "strides": [2, 2],
                                "activation": "RELU"})]),
    Case("dw_m2_valid_d2_relu6", "DEPTHWISE_CONV_2D", [1, 5, 4, 6],
         [_w(12, 1, 2, 2, 6), _w(13, 6)], _dw(VALID, (1, 1), RELU6, 2, (2, 2)),
         [("depthwise_conv2d", {"auto_pad": "VALID", "dilations": [2, 2],
                                "depth_multiplier": 2, "activation": "RELU6"})]),
    Case("maxpool_same_relu", "MAX_POOL_2D", [1, 4, 3, 3], [], _pool(SAME, 3, 2, RELU),
         [("maxpool2d", {**NHWC, "auto_pad": "SAME_UPPER", "strides": [2, 2],
                         "kernel_shape": [3, 3]}), ("relu", {})]),
    Case("avgpool_same_relu6", "AVERAGE_POOL_2D", [1, 4, 3, 3], [], _pool(SAME, 3, 2, RELU6),
         [("avgpool2d", {**NHWC, "auto_pad": "SAME_UPPER", "strides": [2, 2],
                         "kernel_shape": [3, 3]}), ("relu6", {})]),
    Case("avgpool_valid_n1to1", "AVERAGE_POOL_2D", [1, 6, 5, 3], [],
         _pool(VALID, 2, 1, N1_TO_1),
         [("avgpool2d", {**NHWC, "auto_pad": "VALID", "kernel_shape": [2, 2]}),
          ("clip", {"min": -1.0, "max": 1.0})]),
    Case("pad", "PAD", [1, 10, 7, 3], [np.int32([[0, 0], [1, 2], [0, 1], [0, 0]])],
         ("PadOptions", {}), [("pad", {"pads": [0, 1, 0, 0, 0, 2, 1, 0]})]),
    Case("padv2", "PADV2", [1, 9, 8, 4],
         [np.int32([[0, 0], [2, 0], [1, 1], [0, 1]]), np.float32([0.5])],
         ("PadV2Options", {}), [("pad", {"pads": [0, 2, 1, 0, 0, 0, 1, 1], "value": 0.5})]),
    Case("mean_hw_keep", "MEAN", [1, 1, 1, 3], [np.int32([1, 2])],
         ("ReducerOptions", {"KeepDims": True}), [("mean", {"axes": [1, 2], "keepdims": 1})]),
    Case("mean_neg_drop", "MEAN", [1, 6], [np.int32([-1, 1])],
         ("ReducerOptions", {"KeepDims": False}), [("mean", {"axes": [3, 1], "keepdims": 0})]),
    # TFLM (and TFLite) refuse a fused activation on CONCATENATION, which the schema
    # allows: numpy is the reference.
    Case("concat_const_relu", "CONCATENATION", [1, 7, 6, 5], [_w(14, 1, 7, 6, 2)],
         ("ConcatenationOptions", {"Axis": 3, "FusedActivationFunction": RELU}),
         [("concat", {"axis": 3}), ("relu", {})],
         numpy=lambda x: np.maximum(np.concatenate([x, _w(14, 1, 7, 6, 2)], axis=3), 0)),
    Case("concat_const", "CONCATENATION", [1, 7, 6, 5], [_w(19, 1, 7, 6, 2)],
         ("ConcatenationOptions", {"Axis": 3}), [("concat", {"axis": 3})]),
    Case("concat_neg_axis", "CONCATENATION", [1, 14, 6, 3], ["x"],
         ("ConcatenationOptions", {"Axis": -3}), [("concat", {"axis": -3})]),
    Case("relu6", "RELU6", X_SHAPE, [], None, [("relu6", {})]),
    Case("relu_n1_to_1", "RELU_N1_TO_1", X_SHAPE, [], None,
         [("clip", {"min": -1.0, "max": 1.0})], numpy=lambda x: np.clip(x, -1, 1)),
    Case("fc_keep_relu", "FULLY_CONNECTED", [1, 7, 6, 5], [_w(15, 5, 3), _w(16, 5)],
         ("FullyConnectedOptions", {"KeepNumDims": True, "FusedActivationFunction": RELU}),
         [("fully_connected", {"keep_num_dims": 1, "activation": "RELU"})]),
    Case("fc_rows_tanh_nobias", "FULLY_CONNECTED", [7, 4], [_w(17, 4, 18), None],
         ("FullyConnectedOptions", {"FusedActivationFunction": TANH}),
         [("fully_connected", {"activation": "TANH"})], after_tflm=np.tanh),
    Case("add_relu6", "ADD", X_SHAPE, [_w(18, 3)],
         ("AddOptions", {"FusedActivationFunction": RELU6}),
         [("add", {"activation": "RELU6"})]),
    Case("mul_n1to1", "MUL", X_SHAPE, ["x"], ("MulOptions", {"FusedActivationFunction":
                                                              N1_TO_1}),
         [("mul", {"activation": "RELU_N1_TO_1"})]),
]


def model(cases: list[Case]) -> bytes:
    """The model with ``cases`` (their outputs in that order)."""
    import tflite
    from tflite_build import Graph, Op, T, build

    codes = {k: v for k, v in vars(tflite.BuiltinOperator).items() if isinstance(v, int)}
    tensors = [T("x", X_SHAPE)]
    ops, outputs = [], []
    for case in cases:
        ins = [0]
        for k, operand in enumerate(case.operands):
            if operand is None:
                ins.append(-1)
            elif isinstance(operand, str):
                ins.append(0)
            else:
                ins.append(len(tensors))
                type_ = 2 if operand.dtype == np.int32 else 0
                tensors.append(T(f"{case.name}/c{k}", list(operand.shape), operand, type=type_))
        outputs.append(len(tensors))
        tensors.append(T(case.name, case.out))
        ops.append(Op(codes[case.kind], ins, [outputs[-1]], case.options))
    return build(Graph(tensors, ops, [0], outputs))
