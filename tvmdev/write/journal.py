"""Commits that survive interruption (a SIGKILL, Ctrl-C or power cut at any point).

A write stages its files in one folder inside the output folder, makes a journal of
its renames durable, and only then renames the files into place:

    .tvmdev.staging/
        0, 1, ...         the new bytes, one file per target, each fsynced
        journal.json      [[staged, target], ...], targets relative to the output folder

The journal is written as ``journal.json.tmp``, fsynced and renamed: that rename is the
commit point. Interrupted before it, a write has renamed nothing, and the next run
deletes the staging folder (a roll back). Interrupted after it, the next run finishes
the renames (a roll forward) before it reads anything. Recovery is idempotent: a rename
that already happened has no staged file left and is skipped, so a second interruption,
during recovery, is finished by the run after it. The manifest is the journal's last
rename, so it never records a file before that file is in place.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from ..errors import TvmdevError

STAGING = ".tvmdev.staging"
JOURNAL = "journal.json"

_RETRY = "the write is journaled: remove the cause and run the command again to complete it"


def pending(out_dir: Path) -> bool:
    """Whether ``out_dir`` holds a committed write whose renames are not all done."""
    return (out_dir / STAGING / JOURNAL).is_file()


def recover(out_dir: Path) -> int:
    """Complete (after its commit point) or roll back (before it) an interrupted write
    into ``out_dir``, and delete its staged files; the number of files it put in place."""
    staging = out_dir / STAGING
    if not staging.is_dir():
        return 0
    renames = _read_journal(out_dir) if pending(out_dir) else []
    done = 0
    try:
        for staged, target in renames:
            src, dst = staging / staged, out_dir / target
            if os.path.lexists(src):
                dst.parent.mkdir(parents=True, exist_ok=True)
                os.replace(src, dst)
                done += 1
        # Every rename durable before the journal goes: a crash now replays nothing.
        for d in _folders(out_dir, [t for _, t in renames]):
            _fsync_dir(d)
        (staging / JOURNAL).unlink(missing_ok=True)
        shutil.rmtree(staging)
        _fsync_dir(out_dir)
    except OSError as exc:
        raise TvmdevError(f"cannot complete the write: {exc.strerror}",
                          str(exc.filename or out_dir), hint=_RETRY) from None
    return done


def commit(out_dir: Path, items: list[tuple[str, bytes]]) -> None:
    """Write ``items`` (paths relative to ``out_dir``, and bytes) all or, after a crash
    and the next run's recovery, all the same. An error before the commit point leaves
    nothing written (folders this call created are removed again)."""
    out_dir = normalized(out_dir)
    recover(out_dir)
    created: list[Path] = []
    staging = out_dir / STAGING
    renames: list[list[str]] = []
    try:
        _make_folder(out_dir, created)
        _preflight(out_dir, [rel for rel, _ in items])
        staging.mkdir()
        for i, (rel, data) in enumerate(items):
            target = out_dir / rel
            mode = target.stat().st_mode & 0o7777 if target.is_file() else 0o644
            _write_durably(staging / str(i), data, mode)
            renames.append([str(i), rel])
        _write_durably(staging / (JOURNAL + ".tmp"), json.dumps(renames).encode(), 0o644)
        _fsync_dir(out_dir)
    except (OSError, TvmdevError) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        for d in reversed(created):
            try:
                d.rmdir()
            except OSError:
                pass
        if isinstance(exc, TvmdevError):
            raise
        raise TvmdevError(f"cannot write: {exc.strerror}", str(exc.filename or out_dir)
                          ) from None
    os.replace(staging / (JOURNAL + ".tmp"), staging / JOURNAL)  # the commit point
    _fsync_dir(staging)
    recover(out_dir)


def normalized(path: Path) -> Path:
    """``path`` made absolute with ``.`` and ``..`` folded (``b/../b`` is ``b``, even while
    ``b`` does not exist), as a shell's ``cd`` reads it."""
    return Path(os.path.normpath(os.path.abspath(path)))


def _read_journal(out_dir: Path) -> list[tuple[str, str]]:
    path = out_dir / STAGING / JOURNAL
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        data = None
    pairs = [(s, t) for s, t in data] if _is_journal(data) else None
    if pairs is None or any(_escapes(s) or "/" in s or _escapes(t) for s, t in pairs):
        raise TvmdevError("the journal of an interrupted write is damaged", str(path),
                          hint=f"delete {out_dir / STAGING} (files of the interrupted write "
                               "may then be a mix of old and new: check them)")
    return pairs


def _is_journal(data: object) -> bool:
    """Whether JSON data is a list of [staged, target] pairs of strings."""
    return isinstance(data, list) and all(
        isinstance(e, list) and len(e) == 2 and all(isinstance(s, str) for s in e)
        for e in data)


def _escapes(rel: str) -> bool:
    """Whether a path from a journal is absolute or leaves its folder."""
    return not rel or os.path.isabs(rel) or ".." in Path(rel).parts


def _make_folder(out_dir: Path, created: list[Path]) -> None:
    """Create ``out_dir`` and its missing parents, adding each to ``created``."""
    missing = [p for p in [out_dir, *out_dir.parents] if not p.exists()]
    for d in reversed(missing):
        d.mkdir()
        created.append(d)
    if created:
        _fsync_dir(created[0].parent)


def _preflight(out_dir: Path, rels: list[str]) -> None:
    """Renames into place must not fail: every target's nearest existing folder is a
    writable folder on the output folder's file system."""
    device = out_dir.stat().st_dev
    for rel in rels:
        p = (out_dir / rel).parent
        while not p.exists():
            p = p.parent
        if not p.is_dir():
            raise TvmdevError("a file stands where a folder must be", str(p))
        if p.stat().st_dev != device:
            raise TvmdevError("this folder is on another file system than the output "
                              "folder; tvmdev cannot rename files into it atomically", str(p))
        if not os.access(p, os.W_OK | os.X_OK):
            raise TvmdevError("cannot write: Permission denied", str(p))


def _write_durably(path: Path, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fchmod(fh.fileno(), mode)
        os.fsync(fh.fileno())


def _folders(out_dir: Path, rels: list[str]) -> list[Path]:
    """The folders whose entries a set of renames changed: each target's folder and
    those between it and ``out_dir`` (which recovery may have created)."""
    found: dict[Path, None] = {out_dir: None}
    for rel in rels:
        for parent in Path(rel).parents:
            found.setdefault(out_dir / parent, None)
    return [d for d in found if d.is_dir()]


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
