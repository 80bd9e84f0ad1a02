"""What `tvmdev aot` reports of a model's memory before anything is built (issue 24 item
5): RAM per pool with the I/O and the stack, flash, each pool's region; the plan's
picture beside plan.json (SVG) and in the terminal (--show-plan). Every figure is checked
against plan.json, the board file or the tensors' shapes."""

from __future__ import annotations

import contextlib
import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, Result

from tvmdev.cli.main import main
from tvmdev.load.board import board_by_name
from tvmdev.load.model import load_model

CNN = REPO / "examples" / "cnn" / "cnn.yaml"
SVG = "{http://www.w3.org/2000/svg}"


def _aot(cli: Callable[..., Result], tmp_path: Path, *args: str) -> tuple[str, Any]:
    out = tmp_path / "out"
    r = cli("aot", str(CNN), "-o", str(out), *args)
    assert r.code == 0, r.err
    return r.out, json.loads((out / "tvmgen_cnn_plan.json").read_text())


@pytest.fixture(scope="module")
def on_board(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Any, Path]:
    """``tvmdev aot`` of the cnn example for mps3_an547 (once for the module's tests):
    what it printed, plan.json, the folder."""
    out = tmp_path_factory.mktemp("aot")
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert main(["aot", str(CNN), "-o", str(out), "--board", "mps3_an547"]) == 0
    return text.getvalue(), json.loads((out / "tvmgen_cnn_plan.json").read_text()), out


def _figure(text: str, what: str) -> tuple[int, str]:
    m = re.search(rf"^    {what} +([\d,]+)  (\S+)", text, re.M)
    assert m, (what, text)
    return int(m[1].replace(",", "")), m[2]


def test_aot_reports_ram_and_flash_per_pool(on_board: tuple[str, Any, Path]) -> None:
    text, plan, _ = on_board
    m = load_model(CNN)
    ins = sum(m.tensors[n].nbytes for n in m.inputs)
    outs = sum(m.tensors[n].nbytes for n in m.outputs)
    ws, region = _figure(text, "workspace")
    assert ws == plan["arena"]["size"] and region == "dtcm"
    assert f"inputs {ins:,} + outputs {outs:,} in it" in text  # the default on the board
    stack, _ = _figure(text, "stack")
    mem = board_by_name("mps3_an547").memory
    assert mem is not None and stack == mem.stack
    ram = re.search(r"^RAM: ([\d,]+) bytes$", text, re.M)
    assert ram and int(ram[1].replace(",", "")) == ws + stack
    constants, where = _figure(text, "constants")
    assert constants == sum(v.nbytes for v in m.constants.values()) and where == "itcm"
    assert {r["pool"]: r["region"] for r in plan["regions"]}["workspace"] == "dtcm"


def test_caller_io_is_reported_beside_the_workspace(cli: Callable[..., Result],
                                                   tmp_path: Path) -> None:
    text, plan = _aot(cli, tmp_path, "--board", "mps3_an547", "--io", "caller")
    m = load_model(CNN)
    assert _figure(text, "inputs")[0] == sum(m.tensors[n].nbytes for n in m.inputs)
    assert _figure(text, "outputs")[0] == sum(m.tensors[n].nbytes for n in m.outputs)
    assert "the inputs and outputs are the caller's" in text
    assert _figure(text, "workspace")[0] == plan["arena"]["size"]
    assert all("offset" not in plan["tensors"][n] for n in (*m.inputs, *m.outputs))


def test_the_plan_picture_is_well_formed_svg(on_board: tuple[str, Any, Path]) -> None:
    _, plan, out = on_board
    root = ET.parse(out / "tvmgen_cnn_plan.svg").getroot()
    assert root.tag == f"{SVG}svg"
    tips = [t.text or "" for r in root.iter(f"{SVG}rect") for t in r.iter(f"{SVG}title")]
    # A rectangle per buffer (tensors and scratch), each saying where it is.
    placed = {n: t["offset"] for n, t in plan["tensors"].items() if "offset" in t}
    for name, offset in placed.items():
        assert any(re.search(rf"(^| ){re.escape(name)}( |:).* at offset {offset:,},", tip)
                   for tip in tips), name
    scratch = [op for op in plan["operators"] if op["scratch"]]
    assert sum(tip.startswith("scratch of ") for tip in tips) == len(scratch)


def test_show_plan_draws_each_operator(cli: Callable[..., Result], tmp_path: Path) -> None:
    text, plan = _aot(cli, tmp_path, "--board", "host", "--show-plan")
    m = load_model(CNN)
    rows = re.findall(r"^ *(\d+) ([a-zA-Z0-9.]{64}) +([\d,]+) (\S+)$", text, re.M)
    assert [int(r[0]) for r in rows] == list(range(len(m.operators)))
    assert [r[3] for r in rows] == [op.name for op in m.operators]
    legend = {k: (int(size.replace(",", "")), int(a), int(b)) for k, size, a, b in re.findall(
        r"^  ([a-zA-Z0-9]): .*?, ([\d,]+) bytes at [\d,]+, operators (\d+)\.\.(\d+)$",
        text, re.M)}
    # Every tensor of the workspace and every scratch is one buffer of the legend.
    in_place = {out for out, _ in plan["arena"]["in_place"]}
    placed = [n for n, t in plan["tensors"].items() if "offset" in t and n not in in_place]
    assert len(legend) == len(placed) + sum(1 for op in plan["operators"] if op["scratch"])
    for i, (_, row, live, _) in enumerate(rows):
        alive = {k for k, (_, a, b) in legend.items() if a <= i <= b}
        assert set(row) - {"."} <= alive  # only live buffers are drawn
        assert int(live.replace(",", "")) == sum(legend[k][0] for k in alive)
    assert max(int(r[2].replace(",", "")) for r in rows) == plan["arena"]["lower_bound"]
    assert f"lower bound {plan['arena']['lower_bound']:,}" in text
