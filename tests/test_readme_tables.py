"""The README's operator tables against the code they describe, so that they cannot rot:
the TFLite (and its raw-integer one) and ONNX tables name exactly the operators the
importers map (TFLite's and ONNX's float table with the dtypes each maps on), every
tvmdev op they name exists, and the kernels table is
what the kernel registries hold (portable, CMSIS-NN, KleidiAI, Metal), row for row.

When an operator or a kernel is added, the failure says which rows to add or change (the
kernels table is printed whole, as it should read)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from conftest import need_module

from tvmdev.model.ops import OPS

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# The kernel libraries, by the column they fill.
LIBRARIES = {"portable": "runtime/kernels/portable/kernels.yaml",
             "CMSIS-NN": "runtime/kernels/cmsis_nn/kernels.yaml",
             "KleidiAI": "runtime/kleidiai/kernels.yaml",
             "Metal": "runtime/metal/kernels.yaml"}
KERNELS_HEADING = "### Kernels by operator"


def _lines(heading: str) -> list[str]:
    """The lines of the first table after ``heading``."""
    text = README.read_text(encoding="utf-8")
    lines = text[text.index(f"\n{heading}\n"):].splitlines()[1:]
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next((i for i in range(first, len(lines)) if not lines[i].startswith("|")),
               len(lines))
    return lines[first:end]


def _table(heading: str) -> list[list[str]]:
    """The cells of the first table after ``heading`` (its header and rule left out)."""
    return [[c.strip() for c in line.strip().strip("|").split(" | ")]
            for line in _lines(heading)[2:]]


def _names(cell: str, pattern: str) -> list[str]:
    return [t for t in re.findall(r"`([^`]+)`", cell) if re.fullmatch(pattern, t)]


def _tvmdev_ops(rows: list[list[str]]) -> set[str]:
    """The ops each row's tvmdev column starts with (`conv2d`, or `sigmoid`, `tanh`)."""
    lead = (re.match(r"`[a-z0-9_]+`(, `[a-z0-9_]+`)*", r[1]) for r in rows)
    return {t for m in lead if m for t in re.findall(r"`([^`]+)`", m.group(0))}


def test_tflite_table_is_the_importers() -> None:
    need_module("tflite", "pip install -e '.[tflite]'")
    from tvmdev.frontends.tflite_ops import CONVERTERS, INT8_KINDS, INT16_KINDS, SHAPE_KINDS
    rows = _table("### TFLite operators")
    listed: dict[str, str] = {}
    for r in rows:
        for name in _names(r[0], r"[A-Z][A-Z0-9_]*"):
            listed[name] = r[2]
    assert sorted(listed) == sorted({*CONVERTERS, *SHAPE_KINDS}), \
        f"add rows for {sorted({*CONVERTERS, *SHAPE_KINDS} - set(listed))}, drop " \
        f"{sorted(set(listed) - {*CONVERTERS, *SHAPE_KINDS})}"
    want = {k: ("folded" if k in SHAPE_KINDS else "float32, int8, int16" if k in INT16_KINDS
                else "float32, int8" if k in INT8_KINDS else "float32") for k in listed}
    wrong = {k: (v, want[k]) for k, v in listed.items() if v != want[k]}
    assert not wrong, f"dtypes column (README, importer): {wrong}"
    assert _tvmdev_ops(rows) <= set(OPS), _tvmdev_ops(rows) - set(OPS)


def test_onnx_tables_are_the_importers() -> None:
    need_module("onnx", "pip install -e '.[onnx]'")
    from tvmdev.frontends.onnx import REMOVED
    from tvmdev.frontends.onnx_fold import FOLDERS
    from tvmdev.frontends.onnx_ops import CONVERTERS
    from tvmdev.frontends.onnx_qdq_lower import KINDS
    floats = _table("### ONNX operators: float32, the default domain (ai.onnx), opsets 7 to "
                    "the newest onnx defines")
    listed = {n for r in floats for n in _names(r[0], r"[A-Z][A-Za-z]*")}
    mapped = {*CONVERTERS, *FOLDERS, *REMOVED}
    assert listed == mapped, f"add {sorted(mapped - listed)}, drop {sorted(listed - mapped)}"
    wrong = {}
    for r in floats:
        for op in _names(r[0], r"[A-Z][A-Za-z]*"):
            want = "folded" if r[1] == "folded" else _onnx_dtypes(op)
            if r[1] == "folded" and op not in FOLDERS or r[2] != want:
                wrong[op] = (r[2], want)
    assert not wrong, f"dtypes column (README, importer): {wrong}"
    ints = _table("### ONNX int8: models from onnxruntime's `quantize_static`")
    listed = {n for r in ints for n in _names(r[0], r"[A-Z][A-Za-z]*")}
    lowered = set(KINDS) - {"QuantizeLinear", "DequantizeLinear"}
    assert listed == lowered, f"add {sorted(lowered - listed)}, drop {sorted(listed - lowered)}"
    named = _tvmdev_ops(floats) | _tvmdev_ops(ints)
    assert named <= set(OPS), named - set(OPS)


def _onnx_dtypes(op: str) -> str:
    """An ONNX operator's dtypes cell, from what the importers map it in: float32 (the
    float converters, or removed), int8 (the QDQ lowering), integer indices."""
    from tvmdev.frontends.onnx_indices import INDEX_DTYPES, INDEX_OPERANDS
    from tvmdev.frontends.onnx_qdq_lower import KINDS
    cell = "float32, int8" if op in KINDS else "float32"
    return cell + (f"; {', '.join(INDEX_DTYPES)} indices" if op in INDEX_OPERANDS else "")


def test_tflite_raw_integer_table_is_the_importers() -> None:
    """The raw-integer table (TFLM's signal library and integer builtins) names exactly
    the kinds the raw-integer converter maps."""
    need_module("tflite", "pip install -e '.[tflite]'")
    from tvmdev.frontends.tflite_rawint import BUILTINS, SIGNAL
    rows = _table("Raw integers (no quantization), as TFLM's signal library and micro_speech's")
    listed = {n for r in rows for n in _names(r[0], r"[A-Z][A-Za-z0-9_]*")}
    mapped = {*BUILTINS, *(k.removeprefix("CUSTOM:") for k in SIGNAL)}
    assert listed == mapped, f"add {sorted(mapped - listed)}, drop {sorted(listed - mapped)}"
    assert _tvmdev_ops(rows) <= set(OPS), _tvmdev_ops(rows) - set(OPS)


def _label(arg_meta: dict[str, list[str]] | None, alias: dict[str, list[str]]) -> str:
    """What a kernel takes: its output's dtype, ``in→out`` where the first operand's
    differs, int4 weights named."""
    if arg_meta is None:
        return "any"
    dtypes = [", ".join(alias.get(v[0], v) if len(v) == 1 else v) for v in arg_meta.values()]
    if "q4c32" in dtypes:
        return "int4 weights"
    return dtypes[-1] if dtypes[0] == dtypes[-1] else f"{dtypes[0]}→{dtypes[-1]}"


def kernel_rows() -> list[str]:
    """The kernels table as it should read: one row per tvmdev op (in the op table's
    order), each library's kernels by what they take."""
    by_op: dict[str, dict[str, list[str]]] = {}
    for column, rel in LIBRARIES.items():
        for entry in yaml.safe_load((ROOT / rel).read_text(encoding="utf-8")):
            alias = entry.get("type_alias") or {}
            cell = by_op.setdefault(entry["op"], {}).setdefault(column, [])
            for k in entry["kernels"]:
                label = _label(k.get("arg_meta"), alias)
                if label not in cell:
                    cell.append(label)
    rows = [f"| op | {' | '.join(LIBRARIES)} |", "|---" * (len(LIBRARIES) + 1) + "|"]
    for op in OPS:
        cells = by_op.get(op, {})
        rows.append(f"| `{op}` | " + " | ".join(", ".join(cells.get(c, [])) or "-"
                                                for c in LIBRARIES) + " |")
    return rows


def test_kernels_table_is_the_registries() -> None:
    want = kernel_rows()
    assert _lines(KERNELS_HEADING) == want, \
        "the README's kernels table should read:\n" + "\n".join(want)
    bare = [r.split("`")[1] for r in want[2:] if r.endswith(" | -" * len(LIBRARIES) + " |")]
    assert not bare, f"ops without a kernel: {bare}"


@pytest.mark.parametrize("rel", sorted(LIBRARIES.values()))
def test_every_registered_op_is_an_op(rel: str) -> None:
    ops = {e["op"] for e in yaml.safe_load((ROOT / rel).read_text(encoding="utf-8"))}
    assert ops <= set(OPS), ops - set(OPS)
