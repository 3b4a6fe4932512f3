"""The words of the arbiter's alerts: kind, article, message and details, per rules edition.

The engine decides *that* an alert is due (``engine``, ``press``, ``judge``); these functions say
*what* it says, citing the article of the edition in force. Every alert names the article and
what was seen, so the arbiter can decide (PRODUCT §3). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

import chess
import msgspec

from bridge.arbiter.rules import Edition

if TYPE_CHECKING:
    from bridge.arbiter.lines import Found
    from bridge.arbiter.touch import Breach

Details = dict[str, str | int | list[str] | None]

ARTICLE_4: frozenset[str] = frozenset({"touch_move", "castling_rook_first", "released_piece_moved"})
"""The kinds of alert a move raises for breaking Article 4 (4.2-4.7): how it was made."""


class Alert(msgspec.Struct, frozen=True, kw_only=True):
    """An alert about to be raised; ``ply`` ``None``: the ply about to be played."""

    kind: str
    article: str
    color: chess.Color | None
    message: str
    details: Details = msgspec.field(default_factory=dict)
    ply: int | None = None


def touch_breach(breach: Breach, move: chess.Move, color: chess.Color, ply: int) -> Alert:
    """An Article 4 obligation broken by ``move`` (``judge.touch_breach``)."""
    return Alert(
        kind=breach.kind,
        article=breach.article,
        color=color,
        message=breach.message,
        details={
            "square": chess.square_name(breach.square),
            "piece": breach.piece.symbol(),
            "obligation": breach.obligation,
            "move": move.uci(),
        },
        ply=ply,
    )


def mate_in_breach(edition: Edition, alert: Alert) -> Alert:
    """2018 5.1.1: ``alert``, the breach of Article 4 by a move that gives checkmate."""
    return msgspec.structs.replace(
        alert,
        message=(
            f"{alert.message}; the move gives checkmate, which ends the game only if the move "
            f"was made in accordance with Article 3 and Articles 4.2-4.7 (Art. "
            f"{edition.checkmate}): the game is not over until the arbiter sets the result"
        ),
    )


def promotion_changed(
    edition: Edition, move: chess.Move, chosen: chess.PieceType, color: chess.Color, ply: int
) -> Alert | None:
    """2018 4.4.4: the piece that first touched the promotion square was the choice."""
    article = edition.promotion_choice
    if article is None:
        return None
    square = chess.square_name(move.to_square)
    first, final = chess.piece_name(chosen), chess.piece_name(move.promotion or chess.QUEEN)
    return Alert(
        kind="touch_move",
        article=article,
        color=color,
        message=(
            f"a {first} was put on {square} to promote, then exchanged for a {final}: the "
            f"choice of the piece is final once it has touched the square of promotion "
            f"(Art. {article})"
        ),
        details={
            "square": square,
            "piece": chess.Piece(chosen, color).symbol(),
            "obligation": f"promote to a {first}",
            "move": move.uci(),
        },
        ply=ply,
    )


def clock_not_pressed(edition: Edition, late: chess.Color, ply: int) -> Alert:
    """The player moved but did not press before the opponent moved (1997 6.7 a, 2018 6.2.1)."""
    article = edition.clock_not_pressed
    return Alert(
        kind="clock_not_pressed",
        article=article,
        color=late,
        message=(
            f"the {_color(late)} player did not press the clock after his move before the "
            f"opponent moved (Art. {article})"
        ),
        details={"unpressed_ply": ply},
        ply=ply,
    )


def revision(
    edition: Edition,
    first: chess.Move,
    move: chess.Move,
    color: chess.Color,
    ply: int,
    *,
    castling: bool,
) -> Alert:
    """``move`` replaces ``first``, released for the same ply: rook first (4.4), or 4.7."""
    if castling and first.from_square != move.from_square:
        article = edition.castling_rook_first
        return Alert(
            kind="castling_rook_first",
            article=article,
            color=color,
            message=(
                f"the rook was moved to {chess.square_name(first.to_square)} before the king, "
                "then the player castled: castling is not allowed on that side on this move and "
                f"the rook had to move (Art. {article})"
            ),
            details={"first_move": first.uci(), "move": move.uci()},
            ply=ply,
        )
    released = chess.square_name(first.to_square)
    if move.from_square == first.from_square:
        what = f"a piece released on {released} as a legal move was moved on to "
        what += chess.square_name(move.to_square)
    else:
        what = f"the move {first.uci()} was released on {released}, then taken back and "
        what += f"{move.uci()} made instead"
    return Alert(
        kind="released_piece_moved",
        article=edition.release,
        color=color,
        message=f"{what} (Art. {edition.release}); the board is recorded as it stands",
        details={"released_on": released, "first_move": first.uci(), "move": move.uci()},
        ply=ply,
    )


def castling_king_moved_on(
    edition: Edition,
    castling: chess.Move,
    rook: chess.Square,
    move: chess.Move,
    color: chess.Color,
    ply: int,
) -> Alert:
    """The king released on its castling square while castling was legal, then another move."""
    article = edition.castling_king_released
    square, side = chess.square_name(castling.to_square), chess.square_name(rook)
    law = (
        "once the king is released the player no longer has the right to make any move "
        "other than castling on that side"
    )
    return Alert(
        kind="released_piece_moved",
        article=article,
        color=color,
        message=(
            f"the king was released on {square} while castling with the rook on {side} was "
            f"legal, then {move.uci()} was made: {law} (Art. {article}), so by the Law the move "
            f"does not stand and the player must castle; the board is recorded as it stands"
        ),
        details={
            "released_on": square,
            "first_move": castling.uci(),
            "move": move.uci(),
            "obligation": f"castle with the rook on {side}",
        },
        ply=ply,
    )


def released_and_changed(
    edition: Edition,
    color: chess.Color,
    first: chess.Move,
    instead: chess.Move | None,
    details: Details,
    ply: int,
) -> Alert:
    """The released move ``first`` taken back, or its piece moved on illegally, then the press."""
    square = chess.square_name(first.to_square)
    details = {**details, "first_move": first.uci(), "released_on": square}
    if instead is None:
        what = "then taken back"
    else:
        what = f"then moved on to {chess.square_name(instead.to_square)}, where it cannot go"
        details["move"] = instead.uci()
    return Alert(
        kind="released_piece_moved",
        article=edition.release,
        color=color,
        message=(
            f"the move {first.uci()} was released on {square} and {what} before the clock was "
            f"pressed: a piece released as a legal move cannot be moved again (Art. "
            f"{edition.release}); the move {first.uci()} stands and the board must show it"
        ),
        details=details,
        ply=ply,
    )


def illegal_what(
    edition: Edition,
    move: chess.Move,
    first: chess.Move | None,
    *,
    unpromoted: bool,
    castling: bool,
    pressed: bool,
) -> tuple[str, str]:
    """The article and the description of an illegal move read off the board."""
    how = "completed by the clock press" if pressed else "left still on a clockless board"
    if first is not None:
        return edition.illegal_move, (
            f"two moves in one turn, {first.uci()} and then {move.uci()} (moves alternate, "
            f"Art. {edition.alternate_moves}), {how}"
        )
    if unpromoted:
        article = edition.unpromoted_pawn
        what = f"the pawn moved {move.uci()} to the last rank was not exchanged for a new piece, "
        what += how
        if edition.year >= 2018:
            what += f"; the pawn shall be replaced by a queen (Art. {article})"
        return article, what
    if castling:
        return edition.illegal_move, f"castling {move.uci()}, which is not legal here, {how}"
    return edition.illegal_move, f"{move.uci()}, which no legal move explains, {how}"


def illegal_move(
    edition: Edition, color: chess.Color, count: int, what: str, article: str, details: Details
) -> Alert:
    """An illegal move (or, 2018 7.5.3, a press without one) with the count and the penalty."""
    penalty = edition.illegal_penalty(count)
    return Alert(
        kind="illegal_move",
        article=article,
        color=color,
        message=f"illegal move no. {count} by {_color(color)}: {what}; {penalty}",
        details={**details, "count": count, "penalty": penalty},
    )


def press_without_move(edition: Edition, color: chess.Color, details: Details) -> Alert:
    """1997: the clock pressed without a move (6.7 a); not an illegal move in that edition."""
    article = edition.press_without_move
    return Alert(
        kind="press_without_move",
        article=article,
        color=color,
        message=f"the clock was pressed without a move being made (Art. {article})",
        details=details,
    )


def illegal_move_stood(
    edition: Edition,
    offender: chess.Color,
    move: chess.Move | None,
    fen_before: str,
    fen: str,
    count: int,
    ply: int,
) -> Alert:
    """The opponent replied instead of claiming: the illegal move stands (C.3, B.5, A.4.2)."""
    article = edition.illegal_stands or ""
    illegal = "a press without a move" if move is None else move.uci()
    return Alert(
        kind="illegal_move_stood",
        article=article,
        color=offender,
        message=(
            f"the illegal move ({illegal}) by {_color(offender)} was not claimed and the "
            f"opponent replied: it stands and the game goes on from the position on the board "
            f"(Art. {article})"
        ),
        details={
            "move": None if move is None else move.uci(),
            "fen_before": fen_before,
            "fen": fen,
            "count": count,
        },
        ply=ply,
    )


def displaced(
    edition: Edition,
    color: chess.Color | None,
    squares: Collection[chess.Square],
    fen: str,
    *,
    knocked: bool = False,
) -> Alert:
    """Pieces displaced (1997 7.3, 2018 7.4.1); ``knocked``: several off in one scan."""
    names = [chess.square_name(sq) for sq in sorted(squares)]
    article = edition.displaced
    what = "knocked off" if knocked else "displaced on"
    message = f"pieces {what} {', '.join(names)}"
    if knocked:
        message += " in one scan of the board: a displacement, not a touch"
    details: Details = {"squares": names, "fen": fen}
    if knocked:
        details["knocked"] = 1
    return Alert(
        kind="displaced_pieces",
        article=article,
        color=color,
        message=f"{message}; the player re-establishes the position on his own time "
        f"(Art. {article})",
        details=details,
    )


def moved_after_press(
    edition: Edition,
    piece: chess.Piece,
    moved: chess.Move,
    san: str,
    completed: chess.Move,
    fen: str,
    ply: int,
) -> Alert:
    """The last mover moved his piece on after his press had completed the move (6.2.1)."""
    origin, target = chess.square_name(moved.from_square), chess.square_name(moved.to_square)
    return Alert(
        kind="displaced_pieces",
        article=edition.displaced,
        color=piece.color,
        message=(
            f"the {_name(piece)} was moved from {origin} to {target} after the clock press had "
            f"completed {san} (Art. {edition.press_completes}): the game keeps {san}; the "
            f"position must be re-established (Art. {edition.displaced})"
        ),
        details={
            "squares": [origin, target],
            "fen": fen,
            "move": moved.uci(),
            "completed_move": completed.uci(),
        },
        ply=ply,
    )


def mismatch(color: chess.Color | None, squares: list[str], fen: str, *, reconnect: bool) -> Alert:
    """Nothing explains the board: the squares that differ, to restore."""
    where = ", ".join(squares)
    if reconnect:
        message = (
            f"the board differs from the game on {where}; no legal move or pair of moves "
            "explains it: restore the position of the game"
        )
    else:
        message = f"the board differs from the game on {where}: restore the position"
    return Alert(
        kind="board_mismatch",
        article="",
        color=color,
        message=message,
        details={"squares": squares, "fen": fen},
    )


def unexplained_reading(squares: Sequence[chess.Square], board: chess.Board, found: Found) -> Alert:
    """A board read whole that no line of legal moves from the game explains, or several do."""
    where = ", ".join(chess.square_name(sq) for sq in squares)
    shown = [" ".join(m.uci() for m in line) for line in found.lines]
    apart: list[str] = []
    if len(found.lines) > 1:
        why = f"two or more lines of {found.plies} plies lead to it ({'; '.join(shown)})"
        # The moves that are not in every line; none: the same moves, in another order.
        moves = [set(line) for line in found.lines]
        odd = moves[0].union(*moves[1:]) - moves[0].intersection(*moves[1:])
        squares_apart = {sq for m in odd for sq in (m.from_square, m.to_square)}
        apart = [chess.square_name(sq) for sq in sorted(squares_apart)]
        why += f", told apart by nothing on {', '.join(apart)}" if apart else ", in either order"
    elif found.exhausted:
        why = f"the search for the moves played gave up at {found.plies} plies"
    elif found.plies:
        why = f"no line of legal moves of up to {found.plies} plies leads to it"
    else:
        why = "pieces are off their squares"
    return Alert(
        kind="board_mismatch",
        article="",
        color=None,
        message=(
            f"the board differs from the game on {where}: {why}; nothing is recorded until the "
            "position of the game is put back, or an arbiter sets the moves played "
            "(reconstruct) or the position (set_position)"
        ),
        details={
            "squares": [chess.square_name(sq) for sq in squares],
            "fen": board.fen(),
            "plies": found.plies,
            "lines": shown,
            "apart": apart,
            "search": "gave up" if found.exhausted else "complete",
        },
    )


def incorrect_claim(edition: Edition, color: chess.Color, move: chess.Move | None) -> Alert:
    """A draw claim found incorrect (9.5 b / 9.5.3), with the edition's penalty."""
    return Alert(
        kind="incorrect_claim",
        article=edition.incorrect_claim,
        color=color,
        message="draw claim found incorrect (no threefold repetition, no 50 moves): "
        + edition.claim_penalty_text,
        details={"intended_move": None if move is None else move.uci()},
    )


def _name(piece: chess.Piece) -> str:
    return f"{_color(piece.color)} {chess.piece_name(piece.piece_type)}"


def _color(color: chess.Color) -> str:
    return "white" if color == chess.WHITE else "black"
