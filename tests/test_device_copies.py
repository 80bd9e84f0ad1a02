"""Issue 23: a device kind with memory of its own (new-device --memory) gets CopyTo,
CopyFrom and Wait on every platform, and each scaffold's default is exercised: POSIX on
the host (bytes round-tripped, ranges, NOT_READY, Wait on a thread), CMSIS against a
fake CMSIS-Driver with an accelerator behind it (and cross-compiled, with the Cortex-M7's
data cache), Zephyr against the fake headers and, with a Zephyr tree, the skeleton
driver on native_sim's SPI and I2C emulators (runtime PM, reset, IRQ), Metal by its
text (it builds on macOS only). Also item 5: the user's header survives regeneration,
--vendor and --bus, and the board's cache line."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, Result, need_tool, run_ok, tree

WARN = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
TESTS_C = REPO / "tests/c"
CMSIS_INC = REPO / "platforms/cmsis/include"
ZEPHYR_FAKE = REPO / "platforms/zephyr/fake_include"


def _device(cli: Callable[..., Result], tmp: Path, *args: str, name: str = "npu") -> Path:
    out = tmp / "out"
    r = cli("new-device", name, *args, "-o", str(out))
    assert r.code == 0, r.err
    return out


def _run(exe: Path) -> None:
    proc = run_ok([str(exe)], timeout=60)
    assert proc.stdout.strip().endswith("0 failures"), proc.stdout


def test_header_declares_the_memory_api(cli: Callable[..., Result], tmp_path: Path) -> None:
    out = _device(cli, tmp_path, "--platform", "posix", "--memory", "256K:32")
    header = (out / "include/tvm/device/npu.h").read_text()
    assert "typedef uint32_t tvm_device_npu_addr_t;" in header
    assert "#define TVM_DEVICE_NPU_MEMORY_SIZE 262144u" in header
    assert "#define TVM_DEVICE_NPU_MEMORY_ALIGN 32u" in header
    for fn in ("CopyTo", "CopyFrom", "Wait"):
        assert f"int32_t TVMDeviceNpu{fn}(" in header
    status = (out / "include/tvm/device/status.h").read_text()
    assert "#define TVM_DEVICE_PENDING (1)" in status
    assert 'case TVM_DEVICE_PENDING:\n        return "TVM_DEVICE_PENDING";' in status
    record = json.loads((out / ".tvmdev.json").read_text())["devices"]["npu"]
    assert record["memory"] == {"size": 262144, "alignment": 32}
    # aot and run --device-dir read it back: the planner's input.
    from tvmdev.model.device import DeviceMemory
    from tvmdev.render.device import user_device_specs
    assert user_device_specs(out)[0].memory == DeviceMemory(262144, 32)
    # Without --memory, none of it: the goldens of tests/test_new_device.py.


def test_posix_copies_run(cli: Callable[..., Result], tmp_path: Path) -> None:
    gcc = need_tool("gcc")
    out = _device(cli, tmp_path, "--platform", "posix", "--memory", "4K:32")
    exe = tmp_path / "t"
    run_ok([gcc, *WARN, f"-I{out}/include", str(TESTS_C / "posix_copy_test.c"),
            str(out / "src/device/npu/posix.c"), "-lpthread", "-o", str(exe)])
    _run(exe)


@pytest.mark.slow
@pytest.mark.parametrize("platform", ["posix", "cmsis", "zephyr"])
def test_check_knows_the_copy_functions(platform: str, cli: Callable[..., Result],
                                        tmp_path: Path) -> None:
    """tvmdev check parses the scaffold's CopyTo/CopyFrom/Wait against the header, and
    misses a Wait that is not there."""
    out = _device(cli, tmp_path, "--platform", platform, "--memory", "4K")
    r = cli("check", str(out))
    assert r.code == 0, r.out + r.err
    src = out / f"src/device/npu/{platform}.c"
    src.write_text(src.read_text().replace("int32_t TVMDeviceNpuWait(", "int32_t NotWait("))
    r = cli("check", str(out))
    assert r.code == 1
    assert f"src/device/npu/{platform}.c: TVMDeviceNpuWait is not defined" in r.out


@pytest.mark.slow
@pytest.mark.parametrize("rtos", ["none", "cmsis-rtos2"])
@pytest.mark.parametrize("driver", ["usart", "spi", "i2c"])
def test_cmsis_copies_on_a_fake_driver(driver: str, rtos: str, cli: Callable[..., Result],
                                       tmp_path: Path) -> None:
    gcc = need_tool("gcc")
    out = _device(cli, tmp_path, "--platform", "cmsis", "--cmsis-driver", driver, "--rtos",
                  rtos, "--memory", "4K")
    flags = [*WARN, "-std=c11", f"-DFAKE_{driver.upper()}", f"-I{out}/include",
             f"-I{CMSIS_INC}"]
    src = [str(TESTS_C / "cmsis_copy_test.c"), str(out / "src/device/npu/cmsis.c")]
    if rtos != "none":  # ticks of the fake kernel are ms: a silent device costs 20 ms
        flags += ["-DWITH_RTOS", f"-I{TESTS_C}", "-DFAKE_RTX5",
                  "-DTVM_DEVICE_NPU_TRANSFER_TIMEOUT=20u"]
        src += [str(TESTS_C / "fake_cmsis_rtos2.c"), "-lpthread"]
    run_ok([gcc, *flags, *src, "-o", str(tmp_path / "t")])
    _run(tmp_path / "t")
    # For a Cortex-M4, against Arm's own CMSIS-Driver and CMSIS-RTOS2 headers where
    # CMSIS 6 is present (the declarations in platforms/cmsis/include are tvmdev's).
    core = os.environ.get("CMSIS_6_SOURCE_DIR")
    arm = need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    arm_inc = ([f"-I{core}/CMSIS/RTOS2/Include", f"-I{core}/CMSIS/Driver/Include"]
               if core and Path(core, "CMSIS/Driver/Include").is_dir() else [f"-I{CMSIS_INC}"])
    run_ok([arm, "-mcpu=cortex-m4", "-mthumb", "-Os", *WARN, *arm_inc, f"-I{out}/include",
            "-c", src[1], "-o", str(tmp_path / "cmsis.o")])


@pytest.mark.slow
def test_cmsis_copies_clean_and_invalidate_the_m7_cache(cli: Callable[..., Result],
                                                        tmp_path: Path) -> None:
    """For a Cortex-M7 (mps2_an500, the board with a data cache) the copies call CMSIS-Core's
    cache maintenance: built against CMSIS 6's core_cm7.h with __DCACHE_PRESENT, clean
    and invalidate hold SCB_CleanDCache_by_Addr's and SCB_InvalidateDCache_by_Addr's
    loops; for a Cortex-M3, with no cache, they are empty."""
    arm = need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    core = os.environ.get("CMSIS_6_SOURCE_DIR")
    if not core or not (Path(core) / "CMSIS/Core/Include/core_cm7.h").is_file():
        pytest.skip("CMSIS_6_SOURCE_DIR is not set: no CMSIS-Core headers for a Cortex-M7")
    out = _device(cli, tmp_path, "--platform", "cmsis", "--memory", "4K")
    (tmp_path / "m7.h").write_text(
        "/* A Cortex-M7 device header, as a vendor's declares one for CMSIS-Core. */\n"
        "typedef enum { Reset_IRQn = -15, SysTick_IRQn = -1 } IRQn_Type;\n"
        "#define __CM7_REV 0x0101U\n#define __MPU_PRESENT 1U\n#define __VTOR_PRESENT 1U\n"
        "#define __NVIC_PRIO_BITS 3U\n#define __Vendor_SysTickConfig 0U\n"
        "#define __FPU_PRESENT 1U\n#define __ICACHE_PRESENT 1U\n#define __DCACHE_PRESENT 1U\n"
        '#include "core_cm7.h"\n')
    asm = {}
    for cpu, header in (("cortex-m7", '"m7.h"'), ("cortex-m3", None)):
        extra = [f"-DCMSIS_device_header={header}", f"-I{tmp_path}",
                 f"-I{core}/CMSIS/Core/Include"] if header else []
        proc = run_ok([arm, f"-mcpu={cpu}", "-mthumb", "-O1", *WARN, "-std=gnu11", *extra,
                       f"-I{out}/include", f"-I{CMSIS_INC}", "-S", "-o", "-",
                       str(out / "src/device/npu/cmsis.c")])
        asm[cpu] = proc.stdout
    # SCB_CleanDCache_by_Addr in clean() and SCB_InvalidateDCache_by_Addr in CopyFrom (where
    # invalidate() is inlined) write to SCB (0xE000ED00: DCCMVAC, DCIMVAC) between
    # barriers on the Cortex-M7; on the Cortex-M3 nothing does.
    for fn in ("clean", "TVMDeviceNpuCopyFrom"):
        body = _asm_function(asm["cortex-m7"], fn)
        assert "-536810240" in body and "dsb" in body, body
    assert "-536810240" not in asm["cortex-m3"] and "dsb" not in asm["cortex-m3"]


def _asm_function(asm: str, name: str) -> str:
    """The body of function ``name`` in GCC's assembly output ("" if the compiler removed
    it: an empty static function is inlined away)."""
    start = asm.find(f"\n{name}:\n")
    return "" if start < 0 else asm[start:asm.index(f".size\t{name}, .-{name}", start)]


@pytest.mark.slow
def test_simulated_accelerator_keeps_its_memory(tmp_path: Path) -> None:
    """tvmdev's simulated accelerator (tvmdev run without --device-dir) has its copies in
    sim_memory.c (counted by tvmdev_sim, faults injected: tests/test_device_memory_run.py
    runs them), not over a bus: the platform file defines none of them, and the two build
    together, on POSIX and on CMSIS (a Cortex-M3, with and without an RTOS)."""
    from tvmdev.model.device import DeviceMemory, DeviceSpec
    from tvmdev.render.device import device_files, project_files
    gcc = need_tool("gcc")
    arm = need_tool("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
    memory = DeviceMemory(4096, 32)
    for plat, options in (("posix", ()), ("cmsis", (("rtos", "none"),)),
                          ("cmsis", (("rtos", "cmsis-rtos2"),))):
        out = tmp_path / f"{plat}-{len(options) and options[0][1]}"
        spec = DeviceSpec("npu", (plat,), options=options, memory=memory)
        for f in device_files(spec, sim=True) + project_files([spec]):
            (out / f.path).parent.mkdir(parents=True, exist_ok=True)
            (out / f.path).write_text(str(f.content))
        device = out / f"src/device/npu/{plat}.c"
        sim_memory = out / "src/device/npu/sim_memory.c"
        text = device.read_text()
        assert "TVMDeviceNpuCopyTo(" not in text and "FRAME_WRITE" not in text
        assert "tvmdev_sim_copy_to" in sim_memory.read_text()
        cc, flags = ((gcc, []) if plat == "posix" else
                     (arm, ["-mcpu=cortex-m3", "-mthumb", "-Os", f"-I{CMSIS_INC}"]))
        for src in (device, sim_memory):
            run_ok([cc, *flags, *WARN, f"-I{out}/include", f"-I{REPO}/runtime/sim", "-c",
                    str(src), "-o", str(tmp_path / (src.stem + ".o"))])


@pytest.mark.slow
@pytest.mark.parametrize("dcache", [False, True], ids=["no-cache", "dcache"])
def test_zephyr_copies_on_a_fake_kernel(dcache: bool, cli: Callable[..., Result],
                                        tmp_path: Path) -> None:
    gcc = need_tool("gcc")
    out = _device(cli, tmp_path, "--platform", "zephyr", "--memory", "4K")
    exe = tmp_path / "t"
    run_ok([gcc, *WARN, *(["-DCONFIG_DCACHE"] if dcache else []), f"-I{ZEPHYR_FAKE}",
            f"-I{out}/include", "-DCONFIG_TVM_DEVICE_NPU_OPEN_TIMEOUT_MS=-1",
            "-DCONFIG_TVM_DEVICE_NPU_LOG_LEVEL=3", str(TESTS_C / "zephyr_copy_test.c"),
            str(out / "src/device/npu/zephyr.c"), "-o", str(exe)])
    _run(exe)


ZEPHYR_BASE = os.environ.get("ZEPHYR_BASE")


@pytest.mark.slow
@pytest.mark.skipif(not ZEPHYR_BASE, reason="ZEPHYR_BASE is not set: the skeleton driver "
                    "builds against a Zephyr tree (3.4 or newer; see the README)")
@pytest.mark.parametrize("bus", ["spi", "i2c"])
def test_zephyr_driver_on_native_sim_bus_emulators(bus: str, cli: Callable[..., Result],
                                                   tmp_path: Path) -> None:
    """zephyr_app/bus_test on native_sim_64: the accelerator emulated behind the bus
    emulator, the driver's runtime PM, reset line, copies and IRQ (see its main.c)."""
    west = need_tool("west", "pip install west")
    out = _device(cli, tmp_path, "--platform", "zephyr", "--zephyr-driver", "--bus", bus,
                  "--vendor", "acme-ai", "--memory", "4K")
    extra = ([] if bus == "spi" else
             ["-DDTC_OVERLAY_FILE=i2c.overlay", "-DEXTRA_CONF_FILE=i2c.conf"])
    build = tmp_path / "b"
    run_ok([west, "build", "-b", "native_sim_64", "-d", str(build),
            str(REPO / "zephyr_app/bus_test"), "--", f"-DZEPHYR_EXTRA_MODULES={out}", *extra],
           timeout=900)
    proc = subprocess.run([str(build / "zephyr/zephyr.exe")], capture_output=True, text=True,
                          timeout=120)
    assert "PROJECT EXECUTION SUCCESSFUL" in proc.stdout, proc.stdout[-3000:]
    assert "pass = 4, fail = 0" in proc.stdout


@pytest.mark.slow
def test_zephyr_bus_binding_and_driver(cli: Callable[..., Result], tmp_path: Path) -> None:
    out = _device(cli, tmp_path, "--platform", "zephyr", "--zephyr-driver", "--bus", "spi",
                  "--vendor", "acme-ai", "--memory", "4K")
    binding = (out / "dts/bindings/acme-ai,npu.yaml").read_text()
    assert 'compatible: "acme-ai,npu"' in binding and "include: spi-device.yaml" in binding
    assert "  irq-gpios:\n    type: phandle-array" in binding
    assert "  reset-gpios:\n    type: phandle-array" in binding
    assert "acme-ai\tacme-ai" in (out / "dts/bindings/vendor-prefixes.txt").read_text()
    driver = (out / "drivers/npu/npu.c").read_text()
    for text in ("#define DT_DRV_COMPAT acme_ai_npu", "SPI_DT_SPEC_INST_GET(inst,",
                 "GPIO_DT_SPEC_INST_GET_OR(inst, irq_gpios, {0})",
                 "GPIO_DT_SPEC_INST_GET_OR(inst, reset_gpios, {0})", "spi_write_dt(",
                 "spi_transceive_dt(", "k_sem_give(&data->done)", "k_sem_take(&data->done",
                 "return pm_device_runtime_enable(dev);",
                 "PM_DEVICE_DT_INST_DEFINE(inst, npu_pm_action);",
                 "PM_DEVICE_DT_INST_GET(inst)", "&npu_api);"):
        assert text in driver, text
    kconfig = (out / "Kconfig").read_text()
    for text in ("depends on DT_HAS_ACME_AI_NPU_ENABLED", "select SPI", "select PM_DEVICE\n",
                 "select PM_DEVICE_RUNTIME", "config TVM_DEVICE_NPU_INIT_PRIORITY"):
        assert text in kconfig, text
    i2c = _device(cli, tmp_path / "i2c", "--platform", "zephyr", "--zephyr-driver", "--bus",
                  "i2c", "--memory", "4K")
    assert "include: i2c-device.yaml" in (i2c / "dts/bindings/tvmdev,npu.yaml").read_text()
    assert "I2C_DT_SPEC_INST_GET(inst)" in (i2c / "drivers/npu/npu.c").read_text()


@pytest.mark.slow
def test_metal_copies_use_a_shared_buffer(cli: Callable[..., Result], tmp_path: Path) -> None:
    """Metal builds on macOS only (the macOS workflow); here: the header is plain C, and
    the copies are memcpy to a shared-storage MTLBuffer's contents, range-checked, with
    Wait on the shared event."""
    gcc = need_tool("gcc")
    out = _device(cli, tmp_path, "--platform", "metal", "--memory", "1M:256", name="gpu")
    run_ok([gcc, *WARN, "-fsyntax-only", "-x", "c", f"-I{out}/include",
            str(out / "include/tvm/device/gpu/metal.h")])
    src = (out / "src/device/gpu/metal.m").read_text()
    assert ("newBufferWithLength:TVM_DEVICE_GPU_MEMORY_SIZE\n"
            "                                 options:MTLResourceStorageModeShared]") in src
    assert "memcpy(memory_of(tvm_dev) + dst, src, nbytes);" in src
    assert "memcpy(dst, memory_of(tvm_dev) + src, nbytes);" in src
    assert "waitUntilSignaledValue:tvm_dev->signal_value timeoutMS:timeout_ms" in src
    assert "[(id<NSObject>)tvm_dev->user.memory release];" in src
    assert src.count("if (!in_memory(") == 2


@pytest.mark.slow
def test_user_header_survives_regeneration(cli: Callable[..., Result],
                                           tmp_path: Path) -> None:
    args = ["--platform", "posix", "--platform", "cmsis", "--platform", "zephyr",
            "--platform", "metal"]
    out = _device(cli, tmp_path, *args)
    for plat in ("posix", "cmsis", "zephyr", "metal"):
        owned = (out / f"include/tvm/device/npu/{plat}.h").read_text()
        assert f'#include "tvm/device/npu/{plat}_user.h"' in owned
        assert "struct tvm_device_npu_user user;" in owned
    user = out / "include/tvm/device/npu/posix_user.h"
    mine = user.read_text().replace("uint32_t jobs;", "uint32_t jobs;\n    int my_field;")
    user.write_text(mine)
    r = cli("new-device", "npu", *args, "--memory", "4K", "-o", str(out))
    assert r.code == 0, r.err
    assert "kept (yours)  include/tvm/device/npu/posix_user.h" in r.out
    assert user.read_text() == mine
    # The owned headers changed (the memory API), the user's did not.
    assert "CopyTo" in (out / "include/tvm/device/npu.h").read_text()


BAD = [
    (["--platform", "posix", "--memory", "lots"],
     "tvmdev: --memory 'lots' is not a size"),
    (["--platform", "posix", "--memory", "4K:24"],
     "tvmdev: --memory '4K:24': the alignment 24 is not a power of two"),
    (["--platform", "posix", "--memory", "0"],
     "tvmdev: --memory '0': the size 0 is not between 1 byte and 4 GiB"),
    (["--platform", "posix", "--memory", "100:64"],
     "tvmdev: --memory '100:64': the size 100 is not a multiple of the alignment 64"),
    (["--platform", "zephyr", "--vendor", "Acme"],
     "tvmdev: --vendor 'Acme' is not a devicetree vendor prefix: a lower-case letter, then "
     "letters, digits or '-' (acme, acme-ai)"),
    (["--platform", "zephyr", "--bus", "spi"], "tvmdev: --bus needs --zephyr-driver"),
]
BUILTIN = ("tvmdev: --memory does not apply to the built-in kind 'kleidiai' (platform "
           "kleidiai runs it in the host's memory)")


@pytest.mark.parametrize("args,message", BAD, ids=[" ".join(a[2:]) for a, _ in BAD])
def test_bad_input(args: list[str], message: str, cli: Callable[..., Result],
                   tmp_path: Path) -> None:
    r = cli("new-device", "npu", *args, "-o", "out", cwd=tmp_path)
    assert r.code == 1
    assert r.err.splitlines()[0] == message
    assert r.err.splitlines()[1].startswith("  hint: ")
    assert "Traceback" not in r.err
    assert tree(tmp_path) == {}


def test_memory_is_refused_for_a_builtin_kind(cli: Callable[..., Result],
                                              tmp_path: Path) -> None:
    r = cli("new-device", "kleidiai", "--platform", "kleidiai", "--memory", "4K", "-o", "out",
            cwd=tmp_path)
    assert (r.code, r.err.splitlines()[0]) == (1, BUILTIN)
    assert tree(tmp_path) == {}


def test_board_cache_gives_the_alignment() -> None:
    from tvmdev.load.board import board_by_name
    from tvmdev.model.device import DeviceMemory
    m7, m3 = board_by_name("mps2_an500"), board_by_name("mps2_an385")
    assert m7.cache is not None and m7.cache.line == 32 and m3.cache is None
    assert (m7.buffer_alignment(), m3.buffer_alignment()) == (32, 16)
    assert m3.buffer_alignment(DeviceMemory(4096, 64)) == 64
