"""C spellings of values: exact float literals and bit patterns, for constants and
compiled-in data."""

from __future__ import annotations

import numpy as np


def c_float(v: float) -> str:
    """A float32 as a C literal that round-trips exactly."""
    s = f"{v:.9g}"
    if not any(c in s for c in ".e"):
        s += ".0"
    return s + "f"


# Constants up to this many elements are written as decimal floats; larger ones as their
# exact IEEE-754 bit patterns (read through a union), which formats ~50x faster.
DECIMAL_LIMIT = 64


def c_array(values: np.ndarray, per_line: int = 5, indent: str = "    ") -> str:
    """Decimal float32 literals, ``per_line`` to a line."""
    flat = [c_float(v) for v in values.ravel().tolist()]
    lines = [", ".join(flat[i:i + per_line]) for i in range(0, len(flat), per_line)]
    return (",\n").join(indent + line for line in lines)


def c_bits(values: np.ndarray, per_line: int = 8, indent: str = "    ") -> str:
    """The float32 values as 0x%08x bit patterns, ``per_line`` to a line."""
    raw = values.astype(">f4").tobytes()  # big-endian: the hex digits read as the uint32
    text = raw.hex(",", 4)
    words = text.split(",")
    lines = []
    for i in range(0, len(words), per_line):
        lines.append(indent + "0x" + ", 0x".join(words[i:i + per_line]))
    return ",\n".join(lines)


def c_ints(values: np.ndarray, per_line: int, indent: str = "    ") -> str:
    """Unsigned integers as hex literals, ``per_line`` to a line."""
    width = values.dtype.itemsize * 2
    words = [f"0x{v:0{width}x}" for v in values.tolist()]
    return ",\n".join(indent + ", ".join(words[i:i + per_line])
                       for i in range(0, len(words), per_line))
