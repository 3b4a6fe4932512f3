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

The journal: every non-retained payload is also kept, with its topic and ``seq``, in a bounded
journal table (the last ``journal_size`` rows, pruned in the same transaction as the insert), so
that a consumer that missed events can ask for them again (the ``replay`` command):
:meth:`Outbox.journal_since` reads them and :meth:`Outbox.requeue` puts those exact payloads back
in the outbox under their original ``seq``. Consumers drop the copies they already have by
``(epoch, seq)``. The journal table was added without changing the schema version: older
versions of the program ignore it.

The answered requests: each arbiter request carried out is kept, with its response, until its
``expires_at`` (:meth:`Outbox.remember_answer`, :meth:`Outbox.answer`), so that a repeat of it,
even after a restart, is answered the same and carried out no second time. Added like the journal,
without a schema version change.

:meth:`Outbox.batch` makes everything stored inside it one transaction: a move's events and the
game saved with them, a request's changes, its response and its record.
"""

from __future__ import annotations

import contextlib
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
JOURNAL_SIZE: Final = 10_000
"""Non-retained payloads kept for replay (about a day of a busy table with touch events)."""
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
CREATE TABLE IF NOT EXISTS journal (
    seq INTEGER PRIMARY KEY,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS kv (
    key TEXT PRIMARY KEY,
    value BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS answered (
    command TEXT NOT NULL,
    txn TEXT NOT NULL,
    digest BLOB NOT NULL,
    response BLOB NOT NULL,
    expires REAL NOT NULL,
    PRIMARY KEY (command, txn)
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
class StoredAnswer:
    """A request answered before: the digest of the request and the response sent."""

    digest: bytes
    response: bytes


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
        self,
        state_dir: Path,
        *,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        journal_size: int = JOURNAL_SIZE,
    ) -> None:
        """Open (creating if needed) the outbox in ``state_dir`` and count one more epoch.

        ``journal_size`` is how many non-retained payloads the journal keeps for replay.

        Raises:
            ValueError: ``journal_size`` is below 1.
            OutboxLockedError: another process has it open.
            sqlite3.Error: the database cannot be opened or is damaged.
        """
        if journal_size < 1:
            raise ValueError(f"journal_size must be at least 1, got {journal_size}")
        self._journal_size = journal_size
        self._batched = False
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
        # No automatic checkpoint inside a commit (it syncs the database file: a stall of up to
        # tens of ms on the event loop, more on an SD card); ``checkpoint()`` runs off the loop.
        db.execute("PRAGMA wal_autocheckpoint=0")
        counters = dict(db.execute("SELECT name, value FROM counter").fetchall())
        (max_row,) = db.execute("SELECT coalesce(max(seq), 0) FROM outbox").fetchone()
        (journaled,) = db.execute("SELECT count(*) FROM journal").fetchone()
        self._journaled = int(journaled)
        return int(counters["epoch"]), max(int(counters["seq"]), int(max_row))

    @property
    def last_seq(self) -> int:
        """The last ``seq`` handed out (0 before the first)."""
        return self._last_seq

    def add(self, topic: str, payload_factory: PayloadFactory, retain: bool = False) -> int:
        """Allocate the next ``seq``, build its payload and store the row; return the ``seq``.

        One transaction: either the row is stored with its ``seq`` and the counter moved past
        it, or nothing changed. A retained row replaces any retained row still waiting for
        the same topic, since the broker keeps only the last one anyway. A non-retained row
        also goes into the journal, whose oldest rows beyond ``journal_size`` are dropped.

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
            journaled = self._journaled
            if not retain:
                db.execute(
                    "INSERT INTO journal (seq, topic, payload) VALUES (?, ?, ?)",
                    (seq, topic, payload),
                )
                journaled += 1
                excess = journaled - self._journal_size
                if excess > 0:
                    db.execute(
                        "DELETE FROM journal WHERE seq IN "
                        "(SELECT seq FROM journal ORDER BY seq LIMIT ?)",
                        (excess,),
                    )
                    journaled -= excess
        self._journaled = journaled
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

    def journal_since(self, seq: int, limit: int) -> list[OutboxRow]:
        """Up to ``limit`` journaled (non-retained) payloads with a ``seq`` of at least ``seq``,
        oldest first, exactly as they were first stored."""
        rows = self._db.execute(
            "SELECT seq, topic, payload FROM journal WHERE seq >= ? ORDER BY seq LIMIT ?",
            (seq, limit),
        ).fetchall()
        return [OutboxRow(seq, topic, payload, False) for seq, topic, payload in rows]

    def journal_oldest(self) -> int | None:
        """The oldest ``seq`` the journal still holds, or ``None`` if it is empty."""
        (oldest,) = self._db.execute("SELECT min(seq) FROM journal").fetchone()
        return None if oldest is None else int(oldest)

    def requeue(self, rows: list[OutboxRow]) -> int:
        """Put ``rows`` back in the outbox under their own ``seq``, to be sent again in order.

        One transaction. A row still waiting for its acknowledgement is not doubled. Returns
        how many rows were queued again. The publisher sends them with the next drain (it
        wakes on its next :meth:`~bridge.mqtt.publisher.Publisher.publish`).
        """
        queued = 0
        with self._transaction() as db:
            for row in rows:
                cursor = db.execute(
                    "INSERT OR IGNORE INTO outbox (seq, topic, payload, retain) "
                    "VALUES (?, ?, ?, ?)",
                    (row.seq, row.topic, row.payload, int(row.retain)),
                )
                queued += cursor.rowcount
        return queued

    def get(self, key: str) -> bytes | None:
        """A value of the daemon's own state, or ``None``."""
        row = self._db.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
        return None if row is None else bytes(row[0])

    def put(self, key: str, value: bytes) -> None:
        """Store a value of the daemon's own state."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO kv (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def answer(self, command: str, transaction: str, now: float) -> StoredAnswer | None:
        """The answer kept for ``(command, transaction)``, unless it expired before ``now``."""
        row = self._db.execute(
            "SELECT digest, response FROM answered WHERE command = ? AND txn = ? AND expires >= ?",
            (command, transaction, now),
        ).fetchone()
        return None if row is None else StoredAnswer(bytes(row[0]), bytes(row[1]))

    def remember_answer(
        self,
        command: str,
        transaction: str,
        answer: StoredAnswer,
        *,
        expires: float,
        now: float,
    ) -> None:
        """Keep ``answer`` for ``(command, transaction)`` until ``expires`` (Unix seconds);
        the answers expired before ``now`` are dropped."""
        with self._transaction() as db:
            db.execute("DELETE FROM answered WHERE expires < ?", (now,))
            db.execute(
                "INSERT OR REPLACE INTO answered (command, txn, digest, response, expires) "
                "VALUES (?, ?, ?, ?, ?)",
                (command, transaction, answer.digest, answer.response, expires),
            )

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Make everything stored inside one transaction: all of it is on disk, or none.

        Nested batches join the outer one. The ``seq`` numbers handed out inside a batch that
        fails are not handed out again (``seq`` may have gaps; it is never reused).
        """
        if self._batched:
            yield
            return
        with self._transaction():
            self._batched = True
            try:
                yield
            finally:
                self._batched = False

    def checkpoint(self) -> None:
        """Copy the WAL into the database file, on a connection of its own.

        Safe to call from another thread (the daemon does, every few seconds): a PASSIVE
        checkpoint never blocks the writer, it only copies what is not being written.
        """
        db = sqlite3.connect(self.path, isolation_level=None)
        try:
            db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            db.close()

    def close(self) -> None:
        """Close the database and release the state directory (idempotent)."""
        if self._lock_fd < 0:
            return
        try:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
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
        if self._batched:
            yield self._db  # part of the batch's transaction
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            if self._db.in_transaction:
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
