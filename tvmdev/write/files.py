"""The one writer: puts generated files on disk, atomically, without losing user edits.

Every file is either *owned* (regenerated on every run) or *scaffold* (written once, then
the user's). A manifest in the output folder records what was written and its hash, so a
later run can tell a user's edit from its own output:

* an owned file the user edited stops the run (exit 1) unless ``force``;
* a scaffold file the user edited is kept as it is;
* a file whose content would not change is not touched;
* with ``force``, an edited file that is overwritten is first saved as ``<file>.orig``.

All files are rendered and checked before anything is written; they are then staged as
temporary files beside their targets and renamed into place.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import TvmdevError
from ..reading import read_text

MANIFEST = ".tvmdev.json"


@dataclass(frozen=True)
class OutFile:
    """A file to write: a path relative to the output folder, its text and its kind."""

    path: str
    content: str
    kind: str  # "owned" or "scaffold"


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


def read_manifest(out_dir: Path) -> dict[str, Any]:
    """The manifest of ``out_dir``, or an empty one; its ``files`` record is checked (the
    ``devices`` record by :func:`tvmdev.model.device.specs_from_manifest`)."""
    path = out_dir / MANIFEST
    if not os.path.lexists(path):
        return {}
    hint = f"delete {MANIFEST} to start over (edited files are then treated as yours)"
    try:
        data = json.loads(read_text(path, "manifest"))
    except (ValueError, RecursionError):
        raise TvmdevError("the manifest is not valid JSON", str(path), hint=hint) from None
    if not isinstance(data, dict):
        raise TvmdevError("the manifest is not a JSON object", str(path), hint=hint)
    files = data.get("files", {})
    if not isinstance(files, dict) or not all(
            isinstance(v, dict) and isinstance(v.get("sha256", ""), str)
            for v in files.values()):
        raise TvmdevError("the manifest's files record is malformed", str(path), hint=hint)
    return data


def normalized(path: Path) -> Path:
    """``path`` made absolute with ``.`` and ``..`` folded (``b/../b`` is ``b``), as a
    shell's ``cd`` reads it."""
    return Path(os.path.normpath(os.path.abspath(path)))


def check_out_dir(out_dir: Path, flag: str = "-o") -> None:
    """An output path must be a folder or not exist yet (nor have a file among its
    parents); ``flag`` is the option that gave it, for the hint."""
    for p in [out_dir, *out_dir.parents]:
        if p.exists():
            if not p.is_dir():
                what = "the output path" if p == out_dir else f"'{p}' in the output path"
                raise TvmdevError(f"{what} is a file, not a folder", str(out_dir),
                                  hint=f"pass a folder with {flag}")
            break


@dataclass
class _Plan:
    """What a write will do, decided before anything is touched."""

    report: Report = field(default_factory=Report)
    to_write: list[tuple[Path, str]] = field(default_factory=list)
    backups: list[tuple[Path, bytes]] = field(default_factory=list)
    records: dict[str, Any] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)

    def decide(self, out_dir: Path, f: OutFile, recorded: str | None, force: bool) -> None:
        """One file: create, leave, update, keep the user's edit, or (with force)
        overwrite it after saving it as .orig; an edited owned file is a conflict."""
        target = out_dir / f.path
        new_hash = digest(f.content)
        record = {"kind": f.kind, "sha256": new_hash}
        if target.is_dir():
            raise TvmdevError("a folder stands where a file must be written", str(target))
        if not target.exists():
            self.report.add("create", f.path)
            self.to_write.append((target, f.content))
            self.records[f.path] = record
            return
        on_disk = target.read_bytes()
        disk_hash = digest(on_disk)
        if disk_hash == new_hash:
            self.report.add("unchanged", f.path)
            self.records[f.path] = record
        elif recorded == disk_hash:  # not edited since tvmdev wrote it
            self.report.add("update", f.path)
            self.to_write.append((target, f.content))
            self.records[f.path] = record
        elif f.kind == "scaffold" and not force:
            self.report.add("kept (yours)", f.path)
            # Keep recording what tvmdev generated, so the edit stays detectable.
            self.records[f.path] = {"kind": f.kind, "sha256": recorded or new_hash}
        elif force:
            self.report.add("overwrite (saved .orig)", f.path)
            self.backups.append((target.with_name(target.name + ".orig"), on_disk))
            self.to_write.append((target, f.content))
            self.records[f.path] = record
        else:
            self.conflicts.append(f.path)


def _check_unique(files: list[OutFile]) -> None:
    seen: set[str] = set()
    for f in files:
        if f.path in seen:
            raise AssertionError(f"internal error: two writes to {f.path}")
        seen.add(f.path)
        if f.kind not in ("owned", "scaffold"):
            raise AssertionError(f"internal error: bad kind {f.kind}")


def write(out_dir: Path, files: list[OutFile], manifest: dict[str, Any], *,
          force: bool = False, dry_run: bool = False) -> Report:
    """Write ``files`` under ``out_dir`` and update the manifest there.

    ``manifest`` holds the caller's records (inputs, tool version); this function adds the
    ``files`` table. Raises :class:`TvmdevError` before writing anything on a conflict.
    """
    check_out_dir(out_dir)
    _check_unique(files)
    old_files: dict[str, Any] = read_manifest(out_dir).get("files", {})
    plan = _Plan()
    for f in sorted(files, key=lambda f: f.path):
        plan.decide(out_dir, f, old_files.get(f.path, {}).get("sha256"), force)
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
    new_manifest = dict(manifest)
    new_manifest["files"] = dict(sorted(plan.records.items()))
    manifest_text = json.dumps(new_manifest, indent=2, sort_keys=True) + "\n"
    if dry_run:
        return plan.report
    if plan.to_write or plan.backups or manifest_text != _read_text(out_dir / MANIFEST):
        _commit(out_dir, [*plan.backups, *((p, t.encode("utf-8")) for p, t in plan.to_write),
                          (out_dir / MANIFEST, manifest_text.encode("utf-8"))])
    return plan.report


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _commit(out_dir: Path, items: list[tuple[Path, bytes]]) -> None:
    """Stage every file as a temporary beside its target, then rename all into place."""
    created_dirs: list[Path] = []
    staged: list[tuple[Path, Path]] = []
    try:
        for target, data in items:
            target = normalized(target)
            parent = target.parent
            missing = []
            while not parent.exists():
                missing.append(parent)
                parent = parent.parent
            for d in reversed(missing):
                d.mkdir()
                created_dirs.append(d)
            fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                            dir=target.parent)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            mode = target.stat().st_mode & 0o7777 if target.exists() else 0o644
            os.chmod(tmp_name, mode)
            staged.append((Path(tmp_name), target))
    except OSError as exc:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        for d in reversed(created_dirs):
            try:
                d.rmdir()
            except OSError:
                pass
        raise TvmdevError(f"cannot write: {exc.strerror}", str(exc.filename or out_dir)) from None
    for tmp, target in staged:
        os.replace(tmp, target)


def sync(out_dir: Path, files: list[OutFile]) -> list[str]:
    """Write files into a folder tvmdev owns entirely (a build folder): each file that is
    missing or differs is replaced atomically; nothing else is checked or recorded.
    Returns the paths written."""
    check_out_dir(out_dir)
    items = []
    for f in files:
        target = out_dir / f.path
        data = f.content.encode("utf-8")
        if not target.is_file() or target.read_bytes() != data:
            items.append((target, data))
    if items:
        _commit(out_dir, items)
    return [str(t.relative_to(out_dir)) for t, _ in items]


def copy_files(sources: list[tuple[Path, str]]) -> list[OutFile]:
    """OutFiles for static files shipped with tvmdev: (source path, path to write)."""
    return [OutFile(dest, src.read_text(encoding="utf-8"), "owned") for src, dest in sources]
