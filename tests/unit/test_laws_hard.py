"""The arbiter's hard cases: situations an outside arbiter's test found judged wrongly.

Each group is one rule, tried in several variants and in both editions where they differ:
illegal castling, the whole board judged at the press, the opponent's touch confirming a pending
move, every press judged, knocked pieces, illegal moves that stand, the press completing the
move, kings in the centre, dead blockades, touches read in one scan, 2018 4.4.1 and 4.4.4, and
the article numbers. Human timing: 0.3 s between hand steps unless a test says otherwise.
"""

from __future__ import annotations

import chess
import pytest

from bridge.arbiter.facts import CompletedBy, Fact, TouchReported
from drivers.choreography import Lift, Place, Step
from tests.unit.test_laws import BOTH, Table, alerts, moves, results

P = chess.Piece.from_symbol

# White may castle on both sides; Black too.
CASTLE = "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 0 8"
# The same, but White has lost both castling rights (king or rooks moved earlier).
NO_RIGHTS = CASTLE.replace(" KQkq ", " kq ")
# White keeps both rights, but the bishop on a6 attacks f1: castling short is illegal for now.
THROUGH_CHECK = "4k3/8/b7/8/8/8/8/R3K2R w KQ - 0 1"
QUEEN_A1 = "4k3/8/8/4b3/8/8/8/Q3K3 w - - 0 1"


def white_castles(kingside: bool) -> list[Step]:
    rank = 0
    king_to = chess.square(6 if kingside else 2, rank)
    rook_from = chess.square(7 if kingside else 0, rank)
    rook_to = chess.square(5 if kingside else 3, rank)
    return [Lift(chess.E1), Place(king_to, P("K")), Lift(rook_from), Place(rook_to, P("R"))]


def rook_first(kingside: bool) -> list[Step]:
    steps = white_castles(kingside)
    return [*steps[2:], *steps[:2]]


def kinds(facts: list[Fact]) -> list[str]:
    return [a.kind for a in alerts(facts)]


# -- 1. illegal castling is an illegal move ---------------------------------------------------


@pytest.mark.parametrize(
    ("edition", "article"),
    [("fide-1997", "7.4"), ("fide-2018", "7.5.1"), ("fide-1997-blitz", "C.3")],
)
@pytest.mark.parametrize(
    ("fen", "kingside"), [(NO_RIGHTS, True), (NO_RIGHTS, False), (THROUGH_CHECK, True)]
)
def test_illegal_castling_king_first_is_an_illegal_move(
    edition: str, article: str, fen: str, kingside: bool
) -> None:
    table = Table(fen, edition)
    facts = table.do(white_castles(kingside)) + table.wait(1.0)
    assert moves(facts) == []
    facts = table.press(chess.WHITE)
    [alert] = alerts(facts)
    assert (alert.kind, alert.article, alert.color) == ("illegal_move", article, chess.WHITE)
    assert alert.details["move"] == ("e1g1" if kingside else "e1c1")
    assert alert.details["count"] == 1
    assert table.arbiter.illegal_counts[chess.WHITE] == 1


@BOTH
@pytest.mark.parametrize("kingside", [True, False])
@pytest.mark.parametrize("pause", [0.3, 1.0])  # the rook recorded on its own (1.0) or not
def test_illegal_castling_rook_first_is_the_movers_illegal_move(
    edition: str, kingside: bool, pause: float
) -> None:
    table = Table(NO_RIGHTS, edition)
    steps = rook_first(kingside)
    facts = table.do(steps[:2]) + table.wait(pause) + table.do(steps[2:])
    facts += table.press(chess.WHITE)
    [alert] = alerts(facts)
    assert (alert.kind, alert.color) == ("illegal_move", chess.WHITE)
    assert alert.details["move"] == ("e1g1" if kingside else "e1c1")
    assert table.arbiter.board.move_stack == []  # a rook move recorded on its own is taken back
    # The player puts his king back: the rook move is what stands (4.4: the rook was touched
    # first), and the opponent is never blamed.
    facts = table.do([Lift(steps[3].square), Place(chess.E1, P("K"))]) + table.wait(1.0)
    assert [m.move for m in moves(facts)] == [chess.Move(steps[0].square, steps[1].square)]
    table.board.push(chess.Move(steps[0].square, steps[1].square))
    facts = table.press(chess.BLACK) + table.press(chess.WHITE) + table.play("h6")
    assert kinds(facts) == []
    assert [m.san for m in moves(facts)] == ["h6"]


def test_illegal_castling_of_black_is_read_off_the_board() -> None:
    table = Table(CASTLE.replace(" w KQkq ", " b KQ "))
    facts = table.do(
        [Lift(chess.E8), Place(chess.G8, P("k")), Lift(chess.H8), Place(chess.F8, P("r"))]
    )
    [alert] = alerts(facts + table.press(chess.BLACK))
    assert (alert.kind, alert.color, alert.details["move"]) == ("illegal_move", chess.BLACK, "e8g8")


def test_legal_castling_is_still_a_move() -> None:
    table = Table(CASTLE)
    facts = table.do(white_castles(True)) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["O-O"]
    assert alerts(facts) == []


# -- 2. the press judges the whole board -----------------------------------------------------


@pytest.mark.parametrize(
    ("edition", "rule"), [("fide-1997", "Art. 1.1"), ("fide-2018", "Art. 1.2")]
)
def test_two_moves_in_one_turn_is_an_illegal_move(edition: str, rule: str) -> None:
    table = Table(rules_label=edition)
    facts = table.do([Lift(chess.E2), Place(chess.E4, P("P"))]) + table.wait(1.0)
    facts += table.do([Lift(chess.D2), Place(chess.D4, P("P"))]) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["e4"]
    [alert] = alerts(facts)
    assert (alert.kind, alert.color) == ("illegal_move", chess.WHITE)
    assert (alert.details["move"], alert.details["first_move"]) == ("d2d4", "e2e4")
    assert rule in alert.message
    # The second move is taken back; the game goes on after e4.
    table.board.push_san("e4")
    table.do([Lift(chess.D4), Place(chess.D2, P("P"))])
    facts = table.play("e5")
    assert [m.san for m in moves(facts)] == ["e5"]
    assert kinds(facts) == []


def test_two_moves_both_made_before_the_press() -> None:
    # A knight's move, then a pawn's, quickly: neither is recorded alone (the knight's is, in
    # fact: it is unambiguous), and the press finds the second one.
    table = Table()
    facts = table.do(
        [Lift(chess.G1), Place(chess.F3, P("N")), Lift(chess.B2), Place(chess.B3, P("P"))]
    )
    facts += table.press(chess.WHITE)
    [alert] = alerts(facts)
    assert (alert.kind, alert.details["move"]) == ("illegal_move", "b2b3")


CAPTURE = "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 2"


@BOTH
def test_capture_released_then_taken_back_and_another_move_is_a_release_breach(
    edition: str,
) -> None:
    table = Table(CAPTURE, edition)
    facts = table.do([Lift(chess.E4), Place(chess.D5, P("P"))])
    assert [m.san for m in moves(facts)] == ["exd5"]
    facts = table.do([Lift(chess.D5), Place(chess.E4, P("P")), Place(chess.D5, P("p"))])
    facts += table.do([Lift(chess.G1), Place(chess.F3, P("N"))]) + table.press(chess.WHITE)
    assert [(m.san, m.supersedes) for m in moves(facts)] == [("Nf3", True)]
    [alert] = alerts(facts)
    assert (alert.kind, alert.article, alert.color) == ("released_piece_moved", "4.7", chess.WHITE)
    assert alert.details["first_move"] == "e4d5"
    # The opponent then plays on and is blamed for nothing.
    table.board.push_san("Nf3")
    facts = table.play("Nf6")
    assert kinds(facts) == []
    assert [m.san for m in moves(facts)] == ["Nf6"]


def test_capture_released_then_taken_back_and_pressed() -> None:
    table = Table(CAPTURE)
    table.do([Lift(chess.E4), Place(chess.D5, P("P"))])
    facts = table.do([Lift(chess.D5), Place(chess.E4, P("P")), Place(chess.D5, P("p"))])
    facts += table.press(chess.WHITE)
    [alert] = alerts(facts)
    assert (alert.kind, alert.color) == ("released_piece_moved", chess.WHITE)
    assert table.arbiter.illegal_counts[chess.WHITE] == 0  # a breach of 4.7, not illegal move
    assert table.arbiter.board.move_stack[-1] == chess.Move.from_uci("e4d5")  # the move stands


# -- 3. the opponent's touch confirms a pending move ----------------------------------------


@pytest.mark.parametrize("victim_first", [True, False])
def test_opponent_capturing_the_pending_piece_confirms_it(victim_first: bool) -> None:
    table = Table(QUEEN_A1)
    # Qc3 could be a slide towards d4 (and e5): ambiguous, pending inside the dwell.
    facts = table.do([Lift(chess.A1), Place(chess.C3, P("Q"))], interval=0.1)
    assert moves(facts) == []
    steps: list[Step] = [Lift(chess.C3), Lift(chess.E5), Place(chess.C3, P("b"))]
    if not victim_first:
        steps = [Lift(chess.E5), Place(chess.C3, P("b"))]
    facts = table.do(steps, interval=0.3) + table.press(chess.BLACK)
    assert [m.san for m in moves(facts)] == ["Qc3", "Bxc3+"]
    assert kinds(facts) == ["clock_not_pressed"]
    assert alerts(facts)[0].color == chess.WHITE


def test_opponent_capturing_a_pending_pawn_push() -> None:
    table = Table("4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1")
    facts = table.do([Lift(chess.E2), Place(chess.E3, P("P"))], interval=0.1)
    assert moves(facts) == []  # e3 may be a pawn on its way to e4
    facts = table.do([Lift(chess.E3), Lift(chess.D4), Place(chess.E3, P("p"))])
    assert [m.san for m in moves(facts)] == ["e3", "dxe3"]
    assert kinds(facts) == ["clock_not_pressed"]


def test_the_mover_sliding_on_is_not_confirmed() -> None:
    table = Table(QUEEN_A1)
    facts = table.do(
        [Lift(chess.A1), Place(chess.C3, P("Q")), Lift(chess.C3), Place(chess.D4, P("Q"))],
        interval=0.1,
    )
    facts += table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["Qd4"]
    assert kinds(facts) == []


def test_the_mover_taking_a_victim_on_his_way_is_not_the_opponent() -> None:
    # The rook slides on, is lifted from a3, its victim on a5 taken off, and it is put there.
    table = Table("4k3/8/8/p7/8/8/8/R3K3 w - - 0 1")
    slide: list[Step] = [Lift(chess.A1), Place(chess.A2, P("R")), Lift(chess.A2)]
    slide += [Place(chess.A3, P("R")), Lift(chess.A3), Lift(chess.A5), Place(chess.A5, P("R"))]
    facts = table.do(slide, interval=0.1) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["Rxa5"]
    assert kinds(facts) == []


# -- 4. every press is judged ------------------------------------------------------------


def test_2018_two_presses_without_a_move_lose() -> None:
    table = Table()
    facts = table.press(chess.WHITE) + table.press(chess.BLACK) + table.press(chess.WHITE)
    illegal = alerts(facts, "illegal_move")
    assert [(a.article, a.details["count"]) for a in illegal] == [("7.5.3", 1), ("7.5.3", 2)]
    [ended] = results(facts)
    assert (ended.result, ended.article) == ("0-1", "7.5.5")


def test_1997_every_press_without_a_move_is_reported() -> None:
    table = Table(rules_label="fide-1997")
    facts = table.press(chess.WHITE) + table.press(chess.BLACK) + table.press(chess.WHITE)
    assert kinds(facts) == ["press_without_move", "press_without_move"]
    assert results(facts) == []


def test_2018_an_illegal_move_then_a_press_without_a_move_lose() -> None:
    table = Table()
    table.do([Lift(chess.E2), Place(chess.E5, P("P"))])
    table.press(chess.WHITE)
    table.do([Lift(chess.E5), Place(chess.E2, P("P"))])
    facts = table.press(chess.BLACK) + table.press(chess.WHITE)
    [alert] = alerts(facts, "illegal_move")
    assert (alert.article, alert.details["count"]) == ("7.5.3", 2)
    assert [e.result for e in results(facts)] == ["0-1"]


def test_the_same_illegal_board_pressed_again_is_the_same_irregularity() -> None:
    table = Table()
    table.do([Lift(chess.E2), Place(chess.E5, P("P"))])
    table.press(chess.WHITE)
    facts = table.press(chess.BLACK) + table.press(chess.WHITE)  # nothing was put right
    assert alerts(facts) == []
    assert table.arbiter.illegal_counts[chess.WHITE] == 1
    assert results(table.facts) == []


def test_a_press_by_the_opponent_restarting_the_clock_is_not_his_illegal_move() -> None:
    table = Table()
    table.do([Lift(chess.E2), Place(chess.E5, P("P"))])
    table.press(chess.WHITE)
    table.do([Lift(chess.E5), Place(chess.E4, P("P"))])  # the replacing move, clock not running
    facts = table.press(chess.BLACK) + table.press(chess.WHITE)  # black hands the clock over
    table.board.push_san("e4")
    facts += table.play("e5")
    assert kinds(facts) == []
    assert table.arbiter.illegal_counts == {chess.WHITE: 1, chess.BLACK: 0}


# -- 5. a knocked piece is not an illegal move ------------------------------------------------


@pytest.mark.parametrize(("edition", "article"), [("fide-1997", "7.3"), ("fide-2018", "7.4.1")])
@pytest.mark.parametrize("knocked_first", [True, False])
def test_legal_move_with_an_own_piece_knocked_off(
    edition: str, article: str, knocked_first: bool
) -> None:
    table = Table(rules_label=edition)
    move: list[Step] = [Lift(chess.E2), Place(chess.E4, P("P"))]
    knock: list[Step] = [Lift(chess.B2)]
    facts = table.do(knock + move if knocked_first else move + knock)
    facts += table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["e4"]
    [alert] = alerts(facts)
    assert (alert.kind, alert.article, alert.details["squares"]) == (
        "displaced_pieces",
        article,
        ["b2"],
    )
    assert table.arbiter.illegal_counts == {chess.WHITE: 0, chess.BLACK: 0}
    # Put back, and the game goes on.
    table.board.push_san("e4")
    facts = table.do([Place(chess.B2, P("P"))]) + table.play("e5")
    assert [m.san for m in moves(facts)] == ["e5"]
    assert kinds(facts) == []


@pytest.mark.parametrize("clock", [True, False])
def test_opponent_piece_off_during_a_move_is_his_hand_until_he_moves_without_it(
    clock: bool,
) -> None:
    # Two hands on the board: Black's f-pawn off its square before e4 lands is his reply
    # begun - or a pawn knocked off. Nothing tells them apart until he moves: the move stands
    # as it would alone, nobody is blamed; moving another piece with it still off, the pawn
    # was displaced.
    table = Table(clock=clock)
    facts = table.do([Lift(chess.E2), Lift(chess.F7), Place(chess.E4, P("P"))])
    facts += table.press(chess.WHITE) if clock else table.wait(12.0)
    assert [m.san for m in moves(facts)] == ["e4"]
    assert kinds(facts) == []
    facts = table.do([Lift(chess.E7), Place(chess.E5, P("p"))])
    facts += table.press(chess.BLACK) if clock else table.wait(12.0)
    assert [m.san for m in moves(facts)] == ["e5"]
    [alert] = alerts(facts)
    assert (alert.kind, alert.color, alert.details["squares"]) == (
        "displaced_pieces",
        chess.BLACK,
        ["f7"],
    )


@pytest.mark.parametrize("clock", [True, False])
def test_opponent_piece_off_during_a_move_put_down_as_his_reply(clock: bool) -> None:
    table = Table(clock=clock)
    facts = table.do([Lift(chess.E2), Lift(chess.F7), Place(chess.E4, P("P"))])
    facts += table.press(chess.WHITE) if clock else []
    facts += table.do([Place(chess.F5, P("p"))])
    facts += table.press(chess.BLACK) if clock else table.wait(12.0)
    assert [m.san for m in moves(facts)] == ["e4", "f5"]
    assert kinds(facts) == []


def test_opponent_moves_while_a_knocked_piece_is_still_off() -> None:
    table = Table()
    table.do([Lift(chess.E2), Place(chess.E4, P("P")), Lift(chess.B2)])
    table.press(chess.WHITE)
    facts = table.do([Lift(chess.E7), Place(chess.E5, P("p"))]) + table.press(chess.BLACK)
    assert [m.san for m in moves(facts)] == ["e5"]
    assert kinds(facts) == []  # already reported; black is not blamed


@pytest.mark.parametrize("count", [3, 5])
@BOTH
def test_a_knocked_board_is_a_displacement_not_touch_move(edition: str, count: int) -> None:
    table = Table(rules_label=edition)
    squares = [chess.B1, chess.B2, chess.C2, chess.D2, chess.A2][:count]
    pieces = {sq: table.board.piece_at(sq) for sq in squares}
    knocked = table.do([Lift(sq) for sq in squares], interval=0.015)  # within 60 ms
    facts = knocked + table.wait(0.5)
    facts += table.do([Place(sq, piece) for sq, piece in pieces.items() if piece is not None])
    facts += table.play("e4")
    assert [m.san for m in moves(facts)] == ["e4"]
    assert kinds(facts) == ["displaced_pieces"]
    assert alerts(facts)[0].details["squares"] == [chess.square_name(sq) for sq in sorted(squares)]


def test_two_pieces_lifted_in_one_scan_oblige_nothing() -> None:
    table = Table()
    table.do([Lift(chess.G1), Lift(chess.B1)], interval=0.01)
    table.wait(0.5)
    facts = table.do([Place(chess.G1, P("N")), Place(chess.B1, P("N"))]) + table.play("e4")
    assert "touch_move" not in kinds(facts)


# -- 6. an illegal move that stood -------------------------------------------------------------

STANDS = [
    ("fide-1997-blitz", "C.3"),
    ("fide-1997-rapid", "B.5"),
    ("fide-2018-rapid", "A.4.2"),
    ("fide-2018-blitz", "A.4.2, B.4"),
]


@pytest.mark.parametrize(("edition", "article"), STANDS)
def test_an_unclaimed_illegal_move_stands_when_the_opponent_replies(
    edition: str, article: str
) -> None:
    table = Table(rules_label=edition)
    table.do([Lift(chess.E2), Place(chess.E5, P("P"))])
    table.press(chess.WHITE)
    facts = table.do([Lift(chess.D7), Place(chess.D6, P("p"))]) + table.press(chess.BLACK)
    [stood] = alerts(facts, "illegal_move_stood")
    assert (stood.article, stood.color, stood.details["move"]) == (article, chess.WHITE, "e2e5")
    [reply] = moves(facts)
    assert (reply.san, reply.ply, reply.color) == ("d6", 2, chess.BLACK)
    # The game goes on from the board; the snapshot is consistent and keeps what came before.
    snap = table.arbiter.snapshot()
    board = chess.Board(snap.start_fen)
    for uci, san in snap.moves:
        assert board.san(chess.Move.from_uci(uci)) == san
        board.push_uci(uci)
    assert board.fen() == snap.fen
    assert board.board_fen() == "rnbqkbnr/ppp1pppp/3p4/4P3/8/8/PPPP1PPP/RNBQKBNR"
    [earlier] = snap.earlier
    assert (earlier.illegal_move, earlier.moves, earlier.fen) == ("e2e5", (), snap.start_fen)
    assert snap.illegal_moves == (1, 0)
    facts = table.do([Lift(chess.G1), Place(chess.F3, P("N"))]) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["Nf3"]
    assert kinds(facts) == []


@pytest.mark.parametrize("edition", ["fide-1997", "fide-2018"])
def test_in_standard_play_an_illegal_move_never_stands(edition: str) -> None:
    table = Table(rules_label=edition)
    table.do([Lift(chess.E2), Place(chess.E5, P("P"))])
    table.press(chess.WHITE)
    facts = table.do([Lift(chess.D7), Place(chess.D6, P("p"))]) + table.press(chess.BLACK)
    assert moves(facts) == []
    assert alerts(facts, "illegal_move_stood") == []
    assert table.arbiter.snapshot().earlier == ()


def test_an_illegal_castling_stands_in_blitz_and_the_record_goes_on() -> None:
    table = Table(NO_RIGHTS, "fide-1997-blitz")
    table.do(white_castles(True))
    table.press(chess.WHITE)
    facts = table.do([Lift(chess.H7), Place(chess.H6, P("p"))]) + table.press(chess.BLACK)
    assert [m.san for m in moves(facts)] == ["h6"]
    assert alerts(facts, "illegal_move_stood")[0].details["move"] == "e1g1"
    snap = table.arbiter.snapshot()
    assert chess.Board(snap.start_fen).king(chess.WHITE) == chess.G1
    assert chess.Board(snap.start_fen).castling_rights & chess.BB_RANK_1 == 0


def test_2018_blitz_a_press_without_a_move_stands_when_the_opponent_moves() -> None:
    table = Table(rules_label="fide-2018-blitz")
    table.press(chess.WHITE)
    facts = table.do([Lift(chess.E7), Place(chess.E5, P("p"))]) + table.press(chess.BLACK)
    [stood] = alerts(facts, "illegal_move_stood")
    assert stood.details["move"] is None
    assert [m.san for m in moves(facts)] == ["e5"]


def test_the_offender_may_still_put_it_right_before_the_reply() -> None:
    table = Table(rules_label="fide-1997-blitz")
    table.do([Lift(chess.E2), Place(chess.E5, P("P"))])
    table.press(chess.WHITE)
    facts = table.do([Lift(chess.E5), Place(chess.E4, P("P"))]) + table.press(chess.BLACK)
    facts += table.press(chess.WHITE)
    table.board.push_san("e4")
    facts += table.play("e5")
    assert [m.san for m in moves(facts)] == ["e4", "e5"]
    assert alerts(facts, "illegal_move_stood") == []


# -- 7. a press completes the move -------------------------------------------------------------


@BOTH
def test_a_move_pressed_and_then_moved_on_is_kept(edition: str) -> None:
    table = Table("4k3/8/8/8/8/8/8/Q3K3 w - - 0 1", edition)
    facts = table.do([Lift(chess.A1), Place(chess.C3, P("Q"))]) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["Qc3"]
    facts = table.do([Lift(chess.C3), Place(chess.A5, P("Q"))]) + table.wait(1.0)
    assert moves(facts) == []  # no superseding move
    [alert] = alerts(facts)
    assert (alert.kind, alert.color, alert.details["move"]) == (
        "displaced_pieces",
        chess.WHITE,
        "c3a5",
    )
    assert table.arbiter.board.move_stack == [chess.Move.from_uci("a1c3")]
    # Black is not blamed for the queen, whether it is put back or not.
    facts = table.do([Lift(chess.E8), Place(chess.D7, P("k"))]) + table.press(chess.BLACK)
    assert [m.san for m in moves(facts)] == ["Kd7"]
    assert kinds(facts) == []


def test_before_the_press_the_move_is_still_revisable() -> None:
    table = Table("4k3/8/8/8/8/8/8/Q3K3 w - - 0 1")
    table.do([Lift(chess.A1), Place(chess.C3, P("Q"))])
    table.wait(1.0)
    facts = table.do([Lift(chess.C3), Place(chess.A5, P("Q"))]) + table.press(chess.WHITE)
    assert [(m.san, m.supersedes) for m in moves(facts)] == [("Qa5", True)]


def test_promotion_piece_changed_after_the_press_is_not_a_new_move() -> None:
    table = Table("3r3k/2P5/8/8/8/8/6PP/6K1 w - - 0 40")
    table.do([Lift(chess.C7), Place(chess.C8, P("Q"))])
    table.press(chess.WHITE)
    facts = table.do([Lift(chess.C8), Place(chess.C8, P("N"))]) + table.wait(1.0)
    assert moves(facts) == []
    assert table.arbiter.board.move_stack[-1].promotion == chess.QUEEN


# -- 8. kings in the centre means both kings at rest there -------------------------------------


def test_a_king_passing_a_centre_square_next_to_the_other_king_is_a_move() -> None:
    table = Table("8/8/4k3/p7/P3K3/8/8/8 b - - 0 1")
    facts = table.do(
        [Lift(chess.E6), Place(chess.E5, P("k")), Lift(chess.E5), Place(chess.D6, P("k"))]
    )
    facts += table.press(chess.BLACK)
    assert [m.san for m in moves(facts)] == ["Kd6"]
    assert results(facts) == []


def test_kings_in_the_centre_with_a_piece_in_hand_is_not_a_result() -> None:
    table = Table()
    table.play("e4")
    table.play("e5")
    facts = table.do(
        [Lift(chess.E1), Place(chess.E4, P("K")), Lift(chess.E8), Place(chess.D5, P("k"))]
    )
    facts += table.do([Lift(chess.A2)]) + table.wait(2.0)
    assert results(facts) == []
    facts = table.do([Place(chess.A2, P("P"))]) + table.wait(1.0)
    assert [e.result for e in results(facts)] == ["1-0"]


# -- 9. dead positions by locked pawns --------------------------------------------------------


@pytest.mark.parametrize(("edition", "article"), [("fide-1997", "9.6"), ("fide-2018", "5.2.2")])
def test_a_move_closing_the_pawn_chain_ends_the_game(edition: str, article: str) -> None:
    table = Table("8/8/4k3/1p1p1p1p/1P1P1P2/4K2P/8/8 w - - 0 1", edition)
    [ended] = results(table.play("h4", press=False))
    assert (ended.result, ended.reason, ended.article) == ("1/2-1/2", "dead position", article)


def test_a_chain_a_king_can_break_is_not_dead() -> None:
    # The a-pawns are locked, but the black one is not guarded: the white king can take it.
    table = Table("4k3/8/8/p7/P7/8/8/4K3 w - - 0 1")
    assert results(table.play("Kd2", press=False)) == []


def test_flag_fall_in_a_dead_blockade_is_a_draw() -> None:
    table = Table("8/8/4k3/1p1p1p1p/1P1P1P1P/4K3/8/8 w - - 0 1")
    [ended] = results(table.flag(chess.WHITE))
    assert ended.result == "1/2-1/2"


# -- 10. touches read in one scan are simultaneous --------------------------------------------


@BOTH
@pytest.mark.parametrize("gap", [0.0, 0.01, 0.03])
def test_rook_and_king_lifted_in_one_scan_are_touched_together(edition: str, gap: float) -> None:
    table = Table(CASTLE, edition)
    facts = table.do([Lift(chess.H1), Lift(chess.E1)], interval=gap)
    facts += table.do([Place(chess.G1, P("K")), Place(chess.F1, P("R"))]) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["O-O"]
    assert kinds(facts) == []


@BOTH
def test_rook_then_king_a_scan_apart_is_rook_first(edition: str) -> None:
    table = Table(CASTLE, edition)
    facts = table.do([Lift(chess.H1), Lift(chess.E1)], interval=0.1)
    facts += table.do([Place(chess.G1, P("K")), Place(chess.F1, P("R"))]) + table.press(chess.WHITE)
    assert kinds(facts) == ["castling_rook_first"]


def test_king_and_rook_together_while_castling_there_is_illegal_oblige_the_king() -> None:
    # 1997 4.4 b: f1 attacked, so castling short is illegal: the king must move, not the rook.
    table = Table(THROUGH_CHECK, "fide-1997")
    table.do([Lift(chess.H1), Lift(chess.E1)], interval=0.01)
    table.wait(0.3)
    table.do([Place(chess.E1, P("K"))])
    facts = table.do([Place(chess.G1, P("R"))]) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["Rg1"]
    [alert] = alerts(facts)
    assert (alert.kind, alert.article) == ("touch_move", "4.4(b)")


# -- 11. 2018 Art. 4.4.1 and 4.4.4 -----------------------------------------------------------


@pytest.mark.parametrize(("edition", "breach"), [("fide-1997", None), ("fide-2018", "4.4.1")])
@pytest.mark.parametrize("instead", ["O-O-O", "Kf1"])
def test_king_then_rook_obliges_castling_on_that_side(
    edition: str, breach: str | None, instead: str
) -> None:
    table = Table(CASTLE, edition)
    king_to = chess.C1 if instead == "O-O-O" else chess.F1
    steps: list[Step] = [Lift(chess.E1), Lift(chess.H1), Place(chess.H1, P("R"))]
    steps.append(Place(king_to, P("K")))
    if instead == "O-O-O":
        steps += [Lift(chess.A1), Place(chess.D1, P("R"))]
    facts = table.do(steps) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == [instead]
    found = [(a.kind, a.article) for a in alerts(facts)]
    assert found == ([] if breach is None else [("touch_move", breach)])


def test_king_then_rook_and_castling_on_that_side_is_fine() -> None:
    table = Table(CASTLE)
    facts = table.do(white_castles(True)) + table.press(chess.WHITE)
    assert kinds(facts) == []


def test_king_then_rook_when_castling_there_is_illegal_obliges_a_king_move() -> None:
    table = Table(THROUGH_CHECK)
    steps: list[Step] = [Lift(chess.E1), Lift(chess.H1), Place(chess.H1, P("R"))]
    facts = table.do([*steps, Place(chess.D2, P("K"))]) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["Kd2"]
    assert kinds(facts) == []
    # Moving the rook instead breaks 4.4.3.
    table = Table(THROUGH_CHECK)
    facts = table.do([*steps[:2], Place(chess.E1, P("K")), Place(chess.G1, P("R"))])
    facts += table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["Rg1"]
    assert [(a.kind, a.article) for a in alerts(facts)] == [("touch_move", "4.4.3")]


PROMOTE = "3r3k/2P5/8/8/8/8/6PP/6K1 w - - 0 40"


@pytest.mark.parametrize(("edition", "breach"), [("fide-1997", None), ("fide-2018", "4.4.4")])
@pytest.mark.parametrize("pawn_first", [True, False])
def test_the_promoted_piece_is_chosen_once_it_touched_the_square(
    edition: str, breach: str | None, pawn_first: bool
) -> None:
    table = Table(PROMOTE, edition)
    swap: list[Step] = [Place(chess.C8, P("Q")), Lift(chess.C8), Place(chess.C8, P("N"))]
    steps = [Lift(chess.C7), *swap] if pawn_first else [*swap, Lift(chess.C7)]
    facts = table.do(steps) + table.press(chess.WHITE)
    assert moves(facts)[-1].move == chess.Move.from_uci("c7c8n")
    found = [(a.kind, a.article) for a in alerts(facts)]
    assert found == ([] if breach is None else [("touch_move", breach)])


def test_the_pawn_put_on_the_last_rank_first_chooses_nothing() -> None:
    table = Table(PROMOTE)
    steps: list[Step] = [Lift(chess.C7), Place(chess.C8, P("P")), Lift(chess.C8)]
    facts = table.do([*steps, Place(chess.C8, P("N"))]) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["c8=N"]
    assert kinds(facts) == []


# -- 12. article numbers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edition", "article"),
    [
        ("fide-2018", "7.5.2"),
        ("fide-2018-rapid", "7.5.2, A.4.2"),
        ("fide-1997", "7.4"),
        ("fide-1997-blitz", "C.3"),
    ],
)
def test_a_pawn_left_on_the_last_rank_and_pressed(edition: str, article: str) -> None:
    table = Table(PROMOTE, edition)
    facts = table.do([Lift(chess.C7), Place(chess.C8, P("P"))]) + table.press(chess.WHITE)
    [alert] = alerts(facts)
    assert (alert.kind, alert.article, alert.details["move"]) == ("illegal_move", article, "c7c8")
    # 2018 7.5.2: the pawn is replaced by a queen, and the game goes on.
    facts = table.do([Lift(chess.C8), Place(chess.C8, P("Q"))]) + table.wait(1.0)
    assert [m.move for m in moves(facts)] == [chess.Move.from_uci("c7c8q")]


@pytest.mark.parametrize(
    ("edition", "minutes"),
    [("fide-2018", "2 minutes"), ("fide-2018-rapid", "2 minutes"), ("fide-2018-blitz", "1 minute")],
)
def test_illegal_move_penalty_by_rate(edition: str, minutes: str) -> None:
    table = Table(rules_label=edition)
    table.do([Lift(chess.E2), Place(chess.E5, P("P"))])
    [alert] = alerts(table.press(chess.WHITE))
    assert str(alert.details["penalty"]).startswith(f"{minutes} extra")


def test_the_loss_by_illegal_moves_cites_7_5_5() -> None:
    table = Table()
    for _ in range(2):
        table.do([Lift(chess.E2), Place(chess.E5, P("P"))])
        table.press(chess.WHITE)
        table.do([Lift(chess.E5), Place(chess.E2, P("P"))])
        table.press(chess.BLACK)
    [ended] = results(table.facts)
    assert ended.article == "7.5.5"
    assert "7.5.5" in str(alerts(table.facts)[-1].details["penalty"])


@pytest.mark.parametrize(
    ("edition", "article", "words"),
    [
        ("fide-2018", "9.5.3", "two minutes"),
        ("fide-2018-blitz", "9.5.3", "one minute"),
        ("fide-1997", "9.5(b)", "three minutes"),
    ],
)
def test_incorrect_claim_article_and_penalty(edition: str, article: str, words: str) -> None:
    table = Table(rules_label=edition)
    _, alert = table.arbiter.claim_draw(None, table.now)
    assert alert is not None
    assert alert.article == article
    assert words in alert.message


def test_a_move_completed_by_the_press_with_a_displaced_piece_is_clock_completed() -> None:
    table = Table()
    facts = table.do([Lift(chess.B2), Lift(chess.E2), Place(chess.E4, P("P"))])
    facts += table.press(chess.WHITE)
    assert [m.completed_by for m in moves(facts)] == [CompletedBy.CLOCK]


# -- quick hands: two pieces in one scan may be one move ---------------------------------------


@pytest.mark.parametrize(
    ("fen", "seq", "san"),
    [
        (  # en passant, the victim taken off in the same scan as the pawn
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            [Lift(chess.E5), Lift(chess.F5), Place(chess.F6, P("P"))],
            "exf6",
        ),
        (  # a capture, the victim and the capturing piece lifted together
            CAPTURE,
            [Lift(chess.D5), Lift(chess.E4), Place(chess.D5, P("P"))],
            "exd5",
        ),
    ],
)
def test_a_move_made_within_one_scan_is_no_knock(fen: str, seq: list[Step], san: str) -> None:
    table = Table(fen)
    facts = table.do(seq, interval=0.01) + table.wait(1.0) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == [san]
    assert kinds(facts) == []


def test_a_piece_flickering_does_not_erase_an_earlier_touch() -> None:
    table = Table()
    table.do([Lift(chess.G1), Place(chess.G1, P("N"))], interval=0.5)  # touched: must move
    table.do([Lift(chess.G1), Place(chess.G1, P("N"))], interval=0.05)  # later, a flicker
    facts = table.play("e4")
    assert kinds(facts) == ["touch_move"]


def test_a_move_recognised_after_its_press_is_completed_by_that_press() -> None:
    # Castling long with a pawn knocked off: the press comes first; the board is read when the
    # pawn is back. The opponent's reply then raises no clock_not_pressed.
    table = Table(CASTLE.replace(" w KQkq ", " b KQkq "))
    table.do([Lift(chess.B7), Lift(chess.E8), Place(chess.C8, P("k"))])
    table.do([Lift(chess.A8), Place(chess.D8, P("r"))])
    facts = table.press(chess.BLACK)
    assert [m.san for m in moves(facts)] == ["O-O-O"]
    table.board.push_san("O-O-O")
    facts = table.do([Place(chess.B7, P("p"))]) + table.play("a3")
    assert kinds(facts) == []


# -- the whole board at the press: moves left unfinished, falls, and the order of two moves ------

# White to move may take en passant on f6 (Black's f-pawn has just come to f5).
EN_PASSANT = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"


@BOTH
@pytest.mark.parametrize("kingside", [True, False])
@pytest.mark.parametrize("clock", [True, False])
def test_castling_made_with_the_king_alone_is_the_movers_displacement(
    edition: str, kingside: bool, clock: bool
) -> None:
    # The king two squares, the rook left home, then the press (or, clockless, left still): the
    # castling stands (the king's two-square move is castling only) and the rook is the mover's
    # to put right - never an illegal move, never the opponent's displacement.
    table = Table(CASTLE, edition, clock=clock)
    facts = table.do(white_castles(kingside)[:2])
    facts += table.press(chess.WHITE) if clock else table.wait(11.0)
    assert [m.san for m in moves(facts)] == ["O-O" if kingside else "O-O-O"]
    [alert] = alerts(facts)
    assert (alert.kind, alert.color) == ("displaced_pieces", chess.WHITE)
    assert alert.details["squares"] == (["f1", "h1"] if kingside else ["a1", "d1"])
    assert table.arbiter.illegal_counts[chess.WHITE] == 0
    # Black replies before the rook is put right: nothing is his.
    facts = table.do([Lift(chess.H7), Place(chess.H6, P("p"))])
    facts += table.press(chess.BLACK) if clock else table.wait(11.0)
    assert [m.san for m in moves(facts)] == ["h6"]
    assert alerts(facts) == []
    # The rook put right afterwards: no touch of Black's, nothing more.
    rook_from, rook_to = (chess.H1, chess.F1) if kingside else (chess.A1, chess.D1)
    facts = table.do([Lift(rook_from), Place(rook_to, P("R"))], interval=0.5)
    assert alerts(facts) == []
    assert table.arbiter.differing() == frozenset()


def test_black_castling_with_the_king_alone() -> None:
    table = Table(CASTLE)
    table.play("a3")
    facts = table.do([Lift(chess.E8), Place(chess.G8, P("k"))]) + table.press(chess.BLACK)
    assert [m.san for m in moves(facts)] == ["O-O"]
    [alert] = alerts(facts)
    assert (alert.kind, alert.color, alert.details["squares"]) == (
        "displaced_pieces",
        chess.BLACK,
        ["f8", "h8"],
    )


@BOTH
def test_en_passant_with_the_victim_left_on_the_board(edition: str) -> None:
    table = Table(EN_PASSANT, edition)
    facts = table.do([Lift(chess.E5), Place(chess.F6, P("P"))]) + table.wait(1.0)
    facts += table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["exf6"]
    [alert] = alerts(facts)
    assert (alert.kind, alert.color, alert.details["squares"]) == (
        "displaced_pieces",
        chess.WHITE,
        ["f5"],
    )
    facts = table.do([Lift(chess.G8), Place(chess.H6, P("n"))]) + table.press(chess.BLACK)
    assert [m.san for m in moves(facts)] == ["Nh6"]
    assert alerts(facts) == []


def e4_with_a_fall(
    table: Table, fall: list[Step], interval: float, fallen_first: bool
) -> list[Fact]:
    """White plays e4 with ``fall`` (its steps ``interval`` apart) before or after, and presses."""
    move: list[Step] = [Lift(chess.E2), Place(chess.E4, P("P"))]
    if fallen_first:
        facts = table.do(fall, interval=interval) + table.do(move)
    else:
        facts = table.do(move) + table.do(fall, interval=interval)
    return facts + table.press(chess.WHITE)


@BOTH
@pytest.mark.parametrize("fallen_first", [True, False])
@pytest.mark.parametrize(
    ("origin", "target", "piece"),
    [
        (chess.C1, chess.C3, "B"),  # a bishop cannot go straight ahead
        (chess.D2, chess.C3, "P"),  # a pawn cannot go sideways without a capture
        (chess.B1, chess.B3, "N"),  # nor a knight two squares ahead
    ],
)
def test_a_piece_fallen_where_it_cannot_go_is_displaced_not_a_second_move(
    edition: str, fallen_first: bool, origin: chess.Square, target: chess.Square, piece: str
) -> None:
    table = Table(rules_label=edition)
    facts = e4_with_a_fall(table, [Lift(origin), Place(target, P(piece))], 0.3, fallen_first)
    assert [m.san for m in moves(facts)] == ["e4"]
    [alert] = alerts(facts)
    assert (alert.kind, alert.color) == ("displaced_pieces", chess.WHITE)
    assert alert.details["squares"] == sorted(
        [chess.square_name(origin), chess.square_name(target)], key=chess.parse_square
    )
    assert table.arbiter.illegal_counts[chess.WHITE] == 0
    facts = table.do([Lift(target), Place(origin, P(piece))], interval=0.5)
    facts += table.do([Lift(chess.E7), Place(chess.E5, P("p"))]) + table.press(chess.BLACK)
    assert [m.san for m in moves(facts)] == ["e5"]
    assert alerts(facts) == []


@BOTH
@pytest.mark.parametrize("fallen_first", [True, False])
def test_a_piece_that_lands_on_a_legal_square_within_one_scan_fell(
    edition: str, fallen_first: bool
) -> None:
    # d2 read empty and d3 occupied 20 ms apart: no hand moves a pawn that fast.
    table = Table(rules_label=edition)
    facts = e4_with_a_fall(table, [Lift(chess.D2), Place(chess.D3, P("P"))], 0.02, fallen_first)
    assert [m.san for m in moves(facts)] == ["e4"]
    assert kinds(facts) == ["displaced_pieces"]
    assert table.arbiter.illegal_counts[chess.WHITE] == 0


@BOTH
def test_a_second_legal_move_made_by_hand_is_still_an_illegal_move(edition: str) -> None:
    table = Table(rules_label=edition)
    table.do([Lift(chess.E2), Place(chess.E4, P("P"))])
    facts = table.do([Lift(chess.D2), Place(chess.D3, P("P"))], interval=0.3)
    facts += table.press(chess.WHITE)
    [alert] = alerts(facts)
    assert alert.kind == "illegal_move"
    assert (alert.details["first_move"], alert.details["move"]) == ("e2e4", "d2d3")


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ([Lift(chess.E2), Place(chess.E3, P("P"))], [Lift(chess.D2), Place(chess.D4, P("P"))]),
        ([Lift(chess.D2), Place(chess.D4, P("P"))], [Lift(chess.E2), Place(chess.E3, P("P"))]),
        ([Lift(chess.B1), Place(chess.C3, P("N"))], [Lift(chess.G1), Place(chess.F3, P("N"))]),
    ],
)
def test_of_two_moves_in_one_turn_the_first_is_the_one_put_down_first(
    first: list[Step], second: list[Step]
) -> None:
    # The first may still be pending (e3: the pawn could go on to e4) when the second is made.
    table = Table()
    facts = table.do(first, interval=0.15) + table.do(second, interval=0.15)
    facts += table.press(chess.WHITE)
    [alert] = alerts(facts)
    assert alert.kind == "illegal_move"
    expected = (
        chess.Move(first[0].square, first[1].square).uci(),
        chess.Move(second[0].square, second[1].square).uci(),
    )
    assert (alert.details["first_move"], alert.details["move"]) == expected


@BOTH
def test_a_capture_taken_back_and_the_opponent_moving_is_the_movers_release_breach(
    edition: str,
) -> None:
    table = Table("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", edition)
    facts = table.do([Lift(chess.D5), Lift(chess.E4), Place(chess.D5, P("P"))])
    assert [m.san for m in moves(facts)] == ["exd5"]
    table.do([Lift(chess.D5), Place(chess.E4, P("P")), Place(chess.D5, P("p"))])
    table.do([Lift(chess.G8), Place(chess.F6, P("n"))])  # Black moves on White's time
    facts = table.press(chess.WHITE)
    [alert] = alerts(facts)
    assert (alert.kind, alert.color, alert.article) == ("released_piece_moved", chess.WHITE, "4.7")
    assert "board_mismatch" not in kinds(table.facts)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ((chess.B2, "P"), (chess.B7, "p")),
        ((chess.G1, "N"), (chess.B8, "n")),
        ((chess.H2, "P"), (chess.A7, "p")),
    ],
)
def test_two_pieces_of_both_colours_no_move_lifts_together_were_knocked(
    first: tuple[chess.Square, str], second: tuple[chess.Square, str]
) -> None:
    table = Table()
    facts = table.do([Lift(first[0]), Lift(second[0])], interval=0.01) + table.wait(0.5)
    assert kinds(facts) == ["displaced_pieces"]
    facts = table.do([Place(first[0], P(first[1])), Place(second[0], P(second[1]))])
    facts += table.play("e4")
    assert kinds(facts) == []


def test_a_capturer_and_its_victim_lifted_in_one_scan_are_a_move_not_a_knock() -> None:
    table = Table("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2")
    facts = table.do([Lift(chess.E4), Lift(chess.D5)], interval=0.01)
    facts += table.do([Place(chess.D5, P("P"))]) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["exd5"]
    assert kinds(facts) == []


@pytest.mark.parametrize(
    ("edition", "count"),
    [("fide-2018-rapid", 2), ("fide-2018-blitz", 2), ("fide-1997-rapid", 3)],
)
def test_the_illegal_move_that_would_lose_stands_too_unless_claimed(
    edition: str, count: int
) -> None:
    # Where an unclaimed illegal move stands, the one that would lose is no different: the
    # opponent must claim before his own move (or the arbiter intervene). The engine says so
    # and leaves the result to the arbiter; if the opponent replies, it stands.
    table = Table(rules_label=edition)
    for _ in range(count - 1):
        table.do([Lift(chess.E2), Place(chess.E5, P("P"))])
        table.press(chess.WHITE)
        table.do([Lift(chess.E5), Place(chess.E2, P("P"))])
        table.press(chess.BLACK)
    table.do([Lift(chess.E2), Place(chess.E5, P("P"))])
    facts = table.press(chess.WHITE)
    [alert] = alerts(facts)
    assert (alert.kind, alert.details["count"]) == ("illegal_move", count)
    assert "if the opponent claims it" in str(alert.details["penalty"])
    assert results(facts) == []
    facts = table.do([Lift(chess.D7), Place(chess.D6, P("p"))]) + table.press(chess.BLACK)
    assert kinds(facts) == ["illegal_move_stood"]
    assert [m.san for m in moves(facts)] == ["d6"]
    assert table.arbiter.result is None


def test_lifting_a_piece_off_a_square_reported_displaced_is_no_touch() -> None:
    # White's bishop fell onto c3 during e4; after the press he puts it right on Black's time.
    # That lift is not Black touching an opponent's piece, whatever Black then plays.
    table = Table()
    table.do([Lift(chess.E2), Place(chess.E4, P("P"))])
    table.do([Lift(chess.C1), Place(chess.C3, P("B"))], interval=0.3)
    table.press(chess.WHITE)
    facts = table.do([Lift(chess.C3), Place(chess.C1, P("B"))], interval=0.5)
    facts += table.do([Lift(chess.E7), Place(chess.E5, P("p"))]) + table.press(chess.BLACK)
    assert [m.san for m in moves(facts)] == ["e5"]
    assert kinds(facts) == []


# -- 12. trust at the edges -------------------------------------------------------------------


def test_2018_a_press_without_a_move_after_an_unpromoted_pawn_is_the_second_illegal_move() -> None:
    # 7.5.2: the pawn left on c8 and pressed is illegal move 1; it is replaced by a queen, Black
    # takes it and presses; White presses without a move: 7.5.3, illegal move 2, 0-1 (7.5.5).
    table = Table(PROMOTE)
    table.do([Lift(chess.C7), Place(chess.C8, P("P"))])
    first = table.press(chess.WHITE)
    assert [(a.article, a.details["count"]) for a in alerts(first, "illegal_move")] == [
        ("7.5.2", 1)
    ]
    facts = table.do([Lift(chess.C8), Place(chess.C8, P("Q"))]) + table.wait(1.0)
    [queen] = moves(facts)
    assert (queen.san, queen.completed_by) == ("c8=Q", CompletedBy.CLOCK)
    # Black takes the queen, victim first: his touch, and no press of White's was awaited.
    facts = table.do([Lift(chess.C8), Lift(chess.D8), Place(chess.C8, P("r"))])
    facts += table.wait(1.0) + table.press(chess.BLACK)
    assert [m.san for m in moves(facts)] == ["Rxc8"]
    [victim] = [t for t in facts if isinstance(t, TouchReported) and t.square == chess.C8][:1]
    assert victim.meaning == "opponent's queen touched by the player having the move"
    assert alerts(facts) == []
    facts = table.press(chess.WHITE)
    assert [(a.kind, a.color) for a in alerts(facts)] == [("illegal_move", chess.WHITE)]
    [alert] = alerts(facts)
    assert (alert.article, alert.details["count"]) == ("7.5.3", 2)
    [ended] = results(facts)
    assert (ended.result, ended.article) == ("0-1", "7.5.5")


@pytest.mark.parametrize(("edition", "article"), [("fide-1997", "4.3(a)"), ("fide-2018", "4.3.1")])
def test_a_king_without_castling_rights_touched_then_a_rook_moved_is_touch_move(
    edition: str, article: str
) -> None:
    # No castling right: touching the king and then a rook is no castling (4.4); the king was
    # the first piece touched and had to move (4.3).
    table = Table(NO_RIGHTS, edition)
    table.do([Lift(chess.E1), Place(chess.E1, P("K"))], interval=0.5)
    facts = table.do([Lift(chess.H1), Place(chess.G1, P("R"))]) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["Rg1"]
    [alert] = alerts(facts)
    assert (alert.kind, alert.article, alert.details["square"]) == ("touch_move", article, "e1")
    assert alert.details["obligation"] == "move"
    assert "castl" not in alert.message
    assert "the king had to move" in alert.message


@BOTH
@pytest.mark.parametrize("move_first", [False, True])
def test_a_knocked_board_pressed_still_displaced_is_reported_once(
    edition: str, move_first: bool
) -> None:
    table = Table(rules_label=edition)
    squares = [chess.B1, chess.B2, chess.C2]
    facts = table.do([Lift(sq) for sq in squares], interval=0.015) + table.wait(0.5)
    [alert] = alerts(facts)
    assert (alert.kind, alert.details["squares"]) == ("displaced_pieces", ["b1", "b2", "c2"])
    facts = table.do([Lift(chess.E2), Place(chess.E4, P("P"))]) if move_first else []
    facts += table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == (["e4"] if move_first else [])
    assert alerts(facts) == []


BACK_RANK = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 30"


@pytest.mark.parametrize(
    ("edition", "article", "ends"), [("fide-1997", "5.1(a)", True), ("fide-2018", "5.1.1", False)]
)
def test_a_checkmate_made_in_breach_of_touch_move(edition: str, article: str, ends: bool) -> None:
    # 2018 5.1.1: checkmate ends the game only if the mating move was in accordance with Articles
    # 3 and 4.2-4.7; 1997 5.1(a) asks for a legal move, which a touch-move breach still is.
    table = Table(BACK_RANK, edition)
    table.do([Lift(chess.G2), Place(chess.G2, P("P"))], interval=0.5)
    facts = table.do([Lift(chess.A1), Place(chess.A8, P("R"))]) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["Ra8#"]
    [alert] = alerts(facts)
    assert (alert.kind, alert.details["square"]) == ("touch_move", "g2")
    if ends:
        [ended] = results(facts)
        assert (ended.result, ended.article) == ("1-0", article)
        return
    assert results(facts) == []
    assert f"Art. {article}" in alert.message
    assert "arbiter" in alert.message
    ended = table.arbiter.set_result("1-0", "checkmate", article, table.now)
    assert ended.result == "1-0"
    assert table.arbiter.result == ended


@pytest.mark.parametrize(("edition", "article"), [("fide-1997", "4.6(b)"), ("fide-2018", "4.6.2")])
@pytest.mark.parametrize("instead", ["Kf1", "Ng5"])
def test_a_king_released_on_its_castling_square_then_moved_on(
    edition: str, article: str, instead: str
) -> None:
    # The king released on g1 while castling short is legal: castling on that side is obliged.
    table = Table(CASTLE, edition)
    table.do([Lift(chess.E1), Place(chess.G1, P("K"))])
    table.wait(1.0)
    if instead == "Kf1":
        steps: list[Step] = [Lift(chess.G1), Place(chess.F1, P("K"))]
    else:
        steps = [Lift(chess.G1), Place(chess.E1, P("K")), Lift(chess.F3), Place(chess.G5, P("N"))]
    facts = table.do(steps) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == [instead]  # the board is the truth
    [alert] = alerts(facts)
    assert (alert.kind, alert.article, alert.color) == ("released_piece_moved", article, True)
    uci = table.board.parse_san(instead).uci()
    assert (alert.details["released_on"], alert.details["move"]) == ("g1", uci)
    assert alert.details["obligation"] == "castle with the rook on h1"
    assert f"Art. {article}" in alert.message


def test_a_king_put_on_its_castling_square_and_castling_is_no_breach() -> None:
    table = Table(CASTLE)
    facts = table.do(white_castles(True)) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["O-O"]
    assert kinds(facts) == []


def test_a_king_on_its_castling_square_when_castling_is_illegal_obliges_nothing_more() -> None:
    # Castling short is illegal (f1 attacked): a king put on g1 is no castling to oblige; the
    # king moves anyway (1997 4.4 b, 2018 4.4.3 when the rook was touched).
    table = Table(THROUGH_CHECK)
    table.do([Lift(chess.E1), Place(chess.G1, P("K"))])
    table.wait(1.0)
    facts = table.do([Lift(chess.G1), Place(chess.D2, P("K"))]) + table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["Kd2"]
    assert kinds(facts) == []
