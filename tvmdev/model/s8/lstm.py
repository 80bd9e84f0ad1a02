"""int8 UNIDIRECTIONAL_SEQUENCE_LSTM, TFLM's 8x8->16 integer LSTM (lstm_eval's
EvalLstm<int8_t, int8_t, int16_t, int32_t>): int8 input and hidden state, int8 weights
per tensor, int32 biases, an int16 cell state whose scale is near a power of two.

Each gate is two fully connected products into int16 at scale 2**-12 (the input's with
the gate's bias, the hidden state's without), added with int16 saturation, then TFLM's
int16 sigmoid or tanh (a 256-entry table of sigmoid, interpolated) into Q0.15. The cell:
``forget * cell`` and ``input * cell_gate`` rescaled to the cell's scale, added with
saturation, clipped to the quantized cell_clip when it is > 0. The hidden state:
``output * tanh(cell)`` rescaled to the hidden state's scale and zero point, in int8.
Params are ``tvmk_lstm_s8_params``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..fixedpoint import multiply_by_quantized_multiplier, quantize_multiplier
from ..recurrent import LSTM_INPUTS, lstm_dims
from ..shapes import ShapeError
from .call import CArray, S8Call, S8Op, per_tensor, refusing
from .lstm_table import scaled, sigmoid_of_scaled, sigmoid_table, tanh_of_scaled

GATES = ("input", "forget", "cell", "output")
GATE_SCALE = 2.0 ** -12  # Q3.12, the gates' products
ACT_SCALE = 2.0 ** -15  # Q0.15, the gates' activations


def _q(c: S8Call, name: str) -> tuple[float, int]:
    i = LSTM_INPUTS.index(name)
    s, z = per_tensor(c.quants[i], name)
    return s, z


def _requant(real: float) -> tuple[int, int]:
    try:
        return quantize_multiplier(real)
    except ValueError as exc:
        raise ShapeError(f"an lstm requantization cannot be represented: {exc}") from None


@refusing
def lstm_params(c: S8Call) -> dict[str, Any]:
    """The sizes and every requantization, as TFLM's PrepareGateParametersInteger."""
    d = lstm_dims(c.shapes, c.attrs)
    dt = dict(zip(LSTM_INPUTS, c.dtypes, strict=False))
    if dt["cell_state"] != "int16" or dt["output_state"] != "int8" or c.dtypes[-1] != "int8":
        raise ShapeError("int8 lstm needs an int16 cell state and int8 hidden state and "
                         "output (TFLM's 8x8->16 LSTM)")
    s_in, z_in = _q(c, "input")
    s_h, z_h = _q(c, "output_state")
    s_c, _ = _q(c, "cell_state")
    out: dict[str, Any] = {**d, "input_zero_point": z_in, "hidden_zero_point": z_h}
    for gate in GATES:
        for src, scale in (("input", s_in), ("recurrent", s_h)):
            s_w, z_w = _q(c, f"{src}_to_{gate}_weights")
            if z_w != 0:
                raise ShapeError(f"{src}_to_{gate}_weights must be symmetric (zero point 0)")
            key = f"{gate}_{src[:3]}"
            out[f"{key}_multiplier"], out[f"{key}_shift"] = _requant(scale * s_w / GATE_SCALE)
    # TFLM's CheckedLog2 (its result unchecked: the nearest power, rounded half away)
    log2 = float(np.float32(np.log(np.float32(s_c))) * np.float32(1.0 / np.log(np.float32(2))))
    power = int(math.copysign(math.floor(abs(log2) + 0.5), log2))
    out["forget_mul_multiplier"], out["forget_mul_shift"] = _requant(ACT_SCALE * s_c / s_c)
    out["input_mul_multiplier"], out["input_mul_shift"] = _requant(ACT_SCALE * ACT_SCALE / s_c)
    out["output_mul_multiplier"], out["output_mul_shift"] = _requant(
        ACT_SCALE * ACT_SCALE / s_h)
    clip = float(c.attrs["cell_clip"])
    out["cell_clip"] = int(np.trunc(min(max(clip / s_c, -32768.0), 32767.0))) if clip > 0 else 0
    out["cell_scale_power"] = int(power)
    out["sigmoid_table"] = CArray("uint16_t", sigmoid_table())
    return out


def _sat16(v: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.clip(v, -32768, 32767)
    return out


def _fc(x: np.ndarray, offset: int, w: np.ndarray, bias: np.ndarray | None, mult: int,
        shift: int) -> np.ndarray:
    acc = (x.astype(np.int64) + offset) @ w.astype(np.int64).T
    if bias is not None:
        acc = acc + bias.astype(np.int64)
    return _sat16(multiply_by_quantized_multiplier(acc, mult, shift))


def sigmoid16(x: np.ndarray) -> np.ndarray:
    """TFLM's int16 logistic of Q3.12 ``x`` into Q0.15 (input multiplier 3, no shift)."""
    return sigmoid_of_scaled(scaled(x, 3, 0), "the int8 lstm")


def tanh16(x: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    """TFLM's int16 tanh of ``x`` scaled by ``multiplier`` and a rounding right
    ``shift``, into Q0.15."""
    return tanh_of_scaled(scaled(x, multiplier, shift), "the int8 lstm")


def tanh_scaling(power: int) -> tuple[int, int]:
    """The multiplier and right shift of TFLM's int16 tanh of a Q(-power) value."""
    shift = 15 + power - 3
    return (3, -shift) if shift < 0 else (3 << shift, 0)


def _mul(a: np.ndarray, b: np.ndarray, mult: int, shift: int, offset: int, lo: int, hi: int
         ) -> np.ndarray:
    prod = a.astype(np.int64) * b.astype(np.int64)
    out: np.ndarray = np.clip(multiply_by_quantized_multiplier(prod, mult, shift) + offset,
                              lo, hi)
    return out


def _step(p: dict[str, Any], w: dict[str, np.ndarray], xt: np.ndarray, h: np.ndarray,
          c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    def gate(g: str) -> np.ndarray:
        a = _fc(xt, -p["input_zero_point"], w[f"input_to_{g}_weights"], w[f"{g}_gate_bias"],
                p[f"{g}_inp_multiplier"], p[f"{g}_inp_shift"])
        r = _fc(h, -p["hidden_zero_point"], w[f"recurrent_to_{g}_weights"], None,
                p[f"{g}_rec_multiplier"], p[f"{g}_rec_shift"])
        return _sat16(a + r)

    f, i = sigmoid16(gate("forget")), sigmoid16(gate("input"))
    g = tanh16(gate("cell"), 3, 0)
    c = _mul(f, c, p["forget_mul_multiplier"], p["forget_mul_shift"], 0, -32768, 32767)
    c = _sat16(c + _mul(i, g, p["input_mul_multiplier"], p["input_mul_shift"], 0, -32768,
                        32767))
    if p["cell_clip"] > 0:
        c = np.clip(c, -p["cell_clip"], p["cell_clip"])
    o = sigmoid16(gate("output"))
    t = tanh16(c, *tanh_scaling(p["cell_scale_power"]))
    h = _mul(t, o, p["output_mul_multiplier"], p["output_mul_shift"], p["hidden_zero_point"],
             -128, 127)
    return h, c


def lstm_reference(c: S8Call, x: list[np.ndarray | None]
                   ) -> tuple[np.ndarray, list[np.ndarray]]:
    """The int8 output sequence and the new hidden (int8) and cell (int16) states."""
    p = lstm_params(c)
    args = {k: v for k, v in zip(LSTM_INPUTS, x, strict=True) if v is not None}
    seq = args["input"].astype(np.int64)
    if p["time_major"]:
        seq = seq.transpose(1, 0, 2)
    h0, c0 = args["output_state"], args["cell_state"]
    h = h0.astype(np.int64).reshape(p["batch"], -1)
    cell = c0.astype(np.int64).reshape(p["batch"], -1)
    outs = []
    for t in range(p["time_steps"]):
        h, cell = _step(p, args, seq[:, t, :], h, cell)
        outs.append(h)
    y = np.stack(outs, axis=1)
    if p["time_major"]:
        y = y.transpose(1, 0, 2)
    return (y.astype(np.int8).reshape(c.out_shape),
            [h.astype(np.int8).reshape(h0.shape), cell.astype(np.int16).reshape(c0.shape)])


def _ref(c: S8Call, x: list[np.ndarray | None]) -> np.ndarray:
    return lstm_reference(c, x)[0]


OPS = {
    "lstm": S8Op("tvmk_lstm_s8_params", lstm_params, _ref,
                 ("int8",) * 9 + ("int32",) * 4 + ("int8", "int16", "int8"), scratch=True),
}
STATEFUL = {"lstm": lstm_reference}
