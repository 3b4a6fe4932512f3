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
the epoch increment at open *is* made durable (the WAL and the directory synced: :meth:`sync`)
before anything of the new epoch can be sent, so ``(epoch, seq)`` stays unique even if a ``seq``
of the lost tail is handed out again. The daemon runs that sync in a thread while it opens the
board (``defer_sync=True``), so that the milliseconds of an fsync are not added to its start.
``synchronous="FULL"`` is available where the disk is cheap to sync.

The ``seq`` counter is kept in its own row, never derived from the rows left, so it continues
across acknowledgements, restarts and epochs. One process at a time: the state directory is
locked while an :class:`Outbox` is open.

The journal: every non-retained payload is also kept, with its topic and ``seq``, in a bounded
journal table (at least the last ``journal_size`` rows, pruned in the same transaction as an
insert, a hundredth of that size at a time), so that a consumer that missed events can ask for
them again (the ``replay`` command):
:meth:`Outbox.journal_since` reads them and :meth:`Outbox.requeue` puts those exact payloads back
in the outbox under their original ``seq``. Consumers drop the copies they already have by
``(epoch, seq)``. The journal table was added without changing the schema version: older
versions of the program ignore it.

The answered requests: each arbiter request carried out is kept, with its response, until its
``expires_at`` (:meth:`Outbox.remember_answer`, :meth:`Outbox.answer`), so that a repeat of it,
even after a restart, is answered the same and carried out no second time. Added like the journal,
without a schema version change.

The rows waiting are also held in memory (up to :data:`TAIL_ROWS`), so that the publisher's
:meth:`Outbox.pending` on every step is answered without a query; the disk is queried only while
rows may wait there that memory does not hold (left from before the open, requeued, from a batch
that raised, or more than :data:`TAIL_ROWS` of them), until the last of those is acknowledged.

:meth:`Outbox.batch` makes everything stored inside it one transaction: a move's events and the
game saved with them, a request's changes, its response and its record.

When the disk cannot be written (full, failing, or remounted read-only), nothing raises: the
outbox keeps what it could not write in memory (:attr:`Outbox.trouble` says why, and
``on_trouble`` is told), sends it all the same, and writes it in one transaction when
:meth:`Outbox.retry` succeeds. What was sent and acknowledged meanwhile is not written (its
journal copy is). Only a crash before the space returns loses the unwritten part. A restart on a
full disk would fail at the epoch increment, so the outbox keeps a reserve file
(``outbox.reserve``, :mod:`bridge.mqtt.state_dir`) and gives back one step of it each time it
opens on a full disk; it grows it back once it can write again. If even that is gone, the epoch
of that run is kept in memory and its ``seq`` numbers jump ahead by a random amount, so that
``(epoch, seq)`` stays unique should that run also end before the space returns.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Literal, Self

from bridge.mqtt import state_dir as disk
from bridge.mqtt.records import (
    SCHEMA,
    SCHEMA_VERSION,
    OutboxRow,
    PayloadFactory,
    StoredAnswer,
    Unwritten,
)
from bridge.mqtt.state_dir import OutboxUnavailableError, cannot_write

SEQ_JUMP: Final = (1_000_000, 1_000_000_000)
"""Range of the random jump of ``seq`` in a run whose epoch could not be written."""
JOURNAL_SIZE: Final = 10_000
"""Non-retained payloads kept for replay (about a day of a busy table with touch events)."""
TAIL_ROWS: Final = 1_000
"""Rows stored and not yet acknowledged that the outbox also holds in memory, so that sending
them needs no query; past this many (a broker out of reach), the disk alone holds them."""

_SET_SEQ: Final = "UPDATE counter SET value = ? WHERE name = 'seq'"

_Write = Callable[[sqlite3.Connection], None]
_Keep = Callable[[], None]


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
        defer_sync: bool = False,
    ) -> None:
        """Open (creating if needed) the outbox in ``state_dir`` and count one more epoch.

        ``journal_size`` is how many non-retained payloads the journal keeps for replay. With
        ``defer_sync``, the caller calls :meth:`sync` before sending anything of the new epoch
        (otherwise the open does).

        Raises:
            ValueError: ``journal_size`` is below 1.
            OutboxLockedError: another process has it open.
            OutboxUnavailableError: the disk has no room at all, not even the reserve's.
            sqlite3.Error: the database cannot be opened or is damaged.
        """
        if journal_size < 1:
            raise ValueError(f"journal_size must be at least 1, got {journal_size}")
        self._journal_size = journal_size
        self._prune_step = max(1, journal_size // 100)
        self._batch: list[_Keep] | None = None
        self._tail: dict[int, OutboxRow] = {}
        """Rows stored by this process and not yet acknowledged (or replaced), in ``seq``
        order: what :meth:`pending` returns without a query while :attr:`_unseen` is 0."""
        self._tail_retained: dict[str, int] = {}
        """The ``seq`` of the retained row of each topic in :attr:`_tail`."""
        self._unseen = 0
        """Rows waiting on disk (or in memory, see :class:`Unwritten`) with a ``seq`` up to
        this may be missing from :attr:`_tail` (left from before the open, requeued, or from
        a batch that raised): :meth:`pending` queries until it has seen them go. 0: none."""
        self._depth = 0
        self._unwritten: Unwritten | None = None
        self.trouble: str | None = None
        """Why the disk cannot be written now (``None``: everything is on disk)."""
        self.on_trouble: Callable[[str | None], None] | None = None
        """Told when the disk stops taking writes (the reason) and when it takes them again."""
        state_dir.mkdir(parents=True, exist_ok=True)
        self.state_dir = state_dir
        self.path = state_dir / disk.DB_NAME
        self._reserve = state_dir / disk.RESERVE_NAME
        self._lock_fd = disk.lock(state_dir / disk.LOCK_NAME)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None)
        except BaseException:
            os.close(self._lock_fd)
            raise
        try:
            self.epoch, self._last_seq = self._open_on_any_disk(synchronous)
        except BaseException:
            self._db.close()
            os.close(self._lock_fd)
            raise
        if self._unwritten is None:
            disk.grow_reserve(self._reserve)
            if not defer_sync:
                self.sync()

    def _open_on_any_disk(self, synchronous: str) -> tuple[int, int]:
        """Open, counting the epoch; on a full disk, with the reserve's help or without."""
        while True:
            try:
                return self._open(synchronous)
            except sqlite3.Error as exc:
                reason = cannot_write(exc, self.state_dir)
                if reason is None:
                    raise
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if not disk.shrink_reserve(self._reserve):
                    break
        # No reserve left: run on an epoch kept in memory (see the module docstring), if the
        # disk lets us read (a database closed cleanly needs room for its WAL index even then).
        try:
            epoch, last_seq = self._counters()
        except sqlite3.Error as exc:
            raise OutboxUnavailableError(
                self.state_dir, cannot_write(exc, self.state_dir) or str(exc)
            ) from exc
        self._unwritten = Unwritten(epoch=True)
        self.trouble = reason
        return epoch + 1, last_seq + random.randint(*SEQ_JUMP)

    def _open(self, synchronous: str) -> tuple[int, int]:
        db = self._db
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={synchronous}")  # the epoch is synced by sync()
        (version,) = db.execute("PRAGMA user_version").fetchone()
        if version > SCHEMA_VERSION:
            raise sqlite3.DatabaseError(
                f"{self.path} has outbox schema {version}, newer than this version knows"
            )
        db.executescript(
            "BEGIN IMMEDIATE;"
            + SCHEMA
            + "UPDATE counter SET value = value + 1 WHERE name = 'epoch';"
            + f"PRAGMA user_version = {SCHEMA_VERSION};"
            + "COMMIT;"
        )
        # No automatic checkpoint inside a commit (it syncs the database file: a stall of up to
        # tens of ms on the event loop, more on an SD card); ``checkpoint()`` runs off the loop.
        db.execute("PRAGMA wal_autocheckpoint=0")
        return self._counters()

    def _counters(self) -> tuple[int, int]:
        """The epoch and the last ``seq`` on disk."""
        db = self._db
        counters = dict(db.execute("SELECT name, value FROM counter").fetchall())
        (max_row,) = db.execute("SELECT coalesce(max(seq), 0) FROM outbox").fetchone()
        (journaled,) = db.execute("SELECT count(*) FROM journal").fetchone()
        self._journaled = int(journaled)
        self._unseen = int(max_row)  # rows left on disk (if any) are not in the tail
        return int(counters["epoch"]), max(int(counters["seq"]), int(max_row))

    @property
    def last_seq(self) -> int:
        """The last ``seq`` handed out (0 before the first)."""
        return self._last_seq

    # --- writing -------------------------------------------------------------------------------

    def add(self, topic: str, payload_factory: PayloadFactory, retain: bool = False) -> int:
        """Allocate the next ``seq``, build its payload and store the row; return the ``seq``.

        One transaction: either the row is stored with its ``seq`` and the counter moved past
        it, or nothing changed. A retained row replaces any retained row still waiting for
        the same topic, since the broker keeps only the last one anyway. A non-retained row
        also goes into the journal, whose oldest rows beyond ``journal_size`` are dropped.

        ``payload_factory(epoch, seq)`` must not touch the outbox.
        """
        seq = self._last_seq + 1
        row = OutboxRow(seq, topic, payload_factory(self.epoch, seq), retain)

        def write(db: sqlite3.Connection) -> None:
            self._save_seq(db, seq)
            if retain:
                db.execute("DELETE FROM outbox WHERE retain AND topic = ?", (topic,))
            db.execute(
                "INSERT INTO outbox (seq, topic, payload, retain) VALUES (?, ?, ?, ?)",
                (seq, topic, row.payload, int(retain)),
            )
            if not retain:
                db.execute(
                    "INSERT INTO journal (seq, topic, payload) VALUES (?, ?, ?)",
                    (seq, topic, row.payload),
                )
                self._journaled += 1
                self._prune_journal(db)

        def keep() -> None:
            kept = self._kept()
            if retain:
                for old in [r for r in kept.rows.values() if r.retain and r.topic == topic]:
                    del kept.rows[old.seq]
                kept.acks.update(self._disk_seqs("retain AND topic = ?", (topic,)))
            kept.rows[seq] = row
            if not retain:
                kept.journal.append(row)
                del kept.journal[: -self._journal_size]

        self._write(write, keep)
        self._last_seq = seq
        tail = self._tail
        if retain:
            replaced = self._tail_retained.get(topic)
            if replaced is not None:
                del tail[replaced]
            self._tail_retained[topic] = seq
        tail[seq] = row
        if len(tail) > TAIL_ROWS:
            self._forget_tail()
        return seq

    def _forget_tail(self) -> None:
        """Leave the rows waiting to the disk alone, until :meth:`pending` has seen them go."""
        self._tail.clear()
        self._tail_retained.clear()
        self._unseen = self._last_seq

    def next_seq(self) -> int:
        """Allocate a ``seq`` for a payload that is not stored (the Last Will, status)."""
        seq = self._last_seq + 1

        def write(db: sqlite3.Connection) -> None:
            self._save_seq(db, seq)

        self._write(write, lambda: None)  # the counter is written with the rest, later
        self._last_seq = seq
        return seq

    def ack(self, seq: int) -> None:
        """The broker acknowledged ``seq``: delete its row (no-op if already gone)."""

        def write(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM outbox WHERE seq = ?", (seq,))

        def keep() -> None:
            kept = self._kept()
            if kept.rows.pop(seq, None) is None:
                kept.acks.add(seq)

        self._write(write, keep)
        row = self._tail.pop(seq, None)
        if row is not None and row.retain:
            del self._tail_retained[row.topic]

    def ack_many(self, seqs: Sequence[int]) -> None:
        """The broker acknowledged each of ``seqs``: delete their rows in one transaction."""
        if len(seqs) == 1:
            self.ack(seqs[0])
            return
        with self.batch():
            for seq in seqs:
                self.ack(seq)

    @property
    def in_batch(self) -> bool:
        """Inside :meth:`batch`: what was stored is not committed yet (not to be sent)."""
        return self._depth > 0

    def requeue(self, rows: list[OutboxRow]) -> int:
        """Put ``rows`` back in the outbox under their own ``seq``, to be sent again in order.

        One transaction. A row still waiting for its acknowledgement is not doubled. Returns
        how many rows were queued again. The publisher sends them with the next drain (it
        wakes on its next :meth:`~bridge.mqtt.publisher.Publisher.publish`).
        """
        fresh = [row for row in rows if not self.is_pending(row.seq)]

        def write(db: sqlite3.Connection) -> None:
            db.executemany(
                "INSERT OR IGNORE INTO outbox (seq, topic, payload, retain) VALUES (?, ?, ?, ?)",
                [(row.seq, row.topic, row.payload, int(row.retain)) for row in fresh],
            )

        def keep() -> None:
            kept = self._kept()
            for row in fresh:
                kept.acks.discard(row.seq)
                kept.rows[row.seq] = row

        self._write(write, keep)
        if fresh:
            self._unseen = max(self._unseen, max(row.seq for row in fresh))
        return len(fresh)

    def put(self, key: str, value: bytes) -> None:
        """Store a value of the daemon's own state."""

        def write(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO kv (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

        def keep() -> None:
            self._kept().kv[key] = value

        self._write(write, keep)

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

        def write(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM answered WHERE expires < ?", (now,))
            db.execute(
                "INSERT OR REPLACE INTO answered (command, txn, digest, response, expires) "
                "VALUES (?, ?, ?, ?, ?)",
                (command, transaction, answer.digest, answer.response, expires),
            )

        def keep() -> None:
            self._kept().answers[(command, transaction)] = (answer, expires)

        self._write(write, keep)

    def _save_seq(self, db: sqlite3.Connection, seq: int) -> None:
        """Move the counter to ``seq`` in this transaction (in a batch: once, at its commit)."""
        if self._batch is None:
            db.execute(_SET_SEQ, (seq,))

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Make everything stored inside one transaction: all of it is on disk, or none.

        Nested batches join the outer one. Nothing inside may await (the connection is shared
        with the sender's acknowledgements). If the disk refuses the transaction, all of it is
        kept in memory instead (see the module docstring). The ``seq`` numbers handed out
        inside a batch that raises are not handed out again (``seq`` may have gaps).
        """
        self._depth += 1
        try:
            if self._depth > 1 or self._unwritten is not None:
                yield
                return
            self._db.execute("BEGIN IMMEDIATE")
            self._batch = []
            seq_before = self._last_seq
            try:
                yield
            except BaseException:
                self._batch = None
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                self._forget_tail()  # what of it was rolled back, the disk tells
                raise
            kept, self._batch = self._batch, None
            if kept is not None:
                try:
                    if self._last_seq != seq_before:
                        self._db.execute(_SET_SEQ, (self._last_seq,))
                    self._db.execute("COMMIT")
                except sqlite3.Error as exc:
                    self._fall_back(exc, kept)
        finally:
            self._depth -= 1

    def _write(self, write: _Write, keep: _Keep) -> None:
        """Write on disk (in the batch's transaction, if any), or keep in memory."""
        if self._unwritten is not None:
            keep()
            return
        batch = self._batch
        if batch is not None:
            batch.append(keep)
            try:
                write(self._db)
            except sqlite3.Error as exc:
                self._batch = None
                self._fall_back(exc, batch)
            return
        try:
            self._db.execute("BEGIN IMMEDIATE")
            write(self._db)
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._fall_back(exc, [keep])

    def _fall_back(self, exc: sqlite3.Error, keeps: list[_Keep]) -> None:
        """The disk refused a transaction: undo it and keep all of it in memory instead."""
        reason = cannot_write(exc, self.state_dir)
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")
        if reason is None:
            raise exc
        self._journaled = self._count_journal()
        self._set_trouble(reason)
        for keep in keeps:
            keep()

    def _kept(self) -> Unwritten:
        if self._unwritten is None:
            self._unwritten = Unwritten()
        return self._unwritten

    def _set_trouble(self, reason: str | None) -> None:
        changed = reason != self.trouble
        self.trouble = reason
        if reason is None:
            self._unwritten = None
        else:
            self._kept()
        if changed and self.on_trouble is not None:
            self.on_trouble(reason)

    def retry(self) -> bool:
        """Write what the disk would not take, in one transaction; true once all is on disk."""
        kept = self._unwritten
        if kept is None:
            return True
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            if kept.epoch:
                db.execute("UPDATE counter SET value = ? WHERE name = 'epoch'", (self.epoch,))
            db.execute(_SET_SEQ, (self._last_seq,))
            db.executemany("DELETE FROM outbox WHERE seq = ?", [(seq,) for seq in kept.acks])
            db.executemany(
                "INSERT OR IGNORE INTO outbox (seq, topic, payload, retain) VALUES (?, ?, ?, ?)",
                [(r.seq, r.topic, r.payload, int(r.retain)) for r in kept.rows.values()],
            )
            db.executemany(
                "INSERT OR IGNORE INTO journal (seq, topic, payload) VALUES (?, ?, ?)",
                [(r.seq, r.topic, r.payload) for r in kept.journal],
            )
            self._journaled = self._count_journal()
            self._prune_journal(db)
            db.executemany(
                "INSERT INTO kv (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                list(kept.kv.items()),
            )
            db.executemany(
                "INSERT OR REPLACE INTO answered (command, txn, digest, response, expires) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    (command, txn, answer.digest, answer.response, expires)
                    for (command, txn), (answer, expires) in kept.answers.items()
                ],
            )
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            reason = cannot_write(exc, self.state_dir)
            if db.in_transaction:
                db.execute("ROLLBACK")
            if reason is None:
                raise
            self._journaled = self._count_journal()
            self._set_trouble(reason)
            return False
        self._set_trouble(None)
        disk.grow_reserve(self._reserve)
        return True

    def _prune_journal(self, db: sqlite3.Connection) -> None:
        """Drop the oldest journaled rows beyond ``journal_size``, a hundredth of it at a time
        (not one row with every insert once it is full)."""
        excess = self._journaled - self._journal_size
        if excess >= self._prune_step:
            db.execute(
                "DELETE FROM journal WHERE seq IN (SELECT seq FROM journal ORDER BY seq LIMIT ?)",
                (excess,),
            )
            self._journaled -= excess

    def _count_journal(self) -> int:
        (journaled,) = self._db.execute("SELECT count(*) FROM journal").fetchone()
        return int(journaled)

    # --- reading -------------------------------------------------------------------------------

    def pending(self, limit: int = 100) -> list[OutboxRow]:
        """Up to ``limit`` stored rows, oldest ``seq`` first."""
        if not self._unseen:
            return list(itertools.islice(self._tail.values(), limit))
        rows = self._pending_stored(limit)
        if all(row.seq in self._tail for row in rows) and (
            len(rows) < limit or rows[-1].seq > self._unseen
        ):
            self._unseen = 0  # every row waiting is in the tail again
        return rows

    def _pending_stored(self, limit: int) -> list[OutboxRow]:
        kept = self._unwritten
        skip = 0 if kept is None else len(kept.acks)
        rows = [
            OutboxRow(seq, topic, payload, bool(retain))
            for seq, topic, payload, retain in self._db.execute(
                "SELECT seq, topic, payload, retain FROM outbox ORDER BY seq LIMIT ?",
                (limit + skip,),
            ).fetchall()
        ]
        if kept is None:
            return rows
        rows = [row for row in rows if row.seq not in kept.acks]
        return sorted(rows + list(kept.rows.values()), key=lambda row: row.seq)[:limit]

    def is_pending(self, seq: int) -> bool:
        """Whether the row of ``seq`` is still stored (not yet acknowledged)."""
        if seq in self._tail:
            return True
        if seq > self._unseen:
            return False
        kept = self._unwritten
        if kept is not None:
            if seq in kept.rows:
                return True
            if seq in kept.acks:
                return False
        row = self._db.execute("SELECT 1 FROM outbox WHERE seq = ?", (seq,)).fetchone()
        return row is not None

    def count(self) -> int:
        """The number of rows waiting for acknowledgement."""
        if not self._unseen:
            return len(self._tail)
        (count,) = self._db.execute("SELECT count(*) FROM outbox").fetchone()
        kept = self._unwritten
        return int(count) if kept is None else int(count) - len(kept.acks) + len(kept.rows)

    def journal_since(self, seq: int, limit: int) -> list[OutboxRow]:
        """Up to ``limit`` journaled (non-retained) payloads with a ``seq`` of at least ``seq``,
        oldest first, exactly as they were first stored."""
        rows = [
            OutboxRow(seq, topic, payload, False)
            for seq, topic, payload in self._db.execute(
                "SELECT seq, topic, payload FROM journal WHERE seq >= ? ORDER BY seq LIMIT ?",
                (seq, limit),
            ).fetchall()
        ]
        kept = self._unwritten
        if kept is not None:
            rows += [row for row in kept.journal if row.seq >= seq]
        return rows[:limit]

    def journal_oldest(self) -> int | None:
        """The oldest ``seq`` the journal still holds, or ``None`` if it is empty."""
        (oldest,) = self._db.execute("SELECT min(seq) FROM journal").fetchone()
        if oldest is not None:
            return int(oldest)
        kept = self._unwritten
        return kept.journal[0].seq if kept is not None and kept.journal else None

    def get(self, key: str) -> bytes | None:
        """A value of the daemon's own state, or ``None``."""
        kept = self._unwritten
        if kept is not None and key in kept.kv:
            return kept.kv[key]
        row = self._db.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
        return None if row is None else bytes(row[0])

    def answer(self, command: str, transaction: str, now: float) -> StoredAnswer | None:
        """The answer kept for ``(command, transaction)``, unless it expired before ``now``."""
        kept = self._unwritten
        if kept is not None and (command, transaction) in kept.answers:
            answer, expires = kept.answers[(command, transaction)]
            return answer if expires >= now else None
        row = self._db.execute(
            "SELECT digest, response FROM answered WHERE command = ? AND txn = ? AND expires >= ?",
            (command, transaction, now),
        ).fetchone()
        return None if row is None else StoredAnswer(bytes(row[0]), bytes(row[1]))

    def _disk_seqs(self, where: str, args: tuple[object, ...]) -> list[int]:
        rows = self._db.execute(f"SELECT seq FROM outbox WHERE {where}", args).fetchall()
        return [int(seq) for (seq,) in rows]

    # --- upkeep --------------------------------------------------------------------------------

    def sync(self) -> None:
        """Make every commit so far durable: sync the WAL file and the state directory.

        Safe to call from another thread (the daemon runs it while it opens the board).
        """
        disk.sync(self.path, self.state_dir)

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
        """Close the database and release the state directory (idempotent).

        What the disk would not take is tried once more; what is still unwritten is lost.
        """
        if self._lock_fd < 0:
            return
        try:
            with contextlib.suppress(sqlite3.Error):
                self.retry()
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
