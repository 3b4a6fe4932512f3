"""What the broadcast and the arbiters' page say beside the moves (pure): the alerts and the
arbiters' actions as they were logged, the PGN comments where the Laws changed the course, and
the illegal move that stood as the table's ``illegal_move_stood`` alert describes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import chess

from bridge.views.model import format_seconds, move_number
from bridge.wire import payloads
from bridge.wire.payloads import AlertData

NOTED_ALERTS: Final = frozenset({"illegal_move", "incorrect_claim", "press_without_move"})
"""Alerts that change the course of the game (a penalty): they become PGN comments.

The others (touch-move, castling rook first, released piece moved on, displaced pieces, a clock
not pressed) are for the arbiters: the broadcast does not judge what only an arbiter decides.
"""


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


def describe_move(board: chess.Board, move: chess.Move) -> str:
    """``Bf1-c5`` / ``Nxe5``-style text for a move that may be illegal."""
    piece = board.piece_at(move.from_square)
    letter = "" if piece is None or piece.piece_type == chess.PAWN else piece.symbol().upper()
    sep = "x" if board.piece_at(move.to_square) is not None else "-"
    return f"{letter}{chess.square_name(move.from_square)}{sep}{chess.square_name(move.to_square)}"
