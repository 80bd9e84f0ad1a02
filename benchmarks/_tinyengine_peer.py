"""The TinyEngine peer of issues 24 and 25: a .tflite model through MIT TinyEngine's code
generator ("MCUNet", NeurIPS 2020/2021) and its kernels, built bare-metal for a tvmdev
board (mps2_an386 Cortex-M4; mps3_an547 Cortex-M55 where it builds and fits) and run under
the same QEMU as tvmdev's firmware, counted with the same counter as the TFLM peer.

API::

    measure(model: Path, board: str, requant: str = "float", patches: int = 0) -> dict
        instructions   per invoke() (QEMU -icount with SysTick, benchmarks/_icount.py)
        peak_mem       genModel.h's PEAK_MEM: the static buffer, activations, the model's
                       int8 input and output and the im2col buffers (sbuf, kbuf) in it
        buffer_bytes   the size of that buffer in the ELF (pyelftools): the same figure
        exact          the output byte-equal to TFLM's Python interpreter's
        input_bytes    the model's int8 input (in the buffer, or the caller's when
                       patch-based)
        max_diff       the largest difference from it, in int8 steps
        differ         how many output values differ

    python benchmarks/_tinyengine_peer.py [--models ...] [--boards ...]

``requant``: "float" (TinyEngine's default, ``fp_requantize=True``: each output channel
rescaled with a float multiply) or "integer" (TFLM's fixed-point multiply and shift).
``patches`` n > 0: patch-based inference (MCUNetV2) with n x n patches, split where
``PATCH_SPLIT`` says for the model (TinyEngine's examples/vww_patchbased.py: 2 patches,
split at layer 5, for MCUNet VWW).

The input: the bytes ``tvmdev run MODEL`` feeds (tvmdev.model.inputs.random_inputs, seed
0): int8 over [-128, 127], or floats over the range the model's QUANTIZE spans. TinyEngine
leaves QUANTIZE and DEQUANTIZE out (its code takes and gives int8), so the firmware gets
the int8 values TFLM's QUANTIZE makes of those floats (its AffineQuantize: the division in
float32, rounded half away from zero) and prints the int8 output; TFLM's interpreter runs
the whole model on the floats, and its float output is mapped back to int8 through the
DEQUANTIZE's scale and zero point, which is exact (checked). A model the generator
refuses raises PeerUnavailable saying why; wrong results are reported as such (``exact``
False), never as a figure alone.

_tinyengine_build.py has how the code is generated and built, and which trees it needs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _p in (str(ROOT), str(HERE), str(ROOT / "tests")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import _tflm_peer as tflm_peer  # noqa: E402
import _tinyengine_build as te_build  # noqa: E402
from _tflm_build import PeerUnavailable  # noqa: E402

from tvmdev.frontends.tflite import TfGraph, read  # noqa: E402
from tvmdev.load.board import board_by_name  # noqa: E402

MODELS = ("keyword_spotting", "image_classification", "anomaly_detection",
          "visual_wake_words", "person_detect", "mcunet_vww", "mcunetv2_large")
# This benchmark's names of the models of the field (tests/field_models.py).
FIELD = {"person_detect": "person_detect", "mcunet_vww": "vww",
         "mcunetv2_large": "mcunetv2_large"}
BOARDS = ("mps2_an386", "mps3_an547")
# Where patch-based inference splits, for the models TinyEngine has an example of.
PATCH_SPLIT = {"vww": 5}
_OUT = re.compile(r"^tinyengine: output ([0-9a-f]*)$", re.M)

__all__ = ["PeerUnavailable", "measure", "locate"]


def locate(name: str) -> Path | str:
    """A model's file by this benchmark's name, or why it is out of reach."""
    if name in FIELD:
        import field_models
        found: Path | str = field_models.locate(FIELD[name])
        return found
    from models import model_path
    path = model_path(f"{name}.tflite")
    return path if path is not None else "not in the model cache (python3 tests/models.py)"


def int8_output(g: TfGraph) -> tuple[int, tuple[float, int] | None]:
    """The tensor TinyEngine outputs (the model's output, or the int8 tensor its
    DEQUANTIZE reads): its byte size, and the (scale, zero point) that maps the model's
    float output back to it (None for an int8 output)."""
    if len(g.outputs) != 1:
        raise PeerUnavailable(f"{len(g.outputs)} outputs: the peer's main prints one")
    index = g.outputs[0]
    quant = None
    for op in g.ops:
        if op.kind == "DEQUANTIZE" and op.outputs[0] == index:
            index = op.inputs[0]
            q = g.tensors[index].quant
            assert q is not None
            quant = (float(q.scale[0]), int(q.zero_point[0]))
    t = g.tensors[index]
    if t.dtype != "int8":
        raise PeerUnavailable(f"the model's output is {t.dtype}: the peer compares int8")
    return int(np.prod(t.shape)), quant


def model_input(path: Path, g: TfGraph) -> tuple[np.ndarray, np.ndarray]:
    """The int8 values TinyEngine's input takes, and the input TFLM's interpreter takes
    (the same array, or the floats ``tvmdev run`` feeds a float-input model)."""
    from tvmdev.frontends.importer import import_file
    from tvmdev.model.inputs import random_inputs
    from tvmdev.model.s8.quantize import round_half_away

    if len(g.inputs) != 1:
        raise PeerUnavailable(f"{len(g.inputs)} inputs: the peer's main fills one")
    x = next(iter(random_inputs(import_file(path).to_model(), 0).values()))
    if x.dtype == np.int8:
        return x, x
    quant = tflm_peer._quantize_input(g)
    assert quant is not None
    scale, zero = quant
    q = round_half_away(x.astype(np.float32) / np.float32(scale)) + zero
    return np.clip(q, -128, 127).astype(np.int8), x


def expected_int8(model: Path, g: TfGraph, x: np.ndarray) -> np.ndarray:
    """TFLM's interpreter's output on ``x``, as the int8 values TinyEngine outputs."""
    raw = tflm_peer.reference_outputs(model, [x], 1)[0]
    _, quant = int8_output(g)
    if quant is None:
        return np.frombuffer(raw, np.int8)
    scale, zero = quant
    y = np.frombuffer(raw, np.float32)
    q = np.round(y.astype(np.float64) / scale) + zero
    back = ((q - zero).astype(np.float32) * np.float32(scale)).astype(np.float32)
    if not np.array_equal(back, y):  # the mapping back must be exact, or say so
        raise RuntimeError(f"{model.name}: TFLM's float output is not (q - {zero}) x {scale}")
    return q.astype(np.int8)


def measure(model: Path, board: str, requant: str = "float",
            patches: int = 0) -> dict[str, Any]:
    """TinyEngine on ``board`` for the .tflite ``model`` (module docstring). Raises
    PeerUnavailable when its generator refuses the model or a tree or tool is missing,
    RuntimeError when the firmware does not finish."""
    model = Path(model)
    if requant not in te_build.REQUANTS:
        raise PeerUnavailable(f"requant {requant!r}: one of {', '.join(te_build.REQUANTS)}")
    split = 0
    if patches:
        key = next((k for k in PATCH_SPLIT if model.stem.removesuffix("_int8io") == k), None)
        if key is None:
            raise PeerUnavailable(f"no patch split known for {model.name} (PATCH_SPLIT)")
        split = PATCH_SPLIT[key]
    b = board_by_name(board)
    g = read(model, model.read_bytes())
    n_out, _ = int8_output(g)
    q, x = model_input(model, g)
    gen = te_build.generate(model, requant, patches, split)
    counter = tflm_peer._icount()
    elf = te_build.firmware(gen, b, q.tobytes(), n_out, icount=counter is not None)
    out = tflm_peer.run(b, elf, counter)
    found = _OUT.search(out)
    if found is None or "tinyengine: done" not in out:
        raise RuntimeError("the TinyEngine firmware did not finish: " + out[-800:])
    got = np.frombuffer(bytes.fromhex(found[1]), np.int8)
    want = expected_int8(model, g, x)
    diff = np.abs(got.astype(np.int32) - want.astype(np.int32))
    result: dict[str, Any] = {
        "model": model.stem, "board": board, "requant": requant, "patches": patches,
        "split": split, "peak_mem": gen.peak_mem, "scheduler_peak": gen.peak,
        "buffer_bytes": te_build.static_buffer(elf), "exact": bool(diff.max() == 0),
        "max_diff": int(diff.max()), "differ": int((diff != 0).sum()), "values": int(diff.size),
        "input_bytes": int(q.nbytes),
        "elf": str(elf), "instructions": None, "ticks": None,
        "count": "no runtime/cortex_m/icount.c in this tree (QEMU ran uncounted)"}
    if counter is not None:
        ticks = counter.printed_ticks(out)
        if ticks is None:
            raise RuntimeError("the counted TinyEngine firmware printed no icount ticks")
        result.update(ticks=ticks, instructions=counter.to_instructions(board, ticks),
                      resolution=counter.resolution(board), count="QEMU -icount, SysTick")
    return result


def correctness(r: dict[str, Any]) -> str:
    """"bit-exact", or how far from TFLM the outputs are."""
    if r["exact"]:
        return "bit-exact"
    return f"WRONG: {r['differ']} of {r['values']} off, max {r['max_diff']}"


def variants(name: str) -> list[tuple[str, int]]:
    """(requantization, patches) to measure for a model: both requantizations, and
    patch-based where TinyEngine has a split for it."""
    runs = [(rq, 0) for rq in te_build.REQUANTS]
    if FIELD.get(name) in PATCH_SPLIT:
        runs += [(rq, 2) for rq in te_build.REQUANTS]
    return runs


def _cell(r: dict[str, Any] | str) -> str:
    if isinstance(r, str):
        return f"n/a: {r}"
    ins = "-" if r["instructions"] is None else f"{r['instructions']:,}"
    return f"{ins:>12} {r['peak_mem']:>9,} {r['buffer_bytes']:>9,}  {correctness(r)}"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", default=list(MODELS))
    p.add_argument("--boards", nargs="+", default=["mps2_an386"])
    p.add_argument("--json", type=Path, help="also write the results here")
    args = p.parse_args()
    print(f"{'model':<21} {'board':<11} {'requant':<8} {'patches':>7} {'instr.':>12} "
          f"{'PEAK_MEM':>9} {'buffer':>9}  vs TFLM's interpreter")
    results: list[dict[str, Any]] = []
    for m in args.models:
        path = locate(m)
        for b in args.boards:
            for rq, n in variants(m):
                try:
                    if isinstance(path, str):
                        raise PeerUnavailable(path)
                    r: dict[str, Any] | str = measure(path, b, rq, n)
                except (PeerUnavailable, RuntimeError) as exc:
                    r = str(exc)
                results.append(r if isinstance(r, dict) else {
                    "model": m, "board": b, "requant": rq, "patches": n, "reason": r})
                print(f"{m:<21} {b:<11} {rq:<8} {n or '-':>7} {_cell(r)}", flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "Agg")
    sys.exit(main())
