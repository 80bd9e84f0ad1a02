"""The manifest of an output folder (``.tvmdev.json``): what tvmdev wrote there, read
and written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import TvmdevError
from .journal import pending

MANIFEST = ".tvmdev.json"

_HINT = f"delete {MANIFEST} to start over (edited files are then treated as yours)"


def read_manifest(out_dir: Path) -> dict[str, Any]:
    """The manifest of ``out_dir``, or an empty one."""
    if pending(out_dir):
        raise TvmdevError("a write into this folder was interrupted and is not complete",
                          str(out_dir),
                          hint="run the tvmdev command that writes here again (without "
                               "--dry-run): it completes the interrupted write first")
    path = out_dir / MANIFEST
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise TvmdevError("the manifest is not valid JSON", str(path), hint=_HINT) from None
    if not isinstance(data, dict):
        raise TvmdevError("the manifest is not a JSON object", str(path))
    return data


def manifest_text(manifest: dict[str, Any]) -> str:
    """A manifest as written: sorted, indented JSON (regenerating gives identical bytes)."""
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"
