"""The operators that keep state from one run to the next (TFLite's variable tensors):
``svdf`` (TFLite's SVDF: a feature projection pushed into a memory of the last
``memory_size`` activations, each filter's memory weighted in time, ``rank`` filters
summed per unit) and ``lstm`` (TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM as TFLM runs it: the
standard LSTM, no peephole, projection or layer norm, a tanh cell gate).

Their shape rules, float32 params, the float64 numpy reference (which returns the output
and the updated state) and the scratch their kernels take. The int8 forms are in
:mod:`.s8.svdf` and :mod:`.s8.lstm`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .opdef import Attr, OpDef
from .shapes import ACTIVATIONS, Shape, ShapeError

LSTM_WEIGHTS = tuple(f"{src}_to_{gate}_weights" for src in ("input", "recurrent")
                     for gate in ("input", "forget", "cell", "output"))
LSTM_BIASES = tuple(f"{gate}_gate_bias" for gate in ("input", "forget", "cell", "output"))
LSTM_INPUTS = ("input", *LSTM_WEIGHTS, *LSTM_BIASES, "output_state", "cell_state")


def _dims(shape: Shape | None, rank: int, what: str) -> Shape:
    if shape is None or len(shape) != rank:
        raise ShapeError(f"{what} must have {rank} dims, not {list(shape or ())}")
    return shape


def svdf_dims(shapes: list[Shape | None], attrs: dict[str, Any]) -> dict[str, int]:
    """batch, input_size, num_filters, memory_size, rank, num_units of an svdf, checked
    as TFLM's PrepareSvdf checks them."""
    b, i = _dims(shapes[0], 2, "the input")
    f, i2 = _dims(shapes[1], 2, "weights_feature")
    f2, m = _dims(shapes[2], 2, "weights_time")
    rank = int(attrs["rank"])
    if rank < 1 or f % rank:
        raise ShapeError(f"rank {rank} must divide the {f} filters")
    if i2 != i or f2 != f:
        raise ShapeError(f"weights_feature {[f, i2]} and weights_time {[f2, m]} must be "
                         f"[filters, {i}] and [filters, memory]")
    units = f // rank
    if len(shapes) > 3 and shapes[3] is not None and tuple(shapes[3]) != (units,):
        raise ShapeError(f"the bias must be [{units}], not {list(shapes[3])}")
    if len(shapes) < 5 or shapes[4] != (b, m * f):
        raise ShapeError(f"the state must be [{b}, {m * f}] (batch, memory x filters)")
    return {"batch": b, "input_size": i, "num_filters": f, "memory_size": m, "rank": rank,
            "num_units": units}


def svdf_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """[batch, num_units]."""
    d = svdf_dims(shapes, attrs)
    return (d["batch"], d["num_units"])


def svdf_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                ) -> dict[str, Any]:
    """``tvmk_svdf_params``."""
    return {**svdf_dims(shapes, attrs), "activation": ACTIVATIONS.index(attrs["activation"])}


def lstm_dims(shapes: list[Shape | None], attrs: dict[str, Any]) -> dict[str, int]:
    """batch, time_steps, input_size, state_size and time_major of an lstm, checked as
    TFLM's ValidateTensorSize checks them."""
    x = _dims(shapes[0], 3, "the input")
    tm = int(attrs["time_major"])
    batch, steps, size = (x[1], x[0], x[2]) if tm else (x[0], x[1], x[2])
    h = _dims(shapes[LSTM_INPUTS.index("output_state")], 2, "output_state")
    state = h[1]
    for name in LSTM_WEIGHTS:
        want = (state, size if name.startswith("input_") else state)
        if shapes[LSTM_INPUTS.index(name)] != want:
            raise ShapeError(f"{name} must be {list(want)}")
    for name in LSTM_BIASES:
        if shapes[LSTM_INPUTS.index(name)] != (state,):
            raise ShapeError(f"{name} must be [{state}]")
    for name in ("output_state", "cell_state"):
        got = shapes[LSTM_INPUTS.index(name)]
        if got is None or int(np.prod(got)) != batch * state:
            raise ShapeError(f"{name} must hold batch x state = {batch * state} values")
    return {"batch": batch, "time_steps": steps, "input_size": size, "state_size": state,
            "time_major": tm}


def lstm_infer(shapes: list[Shape | None], attrs: dict[str, Any]) -> Shape:
    """The input's first two dims, then the state size."""
    d = lstm_dims(shapes, attrs)
    x = shapes[0]
    assert x is not None
    return (x[0], x[1], d["state_size"])


def lstm_params(shapes: list[Shape | None], out: Shape, attrs: dict[str, Any]
                ) -> dict[str, Any]:
    """``tvmk_lstm_params``."""
    return {**lstm_dims(shapes, attrs), "cell_clip": float(attrs["cell_clip"])}


OPS = [
    OpDef("svdf", ("input", "weights_feature", "weights_time", "bias", "state"),
          frozenset({"bias"}), ("output",),
          {"rank": Attr("int", None), "activation": Attr("str", "NONE", choices=ACTIVATIONS)},
          "tvmk_svdf_params", svdf_infer, svdf_params, scratch=True,
          states=frozenset({"state"}),
          doc="TFLite SVDF: state [batch, memory x filters] kept across runs"),
    OpDef("lstm", LSTM_INPUTS, frozenset(), ("output",),
          {"time_major": Attr("bool", 0), "cell_clip": Attr("float", 0.0)},
          "tvmk_lstm_params", lstm_infer, lstm_params, scratch=True,
          states=frozenset({"output_state", "cell_state"}),
          doc="TFLite UNIDIRECTIONAL_SEQUENCE_LSTM (standard: no peephole, projection or "
              "layer norm); hidden and cell state kept across runs"),
]


# --- scratch ------------------------------------------------------------------------------

def svdf_scratch(params: dict[str, Any], tuning: Any) -> int:
    """One int32 or float per filter, then per unit, of every batch."""
    b = int(params["batch"])
    return 4 * b * (int(params["num_filters"]) + int(params["num_units"]))


def lstm_scratch(params: dict[str, Any], tuning: Any) -> int:
    """TFLM's four gate buffers of batch x state cells (float32; int16 on int8), the batch
    of one step (one row when batch-major)."""
    rows = int(params["batch"]) if int(params["time_major"]) else 1
    cell = 2 if "cell_scale_power" in params else 4
    return 4 * rows * int(params["state_size"]) * cell


# --- float64 reference ---------------------------------------------------------------------

def svdf_reference(x: list[np.ndarray | None], attrs: dict[str, Any]
                   ) -> tuple[np.ndarray, list[np.ndarray]]:
    """The output and the new state: the state shifted one step back in time, the new
    feature projections in each filter's last slot; the memory weighted in time, summed
    over each unit's ``rank`` filters, plus the bias."""
    inp, wf, wt, bias, state = x
    assert inp is not None and wf is not None and wt is not None and state is not None
    f, m = wt.shape
    b = inp.shape[0]
    mem = state.reshape(b, f, m)
    mem = np.concatenate([mem[:, :, 1:], (inp @ wf.T)[:, :, None]], axis=2)
    per_filter = np.einsum("bfm,fm->bf", mem, wt)
    y = per_filter.reshape(b, -1, int(attrs["rank"])).sum(axis=2)
    if bias is not None:
        y = y + bias
    return y, [mem.reshape(state.shape)]  # the fused activation: evaluate applies it


def _sigmoid(v: np.ndarray) -> np.ndarray:
    out: np.ndarray = 1.0 / (1.0 + np.exp(-v))
    return out


def lstm_reference(x: list[np.ndarray | None], attrs: dict[str, Any]
                   ) -> tuple[np.ndarray, list[np.ndarray]]:
    """The output sequence and the new hidden and cell states: per step, the gates
    sigmoid(W x + R h + b) (the cell gate's a tanh), c = f * c + i * g (clipped to
    +-cell_clip when it is > 0), h = o * tanh(c)."""
    args = dict(zip(LSTM_INPUTS, x, strict=True))
    inp = args["input"]
    assert inp is not None
    seq = inp.transpose(1, 0, 2) if attrs["time_major"] else inp  # batch, time, input
    h0, c0 = args["output_state"], args["cell_state"]
    assert h0 is not None and c0 is not None
    h, c = h0.reshape(seq.shape[0], -1).copy(), c0.reshape(seq.shape[0], -1).copy()
    outs = []

    def gate(name: str, xt: np.ndarray) -> np.ndarray:
        w, r, bias = (args[f"input_to_{name}_weights"], args[f"recurrent_to_{name}_weights"],
                      args[f"{name}_gate_bias"])
        assert w is not None and r is not None and bias is not None
        return np.asarray(xt @ w.T + h @ r.T + bias)

    clip = float(attrs["cell_clip"])
    for t in range(seq.shape[1]):
        xt = seq[:, t, :]
        f, i = _sigmoid(gate("forget", xt)), _sigmoid(gate("input", xt))
        g, o = np.tanh(gate("cell", xt)), _sigmoid(gate("output", xt))
        c = f * c + i * g
        if clip > 0:
            c = np.clip(c, -clip, clip)
        h = o * np.tanh(c)
        outs.append(h)
    y = np.stack(outs, axis=1)
    if attrs["time_major"]:
        y = y.transpose(1, 0, 2)
    return y, [h.reshape(h0.shape), c.reshape(c0.shape)]


FLOAT_REFERENCE = {"svdf": svdf_reference, "lstm": lstm_reference}
