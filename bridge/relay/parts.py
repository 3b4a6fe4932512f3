"""A table's game in *parts* that legal moves connect (pure).

An illegal move that stood leaves a position no legal move reaches, which a PGN cannot hold: the
moves after it become a new part starting from that position (``[FEN]``). :func:`split_game`
replays the moves with python-chess and starts a new part where the table's payloads say the
game goes on from another position.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import chess

from bridge.relay.notes import StoodMove, describe_move
from bridge.views.model import move_number
from bridge.wire import payloads
from bridge.wire.payloads import MoveRecord


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


def replace_ending(part: Part, ending: str) -> Part:
    return Part(
        start_fen=part.start_fen,
        moves=part.moves,
        since=part.since,
        lead=part.lead,
        ending=ending,
        head_notes=part.head_notes,
    )


def same(fen_a: str, fen_b: str) -> bool:
    """The same position to continue from: pieces and side to move (counters aside)."""
    return fen_a.split()[:2] == fen_b.split()[:2]


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
    waiting: MoveRecord | None = None
    """On the last split: the move that could not be placed after it, for want of the position
    it was played from (no payload gave it yet); the moves from it on wait for one."""


def split_game(
    start_fen: str,
    moves: Sequence[MoveRecord],
    fens_after: Mapping[int, str],
    stood: Mapping[int, StoodMove] | None = None,
    shown: Mapping[int, str] | None = None,
) -> list[Split]:
    """The moves in parts that legal moves connect (SAN recomputed by python-chess).

    Every position a part starts from is one the table published: ``stood`` are the illegal
    moves that stood, by the ply of the reply (their ``illegal_move_stood`` alert gives the
    position the illegal move left); ``shown`` the position a ``game`` snapshot showed after its
    last move, by that move's ply. ``fens_after`` is the position after a ply when a ``move``
    event gave it: a legal move that does not lead there was played from another position.

    A move that python-chess does not play from where the game stands starts a new part only
    when a payload gives the position it leads to (a snapshot showed it as the position after
    that move: the move itself was the irregular one). Any other move that cannot be placed
    (the position it was played from is in no payload yet: a reply whose ``illegal_move_stood``
    alert was lost, a ply that never came) ends the list as the last split's ``waiting``: the
    relay asks the table for what is missing and never guesses the position.

    Raises:
        ValueError: ``start_fen`` is not a position.
    """
    board = chess.Board(start_fen)
    splits = [Split(board.fen())]
    for record in moves:
        try:
            move = chess.Move.from_uci(record.uci)
        except ValueError:
            splits[-1].waiting = record
            break
        after = fens_after.get(record.ply)
        known = None if stood is None else stood.get(record.ply)
        if known is not None and same(board.fen(), known.fen):
            known = None  # already there: the table's game restarted from that position
        resumed = None if known is None else _after_stood(known, record, move, after)
        if known is not None and resumed is not None:
            part, board = resumed
            # What was recorded for the illegal ply itself was taken back (a rook moved first).
            splits[-1].moves = [m for m in splits[-1].moves if m[0].ply < known.ply]
            splits.append(part)
            continue
        legal = board.is_legal(move)
        if legal and _leads_to(board, move, after):
            splits[-1].moves.append((record, board.san(move)))
            board.push(move)
            continue
        left = None if shown is None else shown.get(record.ply)
        if legal or left is None or record.ply != board.ply() + 1:
            splits[-1].waiting = record
            break
        # The table's snapshot showed the position after this move, which python-chess does
        # not play from here: the move itself was the irregular one; the game goes on from it.
        mover = "White" if board.turn == chess.WHITE else "Black"
        label = f"{move_number(record.ply)}{'.' if board.turn == chess.WHITE else '...'}"
        part = Split(
            chess.Board(left).fen(),
            illegal=f"{label} {describe_move(board, move)} by {mover}",
            stood_ply=record.ply,
            first_ply=record.ply + 1,
        )
        board = chess.Board(part.start_fen)
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


def _leads_to(board: chess.Board, move: chess.Move, after: str | None) -> bool:
    if after is None:
        return True
    reached = board.copy(stack=False)
    reached.push(move)
    return same(reached.fen(), after)


def same_pieces(one: chess.BaseBoard, other: chess.BaseBoard) -> bool:
    """Whether two boards have the same pieces on the same squares (cheaper than their FENs)."""
    return all(
        one.pieces_mask(kind, color) == other.pieces_mask(kind, color)
        for kind in chess.PIECE_TYPES
        for color in chess.COLORS
    )
