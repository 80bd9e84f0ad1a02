"""A model's int8 I/O variant, as MLPerf Tiny ships its models and as TFLite's converter
writes them with ``inference_input_type=tf.int8``: the .tflite without the QUANTIZE that
turns its float input into int8 and the DEQUANTIZE that turns its int8 output into float,
the int8 tensors its graph inputs and outputs. The caller then passes the quantized
input itself, which is what the sensor of a microcontroller gives. The same file goes
to tvmdev, TFLM and TinyEngine, so every peer counts the same I/O bytes.

The edit is made in the flatbuffer's bytes (read with the ``tflite`` package's
accessors), nothing rebuilt: the subgraph's ``inputs`` and ``outputs`` vectors (tensor
indices) name the int8 tensors, and the ``operators`` vector loses its first element (each
later element moves one slot forward, its offset, relative to its own slot, grows by 4)
and its last (the length shrinks). The dropped operators' tables stay in the file,
unreferenced.

    python benchmarks/_int8_io.py MODEL.tflite OUT.tflite
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

QUANTIZE, DEQUANTIZE = 114, 6
# SubGraph's fields by vtable offset (tensorflow/lite/schema/schema.fbs)
_INPUTS, _OUTPUTS, _OPERATORS = 6, 8, 10


def _code(model: object, op: object) -> int:
    code = model.OperatorCodes(op.OpcodeIndex())  # type: ignore[attr-defined]
    return int(max(code.BuiltinCode(), code.DeprecatedBuiltinCode()))


def _vector(table: object, field: int) -> int:
    """The position of a vector field's first element."""
    tab = table._tab  # type: ignore[attr-defined]
    return int(tab.Vector(tab.Offset(field)))


def int8_io(raw: bytes) -> bytes | None:
    """``raw`` with int8 I/O, or None when its first operator is no QUANTIZE of its only
    float input or its last no DEQUANTIZE to its only output."""
    import tflite
    model = tflite.Model.GetRootAsModel(raw, 0)
    sg = model.Subgraphs(0)
    n = sg.OperatorsLength()
    first, last = sg.Operators(0), sg.Operators(n - 1)
    if (sg.InputsLength() != 1 or sg.OutputsLength() != 1 or n < 3
            or _code(model, first) != QUANTIZE or _code(model, last) != DEQUANTIZE
            or first.Inputs(0) != sg.Inputs(0) or last.Outputs(0) != sg.Outputs(0)
            or sg.Tensors(sg.Inputs(0)).Type() != tflite.TensorType.FLOAT32):
        return None
    readers = [i for i in range(1, n) for k in range(sg.Operators(i).InputsLength())
               if sg.Operators(i).Inputs(k) == sg.Inputs(0)]
    if readers:  # the float input is read by more than its QUANTIZE
        return None
    out = bytearray(raw)
    struct.pack_into("<i", out, _vector(sg, _INPUTS), first.Outputs(0))
    struct.pack_into("<i", out, _vector(sg, _OUTPUTS), last.Inputs(0))
    ops = _vector(sg, _OPERATORS)
    slots = [struct.unpack_from("<I", raw, ops + 4 * i)[0] for i in range(n)]
    for i in range(n - 2):  # slot i takes what slot i + 1 pointed to
        struct.pack_into("<I", out, ops + 4 * i, slots[i + 1] + 4)
    struct.pack_into("<I", out, ops - 4, n - 2)
    return bytes(out)


def variant(src: Path, folder: Path) -> Path | None:
    """``src``'s int8 I/O variant written in ``folder`` as ``<name>_int8io.tflite`` (the
    peers' build caches are keyed by the file's name), or None."""
    got = int8_io(src.read_bytes())
    if got is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    dst = folder / f"{src.stem}_int8io{src.suffix}"
    dst.write_bytes(got)
    return dst


if __name__ == "__main__":
    data = int8_io(Path(sys.argv[1]).read_bytes())
    if data is None:
        sys.exit(f"{sys.argv[1]}: no QUANTIZE first and DEQUANTIZE last to drop")
    Path(sys.argv[2]).write_bytes(data)
