"""Small ONNX models for what ONNX's node suite leaves out: older opsets whose semantics
differ (Softmax before 13 flattens at axis; Clip, Pad, ReduceMean, Unsqueeze and Slice
took attributes where they now take operands; Dropout's ratio and is_test), operands
held as initializers (folded shape arithmetic, batch norm folded or not), 1-D windows,
depthwise convolution as a group conv, Squeeze and Unsqueeze of computed tensors.

Each is a :class:`onnx_cases.NodeCase`: the tests import it and compare with ONNX Runtime
like the node suite's cases, and every one must import.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx_cases import NodeCase

F32 = np.float32
I64 = np.int64


def _case(name: str, opset: int, nodes: list[tuple[Any, ...]], inputs: dict[str, list[int]],
          inits: dict[str, np.ndarray] | None = None, outputs: tuple[str, ...] = ("y",)
          ) -> NodeCase:
    """nodes: (op, inputs, outputs, attrs); output shapes by ONNX's shape inference."""
    import onnx
    from onnx import helper, numpy_helper
    made = [helper.make_node(op, ins, outs, name=f"n{i}", **attrs)
            for i, (op, ins, outs, attrs) in enumerate(nodes)]
    outs = []
    for o in outputs:
        vi = onnx.ValueInfoProto()
        vi.name = o
        vi.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
        outs.append(vi)
    graph = helper.make_graph(
        made, name, [helper.make_tensor_value_info(k, 1, s) for k, s in inputs.items()],
        outs, [numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    model = onnx.shape_inference.infer_shapes(model, data_prop=True)
    rng = np.random.default_rng(len(name))
    data = [rng.uniform(-2, 2, s).astype(F32) for s in inputs.values()]
    if any(not o.type.tensor_type.HasField("shape") for o in model.graph.output):
        # what shape inference cannot see through (a Reshape of computed shapes): ORT's
        from onnx_cases import ort_run
        got = ort_run(bytes(model.SerializeToString()), dict(zip(inputs, data, strict=True)))
        for o, v in zip(model.graph.output, got, strict=True):
            o.type.tensor_type.shape.Clear()
            for d in v.shape:
                o.type.tensor_type.shape.dim.add().dim_value = d
    onnx.checker.check_model(model)
    return NodeCase(name, bytes(model.SerializeToString()), data)


def _w(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(F32)


def _bn(c: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"s": rng.uniform(0.5, 1.5, c).astype(F32), "b": rng.uniform(-1, 1, c).astype(F32),
            "m": rng.uniform(-1, 1, c).astype(F32), "v": rng.uniform(0.5, 2, c).astype(F32)}


def _windows() -> list[NodeCase]:
    return [
        _case("conv1d_group_dilated", 11, [("Conv", ["x", "w", "bias"], ["y"],
                                             {"group": 2, "dilations": [2], "pads": [2, 1],
                                              "strides": [2]})],
              {"x": [2, 4, 11]}, {"w": _w(1, 6, 2, 3), "bias": _w(2, 6)}),
        _case("depthwise_same_upper", 13, [("Conv", ["x", "w"], ["y"],
                                            {"group": 3, "auto_pad": "SAME_UPPER",
                                             "strides": [2, 2]})],
              {"x": [1, 3, 9, 8]}, {"w": _w(3, 6, 1, 3, 3)}),
        _case("conv_valid", 11, [("Conv", ["x", "w"], ["y"], {"auto_pad": "VALID"})],
              {"x": [1, 2, 6, 5]}, {"w": _w(4, 3, 2, 2, 3)}),
        _case("maxpool1d_opset8", 8, [("MaxPool", ["x"], ["y"],
                                       {"kernel_shape": [3], "strides": [2], "pads": [1, 1],
                                        "storage_order": 0})], {"x": [2, 3, 10]}),
        _case("avgpool1d_same_lower", 7, [("AveragePool", ["x"], ["y"],
                                           {"kernel_shape": [4], "auto_pad": "SAME_LOWER",
                                            "count_include_pad": 1})], {"x": [1, 2, 9]}),
        _case("avgpool3d_ceil", 19, [("AveragePool", ["x"], ["y"],
                                      {"kernel_shape": [2, 3, 2], "strides": [2, 2, 1],
                                       "pads": [1, 0, 1, 0, 1, 0], "ceil_mode": 1,
                                       "dilations": [1, 1, 2]})], {"x": [1, 2, 5, 6, 5]}),
        _case("maxpool3d_same", 12, [("MaxPool", ["x"], ["y"],
                                      {"kernel_shape": [3, 2, 2], "auto_pad": "SAME_UPPER",
                                       "strides": [2, 2, 2]})], {"x": [1, 2, 5, 4, 7]}),
        _case("global_average_pool_1d", 11, [("GlobalAveragePool", ["x"], ["y"], {})],
              {"x": [2, 3, 7]}),
    ]


def _old_opsets() -> list[NodeCase]:
    return [
        _case("softmax_opset11_axis1", 11, [("Softmax", ["x"], ["y"], {"axis": 1})],
              {"x": [2, 3, 4]}),
        _case("softmax_opset11_default", 11, [("Softmax", ["x"], ["y"], {})],
              {"x": [2, 3, 2, 2]}),
        _case("softmax_opset7_axis0", 7, [("Softmax", ["x"], ["y"], {"axis": 0})],
              {"x": [3, 4]}),
        _case("softmax_opset11_last", 11, [("Softmax", ["x"], ["y"], {"axis": -1})],
              {"x": [2, 5]}),
        _case("clip_opset7_attrs", 7, [("Clip", ["x"], ["y"], {"min": -0.5, "max": 0.75})],
              {"x": [3, 4]}),
        _case("clip_opset11_min_only", 11, [("Clip", ["x", "lo"], ["y"], {})], {"x": [3, 4]},
              {"lo": np.array(0.25, F32)}),
        _case("clip_opset13_max_only", 13, [("Clip", ["x", "", "hi"], ["y"], {})],
              {"x": [3, 4]}, {"hi": np.array(-0.25, F32)}),
        _case("pad_opset7_attrs", 7, [("Pad", ["x"], ["y"], {"pads": [0, 1, 2, 0, 2, 1],
                                                             "value": 1.5})], {"x": [2, 3, 2]}),
        _case("pad_opset11_value", 11, [("Pad", ["x", "p", "v"], ["y"], {})], {"x": [2, 3]},
              {"p": np.array([1, 0, 0, 2], I64), "v": np.array(-3.0, F32)}),
        _case("reduce_mean_opset13_attr", 13, [("ReduceMean", ["x"], ["y"],
                                                {"axes": [-1, 1], "keepdims": 0})],
              {"x": [2, 3, 4]}),
        _case("reduce_mean_opset18_mixed_signs", 18, [("ReduceMean", ["x", "a"], ["y"], {})],
              {"x": [2, 3, 4]}, {"a": np.array([2, -2], I64)}),
        _case("reduce_mean_opset18_noop", 18, [("ReduceMean", ["x"], ["y"],
                                                {"noop_with_empty_axes": 1})],
              {"x": [2, 3]}),
        _case("reduce_mean_opset18_all", 18, [("ReduceMean", ["x"], ["y"], {"keepdims": 0})],
              {"x": [2, 3]}),
        _case("dropout_opset7_ratio", 7, [("Relu", ["x"], ["a"], {}),
                                          ("Dropout", ["a"], ["y"], {"ratio": 0.3})],
              {"x": [2, 3]}),
        _case("dropout_opset13_inference", 13, [("Dropout", ["x", "r", "t"], ["a"], {}),
                                                ("Tanh", ["a"], ["y"], {})], {"x": [2, 3]},
              {"r": np.array(0.5, F32), "t": np.array(False)}),
        _case("gemm_opset7_c", 7, [("Gemm", ["x", "w", "c"], ["y"],
                                    {"alpha": 0.5, "beta": 2.0, "transA": 1})],
              {"x": [4, 3]}, {"w": _w(5, 4, 5), "c": _w(6, 5)}),
        _case("reshape_allowzero_no_zero", 14, [("Reshape", ["x", "s"], ["y"],
                                                 {"allowzero": 1})], {"x": [2, 3, 4]},
              {"s": np.array([4, -1], I64)}),
    ]


def _folded() -> list[NodeCase]:
    """Shape arithmetic, constants and batch norm, evaluated or folded at import."""
    chain = [("Shape", ["x"], ["s"], {}), ("Slice", ["s", "zero", "two"], ["s2"], {}),
             ("Concat", ["s2", "m1"], ["t"], {"axis": 0}), ("Reshape", ["x", "t"], ["y"], {})]
    consts = {"zero": np.array([0], I64), "two": np.array([2], I64),
              "m1": np.array([-1], I64)}
    old = [("Shape", ["x"], ["s"], {}), ("Slice", ["s"], ["s1"], {"starts": [0],
                                                                   "ends": [1]}),
           ("Cast", ["s1"], ["f"], {"to": 1}), ("Cast", ["f"], ["i"], {"to": 7}),
           ("Unsqueeze", ["scalar"], ["u"], {"axes": [0]}),
           ("Concat", ["i", "u"], ["t"], {"axis": 0}), ("Reshape", ["x", "t"], ["y"], {})]
    bn = ("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"], {"epsilon": 1e-3})
    return [
        _case("shape_slice_concat_reshape", 13, chain, {"x": [2, 3, 4, 2]}, consts),
        _case("shape_cast_unsqueeze_opset9", 9, old, {"x": [3, 2, 2]},
              {"scalar": np.array(-1, I64)}),
        _case("constant_of_shape_add", 13, [
            ("Constant", [], ["shape"], {"value": _tensor(np.array([1, 4], I64))}),
            ("ConstantOfShape", ["shape"], ["c"], {"value": _tensor(np.array([0.5], F32))}),
            ("Add", ["x", "c"], ["y"], {})], {"x": [3, 4]}),
        _case("gather_negative_index", 13, [
            ("Shape", ["x"], ["s"], {}), ("Gather", ["s", "last"], ["g"], {"axis": 0}),
            ("Concat", ["neg", "g"], ["t"], {"axis": 0}),
            ("Reshape", ["x", "t"], ["y"], {})], {"x": [2, 3, 5]},
              {"last": np.array([-1], I64), "neg": np.array([-1], I64)}),
        _case("squeeze_unsqueeze_computed", 13, [
            ("Relu", ["x"], ["r"], {}), ("Squeeze", ["r", "ax"], ["q"], {}),
            ("Unsqueeze", ["q", "ax2"], ["y"], {})], {"x": [2, 1, 3, 1]},
              {"ax": np.array([1, 3], I64), "ax2": np.array([0, -1], I64)}),
        _case("conv_bn_folded", 13, [("Conv", ["x", "w", "wb"], ["c"], {"pads": [1, 1, 1, 1]}),
                                     bn], {"x": [1, 3, 5, 5]},
              {"w": _w(7, 4, 3, 3, 3), "wb": _w(8, 4), **_bn(4, 9)}),
        _case("conv_bn_shared", 13, [("Conv", ["x", "w"], ["c"], {}), bn,
                                     ("Add", ["y", "c"], ["z"], {})], {"x": [1, 2, 4, 4]},
              {"w": _w(10, 3, 2, 1, 1), **_bn(3, 11)}, outputs=("z",)),
        _case("gemm_bn_folded", 9, [("Gemm", ["x", "w", "gc"], ["c"],
                                     {"transB": 1, "beta": 0.5}), bn], {"x": [2, 3]},
              {"w": _w(12, 4, 3), "gc": _w(13, 1, 4), **_bn(4, 14)}),
        _case("bn_opset7_rank2", 7, [("Relu", ["x"], ["c"], {}), bn], {"x": [3, 4]},
              _bn(4, 15)),
        _case("matmul_constant_batched", 13, [("MatMul", ["x", "w"], ["y"], {})],
              {"x": [2, 3, 4]}, {"w": _w(16, 4, 5)}),
        _case("concat_with_constant", 13, [("Concat", ["x", "k", "x"], ["y"], {"axis": 1})],
              {"x": [2, 3]}, {"k": _w(17, 2, 1)}),
        _case("identity_outputs", 13, [("Relu", ["x"], ["r"], {}),
                                       ("Identity", ["r"], ["y"], {}),
                                       ("Identity", ["r"], ["y2"], {}),
                                       ("Dropout", ["y2"], ["y3"], {})], {"x": [2, 3]},
              outputs=("y3", "y", "y2")),
        _case("transpose_default_flatten0", 9, [("Transpose", ["x"], ["t"], {}),
                                                ("Flatten", ["t"], ["y"], {"axis": 0})],
              {"x": [2, 3, 4]}),
    ]


def _tensor(value: np.ndarray) -> Any:
    from onnx import numpy_helper
    return numpy_helper.from_array(value)


def variant_cases() -> list[NodeCase]:
    """Every variant."""
    return _windows() + _old_opsets() + _folded()
