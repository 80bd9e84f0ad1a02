"""ONNX external data (issue 21): read from the model's folder as onnx.load reads it, never
from the current folder; a location that leads outside the model's folder, or data of
another size than the tensor's, refused in one line with nothing written."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import Result, need_module

need_module("onnx", "pip install -e '.[onnx]'")
import onnx  # noqa: E402
import onnx_build as B  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

from tvmdev.errors import shown  # noqa: E402

n = helper.make_node
W = np.arange(4, dtype=np.float32).reshape(1, 4) + 1  # the weights in the model's folder
C = np.full((1, 4), 0.5, np.float32)  # the Constant node's value
HINT = "  hint: keep the data files inside the model's folder"


def _external(t: onnx.TensorProto, location: str, **keys: str) -> onnx.TensorProto:
    t.ClearField("raw_data")
    t.data_location = onnx.TensorProto.EXTERNAL
    t.external_data.add(key="location", value=location)
    for key, value in keys.items():
        t.external_data.add(key=key, value=value)
    return t


def _model(folder: Path, location: str = "w.bin", **keys: str) -> Path:
    """y = x + w + c, w an initializer and c a Constant node's value, both stored in
    ``location`` (c from offset 16, after w), written into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    w = _external(numpy_helper.from_array(W, "w"), location, **keys)
    c = _external(numpy_helper.from_array(C, "c"), location, offset="16", length="16")
    nodes = [n("Constant", [], ["c"], value=c, name="const"), n("Add", ["x", "w"], ["s"]),
             n("Add", ["s", "c"], ["y"])]
    path = folder / "m.onnx"
    path.write_bytes(B.model(nodes, [B.tensor("x", [1, 4])], [B.tensor("y", [1, 4])], [w]))
    return path


def _data(path: Path, *arrays: np.ndarray) -> None:
    path.write_bytes(b"".join(a.tobytes() for a in arrays))


def test_read_from_the_models_folder(cli: Callable[..., Result], tmp_path: Path) -> None:
    """Run from a folder holding another w.bin: the model's own is read, as onnx.load
    with the model's folder as base_dir reads it."""
    model = _model(tmp_path / "model", "w.bin", offset="0", length="16")
    _data(tmp_path / "model/w.bin", W, C)
    (tmp_path / "cwd").mkdir()
    _data(tmp_path / "cwd/w.bin", -W, -C)
    r = cli("import", str(model), "-o", str(tmp_path / "o"), cwd=tmp_path / "cwd")
    assert r.code == 0, r.err
    loaded = onnx.load(str(model), load_external_data=True)
    want = numpy_helper.to_array(loaded.graph.initializer[0])
    np.testing.assert_array_equal(want, W)
    consts = [np.load(p) for p in sorted((tmp_path / "o").glob("*.npy"))]
    assert len(consts) == 2
    assert any(np.array_equal(c, W) for c in consts)
    assert any(np.array_equal(c, C) for c in consts)


@pytest.mark.parametrize("case", ["up", "absolute", "symlink_out", "symlink_dir_out",
                                  "missing", "folder"])
def test_location_outside_the_models_folder(case: str, cli: Callable[..., Result],
                                            tmp_path: Path) -> None:
    outside = tmp_path / "w.bin"
    _data(outside, W, C)
    folder = tmp_path / "model"
    folder.mkdir()
    location, message = {
        "up": ("../w.bin", "its external data '../w.bin' goes up with '..'; it must be "
                           "inside the model's folder"),
        "absolute": (str(outside), f"its external data {shown(str(outside))} is an absolute "
                                   "path; it must be relative to the model's folder"),
        "symlink_out": ("link.bin", "its external data 'link.bin' leads outside the "
                                    "model's folder (to "),
        "symlink_dir_out": ("sub/w.bin", "its external data 'sub/w.bin' leads outside the "
                                         "model's folder (to "),
        "missing": ("nope.bin", "cannot read its external data 'nope.bin' in the model's "
                                "folder: No such file or directory"),
        "folder": ("sub", "its external data 'sub' is not a regular file"),
    }[case]
    if case == "symlink_out":
        os.symlink(outside, folder / "link.bin")
    elif case == "symlink_dir_out":
        os.symlink(tmp_path, folder / "sub")
    elif case == "folder":
        (folder / "sub").mkdir()
    model = _model(folder, location)
    for argv in (["import", str(model), "-o", str(tmp_path / "o")],
                 ["aot", str(model), "-o", str(tmp_path / "o")],
                 ["run", str(model), "--build-dir", str(tmp_path / "o")]):
        r = cli(*argv, cwd=folder)
        assert r.code == 1, (argv, r.out)
        lines = r.err.splitlines()
        assert len(lines) == 2 and lines[1].startswith(HINT), lines
        assert lines[0].startswith(f"tvmdev: {model}: initializer 'w': {message}"), lines[0]
        assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("data", "keys", "message"), [
    (W[:, :3], {}, "holds 12 bytes; the tensor (FLOAT [1, 4]) needs 16 bytes"),
    (np.concatenate([W, W], 1), {}, "holds 32 bytes; the tensor (FLOAT [1, 4]) needs 16 "
                                    "bytes"),
    (W, {"length": "12"}, "holds 12 bytes; the tensor (FLOAT [1, 4]) needs 16 bytes"),
    (W, {"offset": "8", "length": "16"}, "is 16 bytes from offset 8, past the end of its "
                                         "file (16 bytes); the tensor"),
    (W, {"offset": "99"}, "starts at offset 99, past the end of its file (16 bytes)"),
    (W, {"offset": "-4"}, "offset is '-4', not a byte count"),
])
def test_data_of_another_size(data: np.ndarray, keys: dict[str, str], message: str,
                              cli: Callable[..., Result], tmp_path: Path) -> None:
    model = _model(tmp_path, "w.bin", **keys)
    _data(tmp_path / "w.bin", data)
    r = cli("import", str(model), "-o", str(tmp_path / "o"))
    assert r.code == 1
    lines = r.err.splitlines()
    assert lines[0].startswith(f"tvmdev: {model}: initializer 'w': ")
    assert message in lines[0], lines[0]
    assert len(lines) == 2 and lines[1].startswith("  hint: "), lines
    assert "Traceback" not in r.err and not (tmp_path / "o").exists()
