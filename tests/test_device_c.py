"""The generated device code compiles with -Werror, and runs where it can.

posix: built with -std=c99 -pedantic and exercised by tests/c/posix_device_test.c (also
under ThreadSanitizer). cmsis: run on the host against a fake CMSIS-Driver, and
cross-compiled for Cortex-M3 against the CMSIS-Driver declarations in
platforms/cmsis/include. zephyr: preprocessed with minimal fake headers, parsed with
pycparser, its structure checked, and run on the host against a fake kernel (built for
real by the Zephyr tests).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, Result, need_tool, run_ok
from pycparser import c_ast, c_parser

WARN = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
CMSIS_INC = REPO / "platforms/cmsis/include"
TESTS_C = REPO / "tests/c"


def test_posix_device_runs(cli: Callable[..., Result], tmp_path: Path) -> None:
    gcc = need_tool("gcc")
    assert cli("new-device", "woofles", "--platform", "posix", "-o", "out",
               cwd=tmp_path).code == 0
    out = tmp_path / "out"
    src = [str(TESTS_C / "posix_device_test.c"), str(out / "src/device/woofles/posix.c")]
    exe = tmp_path / "t"
    for extra in ([], ["-DTVM_DEVICE_WOOFLES_OPEN_TIMEOUT_MS=50"]):
        run_ok([gcc, *WARN, *extra, f"-I{out}/include", *src, "-lpthread", "-o", str(exe)])
        proc = run_ok([str(exe)], timeout=60)
        assert proc.stdout.strip().endswith("0 failures")
        assert ("timeout checked" in proc.stdout) == bool(extra)


@pytest.mark.slow
def test_posix_device_under_thread_sanitizer(cli: Callable[..., Result],
                                             tmp_path: Path) -> None:
    gcc = need_tool("gcc")
    cli("new-device", "woofles", "--platform", "posix", "-o", "out", cwd=tmp_path)
    out = tmp_path / "out"
    exe = tmp_path / "t"
    run_ok([gcc, "-fsanitize=thread", "-g", "-O1", *WARN,
            "-DTVM_DEVICE_WOOFLES_OPEN_TIMEOUT_MS=50", f"-I{out}/include",
            str(TESTS_C / "posix_device_test.c"), str(out / "src/device/woofles/posix.c"),
            "-lpthread", "-o", str(exe)])
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120,
                          env={"TSAN_OPTIONS": "halt_on_error=1 exitcode=66"})
    assert "ThreadSanitizer" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr


DRIVERS = {"usart": ("ARM_DRIVER_USART", "ARM_USART_SignalEvent_t"),
           "spi": ("ARM_DRIVER_SPI", "ARM_SPI_SignalEvent_t"),
           "i2c": ("ARM_DRIVER_I2C", "ARM_I2C_SignalEvent_t")}


# One driver per RTOS stays in the fast lane (each compiles and runs a host program and
# cross-compiles); the other four combinations run in the slow one.
FAST_CMSIS = {("spi", "cmsis-rtos2"), ("usart", "none")}


@pytest.mark.parametrize("driver,rtos", [
    (d, r) if (d, r) in FAST_CMSIS else pytest.param(d, r, marks=pytest.mark.slow)
    for d in sorted(DRIVERS) for r in ("none", "cmsis-rtos2")])
def test_cmsis_device(driver: str, rtos: str, cli: Callable[..., Result],
                      tmp_path: Path) -> None:
    assert cli("new-device", "uart_accel", "--platform", "cmsis", "--cmsis-driver", driver,
               "--rtos", rtos, "-o", "out", cwd=tmp_path).code == 0
    out = tmp_path / "out"
    drv_t, event_t = DRIVERS[driver]
    flags = [*WARN, f"-DFAKE_DRIVER_T={drv_t}", f"-DFAKE_EVENT_T={event_t}",
             f"-I{out}/include", f"-I{CMSIS_INC}"]
    src = [str(TESTS_C / "cmsis_device_test.c"), str(out / "src/device/uart_accel/cmsis.c")]
    host = [*src, "-std=c11"]
    if rtos != "none":
        flags += ["-DWITH_RTOS", f"-I{TESTS_C}"]
        host += [str(TESTS_C / "fake_cmsis_rtos2.c"), "-DFAKE_RTX5", "-lpthread"]
    # On the host, against the fake driver: the mapping and the call sequence.
    gcc = need_tool("gcc")
    run_ok([gcc, *flags, *host, "-o", str(tmp_path / "t")])
    proc = run_ok([str(tmp_path / "t")], timeout=30)
    assert proc.stdout.strip().endswith("0 failures")
    # For Cortex-M3: the device source alone, as firmware would build it.
    arm = need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    run_ok([arm, "-mcpu=cortex-m3", "-mthumb", "-Os", *flags, "-c", src[1],
            "-o", str(tmp_path / "cmsis.o")])


RTOS_CHECKS = {"before_start": 6, "destroy_isr": 2, "holding": 4, "static_memory": 3,
               "threads": 1}  # tests/c/cmsis_rtos_test.c: check -> the defect of issue 22


# RTX5 with kernel memory and FreeRTOS with static memory stay in the fast lane; the other
# two combinations run in the slow one.
@pytest.mark.parametrize("kernel,static", [
    ("RTX5", False), pytest.param("RTX5", True, marks=pytest.mark.slow),
    pytest.param("FREERTOS", False, marks=pytest.mark.slow), ("FREERTOS", True)],
    ids=["RTX5-kernel-memory", "RTX5-static-memory", "FREERTOS-kernel-memory",
         "FREERTOS-static-memory"])
def test_cmsis_rtos2_device_on_fake_kernels(kernel: str, static: bool,
                                            cli: Callable[..., Result],
                                            tmp_path: Path) -> None:
    """Issue 22's defects 1-7 on a fake CMSIS-RTOS2 kernel that behaves as RTX5 or as
    CMSIS-FreeRTOS where they differ (tests/c/fake_cmsis_rtos2.c names each source):
    three threads on a slow-to-power SPI driver, Close by a non-holder, a second Open,
    Destroy from an interrupt, before the kernel starts, the per-instance timeout and
    (static-memory) the mutexes in the instance at the kernel's exact size."""
    gcc = need_tool("gcc")
    assert cli("new-device", "npu", "--platform", "cmsis", "--cmsis-driver", "spi",
               "--rtos", "cmsis-rtos2", "-o", "out", cwd=tmp_path).code == 0
    out = tmp_path / "out"
    exe = tmp_path / "t"
    extra = (["-DTVM_DEVICE_NPU_MUTEX_CB_TYPE=fake_mutex_cb_t",
              '-DTVM_DEVICE_NPU_MUTEX_CB_HEADER="fake_cmsis_rtos2.h"'] if static else [])
    run_ok([gcc, *WARN, "-std=c11", f"-DFAKE_{kernel}", *extra,
            "-DFAKE_DRIVER_T=ARM_DRIVER_SPI", "-DFAKE_EVENT_T=ARM_SPI_SignalEvent_t",
            f"-I{out}/include", f"-I{CMSIS_INC}", f"-I{TESTS_C}",
            str(TESTS_C / "cmsis_rtos_test.c"), str(TESTS_C / "fake_cmsis_rtos2.c"),
            str(out / "src/device/npu/cmsis.c"), "-lpthread", "-o", str(exe)])
    for check, defect in RTOS_CHECKS.items():
        if static and check != "static_memory":
            continue  # the rest as with kernel memory
        proc = subprocess.run([str(exe), check], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"defect {defect} ({check}):\n{proc.stdout}{proc.stderr}"
        assert proc.stdout.strip().endswith("0 failures")
        assert ("static memory: checked" in proc.stdout) == (check == "static_memory"
                                                             and static)


def test_zephyr_device_on_a_fake_kernel(cli: Callable[..., Result], tmp_path: Path) -> None:
    """Every function's status in every state, on the host against a fake kernel."""
    gcc = need_tool("gcc")
    assert cli("new-device", "woofles", "--platform", "zephyr", "-o", "out",
               cwd=tmp_path).code == 0
    out = tmp_path / "out"
    exe = tmp_path / "t"
    run_ok([gcc, *WARN, f"-I{REPO}/platforms/zephyr/fake_include", f"-I{out}/include",
            "-DCONFIG_TVM_DEVICE_WOOFLES_OPEN_TIMEOUT_MS=-1",
            "-DCONFIG_TVM_DEVICE_WOOFLES_LOG_LEVEL=3", str(TESTS_C / "zephyr_device_test.c"),
            str(out / "src/device/woofles/zephyr.c"), "-o", str(exe)])
    proc = run_ok([str(exe)], timeout=30)
    assert proc.stdout.strip().endswith("0 failures")


def _parse_zephyr(path: Path, include: Path) -> c_ast.FileAST:
    gcc = need_tool("gcc")
    pre = run_ok([gcc, "-E", "-P", "-nostdinc", f"-I{REPO}/runtime/fake_libc",
                  f"-I{REPO}/platforms/zephyr/fake_include", f"-I{include}",
                  "-DCONFIG_TVM_DEVICE_WOOFLES_OPEN_TIMEOUT_MS=-1",
                  "-DCONFIG_TVM_DEVICE_WOOFLES_LOG_LEVEL=3",
                  "-DCONFIG_KERNEL_INIT_PRIORITY_DEVICE=50",
                  "-DCONFIG_TVM_DEVICE_WOOFLES_INIT_PRIORITY=50", str(path)]).stdout
    return c_parser.CParser().parse(pre, str(path))


class _Calls(c_ast.NodeVisitor):
    def __init__(self) -> None:
        self.by_function: dict[str, set[str]] = {}
        self.current = ""

    def visit_FuncDef(self, node: c_ast.FuncDef) -> None:
        self.current = node.decl.name
        self.by_function[self.current] = set()
        self.generic_visit(node)

    def visit_FuncCall(self, node: c_ast.FuncCall) -> None:
        if isinstance(node.name, c_ast.ID) and self.current:
            self.by_function[self.current].add(node.name.name)
        self.generic_visit(node)


def test_zephyr_device_structure(cli: Callable[..., Result], tmp_path: Path) -> None:
    assert cli("new-device", "woofles", "--platform", "zephyr", "--zephyr-driver", "-o", "out",
               cwd=tmp_path).code == 0
    out = tmp_path / "out"
    ast = _parse_zephyr(out / "src/device/woofles/zephyr.c", out / "include")
    calls = _Calls()
    calls.visit(ast)
    fns = calls.by_function
    for fn in ("Init", "Activate", "Open", "Close", "Deactivate", "Destroy"):
        assert f"TVMDeviceWoofles{fn}" in fns, f"TVMDeviceWoofles{fn} is not defined"
    assert {"device_is_ready", "k_mutex_init"} <= fns["TVMDeviceWooflesInit"]
    assert "k_mutex_lock" in fns["TVMDeviceWooflesOpen"]
    assert "k_mutex_unlock" in fns["TVMDeviceWooflesClose"]
    assert {"pm_device_runtime_get", "atomic_inc"} <= fns["TVMDeviceWooflesActivate"]
    assert {"pm_device_runtime_put", "atomic_cas"} <= fns["TVMDeviceWooflesDeactivate"]
    # Open and Close know the holder; Destroy reads the device's own state, never the
    # k_mutex's (the fake header makes its members opaque).
    assert "k_current_get" in fns["TVMDeviceWooflesOpen"] & fns["TVMDeviceWooflesClose"]
    assert fns["TVMDeviceWooflesDestroy"] == {"atomic_get"}
    # The struct holds the device and the mutex, with the types the issue names, and
    # the state Destroy checks.
    struct = next(n.type for n in ast.ext if isinstance(n, c_ast.Decl)
                  and isinstance(n.type, c_ast.Struct) and n.type.name == "tvm_device_woofles"
                  and n.type.decls)
    members = {d.name: d for d in struct.decls}
    assert set(members) == {"dev", "lock", "owner", "active", "user"}
    assert members["user"].type.type.name == "tvm_device_woofles_user"  # zephyr_user.h
    assert isinstance(members["dev"].type, c_ast.PtrDecl)
    assert members["dev"].type.type.type.name == "device"
    assert "const" in members["dev"].type.type.quals
    assert members["lock"].type.type.name == "k_mutex"
    assert members["owner"].type.type.names == ["k_tid_t"]
    assert members["active"].type.type.names == ["atomic_t"]
    # Open maps -EAGAIN and -EBUSY to the timeout and busy codes.
    text = (out / "src/device/woofles/zephyr.c").read_text()
    assert "case -EAGAIN:\n        return TVM_DEVICE_ERR_TIMEOUT;" in text
    assert "case -EBUSY:\n        return TVM_DEVICE_ERR_BUSY;" in text
    # The skeleton driver parses too and defines one device per instance.
    drv = _parse_zephyr(out / "drivers/woofles/woofles.c", out / "include")
    names = {n.name for n in drv.ext if isinstance(n, c_ast.Decl)}
    assert "tvmdev_fake_device_0" in names
    kconfig = (out / "Kconfig").read_text()
    assert "menuconfig TVM_DEVICE_WOOFLES" in kconfig
    assert "config TVM_DEVICE_WOOFLES_OPEN_TIMEOUT_MS" in kconfig
    assert 'source "subsys/logging/Kconfig.template.log_config"' in kconfig
    assert "cmake: ." in (out / "zephyr/module.yml").read_text()
    assert 'compatible: "tvmdev,woofles"' in (out / "dts/bindings/tvmdev,woofles.yaml").read_text()


@pytest.mark.slow
def test_cmake_builds_the_posix_library(cli: Callable[..., Result], tmp_path: Path) -> None:
    cmake = need_tool("cmake")
    cli("new-device", "woofles", "--platform", "posix", "--platform", "zephyr", "-o", "out",
        cwd=tmp_path)
    cli("new-device", "uart_accel", "--platform", "posix", "-o", "out", cwd=tmp_path)
    build = tmp_path / "build"
    run_ok([cmake, "-S", str(tmp_path / "out"), "-B", str(build), "-DCMAKE_C_FLAGS=" +
            " ".join(WARN)])
    run_ok([cmake, "--build", str(build)])
    assert (build / "libtvm_device_woofles_posix.a").is_file()
    assert (build / "libtvm_device_uart_accel_posix.a").is_file()


@pytest.mark.slow
def test_cmake_builds_the_cmsis_library_for_cortex_m(cli: Callable[..., Result],
                                                     tmp_path: Path) -> None:
    cmake = need_tool("cmake")
    arm = need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    cli("new-device", "uart_accel", "--platform", "cmsis", "--rtos", "cmsis-rtos2", "-o", "out",
        cwd=tmp_path)
    build = tmp_path / "build"
    run_ok([cmake, "-S", str(tmp_path / "out"), "-B", str(build),
            "-DCMAKE_SYSTEM_NAME=Generic", f"-DCMAKE_C_COMPILER={arm}",
            "-DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY",
            "-DCMAKE_C_FLAGS=-mcpu=cortex-m3 -mthumb " + " ".join(WARN),
            "-DTVMDEV_PLATFORMS=cmsis", f"-DCMSIS_DRIVER_INCLUDE_DIR={CMSIS_INC}",
            f"-DCMSIS_RTOS2_INCLUDE_DIR={CMSIS_INC}"])
    run_ok([cmake, "--build", str(build)])
    assert (build / "libtvm_device_uart_accel_cmsis.a").is_file()
