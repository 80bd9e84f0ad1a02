"""Hostile input (issue 12). Every mistake is ONE line, ``tvmdev: file:line: what is
wrong`` (plus an optional ``  hint:`` line), exit 1, no traceback, no warning, and nothing
written. The cases come in the issue's classes:

1. wrong types and odd data (unhashable names, huge integers, bad random ranges, odd
   .npy files, malformed plans and manifests, K&R or Latin-1 C, deep YAML);
2. hangs (an alias bomb, a FIFO, /dev/zero, a folder, a huge file);
3. written before refusing (every check runs before the build folder is made; a broken
   board file does not break commands that need no board; strings where lists belong);
4. wrong verdicts (NaN and infinities, warnings, the simulator's device limit, check's
   fake libc and functions defined twice);
5. threads (the first failure of any thread fails the run);
6. the sanitizer lane (--cflags / TVMDEV_CFLAGS).

The module runs with warnings as errors, and tells tvmdev it runs under ``python -W
error`` (which its CLI honours instead of silencing warnings): a numpy warning anywhere
is a failure here.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, Result, need_tool

from tvmdev.errors import TvmdevError, shown
from tvmdev.load.platform import load_platform
from tvmdev.model.ops import OPS
from tvmdev.run.compare import RunResult

pytestmark = pytest.mark.filterwarnings("error")

KNOWN_OPS = "known ops: " + ", ".join(OPS)
NPY_HINT = "write it with numpy.save(path, array)"
INT_TOO_LARGE = "is too large (tvmdev reads integers of at most 64 bits)"

# Line 7 is the operator, line 9 the constant.
MODEL = """\
name: m
inputs:
  x: {shape: [1, 4], dtype: float32}
outputs:
  y: {shape: [1, 4], dtype: float32}
operators:
  - {name: a, op: add, inputs: [x, c], outputs: [y]}
constants:
  c: {shape: [1, 4], dtype: float32, values: [1, 2, 3, 4]}
"""
VALUES = "values: [1, 2, 3, 4]"
BOARD = """\
name: b
description: a board
platform: posix
cpu: native
toolchain: {cc: gcc, cflags: [-O2]}
run: {method: native}
"""


def big(digits: int) -> str:
    return "1" + "0" * (digits - 1)


def quoted(text: str) -> str:
    """How a message quotes a long piece of input."""
    return shown(text)


def listing(root: Path) -> dict[str, bytes | str | tuple[int, int, int]]:
    """Everything under ``root``: files with their bytes (one over 1 MiB, the tests' sparse
    300 MiB file: its size, mtime and inode, which any write changes), other entries by
    kind."""
    out: dict[str, bytes | str | tuple[int, int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            out[os.path.relpath(os.path.join(dirpath, name), root)] = "folder"
        for name in filenames:
            path = Path(dirpath, name)
            rel = str(path.relative_to(root))
            if not path.is_file() or path.is_symlink():
                out[rel] = "special"
                continue
            st = path.stat()
            out[rel] = (path.read_bytes() if st.st_size <= 1 << 20
                        else (st.st_size, st.st_mtime_ns, st.st_ino))
    return out


Refuse = Callable[..., Result]


@pytest.fixture(autouse=True)
def warnings_are_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    """As ``python -W error``: tvmdev's CLI then leaves the warning filters alone, and
    this module's filter turns any warning into a failure."""
    monkeypatch.setattr(sys, "warnoptions", ["error"])


@pytest.fixture
def refuse(cli: Callable[..., Result]) -> Refuse:
    """Run tvmdev in ``tmp``; assert it refuses with exactly ``message`` (and ``hint``),
    exit 1, and that nothing under ``tmp`` changed."""

    def run(tmp: Path, *args: str, message: str, hint: str | None = None) -> Result:
        before = listing(tmp)
        r = cli(*args, cwd=tmp)
        want = [f"tvmdev: {message}", *([f"  hint: {hint}"] if hint else [])]
        assert (r.code, r.err.splitlines()) == (1, want), r.out + r.err
        assert listing(tmp) == before
        return r
    return run


def write(tmp: Path, files: dict[str, str | bytes | np.ndarray]) -> Path:
    for rel, content in files.items():
        path = tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, np.ndarray):
            np.save(path, content)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return tmp


def npy_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def huge_header() -> bytes:
    """A .npy header declaring 10**10 float32 values."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "<f4", "fortran_order": False, "shape": (100_000, 100_000)})
    return buf.getvalue()


# --- 1. wrong types and odd data --------------------------------------------------------

MODEL_CASES = [
    ("op list", ("op: add", "op: [add]"),
     "m.yaml:7: operator 'a': unknown op ['add']", KNOWN_OPS),
    ("op mapping", ("op: add", "op: {add: 1}"),
     "m.yaml:7: operator 'a': unknown op {'add': 1}", KNOWN_OPS),
    ("device list", ("outputs: [y]}", "outputs: [y], device: [d]}"),
     "m.yaml:7: operator 'a' runs on unknown device ['d']", "declared devices: none"),
    ("dtype list", ("dtype: float32}", "dtype: [float32]}"),
     "m.yaml:3: unknown dtype ['float32'] for input 'x'",
     "supported dtypes: float32, int8, int32, int16, uint32, uint64, int64"),
    ("kind list", ("name: m", "name: m\ndevices:\n  d: {kind: [w]}"),
     "m.yaml:3: device name must be a string, not ['w']", None),
    ("400-digit dim", ("[1, 4]", f"[1, {big(400)}]"),
     f"m.yaml:3: integer {quoted(big(400))} {INT_TOO_LARGE}", None),
    ("5000-digit dim", ("[1, 4]", f"[1, {big(5000)}]"),
     f"m.yaml:3: integer {quoted(big(5000))} {INT_TOO_LARGE}", None),
    ("400-digit value", (VALUES, f"values: [1, 2, 3, {big(400)}]"),
     f"m.yaml:9: integer {quoted(big(400))} {INT_TOO_LARGE}", None),
    ("400-digit seed", (VALUES, f"random: {{seed: {big(400)}, low: 0, high: 1}}"),
     f"m.yaml:9: integer {quoted(big(400))} {INT_TOO_LARGE}", None),
    ("400-digit attr", ("outputs: [y]}", f"outputs: [y], attrs: {{axis: -{big(400)}}}}}"),
     f"m.yaml:7: integer {quoted('-' + big(400))} {INT_TOO_LARGE}", None),
    ("400-digit key", ("name: m", f"name: m\n{big(400)}: 1"),
     f"m.yaml:2: integer {quoted(big(400))} {INT_TOO_LARGE}", None),
    ("tensor too large", ("[1, 4]", "[65536, 65536]"),
     "m.yaml:3: input 'x' has 4294967296 elements; at most 2147483647 are supported "
     "(the kernels index tensors with int32_t)", None),
    ("tensor of 2^155 elements", ("[1, 4]", "[2147483647, 2147483647, 2147483647, "
                                            "2147483647, 2147483647]"),
     "m.yaml:3: input 'x' has at least 2^154 elements; at most 2147483647 are supported "
     "(the kernels index tensors with int32_t)", None),
    ("constant too large", ("[1, 4], dtype: float32, values", "[4096, 8192], dtype: "
                            "float32, values"),
     "m.yaml:9: constant 'c' has 33554432 elements; at most 16777216 are supported "
     "(a constant is compiled into the program)", None),
    ("attr beyond int32", ("op: add, inputs: [x, c], outputs: [y]}",
                           "op: softmax, inputs: [x], outputs: [y], attrs: {axis: 4294967296}}"),
     "m.yaml:7: operator 'a': attribute 'axis' = 4294967296 does not fit int32", None),
    ("attrs not a mapping", ("outputs: [y]}", "outputs: [y], attrs: 0}"),
     "m.yaml:7: attrs of 'a' must be a mapping, not 0", None),
    ("high inf", (VALUES, "random: {seed: 1, low: 0, high: .inf}"),
     "m.yaml:9: random of constant 'c': high must be a finite float32 number, not inf", None),
    ("low nan", (VALUES, "random: {seed: 1, low: .nan, high: 1}"),
     "m.yaml:9: random of constant 'c': low must be a finite float32 number, not nan", None),
    ("low above high", (VALUES, "random: {seed: 1, low: 2, high: 1}"),
     "m.yaml:9: random of constant 'c': low (2) is above high (1)", "low <= high"),
    ("low beyond float32", (VALUES, "random: {seed: 1, low: -1.0e+39, high: 1}"),
     "m.yaml:9: random of constant 'c': low must be a finite float32 number, not -1e+39",
     None),
    ("negative seed", (VALUES, "random: {seed: -1, low: 0, high: 1}"),
     "m.yaml:9: random of constant 'c': seed must be an integer >= 0, not -1", None),
    ("value as text", (VALUES, "values: [1, 2, 3, 1e5]"),
     "m.yaml:9: constant 'c': values[3] is '1e5', not a number",
     "YAML reads 1e5 as text: write 1.0e+5"),
    ("value inf", (VALUES, "values: [1, 2, 3, .inf]"),
     "m.yaml:9: constant 'c' has values that are not finite (NaN or infinity)", None),
    ("value beyond float32", (VALUES, "values: [1, 2, 3, 1.0e+39]"),
     "m.yaml:9: constant 'c' has values beyond float32's range (±3.403e+38)", None),
    ("npy list", (VALUES, "npy: [c.npy]"),
     "m.yaml:9: constant 'c': npy must be a file name, not ['c.npy']", None),
    ("long operator name", ("{name: a, op: add", "{name: " + "a" * 100_000 + ", op: [add]"),
     f"m.yaml:7: operator {quoted('a' * 100_000)}: unknown op ['add']", KNOWN_OPS),
    ("33 devices", ("name: m", "name: m\ndevices:\n" + "".join(
        f"  d{i}: {{kind: woofles}}\n" for i in range(33))),
     "m.yaml:2: the model declares 33 devices; at most 32 are supported", None),
]


@pytest.mark.parametrize("edit,message,hint", [c[1:] for c in MODEL_CASES],
                         ids=[c[0] for c in MODEL_CASES])
@pytest.mark.parametrize("command", ["aot", "run"])
def test_model_mistakes(refuse: Refuse, tmp_path: Path, command: str,
                        edit: tuple[str, str], message: str, hint: str | None) -> None:
    assert edit[0] in MODEL
    write(tmp_path, {"m.yaml": MODEL.replace(edit[0], edit[1], 1)})
    args = ["aot", "m.yaml", "-o", "out"] if command == "aot" else ["run", "m.yaml"]
    refuse(tmp_path, *args, message=message, hint=hint)


F32 = np.zeros((1, 4), np.float32)
NPY_CASES = [
    ("empty", b"", "{what}: the file is empty, not a .npy array", NPY_HINT),
    ("text", b"hello", "{what}: not a .npy file", NPY_HINT),
    ("strings", np.array([["abc"] * 4]),
     "{what} holds strings (dtype '<U3'); tvmdev reads booleans, integers and floats", None),
    ("objects", np.array([[None] * 4], dtype=object),
     "{what} holds Python objects (dtype '|O'); tvmdev reads booleans, integers and floats",
     None),
    ("complex", np.ones((1, 4), np.complex64),
     "{what} holds complex numbers (dtype '<c8'); tvmdev reads booleans, integers and "
     "floats", None),
    ("records", np.zeros((1, 4), dtype=[("a", "f4")]),
     "{what} holds records (dtype '|V4'); tvmdev reads booleans, integers and floats", None),
    ("truncated", npy_bytes(F32)[:-5],
     "{what}: the file is truncated (11 of 16 bytes of data)", NPY_HINT),
    ("huge shape", huge_header() + bytes(16),
     "{what}: the file is truncated (16 of 40000000000 bytes of data)", NPY_HINT),
]


@pytest.mark.parametrize("content,message,hint", [c[1:] for c in NPY_CASES],
                         ids=[c[0] for c in NPY_CASES])
def test_odd_npy_constant(refuse: Refuse, tmp_path: Path, content: bytes | np.ndarray,
                          message: str, hint: str | None) -> None:
    write(tmp_path, {"m.yaml": MODEL.replace(VALUES, "npy: c.npy"), "c.npy": content})
    refuse(tmp_path, "aot", "m.yaml", "-o", "out",
           message="c.npy: " + message.format(what="constant 'c'"), hint=hint)


@pytest.mark.parametrize("content,message,hint", [c[1:] for c in NPY_CASES],
                         ids=[c[0] for c in NPY_CASES])
def test_odd_npy_input(refuse: Refuse, tmp_path: Path, content: bytes | np.ndarray,
                       message: str, hint: str | None) -> None:
    write(tmp_path, {"m.yaml": MODEL, "in/x.npy": content})
    refuse(tmp_path, "run", "m.yaml", "--inputs", "in",
           message="in/x.npy: " + message.format(what="input 'x'"), hint=hint)


@pytest.mark.parametrize("where", ["constant", "input"])
def test_npy_of_wrong_shape_or_range(refuse: Refuse, tmp_path: Path, where: str) -> None:
    if where == "constant":
        write(tmp_path, {"m.yaml": MODEL.replace(VALUES, "npy: c.npy"),
                         "c.npy": np.zeros((4, 1), np.float32)})
        refuse(tmp_path, "aot", "m.yaml", "-o", "out",
               message="m.yaml:9: constant 'c': c.npy has shape [4, 1], declared [1, 4]")
        write(tmp_path, {"c.npy": np.full((1, 4), 1e300)})
        refuse(tmp_path, "aot", "m.yaml", "-o", "out", message="m.yaml:9: constant 'c' has "
               "values beyond float32's range (±3.403e+38)")
    else:
        write(tmp_path, {"m.yaml": MODEL, "in/x.npy": np.zeros((4, 1), np.float32)})
        refuse(tmp_path, "run", "m.yaml", "--inputs", "in",
               message="in/x.npy: input 'x' has shape [4, 1], the model wants [1, 4]")
        write(tmp_path, {"in/x.npy": np.full((1, 4), -1e300)})
        refuse(tmp_path, "run", "m.yaml", "--inputs", "in",
               message="in/x.npy: input 'x' has values beyond float32's range (±3.403e+38)")
        refuse(tmp_path, "run", "m.yaml", "--inputs", "nowhere", message="nowhere: no such "
               "folder", hint="--inputs takes a folder of <input>.npy files")


PLAN_CASES = [
    ("a list", "[]"),
    ("no devices", '{"model": "m", "kernels": []}'),
    ("devices of numbers", '{"model": "m", "devices": [1], "kernels": []}'),
    ("kernels without names", '{"model": "m", "devices": [], "kernels": [{}]}'),
    ("model a number", '{"model": 1, "devices": [], "kernels": []}'),
]


@pytest.mark.parametrize("content", [c[1] for c in PLAN_CASES], ids=[c[0] for c in PLAN_CASES])
def test_plan_json_of_the_wrong_shape(refuse: Refuse, tmp_path: Path, content: str) -> None:
    write(tmp_path, {"md/tvmgen_m_plan.json": content})
    refuse(tmp_path, "inspect", sys.executable, "--model", "md",
           message="md/tvmgen_m_plan.json: not a plan tvmdev aot wrote (it needs model, "
                   "devices with a kind each and kernels with a name each)",
           hint="regenerate it with tvmdev aot")


def test_plan_json_not_json(refuse: Refuse, tmp_path: Path) -> None:
    write(tmp_path, {"md/tvmgen_m_plan.json": "{"})
    refuse(tmp_path, "inspect", sys.executable, "--model", "md",
           message="md/tvmgen_m_plan.json:1: not valid JSON: Expecting property name "
                   "enclosed in double quotes")
    write(tmp_path, {"md/tvmgen_m_plan.json": "[" * 100_000})
    refuse(tmp_path, "inspect", sys.executable, "--model", "md",
           message="md/tvmgen_m_plan.json: not valid JSON: nested too deeply")


def test_save_outputs_below_a_file(refuse: Refuse, tmp_path: Path) -> None:
    write(tmp_path, {"m.yaml": MODEL, "f": "a file"})
    refuse(tmp_path, "run", "m.yaml", "--save-outputs", "f/out",
           message="f/out: 'f' in the output path is a file, not a folder",
           hint="pass a folder with --save-outputs")
    refuse(tmp_path, "run", "m.yaml", "--build-dir", "f/b",
           message="f/b: 'f' in the output path is a file, not a folder",
           hint="pass a folder with --build-dir")


# Documents nested too deeply, and the line tvmdev names. tvmdev counts levels on the
# parser's events; libyaml 0.2.5 and later (in PyYAML 6.0.4's wheels) has a limit of its
# own, 1000 flow levels, which its scanner reaches while it reads ahead, before the parser
# has given tvmdev one event. So a flow document deeper than that may be stopped by either,
# with either's words: what is tvmdev's is the form of the refusal.
DEEP = [
    ("flow 100", "[" * 100 + "]" * 100, 1),
    ("flow 1000", "[" * 1000 + "]" * 1000, 1),
    ("flow 100000", "[" * 100_000 + "]" * 100_000, 1),
    ("block 100000", "- " * 100_000 + "x\n", 1),
    ("indented", "".join("  " * i + "a:\n" for i in range(200)) + "  " * 200 + "b: 1\n", 65),
    ("65 levels", "[" * 65 + "]" * 65, 1),
]
# Those no YAML library stops before tvmdev's count: far below any library's limit, or
# block nesting, which the scanner does not read ahead.
TVMDEV_STOPS = ("flow 100", "block 100000", "indented", "65 levels")


@pytest.mark.parametrize("text,line", [c[1:] for c in DEEP], ids=[c[0] for c in DEEP])
def test_deep_yaml_is_refused_in_one_line(cli: Callable[..., Result], tmp_path: Path,
                                          text: str, line: int) -> None:
    """Whichever stops it, tvmdev's depth check or the YAML library's own limit: exit 1,
    ``tvmdev: m.yaml:LINE: ...`` on one line (and at most a hint), no traceback, nothing
    written."""
    write(tmp_path, {"m.yaml": text})
    before = listing(tmp_path)
    r = cli("aot", "m.yaml", "-o", "out", cwd=tmp_path)
    lines = r.err.splitlines()
    assert (r.code, r.out) == (1, ""), r.err
    assert lines[0].startswith(f"tvmdev: m.yaml:{line}: ") and len(lines[0]) < 200, lines
    assert len(lines) == 1 or (len(lines) == 2 and lines[1].startswith("  hint: ")), lines
    assert "Traceback" not in r.err
    assert listing(tmp_path) == before


@pytest.mark.parametrize("text,line", [c[1:] for c in DEEP if c[0] in TVMDEV_STOPS],
                         ids=[c[0] for c in DEEP if c[0] in TVMDEV_STOPS])
def test_deep_yaml_stopped_by_tvmdev(refuse: Refuse, tmp_path: Path, text: str,
                                     line: int) -> None:
    write(tmp_path, {"m.yaml": text})
    refuse(tmp_path, "aot", "m.yaml", "-o", "out",
           message=f"m.yaml:{line}: nested more than 64 levels deep",
           hint="a model, board or library nests a few levels")


def test_64_levels_are_read(refuse: Refuse, tmp_path: Path) -> None:
    write(tmp_path, {"m.yaml": "[" * 64 + "]" * 64})
    refuse(tmp_path, "aot", "m.yaml", "-o", "out",
           message="m.yaml:1: a model must be a mapping, not " + "[" * 57 + "...")


def test_latin1_yaml(refuse: Refuse, tmp_path: Path) -> None:
    write(tmp_path, {"m.yaml": (MODEL + "# caf\xe9\n").encode("latin-1")})
    refuse(tmp_path, "aot", "m.yaml", "-o", "out", message="m.yaml:10: not UTF-8 text "
           "(byte 0xe9)", hint="save the file as UTF-8")


# --- 2. hangs ----------------------------------------------------------------------------

LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True))


@pytest.mark.parametrize("text", [LAUGHS, LAUGHS + MODEL.replace("op: add", "op: *i")],
                         ids=["bomb", "bomb in an op"])
def test_billion_laughs(refuse: Refuse, tmp_path: Path, text: str) -> None:
    write(tmp_path, {"m.yaml": text})
    start = time.monotonic()
    refuse(tmp_path, "aot", "m.yaml", "-o", "out",
           message="m.yaml:1: aliases expand the document past 100000 nodes",
           hint="write the values out, or alias fewer and smaller ones")
    assert time.monotonic() - start < 10


def test_a_few_aliases_are_fine(cli: Callable[..., Result], tmp_path: Path) -> None:
    text = MODEL.replace("[1, 4], dtype: float32}", "&s [1, 4], dtype: float32}", 1).replace(
        "y: {shape: [1, 4]", "y: {shape: *s")
    write(tmp_path, {"m.yaml": text})
    assert cli("aot", "m.yaml", "-o", "out", cwd=tmp_path).code == 0


def test_shown_is_short_and_fast() -> None:
    value: list[object] = ["x"]
    for _ in range(200):  # 2**200 leaves, shared
        value = [value, value]
    start = time.monotonic()
    text = shown(value)
    assert len(text) == 60 and text.endswith("...") and time.monotonic() - start < 1
    assert shown("a" * 1000) == "'" + "a" * 56 + "..."
    assert shown(10**5000) == "an integer of 16610 bits"
    assert shown({"k": [1, 2.5, None, True]}) == "{'k': [1, 2.5, None, True]}"


@pytest.mark.parametrize("kind", ["fifo", "dev zero", "folder", "huge"])
@pytest.mark.parametrize("role", ["model", "kernels", "board"])
def test_only_regular_files_are_read(refuse: Refuse, tmp_path: Path, kind: str,
                                     role: str) -> None:
    target = tmp_path / "f.yaml"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    elif kind == "huge":
        with target.open("wb") as f:
            f.truncate(300 << 20)  # sparse: costs nothing on disk
    path = "/dev/zero" if kind == "dev zero" else "f.yaml"
    message = {"fifo": "is a FIFO, not a regular file",
               "dev zero": "is a character device, not a regular file",
               "folder": "is a folder, not a regular file",
               "huge": "is 314572800 bytes; tvmdev reads files of at most 256 MiB"}[kind]
    write(tmp_path, {"m.yaml": MODEL})
    args = {"model": ["aot", path, "-o", "out"],
            "kernels": ["aot", "m.yaml", "-o", "out", "--kernels", path],
            "board": ["run", "m.yaml", "--board", path]}[role]
    refuse(tmp_path, *args, message=f"{path}: {message}")


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_special_npy_files(refuse: Refuse, tmp_path: Path, kind: str) -> None:
    write(tmp_path, {"m.yaml": MODEL.replace(VALUES, "npy: c.npy"), "in/.keep": ""})
    for path in (tmp_path / "c.npy", tmp_path / "in/x.npy"):
        os.mkfifo(path) if kind == "fifo" else path.mkdir()
    what = "a FIFO" if kind == "fifo" else "a folder"
    refuse(tmp_path, "aot", "m.yaml", "-o", "out",
           message=f"c.npy: is {what}, not a regular file")
    write(tmp_path, {"m.yaml": MODEL})
    refuse(tmp_path, "run", "m.yaml", "--inputs", "in",
           message=f"in/x.npy: is {what}, not a regular file")


def test_special_program_and_sources(refuse: Refuse, tmp_path: Path,
                                     cli: Callable[..., Result]) -> None:
    os.mkfifo(tmp_path / "fifo")
    refuse(tmp_path, "inspect", "fifo", message="fifo: is a FIFO, not a regular file")
    assert cli("new-device", "woofles", "--platform", "posix", "-o", "nd",
               cwd=tmp_path).code == 0
    src = tmp_path / "nd/src/device/woofles/posix.c"
    src.unlink()
    os.mkfifo(src)
    refuse(tmp_path, "check", "nd",
           message="nd/src/device/woofles/posix.c: is a FIFO, not a regular file")


# --- manifests, kernel libraries, platform files: wrong types, strings for lists ---------

MANIFEST_CASES = [
    ("platforms a string", '{"devices": {"woofles": {"platforms": "posix"}}}',
     "the record of device 'woofles' needs a list of names as 'platforms'"),
    ("platforms nested", '{"devices": {"woofles": {"platforms": [["posix"]]}}}',
     "the record of device 'woofles' needs a list of names as 'platforms'"),
    ("unknown platform", '{"devices": {"woofles": {"platforms": ["p"]}}}',
     "the record of device 'woofles' names unknown platform 'p'"),
    ("ops a string", '{"devices": {"woofles": {"platforms": ["posix"], "ops": "gemm"}}}',
     "the record of device 'woofles' needs a list of names as 'ops'"),
    ("unknown op", '{"devices": {"woofles": {"platforms": ["posix"], "ops": ["m"]}}}',
     "the record of device 'woofles' names unknown op 'm'"),
    ("bad name", '{"devices": {"Bad Name": {"platforms": ["posix"]}}}',
     "the device name 'Bad Name' is not one tvmdev makes"),
    ("devices a list", '{"devices": ["woofles"]}', "'devices' is a JSON array, not an object"),
    ("deep", "[" * 100_000, None),
]
MANIFEST_HINT = ("delete .tvmdev.json to start over (tvmdev then treats files that differ "
                 "from its output as edits: it keeps scaffolds and stops at owned files "
                 "unless --force)")


@pytest.fixture
def device_folder(cli: Callable[..., Result], tmp_path: Path) -> Path:
    assert cli("new-device", "woofles", "--platform", "posix", "-o", "nd",
               cwd=tmp_path).code == 0
    return tmp_path / "nd"


@pytest.mark.parametrize("manifest,message", [c[1:] for c in MANIFEST_CASES],
                         ids=[c[0] for c in MANIFEST_CASES])
def test_manifest_of_the_wrong_shape(refuse: Refuse, tmp_path: Path, device_folder: Path,
                                     manifest: str, message: str | None) -> None:
    (device_folder / ".tvmdev.json").write_text(manifest)
    write(tmp_path, {"m.yaml": MODEL.replace("name: m", "name: m\ndevices:\n  d: {kind: "
                                             "woofles}").replace("outputs: [y]}",
                                                                 "outputs: [y], device: d}")})
    where = "nd/.tvmdev.json: "
    message = ("the manifest is not valid JSON" if message is None else
               f"the manifest is not one tvmdev wrote: {message}")
    for args in (["check", "nd"], ["new-device", "woofles", "--platform", "cmsis", "-o", "nd"],
                 ["run", "m.yaml", "--device-dir", "nd"],
                 ["aot", "m.yaml", "-o", "out", "--device-dir", "nd"],
                 ["list", "kernels", "--device-dir", "nd"]):
        refuse(tmp_path, *args, message=where + message, hint=MANIFEST_HINT)


def test_manifest_files_of_the_wrong_shape(refuse: Refuse, tmp_path: Path,
                                           device_folder: Path) -> None:
    (device_folder / ".tvmdev.json").write_text('{"files": ["a"]}')
    refuse(tmp_path, "new-device", "woofles", "--platform", "cmsis", "-o", "nd",
           message="nd/.tvmdev.json: the manifest is not one tvmdev wrote: 'files' is a JSON "
                   "array, not an object", hint=MANIFEST_HINT)
    (device_folder / ".tvmdev.json").unlink()
    os.mkfifo(device_folder / ".tvmdev.json")
    refuse(tmp_path, "new-device", "woofles", "--platform", "cmsis", "-o", "nd",
           message="nd/.tvmdev.json: is a FIFO, not a regular file")


LIBRARY_CASES = [
    ("op a list", "- op: [relu]\n", "k.yaml:1: unknown op ['relu']", KNOWN_OPS),
    ("alias a list", "- op: relu\n  header: h.h\n  type_alias: {T0: [float32]}\n"
     "  kernels: [{arg_meta: {X: [[T0]]}, kernel_name: k}]\n",
     "k.yaml:4: type alias ['T0'] is used but not defined", "define it under type_alias"),
    ("type_alias a list", "- op: relu\n  header: h.h\n  type_alias: [T0]\n"
     "  kernels: [{arg_meta: null, kernel_name: k}]\n",
     "k.yaml:3: type_alias must be a mapping, not ['T0']", None),
    ("type_alias a string", "- op: relu\n  header: h.h\n  type_alias: {T0: float32}\n"
     "  kernels: [{arg_meta: null, kernel_name: k}]\n",
     "k.yaml:3: type_alias T0 must be a list of dtypes", None),
    ("sources a string", "- op: relu\n  header: h.h\n"
     "  kernels: [{arg_meta: null, kernel_name: k, sources: k.c}]\n",
     "k.yaml:3: sources must be a list of C files", None),
    ("sources of lists", "- op: relu\n  header: h.h\n"
     "  kernels: [{arg_meta: null, kernel_name: k, sources: [[k.c]]}]\n",
     "k.yaml:3: sources of k: ['k.c'] is not a file name", None),
    ("sources zero", "- op: relu\n  header: h.h\n"
     "  kernels: [{arg_meta: null, kernel_name: k, sources: 0}]\n",
     "k.yaml:3: sources must be a list of C files", None),
    ("header a number", "- op: relu\n  header: 3\n",
     "k.yaml:1: entry 'relu' needs a 'header' that declares its kernels", None),
    ("400-digit integer", f"- op: relu\n  header: {big(400)}\n",
     f"k.yaml:2: integer {quoted(big(400))} {INT_TOO_LARGE}", None),
]


@pytest.mark.parametrize("library,message,hint", [c[1:] for c in LIBRARY_CASES],
                         ids=[c[0] for c in LIBRARY_CASES])
@pytest.mark.parametrize("command", ["run", "aot", "list"])
def test_kernel_library_mistakes(refuse: Refuse, tmp_path: Path, command: str, library: str,
                                 message: str, hint: str | None) -> None:
    write(tmp_path, {"m.yaml": MODEL, "k.yaml": library, "k.c": ""})
    args = {"run": ["run", "m.yaml"], "aot": ["aot", "m.yaml", "-o", "out"],
            "list": ["list", "kernels"]}[command]
    refuse(tmp_path, *args, "--kernels", "k.yaml", message=message, hint=hint)


@pytest.mark.parametrize("edit,key", [
    (("include: [fake_include]", "include: fake_include"), "check.include"),
    (("include: [fake_include]", "include: [fake_include]\n  defines: A=1"), "check.defines"),
], ids=["include", "defines"])
def test_platform_file_strings_for_lists(tmp_path: Path, edit: tuple[str, str],
                                         key: str) -> None:
    """platform.yaml is checked by its schema: a string where a list belongs is one line."""
    import shutil

    folder = tmp_path / "posix"
    shutil.copytree(REPO / "platforms/posix", folder)
    text = (folder / "platform.yaml").read_text()
    assert edit[0] in text
    (folder / "platform.yaml").write_text(text.replace(edit[0], edit[1]))
    with pytest.raises(TvmdevError) as exc:
        load_platform(folder)
    assert str(exc.value).endswith(f"{key} must be a list, not a string")


# --- 3. nothing written before refusing --------------------------------------------------

def test_run_checks_every_input_before_the_build_folder(refuse: Refuse, tmp_path: Path,
                                                        device_folder: Path) -> None:
    write(tmp_path, {"m.yaml": MODEL, "bad.yaml": "- op: nope\n"})
    refuse(tmp_path, "run", "m.yaml", "--kernels", "missing.yaml",
           message="missing.yaml: no such file")
    refuse(tmp_path, "run", "m.yaml", "--kernels", "bad.yaml",
           message="bad.yaml:1: unknown op 'nope'", hint=KNOWN_OPS)
    refuse(tmp_path, "run", "m.yaml", "--kernels", ".",
           message=".: is a folder, not a regular file")
    refuse(tmp_path, "run", "m.yaml", "--device-dir", "nowhere",
           message="nowhere: no such folder",
           hint="--device-dir takes a folder made by tvmdev new-device")
    refuse(tmp_path, "run", "m.yaml", "--device-dir", "nd/src",
           message="nd/src: no devices here (no .tvmdev.json from tvmdev new-device)",
           hint="--device-dir takes a folder made by tvmdev new-device")
    refuse(tmp_path, "run", "m.yaml", "--threads", "5",
           message="--threads 5: the host harness runs at most 4 threads")
    refuse(tmp_path, "run", "m.yaml", "--cflags", "'-O2",
           message="--cflags (or TVMDEV_CFLAGS): No closing quotation")
    assert not (tmp_path / "tvmdev-build").exists()


def test_usage_errors_are_refused_by_the_parser(cli: Callable[..., Result],
                                                tmp_path: Path) -> None:
    write(tmp_path, {"m.yaml": MODEL})
    for args in (["--threads", "0"], ["--iterations", "0"], ["--fail", "open:1:0"],
                 ["--fail", "open:1:4294967296"], ["--fail", "open:0:-5"],
                 ["--fail", "reset:1:-5"]):
        r = cli("run", "m.yaml", *args, cwd=tmp_path)
        assert r.code == 2 and "Traceback" not in r.err, args
    assert not (tmp_path / "tvmdev-build").exists()


def test_a_broken_board_breaks_only_commands_that_read_boards(
        cli: Callable[..., Result], refuse: Refuse, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, {"m.yaml": MODEL, "boards/b.yaml": BOARD.replace("cflags: [-O2]",
                                                                     "cflags: -O2")})
    monkeypatch.setenv("TVMDEV_BOARD_PATH", str(tmp_path / "boards"))
    message = f"{tmp_path}/boards/b.yaml:5: toolchain.cflags must be a list, not a string"
    for args in (["list", "platforms"], ["new-device", "w", "--platform", "posix", "-o", "w"]):
        r = cli(*args, cwd=tmp_path)
        assert (r.code, r.err) == (0, ""), (args, r.err)
    refuse(tmp_path, "list", "boards", message=message)
    refuse(tmp_path, "aot", "m.yaml", "-o", "out", message=message)  # plans for host
    refuse(tmp_path, "run", "m.yaml", message=message)


def test_board_strings_for_lists(refuse: Refuse, tmp_path: Path) -> None:
    write(tmp_path, {"m.yaml": MODEL, "b.yaml": BOARD.replace("cflags: [-O2]", "cflags: -O2")})
    refuse(tmp_path, "run", "m.yaml", "--board", "b.yaml",
           message="b.yaml:5: toolchain.cflags must be a list, not a string")
    write(tmp_path, {"b.yaml": BOARD.replace("run: {method: native}",
                                             "run: {method: native, timeout: .nan}")})
    refuse(tmp_path, "run", "m.yaml", "--board", "b.yaml",
           message="b.yaml:6: run.timeout must be a number of seconds, not NaN")
    write(tmp_path, {"b.yaml": BOARD.replace("run: {method: native}",
                                             f"run: {{method: native, timeout: {big(400)}}}")})
    refuse(tmp_path, "run", "m.yaml", "--board", "b.yaml",
           message=f"b.yaml:6: integer {quoted(big(400))} {INT_TOO_LARGE}")
    write(tmp_path, {"b.yaml": BOARD.replace("platform: posix", "platform: [" + "p, " * 100
                                             + "p]")})
    refuse(tmp_path, "run", "m.yaml", "--board", "b.yaml",
           message='b.yaml:3: platform must be a string, not a list')


def test_model_strings_for_lists(refuse: Refuse, tmp_path: Path) -> None:
    write(tmp_path, {"m.yaml": MODEL.replace("inputs: [x, c]", "inputs: x")})
    refuse(tmp_path, "run", "m.yaml",
           message="m.yaml:7: operator 'a': inputs and outputs must be lists")
    write(tmp_path, {"m.yaml": MODEL.replace("shape: [1, 4], dtype: float32, values",
                                             "shape: '1, 4', dtype: float32, values")})
    refuse(tmp_path, "run", "m.yaml",
           message="m.yaml:9: shape of constant 'c' must be a list of integers, not '1, 4'")


# --- 4. verdicts, warnings, the simulator's limit, check ---------------------------------

def _result(got: list[float], ref: list[float]) -> RunResult:
    return RunResult(0, "TVM_DEVICE_OK", {"y": np.array(got, np.float32)},
                     {"y": np.array(ref, np.float32)})


@pytest.mark.parametrize("got,ref,agree", [
    ([np.nan, 1.0], [np.nan, 1.0], True),
    ([np.inf, -np.inf], [np.inf, -np.inf], True),
    ([np.nan], [1.0], False),
    ([1.0], [np.nan], False),
    ([1.0], [np.inf], False),
    ([np.inf], [-np.inf], False),
    ([np.inf], [3.0e38], False),
])
def test_nan_and_infinities_compare_exactly(got: list[float], ref: list[float],
                                            agree: bool) -> None:
    r = _result(got, ref)
    assert (r.mismatches() == []) == agree
    err_abs, err_rel = r.errors("y")
    assert (err_abs, err_rel) == ((0.0, 0.0) if agree else (np.inf, np.inf))


BEYOND_FLOAT32 = "m.yaml:9: constant 'c' has values beyond float32's range (±3.403e+38)"


def test_warnings_never_reach_stderr_in_process(refuse: Refuse, tmp_path: Path) -> None:
    """The in-process CLI under this module's -W error filters: a numpy overflow warning
    would be an exception; the refusal is the one line (the slow lane runs a real
    ``python -W error``)."""
    write(tmp_path, {"m.yaml": MODEL.replace(VALUES, "npy: c.npy"),
                     "c.npy": np.full((1, 4), 1e300)})
    refuse(tmp_path, "aot", "m.yaml", "-o", "out", message=BEYOND_FLOAT32)


@pytest.mark.slow
def test_warnings_never_reach_stderr(tmp_path: Path) -> None:
    """Under python -W error a numpy warning would be a traceback: there is none."""
    write(tmp_path, {"m.yaml": MODEL.replace(VALUES, "npy: c.npy"),
                     "c.npy": np.full((1, 4), 1e300)})
    proc = subprocess.run([sys.executable, "-W", "error", "-m", "tvmdev", "aot", "m.yaml",
                           "-o", "out"], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert (proc.returncode, proc.stderr) == (1, f"tvmdev: {BEYOND_FLOAT32}\n")


def _devices_model(n: int) -> str:
    devices = "".join(f"  d{i}: {{kind: woofles}}\n" for i in range(n))
    ops = "".join(f"  - {{name: o{i}, op: relu, inputs: [{'x' if i == 0 else f't{i - 1}'}], "
                  f"outputs: [{'y' if i == n - 1 else f't{i}'}], device: d{i}}}\n"
                  for i in range(n))
    return (f"name: m\ndevices:\n{devices}inputs:\n  x: {{shape: [1, 4], dtype: float32}}\n"
            f"outputs:\n  y: {{shape: [1, 4], dtype: float32}}\noperators:\n{ops}")


@pytest.mark.slow
def test_32_devices_run_on_the_simulator(cli: Callable[..., Result], tmp_path: Path) -> None:
    need_tool("gcc")
    write(tmp_path, {"m.yaml": _devices_model(32)})
    r = cli("run", "m.yaml", cwd=tmp_path)
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    assert r.out.count("operators 1: balanced") == 32


def test_33_devices_are_refused(refuse: Refuse, tmp_path: Path) -> None:
    write(tmp_path, {"m.yaml": _devices_model(33)})
    for args in (["run", "m.yaml"], ["aot", "m.yaml", "-o", "out"]):
        refuse(tmp_path, *args, message="m.yaml:2: the model declares 33 devices; at most 32 "
                                        "are supported")


@pytest.mark.slow
def test_nan_and_infinite_inputs_pass(cli: Callable[..., Result], tmp_path: Path) -> None:
    """C and the reference agree on NaN and infinities: PASS, and 0 in the table."""
    need_tool("gcc")
    model = MODEL.replace("op: add, inputs: [x, c], outputs: [y]}",
                          "op: relu, inputs: [x], outputs: [h]}\n"
                          "  - {name: b, op: add, inputs: [h, c], outputs: [s]}\n"
                          "  - {name: p, op: softmax, inputs: [s], outputs: [y]}")
    write(tmp_path, {"m.yaml": model,
                     "in/x.npy": np.array([[np.nan, np.inf, -np.inf, 1]], np.float32)})
    r = cli("run", "m.yaml", "--inputs", "in", "--save-outputs", "saved", cwd=tmp_path)
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    assert "max abs err 0, max rel err 0: within tolerance" in r.out
    assert np.isnan(np.load(tmp_path / "saved/y.npy")).all()


def test_check_reads_stdio_and_reports_functions_defined_twice(
        cli: Callable[..., Result], device_folder: Path) -> None:
    src = device_folder / "src/device/woofles/posix.c"
    text = src.read_text()
    includes = "".join(f"#include <{h}>\n" for h in (
        "stdio.h", "stdlib.h", "stdarg.h", "limits.h", "assert.h", "inttypes.h", "float.h",
        "ctype.h", "string.h", "math.h", "unistd.h", "fcntl.h"))
    uses = ("\nstatic void logf_(const char *f, ...)\n{\n    va_list ap;\n    va_start(ap, f);\n"
            "    (void)vfprintf(stderr, f, ap);\n    va_end(ap);\n    (void)printf(\"%\" PRIu32 "
            "\" %d\\n\", (uint32_t)INT_MAX, isnan(NAN));\n    assert(f != NULL);\n"
            "    free(malloc(4));\n}\n")
    src.write_text(text.replace("#include <errno.h>\n", "#include <errno.h>\n" + includes)
                   + uses + "/* caf\xe9 */\n", encoding="latin-1")
    r = cli("check", str(device_folder))
    assert (r.code, r.out.splitlines()[-1]) == (
        0, "ok: every device and kernel function matches the generated API"), r.out + r.err
    init = text[text.index("int32_t TVMDeviceWooflesInit("):]
    init = init[:init.index("\n}\n") + 3]
    src.write_text(text + "\n" + init.replace("TVMDeviceWooflesInit", "other_name") + init)
    r = cli("check", str(device_folder))
    second = len((text + "\n" + init).splitlines()) + 1
    first = text[:text.index("int32_t TVMDeviceWooflesInit(")].count("\n") + 1
    assert r.code == 1 and r.out.splitlines() == [
        f"{device_folder}/src/device/woofles/posix.c:{second}: TVMDeviceWooflesInit is "
        f"defined twice (first at line {first})", "1 problem"], r.out


def test_check_reports_k_and_r_definitions(cli: Callable[..., Result],
                                           device_folder: Path) -> None:
    src = device_folder / "src/device/woofles/posix.c"
    text = src.read_text()
    head = "int32_t TVMDeviceWooflesInit(tvm_device_woofles_t *tvm_dev, void *ctx)\n{"
    assert head in text
    src.write_text(text.replace(head, "int32_t TVMDeviceWooflesInit(tvm_dev, ctx)\n"
                                      "tvm_device_woofles_t *tvm_dev;\nvoid *ctx;\n{"))
    r = cli("check", str(device_folder))
    line = text[:text.index(head)].count("\n") + 1
    assert r.code == 1 and r.out.splitlines() == [
        f"{device_folder}/src/device/woofles/posix.c:{line}: TVMDeviceWooflesInit is defined "
        "K&R style (a list of names); define it with a prototype", "1 problem"], r.out


# --- 5. threads ----------------------------------------------------------------------------

@pytest.mark.slow
def test_a_fault_in_any_thread_fails_the_run(cli: Callable[..., Result],
                                             tmp_path: Path) -> None:
    """--fail deactivate:1:-5 hits whichever thread deactivates first; the run must fail
    every time (it printed PASS in 5 of 8 runs when only the last thread was reported)."""
    need_tool("gcc")
    model = str(REPO / "examples/mlp/mlp.yaml")
    threads = set()
    for _ in range(20):
        r = cli("run", model, "--fail", "deactivate:1:-5", "--threads", "2", "--iterations",
                "3", "--build-dir", str(tmp_path / "b"))
        last = r.out.rstrip().splitlines()[-1]
        assert r.code == 1 and last.startswith(
            "FAIL: the model returned TVM_DEVICE_ERR_IO (-5) (first in thread "), r.out
        threads.add(last.split("thread ")[1])
    assert threads <= {"0 of 2)", "1 of 2)"}
    r = cli("run", model, "--threads", "2", "--iterations", "3", "--build-dir",
            str(tmp_path / "b"))
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out


# --- 6. the sanitizer lane ---------------------------------------------------------------

SANITIZE = "-fsanitize=address,undefined -fno-omit-frame-pointer"


@pytest.fixture
def sanitizer_env(monkeypatch: pytest.MonkeyPatch) -> None:
    need_tool("gcc")
    monkeypatch.setenv("ASAN_OPTIONS", "detect_leaks=1")
    monkeypatch.setenv("UBSAN_OPTIONS", "halt_on_error=1")


@pytest.mark.slow
@pytest.mark.parametrize("example", ["mlp", "cnn", "decoder"])
def test_examples_under_sanitizers(cli: Callable[..., Result], tmp_path: Path,
                                   sanitizer_env: None, example: str) -> None:
    r = cli("run", str(REPO / f"examples/{example}/{example}.yaml"), "--cflags", SANITIZE,
            "--build-dir", str(tmp_path / "b"), "--threads", "2", "--iterations", "2")
    assert r.code == 0 and r.out.rstrip().endswith("PASS"), r.out + r.err
    assert "wrote to stderr" not in r.out and "Sanitizer" not in r.out
    assert "-fsanitize=address,undefined" in (tmp_path / "b/build.cmd").read_text()


@pytest.mark.slow
def test_the_sanitizer_lane_catches_a_bad_kernel(cli: Callable[..., Result], tmp_path: Path,
                                                 sanitizer_env: None,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The lane is not vacuous: a kernel writing out of bounds stops the run."""
    write(tmp_path, {
        "k.yaml": "- op: relu\n  header: bad.h\n  kernels:\n    - arg_meta: null\n"
                  "      kernel_name: bad_relu\n      sources: [bad.c]\n",
        "bad.h": "#include \"tvmk_portable.h\"\nint32_t bad_relu(const float *X, float *Y, "
                 "const struct tvmk_unary_params *params, void *resource_handle);\n",
        "bad.c": "#include \"bad.h\"\nstatic volatile float scratch[4];\n"
                 "int32_t bad_relu(const float *X, float *Y, const struct tvmk_unary_params "
                 "*params, void *resource_handle)\n{\n    int32_t i;\n"
                 "    (void)resource_handle;\n    for (i = 0; i < params->count; i++) {\n"
                 "        Y[i] = X[i] > 0.0f ? X[i] : 0.0f;\n    }\n"
                 "    scratch[params->count] = 1.0f;\n    return 0;\n}\n"})
    monkeypatch.setenv("TVMDEV_CFLAGS", SANITIZE)
    r = cli("run", str(REPO / "examples/mlp/mlp.yaml"), "--kernels", "k.yaml",
            "--build-dir", str(tmp_path / "b"), cwd=tmp_path)
    lines = r.err.splitlines()
    assert r.code == 1 and len(lines) == 2, r.out + r.err
    assert "bad.c:" in lines[0] and "out of bounds" in lines[0]
    assert lines[1] == f"  hint: what it wrote to stderr is in {tmp_path}/b/run/stderr.txt"


def _depth(text: str) -> int:
    import yaml
    depth = deepest = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            deepest = max(deepest, depth)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return deepest


def test_the_cheap_nesting_bound_never_undercounts() -> None:
    """The bound that lets ordinary files skip the event scan is an upper bound (or gives
    up): brackets in quotes, comments and plain text, and flows over several lines."""
    import random

    from tvmdev.load.yamlio import _BLOCK_START, _flow_bound

    fixed = ['a: "]]" [[[x]]]\n', "a: [\n [[x]]\n]\n", "- x]\n- [[y]]\n",
             "a: x # ]]]\nb: [[[1]]]\n", "a: 'it''s ]' \nb: [[[[1]]]]\n",
             "a: |\n  ]]] [\nb: [[1]]\n", "a: [x, 'y]', [[z]]]\n", "- - - [[a]]\n"]
    rng = random.Random(12)

    def flow(depth: int) -> str:
        if depth == 0 or rng.random() < 0.3:
            return rng.choice(["'a]b'", '"[c"']) if rng.random() < 0.05 else "x"
        items = [flow(depth - 1) for _ in range(rng.randint(1, 3))]
        sep = rng.choice([", ", ",\n  "])
        return "[" + sep.join(items) + "]"

    docs = fixed + [f"k: {flow(rng.randint(0, 8))}\n" for _ in range(300)]
    vouched = 0
    for text in docs:
        bound = _flow_bound(text)
        column = max(len(m) for m in _BLOCK_START.findall(text))
        assert bound is None or 2 * (column + 1) + bound >= _depth(text), text
        vouched += bound is not None and _depth(text) > 2
    assert vouched > 20  # the bound is used, not only given up on
