"""Every toolchain the suite uses can build what the generated code needs.

A compiler can be installed yet useless: Debian's gcc-aarch64-linux-gnu only
*recommends* its C library (libc6-dev-arm64-cross), so with --no-install-recommends it
compiles nothing that includes <stdint.h>. The other tests then fail deep inside a build;
these fail first, naming the Debian package to install.

A missing program skips on a developer's machine and fails under CI=true (conftest's
need_tool). A compiler that is present but cannot build the program fails everywhere:
the tests that use it would fail anyway, only less clearly.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO, need_tool

from tvmdev.load.board import Board, all_boards


@dataclass(frozen=True)
class Toolchain:
    id: str
    cc: str
    package: str          # the compiler's Debian package
    libc: str             # the package with its C library (headers, libraries, specs)
    headers: tuple[str, ...]
    cflags: tuple[str, ...]
    ldflags: tuple[str, ...]


COMMON = ("stddef.h", "stdint.h", "string.h", "math.h")
HOST = Toolchain("host-gcc", "gcc", "gcc", "libc6-dev", (*COMMON, "pthread.h"),
                 ("-std=c99", "-O2"), ("-pthread", "-lm"))
CORTEX_M = Toolchain("arm-none-eabi-gcc", "arm-none-eabi-gcc", "gcc-arm-none-eabi",
                     "libnewlib-arm-none-eabi", COMMON,
                     ("-mcpu=cortex-m3", "-mthumb", "-std=c99", "-O2"),
                     ("--specs=nano.specs", "--specs=nosys.specs", "-lm"))
AARCH64 = Toolchain("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu",
                    "libc6-dev-arm64-cross", (*COMMON, "pthread.h", "sys/auxv.h"),
                    ("-std=c99", "-O2"), ("-static", "-pthread", "-lm"))
TOOLCHAINS = [HOST, CORTEX_M, AARCH64]
# The programs the suite runs, with the packages that provide them.
PROGRAMS = {"qemu-system-arm": "qemu-system-arm", "qemu-aarch64": "qemu-user",
            "cmake": "cmake", "make": "make", "strace": "strace"}

BODY = """
#define _POSIX_C_SOURCE 200809L
@HEADERS@
#include <stdio.h>

volatile float input = 2.0f;

int main(void)
{
    uint8_t a[4] = {1, 2, 3, 4}, b[4];
    size_t n = sizeof a;
    memcpy(b, a, n);
    printf("toolchain ok %d\\n", (int)(b[3] + sqrtf(input * input)));
    return 0;
}
"""


def diagnose(tc: Toolchain, stderr: str, step: str) -> str:
    """A one-line reason a compile or link failed, naming the package to install."""
    header = re.search(r"fatal error: ([\w./+-]+): No such file or directory", stderr)
    if header:
        return f"{tc.cc} cannot compile: {header.group(1)} missing; install {tc.libc}"
    missing = re.search(r"cannot (?:find|read spec file) '?([^\s':]+)'?", stderr)
    if missing:
        return f"{tc.cc} cannot link: {missing.group(1)} missing; install {tc.libc}"
    return (f"{tc.cc} cannot {step} a program including {', '.join(tc.headers)}; "
            f"install {tc.package} and {tc.libc}:\n{stderr}")


def build(tc: Toolchain, tmp: Path, extra: tuple[str, ...] = ()) -> Path:
    """Compile, then link, the test program; fail naming the package that is missing."""
    cc = need_tool(tc.cc, f"apt-get install {tc.package} {tc.libc}")
    src = tmp / "toolchain.c"
    src.write_text(BODY.replace("@HEADERS@", "\n".join(f"#include <{h}>" for h in tc.headers)))
    obj, exe = tmp / "toolchain.o", tmp / "toolchain"
    for step, cmd in (("compile", [cc, *tc.cflags, *extra, "-c", str(src), "-o", str(obj)]),
                      ("link", [cc, *tc.cflags, *extra, str(obj), *tc.ldflags, "-o",
                                str(exe)])):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            pytest.fail(diagnose(tc, proc.stderr, step), pytrace=False)
    return exe


def test_host_gcc(tmp_path: Path) -> None:
    exe = build(HOST, tmp_path)
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=30).stdout
    assert out.strip() == "toolchain ok 6"


def test_host_gcc_thread_sanitizer(tmp_path: Path) -> None:
    exe = build(HOST, tmp_path, ("-fsanitize=thread",))
    assert exe.is_file()


def test_arm_none_eabi_gcc_with_newlib(tmp_path: Path) -> None:
    assert build(CORTEX_M, tmp_path).is_file()


def test_aarch64_linux_gnu_gcc(tmp_path: Path) -> None:
    assert build(AARCH64, tmp_path).is_file()


def test_qemu_aarch64_runs_a_static_program(tmp_path: Path) -> None:
    qemu = need_tool("qemu-aarch64", f"apt-get install {PROGRAMS['qemu-aarch64']}")
    exe = build(AARCH64, tmp_path)
    for cpu in ("max", "cortex-a53"):
        proc = subprocess.run([qemu, "-cpu", cpu, str(exe)], capture_output=True, text=True,
                              timeout=30)
        assert proc.stdout.strip() == "toolchain ok 6", f"-cpu {cpu}: {proc.stderr}"


def _arm_boards() -> list[Board]:
    """The built-in boards that run under qemu-system-arm."""
    return [b for b in all_boards().values()
            if b.origin == "built-in" and b.run.method == "qemu-system"
            and b.run.qemu == "qemu-system-arm"]


# The machines the built-in Cortex-M boards run on (their -M).
MACHINES = sorted({b.run.args[b.run.args.index("-M") + 1] for b in _arm_boards()})
# Each Cortex-M board's CPU and float ABI flags: newlib needs the multilib for each.
ARCH_FLAGS = {b.name: tuple(f for f in b.toolchain.cflags
                            if f.startswith(("-mcpu=", "-mfpu=", "-mfloat-abi=")))
              for b in _arm_boards()}


@pytest.mark.parametrize("machine", MACHINES)
def test_qemu_system_arm_has_the_machine(machine: str) -> None:
    qemu = need_tool("qemu-system-arm", f"apt-get install {PROGRAMS['qemu-system-arm']}")
    proc = subprocess.run([qemu, "-M", "help"], capture_output=True, text=True, timeout=30)
    machines = [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]
    assert machine in machines, (
        f"{qemu} lacks the {machine} machine; install qemu-system-arm\n{proc.stderr}")


@pytest.mark.parametrize("board", sorted(ARCH_FLAGS))
def test_arm_none_eabi_gcc_for_the_board(board: str, tmp_path: Path) -> None:
    assert build(CORTEX_M, tmp_path, ARCH_FLAGS[board]).is_file()


@pytest.mark.parametrize("program", ["cmake", "make"])
def test_build_tools(program: str) -> None:
    need_tool(program, f"apt-get install {PROGRAMS[program]}")


def test_strace_can_kill_at_a_rename(tmp_path: Path) -> None:
    """tests/test_write_interrupted.py kills tvmdev at each rename with strace; that needs
    strace and a kernel (or container) that lets it trace."""
    strace = need_tool("strace", f"apt-get install {PROGRAMS['strace']}")
    (tmp_path / "a").write_text("")
    proc = subprocess.run([strace, "-f", "-qq", "-o", "/dev/null", "-e", "inject=rename,"
                           "renameat,renameat2:signal=SIGKILL:when=1", sys.executable, "-c",
                           "import os; os.replace('a', 'b')"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL and (tmp_path / "a").exists(), (
        f"strace cannot kill a process at a rename here (is ptrace allowed?)\n{proc.stderr}")


def test_test_script_installs_every_package() -> None:
    """scripts/test.sh names each package above, so apt installs it even though
    it runs with --no-install-recommends."""
    script = re.sub(r"(^|\s)#.*", "", (REPO / "scripts/test.sh").read_text(), flags=re.M)
    listed = re.search(r"APT_PACKAGES=\(([^)]*)\)", script)
    assert listed, "scripts/test.sh has no APT_PACKAGES=(...)"
    names = set(listed.group(1).split())
    wanted = {p for tc in TOOLCHAINS for p in (tc.package, tc.libc)} | set(PROGRAMS.values())
    assert wanted <= names, f"scripts/test.sh does not install {sorted(wanted - names)}"
    assert "gcc-multilib" not in names  # on Debian 12 it removes gcc-aarch64-linux-gnu


@pytest.mark.parametrize("tc,stderr,message", [
    (AARCH64, "/usr/include/stdint.h:26:10: fatal error: bits/libc-header-start.h: No such "
     "file or directory", "aarch64-linux-gnu-gcc cannot compile: bits/libc-header-start.h "
     "missing; install libc6-dev-arm64-cross"),
    (CORTEX_M, "arm-none-eabi-gcc: fatal error: cannot read spec file 'nano.specs': No such "
     "file or directory", "arm-none-eabi-gcc cannot link: nano.specs missing; install "
     "libnewlib-arm-none-eabi"),
    (AARCH64, "/usr/bin/aarch64-linux-gnu-ld: cannot find -lc: No such file or directory",
     "aarch64-linux-gnu-gcc cannot link: -lc missing; install libc6-dev-arm64-cross"),
], ids=["header", "specs", "library"])
def test_diagnosis_names_the_package(tc: Toolchain, stderr: str, message: str) -> None:
    assert diagnose(tc, stderr, "compile") == message
