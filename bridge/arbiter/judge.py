"""The arbiter's judgements that need no state: Article 4 obligations, irregular positions, ends.

Pure functions over python-chess boards and the engine's 64-square lists; the engine decides
*when* to ask, these decide *what* the Laws say. Article numbers come from the rules edition.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from typing import NamedTuple

import chess
import msgspec

from bridge.arbiter import dead
from bridge.arbiter.rules import Edition

Squares = Sequence[chess.Piece | None]


class Touch(NamedTuple):
    """A piece lifted by the player having the move (a touch, on a sensor board)."""

    square: chess.Square
    piece: chess.Piece
    at: float


class Breach(msgspec.Struct, frozen=True, kw_only=True):
    """A broken Article 4 obligation: the piece that had to move or be captured."""

    kind: str
    article: str
    square: chess.Square
    piece: chess.Piece
    obligation: str
    message: str


def touch_breach(
    board: chess.Board,
    move: chess.Move,
    touches: Sequence[Touch],
    edition: Edition,
    simultaneous: float = 0.0,
) -> Breach | None:
    """Whether ``move`` breaks the obligation created by ``touches`` (Art. 4.3-4.5).

    ``board`` is the position before ``move``. Only the first own piece touched that has a legal
    move and the first opponent's piece touched that can be captured create obligations (4.5:
    touching pieces that can neither move nor be captured obliges nothing). Touches less than
    ``simultaneous`` seconds apart were read in one scan of the board: they count as made at the
    same time (1997 4.4 b), so neither is "first" and either may be moved.
    """
    me = board.turn
    castling = board.is_castling(move)
    if not castling:
        origin = move.from_square
        for touch in touches:
            if touch.square != origin:
                break
        else:
            return None  # only the moving piece was touched (the usual case)
        settled = {origin, _captured_square(board, move)}
        if all(t.square in settled for t in touches):
            return None  # only the moving piece and its victim were touched
    owns = [t for t in touches if t.piece.color == me and _can_move(board, t.square)]
    first = [t for t in owns if t.at <= owns[0].at + simultaneous]
    opp = next(
        (t for t in touches if t.piece.color != me and _can_be_captured(board, t.square)), None
    )
    if castling:
        breach = _rook_before_king(board, move, touches, edition, simultaneous)
        if breach is not None:
            return breach
    breach = _king_and_rook(board, move, touches, first, edition, simultaneous)
    if breach is not None:
        return breach
    own = next((t for t in first if t.square == move.from_square), first[0] if first else None)
    if (
        castling
        and own is not None
        and own.square in (move.from_square, _castling_rook(board, move))
    ):
        own = None  # castling moves both the king and the rook
    captured = _captured_square(board, move)
    if own is not None and opp is not None:
        if _legal_capture(board, own.square, opp.square):
            if move.from_square == own.square and captured == opp.square:
                return None
            article = edition.touch_both
            return _breach(board, own, article, f"capture on {chess.square_name(opp.square)}")
        # 4.3(b) / 4.3.3: the first piece touched; when that is unclear, the own piece.
        if own.at > opp.at + simultaneous:
            own = None
        else:
            opp = None
    if own is not None and move.from_square != own.square:
        return _breach(board, own, edition.touch_own, "move")
    if opp is not None and own is None and captured != opp.square:
        return _breach(board, opp, edition.touch_opponent, "capture")
    return None


def obliges_nothing(board: chess.Board, move: chess.Move, touches: Sequence[Touch]) -> bool:
    """True when ``touch_breach`` would find no breach without asking it (the usual ply).

    The move is a king's step (not castling, which has obligations of its own) with only the
    king touched; or it is not the king's, and every touch is of the moving piece on its
    square, of a piece of the side to move on a square where the game has none of its pieces (a
    slide's lifts from the squares it crossed: such a piece cannot be moved), or of an
    opponent's piece on the target square, which the move captures. Only the moving piece
    obliges, and it moved; the only opponent's piece touched that can be captured is the one it
    captured.
    """
    origin = move.from_square
    me = board.turn
    if board.kings & chess.BB_SQUARES[origin]:
        # A king's step touched alone (``touch_breach``'s first test); castling - two files, or
        # onto its own rook - has obligations of its own.
        target = move.to_square
        return (
            abs((origin & 7) - (target & 7)) <= 1
            and not board.rooks & board.occupied_co[me] & chess.BB_SQUARES[target]
            and all(touch.square == origin for touch in touches)
        )
    for touch in touches:
        square = touch.square
        if square == origin:
            continue  # the usual ply: only the moving piece was touched
        if touch.piece.color == me:
            if board.occupied_co[me] & chess.BB_SQUARES[square]:
                return False
        elif square != move.to_square or not board.occupied_co[not me] & chess.BB_SQUARES[square]:
            return False
    return True


def _rook_before_king(
    board: chess.Board,
    move: chess.Move,
    touches: Sequence[Touch],
    edition: Edition,
    simultaneous: float,
) -> Breach | None:
    """4.4(a) / 4.4.2: a rook deliberately touched, then the king, then castling on that side."""
    rook = _castling_rook(board, move)
    king_touch = next((t for t in touches if t.square == move.from_square), None)
    rook_touch = next((t for t in touches if t.square == rook), None)
    if rook_touch is None or king_touch is None or rook_touch.at >= king_touch.at - simultaneous:
        return None
    return Breach(
        kind="castling_rook_first",
        article=edition.castling_rook_first,
        square=rook,
        piece=rook_touch.piece,
        obligation="move",
        message=(
            f"the rook on {chess.square_name(rook)} was touched before the king, then "
            f"the player castled: castling is not allowed on that side on this move "
            f"and the rook had to move (Art. {edition.castling_rook_first})"
        ),
    )


def _king_and_rook(
    board: chess.Board,
    move: chess.Move,
    touches: Sequence[Touch],
    first: Sequence[Touch],
    edition: Edition,
    simultaneous: float,
) -> Breach | None:
    """The king touched first (alone or with a rook), then a rook: 4.4(b), 4.4.1, 4.4.3.

    2018 4.4.1: castling on that rook's side is legal, so the player must castle there. 1997
    4.4(b) and 2018 4.4.3: castling there is illegal, so the king must move (castling on the
    other side included). The 1997 Laws do not oblige castling.
    """
    king = board.king(board.turn)
    king_touch = next((t for t in first if t.square == king), None)
    if king is None or king_touch is None:
        return None  # another piece was touched first: 4.3 governs
    rank = chess.square_rank(king)
    rook_touch = next(
        (
            t
            for t in touches
            if t.piece == chess.Piece(chess.ROOK, board.turn)
            and t.at >= king_touch.at - simultaneous
            and chess.square_rank(t.square) == rank
            and chess.square_file(t.square) in (0, 7)
        ),
        None,
    )
    if rook_touch is None:
        return None
    kingside = chess.square_file(rook_touch.square) == 7
    castle = chess.Move(king, chess.square(6 if kingside else 2, rank))
    side = f"with the rook on {chess.square_name(rook_touch.square)}"
    if board.is_legal(castle):
        article = edition.castle_king_and_rook
        if article is None or move == castle:
            return None
        obligation = f"castle {side}"
        message = (
            f"the king and then the rook on {chess.square_name(rook_touch.square)} were touched "
            f"and castling {side} was legal: the player had to castle on that side "
            f"(Art. {article}), unless j'adoube was announced"
        )
    else:
        if move.from_square == king:
            return None
        article = edition.castling_side_illegal
        obligation = "move the king"
        message = (
            f"the king and the rook on {chess.square_name(rook_touch.square)} were touched and "
            f"castling {side} is illegal: the king had to move (Art. {article}), unless "
            "j'adoube was announced"
        )
    return Breach(
        kind="touch_move",
        article=article,
        square=king,
        piece=king_touch.piece,
        obligation=obligation,
        message=message,
    )


def _breach(board: chess.Board, touch: Touch, article: str, obligation: str) -> Breach:
    whose = "own" if touch.piece.color == board.turn else "opponent's"
    verb = "moved" if obligation == "move" else ("captured" if obligation == "capture" else "used")
    name = chess.piece_name(touch.piece.piece_type)
    square = chess.square_name(touch.square)
    return Breach(
        kind="touch_move",
        article=article,
        square=touch.square,
        piece=touch.piece,
        obligation=obligation,
        message=(
            f"the {whose} {name} on {square} was touched first and could be {verb}, but another "
            f"move was made: Art. {article} requires it, unless j'adoube was announced"
        ),
    )


def _can_move(board: chess.Board, square: chess.Square) -> bool:
    """Whether the piece on ``square`` has a legal move (false if it is not the mover's)."""
    return any(board.generate_legal_moves(from_mask=chess.BB_SQUARES[square]))


def _can_be_captured(board: chess.Board, square: chess.Square) -> bool:
    mask = chess.BB_SQUARES[square]
    if any(True for _ in board.generate_legal_moves(to_mask=mask)):
        return True
    ep = board.ep_square
    return ep is not None and board.has_legal_en_passant() and _ep_victim(board) == square


def _legal_capture(board: chess.Board, origin: chess.Square, target: chess.Square) -> bool:
    if any(
        True for _ in board.generate_legal_moves(chess.BB_SQUARES[origin], chess.BB_SQUARES[target])
    ):
        return True
    ep = board.ep_square
    return ep is not None and _ep_victim(board) == target and board.is_legal(chess.Move(origin, ep))


def _ep_victim(board: chess.Board) -> chess.Square | None:
    ep = board.ep_square
    if ep is None:
        return None
    return ep + (-8 if board.turn == chess.WHITE else 8)


def _captured_square(board: chess.Board, move: chess.Move) -> chess.Square | None:
    if board.is_en_passant(move):
        return _ep_victim(board)
    if board.piece_at(move.to_square) is not None and not board.is_castling(move):
        return move.to_square
    return None


def _castling_rook(board: chess.Board, move: chess.Move) -> chess.Square:
    rank = chess.square_rank(move.from_square)
    kingside = chess.square_file(move.to_square) > chess.square_file(move.from_square)
    return chess.square(7 if kingside else 0, rank)


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
    if edition.fivefold and board.is_fivefold_repetition():
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
