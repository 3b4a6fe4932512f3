"""All the tables the relay follows, and their PGN as HTTP serves it (pure).

:class:`Room` keeps one :class:`~bridge.relay.game.RelayTable` per table id seen on the broker,
decides which belong to the round (``[relay] round``: only the tables assigned to it), orders
them (board number, then table id) and caches each PGN document with an ETag made from its text:
a poller every 2 s gets ``304 Not Modified`` until something is shown that was not, and the
same text has the same ETag after a restart of the relay.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from bridge.relay import pgn
from bridge.relay.game import RelayTable
from bridge.views.model import natural_key
from bridge.wire.payloads import Envelope

MAX_TABLES: Final = 10_000
"""Tables the relay follows at most (a foreign publisher cannot grow it without bound)."""


@dataclass(frozen=True, slots=True)
class Document:
    """A PGN text with what HTTP caching needs."""

    text: str
    etag: str
    """A strong ETag, quotes included."""
    modified: float
    """Wall-clock seconds when this text first appeared (``Last-Modified``)."""


class Room:
    """The tables of a venue as the relay sees them."""

    def __init__(self, broadcast: pgn.Broadcast, *, round_filter: str | None = None) -> None:
        self.broadcast = broadcast
        self.round_filter = round_filter
        self.tables: dict[str, RelayTable] = {}
        self.version = 0
        self._round: tuple[tuple[int, float | None], Document] | None = None
        self._texts: dict[str, tuple[tuple[int, pgn.Shown], str]] = {}
        self._documents: dict[str, Document] = {}

    # -- folding -----------------------------------------------------------------------------

    def table(self, table_id: str) -> RelayTable | None:
        """The table with this id, or ``None`` if it was never seen."""
        return self.tables.get(table_id)

    def apply(
        self,
        table_id: str,
        envelope: Envelope,
        *,
        suffix: str,
        received: float,
        retained: bool = False,
    ) -> bool:
        """Fold one payload into its table; whether anything changed.

        Raises:
            PayloadError: the payload's ``data`` does not fit its type.
            OverflowError: already :data:`MAX_TABLES` tables and this is a new one.
        """
        table = self.tables.get(table_id)
        if table is None:
            if len(self.tables) >= MAX_TABLES:
                raise OverflowError(f"more than {MAX_TABLES} tables; ignoring {table_id!r}")
            table = self.tables[table_id] = RelayTable(table_id)
        changed = table.apply(envelope, suffix=suffix, received=received, retained=retained)
        if changed:
            self.version += 1
        return changed

    # -- the round ---------------------------------------------------------------------------

    def included(self, table: RelayTable) -> bool:
        """Whether the table's game belongs to the broadcast round."""
        if table.game_id is None:
            return False
        return self.round_filter is None or table.view.round == self.round_filter

    def round_tables(self) -> list[RelayTable]:
        """The tables of the round, by board number, then table id."""
        return sorted((t for t in self.tables.values() if self.included(t)), key=_order)

    def __iter__(self) -> Iterator[RelayTable]:
        return iter(sorted(self.tables.values(), key=_order))

    def round_document(self, now: float, wall: float) -> Document:
        """``/round.pgn`` at ``now`` (relay clock); ``wall`` dates a new text."""
        delay = self.broadcast.delay
        cached = self._round
        if cached is not None:
            (version, due), document = cached
            if version == self.version and (due is None or now < due):
                return document
        tables = self.round_tables()
        text = "\n".join(self._text(table, now) for table in tables)
        due_times = (
            [t for t in (pgn.next_change(x, now, delay) for x in tables) if t is not None]
            if delay > 0
            else []
        )
        document = self._document(text, wall, cached[1] if cached else None)
        self._round = ((self.version, min(due_times) if due_times else None), document)
        return document

    def next_due(self, now: float) -> float | None:
        """When delayed moves next come due in the round's PGN (``None``: none waiting)."""
        delay = self.broadcast.delay
        if delay <= 0:
            return None
        times = [pgn.next_change(table, now, delay) for table in self.round_tables()]
        due = [t for t in times if t is not None]
        return min(due) if due else None

    def table_document(self, table_id: str, now: float, wall: float) -> Document | None:
        """``/table/{id}.pgn`` at ``now``, or ``None`` for a table never seen."""
        table = self.tables.get(table_id)
        if table is None or table.game_id is None:
            return None
        text = self._text(table, now)
        cached = self._documents.get(table_id)
        document = self._document(text, wall, cached)
        self._documents[table_id] = document
        return document

    def _text(self, table: RelayTable, now: float) -> str:
        """The table's PGN text, made again only when what is shown of it changed."""
        key = (table.version, pgn.shown(table, now, self.broadcast.delay))
        cached = self._texts.get(table.table)
        if cached is not None and cached[0] == key:
            return cached[1]
        text = pgn.table_pgn(table, now, self.broadcast)
        self._texts[table.table] = (key, text)
        return text

    @staticmethod
    def _document(text: str, wall: float, before: Document | None) -> Document:
        digest = hashlib.sha256(text.encode()).hexdigest()[:32]
        etag = f'"{digest}"'
        if before is not None and before.etag == etag:
            return before
        return Document(text=text, etag=etag, modified=wall)


def _order(table: RelayTable) -> tuple[int, list[tuple[int, int | str]]]:
    number = table.view.board_number
    board = int(number) if number is not None and number.isdigit() else 1_000_000
    return board, natural_key(table.table)
