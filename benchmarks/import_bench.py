"""Imported models: import and generation time, arena over its lower bound, and flash and
RAM on Cortex-M55.

    python benchmarks/import_bench.py [--repeat 3] [--layers 500] [--no-m55]

Models: the real float32 models the tests import (fetched by ``python3 tests/models.py``
into the model cache), the ONNX models the tests build with ``onnx.helper`` (when the
``onnx`` package is installed), and a generated model of ``--layers`` layers (a TFLite
chain of FULLY_CONNECTED with fused RELU, ADD skips and LOGISTIC, built with the
flatbuffers builder the tests use).

Columns:
- ``import s``: reading and converting the file (the front end), best of --repeat;
- ``gen s``: checking the imported model, then scheduling, memory planning, kernel
  resolution and rendering the executor, best of --repeat (what ``tvmdev aot`` does
  before writing);
- ``cli s``: one ``tvmdev aot MODEL -o DIR`` from a fresh process, Python's start-up and
  the write included (the time a user waits); the target is under 2 s for the real models;
- ``arena``, ``bound``, ``ratio``: the workspace planned for the Cortex-M55 board (its
  kernels' tuning), kernel scratch included; its lower bound, the most bytes (tensors
  and scratch) live at any one operator; their ratio;
- ``TFLM act``, ``TFLM all``: for a .tflite, TFLM's arena as its interpreter reports it
  (``print_allocations``, tflite-micro on PyPI): the head (activations, the peer of
  ``arena``) and the whole arena (with its tensor and node structures);
- M55 columns: the firmware for mps3_an547 built by ``tvmdev run`` and read with
  ``tvmdev inspect`` (pyelftools): executor plus kernels flash (text + rodata + data,
  without weights), the weights, and the executor's RAM (data + bss: its workspace).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402

from tvmdev.frontends.importer import import_file  # noqa: E402
from tvmdev.load.board import Board, board_by_name  # noqa: E402
from tvmdev.plan.pipeline import Compiled, Options, compile_model  # noqa: E402
from tvmdev.render.executor import executor_files  # noqa: E402

REAL = ["sine_float.tflite", "autoencoder_example.float32.tflite",
        "image_example1.float32.tflite"]
WIDTH = 16  # of the generated model's layers


def generated_tflite(layers: int) -> bytes:
    """A chain of ``layers`` operators: FULLY_CONNECTED (fused RELU), then ADD of the
    layer's input (a skip), then LOGISTIC, repeated."""
    import tflite
    from tflite_build import Graph, Op, T, build

    codes = {k: v for k, v in vars(tflite.BuiltinOperator).items() if isinstance(v, int)}
    rng = np.random.default_rng(0)
    ts = [T("x", [1, WIDTH])]
    ops: list[Op] = []
    prev, skip = 0, 0
    for i in range(layers):
        kind = ("FULLY_CONNECTED", "ADD", "LOGISTIC")[i % 3]
        if kind == "FULLY_CONNECTED":
            w = rng.uniform(-0.3, 0.3, (WIDTH, WIDTH)).astype(np.float32)
            ts += [T(f"w{i}", [WIDTH, WIDTH], w),
                   T(f"b{i}", [WIDTH], rng.uniform(-0.1, 0.1, WIDTH).astype(np.float32))]
            ins = [prev, len(ts) - 2, len(ts) - 1]
            skip = prev
        elif kind == "ADD":
            ins = [prev, skip]
        else:
            ins = [prev]
        ts.append(T(f"t{i}", [1, WIDTH]))
        ops.append(Op(codes[kind], ins, [len(ts) - 1]))
        prev = len(ts) - 1
    return build(Graph(ts, ops, [0], [prev]))


def onnx_models(folder: Path) -> dict[str, Path]:
    """The multi-layer ONNX models of the tests (tests/onnx_build.py), saved into
    ``folder`` (none without the ``onnx`` package)."""
    try:
        import onnx  # noqa: F401
        import onnx_build
    except ImportError:
        return {}
    out = {}
    for name in ("residual", "mobilenet"):
        path = folder / f"{name}.onnx"
        path.write_bytes(getattr(onnx_build, name)())
        out[path.name] = path
    return out


def timed(path: Path, repeat: int, board: Board) -> tuple[float, float, Compiled]:
    # planned for the board's tuning, without its memory map (no fit check) or CMSIS-NN
    board = replace(board, memory=None)
    options = Options("lazy", trees=(("cmsis_nn", "off"),))
    best_import = best_gen = math.inf
    gen = None
    gc.disable()  # as the tvmdev command line runs
    for _ in range(repeat):
        t0 = time.perf_counter()
        im = import_file(path)
        t1 = time.perf_counter()
        gen = compile_model(im.to_model(), board, options)
        executor_files(gen, "tvmdev aot")
        t2 = time.perf_counter()
        best_import, best_gen = min(best_import, t1 - t0), min(best_gen, t2 - t1)
        gc.collect()
    gc.enable()
    assert gen is not None
    return best_import, best_gen, gen


_TFLM_ALLOCATIONS = """
import sys
from tflite_micro.python.tflite_micro import runtime
runtime.Interpreter.from_file(sys.argv[1]).print_allocations()
"""


def tflm_arena(path: Path) -> tuple[int, int] | None:
    """TFLM's arena for a .tflite (``print_allocations``: the head, its activations, and
    the whole arena), or None without tflite-micro. Printed by C++: read from a child."""
    if path.suffix != ".tflite":
        return None
    run = subprocess.run([sys.executable, "-c", _TFLM_ALLOCATIONS, str(path)],
                         capture_output=True, text=True)
    found = dict(re.findall(r"Arena allocation (head|total) (\d+) bytes", run.stdout + run.stderr))
    if run.returncode != 0 or len(found) != 2:
        return None
    return int(found["head"]), int(found["total"])


def cli_seconds(path: Path, out: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tvmdev", "aot", str(path), "-o", str(out)],
                   check=True, capture_output=True)
    return time.perf_counter() - t0


def m55(path: Path, build: Path) -> dict[str, int] | str:
    """Flash and RAM by component of ``path`` built for mps3_an547, or why not."""
    run = subprocess.run([sys.executable, "-m", "tvmdev", "run", str(path), "--board",
                          "mps3_an547", "--build-dir", str(build)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        return (run.stdout + run.stderr).strip().splitlines()[-1]
    elf = next(build.glob("*.elf"))
    out = subprocess.run([sys.executable, "-m", "tvmdev", "inspect", str(elf), "--model",
                          str(build), "--json"], capture_output=True, text=True, check=True)
    fp = json.loads(out.stdout)["footprint"]

    def flash(c: str) -> int:
        row = fp.get(c, {})
        return int(row.get("text", 0) + row.get("rodata", 0) + row.get("data", 0))

    def ram(c: str) -> int:
        row = fp.get(c, {})
        return int(row.get("data", 0) + row.get("bss", 0))

    return {"code": flash("executor") + flash("kernels"), "weights": flash("constants"),
            "ram": ram("executor") + ram("kernels")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--layers", type=int, default=500)
    ap.add_argument("--no-m55", action="store_true", help="skip the Cortex-M55 builds")
    args = ap.parse_args()
    from models import model_path

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        models: dict[str, Path] = {}
        for name in REAL:
            found = model_path(name)
            if found is None:
                print(f"{name}: not in the model cache (python3 tests/models.py)")
            else:
                models[name] = found
        models.update(onnx_models(tmp))
        gen_path = tmp / f"generated_{args.layers}.tflite"
        gen_path.write_bytes(generated_tflite(args.layers))
        models[gen_path.name] = gen_path
        print(f"{'model':<36} {'ops':>5} {'import s':>9} {'gen s':>7} {'cli s':>6} "
              f"{'arena':>8} {'bound':>8} {'ratio':>6} {'TFLM act':>8} {'TFLM all':>8}  "
              f"M55: {'code':>7} {'weights':>8} {'RAM':>7}")
        for label, path in models.items():
            row = measure(label, path, tmp, args)
            print(row)
    return 0


def measure(label: str, path: Path, tmp: Path, args: argparse.Namespace) -> str:
    """One table row."""
    try:
        t_import, t_gen, gen = timed(path, args.repeat, board_by_name("mps3_an547"))
    except Exception as exc:  # a model the front ends cannot take yet: say so, go on
        return f"{label:<36} {type(exc).__name__}: {exc}"
    cli = cli_seconds(path, tmp / f"aot_{path.stem}")
    mem = gen.memory
    n_ops = len(gen.model.operators)
    tflm = tflm_arena(path)
    peer = f"{tflm[0]:>8} {tflm[1]:>8}" if tflm else f"{'-':>8} {'-':>8}"
    row = (f"{label:<36} {n_ops:>5} {t_import:>9.3f} {t_gen:>7.3f} {cli:>6.2f} "
           f"{mem.arena_size:>8} {mem.lower_bound:>8} {mem.ratio:>6.3f} {peer}")
    if args.no_m55:
        return row
    fp = m55(path, tmp / f"m55_{path.stem}")
    if isinstance(fp, str):
        return row + f"  M55: {fp}"
    return row + f"       {fp['code']:>7} {fp['weights']:>8} {fp['ram']:>7}"


if __name__ == "__main__":
    sys.exit(main())
