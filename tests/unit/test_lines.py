"""The search for moves made unheard: lines of legal moves to a board read whole."""

from __future__ import annotations

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.arbiter import lines
from bridge.arbiter.positions import squares_of


def after(board: chess.Board, sans: str) -> chess.Board:
    out = board.copy()
    for san in sans.split():
        out.push_san(san)
    return out


def opening(sans: str = "e4 e5 Nf3 Nc6 Bb5") -> chess.Board:
    return after(chess.Board(), sans)


def ucis(found: lines.Found) -> list[list[str]]:
    return [[m.uci() for m in line] for line in found.lines]


@pytest.mark.parametrize("played", ["a6", "d6 Bxc6+ bxc6", "Bc5 c3 Bxf2+ Kxf2"])
def test_the_one_line_is_found(played: str) -> None:
    start = opening()
    line = tuple(after(start, played).move_stack[len(start.move_stack) :])
    found = lines.search(start, squares_of(after(start, played)))
    assert found.lines == (line,)
    assert found.line == line
    assert (found.plies, found.exhausted) == (len(line), False)


@pytest.mark.parametrize("played", ["d6 d4 Bd7 Nc3 Nf6 O-O", "a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3"])
def test_six_and_eight_plies_in_some_order_are_found_and_not_guessed(played: str) -> None:
    start = opening()
    line = tuple(after(start, played).move_stack[len(start.move_stack) :])
    found = lines.search(start, squares_of(after(start, played)), budget=10_000)
    assert not found.exhausted
    assert found.plies == len(line)
    # The moves in other orders: the board cannot tell; the search lists some of them.
    assert 2 <= len(found.lines) <= lines.LISTED
    for other in found.lines:
        board = start.copy()
        for move in other:
            board.push(move)
        assert squares_of(board) == squares_of(after(start, played))
    assert found.line is None


def test_the_game_itself_is_a_line_of_no_plies() -> None:
    start = opening()
    assert lines.search(start, squares_of(start)) == lines.Found(((),), 0, False)


def test_two_captures_that_leave_the_same_squares_occupied_are_two_lines() -> None:
    # The queen takes on d5 or on e5: on a board that senses occupancy only, the same board.
    start = chess.Board("4k3/8/8/3pp3/3Q4/8/8/4K3 w - - 0 1")
    target = after(start, "Qxd5")
    occupied = [sq for sq in chess.SQUARES if target.piece_at(sq) is not None]
    found = lines.search(start, [None] * 64, occupied, max_plies=1)
    assert sorted(ucis(found)) == [["d4d5"], ["d4e5"]]
    assert found.line is None


def test_nothing_explains_a_piece_that_vanished() -> None:
    start = opening()
    board = after(start, "a6")
    squares = squares_of(board)
    squares[chess.H2] = None
    found = lines.search(start, squares, max_plies=4)
    assert found.lines == ()
    assert found.line is None


def test_the_search_gives_up_within_its_budget() -> None:
    start = after(chess.Board(), "e4 d5")
    target = after(start, "exd5 Qxd5 Nc3 Qa5 d4 Nf6 Nf3 Bf5")
    found = lines.search(start, squares_of(target), budget=200)
    assert found.exhausted
    assert found.line is None
    assert found.tried == 200


def test_an_occupancy_reading_is_explained_by_where_pieces_stand() -> None:
    start = opening()
    target = after(start, "a6 Bxc6 dxc6")
    occupied = [sq for sq in chess.SQUARES if target.piece_at(sq) is not None]
    found = lines.search(start, [None] * 64, occupied)
    assert ucis(found) == [["a7a6", "b5c6", "d7c6"]]


def test_a_promotion_onto_a_square_read_unknown_is_a_queen() -> None:
    start = chess.Board("4k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    target = after(start, "a8=N")
    occupied = [sq for sq in chess.SQUARES if target.piece_at(sq) is not None]
    found = lines.search(start, [None] * 64, occupied, max_plies=1)
    assert ucis(found) == [["a7a8q"]]
    # A board that senses pieces sees the knight.
    assert ucis(lines.search(start, squares_of(target), max_plies=1)) == [["a7a8n"]]


def _brute(board: chess.Board, squares: list[chess.Piece | None], most: int) -> list[list[str]]:
    """Every line of the shortest length that leaves ``squares``; written on its own."""
    for length in range(1, most + 1):
        found: list[list[str]] = []
        _walk(board, squares, [], length, found)
        if found:
            return found
    return []


def _walk(
    board: chess.Board,
    squares: list[chess.Piece | None],
    line: list[str],
    left: int,
    found: list[list[str]],
) -> None:
    if left == 0:
        if all(board.piece_at(sq) == squares[sq] for sq in chess.SQUARES):
            found.append(list(line))
        return
    for move in list(board.legal_moves):
        board.push(move)
        line.append(move.uci())
        _walk(board, squares, line, left - 1, found)
        line.pop()
        board.pop()


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_the_search_finds_what_every_line_tried_finds(data: st.DataObject) -> None:
    board = chess.Board()
    for _ in range(data.draw(st.integers(0, 30), label="plies before")):
        if board.is_game_over():
            break
        board.push(data.draw(st.sampled_from(list(board.legal_moves)), label="before"))
    played = board.copy()
    for _ in range(data.draw(st.integers(1, 3), label="plies unheard")):
        if played.is_game_over():
            break
        played.push(data.draw(st.sampled_from(list(played.legal_moves)), label="unheard"))
    unheard = len(played.move_stack) - len(board.move_stack)
    target = squares_of(played)
    expected = _brute(board.copy(), target, unheard)
    found = lines.search(board, target, max_plies=unheard, budget=10**6)
    if unheard == 0 or not expected:
        # Nothing was played, or the plies left the board as it was.
        assert found.lines in ((), ((),))
        return
    assert not found.exhausted
    assert found.plies == len(expected[0])
    assert len(found.lines) == min(len(expected), lines.LISTED)
    assert all([m.uci() for m in line] in expected for line in found.lines)
