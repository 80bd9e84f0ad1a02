"""The constants of a model description: shapes, dtypes and values from a .npy file, an
inline list or a seeded generator, checked before any data is made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TvmdevError, Where
from ..model.graph import DTYPE_SIZE
from ..model.limits import object_problem
from ..model.ops import DTYPES
from ..model.shapes import Shape, numel
from . import yamlio

TENSOR_KEYS = ("shape", "dtype")
CONST_SOURCES = ("npy", "values", "random")
QUANT_KEYS = ("bits", "block")
RANDOM_KEYS = ("seed", "low", "high")


def mapping(node: Any, what: str, where: Where) -> yamlio.LineDict:
    """``node`` if it is a mapping, else the error saying what should be one."""
    if not isinstance(node, dict):
        raise TvmdevError(f"{what} must be a mapping", where)
    return node  # type: ignore[return-value]


def check_keys(node: yamlio.LineDict, allowed: tuple[str, ...], what: str) -> None:
    """Refuse a key of ``node`` not in ``allowed``."""
    for key in node:
        if key not in allowed:
            raise TvmdevError(f"unknown key '{key}' in {what}", node.where(key),
                              hint="allowed keys: " + ", ".join(allowed))


def tensor_shape(node: Any, what: str, where: Where, dtype: str = "float32") -> Shape:
    """A declared shape: a list of at most 6 positive integers, of a size C can hold."""
    if not isinstance(node, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) for d in node):
        raise TvmdevError(f"shape of {what} must be a list of integers", where)
    if any(d <= 0 for d in node):
        raise TvmdevError(f"shape of {what} has a dimension <= 0: {list(node)}", where)
    if len(node) > 6:
        raise TvmdevError(f"shape of {what} has {len(node)} dims; at most 6 are supported",
                          where)
    problem = object_problem(numel(tuple(node)) * DTYPE_SIZE.get(dtype, 4))
    if problem is not None:
        raise TvmdevError(f"{what} {list(node)} has {problem}", where)
    return tuple(node)


def tensor_dtype(node: Any, what: str, where: Where) -> str:
    """A declared dtype, one of the supported ones."""
    if node not in DTYPES:
        raise TvmdevError(f"unknown dtype {node!r} for {what}", where,
                          hint="supported dtypes: " + ", ".join(DTYPES))
    return str(node)


def load_constant(name: str, node: yamlio.LineDict, base: Path
                  ) -> tuple[Shape, str, np.ndarray]:
    """The shape, dtype and values of one constant (``base``: the model's folder)."""
    where = node.where()
    check_keys(node, TENSOR_KEYS + CONST_SOURCES + ("quantize",), f"constant '{name}'")
    for key in TENSOR_KEYS:
        if key not in node:
            raise TvmdevError(f"constant '{name}' needs '{key}'", where)
    dtype = tensor_dtype(node["dtype"], f"constant '{name}'", node.where("dtype"))
    shape = tensor_shape(node["shape"], f"constant '{name}'", node.where("shape"), dtype)
    sources = [k for k in CONST_SOURCES if k in node]
    if len(sources) != 1:
        raise TvmdevError(f"constant '{name}' needs exactly one of npy, values, random", where)
    src = sources[0]
    swhere = node.where(src)
    if src == "npy":
        data = _npy(name, node, base, shape, dtype)
    elif src == "values":
        data = _values(name, node["values"], shape, dtype, swhere)
    else:
        data = _random(name, node["random"], shape, dtype, swhere)
    if not np.all(np.isfinite(data)):
        raise TvmdevError(f"constant '{name}' has values that are not finite in {dtype}",
                          swhere)
    data = np.ascontiguousarray(data)
    data.setflags(write=False)
    return shape, dtype, data


def _npy(name: str, node: yamlio.LineDict, base: Path, shape: Shape, dtype: str
         ) -> np.ndarray:
    swhere = node.where("npy")
    path = base / str(node["npy"])
    if not path.is_file():
        raise TvmdevError(f"constant '{name}': no such .npy file: {node['npy']}", swhere,
                          hint=f"paths are relative to the model file ({base})")
    try:
        data: np.ndarray = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise TvmdevError(f"constant '{name}': cannot read {node['npy']}: {exc}",
                          swhere) from None
    if tuple(data.shape) != shape:
        raise TvmdevError(f"constant '{name}': {node['npy']} has shape {list(data.shape)}, "
                          f"declared {list(shape)}", swhere)
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            converted: np.ndarray = data.astype(dtype)
    except (ValueError, TypeError):
        raise TvmdevError(f"constant '{name}': {node['npy']} holds {data.dtype}, not "
                          "numbers", swhere) from None
    return converted


def _values(name: str, values: Any, shape: Shape, dtype: str, where: Where) -> np.ndarray:
    if not isinstance(values, list) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise TvmdevError(f"constant '{name}': values must be a flat list of numbers", where)
    if len(values) != numel(shape):
        raise TvmdevError(f"constant '{name}': {len(values)} values for shape {list(shape)} "
                          f"({numel(shape)} elements)", where)
    try:
        with np.errstate(over="ignore"):
            return np.asarray(values, dtype=dtype).reshape(shape)
    except OverflowError:  # an integer beyond any float
        raise TvmdevError(f"constant '{name}' has values that are not finite in {dtype}",
                          where) from None


def _random(name: str, node: Any, shape: Shape, dtype: str, where: Where) -> np.ndarray:
    rnd = mapping(node, f"random of constant '{name}'", where)
    check_keys(rnd, RANDOM_KEYS, f"random of constant '{name}'")
    for key in RANDOM_KEYS:
        if key not in rnd or isinstance(rnd[key], bool) or not isinstance(
                rnd[key], (int, float)):
            raise TvmdevError(f"random of constant '{name}' needs a number '{key}'", where)
    if not isinstance(rnd["seed"], int) or rnd["seed"] < 0:
        raise TvmdevError(f"random of constant '{name}': seed must be an integer >= 0", where)
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.random.default_rng(rnd["seed"]).uniform(
                rnd["low"], rnd["high"], shape).astype(dtype)
    except (OverflowError, ValueError) as exc:
        raise TvmdevError(f"random of constant '{name}': {exc}", where) from None


def quantize_spec(name: str, cnode: yamlio.LineDict) -> tuple[int, Where]:
    """The block size of a constant marked ``quantize: {bits: 4, block: B}``."""
    qn = mapping(cnode["quantize"], f"quantize of constant '{name}'", cnode.where("quantize"))
    check_keys(qn, QUANT_KEYS, f"quantize of constant '{name}'")
    if qn.get("bits") != 4:
        raise TvmdevError(f"constant '{name}': only 4-bit quantisation is supported",
                          qn.where("bits"), hint="quantize: {bits: 4, block: 32}")
    block = qn.get("block")
    if not isinstance(block, int) or isinstance(block, bool) or block <= 0 or block % 32:
        raise TvmdevError(f"constant '{name}': block must be a positive multiple of 32",
                          qn.where("block") if "block" in qn else qn.where())
    return block, qn.where()
