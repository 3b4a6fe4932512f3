"""Durable outbox: every payload is stored, with its ``seq``, before it is sent.

One SQLite database per table in the state directory. :meth:`Outbox.add` allocates the next
``seq``, builds the payload for it and stores the row in one transaction, so a payload that was
ever handed to the broker is always on disk first, and a ``seq`` is never handed out twice. The
publisher deletes a row (:meth:`Outbox.ack`) only after the broker's PUBACK; after a crash,
a broker outage or a restart, the rows left are sent again in ``seq`` order.

Durability: WAL with ``synchronous=NORMAL``. A commit then survives the process being killed
(SIGKILL, a crash): it is in the WAL file, handed to the operating system. Only a power cut or a
kernel crash can lose the last few commits, and the database is never corrupted by it. ``FULL``
would close that window at the price of an fsync on every move, milliseconds to tens of
milliseconds on an SD card, spent on the event loop and wearing the card. A lost tail after a
power cut is recovered from the board itself (the engine reconstructs the moves it finds), and
the epoch increment at open *is* written with ``FULL``, so ``(epoch, seq)`` stays unique even if
a ``seq`` of the lost tail is handed out again. ``synchronous="FULL"`` is available where the disk
is cheap to sync.

The ``seq`` counter is kept in its own row, never derived from the rows left, so it continues
across acknowledgements, restarts and epochs. One process at a time: the state directory is
locked while an :class:`Outbox` is open.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, Self

DB_NAME: Final = "outbox.sqlite3"
LOCK_NAME: Final = "outbox.lock"
_SCHEMA_VERSION: Final = 1

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS counter (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL,
    retain INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS outbox_retained ON outbox (topic) WHERE retain;
CREATE TABLE IF NOT EXISTS kv (
    key TEXT PRIMARY KEY,
    value BLOB NOT NULL
) WITHOUT ROWID;
INSERT OR IGNORE INTO counter (name, value) VALUES ('epoch', 0), ('seq', 0);
"""


class OutboxLockedError(RuntimeError):
    """This state directory's outbox is already open (in this or another process)."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"the outbox in {str(path)!r} is already open (in this or another process); "
            "give each table its own state directory"
        )
        self.path = path


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """One stored payload waiting for the broker's acknowledgement."""

    seq: int
    topic: str
    payload: bytes
    retain: bool


PayloadFactory = Callable[[int, int], bytes]
"""Builds the payload for ``(epoch, seq)``."""


class Outbox:
    """The durable outbox, ``seq`` counter and restart counter of one table, in ``state_dir``."""

    epoch: int
    """The restart counter: 1 on the first open of a state directory, one more on each open."""

    def __init__(
        self, state_dir: Path, *, synchronous: Literal["NORMAL", "FULL"] = "NORMAL"
    ) -> None:
        """Open (creating if needed) the outbox in ``state_dir`` and count one more epoch.

        Raises:
            OutboxLockedError: another process has it open.
            sqlite3.Error: the database cannot be opened or is damaged.
        """
        state_dir.mkdir(parents=True, exist_ok=True)
        self.path = state_dir / DB_NAME
        self._lock_fd = _lock(state_dir / LOCK_NAME)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None)
        except BaseException:
            os.close(self._lock_fd)
            raise
        try:
            self.epoch, self._last_seq = self._open(synchronous)
        except BaseException:
            self._db.close()
            os.close(self._lock_fd)
            raise

    def _open(self, synchronous: str) -> tuple[int, int]:
        db = self._db
        db.execute("PRAGMA journal_mode=WAL")
        # The epoch increment is synced to the disk whatever the setting (see the module doc).
        db.execute("PRAGMA synchronous=FULL")
        (version,) = db.execute("PRAGMA user_version").fetchone()
        if version > _SCHEMA_VERSION:
            raise sqlite3.DatabaseError(
                f"{self.path} has outbox schema {version}, newer than this version knows"
            )
        db.executescript(
            "BEGIN IMMEDIATE;"
            + _SCHEMA
            + "UPDATE counter SET value = value + 1 WHERE name = 'epoch';"
            + f"PRAGMA user_version = {_SCHEMA_VERSION};"
            + "COMMIT;"
        )
        db.execute(f"PRAGMA synchronous={synchronous}")
        counters = dict(db.execute("SELECT name, value FROM counter").fetchall())
        (max_row,) = db.execute("SELECT coalesce(max(seq), 0) FROM outbox").fetchone()
        return int(counters["epoch"]), max(int(counters["seq"]), int(max_row))

    @property
    def last_seq(self) -> int:
        """The last ``seq`` handed out (0 before the first)."""
        return self._last_seq

    def add(self, topic: str, payload_factory: PayloadFactory, retain: bool = False) -> int:
        """Allocate the next ``seq``, build its payload and store the row; return the ``seq``.

        One transaction: either the row is stored with its ``seq`` and the counter moved past
        it, or nothing changed. A retained row replaces any retained row still waiting for
        the same topic, since the broker keeps only the last one anyway.

        ``payload_factory(epoch, seq)`` must not touch the outbox.
        """
        seq = self._last_seq + 1
        payload = payload_factory(self.epoch, seq)
        with self._transaction() as db:
            db.execute("UPDATE counter SET value = ? WHERE name = 'seq'", (seq,))
            if retain:
                db.execute("DELETE FROM outbox WHERE retain AND topic = ?", (topic,))
            db.execute(
                "INSERT INTO outbox (seq, topic, payload, retain) VALUES (?, ?, ?, ?)",
                (seq, topic, payload, int(retain)),
            )
        self._last_seq = seq
        return seq

    def next_seq(self) -> int:
        """Allocate a ``seq`` for a payload that is not stored (the Last Will, status)."""
        seq = self._last_seq + 1
        with self._transaction() as db:
            db.execute("UPDATE counter SET value = ? WHERE name = 'seq'", (seq,))
        self._last_seq = seq
        return seq

    def pending(self, limit: int = 100) -> list[OutboxRow]:
        """Up to ``limit`` stored rows, oldest ``seq`` first."""
        rows = self._db.execute(
            "SELECT seq, topic, payload, retain FROM outbox ORDER BY seq LIMIT ?", (limit,)
        ).fetchall()
        return [
            OutboxRow(seq, topic, payload, bool(retain)) for seq, topic, payload, retain in rows
        ]

    def is_pending(self, seq: int) -> bool:
        """Whether the row of ``seq`` is still stored (not yet acknowledged)."""
        row = self._db.execute("SELECT 1 FROM outbox WHERE seq = ?", (seq,)).fetchone()
        return row is not None

    def count(self) -> int:
        """The number of rows waiting for acknowledgement."""
        (count,) = self._db.execute("SELECT count(*) FROM outbox").fetchone()
        return int(count)

    def ack(self, seq: int) -> None:
        """The broker acknowledged ``seq``: delete its row (no-op if already gone)."""
        self._db.execute("DELETE FROM outbox WHERE seq = ?", (seq,))

    def get(self, key: str) -> bytes | None:
        """A value of the daemon's own state, or ``None``."""
        row = self._db.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
        return None if row is None else bytes(row[0])

    def put(self, key: str, value: bytes) -> None:
        """Store a value of the daemon's own state."""
        self._db.execute(
            "INSERT INTO kv (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def close(self) -> None:
        """Close the database and release the state directory (idempotent)."""
        if self._lock_fd < 0:
            return
        try:
            self._db.close()
        finally:
            os.close(self._lock_fd)
            self._lock_fd = -1

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")


def _lock(path: Path) -> int:
    """Take an exclusive lock on ``path``; it is released when the fd closes or the process dies."""
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
