"""Payloads of one table shaped as its daemon publishes them, for the relay's tests.

Each method returns ``(suffix, envelope)``; ``seq`` grows as the daemon's outbox allocates it.
The retained ``game`` snapshot is built with the daemon's own :func:`game_data` from a
python-chess board, so its shape is whatever the daemon publishes today.
"""

from __future__ import annotations

from typing import Literal

import chess
import msgspec

from bridge.arbiter.engine import GameSnapshot
from bridge.arbiter.facts import ClockTimes, GameEnded
from bridge.table.daemon import game_data
from bridge.wire import commands, payloads
from bridge.wire.payloads import Envelope

TS = 1_790_000_000.0

Item = tuple[str, Envelope]


class TableFeed:
    """One table's daemon: a board, a clock, an outbox counter."""

    def __init__(
        self, table: str = "t1", game: str = "t1-20260501T140000Z", *, epoch: int = 1
    ) -> None:
        self.table = table
        self.game = game
        self.epoch = epoch
        self.seq = 0
        self.board = chess.Board()
        self.clock = (5400, 5400)
        self.running: Literal["white", "black"] | None = "white"
        self.alerts: list[payloads.AlertData] = []
        self.result: GameEnded | None = None
        self.assignment = commands.Assignment()
        self.alert_ids = 0
        self.pushed: list[tuple[str, str]] = []  # (uci, san) as the engine's snapshot has them
        self.raw: dict[int, bytes] = {}
        """Each payload's bytes by seq, as published."""

    # -- envelopes -----------------------------------------------------------------------------

    def envelope(self, type_: str, data: msgspec.Struct, **extra: str | int | None) -> Envelope:
        self.seq += 1
        raw = payloads.encode(
            self.table, self.game, self.epoch, self.seq, TS + self.seq, type_, data, extra or None
        )
        self.raw[self.seq] = raw
        return payloads.decode_envelope(raw)

    def clocks(self) -> payloads.Clocks:
        return payloads.Clocks(white=self.clock[0], black=self.clock[1], running=self.running)

    def status(self, state: Literal["online", "offline", "lost"] = "online") -> Item:
        return "status", self.envelope("status", payloads.StatusData(state=state), state=state)

    def move(
        self,
        san: str,
        *,
        spent: int = 10,
        completed_by: Literal["release", "clock", "reconstructed"] = "release",
        supersedes: bool = False,
    ) -> Item:
        """A legal move by SAN; its clock is the mover's time after ``spent`` seconds."""
        if supersedes:
            self.board.pop()
            self.pushed.pop()
        move = self.board.parse_san(san)
        return self._move(move, self.board.san(move), spent, completed_by, supersedes)

    def _move(
        self,
        move: chess.Move,
        san: str,
        spent: int,
        completed_by: Literal["release", "clock", "reconstructed"],
        supersedes: bool,
    ) -> Item:
        color = payloads.color_name(self.board.turn)
        ply = self.board.ply() + 1
        white, black = self.clock
        if color == "white":
            white -= spent
        else:
            black -= spent
        self.clock = (white, black)
        self.board.push(move)
        self.pushed.append((move.uci(), san))
        if completed_by == "clock":
            self.running = "black" if color == "white" else "white"
        data = payloads.MoveData(
            ply=ply,
            uci=move.uci(),
            san=san,
            fen=self.board.fen(),
            color=color,
            touched=(chess.square_name(move.from_square), chess.square_name(move.to_square)),
            clock=self.clocks(),
            completed_by=completed_by,
            supersedes=supersedes,
        )
        return "event/move", self.envelope("move", data)

    def move_from(self, fen: str, uci: str, *, spent: int = 10) -> Item:
        """A move from a position no legal move reached (after an illegal move that stood)."""
        self.board = chess.Board(fen)
        move = chess.Move.from_uci(uci)
        san = self.board.san(move)
        return self._move(move, san, spent, "clock", False)

    def stood(self, fen: str, uci: str | None, article: str = "A.4.2", count: int = 1) -> Item:
        """The ``illegal_move_stood`` alert the engine raises as the opponent replies.

        ``fen`` is the position the illegal move ``uci`` (``None``: a press without a move) left,
        the opponent to move. As the engine does, the game then starts again from it: the
        snapshots' ``start_fen`` is ``fen`` and their moves are the moves since.
        """
        irregular = chess.Board(fen)
        offender = payloads.color_name(not irregular.turn)
        self.alert_ids += 1
        data = payloads.AlertData(
            kind="illegal_move_stood",
            article=article,
            ply=irregular.ply(),
            color=offender,
            message=f"the illegal move ({uci}) stands (Art. {article})",
            details={"move": uci, "fen_before": self.board.fen(), "fen": fen, "count": count},
            id=self.alert_ids,
        )
        self.alerts.append(data)
        self.board, self.pushed = irregular, []
        return "event/alert", self.envelope("alert", data)

    def press(self, by: Literal["white", "black"], *, spent: int = 2) -> Item:
        """The clock press of ``by`` after its move (completes the last ply)."""
        white, black = self.clock
        if by == "white":
            white -= spent
        else:
            black -= spent
        self.clock = (white, black)
        self.running = "black" if by == "white" else "white"
        data = payloads.ClockData(
            kind="press",
            by=by,
            white=white,
            black=black,
            running=self.running,
            completes_ply=self.board.ply(),
        )
        return "event/clock", self.envelope("clock", data)

    def alert(
        self,
        kind: str,
        article: str,
        color: Literal["white", "black"] | None,
        message: str = "",
        **details: str | int | list[str] | None,
    ) -> Item:
        self.alert_ids += 1
        data = payloads.AlertData(
            kind=kind,
            article=article,
            ply=self.board.ply() + 1,
            color=color,
            message=message or kind,
            details=dict(details),
            id=self.alert_ids,
        )
        self.alerts.append(data)
        return "event/alert", self.envelope("alert", data)

    def ack(self, alert_id: int) -> None:
        self.alerts = [a for a in self.alerts if a.id != alert_id]

    def end(self, result: str, reason: str, article: str = "") -> Item:
        self.result = GameEnded(result=result, reason=reason, article=article, at=0.0)
        self.running = None
        data = payloads.ResultData(result=result, reason=reason, article=article)
        return "event/result", self.envelope("result", data)

    def assign(self, **fields: str | int | None) -> None:
        self.assignment = msgspec.structs.replace(self.assignment, **fields)

    def response(
        self, command: str, data: dict[str, object], *, transaction: str = "tx", ok: bool = True
    ) -> Item:
        answer = commands.Response(
            transaction=transaction,
            status="ok" if ok else "error",
            data=data if ok else {},
            error=None if ok else "refused",
        )
        return f"response/{command}", self.envelope("response", answer)

    def snapshot(self, *, start_fen: str | None = None) -> Item:
        """The retained ``game`` as the daemon builds it from the engine's snapshot."""
        start = start_fen or self.board.root().fen()
        white, black = self.clock
        clock = ClockTimes(
            white=white,
            black=black,
            running=None if self.running is None else self.running == "white",
        )
        snap = GameSnapshot(
            fen=self.board.fen(),
            start_fen=start,
            moves=tuple(self.pushed),
            turn=self.board.turn,
            clock=clock,
            result=self.result,
            alerts=(),
            claimable=(),
            rotated=False,
            illegal_moves=(0, 0),
        )
        data = game_data(snap, self.game, "fide-2018", self.seq, assignment=self.assignment)
        data = msgspec.structs.replace(data, alerts=tuple(self.alerts))
        return "game", self.envelope("game", data)

    # -- play -------------------------------------------------------------------------------------

    def play(self, sans: str, *, spent: int = 10) -> list[Item]:
        """Each move completed by its release, then the mover's press, then the snapshot."""
        items: list[Item] = []
        for san in sans.split():
            color = payloads.color_name(self.board.turn)
            items.append(self.move(san, spent=spent))
            items.append(self.press(color))
            items.append(self.snapshot())
        return items
