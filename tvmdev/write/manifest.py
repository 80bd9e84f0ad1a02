"""The manifest of an output folder (``.tvmdev.json``): read, checked, merged.

One manifest serves every command that writes into a folder. The writer owns its
``files`` table; each command owns its own keys (``new-device`` the ``devices`` key,
``aot`` one entry per model under ``models``) and the writer merges them into what is
there, so no command drops another's records.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
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


def merged(old: Mapping[str, Any], records: Mapping[str, Any],
           files: dict[str, Any]) -> dict[str, Any]:
    """The manifest after a write: ``old`` with the caller's ``records`` merged in and the
    writer's ``files`` table.

    A record that is an object is merged key by key into the object there (``models``:
    one model replaces its own entry and keeps the others'); any other value replaces
    the key, and None removes it.
    """
    if "files" in records:
        raise AssertionError("internal error: the files table is the writer's")
    new = {k: v for k, v in old.items() if k != "files"}
    for key, value in records.items():
        if value is None:
            new.pop(key, None)
        elif isinstance(value, dict) and isinstance(new.get(key), dict):
            new[key] = {**new[key], **value}
        else:
            new[key] = value
    new["files"] = dict(sorted(files.items()))
    return new


def manifest_text(manifest: Mapping[str, Any]) -> str:
    """A manifest as written: sorted, indented JSON (regenerating gives identical bytes)."""
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"
