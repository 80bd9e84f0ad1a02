"""What tvmdev knows of CMSIS-NN's kernels beyond its data (runtime/kernels/cmsis_nn):
when an operator goes to the portable kernel instead (TFLM's kernels/cmsis_nn conditions),
and how an operator's params become the request that asks CMSIS-NN's own
``*_get_buffer_size*`` for its scratch (buffer_sizes.c), the dims TFLM passes.

CMSIS-NN v7.0.0's wrappers choose among their own kernels (1x1, 1xN and general
convolutions; 3x3, fast and general depthwise ones, which take dilation and any channel
multiplier; per-tensor or per-channel fully connected), so those cases need no decline
here: the wrapper serves them, as in TFLM. Declined:

- what TFLM's cmsis_nn kernels send to its reference kernels: ADD and MUL with a
  broadcast;
- a PAD of more than 4 dims (arm_pad_s8 takes N, H, W, C; TFLM's cmsis_nn PAD reads the
  last four);
- an int16 SVDF state whose zero point is not 0, which CMSIS-NN ignores (TFLM's reference
  kernel subtracts it);
- int16 (16x8): what the _s16 kernels compute otherwise than TFLM's reference kernels
  (zero points they ignore: ADD's, FULLY_CONNECTED's; its per-channel weights; a grouped
  CONV_2D; an int16 SOFTMAX over rows of one, where arm_softmax_s16 differs; an int16
  LOGISTIC or TANH whose input rescale arm_nn_activation_s16 cannot express);
- padding the fast paths a wrapper picks do not handle, which TFLite's SAME and VALID
  rarely or never produce but ONNX pads and tvmdev's YAML can: on Helium, the 1xN
  convolution (``arm_convolve_1_x_n_s8``) only takes TFLite's SAME split of the padding
  and no negative total (a VALID convolution whose last window stops short of the
  input's end); off Helium, the 3x3 depthwise kernel (``arm_depthwise_conv_3x3_s8``)
  reads one column to the right of a window unchecked, so it takes at most one column of
  right padding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...model.graph import Model, Operator
from ...model.s8.call import CArray


def _broadcast(model: Model, op: Operator, params: dict[str, Any], arch: str) -> str | None:
    out = model.tensors[op.outputs[0]].shape
    shapes = [model.tensors[t].shape for t in op.inputs if t is not None]
    if any(s != out for s in shapes):
        return ("a broadcast (CMSIS-NN's elementwise kernels take operands of one shape; "
                "TFLM's cmsis_nn kernel uses its reference kernel too)")
    return None


def _conv_padding(model: Model, op: Operator, p: dict[str, Any], arch: str) -> str | None:
    """arm_convolve_wrapper_s8's choice of the 1xN kernel, on Helium, with padding it
    cannot take (it would compute a wrong column, or fail)."""
    one_by_one = (p["pad_top"] == 0 and p["pad_left"] == 0 and p["KH"] == 1 and p["KW"] == 1
                  and p["dil_h"] == 1 and p["dil_w"] == 1 and p["group"] == 1)
    one_by_n = (not one_by_one and p["H"] == 1 and p["KH"] == 1 and p["dil_w"] == 1
                and p["stride_w"] * p["C"] % 4 == 0 and p["group"] == 1)
    if arch != "mve" or not one_by_n:
        return None
    total = (p["OW"] - 1) * p["stride_w"] + p["KW"] - p["W"]
    if total >= 0 and 2 * p["pad_left"] + total % 2 == total:
        return None
    return (f"CMSIS-NN's 1xN convolution on Helium takes TFLite's SAME padding only (left "
            f"{p['pad_left']} of a total {total})")


def _conv_add_tiles(model: Model, op: Operator, p: dict[str, Any], arch: str) -> str | None:
    """conv2d_add's kernel runs the convolution a tile of rows at a time: what
    :func:`_conv_padding` declines, and on Helium a 1xN convolution (a tile of one row
    would take the 1xN kernel, whose padding rule the whole convolution's dims check)."""
    why = _conv_padding(model, op, p, arch)
    if why is None and arch == "mve" and p["KH"] == 1 and p["KW"] > 1:
        return "a 1xN convolution on Helium, whose tiles of one row CMSIS-NN's 1xN kernel takes"
    return why


def _depthwise_padding(model: Model, op: Operator, p: dict[str, Any], arch: str
                       ) -> str | None:
    """arm_depthwise_conv_wrapper_s8's choice of the 3x3 kernel, off Helium, with more
    than one column of right padding (it would read past the row)."""
    three = (arch != "mve" and p["mult"] == 1 and p["N"] == 1 and p["dil_h"] == 1
             and p["dil_w"] == 1 and p["KH"] == 3 and p["KW"] == 3 and p["pad_top"] <= 1
             and p["pad_left"] <= 1)
    right = (p["OW"] - 1) * p["stride_w"] + p["KW"] - p["W"] - p["pad_left"]
    if not three or right <= 1:
        return None
    return (f"CMSIS-NN's 3x3 depthwise kernel takes at most one column of right padding "
            f"(here {right})")


def _pad_rank(model: Model, op: Operator, p: dict[str, Any], arch: str) -> str | None:
    """arm_pad_s8 takes N, H, W, C: TFLM's cmsis_nn PAD reads the last four dims."""
    if p["ndim"] <= 4:
        return None
    return f"a {p['ndim']}-D pad (arm_pad_s8 takes at most 4 dims)"


def _svdf_state(model: Model, op: Operator, p: dict[str, Any], arch: str) -> str | None:
    """arm_svdf_state_s16_s8 reads no state zero point (TFLM's reference kernel does)."""
    if p.get("state_zero_point", 0) == 0:
        return None
    return (f"a state zero point of {p['state_zero_point']} (CMSIS-NN's SVDF takes 0 "
            "only)")


Rule = Callable[[Model, Operator, dict[str, Any], str], str | None]
DECLINES: dict[str, Rule] = {
    "svdf": _svdf_state,
    "add": _broadcast,
    "mul": _broadcast,
    "conv2d": _conv_padding,
    "conv2d_add": _conv_add_tiles,
    "depthwise_conv2d": _depthwise_padding,
    "pad": _pad_rank,
}


def _add16(model: Model, op: Operator, p: dict[str, Any], arch: str) -> str | None:
    if p["a_offset"] or p["b_offset"] or p["out_offset"]:
        return ("a nonzero int16 zero point (arm_elementwise_add_s16 ignores them; TFLM's "
                "reference kernel adds them)")
    return _broadcast(model, op, p, arch)


def _conv16(model: Model, op: Operator, p: dict[str, Any], arch: str) -> str | None:
    return "a grouped convolution (arm_convolve_s16 has no groups)" if p["group"] != 1 \
        else None


def _fc16(model: Model, op: Operator, p: dict[str, Any], arch: str) -> str | None:
    if p["channel_multiplier"] is not None:
        return "weights per channel (arm_fully_connected_s16 takes one multiplier)"
    if p["input_offset"] or p["output_offset"]:
        return "a nonzero int16 zero point (arm_fully_connected_s16 ignores them)"
    return None


def _softmax16(model: Model, op: Operator, p: dict[str, Any], arch: str) -> str | None:
    if p["exp_lut"] is not None and p["depth"] == 1:
        return "an int16 softmax over rows of one (arm_softmax_s16 writes another value)"
    return None


def _lut16(model: Model, op: Operator, p: dict[str, Any], arch: str) -> str | None:
    """arm_nn_activation_s16 rescales its input by 3 << left_shift, or by 3 and a rounding
    right shift: TFLM's multiplier must be 0 (a power-of-two scale) or 3 * 2^j."""
    m = p["input_multiplier"]
    if m == 0 or any(m == 3 << j for j in range(14)):
        return None
    return (f"an input multiplier of {m} (arm_nn_activation_s16 rescales by 3 * 2^j only, "
            "which an input scale of a power of two gives)")


# int16 (16x8): what CMSIS-NN's _s16 kernels do not compute as TFLM's reference kernels.
DECLINES16: dict[str, Rule] = {
    "sigmoid": _lut16,
    "tanh": _lut16,
    "softmax": _softmax16,
    "add": _add16,
    "mul": _broadcast,
    "conv2d": _conv16,
    "fully_connected": _fc16,
}


def _conv(p: dict[str, Any]) -> list[int]:
    return [p["N"], p["H"], p["W"], p["C"], p["KH"], p["KW"], p["C"] // p["group"],
            p["N"], p["OH"], p["OW"], p["M"], p["stride_h"], p["stride_w"], p["pad_top"],
            p["pad_left"], p["dil_h"], p["dil_w"]]


# The most bytes of conv2d_add's tile of output rows (at least one row):
# runtime/kernels/cmsis_nn/conv2d_add_s8.c's TVMK_CONV_ADD_TILE_BYTES.
CONV_ADD_TILE_BYTES = 2048


def conv_add_tile(p: dict[str, Any]) -> int:
    """The bytes of conv2d_add's tile: whole rows, at most CONV_ADD_TILE_BYTES (one row at
    least, all of them at most), rounded up to a word as the kernel does."""
    row = int(p["OW"]) * int(p["M"])
    rows = min(int(p["OH"]), max(1, CONV_ADD_TILE_BYTES // row)) if row else 1
    return (rows * row + 3) & ~3


def _conv_add(p: dict[str, Any]) -> list[int]:
    return [conv_add_tile(p), *_conv(p)]


def _depthwise(p: dict[str, Any]) -> list[int]:
    return [p["N"], p["H"], p["W"], p["C"], p["KH"], p["KW"], p["N"], p["OH"], p["OW"],
            p["C"] * p["mult"], p["stride_h"], p["stride_w"], p["pad_top"], p["pad_left"],
            p["dil_h"], p["dil_w"], p["mult"]]


def _fully_connected(p: dict[str, Any]) -> list[int]:
    return [p["in_size"], p["out_size"]]


def _avgpool(p: dict[str, Any]) -> list[int]:
    return [p["OW"], p["C"]]


# A kernel's ``buffer`` (kernels.yaml) -> the numbers of its probe request.
REQUESTS: dict[str, Callable[[dict[str, Any]], list[int]]] = {
    "conv": _conv, "conv16": _conv, "conv_add": _conv_add, "dw": _depthwise,
    "fc": _fully_connected, "avgpool": _avgpool, "avgpool16": _avgpool,
}


def decline(model: Model, op: Operator, params: dict[str, Any], arch: str,
            flash: int | None = None) -> str | None:
    """Why CMSIS-NN does not serve ``op`` on a core of code path ``arch`` (None: it
    does; it lays out nothing beyond the model's, so ``flash`` is not read)."""
    rule = (DECLINES16 if model.op_dtype(op) == "int16" else DECLINES).get(op.op)
    return rule(model, op, params, arch) if rule else None


def request(buffer: str, arch: str, params: dict[str, Any]) -> str:
    """The probe request line for one operator's scratch."""
    return " ".join([buffer, arch, *map(str, REQUESTS[buffer](params))])


def scratch_bytes(buffer: str, arch: str, params: dict[str, Any]) -> int:
    """None of CMSIS-NN's: its probe asks the tree's own functions (:func:`request`)."""
    return 0


def precomputed(model: Model, op: Operator, params: dict[str, Any],
                flash: int | None = None, arch: str = "") -> dict[str, CArray]:
    """Params fields a kernel would otherwise compute into its buffer at each call, for
    constant operands: fully_connected's row sums on Helium (``kernel_sums``: what
    arm_vector_sum_s8 computes, each row's bias + input_offset * (the sum of its weights +
    in_size * weights_offset), in int32 arithmetic). TFLM keeps them in its arena."""
    if op.op != "fully_connected" or model.op_dtype(op) == "int16":
        return {}
    weights = op.inputs[1]
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    if weights not in model.constants or (bias is not None and bias not in model.constants):
        return {}
    rows, cols = params["out_size"], params["in_size"]
    w = np.asarray(model.constants[weights], np.int64).reshape(rows, cols)
    sums = (np.asarray(model.constants[bias], np.int64).reshape(rows) if bias is not None
            else np.zeros(rows, np.int64))
    if params["input_offset"]:
        sums = sums + params["input_offset"] * (w.sum(axis=1) + cols * params["weights_offset"])
    wrapped = (sums + 2**31) % 2**32 - 2**31
    return {"kernel_sums": CArray("int32_t", tuple(int(v) for v in wrapped))}
