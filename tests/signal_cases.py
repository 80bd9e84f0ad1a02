"""One-op .tflite models of TFLM's signal-library custom ops, for the tests: each op's
tensors, custom code and flexbuffer options written with the ``tflite`` package's
builder, and seeded inputs that reach the ops' edges (int16's extremes, -32768 squared,
values of every bit length, the FFT's radix-2 stage)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

INT16, INT32, UINT32, UINT64, INT8 = 7, 2, 15, 12, 9
NP = {INT16: np.int16, INT32: np.int32, UINT32: np.uint32, UINT64: np.uint64, INT8: np.int8}


@dataclass
class Tensor:
    shape: list[int]
    type: int
    data: np.ndarray | None = None  # a constant's values


@dataclass
class Case:
    label: str
    code: str  # the custom code: SignalWindow, ...
    tensors: list[Tensor]
    inputs: list[int]  # the op's operands (tensor indices)
    outputs: list[int]
    options: dict[str, Any]
    values: list[np.ndarray] = field(default_factory=list)  # of the model inputs
    repeat: int = 1  # runs on the same inputs, state carried

    @property
    def model_inputs(self) -> list[int]:
        return [i for i in self.inputs if self.tensors[i].data is None]


def _vec(b: Any, start: Any, values: list[int]) -> int:
    start(b, len(values))
    for v in reversed(values):
        b.PrependInt32(v)
    return int(b.EndVector())


def build(c: Case) -> bytes:
    """The .tflite bytes of ``c``: one subgraph, one custom operator."""
    import flatbuffers
    import tflite as tfl
    from flatbuffers import flexbuffers

    b = flatbuffers.Builder(1024)
    datas = [t.data for t in c.tensors if t.data is not None]
    bufs = []
    for data in [None, *datas]:
        vec = b.CreateByteVector(np.ascontiguousarray(data).tobytes()) if data is not None \
            else None
        tfl.BufferStart(b)
        if vec is not None:
            tfl.BufferAddData(b, vec)
        bufs.append(tfl.BufferEnd(b))
    name = b.CreateString(c.code)
    tfl.OperatorCodeStart(b)
    tfl.OperatorCodeAddBuiltinCode(b, 32)  # CUSTOM
    tfl.OperatorCodeAddDeprecatedBuiltinCode(b, 32)
    tfl.OperatorCodeAddCustomCode(b, name)
    code = tfl.OperatorCodeEnd(b)
    tensors, nbuf = [], 0
    for i, t in enumerate(c.tensors):
        tname = b.CreateString(f"t{i}")
        shape = _vec(b, tfl.TensorStartShapeVector, t.shape)
        nbuf += t.data is not None
        tfl.TensorStart(b)
        tfl.TensorAddName(b, tname)
        tfl.TensorAddShape(b, shape)
        tfl.TensorAddType(b, t.type)
        tfl.TensorAddBuffer(b, nbuf if t.data is not None else 0)
        tensors.append(tfl.TensorEnd(b))
    opts = b.CreateByteVector(bytes(flexbuffers.Dumps(c.options)))
    ins = _vec(b, tfl.OperatorStartInputsVector, c.inputs)
    outs = _vec(b, tfl.OperatorStartOutputsVector, c.outputs)
    tfl.OperatorStart(b)
    tfl.OperatorAddOpcodeIndex(b, 0)
    tfl.OperatorAddInputs(b, ins)
    tfl.OperatorAddOutputs(b, outs)
    tfl.OperatorAddCustomOptions(b, opts)
    op = tfl.OperatorEnd(b)
    vecs = []
    for start, offs in ((tfl.SubGraphStartTensorsVector, tensors),
                        (tfl.SubGraphStartOperatorsVector, [op])):
        start(b, len(offs))
        for o in reversed(offs):
            b.PrependUOffsetTRelative(o)
        vecs.append(b.EndVector())
    sg_ins = _vec(b, tfl.SubGraphStartInputsVector, c.model_inputs)
    sg_outs = _vec(b, tfl.SubGraphStartOutputsVector, c.outputs)
    tfl.SubGraphStart(b)
    tfl.SubGraphAddTensors(b, vecs[0])
    tfl.SubGraphAddOperators(b, vecs[1])
    tfl.SubGraphAddInputs(b, sg_ins)
    tfl.SubGraphAddOutputs(b, sg_outs)
    sg = tfl.SubGraphEnd(b)
    top = []
    for start, offs in ((tfl.ModelStartBuffersVector, bufs),
                        (tfl.ModelStartOperatorCodesVector, [code]),
                        (tfl.ModelStartSubgraphsVector, [sg])):
        start(b, len(offs))
        for o in reversed(offs):
            b.PrependUOffsetTRelative(o)
        top.append(b.EndVector())
    tfl.ModelStart(b)
    tfl.ModelAddVersion(b, 3)
    tfl.ModelAddBuffers(b, top[0])
    tfl.ModelAddOperatorCodes(b, top[1])
    tfl.ModelAddSubgraphs(b, top[2])
    b.Finish(tfl.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def _bits(r: np.random.Generator, n: int, top: int) -> np.ndarray:
    """``n`` unsigned values of every bit length up to ``top`` (and 0, 1, 2)."""
    lengths = r.integers(0, top + 1, n)
    v = [int(r.integers(0, 1 << 62)) % (1 << int(k)) | ((1 << int(k)) >> 1) for k in lengths]
    v[:3] = [0, 1, 2]
    return np.array(v, np.uint64)


def _int16(r: np.random.Generator, n: int, scale: float) -> np.ndarray:
    x = np.clip(np.rint(r.normal(0.0, scale, n)), -32768, 32767).astype(np.int16)
    x[r.integers(0, n, 3)] = [-32768, 32767, -32767]
    return x


def cases(tables: dict[str, np.ndarray], seed: int = 7) -> list[Case]:
    """Every signal op, seeded; ``tables``: the preprocessor's filter-bank tables and PCAN
    gain table (their constants), by name."""
    r = np.random.default_rng(seed)
    out = [
        Case("window shift 12", "SignalWindow", [Tensor([2, 480], INT16),
             Tensor([480], INT16, _int16(r, 480, 9000)), Tensor([2, 480], INT16)],
             [0, 1], [2], {"shift": 12}, [_int16(r, 960, 12000).reshape(2, 480)]),
        Case("window shift 0", "SignalWindow", [Tensor([64], INT16),
             Tensor([64], INT16, _int16(r, 64, 300)), Tensor([64], INT16)],
             [0, 1], [2], {"shift": 0}, [_int16(r, 64, 3000)]),
    ]
    quiet = np.rint(r.normal(0.0, 40.0, 480)).astype(np.int16)
    for label, x in (("quiet", quiet), ("silent", np.zeros(480, np.int16)),
                     ("with -32768", _int16(r, 480, 9000))):
        out.append(Case(f"fft auto scale {label}", "SignalFftAutoScale", [
            Tensor([480], INT16), Tensor([480], INT16), Tensor([], INT32)], [0], [1, 2], {},
            [x]))
    for n in (512, 64, 16):
        out.append(Case(f"rfft {n}", "SignalRfft", [Tensor([3, n - n // 8], INT16),
                        Tensor([3, n + 2], INT16)], [0], [1], {"T": INT16, "fft_length": n},
                        [_int16(r, 3 * (n - n // 8), 16000).reshape(3, -1)]))
    out += [
        Case("energy", "SignalEnergy", [Tensor([514], INT16), Tensor([257], UINT32)], [0],
             [1], {"start_index": 3, "end_index": 250},
             [np.concatenate([np.array([-32768, -32768], np.int16), _int16(r, 512, 20000)])]),
        Case("filter bank", "SignalFilterBank", [Tensor([257], UINT32)] + [
             Tensor([len(tables[k])], INT16, tables[k]) for k in (
                 "weights", "unweights", "freq_starts", "weight_starts", "widths")]
             + [Tensor([40], UINT64)], [0, 1, 2, 3, 4, 5], [6], {"num_channels": 40},
             [_bits(r, 257, 32).astype(np.uint32)]),
        Case("square root", "SignalFilterBankSquareRoot", [Tensor([64], UINT64),
             Tensor([], INT32), Tensor([64], UINT32)], [0, 1], [2], {},
             [_bits(r, 64, 64), np.array(int(r.integers(0, 12)), np.int32)]),
    ]
    out += [
        Case("spectral subtraction", "SignalFilterBankSpectralSubtraction",
             [Tensor([40], UINT32), Tensor([40], UINT32), Tensor([40], UINT32)], [0], [1, 2],
             {"alternate_one_minus_smoothing": 15401, "alternate_smoothing": 983,
              "clamping": bool(c), "min_signal_remaining": 819, "num_channels": 40,
              "one_minus_smoothing": 15975, "smoothing": 409, "smoothing_bits": 10,
              "spectral_subtraction_bits": 14},
             [_bits(r, 40, 22).astype(np.uint32)], repeat=3)
        for c in (0, 1)]
    out += [
        Case("pcan", "SignalPCAN", [Tensor([64], UINT32), Tensor([64], UINT32),
             Tensor([125], INT16, tables["gain_lut"]), Tensor([64], UINT32)], [0, 1, 2], [3],
             {"snr_shift": 6}, [_bits(r, 64, 20).astype(np.uint32),
                                _bits(r, 64, 32).astype(np.uint32)]),
        Case("log", "SignalFilterBankLog", [Tensor([200], UINT32), Tensor([200], INT16)],
             [0], [1], {"input_correction_bits": 3, "output_scale": 64},
             [_bits(r, 200, 32).astype(np.uint32)]),
    ]
    return out
