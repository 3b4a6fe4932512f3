"""What a clock press completes: the whole board judged against the game (1997 6.7, 2018 6.2.1).

The press completes the move (1997 6.7 a; 2018 6.2.1), so at a press the engine asks what the
board as a whole shows, and these functions answer from the few squares that differ. They run
only at a press (or, on a board without a clock, once an unexplained board has been left
still), and only when the board differs from the game: never on the hot path of clean play.

Two questions, with python-chess deciding legality and ``judge.read_move`` reading what the
player's pieces did, legal or not:

* ``after_own_move`` - the player presses after a move of his that is already recorded. The
  board should be the game after it. If not, in this order: the recorded move was taken back
  (4.7); the whole turn, read against the position before that move, is one move - a legal one
  (a revision), the king of a castling the rook of which was released first (an illegal castling,
  7.4 / 7.5.1), or the released piece moved on (4.7); the board shows a second move on top of the
  first (two moves in one turn: 1.1 / 1.2, an illegal move; the released first move stands); the
  released move was taken back and an illegal one made instead; or pieces are displaced.
* ``on_turn`` - the player having the move presses with no move recorded. Nothing changed: a
  press without a move. One move of his pieces explains the board: that move (legal, or an
  illegal move the alert names). A legal move explains part of it: the move stands, and the rest
  is displaced pieces (1997 7.3, 2018 7.4.1) - unless the rest is a second move of his. Otherwise
  displaced pieces or a board nobody can explain.

When in doubt between a breach and a displacement the answer is the displacement: an alert the
arbiter dismisses costs nothing, a wrong illegal move can cost a game. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import chess
import msgspec

from bridge.arbiter import judge, positions

Squares = Sequence[chess.Piece | None]


class Completes(msgspec.Struct, frozen=True, kw_only=True):
    """A legal move; ``displaced`` are the squares left over, pieces displaced besides it."""

    move: chess.Move
    displaced: frozenset[chess.Square] = frozenset()


class Revision(msgspec.Struct, frozen=True, kw_only=True):
    """Another legal move than the recorded one, from the same position (it supersedes it)."""

    move: chess.Move


class Illegal(msgspec.Struct, frozen=True, kw_only=True):
    """An illegal move, read off the board.

    ``first`` is set for two moves in one turn (``move`` is then the second); ``retract`` when the
    recorded move was only part of this one (the rook of a castling) and must be taken back.
    """

    move: chess.Move
    first: chess.Move | None = None
    retract: bool = False


class TakenBack(msgspec.Struct, frozen=True, kw_only=True):
    """The recorded move was released and then taken back entirely before the press (4.7)."""


class MovedOn(msgspec.Struct, frozen=True, kw_only=True):
    """The piece of the recorded move was released and then moved on to where it cannot go."""

    move: chess.Move
    """The move the board shows instead, from the position before the recorded one."""


class NoMove(msgspec.Struct, frozen=True, kw_only=True):
    """The board equals the game: the clock was pressed without a move."""


class Unexplained(msgspec.Struct, frozen=True, kw_only=True):
    """No move explains the board: pieces displaced (the same pieces) or a mismatch."""

    displacement: bool


Verdict = Completes | Revision | Illegal | TakenBack | MovedOn | NoMove | Unexplained


def on_turn(
    board: chess.Board,
    game: Squares,
    physical: Squares,
    diff: Collection[chess.Square],
    knocked: Collection[chess.Square] = (),
) -> Verdict:
    """What the board shows when the player having the move (``board.turn``) presses.

    ``game`` lists ``board``'s pieces, ``diff`` the squares where ``physical`` differs from it;
    ``knocked`` are squares of pieces knocked over in this turn (never read as a second move).
    """
    color = board.turn
    if not diff:
        return NoMove()
    one = judge.read_move(game, physical, diff, color)
    if one is not None:
        if board.is_legal(one):
            return Completes(move=one)
        return Illegal(move=one)
    found = positions.legal_with_displaced(board, game, physical, diff)
    displaced = [
        (move, rest)
        for move, rest in found
        if _second(game, physical, rest, color, knocked) is None
    ]
    if displaced:
        # The move that explains the most squares (castling rather than its rook alone); two
        # that explain as much are a doubt, and a doubt is no move.
        fewest = min(len(rest) for _, rest in displaced)
        best = [(move, rest) for move, rest in displaced if len(rest) == fewest]
        if len(best) == 1:
            move, rest = best[0]
            return Completes(move=move, displaced=rest)
    elif found:
        move, rest = found[0]
        second = _second(game, physical, rest, color, knocked)
        assert second is not None
        return Illegal(move=second, first=move)
    return Unexplained(displacement=judge.is_displacement(game, physical))


def after_own_move(
    before: chess.Board,
    before_game: Squares,
    recorded: chess.Move,
    changed: Collection[chess.Square],
    game: Squares,
    physical: Squares,
    diff: Collection[chess.Square],
) -> Verdict | None:
    """What the board shows when the player presses after his move ``recorded``.

    ``before`` and ``before_game`` are the position before ``recorded``, ``changed`` the squares
    it changed; ``game`` is the position after it and ``diff`` where ``physical`` differs from
    that. ``None`` when the board equals the game (the ordinary press).
    """
    if not diff:
        return None
    color = before.turn
    whole = {sq for sq in {*diff, *changed} if physical[sq] != before_game[sq]}
    if not whole:
        return TakenBack()
    instead = judge.read_move(before_game, physical, whole, color)
    if instead is not None:
        if before.is_legal(instead):
            return Revision(move=instead)
        if judge.is_castling_shape(before_game, instead):
            return Illegal(move=instead, retract=True)  # its rook was the recorded move
        if instead.from_square == recorded.from_square:
            return MovedOn(move=instead)
    second = judge.read_move(game, physical, diff, color)
    if second is not None:
        return Illegal(move=second, first=recorded)  # the released move stands (4.7)
    if instead is not None:
        return Illegal(move=instead, retract=True)  # the released move was taken back
    return Unexplained(displacement=judge.is_displacement(game, physical))


def _second(
    game: Squares,
    physical: Squares,
    rest: Collection[chess.Square],
    color: chess.Color,
    knocked: Collection[chess.Square],
) -> chess.Move | None:
    """The squares left over after a legal move, read as a second move of ``color``."""
    if not rest or any(sq in knocked for sq in rest):
        return None
    return judge.read_move(game, physical, rest, color)
