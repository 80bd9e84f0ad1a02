"""Board configuration mistakes: one line naming file and line (plus at most a hint),
exit 1, no traceback, nothing written. Each case is a real board file with one mistake,
run as ``tvmdev run examples/mlp/mlp.yaml --board FILE``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, Result

from tvmdev.load.board import load_board

MLP = str(REPO / "examples/mlp/mlp.yaml")
OFFLOAD = "offload:\n  device: gpu\n  kind: metal\n  ops: [gemm]\n"
RUN_KEYS = "known keys: method, timeout, requires, qemu, args, cpu, exe, elf, clock_hz"
SUPPORT_KEYS = ("known keys: sources, include, defines, console_uart, accelerator_uarts, "
                "zephyr_board, env")
QEMU_SYSTEM = "method qemu-system needs qemu, the emulator, and args, its command line"


def _sub(pattern: str, repl: str) -> Callable[[str], str]:
    return lambda text: re.sub(pattern, repl, text, count=1, flags=re.M)


# (id, board copied, the mistake, a text on the reported line (None: line 1),
#  the message, the hint or None)
CASES: list[tuple[str, str, Callable[[str], str], str | None, str, str | None]] = [
    ("typo under run", "host", _sub("^  method:", "  methd:"), "methd:",
     "unknown key 'methd' in run", RUN_KEYS),
    ("typo under support", "mps2_an385", _sub("^  sources:", "  sourcs:"), "sourcs:",
     "unknown key 'sourcs' in support", SUPPORT_KEYS),
    ("typo under memory", "mps2_an385", _sub("^  stack:", "  stak:"), "stak:",
     "unknown key 'stak' in memory", "known keys: code, ram, stack, regions"),
    ("typo under offload", "host", lambda t: t + OFFLOAD.replace("ops:", "opps:"), "opps:",
     "unknown key 'opps' in offload", "known keys: device, kind, ops, memory, gemm"),
    ("typo under toolchain", "host", _sub("^  cc:", "  ccc:"), "ccc:",
     "unknown key 'ccc' in toolchain", "known keys: cc, cflags, defines, ldflags"),
    ("typo at the top", "host", _sub("^kernels:", "kernals:"), "kernals:",
     "unknown key 'kernals'", "known keys: name, aliases, description, platform, cpu, "
     "toolchain, memory, run, support, kernels, io, patch, rtos, device_options, "
     "libraries, library_flash, cache, tuning, offload"),
    ("a flash budget for a library the board does not list", "mps2_an386",
     _sub("{tvmdev_cm: 32768}", "{tvmdev_cmm: 65536}"), "library_flash:",
     "library_flash: 'tvmdev_cmm' is not one of the board's libraries",
     "libraries: tvmdev_cm, cmsis_nn"),
    ("a cache line not a power of two", "mps2_an500", _sub("line: 32", "line: 24"), "cache:",
     "cache.line 24 is not one of 16, 32, 64, 128, 256", None),
    ("missing toolchain.cc", "host", _sub("^  cc: gcc\n", ""), "toolchain:",
     "toolchain needs 'cc'", "cc: the C compiler, for example gcc"),
    ("missing run.method", "host", _sub("^  method: native\n", ""), "run:",
     "run needs 'method'", "method: how programs run: native, qemu-user, qemu-system or west"),
    ("unknown method", "host", _sub("method: native", "method: ssh"), "method:",
     'run.method "ssh" is not one of native, qemu-user, qemu-system, west', None),
    ("cflags a string", "host", _sub("^  cflags: .*", '  cflags: "-O2"'), "cflags:",
     "toolchain.cflags must be a list, not a string", None),
    ("a cflag not a string", "host", _sub("^  cflags: .*", "  cflags: [-O2, 3]"), "cflags:",
     "toolchain.cflags[1] must be a string, not an integer", None),
    ("timeout a word", "mps2_an385", _sub("timeout: 60", "timeout: fast"), "timeout:",
     "run.timeout must be a number, not a string", None),
    ("timeout true", "host", _sub("timeout: 120", "timeout: true"), "timeout:",
     "run.timeout must be a number, not true", None),
    ("timeout zero", "host", _sub("timeout: 120", "timeout: 0"), "timeout:",
     "run.timeout must be more than 0, not 0", None),
    ("accelerator_uarts a number", "mps2_an385",
     _sub(r"accelerator_uarts: \[1, 2\]", "accelerator_uarts: 1"), "accelerator_uarts:",
     "support.accelerator_uarts must be a list, not an integer", None),
    ("accelerator_uarts repeated", "mps2_an385",
     _sub(r"accelerator_uarts: \[1, 2\]", "accelerator_uarts: [1, 1]"), "accelerator_uarts:",
     "support.accelerator_uarts lists an item twice", None),
    ("console is an accelerator UART", "mps2_an385",
     _sub("console_uart: 0", "console_uart: 2"), "accelerator_uarts:",
     "UART 2 is the console and an accelerator's",
     "support.console_uart must not be in support.accelerator_uarts"),
    ("stack a string", "mps2_an385", _sub("stack: 0x8000", 'stack: "big"'), "stack:",
     "memory.stack must be an integer, not a string", None),
    ("qemu-system without qemu", "mps2_an385", _sub("^  qemu: .*\n", ""),
     "method: qemu-system", "run needs 'qemu'", QEMU_SYSTEM),
    ("qemu-system without args", "mps2_an385", _sub(r"^  args: \[[^]]*\]\n", ""),
     "method: qemu-system", "run needs 'args'", QEMU_SYSTEM),
    ("qemu-system without memory", "mps2_an385", _sub(r"^memory:\n(  .*\n)+", ""),
     "method: qemu-system", "the board file needs 'memory'",
     "run.method qemu-system needs memory (the memory map) and support (sources, "
     "accelerator_uarts)"),
    ("a missing support source", "mps2_an385",
     _sub("cortex_m/startup.c", "cortex_m/nope.c"), "nope.c",
     "support.sources[0]: no such file: ${runtime}/cortex_m/nope.c",
     "paths are relative to the board file"),
    ("a missing kernel library", "host", _sub(r"^kernels: \[\]", "kernels: [mine.yaml]"),
     "kernels:", "kernels[0]: no such file: mine.yaml", "paths are relative to the board file"),
    ("west without zephyr_board", "native_sim_64", _sub(r"^support:\n(  .*\n)+", ""),
     "method: west", "the board file needs 'support'",
     "run.method west needs support.zephyr_board"),
    ("west without exe or elf", "native_sim_64", _sub("^  exe: .*\n", ""), "method: west",
     "run needs 'exe', or 'elf', 'qemu' and 'args'",
     "method west needs exe (a native_sim program) or elf, qemu and args (an image QEMU "
     "runs)"),
    ("negative region length", "mps2_an385", _sub(r"length: 0x400000\}    #", "length: -4}  #"),
     "ram:", "memory.ram.length must be at least 1, not -4", None),
    ("zero region length", "mps2_an385", _sub(r"length: 0x400000\}   #", "length: 0}   #"),
     "code:", "memory.code.length must be at least 1, not 0", None),
    ("overlapping regions", "mps2_an385",
     _sub(r"name: psram, origin: 0x21000000", "name: psram, origin: 0x20100000"),
     "name: psram", "memory: region psram (0x20100000..0x21100000) overlaps region ram "
     "(0x20000000..0x20400000)", "each address belongs to one region"),
    ("two regions of one name", "mps2_an385", _sub(r"name: blockram", "name: psram"),
     "name: psram, origin: 0x21", "memory: two regions are called 'psram'",
     "give each region its own name"),
    ("unknown region kind", "mps2_an385", _sub(r"kind: ram, rank: 1", "kind: sram, rank: 1"),
     "name: psram", 'memory.regions[1].kind "sram" is not one of code, ram, flash', None),
    ("name not snake_case", "host", _sub("^name: host", "name: My-Host"), "name:",
     'name "My-Host" must be lower snake_case, for example my_board', None),
    ("unknown platform", "host", _sub("^platform: posix", "platform: freertos"), "platform:",
     "unknown platform 'freertos'", "known platforms: cmsis, kleidiai, metal, posix, zephyr"),
    ("offload.kind not snake_case", "host", lambda t: t + OFFLOAD.replace("metal", "Metal"),
     "kind:", 'offload.kind "Metal" must be lower snake_case, for example metal', None),
    ("offload of an unknown op", "host", lambda t: t + OFFLOAD.replace("gemm", "gemmm"),
     "ops:", "offload.ops: unknown op 'gemmm'",
     "ops: gemm, matmul, add, mul, sub, div, maximum, minimum, relu, sigmoid, tanh, softmax, "
     "reshape, flatten, "
     "transpose, conv2d, depthwise_conv2d, maxpool2d, avgpool2d, fully_connected, clip, "
     "relu6, pad, mean, global_average_pool, concat, sqrt, exp, log, neg, abs, erf, gelu, "
     "pow, clip_bounds, reduce_max, reduce_min, reduce_sum, reduce_prod, gather, layer_norm, "
     "inv_std_dev, resize, quantize, dequantize, leaky_relu, hard_swish, log_softmax, "
     "resize_nearest, cast, signal_window, signal_fft_shift, "
     "signal_fft_scale, signal_rfft, signal_energy, signal_filter_bank, "
     "signal_filter_bank_sqrt, signal_noise_estimate, signal_spectral_subtraction, "
     "signal_pcan, signal_filter_bank_log, svdf, lstm, resize_bilinear, strided_slice, "
     "transpose_conv2d, conv2d_add, depthwise_pointwise"),
    ("a duplicate key", "host", lambda t: t + "cpu: x86\n", "cpu: x86",
     "duplicate key 'cpu' (first defined at line 5)", "each key may appear once in a mapping"),
    ("not YAML", "host", _sub("^cpu: native", "cpu: [native"), "toolchain:",
     "invalid YAML: did not find expected ',' or ']'",
     "check indentation, quoting and brackets"),
    ("empty", "host", lambda t: "", None, "the board file is empty",
     "a board needs name, description, platform, cpu, toolchain and run"),
    ("only comments", "host", lambda t: "# a board\n", None, "the board file is empty",
     "a board needs name, description, platform, cpu, toolchain and run"),
    ("a list", "host", lambda t: "- " + t.replace("\n", "\n  ").rstrip() + "\n", None,
     "the board file must be a mapping, not a list", None),
]


def _line_of(text: str, marker: str | None) -> int:
    if marker is None:
        return 1
    found = [i for i, line in enumerate(text.splitlines(), 1) if marker in line]
    assert len(found) == 1, f"{marker!r} is on lines {found}"
    return found[0]


@pytest.fixture(autouse=True)
def _no_board_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TVMDEV_BOARD_PATH", raising=False)


def _expect_error(r: Result, *lines: str) -> None:
    assert r.code == 1, r
    assert "Traceback" not in r.err
    assert r.out == ""
    assert r.err.splitlines() == list(lines)


@pytest.mark.parametrize("source", sorted({c[1] for c in CASES}))
def test_the_unedited_copies_load(tmp_path: Path, source: str) -> None:
    """The mistakes below are the only thing wrong with their files."""
    path = tmp_path / f"{source}.yaml"
    path.write_text((REPO / "boards" / f"{source}.yaml").read_text())
    assert load_board(path).name == source


@pytest.mark.parametrize(("source", "edit", "marker", "message", "hint"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_board_mistake_is_one_line(
        cli: Callable[..., Result], tmp_path: Path, source: str, edit: Callable[[str], str],
        marker: str | None, message: str, hint: str | None) -> None:
    original = (REPO / "boards" / f"{source}.yaml").read_text()
    text = edit(original)
    assert text != original
    board = tmp_path / "my_board.yaml"
    board.write_text(text)
    build = tmp_path / "build"
    r = cli("run", MLP, "--board", str(board), "--build-dir", str(build))
    _expect_error(r, f"tvmdev: {board}:{_line_of(text, marker)}: {message}",
                  *([f"  hint: {hint}"] if hint else []))
    assert not build.exists()


def test_a_missing_board_file(cli: Callable[..., Result], tmp_path: Path) -> None:
    board, build = tmp_path / "nope.yaml", tmp_path / "build"
    r = cli("run", MLP, "--board", str(board), "--build-dir", str(build))
    _expect_error(r, f"tvmdev: {board}: no such board file",
                  "  hint: --board takes a board name (tvmdev list boards) or a board file's "
                  "path")
    assert not build.exists()


def test_an_unknown_board_name(cli: Callable[..., Result], tmp_path: Path) -> None:
    r = cli("run", MLP, "--board", "evk", "--build-dir", str(tmp_path / "build"))
    _expect_error(r, "tvmdev: unknown board 'evk'",
                  "  hint: known boards: apple_m5_max, host, linux_aarch64, mps2_an385, "
                  "mps2_an386, mps2_an500, mps3_an547, native_sim_64, qemu_cortex_m3")
    assert not (tmp_path / "build").exists()


# --- TVMDEV_BOARD_PATH ---------------------------------------------------------------

def _folder(tmp_path: Path) -> Path:
    """A board folder: ``evk`` (a copy of host) and ``host``, which hides the built-in."""
    folder = tmp_path / "my_boards"
    folder.mkdir()
    host = (REPO / "boards/host.yaml").read_text()
    (folder / "evk.yaml").write_text(host.replace("name: host", "name: evk")
                                     .replace("description: this machine;", "description: evk;"))
    (folder / "host.yaml").write_text(host.replace("description: this machine;",
                                                   "description: my host;"))
    return folder


def test_list_boards_says_where_each_came_from(cli: Callable[..., Result], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _folder(tmp_path)
    monkeypatch.setenv("TVMDEV_BOARD_PATH", str(folder))
    r = cli("list", "boards")
    assert r.code == 0, r.err
    lines = {line.split()[0]: line for line in r.out.splitlines()}
    assert list(lines) == sorted(lines)
    assert lines["evk"].endswith(f"evk; devices run as the POSIX host simulation "
                                 f"[from {folder / 'evk.yaml'}]")
    assert lines["host"].endswith(f"my host; devices run as the POSIX host simulation "
                                  f"[from {folder / 'host.yaml'}]")
    assert "[from" not in lines["mps2_an385"]
    r = cli("list", "boards", "--json")
    origins = {b["name"]: (b["origin"], b["path"]) for b in json.loads(r.out)}
    assert origins["host"] == (str(folder), str(folder / "host.yaml"))
    assert origins["mps2_an385"] == ("built-in", str(REPO / "boards/mps2_an385.yaml"))


def test_a_folder_board_runs_by_name(cli: Callable[..., Result], tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TVMDEV_BOARD_PATH", str(_folder(tmp_path)))
    r = cli("run", MLP, "--board", "evk", "--build-dir", str(tmp_path / "build"))
    assert r.code == 0, r.out + r.err
    assert r.out.splitlines()[0] == "model mlp on evk (eager schedule)"
    assert r.out.splitlines()[-1] == "PASS"


def test_a_broken_folder_board_is_an_error(cli: Callable[..., Result], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Not skipped: a broken host.yaml would otherwise silently give the built-in host."""
    folder = _folder(tmp_path)
    broken = folder / "broken.yaml"
    broken.write_text("- name: broken\n")
    monkeypatch.setenv("TVMDEV_BOARD_PATH", str(folder))
    line = f"tvmdev: {broken}:1: the board file must be a mapping, not a list"
    _expect_error(cli("list", "boards"), line)
    _expect_error(cli("run", MLP, "--build-dir", str(tmp_path / "build")), line)
    assert not (tmp_path / "build").exists()


def test_two_boards_of_one_name_in_a_folder(cli: Callable[..., Result], tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _folder(tmp_path)
    (folder / "evk2.yaml").write_text((folder / "evk.yaml").read_text())
    monkeypatch.setenv("TVMDEV_BOARD_PATH", str(folder))
    _expect_error(cli("list", "boards"),
                  f"tvmdev: {folder / 'evk2.yaml'}:2: board 'evk' is also defined in "
                  f"{folder / 'evk.yaml'}",
                  "  hint: each board file of a folder needs its own name")


def test_board_path_names_a_missing_folder(cli: Callable[..., Result], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TVMDEV_BOARD_PATH", str(tmp_path / "nope"))
    _expect_error(cli("list", "boards"),
                  f"tvmdev: {tmp_path / 'nope'}: TVMDEV_BOARD_PATH names a folder that does "
                  "not exist")
    board = tmp_path / "board.yaml"
    board.write_text("")
    monkeypatch.setenv("TVMDEV_BOARD_PATH", str(board))
    _expect_error(cli("list", "boards"),
                  f"tvmdev: {board}: TVMDEV_BOARD_PATH names a file, not a folder")
