"""The engine turns lifts and places into legal moves for every way a person makes one."""

from __future__ import annotations

import chess
import pytest

from bridge.arbiter import positions
from bridge.arbiter.engine import Arbiter, EngineConfig
from bridge.arbiter.facts import (
    ClockPressed,
    CompletedBy,
    Fact,
    GameEnded,
    MovePlayed,
    TouchAction,
    TouchReported,
)
from drivers.choreography import Lift, Place, Step, Style, steps, to_events
from drivers.events import BoardSnapshot, ClockReading, ClockSide
from tests.table import HandFed

DWELL = 0.4


class Table(HandFed):
    """An arbiter fed by hand, with no clock."""

    def __init__(self, fen: str = chess.STARTING_FEN) -> None:
        self.board = chess.Board(fen)
        super().__init__(Arbiter(EngineConfig(dwell=DWELL), self.board))

    def play(self, move: chess.Move, style: Style = Style.PLAIN) -> list[MovePlayed]:
        seq = steps(self.board, move, style)
        self.board.push(move)
        facts = self.do(seq) + self.wait(1.0)
        return moves(facts)


def moves(facts: list[Fact]) -> list[MovePlayed]:
    return [f for f in facts if isinstance(f, MovePlayed)]


def uci(text: str) -> chess.Move:
    return chess.Move.from_uci(text)


# Positions where each kind of move is legal for the side to move.
CAPTURE = "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 2"  # exd5
EN_PASSANT = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"  # exf6 e.p.
CASTLING = "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 0 8"
PROMOTION = "3r3k/2P5/8/8/8/8/6PP/6K1 w - - 0 40"  # c8=Q, cxd8=N, ...
BLACK_PROMOTION = "6k1/8/8/8/8/8/5p2/4R2K b - - 0 40"


@pytest.mark.parametrize("style", list(Style))
@pytest.mark.parametrize(
    ("fen", "move"),
    [
        (chess.STARTING_FEN, "e2e4"),
        (chess.STARTING_FEN, "g1f3"),
        (CAPTURE, "e4d5"),
        (EN_PASSANT, "e5f6"),
        (CASTLING, "e1g1"),
        (CASTLING, "e1c1"),
        (PROMOTION, "c7c8q"),
        (PROMOTION, "c7c8n"),
        (PROMOTION, "c7d8q"),
        (PROMOTION, "c7d8r"),
        (BLACK_PROMOTION, "f2f1q"),
        (BLACK_PROMOTION, "f2e1b"),
        ("4k3/8/8/8/8/8/8/Q3K3 w - - 0 1", "a1a8"),
        ("4k3/8/8/8/8/8/8/Q3K3 w - - 0 1", "a1h8"),
    ],
)
def test_every_style_gives_exactly_the_move(fen: str, move: str, style: Style) -> None:
    table = Table(fen)
    played = table.play(uci(move), style)
    assert [m.move for m in played] == [uci(move)]
    assert played[0].ply == chess.Board(fen).ply() + 1
    assert not played[0].supersedes
    assert played[0].fen == table.board.fen()


def test_black_castles_king_first_both_sides() -> None:
    for move in ("e8g8", "e8c8"):
        table = Table(CASTLING.replace(" w ", " b "))
        played = table.play(uci(move))
        assert [m.move for m in played] == [uci(move)]
        assert played[0].san in ("O-O", "O-O-O")


def test_victim_of_en_passant_removed_last_is_not_a_phantom_move() -> None:
    table = Table(EN_PASSANT)
    seq: list[Step] = [Lift(chess.E5), Place(chess.F6, chess.Piece(chess.PAWN, chess.WHITE))]
    assert moves(table.do(seq) + table.wait(2.0)) == []
    played = moves(table.do([Lift(chess.F5)]))
    assert [m.san for m in played] == ["exf6"]


def test_king_passing_f1_on_the_way_to_castle_is_not_kf1() -> None:
    table = Table(CASTLING)
    king = chess.Piece(chess.KING, chess.WHITE)
    facts = table.do([Lift(chess.E1), Place(chess.F1, king), Lift(chess.F1)], interval=0.1)
    facts += table.do([Place(chess.G1, king)])
    assert moves(facts) == []
    rook = chess.Piece(chess.ROOK, chess.WHITE)
    played = moves(table.do([Lift(chess.H1), Place(chess.F1, rook)]))
    assert [m.san for m in played] == ["O-O"]


def test_slide_is_not_a_release_but_a_rest_is() -> None:
    table = Table("4k3/8/8/8/8/8/8/Q3K3 w - - 0 1")
    queen = chess.Piece(chess.QUEEN, chess.WHITE)
    facts = table.do([Lift(chess.A1), Place(chess.B2, queen), Lift(chess.B2)], interval=0.2)
    facts += table.do([Place(chess.C3, queen)], interval=0.2)
    assert moves(facts) == []  # c3 could still be a square passed on the way to h8
    assert table.arbiter.next_deadline() is not None
    played = moves(table.wait(DWELL + 0.01))
    assert [m.san for m in played] == ["Qc3"]
    assert played[0].completed_by is CompletedBy.RELEASE


def test_unambiguous_move_is_recorded_without_waiting() -> None:
    table = Table()
    facts = table.do(steps(table.board, uci("g1f3")))
    assert [m.san for m in moves(facts)] == ["Nf3"]
    assert table.arbiter.next_deadline() is None


def test_touches_are_reported_with_meaning() -> None:
    table = Table(CAPTURE)
    facts = table.do(steps(table.board, uci("e4d5"), Style.VICTIM_FIRST))
    touches = [f for f in facts if isinstance(f, TouchReported)]
    assert [(t.action, chess.square_name(t.square)) for t in touches] == [
        (TouchAction.LIFT, "d5"),
        (TouchAction.LIFT, "e4"),
        (TouchAction.PLACE, "d5"),
    ]
    assert "opponent's pawn" in touches[0].meaning
    assert "own pawn" in touches[1].meaning
    assert moves(facts)[0].touched == (chess.D5, chess.E4)


def reading(
    left: int, right: int, high: ClockSide, at: float, running: bool = True
) -> ClockReading:
    return ClockReading(
        left=left,
        right=right,
        running=running,
        lever_high=high,
        connected=True,
        left_flag=False,
        right_flag=False,
        battery_low=False,
        at=at,
    )


def test_clock_press_completes_an_ambiguous_move_at_once() -> None:
    table = Table()
    arb = table.arbiter
    arb.feed(reading(300, 300, ClockSide.RIGHT, 99.0), 99.0)  # White's clock (right) runs
    facts = table.do(steps(table.board, uci("e2e3")))
    assert moves(facts) == []  # e3 may be passed on the way to e4: wait for a rest or the clock
    press = arb.feed(reading(300, 299, ClockSide.LEFT, table.now), table.now)
    played = moves(press)
    assert [m.san for m in played] == ["e3"]
    assert played[0].completed_by is CompletedBy.CLOCK
    clocks = [f for f in press if isinstance(f, ClockPressed)]
    assert clocks[0].by == chess.WHITE
    assert clocks[0].completes_ply == 1
    assert clocks[0].clock.white == 299
    assert clocks[0].clock.running == chess.BLACK


def test_rook_first_castling_supersedes_the_rook_move() -> None:
    table = Table(CASTLING)
    rook = chess.Piece(chess.ROOK, chess.WHITE)
    king = chess.Piece(chess.KING, chess.WHITE)
    first = moves(table.do([Lift(chess.H1), Place(chess.F1, rook)]) + table.wait(1.0))
    assert [m.san for m in first] == ["Rf1"]
    second = moves(table.do([Lift(chess.E1), Place(chess.G1, king)]))
    assert [(m.san, m.ply, m.supersedes) for m in second] == [("O-O", 1 + 14, True)]
    assert table.arbiter.board.move_stack == [uci("e1g1")]


def test_checkmate_ends_the_game() -> None:
    table = Table("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
    facts = table.do(steps(table.board, uci("a1a8"))) + table.wait(1.0)
    ended = [f for f in facts if isinstance(f, GameEnded)]
    assert [(e.result, e.reason) for e in ended] == [("1-0", "checkmate")]


def test_board_set_up_from_blacks_side_is_rotated() -> None:
    arb = Arbiter(EngineConfig(dwell=DWELL))
    start = [chess.Board().piece_at(sq) for sq in chess.SQUARES]
    arb.feed(BoardSnapshot(squares=tuple(start[::-1]), at=0.0), 0.0)
    assert arb.rotated
    # e2-e4 in the board's own (turned) frame is squares 63-e2 and 63-e4.
    seq: list[Step] = [
        Lift(63 - chess.G1),
        Place(63 - chess.F3, chess.Piece(chess.KNIGHT, chess.WHITE)),
    ]
    facts = [f for e in to_events(seq, 1.0, 0.1) for f in arb.feed(e, e.at)]
    assert [m.san for m in moves(facts)] == ["Nf3"]


def test_a_whole_master_game_in_random_styles() -> None:
    import random

    rng = random.Random(7)
    game = (
        "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3 d6 c3 O-O h3 Nb8 d4 Nbd7 c4 c6 cxb5 axb5 "
        "Nc3 Bb7 Bg5 b4 Nb1 h6 Bh4 c5 dxe5 Nxe4 Bxe7 Qxe7 exd6 Qf6 Nbd2 Nxd6 Nc4 Nxc4 Bxc4 Nb6 "
        "Ne5 Rae8 Bxf7+ Rxf7 Nxf7 Rxe1+ Qxe1 Kxf7 Qe3 Qg5 Qxg5 hxg5 b3 Ke6 a3 Kd6 axb4 cxb4 Ra5 "
        "Nd5 f3 Bc8 Kf2 Bf5 Ra7 g6 Ra6+ Kc5 Ke1 Nf4 g3 Nxh3 Kd2 Kb5 Rd6 Kc5 Ra6 Nf2 g4 Bd3 Re6"
    )
    table = Table()
    expected: list[chess.Move] = []
    for san in game.split():
        move = table.board.parse_san(san)
        expected.append(move)
        table.play(move, rng.choice(list(Style)))
    recorded = [m.move for m in moves(table.facts)]
    assert recorded == expected
    assert table.arbiter.board.fen() == table.board.fen()


def test_the_squares_beyond_a_square_are_the_line_of_python_chess() -> None:
    """The squares past a move's target on its line, against chess.ray and chess.between."""
    for origin in chess.SQUARES:
        for square in chess.SQUARES:
            line = chess.ray(origin, square) if origin != square else 0
            expected = [
                far
                for far in chess.scan_forward(line)
                if chess.between(origin, far) & chess.BB_SQUARES[square]
            ]
            beyond = list(positions._beyond(origin, square))
            assert sorted(beyond) == expected, (origin, square)
            assert beyond == sorted(beyond, key=lambda far: chess.square_distance(square, far))
