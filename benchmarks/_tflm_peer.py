"""The TFLM peer of issue #15's benchmark: a .tflite model through TensorFlow Lite Micro
with its CMSIS-NN kernels (or its reference kernels), built bare-metal for a tvmdev board
(mps2_an386 Cortex-M4, mps3_an547 Cortex-M55) and run under the same QEMU as tvmdev's
firmware, counted with the same counter.

API::

    measure(model: Path, board: str, kernels: str = "cmsis_nn") -> dict
        instructions       per Invoke (None when the counter is not in this tree)
        arena_used_bytes   MicroInterpreter::arena_used_bytes() after AllocateTensors
        flash_bytes        text + rodata + data of the ELF, less the model and input arrays
        outputs_equal      the outputs byte-equal to TFLM's Python interpreter's
        ...                (see ``measure``)

    python benchmarks/_tflm_peer.py [--models ...] [--boards ...] [--reference]

What is built (``_tflm_build.py`` has the how): the tflite-micro tree's own Makefile
(TARGET=cortex_m_generic, OPTIMIZED_KERNEL_DIR=cmsis_nn, arm-none-eabi-gcc from PATH,
BUILD_TYPE=release, every level at -O2) compiles, into a cache outside the repository,
TFLM's core, the kernels of the operators the four MLPerf Tiny models use and the CMSIS-NN
library; they are archived and linked with ``tflm_peer/main.cc``, tvmdev's startup,
semihosting exit and console UART (runtime/cortex_m), and, when present,
runtime/cortex_m/icount.c.

main.cc registers only the model's operators, with the ``Register_*_INT8`` variants where
TFLM has them (the others, RESHAPE, QUANTIZE, DEQUANTIZE and the like, with their default
registrations), so the flash figure is the code such an application links.

The count: ``tvmdev_icount_start()`` right before ``interpreter.Invoke()`` and
``tvmdev_icount_ticks()`` right after (AllocateTensors is not counted), QEMU run with
``-icount`` as benchmarks/_icount.py says; ticks become instructions there.

The inputs: seeded; the first as int8 values over [-128, 0) (INPUT_RANGE), or, for a
model with a float input that it quantizes itself, the floats those int8 values stand for
in its QUANTIZE, so the quantized input is the same values; further or other inputs as
``model_inputs`` says. Their raw bytes are stored in the firmware, which copies them in.
The reference: TFLM's Python interpreter (pip package tflite-micro, reference kernels) on
the same inputs; CMSIS-NN's int8 kernels are bit-exact with TFLite's, so the outputs must
be byte-equal.

Trees (environment variables; ``_tflm_build.TREES`` lists them with what they hold): a
missing one is a ``PeerUnavailable`` saying which and how to get it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _p in (str(ROOT), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import _tflm_build as tflm_build  # noqa: E402
from _tflm_build import PeerUnavailable  # noqa: E402

from tvmdev.frontends.tflite import TfGraph, read  # noqa: E402
from tvmdev.load.board import Board, board_by_name  # noqa: E402

MODELS = ("keyword_spotting", "image_classification", "anomaly_detection",
          "visual_wake_words")
BOARDS = ("mps2_an386", "mps3_an547")
SEED = 15
# The input's int8 values: the lower half of int8. Over the whole range, keyword
# spotting's softmax puts 0.996 on one class and 0 on the others, a weak output to compare.
INPUT_RANGE = (-128, 0)
# The issue's figures (arm-none-eabi-gcc 12, -O2), to print beside ours:
# (instructions, arena_used_bytes, flash KB).
ISSUE = {("keyword_spotting", "mps2_an386"): (7.72e6, 22_944, 59.4),
         ("keyword_spotting", "mps3_an547"): (1.83e6, 27_424, 50.7),
         ("image_classification", "mps2_an386"): (29.9e6, 54_996, 57.1),
         ("image_classification", "mps3_an547"): (4.91e6, 54_996, 47.4)}
ISSUE_REFERENCE = {("keyword_spotting", "mps2_an386"): 43.2e6,
                   ("keyword_spotting", "mps3_an547"): 42.3e6}
REFERENCE_ARENA = 1 << 24
_OUT = re.compile(r"^tflm: output (\d+) ([0-9a-f]*)$", re.M)
_ARENA = re.compile(r"^tflm: arena_used_bytes (\d+)$", re.M)

__all__ = ["PeerUnavailable", "measure"]


def _icount() -> Any | None:
    """benchmarks/_icount.py when this tree has the counter, else None."""
    if not (ROOT / "runtime" / "cortex_m" / "icount.c").is_file():
        return None
    try:
        import _icount  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    return _icount


def _quantize_input(g: TfGraph) -> tuple[float, int] | None:
    """(scale, zero point) of the QUANTIZE reading the model's float input, or None when
    the input is int8."""
    index = g.inputs[0]
    t = g.tensors[index]
    if t.dtype == "int8":
        return None
    for op in g.ops:
        if op.kind == "QUANTIZE" and op.inputs[0] == index:
            q = g.tensors[op.outputs[0]].quant
            if q is not None and len(q.scale) == 1:
                return float(q.scale[0]), int(q.zero_point[0])
    raise PeerUnavailable(f"the input of the model is {t.dtype}, not read by a per-tensor "
                          "QUANTIZE: the peer's runner feeds int8 or such float inputs")


def model_input(g: TfGraph, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """The first input's int8 values and the input tensor they make (the same array, or
    their float32 values for a model with a float input)."""
    t = g.tensors[g.inputs[0]]
    q = np.random.default_rng(seed).integers(*INPUT_RANGE, t.shape).astype(np.int8)
    quant = _quantize_input(g)
    if quant is None:
        return q, q
    scale, zero = quant
    # one float32 rounding of (q - zero) * scale, as a quantized sensor value would be
    x = (q.astype(np.int32) - zero).astype(np.float32) * np.float32(scale)
    return q, x.astype(np.float32)


def model_inputs(g: TfGraph, seed: int = SEED) -> list[np.ndarray]:
    """Seeded values for every input: the first as ``model_input`` (int8 over INPUT_RANGE,
    or the floats such values stand for), int16 over the whole range, other integers over
    [-100, 100), other floats over [-1, 1)."""
    t0 = g.tensors[g.inputs[0]]
    r = np.random.default_rng(seed + 1)
    arrays = []
    for n, index in enumerate(g.inputs):
        t = g.tensors[index]
        if n == 0 and (t0.dtype == "int8" or t0.dtype == "float32" and _has_quantize(g)):
            arrays.append(model_input(g, seed)[1])
        elif t.dtype == "int16":
            arrays.append(r.integers(-32768, 32768, t.shape).astype(np.int16))
        elif t.dtype.startswith(("int", "uint")):
            arrays.append(r.integers(-100, 100, t.shape).astype(t.dtype))
        else:
            arrays.append(r.uniform(-1.0, 1.0, t.shape).astype(t.dtype))
    return arrays


def _has_quantize(g: TfGraph) -> bool:
    return any(op.kind == "QUANTIZE" and op.inputs[0] == g.inputs[0] for op in g.ops)


def int8_ops(g: TfGraph) -> frozenset[str]:
    """The operators whose every use reads an int8 first input and writes int8 outputs
    (the peer registers their int8 variants, as an int8 application would). An int8 to
    int16 SOFTMAX (keyword_scrambled's) is not one: TFLM's ``Register_SOFTMAX_INT8`` runs
    CMSIS-NN's int8-to-int8 softmax whatever the output's type."""
    kinds = {op.kind for op in g.ops}
    return frozenset(k for k in kinds if all(
        op.inputs and g.tensors[op.inputs[0]].dtype == "int8"
        and all(g.tensors[o].dtype == "int8" for o in op.outputs)
        for op in g.ops if op.kind == k))


def reference_outputs(model: Path, xs: list[np.ndarray], n: int) -> list[bytes]:
    """The raw bytes of TFLM's Python interpreter's ``n`` outputs for inputs ``xs``."""
    try:
        from tflite_micro.python.tflite_micro import runtime  # type: ignore[import-untyped, unused-ignore]
    except ImportError as exc:
        raise PeerUnavailable(f"the reference needs tflite-micro ({exc}): "
                              "pip install tflite-micro") from None
    # an arena of its own size: TFLM's guess (ten times the model) is too small for a model
    # of few constants
    interp = runtime.Interpreter.from_bytes(model.read_bytes(), arena_size=REFERENCE_ARENA)
    for i, x in enumerate(xs):
        interp.set_input(x, i)
    interp.invoke()
    return [np.ascontiguousarray(interp.get_output(i)).tobytes() for i in range(n)]


def run(board: Board, elf: Path, counter: Any | None) -> str:
    """The firmware's console output (QEMU -icount when counting)."""
    if counter is not None:
        out: str = counter.run_elf(board.name, elf)
        return out
    assert board.run.qemu is not None
    cmd = [board.run.qemu, *board.run.args, "-kernel", str(elf)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=board.run.timeout * 5)
    if proc.returncode != 0:
        raise RuntimeError(f"{elf.name} exited {proc.returncode} on {board.name}: "
                           + (proc.stdout + proc.stderr)[-1000:])
    return proc.stdout


def parse(out: str) -> tuple[int, dict[int, bytes]]:
    """arena_used_bytes and the outputs a firmware printed."""
    arena = _ARENA.search(out)
    if arena is None or "tflm: done" not in out:
        raise RuntimeError("the TFLM firmware did not finish: " + out[-800:])
    return int(arena[1]), {int(m[1]): bytes.fromhex(m[2]) for m in _OUT.finditer(out)}


def measure(model: Path, board: str, kernels: str = "cmsis_nn") -> dict[str, Any]:
    """TFLM on ``board`` (mps2_an386, mps3_an547) for the .tflite ``model``, with
    ``kernels`` "cmsis_nn" (TFLM's CMSIS-NN kernels) or "reference" (TFLM's own).

    Returns a dict: ``instructions`` (per Invoke; None when this tree has no
    runtime/cortex_m/icount.c, with ``count`` saying so), ``ticks``, ``resolution``
    (the count's ±), ``arena_used_bytes``, ``arena_bytes`` (the same, as
    cmsis_nn_bench.py reads it), ``flash_bytes`` (text + rodata + data, without the
    model's and the input's arrays), ``flash_parts`` (the same by origin: tflm, cmsis_nn,
    libc, harness; _tflm_build.flash_parts), ``outputs_equal`` (byte-equal to TFLM's Python
    interpreter's outputs), ``ops``, ``elf``, ``kernels``, ``cmsis_nn_pinned`` (the
    CMSIS-NN tree is at the commit tflite-micro pins). Raises PeerUnavailable when a tree,
    a tool or the model's operators are out of reach.
    """
    model = Path(model)
    b = board_by_name(board)
    g = read(model, model.read_bytes())
    xs = model_inputs(g)
    counter = _icount()
    built = tflm_build.firmware(model, b, kernels, sorted({op.kind for op in g.ops}), xs,
                                int8_ops(g), icount=counter is not None)
    out = run(b, built.elf, counter)
    arena, outputs = parse(out)
    expected = reference_outputs(model, xs, len(g.outputs))
    got = [outputs.get(i, b"") for i in range(len(g.outputs))]
    result: dict[str, Any] = {
        "model": model.stem, "board": board, "kernels": kernels,
        "arena_used_bytes": arena, "arena_bytes": arena, "flash_bytes": built.flash,
        "outputs_equal": got == expected, "ops": built.ops, "elf": str(built.elf),
        "flash_parts": built.parts,
        "cmsis_nn_pinned": built.pinned, "instructions": None, "ticks": None,
        "count": "no runtime/cortex_m/icount.c in this tree (QEMU ran uncounted)"}
    if counter is not None:
        ticks = counter.printed_ticks(out)
        if ticks is None:
            raise RuntimeError("the counted TFLM firmware printed no icount ticks")
        result.update(ticks=ticks, instructions=counter.to_instructions(board, ticks),
                      resolution=counter.resolution(board), count="QEMU -icount, SysTick")
    return result


def _cell(r: dict[str, Any] | str) -> str:
    if isinstance(r, str):
        return f"n/a: {r}"
    ins = "-" if r["instructions"] is None else f"{r['instructions']:,}"
    return (f"{ins:>11} {r['arena_used_bytes']:>8,} {r['flash_bytes']:>8,} "
            f"{'yes' if r['outputs_equal'] else 'NO':>5}"
            + (" (CMSIS-NN not at tflite-micro's pin)" if r["cmsis_nn_pinned"] is False else ""))


def _issue(model: str, board: str, kernels: str) -> str:
    if kernels == "reference":
        ref = ISSUE_REFERENCE.get((model, board))
        return f"{ref / 1e6:.1f} M" if ref else ""
    got = ISSUE.get((model, board))
    return f"{got[0] / 1e6:.2f} M / {got[1]:,} / {got[2]} KB" if got else ""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", default=list(MODELS))
    p.add_argument("--boards", nargs="+", default=list(BOARDS))
    p.add_argument("--model-dir", type=Path,
                   default=Path(os.environ.get("TVMDEV_MODEL_CACHE",
                                               Path.home() / ".cache" / "tvmdev-models")))
    p.add_argument("--reference", action="store_true",
                   help="also TFLM's reference kernels for keyword_spotting")
    p.add_argument("--json", type=Path, help="also write the results here")
    args = p.parse_args()
    runs = [(m, b, "cmsis_nn") for m in args.models for b in args.boards]
    if args.reference:
        runs += [("keyword_spotting", b, "reference") for b in args.boards]
    print(f"{'model':<21} {'board':<11} {'kernels':<9} {'instr.':>11} {'arena':>8} "
          f"{'flash':>8} {'equal':>5}   issue #15 (instr. / arena / flash)")
    results = []
    for m, b, k in runs:
        try:
            r: dict[str, Any] | str = measure(args.model_dir / f"{m}.tflite", b, k)
        except (PeerUnavailable, RuntimeError) as exc:
            r = str(exc)
        results.append(r if isinstance(r, dict) else {"model": m, "board": b, "kernels": k,
                                                       "reason": r})
        print(f"{m:<21} {b:<11} {k:<9} {_cell(r)}   {_issue(m, b, k)}", flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
