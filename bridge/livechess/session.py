"""One client of the LiveChess API (pure): its calls answered, its feeds made.

:meth:`Session.receive` takes one text message and gives the messages to send back; a ``setup``
of a position that is not the game's, where setup is allowed, is handed to the shell as a
:class:`NewGame` to carry out (the table's ``new_game`` from that FEN), and
:meth:`Session.setup_done` answers it. :meth:`Session.changed` gives the feeds a change of a
table makes (none when nothing a client sees changed).

A feed of ``eboardevent`` (docs/livechess.md):

- right after the answer to ``subscribe``: ``serialnr``, ``flipped``, ``board``, ``clock``;
- then on every change of the board (each lift and place), of the clock, or of the moves:
  ``serialnr``, ``flipped``, ``san`` and ``match`` always; ``board``, ``clock`` and ``start``
  when they changed since the feed last said them;
- after a ``setup``: all of them, ``start`` the position set up and ``san`` empty.

``san`` is the moves since ``start``: before any ``setup``, the table's game from its start; a
``setup`` of the game's current position marks where it starts from then on (the lichess page
sends one again when it reconnects mid-game); a new game at the table (an arbiter's
``new_game``, or a ``setup`` of another position where allowed) starts it again from the new
game's start. A move superseded at the same ply (a rook-first castling, a piece moved on)
replaces the last SAN without lengthening the list. ``match`` says the board stands as the
position after them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import chess

from bridge.livechess import protocol
from bridge.livechess.hall import Hall, LiveTable
from bridge.livechess.protocol import CallError, Eboards, Flip, Setup, Subscribe, Unsubscribe


@dataclass(slots=True)
class Mark:
    """Where a feed's ``san`` starts: after ``offset`` moves of game ``game``, at ``start``."""

    game: str | None
    offset: int
    start: str


@dataclass(slots=True)
class Subscription:
    """One ``eboardevent`` feed of a client."""

    feed: int
    table: str
    serialnr: str
    """As the client subscribed with it: every message of the feed carries it."""
    flipped: bool = False
    mark: Mark | None = None
    sent: dict[str, object] = field(default_factory=dict)
    """What the feed said last, field by field (the clock without its time)."""
    busy: bool = False
    """A ``setup`` of this feed is being carried out: its feeds wait for the answer."""
    missed: bool = False
    """The table changed while the feed waited."""


@dataclass(frozen=True, slots=True)
class NewGame:
    """A ``setup`` for the shell to carry out: a new game at ``table`` from ``fen``."""

    call: int
    feed: int
    table: str
    fen: str


class Session:
    """One websocket's calls and feeds."""

    def __init__(self, hall: Hall, *, setup: bool) -> None:
        self.hall = hall
        self.setup_allowed = setup
        """Whether a ``setup`` of another position than the game's starts a new game."""
        self.feeds: dict[int, Subscription] = {}

    # -- calls ----------------------------------------------------------------------------------

    def receive(self, text: str | bytes, now_ms: int) -> tuple[list[str], NewGame | None]:
        """The messages answering one call; a setup for the shell to carry out, if any."""
        try:
            call = protocol.parse(text)
        except CallError as exc:
            return [protocol.error(exc.call_id, exc.message, now_ms)], None
        try:
            match call:
                case Eboards():
                    return [protocol.answer(call.id, self.eboards(), now_ms)], None
                case Subscribe():
                    return self._subscribe(call, now_ms), None
                case Unsubscribe():
                    self._feed(call.feed)
                    del self.feeds[call.feed]
                    return [protocol.answer(call.id, None, now_ms)], None
                case Flip():
                    self._feed(call.feed).flipped = call.flip
                    answer = protocol.answer(call.id, None, now_ms)
                    return [answer, *self.changed(self.feeds[call.feed].table, now_ms)], None
                case Setup():
                    return self._setup(call, now_ms)
        except CallError as exc:
            return [protocol.error(call.id, exc.message, now_ms)], None

    def eboards(self) -> list[dict[str, object]]:
        """The boards, in table id order, each flipped as this client flipped it."""
        return self.hall.eboards({sub.table for sub in self.feeds.values() if sub.flipped})

    def _feed(self, feed: int) -> Subscription:
        sub = self.feeds.get(feed)
        if sub is None:
            raise CallError(f"no feed {feed} on this connection: subscribe to a board first")
        return sub

    def _subscribe(self, call: Subscribe, now_ms: int) -> list[str]:
        table = self.hall.find(call.serialnr)
        if table is None:
            raise CallError(f"no board with serialnr {call.serialnr!r}: eboards lists them")
        sub = self.feeds[call.feed] = Subscription(call.feed, table.id, call.serialnr)
        board = table.placement()
        clock = table.clock
        sub.sent = {"flipped": False, "board": board, "clock": _untimed(clock)}
        first = {"serialnr": sub.serialnr, "flipped": False, "board": board, "clock": clock}
        return [protocol.answer(call.id, None, now_ms), protocol.feed(call.feed, first, now_ms)]

    def _setup(self, call: Setup, now_ms: int) -> tuple[list[str], NewGame | None]:
        sub = self._feed(call.feed)
        if sub.busy:
            raise CallError(f"a setup of feed {call.feed} is under way: wait for its answer")
        try:
            wanted = chess.Board(call.fen)
        except ValueError as exc:
            raise CallError(f"setup: {call.fen!r} is not a FEN ({exc})") from None
        if not wanted.is_valid():
            raise CallError(f"setup: {call.fen!r} is not a position a game can be played from")
        table = self.hall.tables[sub.table]
        position = table.view.position
        if position is not None and position.epd() == wanted.epd():
            sub.mark = Mark(table.view.game_id, len(table.view.moves), wanted.fen())
            return [protocol.answer(call.id, None, now_ms), self._full(sub, table, now_ms)], None
        if not self.setup_allowed:
            raise CallError(
                f"setup refused: the game at table {table.id} is the arbiter's and this server "
                "does not start new games; a setup of the game's current position is taken "
                "(it marks where san starts)"
            )
        sub.busy = True
        return [], NewGame(call.id, call.feed, table.id, wanted.fen())

    def setup_done(self, job: NewGame, error: str | None, now_ms: int) -> list[str]:
        """The answer to ``job``'s setup, now carried out (``error``: why it was not)."""
        sub = self.feeds.get(job.feed)
        if sub is None or sub.table != job.table:
            # Unsubscribed meanwhile: only the answer.
            if error is not None:
                return [protocol.error(job.call, error, now_ms)]
            return [protocol.answer(job.call, None, now_ms)]
        sub.busy = False
        table = self.hall.tables[sub.table]
        if error is not None:
            changes = self._changes(sub, table, now_ms) if sub.missed else []
            sub.missed = False
            return [protocol.error(job.call, error, now_ms), *changes]
        sub.missed = False
        sub.mark = Mark(table.view.game_id, len(table.view.moves), job.fen)
        return [protocol.answer(job.call, None, now_ms), self._full(sub, table, now_ms)]

    # -- feeds ----------------------------------------------------------------------------------

    def changed(self, table_id: str, now_ms: int) -> list[str]:
        """The feeds a change of table ``table_id`` makes (none if nothing shown changed)."""
        table = self.hall.tables.get(table_id)
        if table is None:
            return []
        out: list[str] = []
        for sub in self.feeds.values():
            if sub.table != table_id:
                continue
            if sub.busy:
                sub.missed = True
            else:
                out.extend(self._changes(sub, table, now_ms))
        return out

    def _shown(self, sub: Subscription, table: LiveTable) -> dict[str, object]:
        """What feed ``sub`` shows of ``table`` now, field by field."""
        mark = sub.mark
        if mark is not None and mark.game != table.view.game_id:
            sub.mark = mark = None  # a new game at the table: san from its start
        sans = table.sans
        return {
            "flipped": sub.flipped,
            "board": table.placement(flipped=sub.flipped),
            "clock": table.clock,
            "start": table.start_fen if mark is None else mark.start,
            "san": sans if mark is None else sans[mark.offset :],
            "match": table.matches,
        }

    def _changes(self, sub: Subscription, table: LiveTable, now_ms: int) -> list[str]:
        shown = self._shown(sub, table)
        kept = _kept(shown)
        differ = {name for name, value in kept.items() if sub.sent.get(name, _NEVER) != value}
        if not differ:
            return []
        sub.sent = kept
        param: dict[str, object] = {"serialnr": sub.serialnr, "flipped": sub.flipped}
        param.update((name, shown[name]) for name in ("board", "clock", "start") if name in differ)
        param.update(san=shown["san"], match=shown["match"])
        return [protocol.feed(sub.feed, param, now_ms)]

    def _full(self, sub: Subscription, table: LiveTable, now_ms: int) -> str:
        """The feed after a setup: every field."""
        shown = self._shown(sub, table)
        sub.sent = _kept(shown)
        return protocol.feed(sub.feed, {"serialnr": sub.serialnr, **shown}, now_ms)


_NEVER = object()
"""A field a feed never said."""


def _kept(shown: dict[str, object]) -> dict[str, object]:
    """What a feed remembers of what it said: the clock without its time."""
    return {name: _untimed(value) if name == "clock" else value for name, value in shown.items()}


def _untimed(value: object) -> object:
    """A clock without its ``time`` (a clock read again at the same times is no change)."""
    if isinstance(value, dict):
        return {key: item for key, item in value.items() if key != "time"}
    return value
