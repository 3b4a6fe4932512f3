"""The arbiter's judgements that need no state: what a board shows, and the end of the game.

Pure functions over python-chess boards and the engine's 64-square lists; the engine decides
*when* to ask, these decide *what* the Laws say: the move of a player's pieces that squares
show, legal or not (Art. 7), whether a board is displaced pieces (7.3 / 7.4.1), and the end of
the game (5, 6.9, 9.6; the DGT convention of the kings in the centre). Article 4 is ``touch``'s.
Article numbers come from the rules edition.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

import chess
import msgspec

from bridge.arbiter import dead
from bridge.arbiter.rules import Edition

Squares = Sequence[chess.Piece | None]


# -- irregular positions ---------------------------------------------------------------------


def differing(game: Squares, physical: Squares, squares: set[chess.Square]) -> list[str]:
    """Names of the squares in ``squares`` where the board differs from the game, a1 first."""
    return [chess.square_name(sq) for sq in sorted(squares) if game[sq] != physical[sq]]


def read_move(
    game: Squares, physical: Squares, diff: Collection[chess.Square], color: chess.Color
) -> chess.Move | None:
    """The one move of ``color``'s pieces, legal or not, that the squares in ``diff`` show.

    A move is whatever the player's pieces did: one piece gone from its square and standing on
    another (empty, or where an opponent's piece stood: a capture; an en passant victim may be
    gone too), a pawn exchanged on the last rank (promotion) or left there as a pawn, or the king
    two squares towards a rook with that rook beside it on the other side (castling, encoded as
    python-chess does: the king's two-square move). ``None`` when the squares are not one move of
    ``color``: pieces missing, a piece turned into another, pieces of both sides moved.
    Legality is not asked: the caller knows whether a legal move explains the board.
    """
    gone: list[chess.Square] = []
    arrived: list[chess.Square] = []
    other: list[chess.Square] = []
    for sq in diff:
        was, now = game[sq], physical[sq]
        if now is None:
            (gone if _is(was, color) else other).append(sq)
        elif now.color == color and not _is(was, color):
            arrived.append(sq)
        else:
            other.append(sq)
    if len(gone) == 2 and len(arrived) == 2 and not other:
        return _castling_shape(game, physical, gone, arrived, color)
    if len(gone) != 1 or len(arrived) != 1:
        return None
    source, target = gone[0], arrived[0]
    mover, placed = game[source], physical[target]
    assert mover is not None
    assert placed is not None
    if other and (other != [_ep_victim_of(source, target)] or mover.piece_type != chess.PAWN):
        return None
    promotion: chess.PieceType | None = None
    if placed.piece_type != mover.piece_type:
        last = 7 if color == chess.WHITE else 0
        if mover.piece_type != chess.PAWN or chess.square_rank(target) != last:
            return None
        if placed.piece_type == chess.KING:
            return None
        promotion = placed.piece_type
    return chess.Move(source, target, promotion)


def is_unpromoted_pawn(game: Squares, move: chess.Move) -> bool:
    """``move`` (read off the board) leaves a pawn on the last rank, not exchanged (2018 7.5.2)."""
    mover = game[move.from_square]
    rank = chess.square_rank(move.to_square)
    return (
        mover is not None
        and mover.piece_type == chess.PAWN
        and move.promotion is None
        and rank == (7 if mover.color == chess.WHITE else 0)
    )


def is_castling_shape(game: Squares, move: chess.Move) -> bool:
    """``move`` (read off the board) is a king's two-square move along its rank: castling."""
    mover = game[move.from_square]
    return (
        mover is not None
        and mover.piece_type == chess.KING
        and chess.square_rank(move.from_square) == chess.square_rank(move.to_square)
        and abs(chess.square_file(move.from_square) - chess.square_file(move.to_square)) == 2
    )


def has_arrival(
    game: Squares, physical: Squares, diff: set[chess.Square], color: chess.Color
) -> bool:
    """A piece of ``color`` stands on a square of ``diff`` where the game has none of its own."""
    return any(_is(physical[sq], color) and not _is(game[sq], color) for sq in diff)


def judged_later(
    game: Squares,
    physical: Squares,
    diff: set[chess.Square],
    turn: chess.Color,
    revisable: bool,
) -> chess.Color | None:
    """The player whose press (or, without a clock, the board left still) judges the board: the
    side to move once a piece of his stands where the game has none of his own; else, while the
    last move may be revised, its player once such a piece of his does. ``None``: nobody's."""
    if has_arrival(game, physical, diff, turn):
        return turn
    if revisable and has_arrival(game, physical, diff, not turn):
        return not turn
    return None


def _castling_shape(
    game: Squares,
    physical: Squares,
    gone: list[chess.Square],
    arrived: list[chess.Square],
    color: chess.Color,
) -> chess.Move | None:
    king = chess.Piece(chess.KING, color)
    rook = chess.Piece(chess.ROOK, color)
    king_from = next((sq for sq in gone if game[sq] == king), None)
    rook_from = next((sq for sq in gone if game[sq] == rook), None)
    king_to = next((sq for sq in arrived if physical[sq] == king), None)
    rook_to = next((sq for sq in arrived if physical[sq] == rook), None)
    if king_from is None or rook_from is None or king_to is None or rook_to is None:
        return None
    rank = chess.square_rank(king_from)
    if any(chess.square_rank(sq) != rank for sq in (rook_from, king_to, rook_to)):
        return None
    step = 1 if chess.square_file(rook_from) > chess.square_file(king_from) else -1
    if king_to != king_from + 2 * step or rook_to != king_from + step:
        return None
    if chess.square_file(rook_from) not in (0, 7) or game[king_to] is not None:
        return None
    if game[rook_to] is not None:
        return None
    return chess.Move(king_from, king_to)


def _ep_victim_of(source: chess.Square, target: chess.Square) -> chess.Square:
    return chess.square(chess.square_file(target), chess.square_rank(source))


def is_displacement(game: Squares, physical: Squares) -> bool:
    """The same pieces are on the board, some on other squares, or some are missing (7.3)."""
    on_board = Counter(p for p in physical if p is not None)
    in_game = Counter(p for p in game if p is not None)
    return all(on_board[piece] <= count for piece, count in in_game.items()) and all(
        piece in in_game for piece in on_board
    )


def _is(piece: chess.Piece | None, color: chess.Color) -> bool:
    return piece is not None and piece.color == color


# -- the end of the game ---------------------------------------------------------------------


class Ending(msgspec.Struct, frozen=True, kw_only=True):
    """How a game ended: ``1-0``, ``0-1`` or ``1/2-1/2``, why, and the article."""

    result: str
    reason: str
    article: str


CHECKMATE = "checkmate"


def ending_after_move(board: chess.Board, edition: Edition) -> Ending | None:
    """Whether the move just made ended the game at once (5.1, 5.2, 9.6, dead position)."""
    if not any(board.generate_legal_moves()):
        if board.is_check():
            winner = "0-1" if board.turn == chess.WHITE else "1-0"
            return Ending(result=winner, reason=CHECKMATE, article=edition.checkmate)
        return Ending(result="1/2-1/2", reason="stalemate", article=edition.stalemate)
    if board.is_insufficient_material() or dead.is_blockade(board):
        return Ending(result="1/2-1/2", reason="dead position", article=edition.dead_position)
    if edition.seventy_five and board.halfmove_clock >= 150:
        return Ending(result="1/2-1/2", reason="75 moves", article=edition.seventy_five)
    # A position seen five times needs four returns of at least four plies each, none of them
    # a capture or a pawn move: python-chess's look back over the game is asked only then.
    if edition.fivefold and board.halfmove_clock >= 16 and board.is_fivefold_repetition():
        return Ending(result="1/2-1/2", reason="fivefold repetition", article=edition.fivefold)
    return None


def claimable(board: chess.Board) -> tuple[str, ...]:
    """Draws the player having the move could claim now (9.2 threefold, 9.3 fifty moves).

    A repetition needs at least four plies with no capture or pawn move: before that, python-
    chess's search (which replays those plies and tries every legal move) is not asked.
    """
    out: list[str] = []
    if board.halfmove_clock >= 4 and board.can_claim_threefold_repetition():
        out.append("threefold")
    if board.halfmove_clock >= 99 and board.can_claim_fifty_moves():
        out.append("fifty_moves")
    return tuple(out)


def draw_claimed(board: chess.Board, move: chess.Move | None, edition: Edition) -> Ending | None:
    """The draw a claim by the player having the move establishes, if it is correct.

    With ``move``, the claim is for the position that move is about to produce (9.2 a, 9.3 a):
    threefold repetition (9.2) or fifty moves (9.3) on the game's history.

    Raises:
        ValueError: ``move`` is not legal.
    """
    board = board.copy()
    if move is not None:
        if not board.is_legal(move):
            raise ValueError(f"the intended move {move.uci()} is not legal in {board.fen()}")
        board.push(move)
    if board.is_repetition(3):
        reason, article = "threefold repetition", edition.threefold
    elif board.halfmove_clock >= 100:
        reason, article = "50 moves", edition.fifty_moves
    else:
        return None
    return Ending(result="1/2-1/2", reason=f"{reason} claimed", article=article)


def flag_ending(board: chess.Board, flagged: chess.Color, edition: Edition) -> Ending:
    """The result when ``flagged``'s time runs out (6.9; C.4 in 1997 blitz)."""
    winner = not flagged
    if not can_mate(board, winner, c4=edition.c4_mating_potential):
        return Ending(
            result="1/2-1/2",
            reason="flag fall, but the opponent cannot checkmate",
            article=edition.flag_fall,
        )
    result = "1-0" if winner == chess.WHITE else "0-1"
    return Ending(result=result, reason="flag fall", article=edition.flag_fall)


def can_mate(board: chess.Board, color: chess.Color, *, c4: bool = False) -> bool:
    """Whether ``color`` could still checkmate by some series of legal moves (6.9, 7.5.5, C.4).

    False for insufficient material and for a dead blockade (``dead.is_blockade``); with ``c4``,
    also for two knights against a lone king (1997 blitz, C.4).
    """
    if board.has_insufficient_material(color) or dead.is_blockade(board):
        return False
    if not c4:
        return True
    # 1997 C.4: two knights and a king against a lone king is not mating potential.
    pieces = board.occupied_co[color] & ~board.kings
    knights = board.knights & board.occupied_co[color]
    lone = not (board.occupied_co[not color] & ~board.kings)
    return not (lone and pieces == knights and chess.popcount(knights) == 2)


def kings_in_centre(physical: Squares) -> Ending | None:
    """Both kings on the centre squares: the DGT broadcast convention for a result.

    Both on light squares (d5, e4): White won; both on dark squares (d4, e5): Black won; one
    on each: a draw.
    """
    kings = {
        sq: piece.color
        for sq in (chess.D4, chess.D5, chess.E4, chess.E5)
        if (piece := physical[sq]) is not None and piece.piece_type == chess.KING
    }
    if set(kings.values()) != {chess.WHITE, chess.BLACK}:
        return None
    light = [bool(chess.BB_SQUARES[sq] & chess.BB_LIGHT_SQUARES) for sq in kings]
    if all(light):
        result = "1-0"
    elif not any(light):
        result = "0-1"
    else:
        result = "1/2-1/2"
    return Ending(
        result=result, reason="kings placed in the centre (result convention)", article=""
    )
