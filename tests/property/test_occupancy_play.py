"""Games on a board that senses occupancy only (a DGT Pegasus): the engine infers the pieces.

Every piece put down is reported as UNKNOWN, and a capture always shows its square empty for a
moment (the hand takes the victim off). Properties:

- random games played live in random hand styles: the recorded game equals the played one
  (promotions are to a queen: the board cannot tell another piece, and the engine takes a
  queen, saying so, unless an arbiter corrects it);
- random games in which up to three plies are made while the board is disconnected, then a
  full reading of the board arrives: when exactly one shortest line of legal plies leaves the
  squares occupied as read, it is recorded; otherwise one ``board_mismatch`` and nothing. The
  expected lines come from a brute force of every line, written here on its own. A line
  shorter than the one played can leave the same squares occupied (a queen's two steps and its
  one diagonal): the board is the truth, and the line that alone explains it is recorded.
"""

from __future__ import annotations

import chess
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bridge.arbiter.facts import AlertRaised, MovePlayed
from drivers.choreography import Style
from tests.table import OccupancyBoard

THINK = 2.0
"""Seconds between moves: longer than the dwell, so every move is released before the next."""


def _queen_moves(board: chess.Board) -> list[chess.Move]:
    return [m for m in board.legal_moves if m.promotion in (None, chess.QUEEN)]


def _draw_move(data: st.DataObject, board: chess.Board, label: str) -> chess.Move:
    """A legal move (promotions to a queen), pawn moves often: games that reach promotions."""
    legal = _queen_moves(board)
    pawns = [m for m in legal if board.piece_type_at(m.from_square) == chess.PAWN]
    prefer_pawns: bool = data.draw(st.booleans(), label=f"{label}: a pawn")
    if pawns and prefer_pawns:
        legal = pawns
    return data.draw(st.sampled_from(legal), label=label)


def _walk(
    board: chess.Board,
    occupied: int,
    line: list[chess.Move],
    left: int,
    found: list[list[chess.Move]],
) -> None:
    if left == 0:
        if board.occupied == occupied:
            found.append(list(line))
        return
    for move in _queen_moves(board):
        board.push(move)
        line.append(move)
        _walk(board, occupied, line, left - 1, found)
        line.pop()
        board.pop()


def _shortest_lines(board: chess.Board, occupied: int, most: int) -> list[list[chess.Move]]:
    """Every line of legal plies from ``board`` that leaves ``occupied`` occupied, of the
    shortest length that has one, up to ``most`` plies (a promotion only to a queen: the board
    cannot tell another piece). Brute force, on its own: no pruning."""
    for length in range(1, most + 1):
        found: list[list[chess.Move]] = []
        _walk(board, occupied, [], length, found)
        if found:
            return found
    return []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_game_on_an_occupancy_board_is_recorded_as_played(data: st.DataObject) -> None:
    # Often from a position some plies in (pawn moves favoured): promotions come up.
    board = chess.Board()
    for _ in range(data.draw(st.integers(min_value=0, max_value=60), label="plies before")):
        if board.is_game_over():
            break
        board.push(_draw_move(data, board, "move before"))
    table = OccupancyBoard(board.copy())
    start = len(board.move_stack)
    plies = data.draw(st.integers(min_value=1, max_value=60), label="plies")
    for _ in range(plies):
        if board.is_game_over() or table.arbiter.result is not None:
            break
        move = _draw_move(data, board, "move")
        style = data.draw(st.sampled_from(list(Style)), label="style")
        pace = data.draw(st.sampled_from([0.1, 0.2, 0.35]), label="pace")
        table.make(board, move, style, pace, THINK)
        board.push(move)
    table.wait(THINK)
    live = board.move_stack[start:]
    event(f"promotions: {sum(m.promotion is not None for m in live)}")
    assert table.recorded() == live
    for fact in table.facts:
        if isinstance(fact, MovePlayed):
            assert fact.promotion_assumed == (fact.move.promotion is not None)
    assert not [f for f in table.facts if isinstance(f, AlertRaised)], "clean play, no alert"


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_plies_made_while_disconnected_are_recovered_or_refused(data: st.DataObject) -> None:
    board = chess.Board()
    for _ in range(data.draw(st.integers(min_value=0, max_value=40), label="plies before")):
        if board.is_game_over():
            break
        board.push(_draw_move(data, board, "move before"))
    table = OccupancyBoard(board)
    played = board.copy()
    off = data.draw(st.integers(min_value=1, max_value=3), label="plies while off")
    for _ in range(off):
        if played.is_game_over():
            break
        played.push(_draw_move(data, played, "move while off"))
    missed = played.move_stack[len(board.move_stack) :]
    facts = table.read_whole(played)
    event(f"plies made while off: {len(missed)}")
    recovered = [f.move for f in facts if isinstance(f, MovePlayed)]
    mismatch = [f for f in facts if isinstance(f, AlertRaised) and f.kind == "board_mismatch"]
    if played.occupied == board.occupied:
        # Nothing was played (the game had ended), or the plies left every square as it was:
        # the board is the game's, and the board is the truth.
        assert (recovered, mismatch) == ([], [])
        return
    lines = _shortest_lines(board.copy(), played.occupied, len(missed))
    event(f"shortest lines: {min(len(lines), 2)} of {len(lines[0])} plies")
    if len(lines) == 1 and not (mismatch and mismatch[0].details["search"] == "gave up"):
        # One shortest line explains the squares: recorded. It is the played one whenever
        # no shorter line leaves the same squares occupied (the board is the truth).
        assert recovered == lines[0]
        assert not mismatch
        for fact in facts:
            if isinstance(fact, MovePlayed):
                assert fact.promotion_assumed == (fact.move.promotion is not None)
        assert len(lines[0]) < len(missed) or recovered == missed
    else:
        # Several lines (or a search that gave up): one alert, nothing recorded, never a guess.
        assert not recovered, (recovered, missed, lines[:2])
        assert len(mismatch) == 1
