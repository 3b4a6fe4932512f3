"""What the relay saw, kept on disk so that a restarted relay knows each game as before.

The relay is a pure fold of the payloads it received (:mod:`bridge.relay.game`), so it keeps
exactly those: one SQLite row per payload it applied (touches excepted: the broadcast does not
need them), with the time it arrived and whether it was a retained copy. After a restart the
rows are folded again in order, then the tables' retained state and, for what happened while the
relay was away, a ``replay`` from each table fill in the rest. Rows of a table's earlier games
are deleted when a new game starts there.

Writes are batched: :meth:`Store.add` only queues; :meth:`Store.take` hands the queue over and
:meth:`Store.write` (off the event loop) writes it in one transaction. A crash loses at most
the last batch, which the tables' ``replay`` brings back.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final

DB_NAME: Final = "relay.sqlite3"

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS seen (
    id INTEGER PRIMARY KEY,
    tbl TEXT NOT NULL,
    game TEXT NOT NULL,
    received REAL NOT NULL,
    suffix TEXT NOT NULL,
    retained INTEGER NOT NULL,
    payload BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS seen_tbl ON seen (tbl, id);
"""


@dataclass(frozen=True, slots=True)
class Row:
    """One payload as the relay received it."""

    table: str
    game: str
    received: float
    suffix: str
    retained: bool
    payload: bytes


class Store:
    """The relay's rows in ``directory``/relay.sqlite3."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / DB_NAME
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._queue: list[Row] = []
        self._lock = threading.Lock()
        self._games: dict[str, str] = {}

    def load(self) -> list[Row]:
        """Every row, in the order received."""
        with self._lock:
            rows = self._db.execute(
                "SELECT tbl, game, received, suffix, retained, payload FROM seen ORDER BY id"
            ).fetchall()
        out = [Row(t, g, r, s, bool(k), bytes(p)) for t, g, r, s, k, p in rows]
        for row in out:
            self._games[row.table] = row.game
        return out

    def add(self, row: Row) -> None:
        """Queue one row (written by the next :meth:`flush`)."""
        self._queue.append(row)

    @property
    def queued(self) -> int:
        """Rows waiting for :meth:`flush`."""
        return len(self._queue)

    def take(self) -> list[Row]:
        """The queued rows, handed over for :meth:`write` (call it on the event loop)."""
        rows, self._queue = self._queue, []
        return rows

    def flush(self) -> int:
        """Write the queued rows now."""
        return self.write(self.take())

    def write(self, rows: list[Row]) -> int:
        """Write ``rows`` in one transaction (callable from a worker thread)."""
        if not rows:
            return 0
        with self._lock:
            db = self._db
            db.execute("BEGIN")
            try:
                for row in rows:
                    cursor = db.execute(
                        "INSERT INTO seen (tbl, game, received, suffix, retained, payload) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (
                            row.table,
                            row.game,
                            row.received,
                            row.suffix,
                            int(row.retained),
                            row.payload,
                        ),
                    )
                    if self._games.get(row.table) not in (None, row.game):
                        db.execute(
                            "DELETE FROM seen WHERE tbl = ? AND id < ? AND game != ?",
                            (row.table, cursor.lastrowid, row.game),
                        )
                    self._games[row.table] = row.game
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return len(rows)

    def close(self) -> None:
        """Write what is queued and close the database."""
        self.flush()
        with self._lock:
            self._db.close()
