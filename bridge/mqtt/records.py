"""What the outbox stores: its SQLite schema, its rows, and what it keeps in memory instead
while the disk refuses writes (:class:`Unwritten`). Plain records: the outbox
(:mod:`bridge.mqtt.outbox`) reads and writes them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import msgspec

SCHEMA_VERSION: Final = 1
"""The outbox database's ``user_version``; a newer one is refused."""

SCHEMA: Final = """
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
"""The tables, created if missing: the counters (``epoch``, ``seq``), the rows waiting for
the broker, the journal kept for replay, the daemon's own values (``kv``) and the answered
requests. The journal and the answered requests were added without a schema version change:
older versions of the program ignore them."""


class StoredAnswer(msgspec.Struct, frozen=True):
    """A request answered before: the digest of the request and the response sent."""

    digest: bytes
    response: bytes


class OutboxRow(msgspec.Struct, frozen=True):
    """One stored payload waiting for the broker's acknowledgement."""

    seq: int
    topic: str
    payload: bytes
    retain: bool


PayloadFactory = Callable[[int, int], bytes]
"""Builds the payload for ``(epoch, seq)``."""


class Unwritten(msgspec.Struct):
    """What the disk would not take yet, kept in memory until :meth:`Outbox.retry`."""

    rows: dict[int, OutboxRow] = msgspec.field(default_factory=dict)
    journal: list[OutboxRow] = msgspec.field(default_factory=list)
    kv: dict[str, bytes] = msgspec.field(default_factory=dict)
    answers: dict[tuple[str, str], tuple[StoredAnswer, float]] = msgspec.field(default_factory=dict)
    acks: set[int] = msgspec.field(default_factory=set)
    """Rows on disk that were sent (or replaced) but could not be deleted."""
    epoch: bool = False
    """The epoch increment of this run is not on disk."""
