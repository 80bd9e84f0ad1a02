"""The custom operators of one command: read from its ``--kernels`` files, their source
codes checked against what tvmdev maps already and against each other, then registered
for the command (:func:`tvmdev.model.custom.registered`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..errors import TvmdevError
from ..load.library import load_library
from ..model.custom import CustomOp, registered


def _tflite_builtins() -> set[str] | None:
    try:
        import tflite
    except ImportError:
        return None
    return {k for k, v in vars(tflite.BuiltinOperator).items() if isinstance(v, int)}


def check_codes(ops: Sequence[CustomOp]) -> None:
    """Refuse a custom op standing for a source operator tvmdev maps, or one another
    custom op stands for, at the line that names it."""
    from .onnx import DOMAINS, REMOVED
    from .onnx_fold import FOLDERS
    from .onnx_ops import CONVERTERS as ONNX_CONVERTERS
    from .tflite_ops import CONVERTERS as TFLITE_CONVERTERS

    builtins = _tflite_builtins()
    claimed: dict[str, CustomOp] = {}
    for c in ops:
        codes = []
        if c.tflite_builtin is not None:
            where = c.where_of("tflite")
            if c.tflite_builtin in TFLITE_CONVERTERS:
                raise TvmdevError(f"TFLite builtin {c.tflite_builtin} is already an operator "
                                  "tvmdev maps", where,
                                  hint="a custom op stands for an operator tvmdev lacks; to "
                                       "run your own kernel for a known one, list it under "
                                       "that op's entry")
            if builtins is not None and (c.tflite_builtin not in builtins
                                         or c.tflite_builtin == "CUSTOM"):
                raise TvmdevError(f"{c.tflite_builtin} is not a TFLite builtin operator",
                                  where, hint="a custom operator is tflite: {custom_code: "
                                              "NAME}")
            codes.append(f"TFLite builtin {c.tflite_builtin}")
        if c.tflite_custom is not None:
            codes.append(f'TFLite custom "{c.tflite_custom}"')
        if c.onnx is not None:
            domain, op_type = c.onnx
            if domain in DOMAINS and op_type in {*ONNX_CONVERTERS, *REMOVED, *FOLDERS}:
                raise TvmdevError(f"ONNX {op_type} is already an operator tvmdev maps",
                                  c.where_of("onnx"),
                                  hint="give the custom op a domain of its own (domain: "
                                       "com.example)")
            codes.append(f"ONNX {domain or 'ai.onnx'}:{op_type}")
        for code in codes:
            if code in claimed:
                raise TvmdevError(f"{code} is claimed by custom ops {claimed[code].name} "
                                  f"({claimed[code].where}) and {c.name}", c.where,
                                  hint="one custom op per source operator")
            claimed[code] = c


@contextmanager
def custom_operators(kernel_files: Sequence[Path]) -> Iterator[tuple[CustomOp, ...]]:
    """The custom ops the ``--kernels`` files declare, registered while the block runs."""
    ops = tuple(c for p in kernel_files for c in load_library(Path(p), "user").custom)
    check_codes(ops)
    with registered(ops):
        yield ops
