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
  illegal move the alert names); a legal move not finished on the board (the king of a castling
  with its rook still home, an en passant with the victim still there) stands, and what it left
  undone is displaced pieces. A legal move explains part of the board: the move stands, and the
  rest is displaced pieces (1997 7.3, 2018 7.4.1) - unless the rest is a second move of his.
  Otherwise displaced pieces or a board nobody can explain.

A second move in one turn is an illegal move only when it is one a hand made: a legal move in
the position after the first (a piece that went where it cannot go, a bishop on c3 from c1 or a
pawn sideways, fell there), put down more than one scan of the board after it was lifted (a
piece that left its square and stood on another within one scan fell or was knocked there).
Of two moves, the first is the one put down first.

When in doubt between a breach and a displacement the answer is the displacement: an alert the
arbiter dismisses costs nothing, a wrong illegal move can cost a game. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

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


class Hands(msgspec.Struct, frozen=True, kw_only=True):
    """When the pieces of this turn were lifted and put down: who moved them, and in what order.

    ``lifted`` and ``placed`` map a square to when a piece last left it and was last put on it
    in this turn (a piece put back on its own square is no longer lifted); ``knocked`` are the
    squares of pieces knocked over in this turn; ``same_scan`` is one scan of the board.
    """

    lifted: Mapping[chess.Square, float] = msgspec.field(default_factory=dict)
    placed: Mapping[chess.Square, float] = msgspec.field(default_factory=dict)
    knocked: Collection[chess.Square] = frozenset()
    same_scan: float = 0.0

    def fell(self, move: chess.Move) -> bool:
        """The piece of ``move`` stood on its new square within one scan of leaving its own."""
        lifted = self.lifted.get(move.from_square)
        placed = self.placed.get(move.to_square)
        return lifted is not None and placed is not None and placed - lifted < self.same_scan

    def put_down(self, move: chess.Move) -> float:
        """When the piece of ``move`` was put down (a move with no record of it: at once)."""
        return self.placed.get(move.to_square, float("-inf"))


def on_turn(
    board: chess.Board,
    game: Squares,
    physical: Squares,
    diff: Collection[chess.Square],
    hands: Hands | None = None,
) -> Verdict:
    """What the board shows when the player having the move (``board.turn``) presses.

    ``game`` lists ``board``'s pieces, ``diff`` the squares where ``physical`` differs from it;
    ``hands`` says when this turn's pieces were lifted and put down (see ``Hands``).
    """
    hands = Hands() if hands is None else hands
    color = board.turn
    if not diff:
        return NoMove()
    one = judge.read_move(game, physical, diff, color)
    if one is not None:
        if board.is_legal(one):
            return Completes(move=one, displaced=unfinished(board, one, physical))
        return Illegal(move=one)
    found = positions.legal_with_displaced(board, game, physical, diff)
    seconds = [
        (move, rest, _second(board, move, game, physical, rest, hands)) for move, rest in found
    ]
    displaced = [(move, rest) for move, rest, second in seconds if second is None]
    if displaced:
        # The move that explains the most squares (castling rather than its rook alone); two
        # that explain as much are a doubt, and a doubt is no move.
        fewest = min(len(rest) for _, rest in displaced)
        best = [(move, rest) for move, rest in displaced if len(rest) == fewest]
        if len(best) == 1:
            move, rest = best[0]
            return Completes(move=move, displaced=rest)
    elif seconds:
        # Two moves, each a hand's: the first is the one put down first.
        first, _, second = min(seconds, key=lambda found: hands.put_down(found[0]))
        assert second is not None
        return Illegal(move=second, first=first)
    return Unexplained(displacement=judge.is_displacement(game, physical))


def unfinished(board: chess.Board, move: chess.Move, physical: Squares) -> frozenset[chess.Square]:
    """The squares where the board does not show what legal ``move`` of ``board`` puts there.

    Empty for a move made in full; the rook's squares of a castling made with the king alone,
    the victim's square of an en passant that left it there.
    """
    return frozenset(
        sq for sq, piece in positions.move_changes(board, move) if physical[sq] != piece
    )


def after_own_move(
    before: chess.Board,
    before_game: Squares,
    recorded: chess.Move,
    changed: Collection[chess.Square],
    game: Squares,
    physical: Squares,
    diff: Collection[chess.Square],
    hands: Hands | None = None,
) -> Verdict | None:
    """What the board shows when the player presses after his move ``recorded``.

    ``before`` and ``before_game`` are the position before ``recorded``, ``changed`` the squares
    it changed; ``game`` is the position after it and ``diff`` where ``physical`` differs from
    that. ``None`` when the board equals the game (the ordinary press). ``hands``: this turn's
    lifts and places since ``recorded`` was recorded (see ``Hands``).
    """
    hands = Hands() if hands is None else hands
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
    if second is not None and _by_hand(before, recorded, second, hands):
        return Illegal(move=second, first=recorded)  # the released move stands (4.7)
    if instead is not None:
        return Illegal(move=instead, retract=True)  # the released move was taken back
    if all(physical[sq] == before_game[sq] for sq in changed):
        # Every square of the move shows the position before it again: taken back, whatever
        # else was done meanwhile (the opponent may even have moved on the mover's time).
        return TakenBack()
    return Unexplained(displacement=judge.is_displacement(game, physical))


def _second(
    board: chess.Board,
    first: chess.Move,
    game: Squares,
    physical: Squares,
    rest: Collection[chess.Square],
    hands: Hands,
) -> chess.Move | None:
    """The squares left over after legal ``first``, read as a second move of the same player."""
    if not rest or any(sq in hands.knocked for sq in rest):
        return None
    second = judge.read_move(game, physical, rest, board.turn)
    return second if second is not None and _by_hand(board, first, second, hands) else None


def _by_hand(board: chess.Board, first: chess.Move, second: chess.Move, hands: Hands) -> bool:
    """Whether ``second``, after ``first`` of ``board``, is a move a hand made, not a fall.

    It must be a legal move of the same player in the position after ``first`` (as if the
    opponent had passed), and its piece put down more than one scan after it was lifted.
    """
    if hands.fell(second) or any(
        sq in hands.knocked for sq in (second.from_square, second.to_square)
    ):
        return False
    after = board.copy(stack=False)
    after.push(first)
    after.push(chess.Move.null())
    return after.is_legal(second)
