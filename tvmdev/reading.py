"""Reading the files a user names: regular files only, each within a size limit.

Every input (a model, a board, a kernel library, a manifest, a ``.npy`` array, a C
source) is read through here, so a FIFO, ``/dev/zero``, a folder or a huge file is one
clear line instead of a hang, an exhausted memory or a traceback.
"""

from __future__ import annotations

import io
import json
import math
import os
import stat
from pathlib import Path
from typing import Any

import numpy as np

from .errors import TvmdevError, Where

MIB = 1 << 20
MAX_INPUT_BYTES = 256 * MIB  # any one file tvmdev reads
FLOAT32_MAX = float(np.finfo(np.float32).max)
# numpy kinds that are numbers: bool, signed and unsigned integers, floats.
NUMBER_KINDS = "biuf"
_KIND_NAMES = {"U": "strings", "S": "bytes", "O": "Python objects", "c": "complex numbers",
               "M": "dates", "m": "time spans", "V": "records"}

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def check_regular(path: Path, what: str = "file") -> None:
    """``path`` is an existing regular file (following symlinks), without opening it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise TvmdevError(f"no such {what}", Where(str(path))) from None
    except OSError as exc:
        raise TvmdevError(f"cannot read: {exc.strerror}", Where(str(path))) from None
    if not stat.S_ISREG(st.st_mode):
        raise TvmdevError(f"is {_kind(st.st_mode)}, not a regular file", Where(str(path)))


def read_bytes(path: Path, what: str = "file", limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes."""
    where = Where(str(path))
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise TvmdevError(f"no such {what}", where) from None
    except OSError as exc:
        raise TvmdevError(f"cannot read: {exc.strerror}", where) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TvmdevError(f"is {_kind(st.st_mode)}, not a regular file", where)
        if st.st_size > limit:
            raise TvmdevError(f"is {st.st_size} bytes; tvmdev reads files of at most "
                              f"{limit // MIB} MiB", where)
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise TvmdevError(f"cannot read: {exc.strerror}", where) from None
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while we read it
        raise TvmdevError(f"is larger than {limit // MIB} MiB", where)
    return data


def read_text(path: Path, what: str = "file", limit: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes."""
    data = read_bytes(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TvmdevError(f"not UTF-8 text (byte 0x{data[exc.start]:02x})",
                          Where(str(path), line),
                          hint="save the file as UTF-8") from None


def read_json(path: Path, what: str = "file") -> Any:
    """A JSON document; invalid or too deeply nested JSON is one line."""
    text = read_text(path, what)
    try:
        return json.loads(text)
    except RecursionError:
        raise TvmdevError("not valid JSON: nested too deeply", Where(str(path))) from None
    except ValueError as exc:
        line = getattr(exc, "lineno", 0)
        msg = getattr(exc, "msg", "malformed")
        raise TvmdevError(f"not valid JSON: {msg}", Where(str(path), line)) from None


def _npy_header(stream: io.BytesIO) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """The shape and dtype a ``.npy`` header declares (ValueError if there is none)."""
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        dims, _, dt = np.lib.format.read_array_header_1_0(stream)
    else:
        dims, _, dt = np.lib.format.read_array_header_2_0(stream)
    return tuple(dims), dt


def load_npy(path: Path, what: str = "array") -> np.ndarray:
    """A numeric array from a ``.npy`` file: booleans, integers or floats, no objects."""
    data = read_bytes(path, what)
    where = Where(str(path))
    hint = "write it with numpy.save(path, array)"
    stream = io.BytesIO(data)
    try:
        dims, dt = _npy_header(stream)
    except (ValueError, EOFError):
        raise TvmdevError(f"{what}: " + ("the file is empty, not a .npy array" if not data
                                         else "not a .npy file"), where, hint=hint) from None
    if dt.kind not in NUMBER_KINDS or dt.fields is not None:
        raise TvmdevError(f"{what} holds {_KIND_NAMES.get(dt.kind, 'records')} "
                          f"(dtype {dt.str!r}); tvmdev reads booleans, integers and floats",
                          where)
    need = math.prod(dims) * dt.itemsize
    have = len(data) - stream.tell()
    if have < need:
        raise TvmdevError(f"{what}: the file is truncated ({have} of {need} bytes of "
                          "data)", where, hint=hint)
    stream.seek(0)
    return np.asarray(np.load(stream, allow_pickle=False))


def as_float32(arr: np.ndarray, what: str, where: Where, finite: bool) -> np.ndarray:
    """``arr`` as float32, refusing values float32 cannot hold (and, when ``finite``,
    NaN and infinities). Checked first, so the cast itself never overflows (or warns)."""
    if arr.dtype.kind == "f" and arr.size:
        mask = np.isfinite(arr)
        all_finite = bool(mask.all())
        if finite and not all_finite:
            raise TvmdevError(f"{what} has values that are not finite (NaN or infinity)",
                              where)
        if float(np.abs(arr if all_finite else arr[mask]).max(initial=0.0)) > FLOAT32_MAX:
            raise TvmdevError(f"{what} has values beyond float32's range "
                              f"(±{FLOAT32_MAX:.4g})", where)
    return np.ascontiguousarray(arr, dtype=np.float32)
