"""The constants of a model description: read from a ``.npy`` file, written inline, or
drawn from a seeded random generator (their values are then checked by
:meth:`.assembly.Assembly.constant`: integers in range, finite float32)."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import Where, cut, shown
from ..model.shapes import Shape, numel
from ..reading import load_npy
from . import yamlio
from .assembly import Source
from .fields import (
    FLOAT32_MAX,
    err,
    is_int,
    is_number,
    keys,
    mapping,
)
from .quantization import INT_RANGE

# 1e5 and 1.0e5 are text in YAML 1.1 (a float needs a dot and a signed exponent).
_EXPONENT = re.compile(r"[-+]?[0-9]*\.?[0-9]*[eE][-+]?[0-9]+")
TENSOR_KEYS = ("shape", "dtype", "quant", "c_name")
CONST_SOURCES = ("npy", "values", "random")
QUANT_KEYS = ("bits", "block")
RANDOM_KEYS = ("seed", "low", "high")


def constant_source(name: str, node: yamlio.LineDict, base: Path) -> Source:
    """How to read constant ``name``'s values, its fields checked (known keys, shape and
    dtype given, exactly one of npy, values, random); the reader takes the checked shape
    and dtype and returns the values and where they come from. .npy paths are relative
    to ``base``."""
    where = node.where()
    keys(node, TENSOR_KEYS + CONST_SOURCES + ("quantize",), f"constant {shown(name)}")
    for key in ("shape", "dtype"):
        if key not in node:
            raise err(f"constant {shown(name)} needs '{key}'", where)
    sources = [k for k in CONST_SOURCES if k in node]
    if len(sources) != 1:
        raise err(f"constant {shown(name)} needs exactly one of npy, values, random", where)
    src = sources[0]
    swhere = node.where(src)

    def read(dims: Shape, dt: str) -> tuple[np.ndarray, Where]:
        if src == "npy":
            data = _npy(name, node["npy"], dims, base, swhere)
            if dt in INT_RANGE and data.dtype != np.dtype(dt):
                raise err(f"constant {shown(name)}: {cut(node['npy'])} holds {data.dtype}, "
                          f"declared {dt}", swhere, hint=f"save it as numpy.{dt}")
        elif src == "values":
            data = _values(name, node["values"], dims, swhere)
        else:
            data = _random(name, node["random"], dims, swhere)
            if dt in INT_RANGE:
                data = np.floor(data)  # integers in [low, high)
        return data, swhere

    return read


def _npy(name: str, file: object, dims: Shape, base: Path, where: Where) -> np.ndarray:
    if not isinstance(file, str) or not file:
        raise err(f"constant {shown(name)}: npy must be a file name, not {shown(file)}", where)
    path = base / file
    if not path.exists():
        raise err(f"constant {shown(name)}: no such .npy file: {cut(file)}", where,
                  hint=f"paths are relative to the model file ({base})")
    data = load_npy(path, f"constant {shown(name)}")
    if tuple(data.shape) != dims:
        raise err(f"constant {shown(name)}: {cut(file)} has shape {list(data.shape)}, "
                  f"declared {list(dims)}", where)
    return data


def _values(name: str, values: object, dims: Shape, where: Where) -> np.ndarray:
    if not isinstance(values, list):
        raise err(f"constant {shown(name)}: values must be a flat list of numbers, not "
                  f"{shown(values)}", where)
    for i, v in enumerate(values):
        if not is_number(v):
            text = isinstance(v, str) and _EXPONENT.fullmatch(v)
            raise err(f"constant {shown(name)}: values[{i}] is {shown(v)}, not a number",
                      yamlio.where_of(values, i, where),
                      hint="YAML reads 1e5 as text: write 1.0e+5" if text else None)
    if len(values) != numel(dims):
        raise err(f"constant {shown(name)}: {len(values)} values for shape {list(dims)} "
                  f"({numel(dims)} elements)", where)
    return np.asarray(values, dtype=np.float64).reshape(dims)


def _random(name: str, node: object, dims: Shape, where: Where) -> np.ndarray:
    what = f"random of constant {shown(name)}"
    rnd = mapping(node, what, where)
    keys(rnd, RANDOM_KEYS, what)
    for key in RANDOM_KEYS:
        if key not in rnd or not is_number(rnd[key]):
            raise err(f"{what} needs a number '{key}'", rnd.where(key))
    if not is_int(rnd["seed"]) or rnd["seed"] < 0:
        raise err(f"{what}: seed must be an integer >= 0, not {shown(rnd['seed'])}",
                  rnd.where("seed"))
    low, high = float(rnd["low"]), float(rnd["high"])
    for key, v in (("low", low), ("high", high)):
        if not math.isfinite(v) or abs(v) > FLOAT32_MAX:
            raise err(f"{what}: {key} must be a finite float32 number, not "
                      f"{shown(rnd[key])}", rnd.where(key))
    if low > high:
        raise err(f"{what}: low ({shown(rnd['low'])}) is above high ({shown(rnd['high'])})",
                  rnd.where("low"), hint="low <= high")
    return np.random.default_rng(rnd["seed"]).uniform(low, high, dims)


def quantize_spec(name: str, cnode: yamlio.LineDict) -> tuple[int, Where]:
    """The block size of a constant marked ``quantize`` (4 bits only)."""
    qn = mapping(cnode["quantize"], f"quantize of constant {shown(name)}", cnode.where("quantize"))
    keys(qn, QUANT_KEYS, f"quantize of constant {shown(name)}")
    if qn.get("bits") != 4:
        raise err(f"constant {shown(name)}: only 4-bit quantisation is supported",
                  qn.where("bits"), hint="quantize: {bits: 4, block: 32}")
    block: Any = qn.get("block")
    if not is_int(block) or block <= 0 or block % 32:
        raise err(f"constant {shown(name)}: block must be a positive multiple of 32",
                  qn.where("block") if "block" in qn else qn.where())
    return int(block), qn.where()
