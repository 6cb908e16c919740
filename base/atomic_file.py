"""Replacing a file atomically: readers and crashes see the old file or the new one, whole.

The one writer of every file dgtcast keeps up to date for others to read: the PGN folder
that broadcast uploaders watch, and the TRF that the pairing program reads.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

__all__ = ["write_atomically"]


def write_atomically(
    path: str | os.PathLike[str], data: bytes, *, new_mode: int | None = None
) -> None:
    """Replace ``path`` with ``data``.

    The bytes go to a hidden temporary file in the same folder
    (``.<name>.<random>.tmp``), which is flushed to disk (``fsync``) and renamed over
    ``path`` (atomic on POSIX and Windows); then the folder is flushed (POSIX), so the
    rename itself survives a power cut. A crash may leave the temporary file behind,
    never a torn ``path``; a failed write removes it.

    Args:
        path: the file; missing folders are made.
        data: the whole new content.
        new_mode: permissions of a file that does not exist yet (default: what the
            umask allows, like any new file). An existing file keeps its own.

    Raises:
        OSError: the folder is not writable, the disk is full, ...
        TypeError: ``data`` is not bytes (nothing is replaced).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            _set_mode(target, file.fileno(), new_mode)
            os.fsync(file.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    _fsync_folder(target.parent)


def _set_mode(target: Path, fd: int, new_mode: int | None) -> None:
    """Give the temporary file ``target``'s permissions (mkstemp makes it 0600)."""
    if sys.platform == "win32":  # Windows keeps only a read-only flag: nothing to copy
        return
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = new_mode if new_mode is not None else 0o666 & ~_umask()
    os.fchmod(fd, mode)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_folder(folder: Path) -> None:
    if os.name != "posix":  # a folder cannot be opened for fsync on Windows
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
