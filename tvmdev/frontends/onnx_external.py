"""An ONNX model's external data: tensors whose bytes live in a file beside the model
(``onnx.save(..., save_as_external_data=True)``), read from the model's folder as
``onnx.load`` reads them (its ``base_dir``), never from the current folder.

A location must name a regular file inside the model's folder: an absolute path, a
``..`` and a symlink that leads outside are refused, as is data of another size than
the tensor's. Every tensor is loaded into the model before it is checked, so nothing
later (``onnx.checker``, shape inference, the converters) looks for a file.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from ..errors import TvmdevError, cut, shown
from ..reading import MAX_INPUT_BYTES, MIB
from .onnx_context import node_label

HINT = ("keep the data files inside the model's folder and name them relative to it "
        "(onnx.save with save_as_external_data=True and a relative location)")
# Bits per element of the element types (TensorProto.DataType names) external data may hold.
_BITS = {"FLOAT": 32, "UINT8": 8, "INT8": 8, "UINT16": 16, "INT16": 16, "INT32": 32,
         "INT64": 64, "BOOL": 8, "FLOAT16": 16, "DOUBLE": 64, "UINT32": 32, "UINT64": 64,
         "COMPLEX64": 64, "COMPLEX128": 128, "BFLOAT16": 16, "FLOAT8E4M3FN": 8,
         "FLOAT8E4M3FNUZ": 8, "FLOAT8E5M2": 8, "FLOAT8E5M2FNUZ": 8, "FLOAT8E8M0": 8,
         "UINT4": 4, "INT4": 4, "FLOAT4E2M1": 4, "UINT2": 2, "INT2": 2}


def load(onnx: Any, model: Any, path: Path) -> None:
    """Read every tensor of ``model`` (read from ``path``) that names external data into
    the tensor itself, from the model's folder; at most :data:`MAX_INPUT_BYTES` in all."""
    base = Path(os.path.realpath(path.parent if str(path.parent) else "."))
    total = 0
    for what, tensor in _tensors(model):
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            continue
        keys = {e.key: e.value for e in tensor.external_data}
        file = _resolve(base, keys.get("location", ""), what, path)
        offset, length = (_integer(keys, k, what, path) for k in ("offset", "length"))
        need = _size(onnx, tensor, what, path)
        size = os.stat(file).st_size
        start = offset or 0
        have = size - start if length is None else length
        if start > size or start + have > size or have != need:
            raise TvmdevError(f"{what}: its external data {shown(keys['location'])} "
                              f"{_mismatch(start, have, size)}; the tensor "
                              f"({_kind(onnx, tensor)} {list(tensor.dims)}) needs {need} "
                              "bytes", str(path),
                              hint="save the model and its data again together")
        total += need
        if total > MAX_INPUT_BYTES:
            raise TvmdevError(f"the model's external data is more than "
                              f"{MAX_INPUT_BYTES // MIB} MiB", str(path))
        tensor.raw_data = _read(file, start, need, what, path)
        tensor.data_location = onnx.TensorProto.DEFAULT
        del tensor.external_data[:]


def _tensors(model: Any) -> Iterator[tuple[str, Any]]:
    """Every tensor of the model with how messages name it: initializers (dense and
    sparse) and the tensors of node attributes, in subgraphs and functions too."""
    yield from _graph_tensors(model.graph)
    for function in model.functions:
        yield from _node_tensors(function.node, f"function '{function.name}' ")


def _graph_tensors(graph: Any) -> Iterator[tuple[str, Any]]:
    for t in graph.initializer:
        yield f"initializer {shown(t.name)}", t
    for s in graph.sparse_initializer:
        yield f"sparse initializer {shown(s.values.name)}", s.values
        yield f"sparse initializer {shown(s.values.name)}'s indices", s.indices
    yield from _node_tensors(graph.node, "")


def _node_tensors(nodes: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    for i, node in enumerate(nodes):
        for a in node.attribute:
            what = f"{prefix}{node_label(node, i)} attribute {shown(a.name)}"
            tensors = [a.t] if a.HasField("t") else []
            tensors += [*a.tensors]
            tensors += [t for s in [*([a.sparse_tensor] if a.HasField("sparse_tensor")
                                       else []), *a.sparse_tensors]
                        for t in (s.values, s.indices)]
            for t in tensors:
                yield what, t
            for g in [*([a.g] if a.HasField("g") else []), *a.graphs]:
                yield from _graph_tensors(g)


def _resolve(base: Path, location: str, what: str, path: Path) -> Path:
    """The file ``location`` names in the model's folder ``base`` (real, symlinks
    followed), refused unless it is a regular file inside it."""
    name = shown(location)
    if not location:
        raise TvmdevError(f"{what} is stored externally without a location", str(path),
                          hint=HINT)
    if "\0" in location or PurePosixPath(location).is_absolute() or \
            PureWindowsPath(location).drive or PureWindowsPath(location).root:
        raise TvmdevError(f"{what}: its external data {name} is an absolute path; it must "
                          "be relative to the model's folder", str(path), hint=HINT)
    if ".." in PureWindowsPath(location).parts:
        raise TvmdevError(f"{what}: its external data {name} goes up with '..'; it must be "
                          "inside the model's folder", str(path), hint=HINT)
    file = Path(os.path.realpath(base / location))
    if not file.is_relative_to(base):
        raise TvmdevError(f"{what}: its external data {name} leads outside the model's "
                          f"folder (to {cut(str(file))})", str(path), hint=HINT)
    try:
        mode = os.stat(file).st_mode
    except OSError as exc:
        raise TvmdevError(f"{what}: cannot read its external data {name} in the model's "
                          f"folder: {exc.strerror}", str(path), hint=HINT) from None
    if not stat.S_ISREG(mode):
        raise TvmdevError(f"{what}: its external data {name} is not a regular file",
                          str(path), hint=HINT)
    return file


def _integer(keys: dict[str, str], key: str, what: str, path: Path) -> int | None:
    """The external data's ``offset`` or ``length``: None when not given."""
    if key not in keys:
        return None
    text = keys[key]
    if not text.isascii() or not text.isdigit() or len(text) > 20:
        raise TvmdevError(f"{what}: its external data {key} is {shown(text)}, not a byte "
                          "count", str(path), hint="save the model and its data again together")
    return int(text)


def _read(file: Path, start: int, need: int, what: str, path: Path) -> bytes:
    """``need`` bytes of ``file`` from ``start``."""
    try:
        with open(file, "rb") as f:
            f.seek(start)
            data = f.read(need)
    except OSError as exc:
        raise TvmdevError(f"{what}: cannot read its external data: {exc.strerror}",
                          str(path)) from None
    if len(data) != need:  # it shrank since
        raise TvmdevError(f"{what}: its external data ended after {len(data)} of {need} "
                          "bytes", str(path))
    return data


def _mismatch(start: int, have: int, size: int) -> str:
    """What is wrong with ``have`` bytes from offset ``start`` of a file of ``size``."""
    if start > size:
        return f"starts at offset {start}, past the end of its file ({size} bytes)"
    if start + have > size:
        return (f"is {have} bytes from offset {start}, past the end of its file "
                f"({size} bytes)")
    return f"holds {have} bytes" + (f" from offset {start}" if start else "")


def _kind(onnx: Any, tensor: Any) -> str:
    """The element type's name (FLOAT, INT64, ...)."""
    try:
        return str(onnx.TensorProto.DataType.Name(tensor.data_type))
    except ValueError:
        return f"elem_type {tensor.data_type}"


def _size(onnx: Any, tensor: Any, what: str, path: Path) -> int:
    """The bytes ``tensor``'s elements take."""
    kind = _kind(onnx, tensor)
    if kind not in _BITS:
        raise TvmdevError(f"{what}: tvmdev reads external data of numbers, not {kind}",
                          str(path))
    if any(d < 0 for d in tensor.dims):
        raise TvmdevError(f"{what}: dims {shown(list(tensor.dims))} are negative",
                          str(path))
    return (math.prod(int(d) for d in tensor.dims) * _BITS[kind] + 7) // 8
