"""The outbox's state directory: its files, its lock, its reserve, and the disk's trouble.

A table's state directory holds the outbox database (:data:`DB_NAME`, with its WAL), the lock
file that keeps a second process out (:func:`lock`), and a reserve file (:data:`RESERVE_NAME`):
the outbox gives it back one step at a time to open on a full disk (:func:`shrink_reserve`) and
grows it back once it can write again (:func:`grow_reserve`). :func:`cannot_write` tells a disk
to blame (full, failing, read-only) from any other SQLite error; :func:`sync` makes the commits
so far durable. The outbox itself (:mod:`bridge.mqtt.outbox`) says when each is needed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Final

DB_NAME: Final = "outbox.sqlite3"
LOCK_NAME: Final = "outbox.lock"
RESERVE_NAME: Final = "outbox.reserve"
RESERVE_SIZE: Final = 512 * 1024
"""Bytes kept in reserve for opening the outbox (and counting the epoch) on a full disk."""
RESERVE_STEP: Final = 128 * 1024
"""Bytes of the reserve given back per open on a full disk (an open needs about 50 KB)."""
NO_SPACE: Final = "no space left on the disk"


class OutboxLockedError(RuntimeError):
    """This state directory's outbox is already open (in this or another process)."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"the outbox in {str(path)!r} is already open (in this or another process); "
            "give each table its own state directory"
        )
        self.path = path


class OutboxUnavailableError(RuntimeError):
    """The outbox cannot even be opened: the disk has no room left at all (or fails)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(
            f"cannot open the outbox in {str(path)!r}: {reason}; free space on that file system "
            "(or mend it) and start again"
        )
        self.path = path


def default_state_dir(name: str, environ: Mapping[str, str]) -> Path:
    """Where ``name`` (a table id, ``relay``) keeps its state when given no directory:
    systemd's ``$STATE_DIRECTORY`` (the first, if several), else
    ``$XDG_STATE_HOME/chessbridge/NAME`` (``~/.local/state/chessbridge/NAME``)."""
    systemd = environ.get("STATE_DIRECTORY")
    if systemd:
        return Path(systemd.split(":")[0])
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "chessbridge" / name


def lock(path: Path) -> int:
    """Take an exclusive lock on ``path``; it is released when the fd closes or the process dies.

    Raises:
        OutboxLockedError: another open file description holds it (this or another process).
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise OutboxLockedError(path.parent) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def sync(database: Path, directory: Path) -> None:
    """Make every commit so far durable: sync ``database``'s WAL file and ``directory``."""
    for path in (database.with_name(database.name + "-wal"), directory):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            continue  # no WAL yet: nothing is committed in it
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def grow_reserve(reserve: Path) -> None:
    """Bring the reserve back to :data:`RESERVE_SIZE`, if the disk has room."""
    try:
        fd = os.open(reserve, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return
    try:
        if os.fstat(fd).st_size < RESERVE_SIZE:
            os.posix_fallocate(fd, 0, RESERVE_SIZE)
    except OSError:
        pass  # no room now: grown again after the next successful retry
    finally:
        os.close(fd)


def shrink_reserve(reserve: Path) -> bool:
    """Give back one step of the reserve; false if there was none left."""
    try:
        size = reserve.stat().st_size
    except OSError:
        return False
    if size <= 0:
        return False
    os.truncate(reserve, max(0, size - RESERVE_STEP))
    return True


def cannot_write(exc: sqlite3.Error, where: Path | None = None) -> str | None:
    """Why SQLite could not write, if the disk is to blame (full, failing, read-only);
    ``None`` for any other error. ``where`` (a directory on that disk) tells a full disk from a
    failing one when SQLite says only "disk I/O error" (it does when its WAL index cannot grow).
    """
    code = getattr(exc, "sqlite_errorcode", None)
    if not isinstance(code, int):
        return None
    primary = code & 0xFF
    if primary == sqlite3.SQLITE_FULL:
        return NO_SPACE
    if primary == sqlite3.SQLITE_READONLY:
        return "the file system is read-only"
    if primary in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN):
        if where is not None:
            with contextlib.suppress(OSError):
                if shutil.disk_usage(where).free < RESERVE_STEP:
                    return NO_SPACE
        return f"the disk failed ({exc})"
    return None
