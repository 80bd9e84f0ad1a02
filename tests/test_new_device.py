"""new-device: golden output, regeneration, safe writes and bad input."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import GOLDENS, REPO, Result, need_tool, tree

CASES = {
    "zephyr_driver": ["new-device", "woofles", "--platform", "zephyr", "--zephyr-driver",
                      "-o", "out"],
    "cmsis_posix": ["new-device", "uart_accel", "--platform", "cmsis", "--platform", "posix",
                    "-o", "out"],
    "cmsis_spi_rtos2": ["new-device", "ethos-u", "--platform", "cmsis", "--cmsis-driver", "spi",
                        "--rtos", "cmsis-rtos2", "-o", "out"],
    "metal/device": ["new-device", "gpu", "--platform", "metal", "-o", "out"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case: str, cli: Callable[..., Result], tmp_path: Path,
                update_goldens: bool) -> None:
    r = cli(*CASES[case], cwd=tmp_path)
    assert r.code == 0, r.err
    got = tree(tmp_path / "out")
    # Files copied verbatim from runtime/ (the portable kernels a folder needs to build on
    # its own) are checked against their source, not kept as goldens of themselves.
    runtime = {p.read_bytes() for p in (REPO / "runtime").rglob("*") if p.is_file()}
    copies = {rel for rel, data in got.items() if rel != ".tvmdev.json" and data in runtime}
    assert {"include/tvmk_portable.h"} <= copies or "kleidiai" in case
    got = {rel: data for rel, data in got.items() if rel not in copies}
    golden = GOLDENS / case
    if update_goldens:
        shutil.rmtree(golden, ignore_errors=True)
        for rel, data in got.items():
            (golden / rel).parent.mkdir(parents=True, exist_ok=True)
            (golden / rel).write_bytes(data)
    want = tree(golden)
    assert sorted(got) == sorted(want), "file list differs (refresh with --update-goldens)"
    for rel in want:
        assert got[rel] == want[rel], f"{rel} differs from its golden (--update-goldens)"


@pytest.mark.slow
def test_the_issue_example_shares_one_folder(cli: Callable[..., Result],
                                             tmp_path: Path) -> None:
    assert cli("new-device", "woofles", "--platform", "zephyr", "-o", "out/",
               cwd=tmp_path).code == 0
    assert cli("new-device", "uart_accel", "--platform", "cmsis", "--platform", "posix",
               "-o", "out/", cwd=tmp_path).code == 0
    out = tmp_path / "out"
    for rel in ["include/tvm/device/woofles.h", "include/tvm/device/woofles/zephyr.h",
                "src/device/woofles/zephyr.c", "include/tvm/device/uart_accel/cmsis.h",
                "src/device/uart_accel/posix.c", "zephyr/module.yml", "Kconfig",
                "CMakeLists.txt", "include/tvm/device/status.h"]:
        assert (out / rel).is_file(), rel
    cmake = (out / "CMakeLists.txt").read_text()
    assert "src/device/woofles/zephyr.c" in cmake and "src/device/uart_accel/posix.c" in cmake
    manifest = json.loads((out / ".tvmdev.json").read_text())
    assert sorted(manifest["devices"]) == ["uart_accel", "woofles"]
    header = (out / "include/tvm/device/uart_accel.h").read_text()
    assert "typedef struct tvm_device_uart_accel tvm_device_uart_accel_t;" in header
    for fn in ("Activate", "Open", "Close", "Deactivate"):
        assert f"int32_t TVMDeviceUartAccel{fn}(tvm_device_uart_accel_t *tvm_dev);" in header
    assert "#if TVM_DEVICE_API_VERSION != 1" in header and "#error" in header


def test_regeneration_is_byte_identical_and_touches_nothing(cli: Callable[..., Result],
                                                            tmp_path: Path) -> None:
    args = CASES["cmsis_posix"]
    cli(*args, cwd=tmp_path)
    before = tree(tmp_path / "out")
    mtimes = {p: p.stat().st_mtime_ns for p in (tmp_path / "out").rglob("*") if p.is_file()}
    for p in mtimes:
        os.utime(p, ns=(1, 1))
    r = cli(*args, cwd=tmp_path)
    assert r.code == 0
    assert all(line.startswith("unchanged") for line in r.out.splitlines()), r.out
    assert tree(tmp_path / "out") == before
    assert all(p.stat().st_mtime_ns == 1 for p in mtimes), "a file was rewritten"


def test_adding_a_platform_keeps_the_first(cli: Callable[..., Result], tmp_path: Path) -> None:
    cli("new-device", "woofles", "--platform", "posix", "-o", "out", cwd=tmp_path)
    cli("new-device", "woofles", "--platform", "cmsis", "-o", "out", cwd=tmp_path)
    out = tmp_path / "out"
    assert (out / "src/device/woofles/posix.c").is_file()
    assert (out / "src/device/woofles/cmsis.c").is_file()
    assert json.loads((out / ".tvmdev.json").read_text())["devices"]["woofles"][
        "platforms"] == ["posix", "cmsis"]


def test_edited_scaffold_is_kept(cli: Callable[..., Result], tmp_path: Path) -> None:
    cli(*CASES["cmsis_posix"], cwd=tmp_path)
    src = tmp_path / "out/src/device/uart_accel/posix.c"
    mine = src.read_text() + "/* my accelerator code */\n"
    src.write_text(mine)
    r = cli(*CASES["cmsis_posix"], cwd=tmp_path)
    assert r.code == 0
    assert "kept (yours)  src/device/uart_accel/posix.c" in r.out
    assert src.read_text() == mine
    # Still detected as edited on the next run, too.
    r = cli(*CASES["cmsis_posix"], cwd=tmp_path)
    assert "kept (yours)  src/device/uart_accel/posix.c" in r.out


def test_edited_owned_file_stops_the_run(cli: Callable[..., Result], tmp_path: Path) -> None:
    cli("new-device", "woofles", "--platform", "posix", "-o", "out", cwd=tmp_path)
    hdr = tmp_path / "out/include/tvm/device/woofles/posix.h"
    hdr.write_text(hdr.read_text() + "/* edit */\n")
    before = tree(tmp_path / "out")
    # A change that would rewrite other files too: nothing at all may be written.
    r = cli("new-device", "woofles", "--platform", "posix", "--platform", "cmsis", "-o", "out",
            cwd=tmp_path)
    assert r.code == 1
    assert r.err.splitlines()[0] == (
        "tvmdev: out/include/tvm/device/woofles/posix.h: include/tvm/device/woofles/posix.h "
        "was edited since tvmdev generated it; not overwriting")
    assert "--force" in r.err and "Traceback" not in r.err
    assert tree(tmp_path / "out") == before

    r = cli("new-device", "woofles", "--platform", "posix", "-o", "out", "--force",
            cwd=tmp_path)
    assert r.code == 0
    assert "/* edit */" not in hdr.read_text()
    assert "/* edit */" in (hdr.parent / "posix.h.orig").read_text()


def test_dry_run_writes_nothing(cli: Callable[..., Result], tmp_path: Path) -> None:
    r = cli("new-device", "woofles", "--platform", "zephyr", "-o", "out", "--dry-run",
            cwd=tmp_path)
    assert r.code == 0
    assert "create  src/device/woofles/zephyr.c" in r.out
    assert not (tmp_path / "out").exists()


def test_force_and_dry_run_do_not_change_banners(cli: Callable[..., Result],
                                                 tmp_path: Path) -> None:
    cli("new-device", "woofles", "--platform", "posix", "-o", "out", cwd=tmp_path)
    before = tree(tmp_path / "out")
    cli("new-device", "woofles", "--platform", "posix", "-o", "out", "--force", cwd=tmp_path)
    assert tree(tmp_path / "out") == before


BAD = [
    (["new-device", "int", "--platform", "posix", "-o", "out"],
     "tvmdev: device name 'int' is a C keyword"),
    (["new-device", "_Bool", "--platform", "posix", "-o", "out"],
     "tvmdev: device name '_Bool' is reserved for the C implementation"),
    (["new-device", "2fast", "--platform", "posix", "-o", "out"],
     "tvmdev: device name '2fast' starts with a digit"),
    (["new-device", "__x", "--platform", "posix", "-o", "out"],
     "tvmdev: device name '__x' is reserved for the C implementation"),
    (["new-device", "woofles", "--platform", "freertos", "-o", "out"],
     "tvmdev: unknown platform 'freertos'"),
    (["new-device", "woofles", "--platform", "posix", "--platform", "posix", "-o", "out"],
     "tvmdev: --platform posix is given twice"),
    (["new-device", "woofles", "--platform", "posix", "--rtos", "cmsis-rtos2", "-o", "out"],
     "tvmdev: --rtos applies to platform cmsis, which is not selected"),
    (["new-device", "woofles", "--platform", "posix", "-o", "afile"],
     "tvmdev: afile: the output path is a file, not a folder"),
]


@pytest.mark.parametrize("args,message", BAD, ids=[" ".join(a[1:4]) for a, _ in BAD])
def test_bad_input(args: list[str], message: str, cli: Callable[..., Result],
                   tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("not a folder\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out/keep.txt").write_text("mine\n")
    before = tree(tmp_path)
    r = cli(*args, cwd=tmp_path)
    assert r.code == 1
    assert r.err.splitlines()[0] == message
    assert "Traceback" not in r.err
    assert tree(tmp_path) == before


def test_unknown_platform_lists_the_known_ones(cli: Callable[..., Result],
                                               tmp_path: Path) -> None:
    r = cli("new-device", "woofles", "--platform", "freertos", cwd=tmp_path)
    hint = r.err.splitlines()[1]
    assert hint.startswith("  hint: known platforms: cmsis, ")
    assert "posix" in hint and "zephyr" in hint and "kleidiai" in hint


def test_names_that_collide_once_sanitised(cli: Callable[..., Result], tmp_path: Path) -> None:
    assert cli("new-device", "ethos-u", "--platform", "posix", "-o", "out",
               cwd=tmp_path).code == 0
    before = tree(tmp_path / "out")
    r = cli("new-device", "ethos_u", "--platform", "posix", "-o", "out", cwd=tmp_path)
    assert r.code == 1
    assert r.err.splitlines()[0] == (
        "tvmdev: out: device 'ethos_u' collides with 'ethos-u', already in this folder, "
        "once converted to C (both are ethos_u)")
    r = cli("new-device", "npu1", "--platform", "posix", "-o", "out", cwd=tmp_path)
    assert r.code == 0
    r = cli("new-device", "npu_1", "--platform", "posix", "-o", "out", cwd=tmp_path)
    assert r.code == 1
    assert r.err.splitlines()[0] == ("tvmdev: device 'npu_1' collides with device 'npu1' "
                                     "once converted to C (both give TVMDeviceNpu1Init)")
    # A kind and another's platform header share a guard; a kind named status, the
    # status header's.
    for kind, first in (("npu1_posix", "tvmdev: device 'npu1_posix' collides with device "
                         "'npu1' once converted to C (both give TVM_DEVICE_NPU1_POSIX_H_)"),
                        ("status", "tvmdev: device 'status' collides with "
                         "tvm/device/status.h once converted to C (both give "
                         "TVM_DEVICE_STATUS_H_)")):
        r = cli("new-device", kind, "--platform", "posix", "-o", "out", cwd=tmp_path)
        assert (r.code, r.err.splitlines()[0]) == (1, first)
    assert "ethos_u" in json.loads((tmp_path / "out/.tvmdev.json").read_text())["devices"]
    assert tree(tmp_path / "out")["include/tvm/device/ethos_u.h"] == before[
        "include/tvm/device/ethos_u.h"]


def test_usage_errors_exit_2(cli: Callable[..., Result], tmp_path: Path) -> None:
    assert cli("new-device", "woofles", cwd=tmp_path).code == 2
    assert cli("new-device", "woofles", "--platfor", "posix", cwd=tmp_path).code == 2
    assert cli("frobnicate", cwd=tmp_path).code == 2


def test_list_platforms(cli: Callable[..., Result]) -> None:
    r = cli("list", "platforms")
    assert r.code == 0
    names = [line.split()[0] for line in r.out.splitlines()]
    assert names == sorted(names)
    assert {"cmsis", "kleidiai", "metal", "posix", "zephyr"} <= set(names)
    r = cli("list", "platforms", "--json")
    assert [p["name"] for p in json.loads(r.out)] == names


def _struct(header: Path, name: str) -> list[str]:
    """The lines of ``struct name { ... };`` in a C header."""
    text = header.read_text()
    start = text.index(f"\nstruct {name} {{\n") + 1
    return text[start:text.index("\n};\n", start) + 3].splitlines()


@pytest.mark.slow
def test_int8_operators_are_claimed(cli: Callable[..., Result], tmp_path: Path) -> None:
    """--ops claims the int8 forms the int8 op table and the portable library give: each
    op's scaffold holds its float kernel and one kernel per portable int8 kernel, with its
    dtypes and int8 params struct, delegating to that kernel; the generated header
    documents each params struct; the folder copies the int8 kernels; check passes."""
    import yaml

    from tvmdev.model.ops import QUANT_OPS
    from tvmdev.model.s8.table import S8OPS
    need_tool("gcc")
    ops = ["conv2d", "depthwise_conv2d", "fully_connected", "quantize", "gemm"]
    r = cli("new-device", "woofles", "--platform", "posix", "--ops", ",".join(ops),
            "-o", "out", cwd=tmp_path)
    assert r.code == 0, r.err
    out = tmp_path / "out"
    portable_dir = REPO / "runtime/kernels/portable"
    portable = {e["op"]: e for e in yaml.safe_load((portable_dir / "kernels.yaml").read_text())}
    lib = {e["op"]: e for e in yaml.safe_load((out / "kernels/woofles.yaml").read_text())}
    header = (out / "include/tvm/kernels/woofles.h").read_text()
    assert list(lib) == ops
    claimed = 0
    for op in ops:
        int8 = [k for k in portable[op]["kernels"]  # int16 (16x8) ones are not scaffolded
                if op in S8OPS and "int8" in str(k["arg_meta"])
                and "int16" not in str(k["arg_meta"])]
        got = [k for k in lib[op]["kernels"] if "int8" in str(k["arg_meta"])]
        assert [k["arg_meta"] for k in got] == [k["arg_meta"] for k in int8], op
        floats = [k for k in lib[op]["kernels"] if k not in got]
        assert [k["kernel_name"] for k in floats] == (
            [] if op in QUANT_OPS else [f"woofles_{op}_f32"])
        source = (out / f"src/kernels/woofles/{op}.c").read_text()
        for mine, theirs in zip(got, int8, strict=True):
            name = mine["kernel_name"]
            assert mine["sources"] == [f"../src/kernels/woofles/{op}.c"]
            assert f"int32_t {name}(" in source and f"int32_t {name}(" in header
            assert f"return {theirs['kernel_name']}(" in source
            struct = S8OPS[op].params_struct
            decl = header[header.index(f"int32_t {name}("):]
            assert f"const struct {struct} *params" in decl[:decl.index(";")]
            # The header documents the struct: its definition and its header's comment.
            for line in _struct(portable_dir / theirs.get("header", "tvmk_s8.h"), struct):
                assert f" *   {line}".rstrip() in header, line
            claimed += 1
    assert claimed == 5  # conv2d, depthwise_conv2d, fully_connected, quantize (x2)
    assert "output channel" in header and "activation_min" in header
    assert '#include "tvmk_s8.h"' in header
    assert (out / "include/tvmk_s8.h").read_bytes() == (portable_dir / "tvmk_s8.h").read_bytes()
    copies = sorted(p.name for p in (out / "src/portable").iterdir())
    assert {"conv2d_s8.c", "fully_connected_s8.c", "quantize_s8.c",
            "tvmk_fixedpoint.h"} <= set(copies)
    r = cli("check", str(out))
    assert r.code == 0, r.out + r.err
    # A float-only op keeps its one kernel and the float header only.
    r = cli("new-device", "plain", "--platform", "posix", "--ops", "gemm", "-o", "two",
            cwd=tmp_path)
    assert r.code == 0, r.err
    assert "tvmk_s8.h" not in (tmp_path / "two/include/tvm/kernels/plain.h").read_text()


def test_every_op_can_be_claimed(cli: Callable[..., Result], tmp_path: Path) -> None:
    """Each op of the table, with each form it has: one kernel file per op, and every
    int8 params struct documented in the header."""
    from tvmdev.model.ops import OPS
    from tvmdev.model.s8.table import S8OPS
    r = cli("new-device", "woofles", "--platform", "posix", "--ops", ",".join(OPS), "-o",
            "out", cwd=tmp_path)
    assert r.code == 0, r.err
    header = (tmp_path / "out/include/tvm/kernels/woofles.h").read_text()
    for op in OPS:
        assert (tmp_path / f"out/src/kernels/woofles/{op}.c").is_file(), op
    structs = {e.params_struct for op, e in S8OPS.items()}
    for struct in structs:
        assert f" *   struct {struct} {{" in header, struct
