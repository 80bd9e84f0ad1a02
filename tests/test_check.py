"""tvmdev check: deliberately broken device and kernel implementations."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import Result, need_tool


def _folder(cli: Callable[..., Result], tmp: Path) -> Path:
    need_tool("gcc")
    out = tmp / "dev"
    assert cli("new-device", "woofles", "--platform", "zephyr", "--platform", "posix",
               "--platform", "cmsis", "--rtos", "cmsis-rtos2", "-o", str(out)).code == 0
    return out


def test_generated_code_passes(cli: Callable[..., Result], tmp_path: Path) -> None:
    out = _folder(cli, tmp_path)
    r = cli("check", str(out))
    assert r.code == 0, r.out + r.err
    assert "ok: every device and kernel function matches the generated API" in r.out


def test_broken_implementations_are_reported(cli: Callable[..., Result],
                                             tmp_path: Path) -> None:
    out = _folder(cli, tmp_path)
    posix = out / "src/device/woofles/posix.c"
    posix.write_text(posix.read_text().replace(
        "int32_t TVMDeviceWooflesOpen(tvm_device_woofles_t *tvm_dev)\n",
        "int32_t TVMDeviceWooflesOpen(tvm_device_woofles_t *tvm_dev, int timeout_ms)\n"))
    zephyr = out / "src/device/woofles/zephyr.c"
    zephyr.write_text(zephyr.read_text().replace(
        "int32_t TVMDeviceWooflesClose(tvm_device_woofles_t *tvm_dev)\n",
        "int TVMDeviceWooflesClose(tvm_device_woofles_t *tvm_dev)\n"))
    cmsis = out / "src/device/woofles/cmsis.c"
    text = cmsis.read_text()
    cmsis.write_text(text[:text.index("int32_t TVMDeviceWooflesDestroy")])
    matmul = out / "src/kernels/woofles/matmul.c"
    matmul.write_text(matmul.read_text().replace("const float *B, float *Y,",
                                                 "float *B, float *Y,"))
    (out / "src/kernels/woofles/gemm.c").unlink()
    r = cli("check", str(out))
    assert r.code == 1
    lines = r.out.splitlines()
    d = str(out)
    open_line = next(i for i, ln in enumerate(posix.read_text().splitlines(), 1)
                     if ln.startswith("int32_t TVMDeviceWooflesOpen("))
    assert lines == [
        f"{d}/src/device/woofles/zephyr.c:{_line(zephyr, 'int TVMDeviceWooflesClose(')}: "
        "TVMDeviceWooflesClose is int (tvm_device_woofles_t *), the generated header "
        "declares int32_t (tvm_device_woofles_t *)",
        f"{d}/src/device/woofles/posix.c:{open_line}: TVMDeviceWooflesOpen is int32_t "
        "(tvm_device_woofles_t *, int), the generated header declares int32_t "
        "(tvm_device_woofles_t *)",
        f"{d}/src/device/woofles/cmsis.c: TVMDeviceWooflesDestroy is not defined",
        f"{d}/src/kernels/woofles/gemm.c: missing (kernel woofles_gemm_f32)",
        f"{d}/src/kernels/woofles/matmul.c:{_line(matmul, 'int32_t woofles_matmul_f32(')}: "
        "kernel woofles_matmul_f32 is int32_t (const float *, float *, float *, const "
        "struct tvmk_matmul_params *, void *), the registry expects int32_t (const float *, "
        "const float *, float *, const struct tvmk_matmul_params *, void *)",
        "5 problems",
    ]


def _line(path: Path, start: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1)
                if ln.startswith(start))


def test_check_needs_a_device_folder(cli: Callable[..., Result], tmp_path: Path) -> None:
    r = cli("check", str(tmp_path))
    assert r.code == 1
    assert "no devices here" in r.err


def test_builtin_kleidiai_folder_passes(cli: Callable[..., Result], tmp_path: Path) -> None:
    need_tool("gcc")
    assert cli("new-device", "kleidiai", "--platform", "kleidiai", "-o",
               str(tmp_path / "kai")).code == 0
    r = cli("check", str(tmp_path / "kai"))
    assert r.code == 0, r.out + r.err
