"""Moves made while nobody listened: the board read whole, and presses its memory kept.

After a restart or a reconnect the board is read whole (``BoardSnapshot``). If it is the game,
nothing happened. Otherwise the players went on meanwhile: the lines of legal moves that leave
the board read are looked for (``lines.search``: up to eight plies, shortest first, bounded).
When exactly one does, its moves are recorded as ``reconstructed`` in order. When none or
several do, the game is ``MISMATCH`` (``state``): nothing is recorded while the board
contradicts the game, and once the board has rested ``MISMATCH_AFTER`` (a press at once), one
``board_mismatch`` says so, with the plies searched, the squares, and what the lines found
differ in. The board is looked at again each time it rests: the hand at work at the restart
puts its piece down, or the arbiter puts the position back, or settles it (``set_game``, the
``reconstruct`` command). Boards that sense occupancy only (a DGT Pegasus; a Certabo tag not
learnt) report pieces as UNKNOWN: a line fits when it leaves the same squares occupied, and it
tells which piece stands on each. The first full reading of a game not started yet also tells
the board's orientation: the start position turned round (set up from Black's side, Art. 7.1 b)
rotates every square from then on. Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

import chess

from bridge.arbiter import alerts, judge, lines, positions, touch, watching
from bridge.arbiter.bursts import SLOW_SCAN
from bridge.arbiter.facts import CompletedBy, Fact
from bridge.arbiter.game import Game, Trail
from bridge.arbiter.state import State
from drivers.events import BoardSnapshot, ClockSide, Occupant, UnknownPiece

MISMATCH_AFTER: Final = 3.0
"""Seconds a board that nothing explains must rest before ``board_mismatch`` (a press: at once).

A board read at a restart or a reconnect can catch a piece in the hand; a moment later it is
put down and the board is explained.
"""

SEARCH_AFTER: Final = 0.4
"""Seconds a watched board that no single move explains must rest before it is searched: the
engine's dwell on a DGT board (hands move on within it), less than a scan of a slow board."""

HELD_AFTER: Final = 3 * MISMATCH_AFTER
"""The same when the last change was a lift, or pieces are missing: probably in a hand."""


class Recovery:
    """Reads ``game``'s board whole, follows it when no single move explains it, and reads the
    presses the board's memory kept."""

    def __init__(self, game: Game, settle: float, *, scan: float = 0.0) -> None:
        self.game = game
        self.settle = settle
        """Seconds the board must rest before it is searched again (the engine's dwell)."""
        self.slow = scan >= SLOW_SCAN
        """The board reads itself whole about once a second (``watching.Watch.scan``)."""
        self.scan = scan if self.slow else 0.0
        self.rest_after = min(settle, SEARCH_AFTER) + (scan if self.slow else 0.0)
        """Seconds a watched board no single move explains must rest before it is searched: on
        a slow board, until a reading has shown it unchanged (a hand may be in mid-move)."""
        self.seen_board = False
        """A full reading came before the first move (the orientation is known)."""

    def on_snapshot(self, event: BoardSnapshot, now: float) -> list[Fact]:
        """The board read whole: the truth, and the moves it shows were made meanwhile."""
        game = self.game
        sensed = self._oriented(list(event.squares))
        game.inferred = {sq for sq in chess.SQUARES if isinstance(sensed[sq], UnknownPiece)}
        turn = game.board.turn
        physical = [
            None
            if occupant is None
            else occupant
            if isinstance(occupant, chess.Piece)
            else game.squares[sq] or chess.Piece(chess.PAWN, turn)
            for sq, occupant in enumerate(sensed)
        ]
        game.physical = physical
        game.diff = {sq for sq in chess.SQUARES if game.physical[sq] != game.squares[sq]}
        irregular = game.turn.irregular
        if irregular is not None and irregular.stood is not None:
            stood = irregular.stood
            stood.diff = {sq for sq in chess.SQUARES if game.physical[sq] != stood.squares[sq]}
        game.candidate = None
        game.suspended = None
        game.last_change = now
        game.turn.board_changed(bool(game.diff))
        if not game.diff or game.result is not None:
            game.turn.restored()
            self.settled()
            return []
        # Nobody watched: the moves made meanwhile may have gone anywhere. The lines found now
        # are carried forward while the players go on.
        told = game.trail
        game.trail = Trail(
            within=chess.BB_ALL,
            reported=told.reported,
            reported_lines=told.reported_lines,
            since=now,
        )
        game.places.clear()
        self._lifted_at_read(now)
        return self.reconstruct(now)

    def changed(self, now: float, *, lifted: bool) -> list[Fact]:
        """``MISMATCH``: the board changed. Back to the game, or searched once it rests."""
        trail = self.game.trail
        if not self.game.diff:
            self.settled()
            return []
        trail.search_at = None if lifted else now + self.settle
        if self._unsaid():
            trail.report_at = now + (HELD_AFTER if lifted else MISMATCH_AFTER)
        return []

    def rest(self, now: float) -> None:
        """The board changed and no single move explains it: search it once it rests (a moment:
        a move of the line found that may still be on its way waits for the dwell)."""
        self.game.trail.search_at = now + self.rest_after

    def due(self) -> float | None:
        """When ``fire`` must next be called, or ``None``."""
        trail = self.game.trail
        search, report = trail.search_at, trail.report_at
        if search is None or report is None:
            return report if search is None else search
        return min(search, report)

    def fire(self, now: float) -> list[Fact]:
        """The board rested: search it again; or it stays unexplained: say so."""
        trail = self.game.trail
        facts: list[Fact] = []
        mismatch = self.game.turn.unexplained is not None
        if trail.search_at is not None and now >= trail.search_at:
            trail.search_at = None
            facts.extend(self.reconstruct(now) if mismatch else self.follow(now) or [])
        trail = self.game.trail  # a line recorded starts a new one
        if trail.report_at is not None and now >= trail.report_at:
            facts.extend(self.report(now) if mismatch else self._report_watched(now))
        return facts

    def reconstruct(self, now: float, *, pressed: chess.Color | None = None) -> list[Fact]:
        """Record the one line of legal moves that leaves the board read; else ``MISMATCH``.

        ``pressed``: the player who pressed the clock now - his last move of the line, if it was
        watched, is the one his press completes; with nothing explained, say so at once.
        Whether the players of moves made unheard pressed the clock is not known: no press is
        awaited for them.
        """
        game = self.game
        shown = self._search()
        if shown.line is not None:
            line, due = shown.line, None
            if pressed is None:
                # A piece seen put down since the board was read may still be on its way.
                line, due = self._released(line, now)
            facts = self.record_line(line, now, pressed=pressed, base=shown.base) if line else []
            if due is not None:
                game.trail.search_at = due
                game.trail.within |= watching.changes(game.board, shown.line[len(line) :])
            return facts
        self._carry(shown)
        if game.turn.state is not State.MISMATCH:
            game.turn.mismatch(now)
        if pressed is not None:
            return self.report(now)
        trail = game.trail
        if self._unsaid():
            # Fewer pieces on the board than in the game, and no capture explains it: pieces in
            # a hand, perhaps moved unheard before they were lifted. They are given longer.
            trail.report_at = now + (HELD_AFTER if self._held() else MISMATCH_AFTER)
        return []

    def arbiters_line(self, line: lines.Line, now: float) -> list[Fact]:
        """An arbiter's moves (``reconstruct``), then the one line of legal moves from there
        that leaves the board read, if there is one: the players went on while he asked them
        (nobody watched those moves made in order: both are ``reconstructed``)."""
        game = self.game
        facts = self.record_line(line, now, all_unheard=True)
        if game.diff and game.result is None:
            shown = lines.explain(game.board, game.physical, game.inferred)
            if shown.line and not shown.held:
                facts += self.record_line(shown.line, now, all_unheard=True)
        return facts

    def follow(
        self,
        now: float,
        *,
        pressed: chess.Color | None = None,
        judging: bool = False,
        replayed: bool = False,
    ) -> list[Fact] | None:
        """The board watched, at rest (or pressed), that no single move explains: follow it.

        The one line of legal moves (from the game, or from the lines that explained it at an
        earlier rest) that leaves the board, with a hand perhaps still at work, is recorded as
        the moves were made: on their release, the presser's by his press. Two lines are never
        guessed: when ``judging`` (a press, a still board, the end of a memory ``replayed``,
        whose moves are reconstructed: their presses were read), ``board_mismatch`` at once; else it
        is said once the board has rested (``report_at``), unless a press or the still board
        will judge it. ``None``: no line to record - none leads to the board, or the board is
        the game with pieces in a hand.
        """
        game = self.game
        shown = self._search()
        if shown.line is not None:
            line, due = shown.line, None
            if not judging:
                line, due = self._released(line, now)
            facts = (
                self.record_line(
                    line,
                    now,
                    watched=True,
                    pressed=pressed,
                    all_unheard=replayed,
                    base=shown.base,
                )
                if line
                else None
            )
            trail = game.trail
            trail.report_at = None  # the game, with hands at work (or moves on their way)
            trail.search_at = due
            # The moves still on their way change their squares even where the board reads
            # the same (a capture on a board that senses occupancy only): still in reach.
            trail.within |= watching.changes(game.board, shown.line[len(line) :])
            return facts
        self._carry(shown)
        trail = game.trail
        if shown.found.lines and judging:
            game.turn.mismatch(now)
            return self.report(now)
        if self._unsaid():
            trail.report_at = game.last_change + (HELD_AFTER if self._held() else MISMATCH_AFTER)
        return None

    def replayed(self, now: float, *, follow: bool) -> list[Fact]:
        """The board's memory replayed: the move it left on its way is recorded; with
        ``follow``, moves no single one of which explains the board (the hands overlapped: two
        hands on the board) are followed as the board at rest would have been. Both are
        reconstructed (their presses, if any, were read)."""
        game = self.game
        cand = game.candidate
        facts: list[Fact] = []
        if cand is not None:
            game.candidate = None
            by = CompletedBy.RECONSTRUCTED
            facts = game.record_move(cand.move, cand.revision, by, now)
        quiet = game.candidate is None and game.result is None and game.turn.unexplained is None
        if follow and quiet and game.diff:
            facts += self.follow(now, judging=True, replayed=True) or []
        return facts

    def _released(self, line: lines.Line, now: float) -> tuple[lines.Line, float | None]:
        """The moves of ``line`` released (4.7), and when to look at the rest again.

        A move whose piece may still be on its way (``positions.is_ambiguous``: a slide, a
        pawn's first step) is released once it has rested ``settle`` on its square, as any
        move is; the moves after it wait for it. One not seen landing was made before the board
        was read whole: released.
        """
        game = self.game
        board = game.board.copy(stack=False)
        for i, move in enumerate(line):
            if positions.is_ambiguous(board, move):
                put = game.put_on(move.to_square)
                if put is not None and put + self.settle > now:
                    return line[:i], put + self.settle
            board.push(move)
        return line, None

    def unexplained(self, now: float) -> list[Fact]:
        """A judgement found nothing on a board no line explains: ``MISMATCH``, said once."""
        self.game.turn.mismatch(now)
        return self.report(now)

    def _report_watched(self, now: float) -> list[Fact]:
        """The watched board stayed unexplained: said once, unless a press judges it - a piece
        of the side to move, or of the last mover while his move is revisable, stands where the
        game has none of his (``judge.judged_later``; without a clock, the board left still
        ``illegal_after``)."""
        game = self.game
        trail = game.trail
        trail.report_at = None
        if (
            game.turn.irregular is not None
            or game.result is not None
            or not game.diff
            or (
                (trail.found is None or not trail.found.lines)
                and judge.judged_later(
                    game.squares, game.physical, game.diff, game.board.turn, game.turn.revisable
                )
                is not None
            )
        ):
            return []
        return self.unexplained(now)

    def _search(self) -> lines.Explained:
        """The lines that lead from the game (or the trail's bases) to the board read."""
        game = self.game
        trail = game.trail
        barred = game.carried if trail.bases == [()] else frozenset()
        # Squares reported displaced are the irregularity the arbiter was told of, not moves.
        within = trail.within
        for sq in game.displaced:
            within &= ~chess.BB_SQUARES[sq]
        # Watched, what the hands did is known; after a board read whole, only the board was,
        # and what the hands did since (``Watch.unheard``).
        watched = trail.within != chess.BB_ALL
        after = (game.landed[chess.BLACK], game.landed[chess.WHITE])
        read_whole = not watched and self._put_since(trail.since)
        if read_whole:
            after = (trail.since, trail.since)
        watch = watching.Watch(
            within,
            game.places if watched or read_whole else None,
            trail.since,
            after,
            scan=self.scan,
            dwell=game.dwell,
            rivals=game.clock.times() is None,
            unheard=read_whole,
        )
        return lines.follow(
            game.board, trail.bases, game.physical, game.inferred, watch=watch, barred=barred
        )

    def _put_since(self, since: float) -> bool:
        """Whether a piece was seen put down after ``since`` (the hands seen at work)."""
        for seen in reversed(self.game.places.values()):
            if not seen or seen[-1].at <= since:
                return False  # the squares before it changed earlier still
            if any(change.put and change.at > since for change in seen):
                return True
        return False

    def _carry(self, shown: lines.Explained) -> None:
        """Several lines explain the board: search on from each of them at the next rest."""
        game = self.game
        trail = game.trail
        trail.found = shown.found
        found = shown.found
        if not found.lines or found.exhausted or found.lines == tuple(trail.bases):
            return
        unheard = len(found.lines[0]) if trail.within == chess.BB_ALL else trail.unheard
        fresh = Trail.watched(game.diff, game.last_change)
        trail.bases, trail.unheard, trail.within = list(found.lines), unheard, fresh.within
        trail.since = fresh.since

    def _held(self) -> bool:
        game = self.game
        return game.physical.count(None) > game.squares.count(None)

    def _unsaid(self) -> bool:
        """Whether ``board_mismatch`` is still to be raised for this irregularity: not yet, or
        only before the lines the board cannot tell apart were found (``Trail.reported_lines``)."""
        trail = self.game.trail
        if not trail.reported:
            return True
        found = trail.found
        return not trail.reported_lines and found is not None and len(found.lines) > 1

    def report(self, now: float) -> list[Fact]:
        """``board_mismatch``, once for this mismatch: the arbiter settles it."""
        game = self.game
        trail = game.trail
        trail.report_at = None
        if not self._unsaid():
            return []
        found = trail.found or lines.Found((), 0, False)
        trail.reported = True
        trail.reported_lines = len(found.lines) > 1
        squares = sorted(game.diff)
        alert = alerts.unexplained_reading(squares, game.board, found)
        return [game.raise_alert(alert, now)]

    def settled(self) -> None:
        """The board is the game again, or the game was set: the mismatch is over."""
        self.game.turn.explained()
        self.game.trail = Trail.watched(self.game.diff, self.game.last_change)

    def record_line(
        self,
        line: lines.Line,
        now: float,
        *,
        watched: bool = False,
        pressed: chess.Color | None = None,
        all_unheard: bool = False,
        base: int = 0,
    ) -> list[Fact]:
        """Record a line of moves: made while nobody listened (whether they were pressed is not
        known), or, ``watched``, followed on the board (two hands at work).

        Moves made unheard are ``reconstructed``, and the touches seen meanwhile are not theirs:
        no touch-move is judged on them. A watched line's moves were made on their release (the
        ``pressed`` player's first one by his press): the first is judged with the touches of
        the ply as any move (the other hand's lifts are not the mover's), the ones after it were
        begun before it was their player's move, which binds nobody. ``all_unheard``: every move
        was made while nobody listened (an arbiter's ``reconstruct``). ``base``: the first
        plies, the candidate line the rest goes on from (``lines.follow``).
        """
        game = self.game
        game.candidate = None  # a move the board showed on its way: the line says what it was
        trail = game.trail
        if all_unheard or trail.within == chess.BB_ALL:
            unheard = len(line)
        else:
            # The candidate line it goes on from was made unheard, if the candidates were read
            # whole; what follows was watched.
            unheard = min(base, len(line)) if trail.unheard else 0
        watched = watched and game.turn.unexplained is None
        # The presser's last move of the line is the one his press completes.
        completed = None
        for i in range(unheard, len(line)):
            if pressed is not None and (i % 2 == 0) == (game.board.turn == pressed):
                completed = i
        self.settled()
        facts: list[Fact] = []
        for i, move in enumerate(line):
            heard = i >= unheard
            if not heard or (i == unheard and not watched):
                game.ply = touch.Ply()
            if not heard:
                by = CompletedBy.RECONSTRUCTED
            elif i == completed:
                by = CompletedBy.CLOCK
            else:
                by = CompletedBy.RELEASE
            facts.extend(game.record_move(move, False, by, now, await_press=heard))
        for sq in game.inferred:
            if game.physical[sq] is not None and game.squares[sq] is not None:
                game.physical[sq] = game.squares[sq]
        game.diff = {sq for sq in chess.SQUARES if game.physical[sq] != game.squares[sq]}
        game.trail = Trail.watched(game.diff, now)
        self._lifted_at_read(now)
        game.turn.board_changed(bool(game.diff))
        return facts

    def _lifted_at_read(self, now: float) -> None:
        """Pieces off their squares when the board was read whole (a restart, a reconnect), or
        still off after a line read off it: lifted then, for all anyone saw - their moves land
        after it (``watching.landing``)."""
        game = self.game
        for sq in game.diff:
            if game.physical[sq] is None and not game.places.get(sq):
                game.seen(sq, None, now)

    def stored_press(self, side: ClockSide, now: float) -> list[Fact]:
        """A press the board's memory recorded: it completes the presser's move."""
        game = self.game
        by = game.clock.color_of(side)
        if by is None:
            return []
        cand = game.candidate
        if cand is not None and by == game.mover(cand):
            game.candidate = None
            return game.record_move(
                cand.move, cand.revision, CompletedBy.CLOCK, now, await_press=False
            )
        if by == game.turn.awaiting:
            game.turn.pressed(bool(game.diff))
        elif cand is None and game.diff and game.turn.unexplained is None:
            # Moves no single one of which explains the board (the hands overlapped), pressed:
            # followed as a live press would have them.
            return self.follow(now, pressed=by, judging=True, replayed=True) or []
        return []

    def _oriented(self, sensed: list[Occupant | None]) -> list[Occupant | None]:
        """The reading in the player's frame; the first of a game not started tells it."""
        game = self.game
        if not self.seen_board and not game.board.move_stack:
            self.seen_board = True
            start = positions.squares_of(game.board)
            if sensed != start and sensed[::-1] == start:
                game.rotated = True
        return sensed[::-1] if game.rotated else sensed
