"""Measure the code bytes ``tvmdev aot``'s report estimates from, and write them to
runtime/kernels/code_bytes.yaml (schema tvmdev/load/schemas/code_bytes.json).

    python scripts/measure_code_bytes.py BUILD_DIR [BUILD_DIR ...]

Each BUILD_DIR is a ``tvmdev run --build-dir`` folder of a bare-metal board (its ELF,
build.json and model/tvmgen_<m>_plan.json); all of one CPU, or several CPUs at once. From
each ELF (pyelftools):

- every kernel entry the executor calls (``tvmk_*``): the functions it reaches through
  Thumb-2 BL and B.W (tail calls), each with its size (.text), so that two kernels that
  share a helper (CMSIS-NN's ``arm_nn_mat_mult_nt_t_s8``) count it once;
- the executor: its functions, data and params structs (``tvmgen_<m>_*`` less the
  weights and the per-channel params arrays, which the report counts on their own), as
  ``base + per_call x calls`` fitted over the builds by least squares (``calls``: the
  operators that call a kernel).

What a CPU's entry was measured from is recorded beside it (``measured_from``). The
numbers are the linked sizes at the board's flags (-O2, --gc-sections).
"""

from __future__ import annotations

import json
import re
import struct
import sys
from pathlib import Path
from typing import Any

import yaml
from elftools.elf.elffile import ELFFile

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tvmdev.load.board import board_by_name  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "runtime" / "kernels" / "code_bytes.yaml"
HEADER = """\
# SPDX-License-Identifier: Apache-2.0
# Code bytes of tvmdev's kernels and executor per CPU, measured from real builds by
# scripts/measure_code_bytes.py (its docstring says how); tvmdev aot's memory report
# estimates a model's code from them (tvmdev/plan/code_size.py). Regenerate after a
# kernel changes much: tests/test_code_size.py compares the estimate with a build.
"""


def _functions(elf: Any) -> dict[str, tuple[int, int]]:
    symtab = elf.get_section_by_name(".symtab")
    return {s.name: (s["st_value"] & ~1, int(s["st_size"])) for s in symtab.iter_symbols()
            if s["st_info"]["type"] == "STT_FUNC" and s["st_size"]}


def _branch_targets(code: bytes, base: int) -> set[int]:
    """Targets of the Thumb-2 BL and B.W (T4) instructions in ``code`` at ``base``."""
    found = set()
    for i in range(0, len(code) - 3, 2):
        hw1, hw2 = struct.unpack_from("<HH", code, i)
        if hw1 & 0xF800 != 0xF000 or hw2 & 0xD000 not in (0xD000, 0x9000):
            continue
        s = (hw1 >> 10) & 1
        j1, j2 = (hw2 >> 13) & 1, (hw2 >> 11) & 1
        imm = (s << 24) | ((1 - (j1 ^ s)) << 23) | ((1 - (j2 ^ s)) << 22) | (
            (hw1 & 0x3FF) << 12) | ((hw2 & 0x7FF) << 1)
        found.add(base + i + 4 + (imm - (1 << 25) if s else imm))
    return found


def call_graph(elf_path: Path) -> tuple[dict[str, int], dict[str, set[str]]]:
    """Each function's size and the functions it branches to."""
    with elf_path.open("rb") as fh:
        elf = ELFFile(fh)
        funcs = _functions(elf)
        at = {a: n for n, (a, _) in funcs.items()}
        text = elf.get_section_by_name(".text")
        data, base = text.data(), text["sh_addr"]
        calls = {}
        for name, (addr, size) in funcs.items():
            body = data[addr - base:addr - base + size]
            calls[name] = {at[t] for t in _branch_targets(body, addr) if t in at} - {name}
    return {n: s for n, (_, s) in funcs.items()}, calls


def reachable(entry: str, calls: dict[str, set[str]]) -> set[str]:
    """``entry`` and every function it reaches."""
    seen, todo = {entry}, [entry]
    while todo:
        for callee in calls.get(todo.pop(), ()):
            if callee not in seen:
                seen.add(callee)
                todo.append(callee)
    return seen


def executor_bytes(elf_path: Path, model: str, params_arrays: int) -> int:
    """The executor's text, data and rodata less the weights and params arrays."""
    with elf_path.open("rb") as fh:
        symtab = ELFFile(fh).get_section_by_name(".symtab")
        total = sum(int(s["st_size"]) for s in symtab.iter_symbols()  # type: ignore[union-attr]
                    if s.name.startswith(f"tvmgen_{model}_")
                    and s["st_info"]["type"] in ("STT_FUNC", "STT_OBJECT")
                    and not s.name.startswith(f"tvmgen_{model}_const_")
                    and s.name != f"tvmgen_{model}_workspace")
    return total - params_arrays


def _params_arrays(source: str, model: str) -> int:
    """Bytes of the per-channel params arrays the executor source defines."""
    sizes = {"int32_t": 4, "int16_t": 2, "int8_t": 1, "uint8_t": 1, "float": 4}
    pat = re.compile(rf"static const (\w+) tvmgen_{model}_params_\w+\[(\d+)\]")
    return sum(sizes.get(t, 4) * int(n) for t, n in pat.findall(source))


def measure(build: Path) -> tuple[str, dict[str, dict[str, Any]], tuple[int, int], str]:
    """(cpu, kernel entries with their functions, (calls, executor bytes), label)."""
    info = json.loads((build / "build.json").read_text())
    plan = json.loads(next((build / "model").glob("*_plan.json")).read_text())
    model = plan["model"]
    elf = next(build.glob("*.elf"))
    sizes, calls = call_graph(elf)
    entries = {}
    for entry in sorted(n for n in calls.get(f"tvmgen_{model}_run_with_workspace", set())
                        if n.startswith("tvmk_")):
        entries[entry] = {f: sizes[f] for f in sorted(reachable(entry, calls))}
    source = (build / "model" / f"tvmgen_{model}.c").read_text()
    n_calls = len(re.findall(r"\bret = tvmk_\w+\(", source))
    executor = executor_bytes(elf, model, _params_arrays(source, model))
    return board_by_name(str(info["board"])).cpu, entries, (n_calls, executor), f"{model}"


def fit(points: list[tuple[int, int]]) -> tuple[int, int]:
    """base, per_call of the least-squares line through (calls, bytes), base >= 0."""
    if len(points) == 1:
        return points[0][1], 0
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / var if var else 0.0
    if my - slope * mx < 0:  # no negative base: the line through the origin
        return 0, round(sum(x * y for x, y in points) / sum(x * x for x, _ in points))
    return round(my - slope * mx), round(slope)


def main(builds: list[Path]) -> int:
    """Measure ``builds`` and write their CPUs' entries (other CPUs' are kept)."""
    doc = yaml.safe_load(OUT.read_text()) if OUT.is_file() else {}
    cores: dict[str, Any] = {}
    for build in builds:
        cpu, entries, point, label = measure(build)
        core = cores.setdefault(cpu, {"functions": {}, "kernels": {}, "points": [],
                                      "from": []})
        for entry, funcs in entries.items():
            core["functions"].update(funcs)
            core["kernels"][entry] = sorted(funcs)
        core["points"].append(point)
        core["from"].append(label)
    for cpu, core in cores.items():
        base, per_call = fit(core["points"])
        doc[cpu] = {"measured_from": sorted(set(core["from"])),
                    "executor": {"base": base, "per_call": per_call},
                    "kernels": dict(sorted(core["kernels"].items())),
                    "functions": dict(sorted(core["functions"].items()))}
        print(f"{cpu}: {len(core['kernels'])} kernels, {len(core['functions'])} functions, "
              f"executor {base} + {per_call} per call (from {core['points']})")
    OUT.write_text(HEADER + yaml.safe_dump(doc, sort_keys=True, width=100))
    return 0


if __name__ == "__main__":
    sys.exit(main([Path(p) for p in sys.argv[1:]]))
