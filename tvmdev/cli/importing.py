"""``tvmdev import``, and the models ``aot`` and ``run`` read: a YAML description, or a
``.tflite`` or ``.onnx`` model imported in memory with the same placement options."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import __version__
from ..errors import TvmdevError
from ..frontends.graph import Imported
from ..frontends.importer import import_file, input_shapes, is_imported
from ..load.export import npy_files, yaml_text
from ..load.model import load_model
from ..model.graph import Model
from ..write.files import OutFile, write
from ..write.journal import recover

_IMPORT_FLAGS = ("name", "device", "place", "input_shape")


def add_import_options(p: argparse.ArgumentParser) -> None:
    """The options of an imported model (import, aot, run)."""
    p.add_argument("--name", help="the model's name (default: from the file name)")
    p.add_argument("--device", action="append", metavar="ID:KIND",
                   help="declare a device instance (repeatable): npu0:woofles")
    p.add_argument("--place", action="append", metavar="OPS=ID",
                   help="put every operator of these kinds (tvmdev ops or the model's own, "
                        "lower case) on a device: gemm,fully_connected=npu0")
    p.add_argument("--input-shape", action="append", metavar="NAME=D,D,...",
                   help="the shape of an input whose shape is dynamic: input=1,96,96,1")


def _imported(args: argparse.Namespace) -> Imported:
    im = import_file(Path(args.model), args.name, input_shapes(args.input_shape))
    for note in im.notes + im.place(args.device or [], args.place or []):
        print(f"note: {note}", file=sys.stderr)
    return im


def load_any(args: argparse.Namespace) -> Model:
    """The model of ``aot`` or ``run``: a description, or a model imported in memory."""
    path = Path(args.model)
    if is_imported(path):
        return _imported(args).to_model()
    given = [f"--{f.replace('_', '-')}" for f in _IMPORT_FLAGS if getattr(args, f, None)]
    if given:
        raise TvmdevError(f"{', '.join(given)} apply to imported models (.tflite, .onnx), "
                          "not to a model description", str(path),
                          hint="edit the description's devices and operators instead")
    return load_model(path)


def cmd_import(args: argparse.Namespace) -> int:
    """``tvmdev import``: write a model file as a model description and its constants
    (the imported model, checked, exported)."""
    im = _imported(args)
    model = im.to_model()  # checked before anything is written
    out_dir = Path(args.output)
    if not args.dry_run and recover(out_dir):
        print(f"completed an interrupted write into {out_dir}")
    comment = (f"Imported by tvmdev from {im.source.name}; constants are the .npy files "
               "beside it.")
    files = [OutFile(f"{model.name}.yaml", yaml_text(model, comment), "owned")]
    files += [OutFile(f, data, "owned") for f, data in sorted(npy_files(model).items())]
    report = write(out_dir, files, {"tool": "tvmdev", "version": __version__},
                   force=args.force, dry_run=args.dry_run)
    if args.dry_run:
        print("dry run: nothing written; would:")
    for line in report.lines():
        print(("  " if args.dry_run else "") + line)
    for role, names in (("input", model.inputs), ("output", model.outputs)):
        for n in names:
            t = model.tensors[n]
            print(f"{role} {n}: {list(t.shape)} {t.dtype}")
    kinds = ", ".join(f"{k} x{n}" for k, n in im.summary.items())
    ops = ", ".join(f"{k} x{n}" for k, n in _count(o.op for o in model.operators).items())
    print(f"operators: {kinds} -> {ops}")
    return 0


def _count(items: object) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:  # type: ignore[attr-defined]
        out[item] = out.get(item, 0) + 1
    return out
