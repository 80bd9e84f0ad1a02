"""C spellings of values and text: exact float literals and bit patterns for constants
and compiled-in data, and the one escape of user text (names, the command line) for each
place it goes: :func:`c_string` for a string literal, :func:`c_comment` for a comment."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..model.limits import float32
from ..model.s8.call import CArray

_STRING_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def c_string(text: str) -> str:
    """``text`` as a C string literal, quotes included: '"' and '\\' escaped, every '?'
    that touches another escaped (so no trigraph such as ``??/`` forms), and whatever is
    not printable ASCII as octal escapes of its UTF-8 bytes. A template writes
    ``{{ name|c_string }}``, never ``"{{ name }}"``; nothing escaped here is ever used as
    a printf format (pass it to ``%s``)."""
    out = []
    for i, ch in enumerate(text):
        if ch in _STRING_ESCAPES:
            out.append(_STRING_ESCAPES[ch])
        elif ch == "?" and "?" in text[max(i - 1, 0):i] + text[i + 1:i + 2]:
            out.append("\\?")
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out += [f"\\{b:03o}" for b in ch.encode("utf-8", "surrogatepass")]
    return '"' + "".join(out) + '"'


def c_comment(text: str) -> str:
    """``text`` made safe inside any comment, on one line: no ``*/`` (which would end a
    block comment) or ``/*`` (-Wcomment), no line break, no backslash or trigraph that
    could splice lines, non-ASCII as ``\\u`` escapes. A template writes
    ``/* {{ name|c_comment }} */``."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif " " <= ch <= "~":
            out.append(ch)
        elif ch == "\t":
            out.append(" ")
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    s = re.sub(r"\?(?=\?)", "?\\\\", "".join(out))
    return s.replace("*/", "* /").replace("/*", "/ *")


def c_float(v: float) -> str:
    """A float as the C float literal of its float32 value, which round-trips exactly (a
    value that underflows float32 is 0.0f: gcc would warn that the literal truncates to
    zero). A value beyond float32 is refused by the loaders; here it is an error."""
    f = float32(v)
    if f is None:
        raise ValueError(f"{v!r} is not a finite float32")
    s = f"{f:.9g}"
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


def c_decimals(values: list[int] | tuple[int, ...], per_line: int = 12,
               indent: str = "    ") -> str:
    """Signed integers as decimal literals, ``per_line`` to a line, fewer when the widest
    would pass 100 columns (INT32_MIN spelt so that C does not read it as a negated
    out-of-range constant)."""
    words = ["(-2147483647 - 1)" if v == -(2**31) else str(int(v)) for v in values]
    widest = max((len(w) for w in words), default=1)
    per_line = max(1, min(per_line, (100 - len(indent) + 2) // (widest + 2)))
    return ",\n".join(indent + ", ".join(words[i:i + per_line])
                       for i in range(0, len(words), per_line))


def params_arrays(params: dict[str, Any], name: str,
                  shared: dict[tuple[str, tuple[Any, ...]], str] | None = None
                  ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per-channel params (:class:`CArray`) as static const arrays beside the struct, and
    the params with those fields pointing to them. ``shared``: the arrays emitted so far,
    by type and values: a field with the same values points to that array instead (the
    bands of a patched operator share their per-channel params)."""
    shared = {} if shared is None else shared
    arrays, out = [], {}
    for k, v in params.items():
        if not isinstance(v, CArray):
            out[k] = v
            continue
        key = (v.ctype, tuple(v.values))
        if key not in shared:
            shared[key] = f"{name}_{k}"
            arrays.append({"ctype": v.ctype, "name": shared[key], "count": len(v.values),
                           "data": c_decimals(v.values)})
        out[k] = shared[key]
    return arrays, out


def constant_data(v: np.ndarray) -> str:
    """A constant's initializer: decimal integers, float32 literals or bit patterns."""
    if v.dtype.kind == "i":
        return c_decimals(v.ravel().tolist())
    return c_bits(v) if v.size > DECIMAL_LIMIT else c_array(v)
