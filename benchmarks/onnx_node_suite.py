"""ONNX's own node tests (every case of ``onnx.backend.test.loader.load_model_tests(kind=
"node")``, 1,884 with onnx 1.23) through tvmdev's ONNX importer, counted.

    python benchmarks/onnx_node_suite.py [--run] [--json] [--list] [--ops]

Each case's model is imported as onnx ships it (its operands fed as graph inputs stay
graph inputs). A case *passes* when it imports and tvmdev's numpy reference
(``tvmdev.model.reference``) matches ONNX Runtime (one thread) within tvmdev's tolerance
(|c - r| <= 1e-5 + 1e-4 * |r|), or, where ONNX Runtime cannot run the model, the
outputs onnx ships with the case; it is *wrong* when it imports and does not match, and
*refused* when the importer says no in one line (counted by the line, with names and
counts elided). A traceback is counted as a crash.

``--run`` also builds every imported case into one model and runs it with ``tvmdev run``
on the host (the C kernels), and counts the cases whose C outputs match the same
reference. ``--list`` prints the names of the wrong and crashed cases. ``--ops`` gives,
for each operator the importer maps, its float32 cases (graph inputs and outputs float32,
every node that operator), how many pass and why the others do not.

The "float32 cases of mapped operators" line counts the cases whose graph inputs and
outputs are all float32 and whose nodes are all operators the importer maps or folds.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402

from tvmdev.errors import TvmdevError  # noqa: E402
from tvmdev.model import reference  # noqa: E402
from tvmdev.run.compare import ATOL, RTOL  # noqa: E402


@dataclass
class Tally:
    cases: int = 0
    passed: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    crashed: list[str] = field(default_factory=list)
    refused: Counter[str] = field(default_factory=Counter)
    float_mapped: int = 0
    float_mapped_passed: int = 0
    against_onnx: int = 0  # passing cases compared with onnx's outputs (ORT refused them)
    # the cases of one operator (every node that operator): operator -> case -> (whether
    # a float32 case, its outcome: "pass", "wrong", "crashed" or the refusal's line)
    by_op: dict[str, dict[str, tuple[bool, str]]] = field(default_factory=dict)


def _close(got: np.ndarray, want: np.ndarray) -> bool:
    return bool(got.shape == want.shape and np.allclose(got, want, atol=ATOL, rtol=RTOL))


def _expected(case: Any, feeds: list[np.ndarray]) -> tuple[list[np.ndarray], bool]:
    """ONNX Runtime's outputs, or onnx's own when ONNX Runtime cannot run the model;
    whether they are ONNX Runtime's."""
    from onnx_cases import ort_run
    names = [vi.name for vi in case.model.graph.input
             if vi.name not in {t.name for t in case.model.graph.initializer}]
    try:
        return ort_run(case.model.SerializeToString(), dict(zip(names, feeds, strict=True))), \
            True
    except Exception:  # noqa: BLE001 (any refusal of ONNX Runtime's: use onnx's outputs)
        return [np.asarray(v) for v in case.data_sets[0][1]], False


def _float_mapped(model: Any) -> bool:
    from tvmdev.frontends.onnx import DOMAINS, REMOVED
    from tvmdev.frontends.onnx_fold import FOLDERS
    from tvmdev.frontends.onnx_ops import CONVERTERS
    g = model.graph
    values = [*g.input, *g.output]
    return bool(g.node) and all(
        vi.type.WhichOneof("value") == "tensor_type" and vi.type.tensor_type.elem_type == 1
        for vi in values) and all(
        n.domain in DOMAINS and n.op_type in {*CONVERTERS, *FOLDERS, *REMOVED} for n in g.node)


def _operator(model: Any) -> tuple[str, bool] | None:
    """The operator a case tests, its nodes' one op type (an expanded case, made of the
    ops of a function body, tests those, and is left out), and whether it is a float32
    case (its graph inputs and outputs all float32)."""
    g = model.graph
    kinds = {(n.domain, n.op_type) for n in g.node}
    if len(kinds) != 1:
        return None
    float_io = all(vi.type.WhichOneof("value") == "tensor_type"
                   and vi.type.tensor_type.elem_type == 1 for vi in [*g.input, *g.output])
    domain, op = next(iter(kinds))
    return (op if domain in ("", "ai.onnx") else f"{domain}.{op}"), float_io


def _key(message: str) -> str:
    """A refusal's line with names, counts and node numbers elided."""
    text = re.sub(r"'[^']*'", "'...'", message.split(";")[0])
    text = re.sub(r"\(first: node \d+", "(first: node N", text)
    return re.sub(r"^\d+ unsupported operators?", "N unsupported operators", text)


class _Outcomes:
    """Where a case's outcome is recorded (nowhere for an expanded case)."""

    def __init__(self, into: dict[str, tuple[bool, str]], float_case: bool) -> None:
        self.into, self.float_case = into, float_case

    def __setitem__(self, name: str, outcome: str) -> None:
        self.into[name] = (self.float_case, outcome)


def count() -> tuple[Tally, list[tuple[str, Any, list[np.ndarray], list[np.ndarray]]]]:
    """Every node case imported and checked; the imported ones (name, model, inputs,
    expected outputs)."""
    from onnx.backend.test.loader import load_model_tests

    from tvmdev.frontends import onnx as frontend
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # some cases' generators compute infinities
        cases = load_model_tests(kind="node")
    t, imported = Tally(cases=len(cases)), []
    for case in cases:
        fm = _float_mapped(case.model)
        t.float_mapped += fm
        found = _operator(case.model)
        outcome = _Outcomes(t.by_op.setdefault(found[0], {}) if found else {},
                            bool(found and found[1]))
        try:
            model = frontend.convert(Path(f"{case.name}.onnx"), case.model.SerializeToString(),
                                     "m").to_model()
        except TvmdevError as exc:
            t.refused[_key(exc.message)] += 1
            outcome[case.name] = _key(exc.message)
            continue
        except Exception as exc:  # noqa: BLE001 (counted: a traceback is a defect)
            t.crashed.append(f"{case.name}: {type(exc).__name__}: {exc}")
            outcome[case.name] = "crashed"
            continue
        feeds = [np.asarray(v) for v in case.data_sets[0][0]]
        want, by_ort = _expected(case, feeds)
        inputs = dict(zip(model.inputs, feeds, strict=True))
        try:
            got = reference.evaluate(model, inputs)
        except TvmdevError as exc:
            t.crashed.append(f"{case.name}: reference: {exc.message}")
            outcome[case.name] = "crashed"
            continue
        ok = all(_close(got[o], w) for o, w in zip(model.outputs, want, strict=True))
        outcome[case.name] = "pass" if ok else "wrong"
        if ok:
            t.passed.append(case.name)
            t.float_mapped_passed += fm
            t.against_onnx += not by_ort
            imported.append((case.name, model, feeds, want))
        else:
            t.wrong.append(case.name)
    return t, imported


def run_built(imported: list[tuple[str, Any, list[np.ndarray], list[np.ndarray]]]
              ) -> list[str]:
    """Every imported case in one model built and run with ``tvmdev run`` on the host;
    the cases whose C outputs do not match their expected outputs."""
    import yaml
    from onnx_cases import merge

    from tvmdev.load.export import description
    parts = [(description(m), {f"{n}.npy": a for n, a in m.constants.items()})
             for _, m, _, _ in imported]
    doc, arrays = merge(parts, "onnx_node_suite")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "m").mkdir()
        (tmp / "in").mkdir()
        (tmp / "m" / "onnx_node_suite.yaml").write_text(
            yaml.safe_dump(doc, sort_keys=False, default_flow_style=None))
        for fname, array in arrays.items():
            np.save(tmp / "m" / fname, array)
        for k, (_, m, feeds, _) in enumerate(imported):
            for name, x in zip(m.inputs, feeds, strict=True):
                np.save(tmp / "in" / f"c{k}_{name}.npy", x)
        proc = subprocess.run([sys.executable, "-m", "tvmdev", "run",
                               str(tmp / "m" / "onnx_node_suite.yaml"), "--inputs",
                               str(tmp / "in"), "--save-outputs", str(tmp / "out"),
                               "--build-dir", str(tmp / "b")], capture_output=True, text=True,
                              check=False)
        if proc.returncode != 0:
            print(proc.stdout[-3000:] + proc.stderr, file=sys.stderr)
            return [name for name, _, _, _ in imported]
        return [name for k, (name, m, _, want) in enumerate(imported)
                if not all(_close(np.load(tmp / "out" / f"c{k}_{o}.npy"), w)
                           for o, w in zip(m.outputs, want, strict=True))]


def mapped_operators() -> list[str]:
    """The ONNX operators the importer maps, folds or removes (what the README lists)."""
    from tvmdev.frontends.onnx import REMOVED
    from tvmdev.frontends.onnx_fold import FOLDERS
    from tvmdev.frontends.onnx_ops import CONVERTERS
    return sorted({*CONVERTERS, *FOLDERS, *REMOVED})


def operator_table(t: Tally) -> dict[str, dict[str, Any]]:
    """Per mapped operator: its float32 cases, how many pass, and why the others do not
    (outcome or refusal line -> count)."""
    table = {}
    for op in mapped_operators():
        cases = t.by_op.get(op, {}).values()
        floats = [v for f, v in cases if f]
        why = Counter(v for v in floats if v != "pass")
        table[op] = {"cases": len(floats), "passed": len(floats) - sum(why.values()),
                     "failing": dict(why.most_common()), "all_cases": len(cases),
                     "all_passed": sum(v == "pass" for _, v in cases)}
    return table


def _print_table(table: dict[str, dict[str, Any]]) -> None:
    print("cases by operator (its own cases; expanded ones left out): float32 ones, "
          "then all")
    print(f"  {'operator':20s} {'pass':>5s} {'float':>5s}    % {'pass':>5s} {'all':>5s}  "
          "first reason of the float32 ones failing")
    for op, row in table.items():
        pct = f"{100 * row['passed'] / row['cases']:4.0f}" if row["cases"] else "   -"
        first = next(iter(row["failing"]), "")
        print(f"  {op:20s} {row['passed']:5d} {row['cases']:5d} {pct} {row['all_passed']:5d} "
              f"{row['all_cases']:5d}  {first[:80]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", action="store_true", help="also build and run the imported "
                    "cases with tvmdev run on the host")
    ap.add_argument("--json", action="store_true", help="print the counts as JSON")
    ap.add_argument("--list", action="store_true", help="name the wrong and crashed cases")
    ap.add_argument("--ops", action="store_true", help="a table of the float32 cases of "
                    "each operator the importer maps")
    args = ap.parse_args()
    import onnx
    t, imported = count()
    c_wrong = run_built(imported) if args.run and imported else None
    summary = {"onnx": onnx.__version__, "cases": t.cases, "passed": len(t.passed),
               "wrong": len(t.wrong), "crashed": len(t.crashed),
               "refused": sum(t.refused.values()), "against_onnx_outputs": t.against_onnx,
               "float32_mapped": t.float_mapped,
               "float32_mapped_passed": t.float_mapped_passed,
               **({} if c_wrong is None else {"run_c_wrong": len(c_wrong)})}
    if args.json:
        print(json.dumps({**summary, "refusals": dict(t.refused.most_common()),
                          **({"operators": operator_table(t)} if args.ops else {})},
                         indent=1))
        return 0
    print(f"ONNX node tests (onnx {onnx.__version__}): {len(t.passed)} of {t.cases} pass, "
          f"{len(t.wrong)} wrong, {len(t.crashed)} crashed, {sum(t.refused.values())} "
          f"refused ({t.against_onnx} passing cases compared with onnx's outputs: ONNX "
          "Runtime refused them)")
    print(f"float32 cases of mapped operators: {t.float_mapped_passed} of {t.float_mapped} "
          "pass")
    if c_wrong is not None:
        print(f"tvmdev run on the host: {len(imported) - len(c_wrong)} of {len(imported)} "
              "passing cases match in C")
    if args.ops:
        _print_table(operator_table(t))
    print("refusals (most common first):")
    for key, n in t.refused.most_common():
        print(f"  {n:4d} x {key}")
    if args.list:
        for name in [*t.wrong, *t.crashed, *(c_wrong or [])]:
            print(f"  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
