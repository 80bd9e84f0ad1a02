"""The writer: --force and scaffolds, .orig backups, one merged manifest, manifests of the
wrong shape, names too long for the file system, and recovery from an interrupted write
(simulated in-process here; tests/test_write_interrupted.py kills real runs)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, Result, tree

from tvmdev.write import journal

MLP = REPO / "examples/mlp/mlp.yaml"
POSIX = ["new-device", "woofles", "--platform", "posix", "-o", "out"]
HEADER = "include/tvm/device/woofles/posix.h"
SCAFFOLD = "src/device/woofles/posix.c"


def _edit(path: Path, text: str) -> str:
    path.write_text(path.read_text() + text)
    return path.read_text()


# --- --force and scaffolds, .orig backups ----------------------------------------------

def test_force_never_touches_an_edited_scaffold(cli: Callable[..., Result],
                                                tmp_path: Path) -> None:
    assert cli(*POSIX, cwd=tmp_path).code == 0
    out = tmp_path / "out"
    mine = _edit(out / SCAFFOLD, "/* my accelerator code */\n")
    for _ in range(2):
        r = cli(*POSIX, "--force", cwd=tmp_path)
        assert r.code == 0
        assert f"kept (yours)  {SCAFFOLD}" in r.out
        assert (out / SCAFFOLD).read_text() == mine
    assert not list(out.rglob("*.orig*"))


@pytest.mark.slow
def test_force_never_overwrites_a_backup(cli: Callable[..., Result], tmp_path: Path) -> None:
    assert cli(*POSIX, cwd=tmp_path).code == 0
    hdr = tmp_path / "out" / HEADER
    generated = hdr.read_text()
    first = _edit(hdr, "/* first edit */\n")
    r = cli(*POSIX, "--force", cwd=tmp_path)
    assert r.code == 0
    assert f"overwrite (yours saved as .orig)  {HEADER}" in r.out
    second = _edit(hdr, "/* second edit */\n")
    r = cli(*POSIX, "--force", cwd=tmp_path)
    assert f"overwrite (yours saved as .orig.1)  {HEADER}" in r.out
    _edit(hdr, "/* third edit */\n")
    r = cli(*POSIX, "--force", cwd=tmp_path)
    assert f"overwrite (yours saved as .orig.2)  {HEADER}" in r.out
    assert hdr.read_text() == generated
    assert (hdr.parent / "posix.h.orig").read_text() == first
    assert (hdr.parent / "posix.h.orig.1").read_text() == second
    assert "/* third edit */" in (hdr.parent / "posix.h.orig.2").read_text()
    # Backups are the user's: not recorded, never rewritten by an ordinary run.
    files = json.loads((tmp_path / "out/.tvmdev.json").read_text())["files"]
    assert not [p for p in files if ".orig" in p]


# --- one manifest, merged ---------------------------------------------------------------

@pytest.mark.slow
def test_aot_into_a_device_folder_keeps_its_devices(cli: Callable[..., Result],
                                                    tmp_path: Path) -> None:
    assert cli(*POSIX, cwd=tmp_path).code == 0
    assert cli("aot", str(MLP), "-o", "out", cwd=tmp_path).code == 0
    manifest = json.loads((tmp_path / "out/.tvmdev.json").read_text())
    assert sorted(manifest["devices"]) == ["woofles"]
    assert manifest["models"] == {"mlp": {"command": "tvmdev aot mlp.yaml"}}
    r = cli("check", "out", cwd=tmp_path)
    assert r.code == 0, r.out + r.err
    assert cli("new-device", "other", "--platform", "cmsis", "-o", "out",
               cwd=tmp_path).code == 0
    cmake = (tmp_path / "out/CMakeLists.txt").read_text()
    assert "src/device/woofles/posix.c" in cmake and "src/device/other/cmsis.c" in cmake
    manifest = json.loads((tmp_path / "out/.tvmdev.json").read_text())
    assert sorted(manifest["devices"]) == ["other", "woofles"]
    assert sorted(manifest["models"]) == ["mlp"]
    assert "tvmgen_mlp.c" in manifest["files"]


def test_two_models_in_one_folder_keep_both_records(cli: Callable[..., Result],
                                                    tmp_path: Path) -> None:
    cnn = REPO / "examples/cnn/cnn.yaml"
    assert cli("aot", str(MLP), "-o", "out", cwd=tmp_path).code == 0
    assert cli("aot", str(cnn), "-o", "out", "--schedule", "lazy", cwd=tmp_path).code == 0
    manifest = json.loads((tmp_path / "out/.tvmdev.json").read_text())
    assert manifest["models"] == {"cnn": {"command": "tvmdev aot cnn.yaml --schedule lazy"},
                                  "mlp": {"command": "tvmdev aot mlp.yaml"}}
    for name in ("tvmgen_mlp.c", "tvmgen_cnn.c", "kernels/portable/softmax.c",
                 "kernels/portable/conv2d.c"):
        assert name in manifest["files"]
    # Regenerating either touches nothing: the other's files and records stay.
    before = tree(tmp_path / "out")
    assert cli("aot", str(MLP), "-o", "out", cwd=tmp_path).code == 0
    assert tree(tmp_path / "out") == before


def test_a_manifest_of_the_old_aot_is_restructured(cli: Callable[..., Result],
                                                   tmp_path: Path) -> None:
    assert cli("aot", str(MLP), "-o", "out", cwd=tmp_path).code == 0
    path = tmp_path / "out/.tvmdev.json"
    manifest = json.loads(path.read_text())
    old = {k: v for k, v in manifest.items() if k not in ("models", "version")}
    path.write_text(json.dumps({**old, "model": "mlp", "command": "tvmdev aot mlp.yaml"}))
    assert cli("aot", str(MLP), "-o", "out", cwd=tmp_path).code == 0
    assert json.loads(path.read_text()) == manifest


# --- manifests of the wrong shape -------------------------------------------------------

DIGEST = "0" * 64
BAD_MANIFESTS = {
    "a list": ("[]", "it holds a JSON array, not an object"),
    "files a list": ('{"files": []}', "'files' is a JSON array, not an object"),
    "no sha256": ('{"files": {"CMakeLists.txt": {"kind": "owned"}}}',
                  "the record of file 'CMakeLists.txt' has no sha256"),
    "record a string": ('{"files": {"Kconfig": "owned"}}',
                        "the record of file 'Kconfig' is not an object"),
    "bad kind": ('{"files": {"Kconfig": {"kind": "mine", "sha256": "' + DIGEST + '"}}}',
                 "the record of file 'Kconfig' has no kind (owned or scaffold)"),
    "devices a list": ('{"devices": ["woofles"]}', "'devices' is a JSON array, not an object"),
    "device options a list": ('{"devices": {"woofles": {"platforms": ["posix"], '
                              '"options": []}}}',
                              "the record of device 'woofles' needs an object as 'options'"),
    "models a string": ('{"models": "mlp"}', "'models' is a JSON string, not an object"),
}


@pytest.mark.parametrize("command", ["new-device", "aot"])
@pytest.mark.parametrize("case", sorted(BAD_MANIFESTS))
def test_a_manifest_of_the_wrong_shape_is_one_line(case: str, command: str,
                                                   cli: Callable[..., Result],
                                                   tmp_path: Path) -> None:
    text, problem = BAD_MANIFESTS[case]
    (tmp_path / "out").mkdir()
    (tmp_path / "out/.tvmdev.json").write_text(text)
    before = tree(tmp_path)
    args = POSIX if command == "new-device" else ["aot", str(MLP), "-o", "out"]
    r = cli(*args, cwd=tmp_path)
    assert r.code == 1
    assert r.err.splitlines() == [
        f"tvmdev: out/.tvmdev.json: the manifest is not one tvmdev wrote: {problem}",
        "  hint: delete .tvmdev.json to start over (tvmdev then treats files that differ "
        "from its output as edits: it keeps scaffolds and stops at owned files unless "
        "--force)"]
    assert tree(tmp_path) == before


@pytest.mark.parametrize("data,problem", [
    (b"\xff\xfe{}", "the manifest is not UTF-8 text"),
    (b'{"files": ', "the manifest is not valid JSON"),
])
def test_a_manifest_that_is_not_json_is_one_line(data: bytes, problem: str,
                                                 cli: Callable[..., Result],
                                                 tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out/.tvmdev.json").write_bytes(data)
    before = tree(tmp_path)
    for args in (POSIX, ["check", "out"]):
        r = cli(*args, cwd=tmp_path)
        assert r.code == 1
        assert r.err.splitlines()[0] == f"tvmdev: out/.tvmdev.json: {problem}"
        assert r.err.splitlines()[1].startswith("  hint: delete .tvmdev.json")
        assert "Traceback" not in r.err
    assert tree(tmp_path) == before


# --- names too long for the file system -------------------------------------------------
# A device or model name is a C identifier of at most 63 characters (C99's significant
# initial characters), refused before any file is made; the output folder is checked
# against the file system's limit.

LONG = "a" * 300


def test_a_device_name_too_long_for_the_file_system(cli: Callable[..., Result],
                                                    tmp_path: Path) -> None:
    assert cli(*POSIX, cwd=tmp_path).code == 0
    before = tree(tmp_path)
    r = cli("new-device", LONG, "--platform", "posix", "-o", "out", cwd=tmp_path)
    assert r.code == 1
    assert r.err.splitlines() == [
        "tvmdev: device name 'aaaaaaaaaaaaaaaaaaaa...' has 300 characters; at most 63",
        "  hint: pick a shorter name"]
    assert tree(tmp_path) == before


def test_a_model_name_too_long_for_the_file_system(cli: Callable[..., Result],
                                                   tmp_path: Path) -> None:
    model = tmp_path / "long.yaml"
    model.write_text(MLP.read_text().replace("name: mlp", f"name: m{LONG}")
                     .replace("npy: w1.npy", "random: {seed: 1, low: -1, high: 1}"))
    r = cli("aot", str(model), "-o", "out", cwd=tmp_path)
    assert r.code == 1
    assert r.err.splitlines()[0] == (
        f"tvmdev: {model}:4: model name 'maaaaaaaaaaaaaaaaaaa...' has 301 characters; at most 63")
    assert not (tmp_path / "out").exists()


def test_an_output_folder_too_long_for_the_file_system(cli: Callable[..., Result],
                                                       tmp_path: Path) -> None:
    r = cli("new-device", "woofles", "--platform", "posix", "-o", f"out/{LONG}", cwd=tmp_path)
    assert r.code == 1
    assert r.err.splitlines()[0] == (
        "tvmdev: out/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...aaaaaaaaaaaaaaaa: the output path "
        "has a name of 300 bytes; the file system allows 255")
    assert list(tmp_path.iterdir()) == []


# --- interrupted writes (in-process: Ctrl-C at each rename) ------------------------------

REGEN = ["new-device", "woofles", "--platform", "posix", "--platform", "zephyr",
         "--ops", "gemm,matmul,relu", "-o", "out", "--force"]


def _setup(cli: Callable[..., Result], root: Path) -> None:
    """A folder with an edited scaffold and an edited owned file (--force saves it)."""
    root.mkdir()
    assert cli(*POSIX, cwd=root).code == 0
    _edit(root / "out" / SCAFFOLD, "/* mine */\n")
    _edit(root / "out" / HEADER, "/* edit */\n")


@pytest.mark.slow  # strace kills tvmdev at each of its renames: 16 s
def test_ctrl_c_at_any_rename_is_completed_by_the_next_run(
        cli: Callable[..., Result], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _setup(cli, tmp_path / "ref")
    assert cli(*REGEN, cwd=tmp_path / "ref").code == 0
    want = tree(tmp_path / "ref/out")
    real_replace = os.replace

    def interrupt_at(n: int) -> Callable[[str | Path, str | Path], None]:
        calls = 0

        def replace(src: str | Path, dst: str | Path) -> None:
            nonlocal calls
            calls += 1
            if calls == n:
                raise KeyboardInterrupt
            real_replace(src, dst)
        return replace

    n = 0
    rolled = set()
    while True:
        n += 1
        root = tmp_path / f"n{n}"
        _setup(cli, root)
        monkeypatch.setattr(journal.os, "replace", interrupt_at(n))
        code = cli(*REGEN, cwd=root).code
        monkeypatch.setattr(journal.os, "replace", real_replace)
        if code == 0:
            break
        assert code == 130
        rolled.add(journal.pending(root / "out"))
        r = cli(*REGEN, cwd=root)
        assert r.code == 0, r.err
        assert tree(root / "out") == want, f"interrupted at rename {n}"
    assert n > 10 and rolled == {False, True}  # rolled back (n = 1) and forward


def test_a_dry_run_stops_at_an_interrupted_write(cli: Callable[..., Result],
                                                 tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _setup(cli, tmp_path / "a")
    root = tmp_path / "a"

    def interrupt(src: str | Path, dst: str | Path) -> None:
        if Path(dst).name != journal.JOURNAL:
            raise KeyboardInterrupt
        os.rename(src, dst)

    monkeypatch.setattr(journal.os, "replace", interrupt)
    assert cli(*REGEN, cwd=root).code == 130
    monkeypatch.undo()
    before = tree(root)
    for args in (REGEN + ["--dry-run"], ["check", "out"]):
        r = cli(*args, cwd=root)
        assert r.code == 1
        assert r.err.splitlines() == [
            "tvmdev: out: a write into this folder was interrupted and is not complete",
            "  hint: run the tvmdev command that writes here again (without --dry-run): it "
            "completes the interrupted write first"]
    assert tree(root) == before
    r = cli(*POSIX, cwd=root)  # any command that writes here completes it first
    assert r.code == 0
    assert r.out.splitlines()[0] == "completed an interrupted write into out"
    assert not (root / "out" / journal.STAGING).exists()


def test_a_damaged_journal_is_one_line(cli: Callable[..., Result], tmp_path: Path) -> None:
    assert cli(*POSIX, cwd=tmp_path).code == 0
    staging = tmp_path / "out" / journal.STAGING
    staging.mkdir()
    (staging / journal.JOURNAL).write_text('[["0", "../../escape"]]')
    before = tree(tmp_path)
    r = cli(*POSIX, cwd=tmp_path)
    assert r.code == 1
    assert r.err.splitlines() == [
        "tvmdev: out/.tvmdev.staging/journal.json: the journal of an interrupted write is "
        "damaged",
        f"  hint: delete out/{journal.STAGING} (files of the interrupted write may then be "
        "a mix of old and new: check them)"]
    assert tree(tmp_path) == before


def test_stray_temporary_files_are_removed(cli: Callable[..., Result], tmp_path: Path) -> None:
    assert cli(*POSIX, cwd=tmp_path).code == 0
    want = tree(tmp_path / "out")
    out = tmp_path / "out"
    # An uncommitted staging folder (rolled back), and tvmdev 0.1's temporary files.
    (out / journal.STAGING).mkdir()
    (out / journal.STAGING / "0").write_text("half")
    old = [out / "src/device/woofles/.posix.c.k2x_9abc.tmp", out / ".CMakeLists.txt.a1b2c3d4.tmp"]
    for p in old:
        p.write_text("half")
    mine = out / "src/device/woofles/.posix.c.notmine.tmp"
    mine.write_text("the user's")
    r = cli(*POSIX, cwd=tmp_path)
    assert r.code == 0
    assert "remove (stray temporary file)  src/device/woofles/.posix.c.k2x_9abc.tmp" in r.out
    assert tree(out) == {**want, "src/device/woofles/.posix.c.notmine.tmp": b"the user's"}
