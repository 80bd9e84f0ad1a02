"""Where the shipped data lives: templates/, platforms/ and boards/.

In a wheel they are installed under ``tvmdev/_data``; in a source checkout they sit
beside the package.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

_PKG = Path(__file__).resolve().parent


@cache
def data_root() -> Path:
    """The folder holding ``templates/``, ``platforms/`` and ``boards/``."""
    installed = _PKG / "_data"
    if (installed / "platforms").is_dir():
        return installed
    return _PKG.parent


def templates_dir() -> Path:
    """tvmdev's Jinja2 templates."""
    return data_root() / "templates"


def platforms_dir() -> Path:
    """The platform folders (platform.yaml and templates)."""
    return data_root() / "platforms"


def boards_dir() -> Path:
    """The built-in board files."""
    return data_root() / "boards"


def zephyr_app_dir() -> Path:
    """The Zephyr application that runs a model (zephyr_app)."""
    return data_root() / "zephyr_app"


def runtime_dir() -> Path:
    """tvmdev's shipped C sources (kernels, simulator, board support), not templates."""
    return data_root() / "runtime"


def cache_dir() -> Path:
    """tvmdev's cache ($XDG_CACHE_HOME/tvmdev, default ~/.cache/tvmdev): the probes and
    the objects compiled from pinned trees, shared by every build on the machine."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tvmdev"
