"""Comparing a run with the numpy reference: per-output tolerances, the per-operator
table, device-call balance, and reading and saving tensors."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import TvmdevError, Where
from ..inspect.stack import StackUsage
from ..load.quantization import RAW_RANGE
from ..model import reference
from ..model.graph import Model
from ..reading import as_float32, load_npy
from .threads import thread_lines

ATOL = 1e-5
RTOL = 1e-4
# Models with 4-bit weights: accelerated int4 kernels also quantise the activations (to
# int8 per row), so outputs are compared within 1% of their largest magnitude.
Q_ATOL_SCALE = 1e-2
Q_RTOL = 1e-2


@dataclass
class OpReport:
    index: int
    name: str
    op: str
    device: str | None
    kernel: str
    shape: list[int]
    max_abs: float | None
    max_rel: float | None


@dataclass
class RunResult:
    status: int
    status_name: str
    outputs: dict[str, np.ndarray]
    reference: dict[str, np.ndarray]
    devices: dict[str, dict[str, int]] = field(default_factory=dict)
    ops: list[OpReport] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    quantized: bool = False  # the model has 4-bit weights: the looser tolerance applies
    stack: StackUsage | None = None  # firmware: the run's stack, worst case and measured
    failed_thread: int | None = None  # with several threads: the one that failed first
    exact: frozenset[str] = frozenset()  # float outputs compared exactly (exact_outputs)

    def tolerance(self, name: str) -> tuple[float, float]:
        """(atol, rtol) for one output: none for an integer one or one a dequantize
        writes (bit-exact)."""
        if self.reference[name].dtype.kind in "iu" or name in self.exact:
            return 0.0, 0.0
        if not self.quantized:
            return ATOL, RTOL
        return Q_ATOL_SCALE * _largest(self.reference[name]), Q_RTOL

    def errors(self, name: str) -> tuple[float, float]:
        """The largest absolute and relative error of one output."""
        return _errors(self.outputs[name], self.reference[name])

    def mismatches(self) -> list[str]:
        """Outputs outside their tolerance."""
        bad = []
        for name, got in self.outputs.items():
            ref = self.reference[name]
            atol, rtol = self.tolerance(name)
            if ref.dtype.kind in "iu":  # exactly, not through float64 (uint64 exceeds it)
                if got.shape != ref.shape or not np.array_equal(got, ref):
                    bad.append(name)
            elif got.shape != ref.shape or not np.all(_close(got, ref, atol, rtol)):
                bad.append(name)
        return bad

    def balanced(self) -> list[str]:
        """Devices whose Open/Close or Activate/Deactivate do not balance."""
        bad = []
        for name, c in self.devices.items():
            if (c["open"] != c["close"] or c["activate"] != c["deactivate"]
                    or c["open_now"] != 0 or c["active_now"] != 0 or c["violations"] != 0
                    or c.get("pending_now", 0) != 0):
                bad.append(name)
        return bad


def _same(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Where two arrays agree exactly: equal, both NaN, or the same infinity."""
    with np.errstate(all="ignore"):
        return np.asarray((got == ref) | (np.isnan(got) & np.isnan(ref)))


def _close(got: np.ndarray, ref: np.ndarray, atol: float, rtol: float) -> np.ndarray:
    """Where ``|got - ref| <= atol + rtol |ref|`` for finite values, or they agree exactly
    (NaN and NaN, an infinity and the same infinity)."""
    g, r = got.astype(np.float64), ref.astype(np.float64)
    with np.errstate(all="ignore"):
        near = np.isfinite(g) & np.isfinite(r) & (np.abs(g - r) <= atol + rtol * np.abs(r))
    return np.asarray(near | _same(g, r))


def _errors(got: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
    """The largest absolute and relative error: 0 where both agree exactly (NaN and NaN
    included), infinite where only one is NaN or infinite."""
    g, r = got.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
    with np.errstate(all="ignore"):
        diff = np.where(_same(g, r), 0.0, np.abs(g - r))
        diff = np.where(np.isnan(diff), np.inf, diff)
        rel = np.where(diff == 0.0, 0.0,
                       diff / np.maximum(np.abs(r), np.finfo(np.float32).tiny))
        rel = np.where(np.isnan(rel), np.inf, rel)
    return float(diff.max(initial=0.0)), float(rel.max(initial=0.0))


def _largest(values: np.ndarray) -> float:
    """The largest finite magnitude among ``values`` (0 if none)."""
    finite = values[np.isfinite(values)]
    return float(np.abs(finite).max(initial=0.0))


def load_inputs(model: Model, inputs_dir: Path | None, seed: int = 0) -> dict[str, np.ndarray]:
    """``DIR/<input>.npy`` for each input when a folder is given, else seeded random.
    Inputs may hold NaN and infinities; values beyond float32's range are refused."""
    if inputs_dir is None:
        return reference.random_inputs(model, seed)
    if not inputs_dir.is_dir():
        raise TvmdevError("no such folder" if not inputs_dir.exists() else "is not a folder",
                          str(inputs_dir), hint="--inputs takes a folder of <input>.npy files")
    out = {}
    for name in model.inputs:
        path = inputs_dir / f"{name}.npy"
        if not path.exists():
            raise TvmdevError(f"no input file for '{name}'", str(path),
                              hint=f"save it with numpy.save('{path}', array)")
        arr = load_npy(path, f"input '{name}'")
        want = model.tensors[name].shape
        if tuple(arr.shape) != want:
            raise TvmdevError(f"input '{name}' has shape {list(arr.shape)}, the model wants "
                              f"{list(want)}", str(path))
        dtype = model.tensors[name].dtype
        if dtype in ("int8", "int16") or (dtype == "int32"
                                          and model.tensors[name].quant is not None):
            if arr.dtype != np.dtype(dtype):
                raise TvmdevError(f"input '{name}' is {dtype} in the model, the file holds "
                                  f"{arr.dtype}", str(path), hint=f"save it as numpy.{dtype}")
            out[name] = arr
        elif dtype == "int32":
            out[name] = _indices(model, name, arr, path)
        elif model.tensors[name].dtype in RAW_RANGE:
            out[name] = _raw_ints(model.tensors[name].dtype, name, arr, path)
        else:
            out[name] = as_float32(arr, f"input '{name}'", Where(str(path)), finite=False)
    return out


def _raw_ints(dtype: str, name: str, arr: np.ndarray, path: Path) -> np.ndarray:
    """A raw integer input (int16, uint32, uint64) from a file of integers in its range."""
    lo, hi = RAW_RANGE[dtype]
    if arr.dtype.kind not in "iu":
        raise TvmdevError(f"input '{name}' is {dtype} in the model, the file holds "
                          f"{arr.dtype}", str(path), hint=f"save it as numpy.{dtype}")
    if arr.size and (int(arr.min()) < lo or int(arr.max()) > hi):
        raise TvmdevError(f"input '{name}' holds {int(arr.min())} to {int(arr.max())}, "
                          f"outside {dtype}'s range", str(path))
    return arr.astype(np.dtype(dtype))


def _indices(model: Model, name: str, arr: np.ndarray, path: Path) -> np.ndarray:
    """An int32 input (indices) from a file of integers, each in its range
    (:func:`~tvmdev.model.reference.index_range`)."""
    if arr.dtype.kind not in "iu":
        raise TvmdevError(f"input '{name}' is int32 in the model, the file holds {arr.dtype}",
                          str(path), hint="save it as numpy.int32 (or int64)")
    lo, hi = reference.index_range(model, name)
    if arr.size and (int(arr.min()) < lo or int(arr.max()) >= hi):
        raise TvmdevError(f"input '{name}' holds {int(arr.min())} to {int(arr.max())}; its "
                          f"values must be in [{lo}, {hi})", str(path),
                          hint="gather indices count from the end when negative")
    return arr.astype(np.int32)


def report(result: RunResult) -> list[str]:
    """The per-operator table, output errors and device balance, as lines."""
    rows = [("#", "operator", "op", "device", "kernel", "shape", "max abs err", "max rel err")]
    for r in result.ops:
        rows.append((str(r.index), r.name, r.op, r.device or "-", r.kernel, str(r.shape),
                     "-" if r.max_abs is None else f"{r.max_abs:.3g}",
                     "-" if r.max_rel is None else f"{r.max_rel:.3g}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    lines.append("")
    for name in result.outputs if result.status == 0 else ():
        if result.reference[name].dtype.kind in "iu":
            lines.append(int_line(name, result.outputs[name], result.reference[name]))
            continue
        err_abs, err_rel = result.errors(name)
        ok = name not in result.mismatches()
        atol, rtol = result.tolerance(name)
        lines.append(f"output {name} {list(result.outputs[name].shape)}: max abs err "
                     f"{err_abs:.3g}, max rel err {err_rel:.3g}: "
                     f"{'within' if ok else 'OUTSIDE'} tolerance "
                     f"(atol {atol:.3g}, rtol {rtol:g}"
                     f"{', int4 weights' if result.quantized else ''})")
    if result.status != 0:
        lines.append("outputs: not compared (the run failed)")
    for name, c in result.devices.items():
        ok = name not in result.balanced()
        lines.append(f"device {name}: activate {c['activate']} / deactivate {c['deactivate']}, "
                     f"open {c['open']} / close {c['close']}, operators {c['operator']}: "
                     f"{'balanced' if ok else 'NOT BALANCED'}")
        if "bytes_to" in c:  # a simulated device with memory: what it moved, all runs
            lines.append(f"device {name}: {c['bytes_to']} bytes copied in ({c['copy_to']} "
                         f"copies), {c['bytes_from']} out ({c['copy_from']}), {c['wait']} "
                         f"waits")
    lines += thread_lines(result.stdout)
    lines += kleidiai_lines(result.stdout)
    if result.stack is not None:
        lines.append(result.stack.summary())
    return lines


def int_line(name: str, got: np.ndarray, ref: np.ndarray) -> str:
    """The comparison of an int8 output: how many elements differ, by how many steps at
    most (bit-exact is the only pass)."""
    if got.shape != ref.shape:
        return (f"output {name} {list(ref.shape)} {ref.dtype}: got shape {list(got.shape)}: "
                "NOT EXACT")
    if ref.dtype == np.uint64:  # its differences may pass int64: as python integers
        diff = np.array([abs(int(a) - int(b)) for a, b in zip(got.ravel(), ref.ravel(),
                                                                strict=True)], object)
    else:
        diff = np.abs(got.astype(np.int64) - ref.astype(np.int64))
    bad = int(np.count_nonzero(diff))
    return (f"output {name} {list(ref.shape)} {ref.dtype}: {bad} of {diff.size} elements "
            f"differ, largest difference {int(diff.max(initial=0))} steps: "
            + ("bit-exact" if bad == 0 else "NOT EXACT"))


def kleidiai_lines(stdout: str) -> list[str]:
    """What each KleidiAI device served, from the counters the host harness printed
    (``tvmdev: kleidiai NAME calls=.. declined=.. packs=.. tiles=.. ukernel=..``)."""
    lines = []
    for line in stdout.splitlines():
        parts = line.split()
        if parts[:2] != ["tvmdev:", "kleidiai"] or len(parts) < 3:
            continue
        c = dict(p.split("=", 1) for p in parts[3:] if "=" in p)
        lines.append(f"device {parts[2]} (kleidiai): {c.get('calls', '?')} calls served "
                     f"(the last on {c.get('ukernel', '-')}), {c.get('declined', '?')} "
                     f"declined to the next kernel, {c.get('packs', '?')} constants packed")
    return lines


def save_outputs(result: RunResult, folder: Path) -> list[Path]:
    """Save each output as ``<name>.npy`` and the status as JSON in ``folder``."""
    paths = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, arr in result.outputs.items():
            path = folder / f"{name}.npy"
            np.save(path, arr)
            paths.append(path)
        (folder / "status.json").write_text(json.dumps({"status": result.status}) + "\n")
    except OSError as exc:
        raise TvmdevError(f"cannot save the outputs: {exc.strerror}",
                          str(exc.filename or folder)) from None
    return paths


def exact_outputs(model: Model) -> frozenset[str]:
    """The outputs compared bit for bit: integer ones, and float ones a dequantize writes
    (its integer input and float arithmetic are exact, as TFLM's)."""
    dequantized = {o for op in model.operators if op.op == "dequantize" for o in op.outputs}
    return frozenset(n for n in model.outputs
                     if model.tensors[n].dtype != "float32" or n in dequantized)


def tolerance_for(model: Model, expected: dict[str, np.ndarray]
                  ) -> dict[str, tuple[float, float]]:
    """(atol, rtol) of each output, for firmware that checks itself: 0 for an exact one
    (:func:`exact_outputs`), else as :meth:`RunResult.tolerance`."""
    exact = exact_outputs(model)
    if model.quantized:
        loose = (Q_ATOL_SCALE * max(_largest(expected[n]) for n in model.outputs), Q_RTOL)
    else:
        loose = (ATOL, RTOL)
    return {n: (0.0, 0.0) if n in exact else loose for n in model.outputs}


def op_errors(model: Model, ref: dict[str, np.ndarray], trace_dir: Path | None,
              index: int, output: str) -> tuple[float | None, float | None]:
    """The largest absolute and relative error of one operator's traced output."""
    tr = trace_dir / f"{index}.bin" if trace_dir is not None else None
    if tr is None or not tr.is_file() or output not in ref:  # a band of a patched stage
        return None, None
    got = np.fromfile(tr, dtype=np.dtype(model.tensors[output].dtype))
    want = ref[output].ravel()
    if got.size != want.size:
        return None, None
    return _errors(got, want)
