"""What is known of each table, folded from its MQTT payloads (pure: no I/O, no clock).

:class:`TableView` applies the payloads of one table (docs/product.md §2) in arrival order and keeps
what a spectator, an arbiter or a relay wants: the position, the moves, the clocks, the open
alerts, the board link, the result. Duplicates are dropped by ``(epoch, seq)``: QoS 1 and the
daemon's outbox may deliver a payload twice, and retained payloads come again after every
reconnect. The formatting helpers name clock times and moves the way the views print them.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import chess
import msgspec

from bridge.wire import payloads
from bridge.wire.payloads import (
    AlertData,
    BoardData,
    ClockData,
    Clocks,
    Envelope,
    GameData,
    MoveData,
    MoveRecord,
    ResultData,
    StatusData,
    TouchData,
)

SEEN_LIMIT: Final = 4096
"""Per table, how many ``(game, epoch, seq)`` keys are remembered for dropping duplicates."""

PAST_GAMES: Final = 64
"""Per table, how many replaced game ids are remembered (their late copies are dropped)."""


class PayloadError(ValueError):
    """A payload decoded as an envelope but its ``data`` is unusable (wrong shape, bad FEN)."""


@dataclass(frozen=True, slots=True)
class Applied:
    """What :meth:`TableView.apply` did with a new payload.

    ``line`` is the one-line description for the plain output, ``None`` when the payload only
    refreshed state that was already reported (e.g. the ``game`` snapshot after each move).
    """

    line: str | None


# --- formatting helpers ----------------------------------------------------------------------


def format_seconds(seconds: int) -> str:
    """Clock time as ``m:ss`` (``h:mm:ss`` from one hour; a ``-`` when below zero)."""
    sign = "-" if seconds < 0 else ""
    minutes, secs = divmod(abs(seconds), 60)
    if minutes >= 60:
        hours, minutes = divmod(minutes, 60)
        return f"{sign}{hours}:{minutes:02d}:{secs:02d}"
    return f"{sign}{minutes}:{secs:02d}"


def format_clocks(clocks: Clocks | None) -> str:
    """``W 4:59* B 5:00``: both clocks, ``*`` after the running one; ``""`` without a clock."""
    if clocks is None:
        return ""
    white = format_seconds(clocks.white) + ("*" if clocks.running == "white" else "")
    black = format_seconds(clocks.black) + ("*" if clocks.running == "black" else "")
    return f"W {white} B {black}"


def move_number(ply: int) -> int:
    """The full-move number of ``ply`` (1 is White's first move from the initial position)."""
    return (ply - 1) // 2 + 1


def move_label(ply: int, san: str, color: str) -> str:
    """``12. Nf3`` for White, ``12... Nf6`` for Black."""
    dots = "." if color == "white" else "..."
    return f"{move_number(ply)}{dots} {san}"


def move_rows(moves: Sequence[MoveRecord]) -> list[tuple[int, str, str]]:
    """The moves as ``(number, white SAN, black SAN)`` rows; ``...`` fills a missing white move."""
    rows: list[tuple[int, str, str]] = []
    for move in moves:
        number = move_number(move.ply)
        if move.color == "white":
            rows.append((number, move.san, ""))
        elif rows and rows[-1][0] == number and not rows[-1][2]:
            rows[-1] = (number, rows[-1][1], move.san)
        else:
            rows.append((number, "...", move.san))
    return rows


def alert_line(alert: AlertData) -> str:
    who = f" {alert.color}" if alert.color else ""
    return f"{alert.kind} {alert.article}{who} ply {alert.ply}: {alert.message}"


def board_line(board: BoardData) -> str:
    parts = [f"board {board.state}"]
    identity = " ".join(
        part
        for part in (
            board.model,
            None if board.serial is None else f"serial {board.serial}",
            None if board.firmware is None else f"v{board.firmware}",
        )
        if part
    )
    if identity:
        parts.append(f"({identity})")
    if board.battery is not None:
        parts.append(f"battery {board.battery}%" + (" charging" if board.charging else ""))
    if board.rssi is not None:
        parts.append(f"signal {board.rssi} dBm")
    if board.orientation == "rotated":
        parts.append("rotated")
    text = " ".join(parts)
    if board.error and board.state != "connected":
        text += f": {board.error}"
    return text


def touch_line(touch: TouchData) -> str:
    piece = f" {touch.piece}" if touch.piece else ""
    return f"{touch.action} {touch.square}{piece}: {touch.meaning}"


def result_line(result: ResultData) -> str:
    return " ".join(part for part in (result.result, result.reason, result.article) if part)


def plies_text(count: int) -> str:
    return "1 ply" if count == 1 else f"{count} plies"


def natural_key(table: str) -> list[tuple[int, int | str]]:
    """Sort ``t2`` before ``t10``."""
    return [
        (0, int(part)) if part.isdigit() else (1, part)
        for part in re.split(r"(\d+)", table)
        if part
    ]


# --- the model -------------------------------------------------------------------------------


class TableView:
    """What is known of one table, folded from its payloads in arrival order.

    Retained state (``status``, ``board``, ``game``) replaces what came before; events update the
    game between snapshots. A payload seen before (same ``game``, ``epoch`` and ``seq``) is
    dropped, and so is a retained payload older than the one already applied (same ``game`` and
    ``epoch``, lower ``seq``). A ``game`` snapshot of a game id not seen before replaces the game
    at once, whatever its ``(epoch, seq)``: the table may have started again from an empty state
    directory, counting from 1 again. A game replaced is never taken back: what comes later of
    it (a copy resent after a reconnect) is dropped.
    """

    def __init__(self, table: str) -> None:
        self.table = table
        self.status: str | None = None
        self.status_error: str | None = None
        """What the daemon says keeps it from working as it should (its status's ``error``)."""
        self.board: BoardData | None = None
        self.game_id: str | None = None
        self.rules: str | None = None
        self.players: dict[str, str] | None = None
        self.event: str | None = None
        self.round: str | None = None
        self.board_number: str | None = None
        self.fen: str | None = None
        self.start_fen: str | None = None
        """The position the game started from (``None`` until a ``game`` snapshot says)."""
        self.position: chess.Board | None = None
        self.moves: list[MoveRecord] = []
        self.clocks: Clocks | None = None
        self.alerts: list[AlertData] = []
        self.result: ResultData | None = None
        self.last_touch: TouchData | None = None
        self._seen: set[tuple[str, int, int]] = set()
        self._seen_order: deque[tuple[str, int, int]] = deque()
        self._retained_at: dict[str, tuple[str, int, int]] = {}
        self._past_games: deque[str] = deque(maxlen=PAST_GAMES)
        """The game ids this table's game was replaced from, latest last."""

    # -- queries --------------------------------------------------------------------------

    @property
    def last_move(self) -> MoveRecord | None:
        """The last move played, if any."""
        return self.moves[-1] if self.moves else None

    @property
    def turn(self) -> str | None:
        """``"white"`` or ``"black"`` to move, from the position."""
        if self.position is None:
            return None
        return payloads.color_name(self.position.turn)

    def seen(self, game: str, epoch: int, seq: int) -> bool:
        """Whether the payload ``(epoch, seq)`` of ``game`` at this table was applied already."""
        return (game, epoch, seq) in self._seen

    # -- updates --------------------------------------------------------------------------

    def apply(self, envelope: Envelope) -> Applied | None:
        """Fold one payload in; ``None`` when it was dropped (duplicate or stale).

        Unknown payload types are accepted and change nothing (later versions may add some).

        Raises:
            PayloadError: the payload's ``data`` does not fit its ``type`` (or has a bad FEN);
                nothing was changed and the payload is not remembered as seen.
        """
        key = (envelope.game, envelope.epoch, envelope.seq)
        if key in self._seen:
            return None
        kind = envelope.type
        if envelope.game and envelope.game in self._past_games:
            return None  # a game replaced: a late copy of it
        if kind in ("status", "board", "game"):
            newest = self._retained_at.get(kind)
            if newest is not None and newest[:2] == key[:2] and newest[2] > key[2]:
                return None
        try:
            applied = self._apply(envelope)
        except (msgspec.ValidationError, ValueError) as exc:
            raise PayloadError(f"{kind} payload seq {envelope.seq}: {exc}") from exc
        self._remember(key)
        if kind in ("status", "board", "game"):
            self._retained_at[kind] = key
        if self.game_id is None and envelope.game:
            self.game_id = envelope.game
        return applied

    def _remember(self, key: tuple[str, int, int]) -> None:
        self._seen.add(key)
        self._seen_order.append(key)
        if len(self._seen_order) > SEEN_LIMIT:
            self._seen.discard(self._seen_order.popleft())

    def _apply(self, envelope: Envelope) -> Applied:
        match envelope.type:
            case "status":
                return self._apply_status(payloads.data_as(envelope, StatusData))
            case "board":
                return self._apply_board(payloads.data_as(envelope, BoardData))
            case "game":
                return self._apply_game(payloads.data_as(envelope, GameData))
            case "move":
                return self._apply_move(envelope, payloads.data_as(envelope, MoveData))
            case "clock":
                return self._apply_clock(envelope, payloads.data_as(envelope, ClockData))
            case "alert":
                return self._apply_alert(envelope, payloads.data_as(envelope, AlertData))
            case "result":
                return self._apply_result(envelope, payloads.data_as(envelope, ResultData))
            case "touch":
                return self._apply_touch(envelope, payloads.data_as(envelope, TouchData))
            case _:
                return Applied(None)

    def _line(self, text: str) -> str:
        return f"{self.table} {text}"

    def _apply_status(self, data: StatusData) -> Applied:
        changed = (data.state, data.error) != (self.status, self.status_error)
        self.status = data.state
        self.status_error = data.error
        text = f"status {data.state}" + (f": {data.error}" if data.error else "")
        return Applied(self._line(text) if changed else None)

    def _apply_board(self, data: BoardData) -> Applied:
        old = self.board
        self.board = data
        if old is not None and (old.state, old.error) == (data.state, data.error):
            return Applied(None)
        return Applied(self._line(board_line(data)))

    def _apply_game(self, data: GameData) -> Applied:
        position = chess.Board(data.fen)  # ValueError: a bad FEN
        new_game = data.id != self.game_id or "game" not in self._retained_at
        before = (tuple((m.ply, m.uci) for m in self.moves), self.result, len(self.alerts))
        self._replace_game(data.id)
        self.rules = data.rules
        self.players = data.players
        self.event = data.event
        self.round = data.round
        self.board_number = data.board
        self.fen = data.fen
        self.start_fen = data.start_fen
        self.position = position
        self.moves = data.moves.records()
        self.clocks = data.clocks
        self.alerts = list(data.alerts)
        self.result = (
            None
            if data.result is None
            else ResultData(
                result=data.result, reason=data.reason or "", article=data.article or ""
            )
        )
        if new_game:
            self.last_touch = None
            return Applied(self._line(f"game {data.id} ({data.rules}): {self._summary()}"))
        moves, result, alerts = before
        if moves != tuple((m.ply, m.uci) for m in self.moves) or result != self.result:
            return Applied(self._line(f"game {data.id} now: {self._summary()}"))
        if alerts != len(self.alerts):
            return Applied(self._line(f"open alerts: {len(self.alerts)}"))
        return Applied(None)

    def _summary(self) -> str:
        last = self.last_move
        parts = [
            "no moves yet"
            if last is None
            else f"{plies_text(len(self.moves))}, last {move_label(last.ply, last.san, last.color)}"
        ]
        clocks = format_clocks(self.clocks)
        if clocks:
            parts.append(clocks)
        if self.result is not None:
            parts.append(f"result {result_line(self.result)}")
        if self.alerts:
            parts.append(f"{len(self.alerts)} open alerts")
        return ", ".join(parts)

    def folded(self, envelope: Envelope) -> bool:
        """Whether an event is already part of the ``game`` snapshot applied (or was replaced).

        The daemon publishes each snapshot after the events it folds in, so an event from the
        same epoch with a lower ``seq`` than the snapshot changes nothing, nor does an event of
        an earlier epoch (a daemon's run before the one that published the snapshot: epochs
        only grow), such as a ``replay`` brings back.
        """
        at = self._retained_at.get("game")
        if at is None:
            return False
        _, epoch, seq = at
        return envelope.epoch < epoch or (epoch == envelope.epoch and seq > envelope.seq)

    def _replace_game(self, game_id: str) -> None:
        """The table's game is ``game_id`` from now on; the one before it is past."""
        if self.game_id is not None and game_id != self.game_id:
            self._past_games.append(self.game_id)
        self.game_id = game_id

    def _new_game_from_event(self, envelope: Envelope) -> None:
        if envelope.game and envelope.game != self.game_id:
            self._replace_game(envelope.game)
            self.start_fen = None
            self.moves = []
            self.alerts = []
            self.result = None
            self.last_touch = None

    def _apply_move(self, envelope: Envelope, data: MoveData) -> Applied:
        position = chess.Board(data.fen)  # ValueError: a bad FEN
        completed = data.completed_by + (
            ", corrects the previous record" if data.supersedes else ""
        )
        clocks = format_clocks(data.clock)
        text = f"move {move_label(data.ply, data.san, data.color)} ({completed})"
        line = self._line(f"{text} {clocks}" if clocks else text)
        if self.folded(envelope):
            return Applied(line)
        self._new_game_from_event(envelope)
        self.moves = [move for move in self.moves if move.ply < data.ply]
        self.moves.append(MoveRecord(ply=data.ply, uci=data.uci, san=data.san, color=data.color))
        self.fen = data.fen
        self.position = position
        if data.clock is not None:
            self.clocks = data.clock
        return Applied(line)

    def _apply_clock(self, envelope: Envelope, data: ClockData) -> Applied:
        white = data.white if data.white is not None else self._clock_of("white")
        black = data.black if data.black is not None else self._clock_of("black")
        clocks = (
            None
            if white is None or black is None
            else Clocks(white=white, black=black, running=data.running)
        )
        what = f"press by {data.by}" if data.kind == "press" and data.by else data.kind
        shown = format_clocks(clocks)
        line = self._line(f"clock {what} {shown}" if shown else f"clock {what}")
        if not self.folded(envelope) and clocks is not None:
            self.clocks = clocks
        return Applied(line)

    def _clock_of(self, color: str) -> int | None:
        if self.clocks is None:
            return None
        return self.clocks.white if color == "white" else self.clocks.black

    def _apply_alert(self, envelope: Envelope, data: AlertData) -> Applied:
        if not self.folded(envelope):
            self._new_game_from_event(envelope)
            if data not in self.alerts:
                self.alerts.append(data)
        return Applied(self._line(f"alert {data.kind} {data.article}: {data.message}"))

    def _apply_result(self, envelope: Envelope, data: ResultData) -> Applied:
        if not self.folded(envelope):
            self._new_game_from_event(envelope)
            self.result = data
        return Applied(self._line(f"result {result_line(data)}"))

    def _apply_touch(self, envelope: Envelope, data: TouchData) -> Applied:
        if not self.folded(envelope):
            self.last_touch = data
        return Applied(self._line(f"touch {touch_line(data)}"))
