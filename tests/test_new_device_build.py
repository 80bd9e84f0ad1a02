"""A new-device folder builds on its own: with CMake, from nothing but what new-device
wrote (plus, for cmsis, the CMSIS-Driver headers a user supplies), for the host with gcc
and for Cortex-M3 with arm-none-eabi-gcc, warnings as errors. The portable kernels the
scaffolded kernels delegate to are copied in, exactly those, each once."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, Result, need_tool, run_ok

WARN = "-Wall -Wextra -Werror -pedantic"
CMSIS_INC = REPO / "platforms/cmsis/include"
PORTABLE = REPO / "runtime/kernels/portable"


def _new_device(cli: Callable[..., Result], cwd: Path, *args: str) -> Path:
    cwd.mkdir(exist_ok=True)
    r = cli("new-device", *args, "-o", "out", cwd=cwd)
    assert r.code == 0, r.err
    return cwd / "out"


def _portable_copies(out: Path) -> list[str]:
    return sorted(p.name for p in (out / "src/portable").iterdir())


def _with_int8(ops: str, float_copies: list[str]) -> list[str]:
    """The portable copies of a folder claiming ``ops``: those of their float kernels
    (``float_copies``) and, for each op of the int8 table, the sources of its int8
    kernels in the portable kernels.yaml (not its int16 ones) with the library-private
    headers they include."""
    import yaml

    from tvmdev.model.s8.table import S8OPS
    lib = yaml.safe_load((PORTABLE / "kernels.yaml").read_text())
    public = {e["header"] for e in lib} | {k["header"] for e in lib for k in e["kernels"]
                                           if "header" in k}
    names = {src for e in lib if e["op"] in ops.split(",") and e["op"] in S8OPS
             for k in e["kernels"] if "int8" in str(k["arg_meta"])
             and "int16" not in str(k["arg_meta"])  # int16 kernels are not scaffolded yet
             for src in k["sources"]}
    todo = sorted(names)
    while todo:
        for h in re.findall(r'^#include "([^"/]+)"', (PORTABLE / todo.pop()).read_text(),
                            re.MULTILINE):
            if h not in public and h not in names and (PORTABLE / h).is_file():
                names.add(h)
                todo.append(h)
    return sorted(set(float_copies) | names)


def test_portable_copies_are_exactly_what_the_kernels_delegate_to(
        cli: Callable[..., Result], tmp_path: Path) -> None:
    out = _new_device(cli, tmp_path, "woofles", "--platform", "posix")
    # matmul runs on the portable gemm: both sources, nothing else.
    assert _portable_copies(out) == ["gemm.c", "matmul.c"]
    assert (out / "include/tvmk_portable.h").read_bytes() == (
        PORTABLE / "tvmk_portable.h").read_bytes()
    for name in _portable_copies(out):
        assert (out / "src/portable" / name).read_bytes() == (PORTABLE / name).read_bytes()
    files = json.loads((out / ".tvmdev.json").read_text())["files"]
    assert files["src/portable/gemm.c"]["kind"] == "owned"
    assert files["include/tvmk_portable.h"]["kind"] == "owned"
    # add includes a private header of the library, which comes with it.
    out2 = _new_device(cli, tmp_path / "two", "woofles", "--platform", "posix",
                       "--ops", "add,relu")
    copies = _with_int8("add,relu", ["activation.h", "add.c", "binary.h", "relu.c"])
    assert _portable_copies(out2) == copies
    cmake = (out2 / "CMakeLists.txt").read_text()
    assert "add_library(tvmk_portable STATIC\n" + "".join(
        f"  src/portable/{c}\n" for c in copies if c.endswith(".c")) + ")" in cmake
    assert ("add_library(tvm_kernels_woofles STATIC\n  src/kernels/woofles/add.c\n"
            "  src/kernels/woofles/relu.c\n)") in cmake
    assert "target_link_libraries(tvm_device_woofles_posix PUBLIC tvm_kernels_woofles)" \
        in cmake


@pytest.mark.slow
def test_kinds_sharing_a_folder_share_the_portable_copies(cli: Callable[..., Result],
                                                          tmp_path: Path) -> None:
    _new_device(cli, tmp_path, "woofles", "--platform", "posix", "--ops", "gemm,softmax")
    out = _new_device(cli, tmp_path, "uart_accel", "--platform", "cmsis", "--ops", "gemm,add")
    assert _portable_copies(out) == _with_int8(
        "gemm,softmax,add", ["activation.h", "add.c", "binary.h", "gemm.c", "softmax.c"])
    # The built-in kleidiai kind copies the portable header itself: one write, not two.
    r = cli("new-device", "kleidiai", "--platform", "kleidiai", "-o", "out", cwd=tmp_path)
    assert r.code == 0, r.err
    assert (out / "include/tvmk_portable.h").read_bytes() == (
        PORTABLE / "tvmk_portable.h").read_bytes()
    # A folder holding only the built-in kind has no portable kernels to build.
    solo = _new_device(cli, tmp_path / "solo", "kleidiai", "--platform", "kleidiai")
    assert not (solo / "src/portable").exists()
    assert "tvmk_portable" not in (solo / "CMakeLists.txt").read_text()


# --- building with CMake -------------------------------------------------------------

APP = """\
#include <stdio.h>

#include "tvm/device/{name}/posix.h"
#include "tvm/kernels/{name}.h"

/* The kind's kernels, reached through its device library, on the device they run on. */
int main(void)
{{
    static const float a[6] = {{1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}};
    static const float b[6] = {{1.0f, 0.5f, -1.0f, 2.0f, 0.25f, 3.0f}};
    const struct tvmk_gemm_params gp = {{2, 2, 3, 0, 0, 1.0f, 0.0f, 0, 0, 1, 0, NULL}};
    const struct tvmk_matmul_params mp = {{1, 2, 2, 3, 0, {{1}}, {{0}}, {{0}}, 1, 0, NULL}};
    float y[4];
    float z[4];
    tvm_device_{name}_t dev;
    int32_t s[8];
    int i;

    s[0] = TVMDevice{camel}Init(&dev, NULL);
    s[1] = TVMDevice{camel}Activate(&dev);
    s[2] = TVMDevice{camel}Open(&dev);
    s[3] = {name}_gemm_f32(a, b, NULL, y, &gp, &dev);
    s[4] = {name}_matmul_f32(a, b, z, &mp, &dev);
    s[5] = TVMDevice{camel}Close(&dev);
    s[6] = TVMDevice{camel}Deactivate(&dev);
    s[7] = TVMDevice{camel}Destroy(&dev);
    for (i = 0; i < 8; i++) {{
        printf("%d ", (int)s[i]);
    }}
    for (i = 0; i < 4; i++) {{
        printf("%.9g %.9g ", (double)y[i], (double)z[i]);
    }}
    printf("\\n");
    return 0;
}}
"""


def _cortex_m3_toolchain(tmp_path: Path) -> Path:
    arm = need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    path = tmp_path / "cortex-m3.cmake"
    path.write_text(f"""\
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER {arm})
set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-m3 -mthumb {WARN}")
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
""")
    return path


def _cmake_build(src: Path, build: Path, *defines: str) -> None:
    cmake = need_tool("cmake")
    run_ok([cmake, "-S", str(src), "-B", str(build), *defines])
    run_ok([cmake, "--build", str(build)])


def _host_build(src: Path, build: Path) -> None:
    _cmake_build(src, build, f"-DCMAKE_C_COMPILER={need_tool('gcc')}", f"-DCMAKE_C_FLAGS={WARN}")


def _cortex_m3_build(src: Path, build: Path, toolchain: Path) -> None:
    _cmake_build(src, build, f"-DCMAKE_TOOLCHAIN_FILE={toolchain}", "-DTVMDEV_PLATFORMS=cmsis",
                 f"-DCMSIS_DRIVER_INCLUDE_DIR={CMSIS_INC}")


def _symbols(nm: str, lib: Path) -> tuple[set[str], set[str]]:
    """The symbols a static library defines and those it leaves undefined."""
    defined: set[str] = set()
    undefined: set[str] = set()
    for line in run_ok([nm, str(lib)]).stdout.splitlines():
        m = re.match(r"\s*(?:[0-9a-f]+\s+)?([A-Za-z])\s+(\S+)$", line)
        if m:
            (undefined if m[1] == "U" else defined).add(m[2])
    return defined, undefined


def _check_libraries(nm: str, build: Path, kinds: dict[str, str]) -> None:
    """Every library is there; the kernels call no portable kernel the folder lacks."""
    portable, portable_needs = _symbols(nm, build / "libtvmk_portable.a")
    for kind, plat in kinds.items():
        assert (build / f"libtvm_device_{kind}_{plat}.a").is_file()
        defined, undefined = _symbols(nm, build / f"libtvm_kernels_{kind}.a")
        assert {f"{kind}_gemm_f32", f"{kind}_matmul_f32"} <= defined
        wanted = {s for s in undefined | portable_needs if s.startswith("tvmk_")}
        assert wanted and wanted <= portable, f"{kind}: {sorted(wanted - portable)} missing"


@pytest.mark.slow
def test_posix_folder_builds_and_links_on_its_own(cli: Callable[..., Result],
                                                  tmp_path: Path) -> None:
    out = _new_device(cli, tmp_path, "woofles", "--platform", "posix")
    build = tmp_path / "build"
    _host_build(out, build)
    _check_libraries(need_tool("nm"), build, {"woofles": "posix"})
    # A program that links only the device library gets the kernels and their fallback.
    app = tmp_path / "app"
    app.mkdir()
    (app / "main.c").write_text(APP.format(name="woofles", camel="Woofles"))
    (app / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(app C)\n"
        f"add_subdirectory({out} tvmdev)\nadd_executable(app main.c)\n"
        "set_target_properties(app PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF)\n"
        "target_link_libraries(app PRIVATE tvm_device_woofles_posix)\n")
    _host_build(app, tmp_path / "app-build")
    words = run_ok([str(tmp_path / "app-build/app")], timeout=30).stdout.split()
    assert words[:8] == ["0"] * 8, words
    got = np.array([float(w) for w in words[8:]], dtype=np.float32).reshape(4, 2)
    a = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    b = np.array([1.0, 0.5, -1.0, 2.0, 0.25, 3.0], dtype=np.float32).reshape(3, 2)
    want = (a @ b).reshape(4)
    np.testing.assert_allclose(got[:, 0], want, rtol=1e-6)  # gemm
    np.testing.assert_allclose(got[:, 1], want, rtol=1e-6)  # matmul


@pytest.mark.slow
def test_cmsis_folder_builds_on_its_own_for_cortex_m3(cli: Callable[..., Result],
                                                      tmp_path: Path) -> None:
    toolchain = _cortex_m3_toolchain(tmp_path)
    out = _new_device(cli, tmp_path, "uart_accel", "--platform", "cmsis")
    build = tmp_path / "build"
    _cortex_m3_build(out, build, toolchain)
    _check_libraries(need_tool("arm-none-eabi-nm"), build, {"uart_accel": "cmsis"})
    attrs = run_ok([need_tool("arm-none-eabi-readelf"), "-A",
                    str(build / "libtvmk_portable.a")]).stdout
    assert "Tag_CPU_arch: v7" in attrs and "Tag_CPU_arch_profile: Microcontroller" in attrs


@pytest.mark.slow
@pytest.mark.parametrize("target", ["host", "cortex_m3"])
def test_folder_of_two_kinds_on_two_platforms_builds(target: str, cli: Callable[..., Result],
                                                     tmp_path: Path) -> None:
    _new_device(cli, tmp_path, "woofles", "--platform", "posix", "--platform", "cmsis")
    out = _new_device(cli, tmp_path, "uart_accel", "--platform", "posix", "--platform",
                      "cmsis", "--ops", "gemm,matmul,add,softmax")
    assert _portable_copies(out) == _with_int8(
        "gemm,matmul,add,softmax", ["activation.h", "add.c", "binary.h", "gemm.c", "matmul.c",
                                    "softmax.c"])
    build = tmp_path / "build"
    if target == "host":
        _host_build(out, build)
        nm, plat = need_tool("nm"), "posix"
    else:
        _cortex_m3_build(out, build, _cortex_m3_toolchain(tmp_path))
        nm, plat = need_tool("arm-none-eabi-nm"), "cmsis"
    _check_libraries(nm, build, {"woofles": plat, "uart_accel": plat})


def _every_op() -> str:
    from tvmdev.model.ops import OPS
    return ",".join(OPS)

INT8_APP = """\
#include <stddef.h>
#include <stdio.h>

#include "tvm/device/woofles/posix.h"
#include "tvm/kernels/woofles.h"

/* woofles' int8 fully_connected, through its scaffold, on the device it runs on. */
int main(void)
{
    static const int8_t x[8] = {@X@};
    static const int8_t w[12] = {@W@};
    static const int32_t b[3] = {@B@};
    const struct tvmk_fully_connected_s8_params p = {@P@, NULL, NULL, NULL, 0, NULL};
    int8_t y[6];
    tvm_device_woofles_t dev;
    int32_t s[7];
    int i;

    s[0] = TVMDeviceWooflesInit(&dev, NULL);
    s[1] = TVMDeviceWooflesActivate(&dev);
    s[2] = TVMDeviceWooflesOpen(&dev);
    s[3] = woofles_fully_connected_s8(x, w, b, y, &p, &dev);
    s[4] = TVMDeviceWooflesClose(&dev);
    s[5] = TVMDeviceWooflesDeactivate(&dev);
    s[6] = TVMDeviceWooflesDestroy(&dev);
    for (i = 0; i < 7; i++) {
        printf("%d ", (int)s[i]);
    }
    for (i = 0; i < 6; i++) {
        printf("%d ", (int)y[i]);
    }
    printf("\\n");
    return 0;
}
"""


def _fc_s8_expected(x: np.ndarray, w: np.ndarray, b: np.ndarray, p: dict[str, int]
                    ) -> np.ndarray:
    """TFLite's int8 FullyConnected in numpy (tvmdev's fixed-point reference)."""
    from tvmdev.model.fixedpoint import multiply_by_quantized_multiplier
    acc = (x.astype(np.int64) + p["input_offset"]) @ (
        w.astype(np.int64) + p["weights_offset"]).T + b
    y = multiply_by_quantized_multiplier(acc, p["output_multiplier"], p["output_shift"])
    return np.clip(y + p["output_offset"], p["activation_min"], p["activation_max"])


@pytest.mark.slow
@pytest.mark.parametrize("target", ["host", "cortex_m3"])
def test_int8_kernels_build_on_their_own(target: str, cli: Callable[..., Result],
                                         tmp_path: Path) -> None:
    """A folder claiming every operator (the float and int8 forms) builds with warnings as
    errors, its kernels' int8 forms defined and every portable kernel they call there; on
    the host, the int8 fully_connected scaffold computes TFLite's integer arithmetic."""
    out = _new_device(cli, tmp_path, "woofles", "--platform", "posix", "--platform", "cmsis",
                      "--ops", _every_op())
    build = tmp_path / "build"
    if target == "host":
        _host_build(out, build)
        nm = need_tool("nm")
    else:
        _cortex_m3_build(out, build, _cortex_m3_toolchain(tmp_path))
        nm = need_tool("arm-none-eabi-nm")
    defined, undefined = _symbols(nm, build / "libtvm_kernels_woofles.a")
    assert {"woofles_conv2d_s8", "woofles_depthwise_conv2d_s8", "woofles_fully_connected_s8",
            "woofles_quantize_s8", "woofles_quantize_requantize_s8", "woofles_dequantize_s8",
            "woofles_conv2d_f32", "woofles_fully_connected_f32"} <= defined
    portable, portable_needs = _symbols(nm, build / "libtvmk_portable.a")
    wanted = {s for s in undefined | portable_needs if s.startswith("tvmk_")}
    assert {"tvmk_conv2d_s8", "tvmk_dequantize_s8"} <= wanted <= portable
    if target != "host":
        return
    rng = np.random.default_rng(4)
    x = rng.integers(-128, 128, (2, 4)).astype(np.int8)
    w = rng.integers(-127, 128, (3, 4)).astype(np.int8)
    b = rng.integers(-900, 900, 3).astype(np.int32)
    p = {"batch": 2, "in_size": 4, "out_size": 3, "input_offset": 5, "weights_offset": 0,
         "output_offset": -3, "output_multiplier": 1518500250, "output_shift": -6,
         "activation_min": -100, "activation_max": 127}
    app = tmp_path / "app"
    app.mkdir()

    def ints(a: np.ndarray) -> str:
        return ", ".join(str(int(v)) for v in a.ravel())

    (app / "main.c").write_text(INT8_APP.replace("@X@", ints(x)).replace("@W@", ints(w))
                                .replace("@B@", ints(b))
                                .replace("@P@", ", ".join(str(v) for v in p.values())))
    (app / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(app C)\n"
        f"add_subdirectory({out} tvmdev)\nadd_executable(app main.c)\n"
        "set_target_properties(app PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF)\n"
        "target_link_libraries(app PRIVATE tvm_device_woofles_posix)\n")
    _host_build(app, tmp_path / "app-build")
    words = run_ok([str(tmp_path / "app-build/app")], timeout=30).stdout.split()
    assert words[:7] == ["0"] * 7, words
    want = _fc_s8_expected(x, w, b, p)
    assert [int(v) for v in words[7:]] == [int(v) for v in want.ravel()]
    assert len(set(words[7:])) > 2  # neither all clamped nor all one value
