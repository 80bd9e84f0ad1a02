"""The manifest of an output folder (``.tvmdev.json``): read, checked, merged.

One manifest serves every command that writes into a folder. The writer owns its
``files`` table; each command owns its own keys (``new-device`` the ``devices`` key,
``aot`` one entry per model under ``models``) and the writer merges them into what is
there, so no command drops another's records.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import TvmdevError
from ..reading import read_bytes
from .journal import pending

MANIFEST = ".tvmdev.json"
KINDS = ("owned", "scaffold")

MANIFEST_HINT = (f"delete {MANIFEST} to start over (tvmdev then treats files that differ from its "
         "output as edits: it keeps scaffolds and stops at owned files unless --force)")


def read_manifest(out_dir: Path) -> dict[str, Any]:
    """The manifest of ``out_dir``, or an empty one; a manifest of the wrong shape is one
    error naming the file."""
    if pending(out_dir):
        raise TvmdevError("a write into this folder was interrupted and is not complete",
                          str(out_dir),
                          hint="run the tvmdev command that writes here again (without "
                               "--dry-run): it completes the interrupted write first")
    path = out_dir / MANIFEST
    if not os.path.lexists(path):
        return {}
    try:
        # a regular file of sane size (a FIFO or a folder here is one line)
        data = json.loads(read_bytes(path, "manifest").decode("utf-8"))
    except UnicodeDecodeError:
        raise TvmdevError("the manifest is not UTF-8 text", str(path), hint=MANIFEST_HINT) from None
    except (ValueError, RecursionError):
        raise TvmdevError("the manifest is not valid JSON", str(path), hint=MANIFEST_HINT) from None
    problem = shape_problem(data)
    if problem:
        raise TvmdevError(f"the manifest is not one tvmdev wrote: {problem}", str(path),
                          hint=MANIFEST_HINT)
    assert isinstance(data, dict)
    return data


def shape_problem(data: Any) -> str | None:
    """What is wrong with the shape of a manifest's data, or None."""
    if not isinstance(data, dict):
        return f"it holds a JSON {_json_type(data)}, not an object"
    for key in ("files", "devices", "models"):
        if key in data and not isinstance(data[key], dict):
            return f"'{key}' is a JSON {_json_type(data[key])}, not an object"
    for path, rec in data.get("files", {}).items():
        if not isinstance(rec, dict):
            return f"the record of file '{path}' is not an object"
        sha = rec.get("sha256")
        if not isinstance(sha, str) or len(sha) != 64:
            return f"the record of file '{path}' has no sha256"
        if rec.get("kind") not in KINDS:
            return f"the record of file '{path}' has no kind (owned or scaffold)"
    for key in ("devices", "models"):
        for name, rec in data.get(key, {}).items():
            if not isinstance(rec, dict):
                return f"the record of {key[:-1]} '{name}' is not an object"
    for name, rec in data.get("devices", {}).items():
        for key, kind in (("platforms", list), ("ops", list), ("options", dict)):
            value = rec.get(key, kind())
            if not isinstance(value, kind) or (kind is list and not all(
                    isinstance(v, str) for v in value)) or (key == "platforms" and not value):
                what = "an object" if kind is dict else "a list of names"
                return f"the record of device '{name}' needs {what} as '{key}'"
    return None


def _json_type(value: Any) -> str:
    names = {list: "array", str: "string", bool: "boolean", int: "number", float: "number",
             type(None): "null", dict: "object"}
    return names.get(type(value), type(value).__name__)


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
