"""The pinned trees (CMSIS-NN, KleidiAI) share one description, one lookup and pin check
(tvmdev.load.tree) and one compile cache (tvmdev.run.trees)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tvmdev.errors import TvmdevError
from tvmdev.load.kernel_tree import board_library
from tvmdev.load.platform import platform_by_name
from tvmdev.load.tree import Tree, check, locate
from tvmdev.run.trees import TreeBuild, compile_trees


def trees() -> dict[str, Tree]:
    kai = platform_by_name("kleidiai").tree
    assert kai is not None
    return {"cmsis_nn": board_library("cmsis_nn").tree, "kleidiai": kai}


def fake(tree: Tree, root: Path, revision: str) -> Path:
    """A folder with the tree's layout, whose revision file states ``revision``."""
    for inc in tree.include:
        (root / inc).mkdir(parents=True, exist_ok=True)
    if tree.sources:
        (root / tree.sources).mkdir(parents=True, exist_ok=True)
    for _, files in tree.compile:
        for f in files:
            (root / f).parent.mkdir(parents=True, exist_ok=True)
            (root / f).write_text("/* empty */\n")
    statement = {"cmsis_nn": f" * $Revision:    {revision}\n",
                 "kleidiai": f"project(KleidiAI\n    VERSION {revision}\n)\n"}[tree.name]
    (root / tree.pin.revision_file).parent.mkdir(parents=True, exist_ok=True)
    (root / tree.pin.revision_file).write_text(statement)
    return root


@pytest.mark.parametrize("name", ["cmsis_nn", "kleidiai"])
def test_every_tree_is_found_and_pin_checked_alike(name: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    tree = trees()[name]
    monkeypatch.delenv(tree.env, raising=False)
    assert locate(tree, None) is None  # not there: the library is not used, with a note
    good = fake(tree, tmp_path / "good", tree.pin.revision)
    assert locate(tree, good) == good.resolve()
    monkeypatch.setenv(tree.env, str(good))
    assert locate(tree, None) == good.resolve()
    old = fake(tree, tmp_path / "old", "0.0.1")
    with pytest.raises(TvmdevError) as err:
        locate(tree, old)
    assert f"is revision 0.0.1, not {tree.pin.revision} of {name} {tree.pin.tag}" in str(
        err.value)
    assert tree.pin.repository in (err.value.hint or "")
    (good / tree.pin.revision_file).unlink()
    with pytest.raises(TvmdevError, match="is revision unknown"):
        check(tree, good, tree.env)


def test_tree_objects_are_compiled_once_per_machine(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no host C compiler")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    tree = trees()["cmsis_nn"]
    root = fake(tree, tmp_path / "t", tree.pin.revision)
    (root / "Include/h.h").write_text("#define V 1\n")
    src = root / "Source/f.c"
    src.write_text('#include "h.h"\nint f(void) { return V; }\n')
    build = TreeBuild(tree, root, (("", (src,)),))
    first = compile_trees(cc, ["-O2"], [build])
    stamp = first[0].stat().st_mtime_ns
    assert compile_trees(cc, ["-O2"], [build]) == first  # another build: the cached object
    assert first[0].stat().st_mtime_ns == stamp
    assert compile_trees(cc, ["-O1"], [build]) != first  # other flags: another object
    assert len(list((tmp_path / "cache/tvmdev/objects").glob("*.o"))) == 2
    with pytest.raises(TvmdevError) as err:  # a source that does not compile: its log
        src.write_text("int f(void) { return }\n")
        compile_trees(cc, ["-O2"], [build])
    assert "cannot compile f.c" in str(err.value) and err.value.log
