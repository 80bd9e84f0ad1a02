"""The one writer: puts generated files on disk, atomically, without losing user edits.

Every file is either *owned* (regenerated on every run) or *scaffold* (written once, then
the user's). A manifest in the output folder records what was written and its hash, so a
later run can tell a user's edit from its own output:

* an owned file the user edited stops the run (exit 1) unless ``force``, which
  overwrites it after saving the user's version beside it as ``<file>.orig``; a backup is
  never overwritten: if ``<file>.orig`` exists, the next free one of ``<file>.orig.1``,
  ``<file>.orig.2``, ... is used;
* a scaffold file the user edited is kept as it is, with or without ``force``;
* a file whose content would not change is not touched.

All files are rendered and checked (names within the file system's limits, the manifest's
shape, edits) before anything is written; they are then committed through a journal
(:mod:`.journal`): a run interrupted at any point is completed or rolled back by the next
run that writes into the folder, before that run reads anything. The manifest is merged:
each command replaces its own records and keeps the others' (:mod:`.manifest`).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import TvmdevError
from .journal import commit, normalized, recover
from .manifest import MANIFEST, manifest_text, merged, read_manifest

# The temporary files of tvmdev 0.1's writer, left beside their targets by an interrupted
# run: tempfile.mkstemp(prefix=".<name>.", suffix=".tmp").
_OLD_TEMP = re.compile(r"^\.(.+)\.[a-z0-9_]{8}\.tmp$")


@dataclass(frozen=True)
class OutFile:
    """A file to write: a path relative to the output folder, its text (or bytes: a
    constant's .npy) and its kind."""

    path: str
    content: str | bytes
    kind: str  # "owned" or "scaffold"

    @property
    def data(self) -> bytes:
        """The bytes to write."""
        return self.content if isinstance(self.content, bytes) else self.content.encode()


@dataclass
class Report:
    """What a write did (or, in a dry run, would do), file by file."""

    actions: list[tuple[str, str]] = field(default_factory=list)

    def add(self, action: str, path: str) -> None:
        """Record one action on one path."""
        self.actions.append((action, path))

    def lines(self) -> list[str]:
        """The actions, aligned, one per line."""
        width = max((len(a) for a, _ in self.actions), default=0)
        return [f"{action:<{width}}  {path}" for action, path in self.actions]


def digest(text: str | bytes) -> str:
    """The SHA-256 of a text (UTF-8) or bytes, in hex."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def check_out_dir(out_dir: Path, flag: str = "-o") -> None:
    """An output path must fit the file system's limits, and be a folder or not exist yet
    (nor have a file among its parents); ``flag`` is the option that gave it, for the
    hint."""
    check_names(out_dir, [])
    for p in [out_dir, *out_dir.parents]:
        if p.exists():
            if not p.is_dir():
                what = "the output path" if p == out_dir else f"'{p}' in the output path"
                raise TvmdevError(f"{what} is a file, not a folder", str(out_dir),
                                  hint=f"pass a folder with {flag}")
            break


def _short(text: str) -> str:
    return text if len(text) <= 64 else f"{text[:40]}...{text[-16:]}"


def check_names(out_dir: Path, rels: list[str]) -> None:
    """Every path to write fits the file system: each file or folder name within its
    limit in bytes (255 on most), the whole path within the path limit (4096 on Linux)."""
    root = normalized(out_dir)
    for part in root.parts:
        if len(os.fsencode(part)) > 255:  # before any call that could fail on it
            raise TvmdevError(f"the output path has a name of {len(os.fsencode(part))} "
                              "bytes; the file system allows 255", _short(str(out_dir)),
                              hint="use a shorter folder name")
    existing = next(p for p in [root, *root.parents] if p.exists())
    name_max, path_max = _limits(existing)
    for rel in rels:
        for part in Path(rel).parts:
            if len(os.fsencode(part)) > name_max:
                raise TvmdevError(
                    f"cannot write {_short(rel)}: a name of {len(os.fsencode(part))} bytes; "
                    f"the file system allows {name_max}", str(out_dir),
                    hint="use a shorter device or model name")
        if len(os.fsencode(str(root / rel))) >= path_max:
            raise TvmdevError(f"cannot write {_short(rel)}: its path is longer than the "
                              f"file system allows ({path_max} bytes)", _short(str(out_dir)),
                              hint="use a shorter output folder, device or model name")


def _limits(folder: Path) -> tuple[int, int]:
    """The longest name and path the file system holding ``folder`` allows, in bytes."""
    try:
        return os.pathconf(folder, "PC_NAME_MAX"), os.pathconf(folder, "PC_PATH_MAX")
    except (OSError, ValueError):
        return 255, 4096


@dataclass
class _Plan:
    """What a write will do, decided before anything is touched."""

    out_dir: Path
    report: Report = field(default_factory=Report)
    to_write: list[tuple[str, bytes]] = field(default_factory=list)
    records: dict[str, Any] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)

    def decide(self, f: OutFile, recorded: str | None, force: bool) -> None:
        """One file: create, leave, update, keep the user's edit, or (with force, owned
        files only) overwrite it after saving it as .orig; an edited owned file is a
        conflict."""
        target = self.out_dir / f.path
        new_hash = digest(f.content)
        record = {"kind": f.kind, "sha256": new_hash}
        if target.is_dir():
            raise TvmdevError("a folder stands where a file must be written", str(target))
        if not target.exists():
            self.report.add("create", f.path)
            self.to_write.append((f.path, f.data))
            self.records[f.path] = record
            return
        on_disk = target.read_bytes()
        disk_hash = digest(on_disk)
        if disk_hash == new_hash:
            self.report.add("unchanged", f.path)
            self.records[f.path] = record
        elif recorded == disk_hash:  # not edited since tvmdev wrote it
            self.report.add("update", f.path)
            self.to_write.append((f.path, f.data))
            self.records[f.path] = record
        elif f.kind == "scaffold":  # the user's, always: --force does not touch it
            self.report.add("kept (yours)", f.path)
            # Keep recording what tvmdev generated, so the edit stays detectable.
            self.records[f.path] = {"kind": f.kind, "sha256": recorded or new_hash}
        elif force:
            backup = self.backup_name(f.path)
            self.report.add(f"overwrite (yours saved as {backup[len(f.path):]})", f.path)
            self.to_write += [(backup, on_disk), (f.path, f.data)]
            self.records[f.path] = record
        else:
            self.conflicts.append(f.path)

    def backup_name(self, rel: str) -> str:
        """``<rel>.orig``, or the first of ``<rel>.orig.1``, ``.orig.2``, ... that is free."""
        name, n = f"{rel}.orig", 0
        while os.path.lexists(self.out_dir / name):
            n += 1
            name = f"{rel}.orig.{n}"
        check_names(self.out_dir, [name])
        return name


def _check_unique(files: list[OutFile]) -> None:
    seen: set[str] = set()
    for f in files:
        if f.path in seen:
            raise AssertionError(f"internal error: two writes to {f.path}")
        seen.add(f.path)
        if f.kind not in ("owned", "scaffold"):
            raise AssertionError(f"internal error: bad kind {f.kind}")


def write(out_dir: Path, files: list[OutFile], records: Mapping[str, Any], *,
          force: bool = False, dry_run: bool = False) -> Report:
    """Write ``files`` under ``out_dir`` and update the manifest there.

    ``records`` are the caller's own manifest keys (see :func:`.manifest.merged`); the
    writer keeps every other command's and adds the ``files`` table. Completes an
    interrupted write into ``out_dir`` first (not in a dry run). Raises
    :class:`TvmdevError` before writing anything on a conflict.
    """
    check_out_dir(out_dir)
    check_names(out_dir, [f.path for f in files])
    _check_unique(files)
    if not dry_run:
        recover(out_dir)
    old = read_manifest(out_dir)
    old_files: dict[str, Any] = old.get("files", {})
    plan = _Plan(out_dir)
    for f in sorted(files, key=lambda f: f.path):
        plan.decide(f, old_files.get(f.path, {}).get("sha256"), force)
    if plan.conflicts:
        first = plan.conflicts[0]
        more = f" (and {len(plan.conflicts) - 1} more)" if len(plan.conflicts) > 1 else ""
        raise TvmdevError(
            f"{first} was edited since tvmdev generated it{more}; not overwriting",
            str(out_dir / first),
            hint="this file is owned by tvmdev: move your change into the inputs, or "
                 "pass --force to overwrite it (your version is saved as .orig)")
    # Files the manifest knew that are no longer generated stay on disk, and stay recorded.
    for path, rec in old_files.items():
        if path not in plan.records and (out_dir / path).exists():
            plan.records[path] = rec
    text = manifest_text(merged(old, records, plan.records))
    strays = old_temp_files(out_dir, [*plan.records, MANIFEST])
    for stray in strays:
        plan.report.add("remove (stray temporary file)", stray)
    if dry_run:
        return plan.report
    if plan.to_write or text != _read_text(out_dir / MANIFEST):
        commit(out_dir, [*plan.to_write, (MANIFEST, text.encode("utf-8"))])
    for stray in strays:
        (out_dir / stray).unlink(missing_ok=True)
    return plan.report


def old_temp_files(out_dir: Path, rels: list[str]) -> list[str]:
    """Temporary files that tvmdev 0.1's writer left beside ``rels`` when interrupted."""
    by_folder: dict[str, set[str]] = {}
    for rel in rels:
        parent, _, name = rel.rpartition("/")
        by_folder.setdefault(parent, set()).add(name)
    found = []
    for parent, names in sorted(by_folder.items()):
        try:
            entries = sorted(os.listdir(out_dir / parent))
        except OSError:
            continue
        for entry in entries:
            m = _OLD_TEMP.match(entry)
            if m and m.group(1) in names:
                found.append(f"{parent}/{entry}" if parent else entry)
    return found


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def sync(out_dir: Path, files: list[OutFile]) -> list[str]:
    """Write files into a folder tvmdev owns entirely (a build folder): each file that is
    missing or differs is replaced, in one journaled commit; nothing else is checked or
    recorded. Returns the paths written."""
    check_out_dir(out_dir)
    check_names(out_dir, [f.path for f in files])
    recover(out_dir)
    items = []
    for f in files:
        target = out_dir / f.path
        data = f.data
        if not target.is_file() or target.read_bytes() != data:
            items.append((f.path, data))
    if items:
        commit(out_dir, items)
    return [rel for rel, _ in items]


def copy_files(sources: list[tuple[Path, str]]) -> list[OutFile]:
    """OutFiles for static files shipped with tvmdev: (source path, path to write)."""
    return [OutFile(dest, src.read_text(encoding="utf-8"), "owned") for src, dest in sources]
