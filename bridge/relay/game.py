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

Every position a part starts from is one the table published; the relay never rebuilds one.
The table's ``illegal_move_stood`` alert comes just before the reply that made the move stand;
it gives the position the illegal move left (``details.fen``), the position before it
(``fen_before``), the move (``details.move``, ``None`` for a press without a move) and who made
it, and its ``ply`` is the ply of that position (the reply is the next one). The moves are
replayed from the start with python-chess; the move of the ply after a known
``illegal_move_stood`` starts a new part from that position (moves recorded for the illegal ply
are dropped from the part before: the engine took them back). Then the table's ``game``
snapshot restarts from that position (its ``start_fen``, with the alert among its open ones):
the parts already split off are kept. A snapshot that restarts from a position no alert
explains is a position set by the arbiter, until an ``illegal_move_stood`` alert for it comes
(a replay brings it back): then the part is the illegal move's, as if it had come in order.

A move that cannot be placed where the game stands (the reply to an illegal move whose alert
was lost, a move after a ply that never came) waits, with every move after it, for the payload
that gives the position it was played from: the relay asks the table for a ``replay``
(:class:`~bridge.relay.gaps.Wanted`: after a grace, a few times, some seconds apart) and
meanwhile shows the game up to it. The snapshot that follows every move usually brings the
position before that. A move python-chess does not play at all, when a snapshot showed the
position after it, was the irregular move itself: the game goes on from that position.

:class:`~bridge.relay.gaps.Gaps` notices payloads that never came, and
:class:`~bridge.relay.gaps.Backfill` the earlier events of a game joined under way (moves known
only from the snapshot have no clock times): both ask the table for a ``replay`` too.

Time: every entry point takes ``received`` (the relay's clock when the payload arrived), never
reads a clock.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final, TypeVar

import chess
import msgspec

from bridge.relay.gaps import (
    BACKFILL_PER_PLY,
    BACKFILL_ROUNDS,
    BACKFILL_SLACK,
    BACKFILL_WAIT,
    Backfill,
    Gaps,
    Wanted,
)
from bridge.relay.notes import (
    NOTED_ALERTS,
    LoggedAction,
    LoggedAlert,
    Note,
    StoodMove,
    action_summary,
    alert_note,
    stood_ending,
    stood_lead,
    stood_move,
)
from bridge.relay.parts import Part, PlyMove, replace_ending, same, same_pieces, split_game
from bridge.views.model import PayloadError, TableView
from bridge.wire import payloads
from bridge.wire.commands import Response
from bridge.wire.payloads import AlertData, ClockData, Envelope, MoveData, MoveRecord

_GAME_DATE: Final = re.compile(r"-(\d{4})(\d{2})(\d{2})T\d{6}Z(?:-\d+)?$")
"""A game id as the daemon makes them: ``{table}-YYYYMMDDTHHMMSSZ`` (``-2`` for a second one)."""


# --- the table -------------------------------------------------------------------------------


class RelayTable:
    """One table's current game for the relay: the view, and what the broadcast adds to it."""

    def __init__(self, table: str) -> None:
        self.table = table
        self.view = TableView(table)
        self.gaps = Gaps()
        self.wanted = Wanted()
        """A position the moves wait for, and the replays asked for it."""
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
        self._snapshot_fens: dict[int, str] = {}  # ply -> a snapshot's FEN after its last move
        self._illegal_articles: dict[int, str] = {}
        self._stood: dict[int, StoodMove] = {}  # ply of the reply -> the illegal move it let stand
        self._generation_since = 0.0
        self._generation_lead: tuple[str, ...] = ()
        self._unexplained: str | None = None
        """The start of a snapshot's restart that no alert explained yet (shown as set by the
        arbiter); an ``illegal_move_stood`` alert for it, come late, makes it that move's part."""
        self._stash: _Stash | None = None
        self._waiting: tuple[MoveRecord, int] | None = None
        """The move that waits for the position it was played from, and the last ply placed."""
        self._doubt = False
        """The last payloads may have left a move waiting (:meth:`waiting` looks then)."""
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
        if view.seen(envelope.game, envelope.epoch, envelope.seq):
            return False
        before_game = view.game_id
        before_start = view.start_fen
        before_moves = list(view.moves)
        before_position = view.position
        earlier = self.parts_now() if envelope.type == "game" else None
        response = _response(envelope) if envelope.type == "response" else None
        applied = view.apply(envelope)
        if (
            applied is not None
            and envelope.type == "game"
            and before_game is not None
            and view.game_id != before_game
            and envelope.seq <= (self.gaps.high or 0)
        ):
            # A new game whose seq is not above what the table said before: it started again
            # from an empty state directory, counting from 1. Its seqs are a new series.
            self.gaps = Gaps()
        if not retained or self.gaps.high is not None:
            # A retained copy is no gap check for a table first seen through it; for a table
            # this relay has followed (before a restart, or a reconnect), a retained payload
            # with a higher seq shows what was published meanwhile and never came live.
            online = envelope.type == "status" and envelope.data.get("state") == "online"
            self.gaps.saw(envelope.seq, received, online=online)
        if envelope.type in _EVENTS and envelope.game and envelope.game != view.game_id:
            # An event of an earlier game (the view folded or dropped it): a replay reached back
            # further than the game at the table now. Nothing of it is this game's.
            if self.backfill is not None:
                self.backfill.reached_start = True
            return False
        if applied is None:
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
            self._doubt = True
            raise PayloadError(f"{envelope.type} payload seq {envelope.seq}: {exc}") from exc
        self.version += 1
        self._cache = None
        if not self._doubt:
            self._doubt = self._may_wait(envelope, before_start, before_moves, before_position)
        return True

    def _may_wait(
        self,
        envelope: Envelope,
        start: str | None,
        moves: list[MoveRecord],
        position: chess.Board | None,
    ) -> bool:
        """Whether the payload just folded may leave a move waiting for its position (cheap:
        a move that follows the last one legally, or a snapshot that changes no move, cannot)."""
        view = self.view
        match envelope.type:
            case "move":
                last = moves[-1] if moves else None
                new, now = view.last_move, view.position
                if last is None or new is None or position is None or now is None:
                    return True
                if new.ply != last.ply + 1 or len(view.moves) != len(moves) + 1:
                    return True
                try:
                    move = chess.Move.from_uci(new.uci)
                except ValueError:
                    return True
                if not position.is_legal(move):
                    return True
                reached = position.copy(stack=False)
                reached.push(move)
                return reached.turn != now.turn or not same_pieces(reached, now)
            case "game":
                return view.start_fen != start or [(m.ply, m.uci) for m in view.moves] != [
                    (m.ply, m.uci) for m in moves
                ]
            case "alert" | "response":
                return True
            case _:
                return False

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
            self._illegal_articles[data.ply] = data.article
        self._note_stood(data)
        if data.kind in NOTED_ALERTS:
            note = Note(data.ply - 1, alert_note(data), data.kind, data.ply)
            if note not in self._notes:
                self._notes.append(note)

    def _note_stood(self, alert: AlertData) -> None:
        stood = stood_move(alert) if alert.kind == "illegal_move_stood" else None
        if stood is None:
            return
        self._stood[alert.ply + 1] = stood
        if self._unexplained is not None and same(stood.fen, self._unexplained):
            # The snapshot's restart came first (the alert was lost, and replayed): it was
            # this illegal move's, not a position set by the arbiter.
            self._unexplained = None
            self._stood_generation(stood)
            self._restore()

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
        if before_start is not None and start is not None and not same(before_start, start):
            self._new_generation(start, earlier, received)
        elif start is not None and same(before_start or chess.STARTING_FEN, start):
            self._rewrite(seq, before_moves, view.moves)
        if view.moves and view.fen is not None:
            self._snapshot_fens[view.moves[-1].ply] = view.fen  # the position after its last
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
        _cut(self._snapshot_fens, first)
        for ply in [p for p in self._clocks if p > end and self._clocks[p][0] < seq]:
            del self._clocks[ply]
        for table in (self._final, self._moved_at):
            for ply in [p for p in table if p > end and self._move_seq.get(p, -1) < seq]:
                del table[ply]

    def _new_generation(self, start: str, earlier: list[Part], received: float) -> None:
        """The game goes on from another position: keep the parts before it as they were."""
        keep = list(earlier)
        continued = next(
            (i for i in range(len(keep) - 1, -1, -1) if same(keep[i].start_fen, start)), None
        )
        self._unexplained, self._stash = None, None
        if continued is not None:  # the engine restarted from a part we had already split off
            self.parts = keep[:continued]
            self._generation_lead = keep[continued].lead
            self._generation_since = keep[continued].since
            return
        stood = next((s for s in self._stood.values() if same(s.fen, start)), None)
        self.parts = keep
        self._generation_since = received
        if stood is not None:  # its reply was not seen before the snapshot: the same words
            self._stood_generation(stood)
            return  # the plies go on: what is known of them is this part's
        if keep:
            keep[-1] = replace_ending(keep[-1], SET_LEAD)
        self._generation_lead = (SET_LEAD,)
        self._unexplained = start
        # What is known of the plies from ``first`` on was the earlier position's; kept aside
        # in case an alert, come late, shows the game went on (an illegal move that stood).
        first = chess.Board(start).ply() + 1
        self._stash = _Stash(
            clocks=_cut(self._clocks, first),
            fens=_cut(self._fens, first),
            snapshot_fens=_cut(self._snapshot_fens, first),
            final=_cut(self._final, first),
            moved_at=_cut(self._moved_at, first),
            move_seq=_cut(self._move_seq, first),
            notes=[n for n in self._notes if n.after >= first - 1],
        )
        self._notes = [n for n in self._notes if n.after < first - 1]

    def _stood_generation(self, stood: StoodMove) -> None:
        """The current stretch began where the illegal move ``stood`` left the game."""
        keep = self.parts
        if keep:
            ending = stood_ending(stood.label(), stood.article, len(keep) + 1)
            # Its penalty was never given: the note goes, with any move taken back.
            penalty = {
                n.text for n in self._notes if n.kind == "illegal_move" and n.ply == stood.ply
            }
            kept = tuple(
                replace(m, notes=tuple(t for t in m.notes if t not in penalty))
                for m in keep[-1].moves
                if m.ply < stood.ply
            )
            keep[-1] = replace(keep[-1], moves=kept, ending=ending)
        self._generation_lead = (stood_lead(stood.label(), len(keep) + 1),)

    def _restore(self) -> None:
        """What :meth:`_new_generation` kept aside was this stretch's after all."""
        stash, self._stash = self._stash, None
        if stash is None:
            return
        _put_back(self._clocks, stash.clocks)
        _put_back(self._fens, stash.fens)
        _put_back(self._snapshot_fens, stash.snapshot_fens)
        _put_back(self._final, stash.final)
        _put_back(self._moved_at, stash.moved_at)
        _put_back(self._move_seq, stash.move_seq)
        self._notes += [n for n in stash.notes if n not in self._notes]

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
                _cut(self._snapshot_fens, ply)
            if command == "set_position" and self._unexplained is not None:
                self._unexplained, self._stash = None, None  # the arbiter's indeed
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

    # -- a position no payload gave ------------------------------------------------------

    def waiting(self) -> MoveRecord | None:
        """The move that waits for the position it was played from (none of the payloads this
        relay has gives it), with every move after it; ``None``: every move is placed."""
        if self._doubt or self._waiting is not None:
            self.parts_now()  # works out what waits (cached while nothing changed)
            self._doubt = self._waiting is not None
        return None if self._waiting is None else self._waiting[0]

    def needs_due(self, now: float) -> int | None:
        """The ``from_seq`` of a replay to ask for the position a move waits for, or ``None``.

        Asked :data:`~bridge.relay.gaps.ASK_TIMES` times at most, some seconds apart, after a
        grace for the table's next snapshot (:class:`~bridge.relay.gaps.Wanted`).
        """
        record = self.waiting()
        if record is None or self._waiting is None:
            self.wanted.lacks(None, 0, now)
            return None
        placed = self._waiting[1]
        key = (self.view.game_id, record.ply, record.uci)
        since = min(now, self._moved_at.get(record.ply, now))  # when its move came
        self.wanted.lacks(key, self._need_from(record, placed), since)
        return self.wanted.due(now)

    def needs_asked(self, now: float) -> None:
        """The replay :meth:`needs_due` gave was asked."""
        self.wanted.asked(now)

    def _need_from(self, waiting: MoveRecord, placed: int) -> int:
        """Where a replay that can bring what is missing before ``waiting`` starts: after the
        event of the last move placed, else about as far back as the plies missing take."""
        seq = self._move_seq.get(placed)
        if seq is not None:
            return seq + 1
        top = self._move_seq.get(waiting.ply, self.gaps.high or 0)
        return max(0, top - BACKFILL_PER_PLY * (waiting.ply - placed) - BACKFILL_SLACK)

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
        self._waiting = None
        if start is None:
            opening = view.moves[0] if view.moves else None
            if opening is not None and (opening.ply, opening.color) != (1, "white"):
                # No snapshot yet, and the game did not start from the usual position: its
                # start (or the moves before) will come.
                self._waiting = (opening, 0)
                return []
            start = chess.STARTING_FEN
        try:
            splits = split_game(start, view.moves, self._fens, self._stood, self._snapshot_fens)
        except ValueError:
            return []  # a start position python-chess refuses: nothing to show
        waiting = splits[-1].waiting
        if waiting is not None:
            placed = [record.ply for split in splits for record, _ in split.moves]
            self._waiting = (waiting, max(placed, default=chess.Board(start).ply()))
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

SET_LEAD: Final = "The game continues from a position set by the arbiter"

_V = TypeVar("_V")


@dataclass(frozen=True, slots=True)
class _Stash:
    """What was known of the plies a restart from an unexplained position cut off."""

    clocks: dict[int, tuple[int, int]]
    fens: dict[int, str]
    snapshot_fens: dict[int, str]
    final: dict[int, float]
    moved_at: dict[int, float]
    move_seq: dict[int, int]
    notes: list[Note]


def _cut(table: dict[int, _V], first: int) -> dict[int, _V]:
    """Take the entries of plies from ``first`` on out of ``table``; they are returned."""
    return {ply: table.pop(ply) for ply in [p for p in table if p >= first]}


def _put_back(table: dict[int, _V], stashed: Mapping[int, _V]) -> None:
    for ply, value in stashed.items():
        table.setdefault(ply, value)


def _shown(note: Note, stood: set[int]) -> bool:
    return not (note.kind == "illegal_move" and note.ply in stood)


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
