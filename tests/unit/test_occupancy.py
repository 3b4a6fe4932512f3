"""Occupancy-only boards (a DGT Pegasus): which piece moved is inferred from the game.

Every piece put down is reported as UNKNOWN. The engine takes the piece the move needs (the one
in hand, or the one whose square emptied), assumes a queen for a promotion it cannot see (and
says so), judges touches and releases as on any board (a lift is a lift), and reads moves made
while the board was disconnected off its full reading when exactly one line explains it.
"""

from __future__ import annotations

import chess
import pytest

from bridge.arbiter.facts import AlertRaised, CompletedBy, Fact, MovePlayed
from drivers.choreography import Lift, Place, Style
from drivers.events import UNKNOWN, BoardSnapshot, SquareOccupied
from tests.table import OccupancyBoard

P = chess.Piece.from_symbol


def moves(facts: list[Fact]) -> list[MovePlayed]:
    return [f for f in facts if isinstance(f, MovePlayed)]


def alerts(facts: list[Fact]) -> list[AlertRaised]:
    return [f for f in facts if isinstance(f, AlertRaised)]


def play(table: OccupancyBoard, board: chess.Board, *sans: str) -> list[Fact]:
    out: list[Fact] = []
    for san in sans:
        move = board.parse_san(san)
        out += table.make(board, move)
        board.push(move)
    return out


@pytest.mark.parametrize("style", [Style.PLAIN, Style.PROMOTE_VIA_PAWN])
@pytest.mark.parametrize(
    ("fen", "san"),
    [
        ("8/1P6/8/8/8/8/1k6/4K3 w - - 0 1", "b8=Q"),
        ("2r5/1P6/8/8/8/8/1k6/4K3 w - - 0 1", "bxc8=Q"),
        ("4k3/8/8/8/8/8/1p6/4K3 b - - 0 1", "b1=Q+"),
    ],
)
def test_a_promotion_it_cannot_see_is_a_queen_and_says_so(fen: str, san: str, style: Style) -> None:
    board = chess.Board(fen)
    table = OccupancyBoard(board.copy())
    move = board.parse_san(san)
    facts = table.make(board, move, style)
    (played,) = moves(facts)
    assert played.move == move
    assert played.promotion_assumed
    assert played.san == board.san(move)
    assert not alerts(facts)
    assert not table.arbiter.differing()


def test_a_move_that_promotes_nothing_assumes_nothing() -> None:
    board = chess.Board()
    table = OccupancyBoard(board.copy())
    facts = play(table, board, "e4", "e5", "Nf3")
    assert [m.promotion_assumed for m in moves(facts)] == [False, False, False]


def test_an_under_promotion_is_a_queen_until_the_arbiter_corrects_it() -> None:
    start = "8/1P6/8/8/8/7p/1k6/4K3 w - - 0 1"
    board = chess.Board(start)
    table = OccupancyBoard(board.copy())
    table.make(board, chess.Move.from_uci("b7b8n"))
    assert [m.move.uci() for m in moves(table.facts)] == ["b7b8q"]
    # The arbiter's correction (correct_move): the piece it cannot see is what the game says.
    corrected = chess.Board(start)
    corrected.push_uci("b7b8n")
    table.arbiter.set_game(corrected, keep_counts=True)
    assert table.arbiter.physical()[chess.B8] == P("N")
    assert not table.arbiter.differing()
    table.make(corrected, chess.Move.from_uci("b2c3"))
    corrected.push_uci("b2c3")
    facts = table.make(corrected, chess.Move.from_uci("b8a6"))  # a knight's move
    assert [m.san for m in moves(facts)] == ["Na6"]
    assert not alerts(table.facts)


@pytest.mark.parametrize("style", list(Style))
def test_captures_castling_and_en_passant_in_every_style(style: Style) -> None:
    board = chess.Board()
    table = OccupancyBoard(board.copy())
    line = "e4 d5 exd5 Qxd5 Nc3 Qd8 Bc4 Nf6 Nf3 e5 O-O e4 d4 exd3 Bxf7+ Kxf7"
    for san in line.split():
        move = board.parse_san(san)
        table.make(board, move, style)
        board.push(move)
    assert table.recorded() == board.move_stack
    assert not alerts(table.facts)


def test_a_piece_lifted_unseen_is_the_one_whose_square_emptied() -> None:
    # The knight was lifted while the board was off: its square reads empty in the full
    # reading; put down on f3, it is the knight (not the hand's last piece: there is none).
    board = chess.Board()
    table = OccupancyBoard(board.copy())
    in_hand = board.copy()
    in_hand.remove_piece_at(chess.G1)
    assert moves(table.read_whole(in_hand, wait=0.5)) == []
    facts = table.arbiter.feed(
        SquareOccupied(square=chess.F3, piece=UNKNOWN, at=table.now), table.now
    )
    (played,) = moves(facts)
    assert played.san == "Nf3"


def test_touch_move_is_judged_on_occupancy_a_lift_is_a_lift() -> None:
    board = chess.Board()
    table = OccupancyBoard(board.copy())
    table.do([Lift(chess.G1), Place(chess.G1, P("N"))], interval=0.5)  # touched, put back
    facts = table.make(board, board.parse_san("e4"))
    assert [a.kind for a in alerts(facts)] == ["touch_move"]
    assert alerts(facts)[0].details["square"] == "g1"


def test_a_released_piece_moved_on_is_judged_on_occupancy() -> None:
    board = chess.Board("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2")
    table = OccupancyBoard(board.copy())
    table.do([Lift(chess.F1), Place(chess.C4, P("B"))])
    table.wait(2.0)  # released: Bc4 recorded after the dwell
    facts = table.do([Lift(chess.C4), Place(chess.B5, P("B"))])
    facts += table.wait(2.0)
    assert [m.san for m in moves(table.facts)] == ["Bc4", "Bb5"]
    assert moves(facts)[0].supersedes
    assert [a.kind for a in alerts(facts)] == ["released_piece_moved"]


def test_a_move_made_while_the_board_was_off_is_read_off_its_occupancy() -> None:
    board = chess.Board()
    table = OccupancyBoard(board.copy())
    play(table, board, "e4", "e5", "Nf3", "d6", "d4", "Bg4", "dxe5", "Bxf3", "Qxf3", "dxe5")
    board.push_san("Bc4")  # made while the board is off
    facts = table.read_whole(board)
    (played,) = moves(facts)
    assert (played.san, played.completed_by) == ("Bc4", CompletedBy.RECONSTRUCTED)
    assert not alerts(facts)
    assert not table.arbiter.differing()


def test_two_plies_made_while_off_are_read_off_the_board() -> None:
    board = chess.Board()
    table = OccupancyBoard(board.copy())
    board.push_san("e4")
    board.push_san("c5")
    facts = table.read_whole(board)
    assert [m.san for m in moves(facts)] == ["e4", "c5"]
    assert table.recorded() == board.move_stack


def test_a_reading_two_lines_explain_is_a_mismatch_never_a_guess() -> None:
    # The bishop on c4 took on f7 or on a6 (both squares stay occupied): occupancy cannot say.
    fen = "rnbqkbnr/pppppppp/n7/8/2B1P3/8/PPPP1PPP/RNBQK1NR w KQkq - 0 1"
    board = chess.Board(fen)
    board.remove_piece_at(chess.B8)  # the knight is on a6
    table = OccupancyBoard(board.copy())
    board.push_san("Bxf7+")
    facts = table.read_whole(board)
    assert moves(facts) == []
    assert [a.kind for a in alerts(facts)] == ["board_mismatch"]


def test_a_reading_nothing_explains_is_a_mismatch() -> None:
    board = chess.Board()
    table = OccupancyBoard(board.copy())
    squares = [UNKNOWN if board.piece_at(sq) else None for sq in chess.SQUARES]
    squares[chess.E4] = UNKNOWN  # a piece from nowhere
    snapshot = BoardSnapshot(squares=tuple(squares), at=table.now)
    facts = table.arbiter.recover(None, snapshot, table.now) + table.wait(10.0)
    assert moves(facts) == []
    assert [a.kind for a in alerts(facts)] == ["board_mismatch"]
