"""tvmdev is Apache-2.0 (LICENSE), and says so in every file it puts in a user's folder:
each generated file's banner and each source it copies (runtime/, platforms/) carry the
SPDX line. JSON (plan.json, the manifest) has no comments, and .npy files are data."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, Result

from tvmdev.load.board import board_by_name
from tvmdev.load.model import load_model
from tvmdev.model import reference
from tvmdev.plan.devices import plan_devices
from tvmdev.render.harness import Harness, firmware_files, host_files, zephyr_files

SPDX = "SPDX-License-Identifier: Apache-2.0"
# The first line of each shipped source, by the comment style of its suffix.
FIRST_LINE = {".c": f"/* {SPDX} */", ".h": f"/* {SPDX} */", ".m": f"/* {SPDX} */",
              ".metal": f"// {SPDX}", ".yaml": f"# {SPDX}"}
MLP = REPO / "examples/mlp/mlp.yaml"
CNN = REPO / "examples/cnn/cnn.yaml"


def unlicensed(root: Path) -> list[str]:
    """The text files under ``root`` (not JSON, not .npy) without the SPDX line in their
    first ten lines."""
    bad = []
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.suffix in (".json", ".npy"):
            continue
        if not any(SPDX in line for line in p.read_text(encoding="utf-8").splitlines()[:10]):
            bad.append(str(p.relative_to(root)))
    return bad


def test_the_licence_is_apache_2() -> None:
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.split()[:5] == ["Apache", "License", "Version", "2.0,", "January"]
    assert "END OF TERMS AND CONDITIONS" in text
    assert 'license = { text = "Apache-2.0" }' in (REPO / "pyproject.toml").read_text()


def test_every_shipped_source_opens_with_the_spdx_line() -> None:
    files = subprocess.run(["git", "ls-files", "runtime", "platforms"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.split()
    shipped = [f for f in files if not f.endswith(".j2")]
    assert len(shipped) > 100
    wrong = [f for f in shipped if (REPO / f).read_text(encoding="utf-8").split("\n", 1)[0]
             != FIRST_LINE[Path(f).suffix]]
    assert wrong == []


NEW_DEVICE = [
    ["woofles", "-p", "zephyr", "--zephyr-driver", "-p", "posix"],
    ["ethos_u", "-p", "cmsis", "--cmsis-driver", "spi", "--rtos", "cmsis-rtos2"],
    ["uart_accel", "-p", "cmsis", "--ops", "gemm,conv2d,fully_connected,softmax"],
    ["gpu", "-p", "metal"],
    ["kleidiai", "-p", "kleidiai"],
]


@pytest.mark.parametrize("args", NEW_DEVICE, ids=[a[0] for a in NEW_DEVICE])
def test_new_device_files_carry_it(cli: Callable[..., Result], tmp_path: Path,
                                   args: list[str]) -> None:
    """Owned files, scaffolds (yours, but tvmdev wrote them) and the copied portable
    kernels alike."""
    r = cli("new-device", *args, "-o", str(tmp_path))
    assert r.code == 0, r.err
    assert len(list(tmp_path.rglob("*.[ch]"))) >= 4
    assert unlicensed(tmp_path) == []


@pytest.mark.parametrize("model,board", [(MLP, None), (CNN, "mps2_an386")])
def test_aot_files_carry_it(cli: Callable[..., Result], tmp_path: Path, model: Path,
                            board: str | None) -> None:
    r = cli("aot", str(model), "-o", str(tmp_path), *(["--board", board] if board else []))
    assert r.code == 0, r.err
    assert (tmp_path / "kernels/portable/tvmk_portable.h").is_file()
    assert unlicensed(tmp_path) == []


def test_harness_files_carry_it(tmp_path: Path) -> None:
    """What tvmdev run writes around the model: main.c (host, firmware), link.ld, and the
    Zephyr app's glue, overlay and Kconfig fragment."""
    model = load_model(MLP)
    files = []
    for name in ("host", "mps2_an386", "qemu_cortex_m3"):
        board = board_by_name(name)
        dplan = plan_devices(model, board, None)
        inputs = reference.random_inputs(dplan.model)
        h = Harness(dplan.model, board, dplan, inputs, "tvmdev run mlp.yaml", False)
        if name == "host":
            files += host_files(h)
        elif name == "mps2_an386":
            files += firmware_files(h)
        else:
            expected = reference.evaluate(dplan.model, inputs)
            files += zephyr_files(h, expected, dict.fromkeys(expected, (0.0, 0.0)), [], [], [])
    assert {f.path for f in files} >= {"main.c", "link.ld", "app.overlay", "tvmdev.conf",
                                       "app/tvmdev_app.c", "app/tvmdev_app.cmake"}
    for i, f in enumerate(files):
        (tmp_path / str(i) / f.path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / str(i) / f.path).write_bytes(f.data)
    assert unlicensed(tmp_path) == []
