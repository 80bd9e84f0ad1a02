"""Which front end reads a file: by its content (TFLite's TFL3 identifier), else by its
suffix; and the model name and --input-shape options every front end takes."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from .. import naming
from ..errors import TvmdevError
from ..model.shapes import Shape
from ..reading import read_bytes
from . import onnx, tflite
from .graph import Imported, c_names

IMPORTED_SUFFIXES = (".tflite", ".onnx")


def is_imported(path: Path) -> bool:
    """Whether ``path`` is a model for a front end (not a YAML or JSON description)."""
    if path.suffix.lower() in IMPORTED_SUFFIXES:
        return True
    try:
        # Only a regular file is sniffed: opening a FIFO would wait for a writer. Anything
        # else is left to the YAML reader, which refuses it in one line.
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as f:
            return f.read(8)[4:8] == tflite.IDENTIFIER
    except OSError:
        return False


def input_shapes(specs: list[str] | None) -> dict[str, Shape]:
    """``NAME=1,3,224,224`` options as shapes by input name."""
    shapes: dict[str, Shape] = {}
    for spec in specs or []:
        m = re.fullmatch(r"([^=]+)=([0-9]+(?:,[0-9]+)*)", spec)
        if not m or any(int(d) <= 0 for d in m.group(2).split(",")):
            raise TvmdevError(f"--input-shape {spec}: expected NAME=D,D,... with dims >= 1",
                              hint="for example --input-shape input=1,96,96,1")
        shapes[m.group(1)] = tuple(int(d) for d in m.group(2).split(","))
    return shapes


def import_file(path: Path, name: str | None = None,
                shapes: dict[str, Shape] | None = None) -> Imported:
    """Import the model in ``path`` (named ``name``, default: from the file name)."""
    raw = read_bytes(path, "model")
    if name is None:
        name = c_names([path.name.split(".")[0] if path.name[0] != "." else "model"])[0]
    naming.check_identifier(name, "model name")
    if raw[4:8] == tflite.IDENTIFIER or path.suffix.lower() == ".tflite":
        return tflite.convert(path, raw, name, shapes)
    if path.suffix.lower() == ".onnx":
        return onnx.convert(path, raw, name, shapes)
    raise TvmdevError("neither a TFLite nor an ONNX model", str(path),
                      hint="tvmdev import reads .tflite and .onnx files")
