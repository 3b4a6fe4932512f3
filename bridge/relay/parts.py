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
        if known is not None and same(board.fen(), known.fen):
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
    return same(reached.fen(), after)


def _pushed_anyway(board: chess.Board, move: chess.Move, after: str | None) -> chess.Board | None:
    """The board after ``move`` played although illegal (its piece is the mover's), or ``None``."""
    piece = board.piece_at(move.from_square)
    target = board.piece_at(move.to_square)
    if piece is None or piece.color != board.turn or (target and target.color == board.turn):
        return None
    pushed = board.copy(stack=False)
    pushed.push(move)
    if after is not None and not same(pushed.fen(), after):
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
