"""One table's game as the relay keeps it, folded from the table's payloads (pure).

:class:`RelayTable` applies each payload to the views' :class:`~bridge.views.model.TableView`
(which drops duplicates by ``(epoch, seq)``, applies superseding moves and takes each retained
``game`` snapshot, arbiters' corrections included) and keeps, beside it, what a broadcast and
the arbiters' page need and a snapshot does not carry:

- the clock after each move, for ``[%clk]`` (from the move, or better from the press that
  completed it);
- when each move became *final*: when its clock press came, or the opponent's reply, or the
  result. A move that can still be replaced (a rook-first castling, a piece released and moved
  on) never reaches a broadcast, which would show the first version as a variation;
- the comments where the Laws changed the course (an illegal move and its penalty, an incorrect
  claim, an arbiter's correction), and the history of alerts with who closed them;
- the game split into *parts* where no legal move leads on: an illegal move that stood (nobody
  claimed before the opponent moved: 1997 B.5 and C.3, 2018 A.4.2) leaves a position that no
  legal move reaches, which a PGN cannot hold and lichess refuses ("No move found"). The moves
  after it become a new part starting from that position (``[FEN]``), linked to the first by
  headers and comments (:mod:`bridge.relay.pgn`). An arbiter's ``set_position`` starts a part
  too.

How the position after an illegal move is found, from what the table publishes. The table's
``illegal_move_stood`` alert comes just before the reply that made the move stand; it gives the
position the illegal move left (``details.fen``), the position before it (``fen_before``), the
move (``details.move``, ``None`` for a press without a move) and who made it, and its ``ply`` is
the ply of that position (the reply is the next one). The moves are replayed from the start with
python-chess; the move of the ply after a known ``illegal_move_stood`` starts a new part from
that position (moves recorded for the illegal ply are dropped from the part before: the engine
took them back). Then the table's ``game`` snapshot restarts from that position (its
``start_fen``): the parts already split off are kept.

Without that alert (a payload lost), a move that is not legal where it stands is either the
illegal move itself (its piece is the mover's: the position is the board after it) or the first
move from the irregular position, which is then the position after that move (its ``fen``) with
the move taken back; the squares the engine named in its ``illegal_move`` alert tell whether
the square the move captured on was touched by the illegal move.

:class:`Gaps` notices payloads that never came (a ``seq`` skipped for longer than
:data:`GAP_GRACE`), so that the shell asks the table for a ``replay``. :class:`Backfill` does the
same for a game this relay joined under way: its moves known only from the snapshot have no
clock times, so the table is asked to replay the game's earlier events (its journal is bounded:
what it no longer holds stays unknown).

Time: every entry point takes ``received`` (the relay's clock when the payload arrived), never
reads a clock.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

import chess
import msgspec

from bridge.views.model import PayloadError, TableView, format_seconds, move_number
from bridge.wire import payloads
from bridge.wire.commands import Response
from bridge.wire.payloads import AlertData, ClockData, Envelope, MoveData, MoveRecord

GAP_GRACE: Final = 3.0
"""Seconds a skipped ``seq`` may still arrive (out of order after a reconnect) before a replay.

After a reconnect the daemon sends its ``online`` status and then drains what it queued while
offline, so payloads with lower ``seq`` come a moment after higher ones.
"""

REPLAY_INTERVAL: Final = 10.0
"""Seconds between two replays asked of the same table."""

BACKFILL_PER_PLY: Final = 6
"""Payloads a ply usually makes (its touches, the move, the clock press): how far back, per move
known only from a snapshot, the first replay of a game joined under way reaches."""

BACKFILL_SLACK: Final = 20
"""Payloads more than that (alerts, responses, the table's status)."""

BACKFILL_ROUNDS: Final = 4
"""Replays asked at most for one game joined under way; each reaches twice as far back."""

BACKFILL_WAIT: Final = 30.0
"""Seconds to wait for a replay's response before asking again (one of the rounds)."""

NOTED_ALERTS: Final = frozenset({"illegal_move", "incorrect_claim", "press_without_move"})
"""Alerts that change the course of the game (a penalty): they become PGN comments.

The others (touch-move, castling rook first, released piece moved on, displaced pieces, a clock
not pressed) are for the arbiters: the broadcast does not judge what only an arbiter decides.
"""

_GAME_DATE: Final = re.compile(r"-(\d{4})(\d{2})(\d{2})T\d{6}Z(?:-\d+)?$")
"""A game id as the daemon makes them: ``{table}-YYYYMMDDTHHMMSSZ`` (``-2`` for a second one)."""

_SEEN_WILLS: Final = 64


# --- what is kept ----------------------------------------------------------------------------


@dataclass(slots=True)
class LoggedAlert:
    """An alert of this game, open or closed, for the arbiters' page."""

    seq: int
    alert: AlertData
    raised_at: float
    closed_at: float | None = None
    closed_by: str | None = None
    """Who acknowledged it (a signed-in arbiter's name), ``"another console"``, or ``None``."""


@dataclass(frozen=True, slots=True)
class LoggedAction:
    """An arbiter's command that the table carried out (seen as its ``response``)."""

    at: float
    command: str
    summary: str
    by: str | None


@dataclass(frozen=True, slots=True)
class Note:
    """A PGN comment after ply ``after`` (0: before the first move)."""

    after: int
    text: str
    kind: str
    ply: int
    """The ply the cause belongs to (an alert's ply): an illegal move that stood drops its note."""


@dataclass(frozen=True, slots=True)
class StoodMove:
    """An illegal move that stood, as the table's ``illegal_move_stood`` alert describes it."""

    fen_before: str
    """The game's position before the illegal move."""
    fen: str
    """The position it left, the opponent to move: the game goes on from there."""
    move: str | None
    """The illegal move (UCI); ``None``: a press without a move (2018)."""
    color: payloads.ColorName
    article: str

    @property
    def ply(self) -> int:
        """The ply of the illegal move."""
        return chess.Board(self.fen_before).ply() + 1

    def label(self) -> str:
        """``4. Bc4-c5 by White``, ``3. (the clock pressed without a move) by White``."""
        before = chess.Board(self.fen_before)
        dots = "." if self.color == "white" else "..."
        what = "(the clock pressed without a move)"
        if self.move is not None:
            what = describe_move(before, chess.Move.from_uci(self.move))
        return f"{before.fullmove_number}{dots} {what} by {self.color.capitalize()}"


def stood_move(alert: AlertData) -> StoodMove | None:
    """What an ``illegal_move_stood`` alert says, or ``None`` if it does not say it all."""
    details = alert.details
    fen_before, fen, move = details.get("fen_before"), details.get("fen"), details.get("move")
    if alert.kind != "illegal_move_stood" or alert.color is None:
        return None
    if not isinstance(fen_before, str) or not isinstance(fen, str):
        return None
    if move is not None and not isinstance(move, str):
        return None
    try:
        chess.Board(fen_before)
        chess.Board(fen)
        if move is not None:
            chess.Move.from_uci(move)
    except ValueError:
        return None
    return StoodMove(fen_before, fen, move, alert.color, alert.article)


@dataclass(frozen=True, slots=True)
class PlyMove:
    """One move of a part, with what the PGN writes beside it."""

    ply: int
    uci: str
    san: str
    color: payloads.ColorName
    clock: int | None
    """The mover's remaining seconds after the move; ``None``: no clock."""
    final_at: float | None
    """When the move became final (relay time); ``None``: it may still be replaced."""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Part:
    """A stretch of the game that legal moves connect, from ``start_fen``."""

    start_fen: str
    moves: tuple[PlyMove, ...]
    since: float
    """When the part began (relay time): the broadcast delay applies to it too."""
    lead: tuple[str, ...] = ()
    """Comments before its first move (why the game goes on from this position)."""
    ending: str | None = None
    """How it ended, when another part follows (an illegal move stood, a position was set)."""
    head_notes: tuple[str, ...] = ()
    """Comments before the first move from notes after ply 0 (or the ply before the part)."""


# --- gaps ------------------------------------------------------------------------------------


class Gaps:
    """The ``seq`` numbers of one table that should have come and did not.

    ``seq`` is per table, increasing, never reused, across restarts (epochs). Two kinds of hole
    are normal and never asked for: the ``seq`` after each ``online`` status (reserved for the
    Will, which the broker sends only if the table is lost), and everything before the first
    payload this relay saw (live, or from its store after a restart).
    """

    def __init__(self) -> None:
        self.high: int | None = None
        self._missing: list[tuple[int, int, float]] = []  # (first, last, noticed at)
        self._wills: list[int] = []
        self._asked_at: float | None = None

    @property
    def missing(self) -> list[tuple[int, int]]:
        """The holes, as inclusive ``(first, last)`` ranges."""
        return [(lo, hi) for lo, hi, _ in self._missing if not self._is_will(lo, hi)]

    def saw(self, seq: int, received: float, *, online: bool = False) -> None:
        """A payload with ``seq`` arrived live (not a retained copy sent on subscribing)."""
        if online:
            self._wills.append(seq + 1)
            del self._wills[:-_SEEN_WILLS]
        if self.high is None:
            self.high = seq
            return
        if seq > self.high:
            if seq > self.high + 1:
                self._missing.append((self.high + 1, seq - 1, received))
            self.high = seq
            return
        self._fill(seq)

    def _fill(self, seq: int) -> None:
        for index, (lo, hi, since) in enumerate(self._missing):
            if lo <= seq <= hi:
                parts = [(lo, seq - 1, since), (seq + 1, hi, since)]
                self._missing[index : index + 1] = [p for p in parts if p[0] <= p[1]]
                return

    def _is_will(self, lo: int, hi: int) -> bool:
        return lo == hi and lo in self._wills

    def due(self, now: float) -> int | None:
        """The ``from_seq`` of a replay to ask for now, or ``None``."""
        if self._asked_at is not None and now < self._asked_at + REPLAY_INTERVAL:
            return None
        self._missing = [m for m in self._missing if not self._is_will(m[0], m[1])]
        late = [lo for lo, _, since in self._missing if now >= since + GAP_GRACE]
        return min(late) if late else None

    def settle(self) -> None:
        """Forget the holes (after folding stored payloads again: touches were not stored)."""
        self._missing.clear()

    def asked(self, now: float) -> None:
        """A replay was asked: what it can bring comes back; the holes are forgotten."""
        self._asked_at = now
        self._missing.clear()


# --- a game joined under way ----------------------------------------------------------------


@dataclass(slots=True)
class Backfill:
    """The replays asked of a table for the earlier events of a game this relay joined under way.

    ``top`` is the ``seq`` of the snapshot that showed moves this relay had no event for; the
    replay asked starts at ``from_seq`` below it and reaches twice as far back each round, until
    every move has its event, an event of an earlier game came (the replay reached back before
    this game began), the table holds nothing older, or :data:`BACKFILL_ROUNDS` were asked.
    """

    top: int
    from_seq: int
    rounds: int = 0
    asked_at: float | None = None
    done: bool = False
    reached_start: bool = False


# --- the table -------------------------------------------------------------------------------


class RelayTable:
    """One table's current game for the relay: the view, and what the broadcast adds to it."""

    def __init__(self, table: str) -> None:
        self.table = table
        self.view = TableView(table)
        self.gaps = Gaps()
        self.version = 0
        """Bumped on every change; caches of the PGN and the page key on it."""
        self._reset()

    def _reset(self) -> None:
        self.parts: list[Part] = []
        self.alerts: list[LoggedAlert] = []
        self.actions: list[LoggedAction] = []
        self.result_at: float | None = None
        self.first_ts: str | None = None
        self._clocks: dict[int, tuple[int, int]] = {}  # ply -> (seq, mover's seconds)
        self._fens: dict[int, str] = {}  # ply -> FEN after the move (from its event)
        self._move_seq: dict[int, int] = {}  # ply -> seq of the move event kept for it
        self._rewritten: list[tuple[int, int]] = []
        """``(seq, ply)``: the game was changed from ``ply`` on (a correction, a takeback) by
        the payload ``seq``; a move event published before it says nothing of those plies."""
        self._final: dict[int, float] = {}
        self._moved_at: dict[int, float] = {}
        self._notes: list[Note] = []
        self._squares: dict[int, tuple[str, ...]] = {}  # ply of an illegal move -> squares
        self._illegal_articles: dict[int, str] = {}
        self._stood: dict[int, StoodMove] = {}  # ply of the reply -> the illegal move it let stand
        self._generation_since = 0.0
        self._generation_lead: tuple[str, ...] = ()
        self._senders: dict[str, str] = {}
        self._cache: tuple[int, list[Part]] | None = None
        self._heard: set[int] = set()  # plies of this game whose move event came
        self.backfill: Backfill | None = None
        """The replays of a game joined under way (``None`` until its first snapshot)."""

    # -- what the shell tells us ---------------------------------------------------------

    def expect(self, transaction: str, by: str) -> None:
        """A command with ``transaction`` is sent on behalf of ``by`` (named in the history)."""
        self._senders[transaction] = by
        if len(self._senders) > 256:
            self._senders.pop(next(iter(self._senders)))

    # -- folding payloads ------------------------------------------------------------------

    def apply(
        self, envelope: Envelope, *, suffix: str, received: float, retained: bool = False
    ) -> bool:
        """Fold one payload in; whether anything changed (``False``: a duplicate or stale copy).

        ``suffix`` is the topic under the table (``event/move``, ``response/ack_alert``...);
        ``retained`` says the broker sent a stored copy on subscribing: no gap check for a
        table first seen through it, but a table already followed learns from its ``seq`` what
        was published while the relay was away (a restart, a lost connection).

        Raises:
            PayloadError: the payload's ``data`` does not fit its type; nothing changed.
        """
        view = self.view
        if view.seen(envelope.epoch, envelope.seq):
            return False
        before_game = view.game_id
        before_start = view.start_fen
        before_moves = list(view.moves)
        earlier = self.parts_now() if envelope.type == "game" else None
        response = _response(envelope) if envelope.type == "response" else None
        applied = view.apply(envelope)
        if not retained or self.gaps.high is not None:
            # A retained copy is no gap check for a table first seen through it; for a table
            # this relay has followed (before a restart, or a reconnect), a retained payload
            # with a higher seq shows what was published meanwhile and never came live.
            online = envelope.type == "status" and envelope.data.get("state") == "online"
            self.gaps.saw(envelope.seq, received, online=online)
        if applied is None:
            return False
        if envelope.type in _EVENTS and envelope.game and envelope.game != view.game_id:
            # An event of an earlier game (the view folded it): a replay reached back further
            # than the game at the table now. Nothing of it is this game's.
            if self.backfill is not None:
                self.backfill.reached_start = True
            return False
        if before_game is not None and view.game_id != before_game:
            self._reset()
            before_start = None
            self._generation_since = received
        if self.first_ts is None and envelope.type != "status":
            self.first_ts = envelope.ts
        try:
            self._fold(envelope, suffix, received, before_start, before_moves, earlier, response)
        except (ValueError, msgspec.ValidationError) as exc:
            # The view took the payload; what only the broadcast keeps could not (a start
            # position python-chess refuses, say): skipped like any malformed payload.
            self.version += 1
            self._cache = None
            raise PayloadError(f"{envelope.type} payload seq {envelope.seq}: {exc}") from exc
        self.version += 1
        self._cache = None
        return True

    def _fold(
        self,
        envelope: Envelope,
        suffix: str,
        received: float,
        before_start: str | None,
        before_moves: list[MoveRecord],
        earlier: list[Part] | None,
        response: Response | None,
    ) -> None:
        match envelope.type:
            case "move":
                self._on_move(envelope, payloads.data_as(envelope, MoveData), received)
            case "clock":
                self._on_clock(envelope, payloads.data_as(envelope, ClockData), received)
            case "alert":
                self._on_alert(envelope, payloads.data_as(envelope, AlertData), received)
            case "result":
                self._on_result(received)
            case "game":
                self._on_game(envelope.seq, before_start, before_moves, earlier or [], received)
            case "response" if response is not None:
                self._on_response(envelope.seq, suffix, response, received)
            case _:
                pass

    def _on_move(self, envelope: Envelope, data: MoveData, received: float) -> None:
        self._heard.add(data.ply)
        if any(envelope.seq < seq and data.ply >= ply for seq, ply in self._rewritten):
            return  # a late copy of a move the arbiter has since corrected or taken back
        self._moved_at.setdefault(data.ply, received)
        self._fens[data.ply] = data.fen
        self._move_seq[data.ply] = envelope.seq
        if data.clock is not None:
            seconds = data.clock.white if data.color == "white" else data.clock.black
            self._set_clock(data.ply, envelope.seq, seconds)
        if data.completed_by != "release":  # the press, or a move long made (reconstructed)
            self._final.setdefault(data.ply, received)
        for move in self.view.moves:
            if move.ply < data.ply:
                self._final.setdefault(move.ply, received)

    def _on_clock(self, envelope: Envelope, data: ClockData, received: float) -> None:
        ply = data.completes_ply
        if data.kind != "press" or ply is None or data.by is None:
            return
        self._final.setdefault(ply, received)
        seconds = data.white if data.by == "white" else data.black
        if seconds is not None:
            self._set_clock(ply, envelope.seq, seconds)

    def _set_clock(self, ply: int, seq: int, seconds: int) -> None:
        known = self._clocks.get(ply)
        if known is None or known[0] < seq:
            self._clocks[ply] = (seq, seconds)

    def _on_alert(self, envelope: Envelope, data: AlertData, received: float) -> None:
        if not any(entry.alert == data for entry in self.alerts):
            self.alerts.append(LoggedAlert(envelope.seq, data, received))
        if data.kind == "illegal_move":
            squares = data.details.get("squares")
            if isinstance(squares, list):
                self._squares[data.ply] = tuple(str(s) for s in squares)
            self._illegal_articles[data.ply] = data.article
        self._note_stood(data)
        if data.kind in NOTED_ALERTS:
            note = Note(data.ply - 1, alert_note(data), data.kind, data.ply)
            if note not in self._notes:
                self._notes.append(note)

    def _note_stood(self, alert: AlertData) -> None:
        stood = stood_move(alert) if alert.kind == "illegal_move_stood" else None
        if stood is not None:
            self._stood[alert.ply + 1] = stood

    def _on_result(self, received: float) -> None:
        if self.result_at is None:
            self.result_at = received
        for move in self.view.moves:
            self._final.setdefault(move.ply, received)

    def _on_game(
        self,
        seq: int,
        before_start: str | None,
        before_moves: list[MoveRecord],
        earlier: list[Part],
        received: float,
    ) -> None:
        view = self.view
        for alert in view.alerts:
            self._note_stood(alert)  # an open alert whose event this relay did not see
        start = view.start_fen
        if before_start is not None and start is not None and not _same(before_start, start):
            self._new_generation(start, earlier, received)
        elif start is not None and _same(before_start or chess.STARTING_FEN, start):
            self._rewrite(seq, before_moves, view.moves)
        if self.backfill is None:
            unheard = len(self.unheard())
            reach = BACKFILL_PER_PLY * unheard + BACKFILL_SLACK
            self.backfill = Backfill(top=seq, from_seq=max(0, seq - reach), done=not unheard)
        moves = view.moves
        last = moves[-1] if moves else None
        unseen = last is not None and last.ply not in self._moved_at
        for move in moves:
            self._moved_at.setdefault(move.ply, received)
        for move in moves[:-1]:
            self._final.setdefault(move.ply, received)
        clocks = view.clocks
        if unseen and last is not None and clocks and clocks.running not in (None, last.color):
            # Known only from the snapshot (the relay came later): the opponent's clock runs,
            # so the mover pressed. Seen live, the press event itself says so.
            self._final.setdefault(last.ply, received)
        if view.result is not None:
            self._on_result(received)
        elif self.result_at is not None:
            self.result_at = None  # a correction took the result back
        open_alerts = view.alerts
        for alert in open_alerts:
            if not any(entry.alert == alert for entry in self.alerts):
                self.alerts.append(LoggedAlert(-1, alert, received))
        for entry in self.alerts:
            if entry.closed_at is None and entry.alert not in open_alerts:
                entry.closed_at = received

    def _rewrite(self, seq: int, before: list[MoveRecord], now: list[MoveRecord]) -> None:
        """The snapshot ``seq`` changed moves already known, from the same start position (an
        arbiter's ``correct_move`` or ``takeback``, a move replaced that this relay missed).

        From the first ply that changed, the positions kept from the move events are stale:
        the moves after it were replayed from another position, or cut. Of the plies the
        snapshot no longer has, nothing is kept (their clocks, when they became final): a move
        played there again is a new move, final only once its press or the reply comes.
        """
        known = {move.ply: move.uci for move in now}
        changed = [move.ply for move in before if known.get(move.ply) != move.uci]
        if not changed:
            return
        first = min(changed)
        end = now[-1].ply if now else 0
        self._rewritten.append((seq, first))
        del self._rewritten[:-16]
        for ply in [p for p in self._fens if p >= first and self._move_seq.get(p, -1) < seq]:
            del self._fens[ply]
            self._move_seq.pop(ply, None)
        for ply in [p for p in self._clocks if p > end and self._clocks[p][0] < seq]:
            del self._clocks[ply]
        for table in (self._final, self._moved_at):
            for ply in [p for p in table if p > end and self._move_seq.get(p, -1) < seq]:
                del table[ply]

    def _new_generation(self, start: str, earlier: list[Part], received: float) -> None:
        """The game goes on from another position: keep the parts before it as they were."""
        keep = list(earlier)
        continued = next(
            (i for i in range(len(keep) - 1, -1, -1) if _same(keep[i].start_fen, start)), None
        )
        if continued is not None:  # the engine restarted from a part we had already split off
            self.parts = keep[:continued]
            self._generation_lead = keep[continued].lead
            self._generation_since = keep[continued].since
            return
        stood = next((s for s in self._stood.values() if _same(s.fen, start)), None)
        self.parts = keep
        self._generation_since = received
        if stood is not None:  # its reply was not seen before the snapshot: the same words
            if keep:
                ending = stood_ending(stood.label(), stood.article, len(keep) + 1)
                kept = tuple(m for m in keep[-1].moves if m.ply < stood.ply)  # none taken back
                keep[-1] = replace(keep[-1], moves=kept, ending=ending)
            self._generation_lead = (stood_lead(stood.label(), len(keep) + 1),)
            return  # the plies go on: what is known of them is this part's
        lead = "The game continues from a position set by the arbiter"
        if keep:
            keep[-1] = _replace_ending(keep[-1], lead)
        self._generation_lead = (lead,)
        first = chess.Board(start).ply() + 1
        for table in (self._clocks, self._fens, self._final, self._moved_at, self._move_seq):
            for ply in [p for p in table if p >= first]:
                del table[ply]
        self._notes = [n for n in self._notes if n.after < first - 1]

    def _on_response(self, seq: int, suffix: str, response: Response, received: float) -> None:
        command = suffix.rpartition("/")[2]
        by = self._senders.pop(response.transaction or "", None)
        if response.status != "ok":
            return
        data = response.data
        if command == "replay":
            self._replayed(data)
            return
        last = self.view.last_move
        after = 0 if last is None else last.ply
        summary = action_summary(command, data)
        if summary is None:
            return
        self.actions.append(LoggedAction(received, command, summary, by))
        if command == "ack_alert":
            ident = data.get("id")
            for entry in reversed(self.alerts):
                if entry.alert.id == ident and entry.closed_by is None:
                    entry.closed_at = entry.closed_at or received
                    entry.closed_by = by or "another console"
                    break
            return
        if command in ("correct_move", "takeback", "adjust_clock", "set_position"):
            if command == "correct_move" and not data.get("changed"):
                return
            ply = data.get("ply")
            at = ply if command == "correct_move" and isinstance(ply, int) else after
            if command == "takeback":
                # After the moves that remain, whether the snapshot came first or comes next.
                at = _ply_of(data.get("fen"), after)
            if command == "correct_move" and isinstance(ply, int):
                # The positions from the corrected ply on are stale, even if the snapshot that
                # shows the corrected moves is lost.
                self._rewritten.append((seq, ply))
                for stale in [
                    p for p in self._fens if p >= ply and self._move_seq.get(p, -1) < seq
                ]:
                    del self._fens[stale]
            self._notes.append(Note(at, summary, command, at))

    # -- a game joined under way -----------------------------------------------------------

    def unheard(self) -> list[int]:
        """The plies of the game whose move event this relay never got (known from a snapshot)."""
        return [move.ply for move in self.view.moves if move.ply not in self._heard]

    def backfill_due(self, now: float) -> int | None:
        """The ``from_seq`` of a replay to ask for the game's earlier events now, or ``None``."""
        backfill = self.backfill
        if backfill is None or backfill.done:
            return None
        if not self.unheard():
            backfill.done = True  # they came after all (folded from the store, or live)
            return None
        if backfill.asked_at is not None and now < backfill.asked_at + BACKFILL_WAIT:
            return None
        if backfill.rounds >= BACKFILL_ROUNDS:
            backfill.done = True
            return None
        return backfill.from_seq

    def backfill_asked(self, now: float) -> None:
        """The replay :meth:`backfill_due` gave was asked."""
        backfill = self.backfill
        if backfill is None:
            return
        backfill.asked_at = now
        backfill.rounds += 1
        if self.gaps.high is None:
            # Retained snapshots are not journaled: their seqs are holes in a replay, not gaps.
            self.gaps.high = backfill.top

    def _replayed(self, data: Mapping[str, object]) -> None:
        """A table's answer to a replay (after the payloads it resent): reach further back?"""
        backfill = self.backfill
        if backfill is None or backfill.done or data.get("from_seq") != backfill.from_seq:
            return
        oldest = data.get("oldest_available")
        if (
            not self.unheard()
            or backfill.reached_start
            or backfill.from_seq == 0
            or not isinstance(oldest, int)
            or oldest >= backfill.from_seq
            or data.get("truncated") is True
        ):
            backfill.done = True
            return
        reach = backfill.top - backfill.from_seq
        backfill.from_seq = max(oldest, backfill.from_seq - reach)
        backfill.asked_at = None  # due at once

    # -- what the broadcast shows ------------------------------------------------------------

    @property
    def game_id(self) -> str | None:
        """The id of the game at this table."""
        return self.view.game_id

    @property
    def date(self) -> str:
        """The game's date for PGN (``YYYY.MM.DD``), from its id or its first payload."""
        match = _GAME_DATE.search(self.view.game_id or "")
        if match is not None:
            return ".".join(match.groups())
        if self.first_ts is not None and len(self.first_ts) >= 10:
            return self.first_ts[:10].replace("-", ".")
        return "????.??.??"

    def parts_now(self) -> list[Part]:
        """The game in parts that legal moves connect, each move with its clock and finality."""
        if self._cache is not None and self._cache[0] == self.version:
            return self._cache[1]
        parts = [*self.parts, *self._current_parts()]
        self._cache = (self.version, parts)
        return parts

    def _current_parts(self) -> list[Part]:
        view = self.view
        start = view.start_fen
        if start is None:
            opening = view.moves[0] if view.moves else None
            if opening is not None and (opening.ply, opening.color) != (1, "white"):
                return []  # no snapshot yet, and the game did not start from the usual position
            start = chess.STARTING_FEN
        try:
            splits = split_game(start, view.moves, self._fens, self._squares, self._stood)
        except ValueError:
            return []  # a start position python-chess refuses: nothing to show
        notes: dict[int, list[Note]] = {}
        for note in self._notes:
            notes.setdefault(note.after, []).append(note)
        # The illegal moves that stood: no penalty was given, their notes are not shown.
        stood = {split.stood_ply for split in splits if split.stood_ply is not None}
        stood.update(known.ply for known in self._stood.values())

        def texts(after: int) -> tuple[str, ...]:
            return tuple(note.text for note in notes.get(after, ()) if _shown(note, stood))

        parts: list[Part] = []
        since = self._generation_since
        for index, split in enumerate(splits):
            moves = tuple(
                PlyMove(
                    ply=record.ply,
                    uci=record.uci,
                    san=san,
                    color=record.color,
                    clock=self._clock_of(record.ply),
                    final_at=self._final.get(record.ply),
                    notes=texts(record.ply),
                )
                for record, san in split.moves
            )
            if index == 0:
                lead = self._generation_lead
                head = texts(chess.Board(split.start_fen).ply())
            else:
                lead = (stood_lead(split.illegal or "?", len(self.parts) + index + 1),)
                head = ()
                opened = moves[0].final_at if moves else None
                since = opened or self._moved_at.get(split.first_ply or 0, since)
            ending = None
            if index + 1 < len(splits):
                following = splits[index + 1]
                article = following.article or self._illegal_articles.get(following.stood_ply or 0)
                number = len(self.parts) + index + 2
                ending = stood_ending(following.illegal or "?", article, number)
            parts.append(
                Part(
                    start_fen=split.start_fen,
                    moves=moves,
                    since=since,
                    lead=lead,
                    ending=ending,
                    head_notes=head,
                )
            )
        return parts

    def _clock_of(self, ply: int) -> int | None:
        known = self._clocks.get(ply)
        return None if known is None else max(known[1], 0)


_EVENTS: Final = frozenset({"move", "clock", "alert", "result", "touch"})
"""Payload types that belong to one game (the game's id in their envelope)."""


def _shown(note: Note, stood: set[int]) -> bool:
    return not (note.kind == "illegal_move" and note.ply in stood)


def _replace_ending(part: Part, ending: str) -> Part:
    return Part(
        start_fen=part.start_fen,
        moves=part.moves,
        since=part.since,
        lead=part.lead,
        ending=ending,
        head_notes=part.head_notes,
    )


def _ply_of(fen: object, default: int) -> int:
    """The ply a position was reached at (as the table numbers plies), or ``default``."""
    if not isinstance(fen, str):
        return default
    try:
        return chess.Board(fen).ply()
    except ValueError:
        return default


def _response(envelope: Envelope) -> Response:
    try:
        return msgspec.convert(envelope.data, Response)
    except msgspec.ValidationError as exc:
        raise PayloadError(f"response payload seq {envelope.seq}: {exc}") from exc


def _same(fen_a: str, fen_b: str) -> bool:
    """The same position to continue from: pieces and side to move (counters aside)."""
    return fen_a.split()[:2] == fen_b.split()[:2]


# --- the texts -------------------------------------------------------------------------------


def stood_ending(illegal: str, article: str | None, following: int) -> str:
    """The last comment of the part an illegal move that stood ended; ``following``: the next."""
    cited = f" (Art. {article})" if article else ""
    return (
        f"Illegal move {illegal} stood{cited}: nobody claimed before the opponent moved. The "
        f"game continues in part {following}, from the position it left"
    )


def stood_lead(illegal: str, part: int) -> str:
    """The first comment of part ``part``, which an illegal move that stood began."""
    return f"Part {part}: the game continues after the illegal move {illegal}, which stood"


def alert_note(alert: AlertData) -> str:
    """The broadcast's comment for an alert that changes the course of the game."""
    who = (alert.color or "a player").capitalize()
    article = f" (Art. {alert.article})" if alert.article else ""
    penalty = alert.details.get("penalty")
    match alert.kind:
        case "illegal_move":
            text = f"Illegal move by {who}{article}"
        case "incorrect_claim":
            text = f"Incorrect draw claim by {who}{article}"
        case "press_without_move":
            text = f"{who} pressed the clock without making a move{article}"
        case _:
            text = f"{alert.kind.replace('_', ' ').capitalize()}{article}"
    return f"{text}: {penalty}" if isinstance(penalty, str) and penalty else text


def action_summary(command: str, data: Mapping[str, object]) -> str | None:
    """One line for an arbiter's command that the table carried out, or ``None``."""
    match command:
        case "correct_move":
            ply, san = data.get("ply"), data.get("san")
            if not isinstance(ply, int):
                return "The arbiter corrected a move"
            label = f"{move_number(ply)}{'.' if ply % 2 else '...'} {san}"
            return f"The arbiter corrected move {label}"
        case "takeback":
            removed = data.get("removed")
            count = len(removed) if isinstance(removed, list) else data.get("plies")
            return f"The arbiter took back {count} {'ply' if count == 1 else 'plies'}"
        case "adjust_clock":
            white, black = data.get("white"), data.get("black")
            if isinstance(white, int) and isinstance(black, int):
                return (
                    f"The arbiter set the clocks: White {format_seconds(white)}, "
                    f"Black {format_seconds(black)}"
                )
            return "The arbiter set the clocks"
        case "set_result":
            return f"The arbiter set the result {data.get('result')}: {data.get('reason')}"
        case "set_position":
            return "The arbiter set up a position"
        case "ack_alert":
            return f"Alert {data.get('id')} acknowledged"
        case "claim_draw":
            return "Draw claim: " + ("correct" if data.get("valid") else "incorrect")
        case "new_game":
            return "New game"
        case "assign":
            return f"Players assigned: {data.get('white')} - {data.get('black')}"
        case _:
            return None


# --- splitting a game where no legal move leads on ------------------------------------------


@dataclass(slots=True)
class Split:
    """A stretch of moves that python-chess can replay, and why it began."""

    start_fen: str
    moves: list[tuple[MoveRecord, str]] = field(default_factory=list)
    illegal: str | None = None
    """The illegal move that stood before this part (``3. Bf1-c4 by White``)."""
    stood_ply: int | None = None
    """The ply of that illegal move."""
    first_ply: int | None = None
    article: str | None = None
    """The article under which it stood, when the table said."""


def split_game(
    start_fen: str,
    moves: Sequence[MoveRecord],
    fens_after: Mapping[int, str],
    squares: Mapping[int, Sequence[str]],
    stood: Mapping[int, StoodMove] | None = None,
) -> list[Split]:
    """The moves in parts that legal moves connect (SAN recomputed by python-chess).

    ``fens_after`` is the position after a ply when a ``move`` event gave it; ``squares`` are
    the squares an ``illegal_move`` alert of a ply named; ``stood`` the illegal moves that stood,
    by the ply of the reply. A move that cannot be placed (neither legal, nor the reply to an
    illegal move that stood, nor the illegal move itself, nor a move from a position that can be
    found) ends the list: what follows waits for the table's next snapshot.

    Raises:
        ValueError: ``start_fen`` is not a position.
    """
    board = chess.Board(start_fen)
    splits = [Split(board.fen())]
    for record in moves:
        try:
            move = chess.Move.from_uci(record.uci)
        except ValueError:
            break
        after = fens_after.get(record.ply)
        known = None if stood is None else stood.get(record.ply)
        if known is not None and _same(board.fen(), known.fen):
            known = None  # already there: the table's game restarted from that position
        resumed = None if known is None else _after_stood(known, record, move, after)
        if known is not None and resumed is not None:
            part, board = resumed
            # What was recorded for the illegal ply itself was taken back (a rook moved first).
            splits[-1].moves = [m for m in splits[-1].moves if m[0].ply < known.ply]
            splits.append(part)
            continue
        if board.is_legal(move) and _leads_to(board, move, after):
            splits[-1].moves.append((record, board.san(move)))
            board.push(move)
            continue
        mover = "White" if board.turn == chess.WHITE else "Black"
        ply = board.ply() + 1
        label = f"{move_number(ply)}{'.' if board.turn == chess.WHITE else '...'}"
        before = position_before(record, move, after, board, _squares_near(squares, ply))
        if before is not None:
            what = describe_change(board, before)
            part = Split(before.fen(), stood_ply=ply, first_ply=record.ply)
            part.moves.append((record, before.san(move)))
            board = before
            board.push(move)
        else:
            pushed = _pushed_anyway(board, move, after)
            if pushed is None:
                break
            what = describe_move(board, move)
            part = Split(pushed.fen(), stood_ply=ply, first_ply=record.ply + 1)
            board = pushed
        part.illegal = f"{label} {what} by {mover}"
        splits.append(part)
    return splits


def _after_stood(
    known: StoodMove, record: MoveRecord, move: chess.Move, after: str | None
) -> tuple[Split, chess.Board] | None:
    """The part that the reply ``record`` to an illegal move that stood begins, and its board."""
    board = chess.Board(known.fen)
    if not board.is_legal(move) or not _leads_to(board, move, after):
        return None  # not the reply (a stale alert after a correction): split as without it
    part = Split(
        board.fen(),
        illegal=known.label(),
        stood_ply=known.ply,
        first_ply=record.ply,
        article=known.article or None,
    )
    part.moves.append((record, board.san(move)))
    board.push(move)
    return part, board


def _squares_near(squares: Mapping[int, Sequence[str]], ply: int) -> set[chess.Square]:
    for at in (ply, ply - 1, ply + 1):
        named = squares.get(at)
        if named is not None:
            out: set[chess.Square] = set()
            for name in named:
                try:
                    out.add(chess.parse_square(name))
                except ValueError:
                    continue
            return out
    return set()


def _leads_to(board: chess.Board, move: chess.Move, after: str | None) -> bool:
    if after is None:
        return True
    reached = board.copy(stack=False)
    reached.push(move)
    return _same(reached.fen(), after)


def _pushed_anyway(board: chess.Board, move: chess.Move, after: str | None) -> chess.Board | None:
    """The board after ``move`` played although illegal (its piece is the mover's), or ``None``."""
    piece = board.piece_at(move.from_square)
    target = board.piece_at(move.to_square)
    if piece is None or piece.color != board.turn or (target and target.color == board.turn):
        return None
    pushed = board.copy(stack=False)
    pushed.push(move)
    if after is not None and not _same(pushed.fen(), after):
        try:
            pushed = chess.Board(after)
        except ValueError:
            return None
    pushed.castling_rights = pushed.clean_castling_rights()
    return pushed


def position_before(
    record: MoveRecord,
    move: chess.Move,
    after: str | None,
    game: chess.Board,
    touched: set[chess.Square],
) -> chess.Board | None:
    """The irregular position ``move`` was played from, rebuilt from the position after it.

    ``game`` is the position before the illegal move; ``touched`` the squares its alert named.
    ``None`` when it cannot be rebuilt for sure (e.g. the captured piece is unknown).
    """
    if after is None:
        return None
    try:
        reached = chess.Board(after)
    except ValueError:
        return None
    mover = not reached.turn
    piece = reached.piece_at(move.to_square)
    if piece is None or piece.color != mover:
        return None
    moved = chess.Piece(chess.PAWN, mover) if move.promotion else piece
    before = reached.copy(stack=False)
    before.turn = mover
    before.ep_square = None
    before.remove_piece_at(move.to_square)
    before.set_piece_at(move.from_square, moved)
    file_from, file_to = chess.square_file(move.from_square), chess.square_file(move.to_square)
    if moved.piece_type == chess.KING and abs(file_from - file_to) == 2:
        rank = chess.square_rank(move.from_square)
        rook_from, rook_to = (7, 5) if file_to == 6 else (0, 3)
        rook = before.remove_piece_at(chess.square(rook_to, rank))
        if rook is None:
            return None
        before.set_piece_at(chess.square(rook_from, rank), rook)
    if "x" in record.san:
        victim = game.piece_at(move.to_square)
        if move.to_square in touched:
            victim = _arrived(game, reached, touched, move.to_square)
            if victim is None:
                return None
            before.set_piece_at(move.to_square, victim)
        elif victim is not None and victim.color != mover:
            before.set_piece_at(move.to_square, victim)
        elif moved.piece_type == chess.PAWN and file_from != file_to and victim is None:
            passed = chess.square(file_to, chess.square_rank(move.from_square))
            before.set_piece_at(passed, chess.Piece(chess.PAWN, not mover))
            before.ep_square = move.to_square
        else:
            return None
    before.castling_rights = game.castling_rights
    before.castling_rights = before.clean_castling_rights()
    before.halfmove_clock = 0
    before.fullmove_number = move_number(record.ply)
    if before.board_fen() == game.board_fen() or not before.is_legal(move):
        return None
    check = before.copy(stack=False)
    check.push(move)
    return before if check.board_fen() == reached.board_fen() else None


def _arrived(
    game: chess.Board, reached: chess.Board, touched: set[chess.Square], square: chess.Square
) -> chess.Piece | None:
    """The piece the illegal move put on ``square``: the one that left the other touched square.

    Known only when the illegal move touched two squares and one of the mover's pieces left the
    other (and it is still empty after the reply); ``None`` otherwise.
    """
    others = touched - {square}
    if len(others) != 1:
        return None
    (other,) = others
    piece = game.piece_at(other)
    if piece is None or piece.color != game.turn or reached.piece_at(other) is not None:
        return None
    return piece


def describe_move(board: chess.Board, move: chess.Move) -> str:
    """``Bf1-c5`` / ``Nxe5``-style text for a move that may be illegal."""
    piece = board.piece_at(move.from_square)
    letter = "" if piece is None or piece.piece_type == chess.PAWN else piece.symbol().upper()
    sep = "x" if board.piece_at(move.to_square) is not None else "-"
    return f"{letter}{chess.square_name(move.from_square)}{sep}{chess.square_name(move.to_square)}"


def describe_change(game: chess.Board, irregular: chess.Board) -> str:
    """What the illegal move did: ``Bf1-c5`` when one piece moved, else the squares."""
    mover = game.turn
    left = [
        sq
        for sq in chess.SQUARES
        if (p := game.piece_at(sq)) and p.color == mover and irregular.piece_at(sq) != p
    ]
    arrived = [
        sq
        for sq in chess.SQUARES
        if (p := irregular.piece_at(sq)) and p.color == mover and game.piece_at(sq) != p
    ]
    if len(left) == 1 and len(arrived) == 1:
        return describe_move(game, chess.Move(left[0], arrived[0]))
    changed = sorted(
        {*left, *arrived}
        | {sq for sq in chess.SQUARES if game.piece_at(sq) != irregular.piece_at(sq)}
    )
    return "(" + ", ".join(chess.square_name(sq) for sq in changed) + " changed)"
