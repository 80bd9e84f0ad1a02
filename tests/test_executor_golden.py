"""The executor is tvmdev's main artefact: its generated sources for every example are
golden files (refresh with --update-goldens), compile with -Werror, do not depend on how
the command's paths were spelled, and put constants and the workspace in named
sections a linker script can move."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import GOLDENS, REPO, Result, need_tool, run_ok, tree
from elftools.elf.elffile import ELFFile

EXAMPLES = sorted(REPO.glob("examples/*/*.yaml"))
CASES = [(p, "eager") for p in EXAMPLES] + [(REPO / "examples/cnn/cnn.yaml", "lazy")]
GENERATED = ("tvmgen_{m}.c", "tvmgen_{m}.h", "tvmgen_{m}_plan.json")


def _generated(out: Path, name: str) -> dict[str, bytes]:
    return {f.format(m=name): (out / f.format(m=name)).read_bytes() for f in GENERATED}


@pytest.mark.parametrize("path,schedule", CASES,
                         ids=[f"{p.parent.name}-{s}" for p, s in CASES])
def test_executor_matches_golden(path: Path, schedule: str, cli: Callable[..., Result],
                                 tmp_path: Path, update_goldens: bool) -> None:
    r = cli("aot", str(path), "-o", str(tmp_path / "out"), "--schedule", schedule)
    assert r.code == 0, r.err
    got = _generated(tmp_path / "out", path.stem)
    golden = GOLDENS / "executor" / f"{path.stem}-{schedule}"
    if update_goldens:
        shutil.rmtree(golden, ignore_errors=True)
        golden.mkdir(parents=True)
        for rel, data in got.items():
            (golden / rel).write_bytes(data)
    assert got == tree(golden), f"differs from {golden} (refresh with --update-goldens)"
    for rel, data in got.items():
        if not rel.endswith(".json"):
            assert all(len(line) <= 100 for line in data.decode().splitlines()
                       if not line.startswith("#define")), rel


DATA_ROW = re.compile(r"^ {4}[-0-9a-fx(), ]+$")


def _without_data(text: str) -> str:
    """``text`` with every run of array data rows as one ``...`` row: a golden of a real
    model keeps the code, not the model's weights."""
    out: list[str] = []
    for line in text.splitlines():
        if DATA_ROW.match(line):
            if out and out[-1] == "    ...":
                continue
            line = "    ..."
        out.append(line)
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("model", ["keyword_spotting.tflite", "sine_float.tflite"])
def test_imported_executor_matches_golden(model: str, cli: Callable[..., Result],
                                          tflite_model: Callable[[str], Path], tmp_path: Path,
                                          update_goldens: bool) -> None:
    """An imported model (int8 keyword_spotting, float sine): C names from the operators
    (``conv2d_1_weights``, the TFLite name in a comment), every line within 100 columns."""
    r = cli("aot", str(tflite_model(model)), "-o", str(tmp_path / "out"))
    assert r.code == 0, r.err
    name = Path(model).stem
    got = {rel: _without_data(data.decode()).encode() if rel.endswith(".c") else data
           for rel, data in _generated(tmp_path / "out", name).items()
           if not rel.endswith(".json")}
    golden = GOLDENS / "executor" / f"imported-{name}"
    if update_goldens:
        shutil.rmtree(golden, ignore_errors=True)
        golden.mkdir(parents=True)
        for rel, data in got.items():
            (golden / rel).write_bytes(data)
    assert got == tree(golden), f"differs from {golden} (refresh with --update-goldens)"
    for rel in ("tvmgen_{m}.c", "tvmgen_{m}.h"):
        text = (tmp_path / "out" / rel.format(m=name)).read_text()
        long = [line for line in text.splitlines() if len(line) > 100]
        assert not long, long[:3]


@pytest.mark.parametrize("path,schedule", CASES,
                         ids=[f"{p.parent.name}-{s}" for p, s in CASES])
def test_golden_executor_compiles_strictly(path: Path, schedule: str, tmp_path: Path) -> None:
    """The golden sources themselves, with the portable kernels' header and the device
    headers a run generates, under -Wall -Wextra -Werror -pedantic."""
    gcc = need_tool("gcc")
    golden = GOLDENS / "executor" / f"{path.stem}-{schedule}"
    devices = tmp_path / "dev"
    from tvmdev.cli import main

    kinds = {line.split("kind:")[1].strip(" }") for line in path.read_text().splitlines()
             if "kind:" in line}
    for kind in sorted(kinds or {"any"}):  # status.h comes with any device kind
        assert main(["new-device", kind, "--platform", "posix", "-o", str(devices)]) == 0
    run_ok([gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c",
            f"-I{golden}", f"-I{devices / 'include'}", f"-I{REPO / 'runtime/kernels/portable'}",
            str(golden / f"tvmgen_{path.stem}.c"), "-o", str(tmp_path / "x.o")])


def test_output_does_not_depend_on_how_paths_are_spelled(cli: Callable[..., Result],
                                                         tmp_path: Path) -> None:
    model = REPO / "examples/mlp/mlp.yaml"
    assert cli("aot", str(model), "-o", str(tmp_path / "a")).code == 0
    rel_model = os.path.relpath(model, tmp_path)
    assert cli("aot", rel_model, "-o", "b/../b", cwd=tmp_path).code == 0
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
    text = (tmp_path / "a/tvmgen_mlp.c").read_text()
    assert str(tmp_path) not in text and str(REPO) not in text
    assert "Generated by tvmdev " in text and ": tvmdev aot mlp.yaml\n" in text
    # new-device: the output folder is not recorded either.
    assert cli("new-device", "woofles", "--platform", "posix", "-o", str(tmp_path / "d1")
               ).code == 0
    assert cli("new-device", "woofles", "--platform", "posix", "-o", "d2", cwd=tmp_path
               ).code == 0
    d1, d2 = tree(tmp_path / "d1"), tree(tmp_path / "d2")
    assert d1 == d2
    assert all(str(tmp_path).encode() not in data for data in d1.values())


def _symbols_by_section(obj: Path) -> dict[str, str]:
    with obj.open("rb") as fh:
        elf = ELFFile(fh)
        names = {i: s.name for i, s in enumerate(elf.iter_sections())}
        symtab = elf.get_section_by_name(".symtab")
        assert symtab is not None
        return {sym.name: names.get(sym["st_shndx"], "") for sym in symtab.iter_symbols()
                if isinstance(sym["st_shndx"], int)}


def test_constants_and_workspace_in_named_sections(cli: Callable[..., Result],
                                                   tmp_path: Path) -> None:
    gcc = need_tool("gcc")
    out = tmp_path / "out"
    assert cli("aot", str(REPO / "examples/cnn/cnn.yaml"), "-o", str(out)).code == 0
    assert cli("new-device", "woofles", "--platform", "posix", "-o", str(tmp_path / "d")
               ).code == 0
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-c", f"-I{out}",
             f"-I{tmp_path / 'd/include'}", f"-I{out / 'kernels/portable'}",
             str(out / "tvmgen_cnn.c")]
    run_ok([gcc, *flags, "-o", str(tmp_path / "a.o")])
    where = _symbols_by_section(tmp_path / "a.o")
    assert where["tvmgen_cnn_const_conv1_w"] == ".rodata.tvm"
    assert where["tvmgen_cnn_const_fc_b"] == ".rodata.tvm"
    assert where["tvmgen_cnn_workspace"] == ".bss.noinit.tvm"
    # Overridden without editing the owned file: a macro on the command line.
    run_ok([gcc, *flags, '-DTVMGEN_CNN_CONST_SECTION=".flash_weights"',
            '-DTVMGEN_CNN_WORKSPACE_SECTION=".bss.ext_ram"', "-o", str(tmp_path / "b.o")])
    where = _symbols_by_section(tmp_path / "b.o")
    assert where["tvmgen_cnn_const_conv1_w"] == ".flash_weights"
    assert where["tvmgen_cnn_workspace"] == ".bss.ext_ram"


def test_nothing_to_undo_is_a_plain_return(cli: Callable[..., Result], tmp_path: Path
                                           ) -> None:
    """A failure before any device is active returns the error as it is; later ones
    name the devices to undo by their bit, one named bit per device instance."""
    assert cli("aot", str(REPO / "examples/cnn/cnn.yaml"), "-o", str(tmp_path)).code == 0
    c = (tmp_path / "tvmgen_cnn.c").read_text()
    first = c.index("ret = TVMDeviceWooflesActivate(devices->npu0);")
    assert c[first:].split("}", 1)[0].rstrip().endswith("return ret;")
    assert "#define TVMGEN_CNN_DEVICE_NPU0 0x1U\n" in c
    assert "#define TVMGEN_CNN_DEVICE_NPU1 0x2U\n" in c
    assert "_unwind(devices, 0U, 0x" not in c and "0x0U" not in c
