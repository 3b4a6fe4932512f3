"""Two hands on the board: the opponent reaches for his reply before the mover's piece lands.

Common on boards without a clock, and on every family: the reply's first lift comes before the
mover's last step, or the whole reply is put down before it. The engine records the mover's
move as it would alone and the reply when it completes; the other hand's lifts bind nobody; a
board that a line of legal moves explains is followed, one that nothing explains is said once,
two lines to one board are never guessed - and the mover's own breaches are still caught.

Each situation is played as every family reports it (``tests.hands``: DGT field updates,
Millennium and Certabo whole readings, a Pegasus's occupancy), with a clock and without.
"""

from __future__ import annotations

import chess
import pytest

from bridge.arbiter.engine import MISMATCH_AFTER
from bridge.arbiter.facts import AlertRaised, CompletedBy, GameEnded, MovePlayed, TouchReported
from bridge.arbiter.recovery import HELD_AFTER
from bridge.arbiter.state import State
from drivers.choreography import Lift, Place, Step, Style
from tests.hands import Bench, Overlap, Ply, Shape, Timed, timeline
from tests.table import OccupancyBoard
from tests.unit.test_laws import Table, alerts, moves

P = chess.Piece.from_symbol

RECORDED = (
    "d4 d5 c4 c6 Nf3 Nf6 Nc3 dxc4 a4 Na6 Bg5 h6 e4 Bg4 Bc1 Qb8 Qc2 b5 axb5 cxb5 Rxa6 Nxe4 "
    "Nxb5 Qxh2 Nc7+ Qxc7 g3 Qxg3 Bxc4 Rd8 Qa4+ Rd7 Raxh6 Bxf3 Bb5 Qxf2#"
)
"""A game of 36 plies ending in mate, in which Black lifts his bishop for 7... Bg4 before
White's pawn has landed on e4 (the pattern of a game recorded on a DGT board without a clock)."""

EARLY: dict[int, tuple[Overlap, float]] = {
    13: (Overlap.FIRST_LIFT, 0.15),  # 7. e4: the bishop lifted for 7... Bg4 before e4 lands
    4: (Overlap.FIRST_LIFT, 0.04),
    9: (Overlap.WHOLE, 0.1),  # 5. a4: 5... Na6 put down before the pawn lands
    16: (Overlap.FIRST_LIFT, 0.25),
    21: (Overlap.WHOLE, 0.2),  # 11. Rxa6: 11... Nxe4 made before the rook lands
    26: (Overlap.FIRST_LIFT, 0.1),
    31: (Overlap.WHOLE, 0.12),
}
"""Plies (from 1) whose reply begins before their last step, and how."""

SHAPES_AND_CLOCKS = [
    (Shape.EVENTS, False),
    (Shape.EVENTS, True),
    (Shape.MILLENNIUM, False),
    (Shape.CERTABO, False),
    (Shape.OCCUPANCY, False),
]


def recorded_game(styles: list[Style] | None = None) -> list[Ply]:
    board = chess.Board()
    plies: list[Ply] = []
    for i, san in enumerate(RECORDED.split(), start=1):
        move = board.parse_san(san)
        overlap, early = EARLY.get(i, (Overlap.NONE, 0.15))
        style = styles[i % len(styles)] if styles else Style.PLAIN
        plies.append(Ply(move, style, overlap, early))
        board.push(move)
    return plies


def played(shape: Shape, plies: list[Ply], *, clock: bool = False, start: str = "") -> Bench:
    board = chess.Board(start or chess.STARTING_FEN)
    bench = Bench(board, shape, clock=clock)
    bench.play(timeline(board, plies, clock=clock, occupancy=shape is Shape.OCCUPANCY))
    return bench


@pytest.mark.parametrize(("shape", "clock"), SHAPES_AND_CLOCKS)
def test_the_recorded_game_with_replies_begun_early_is_recorded_whole(
    shape: Shape, clock: bool
) -> None:
    plies = recorded_game([Style.PLAIN, Style.VICTIM_FIRST, Style.SLIDE, Style.VICTIM_AFTER_LIFT])
    bench = played(shape, plies, clock=clock)
    assert bench.recorded() == [ply.move for ply in plies]
    assert bench.alerts() == []
    [ended] = [f for f in bench.facts if isinstance(f, GameEnded)]
    assert (ended.result, ended.reason) == ("0-1", "checkmate")
    ways = {m.completed_by for m in bench.facts if isinstance(m, MovePlayed)}
    assert ways <= {CompletedBy.RELEASE, CompletedBy.CLOCK}


@pytest.mark.parametrize("clock", [False, True])
def test_the_bishop_lifted_before_e4_lands_is_blacks_hand_and_binds_nobody(clock: bool) -> None:
    plies = recorded_game()[:14]
    bench = played(Shape.EVENTS, plies, clock=clock)
    assert bench.recorded() == [ply.move for ply in plies]
    touches = [f for f in bench.facts if isinstance(f, TouchReported)]
    [bishop] = [t for t in touches if t.square == chess.C8 and t.piece == P("b")][:1]
    assert bishop.hand == chess.BLACK
    assert "binds nobody" in bishop.meaning
    assert "by the player having the move" not in bishop.meaning
    e4 = next(m for m in bench.facts if isinstance(m, MovePlayed) and m.san == "e4")
    bg4 = next(m for m in bench.facts if isinstance(m, MovePlayed) and m.san == "Bg4")
    # e4 on its release (the pawn put down), not after a wait; the bishop's lift is not in it.
    landed = next(t.at for t in touches if t.square == chess.E4 and t.piece == P("P"))
    assert e4.at == landed
    assert chess.C8 not in e4.touched
    assert bg4.at > e4.at
    assert bench.alerts() == []


@pytest.mark.parametrize(("shape", "clock"), SHAPES_AND_CLOCKS)
def test_a_reply_put_down_before_the_move_lands_gives_both_moves_in_order(
    shape: Shape, clock: bool
) -> None:
    board = chess.Board()
    sans = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"]
    plies = []
    for i, san in enumerate(sans):
        move = board.parse_san(san)
        plies.append(Ply(move, overlap=Overlap.WHOLE if i % 2 == 0 else Overlap.NONE))
        board.push(move)
    bench = played(shape, plies, clock=clock)
    assert bench.recorded() == [ply.move for ply in plies]
    assert bench.alerts() == []


def test_a_reply_that_takes_a_piece_lifted_before_the_move_lands() -> None:
    # 1. e4 d5 2. Nc3, and Black lifts White's e4 pawn - his victim - before the knight lands.
    table = Table(clock=False)
    table.play("e4", press=False)
    table.play("d5", press=False)
    facts = table.do([Lift(chess.B1), Lift(chess.E4), Place(chess.C3, P("N"))])
    facts += table.do([Lift(chess.D5), Place(chess.E4, P("p"))]) + table.wait(2.0)
    assert [m.san for m in moves(facts)] == ["Nc3", "dxe4"]
    assert alerts(facts) == []  # White touched no pawn of his: Black's hand took it


@pytest.mark.parametrize("clock", [False, True])
def test_an_overlap_never_hides_a_breach_by_the_mover(clock: bool) -> None:
    table = Table(clock=clock)
    # White touches his knight, puts it back, plays e4 - Black's hand already at work.
    facts = table.do([Lift(chess.G1), Place(chess.G1, P("N"))], interval=0.5)
    facts += table.do([Lift(chess.E2), Lift(chess.G8), Place(chess.E4, P("P"))])
    facts += table.press(chess.WHITE) if clock else []
    facts += table.do([Place(chess.F6, P("n"))]) + table.wait(2.0)
    facts += table.press(chess.BLACK) if clock else []
    assert [m.san for m in moves(facts)] == ["e4", "Nf6"]
    [alert] = alerts(facts)
    assert (alert.kind, alert.color, alert.details["square"]) == ("touch_move", chess.WHITE, "g1")


@pytest.mark.parametrize("clock", [False, True])
def test_a_capturable_piece_lifted_is_open_until_the_move_tells(clock: bool) -> None:
    # 1. e4 d5: White's pawn can take d5. Black lifts his d-pawn as White plays Nf3: not
    # White's touch of an opponent's piece (4.3.3), but Black's reply begun (he pushes d4).
    table = Table(clock=clock)
    table.play("e4", press=clock)
    table.play("d5", press=clock)
    facts = table.do([Lift(chess.G1), Lift(chess.D5), Place(chess.F3, P("N"))])
    lift = next(f for f in facts if isinstance(f, TouchReported) and f.square == chess.D5)
    assert lift.hand is None  # White's, to capture it, or Black's own: what follows tells
    facts += table.press(chess.WHITE) if clock else []
    facts += table.do([Place(chess.D4, P("p"))]) + table.wait(2.0)
    facts += table.press(chess.BLACK) if clock else []
    assert [m.san for m in moves(facts)] == ["Nf3", "d4"]
    assert alerts(facts) == []


def test_the_victim_lifted_first_by_the_mover_is_his_touch() -> None:
    # The same lift, then White takes on d5: it was his.
    table = Table(clock=False)
    table.play("e4", press=False)
    table.play("d5", press=False)
    table.do([Lift(chess.D5), Place(chess.D5, P("p"))], interval=0.5)  # touched, put back
    facts = table.play("Nf3", press=False)
    [alert] = alerts(facts)
    assert (alert.kind, alert.color, alert.details["square"]) == ("touch_move", chess.WHITE, "d5")


@pytest.mark.parametrize(
    "breach",
    ["touch_move", "castling_rook_first", "released_piece_moved", "illegal_move", "two_moves"],
)
def test_breaches_are_still_caught_on_a_board_without_a_clock(breach: str) -> None:
    fen = "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 0 8"
    table = Table(fen, clock=False)
    if breach == "touch_move":
        table.do([Lift(chess.F3), Place(chess.F3, P("N"))], interval=0.5)
        facts = table.play("a3", press=False)
    elif breach == "castling_rook_first":
        steps: list[Step] = [Lift(chess.H1), Place(chess.F1, P("R"))]
        steps += [Lift(chess.E1), Place(chess.G1, P("K"))]
        facts = table.do(steps, interval=0.5) + table.wait(2.0)
    elif breach == "released_piece_moved":
        facts = table.do([Lift(chess.A2), Place(chess.A3, P("P"))]) + table.wait(1.0)
        facts += table.do([Lift(chess.A3), Place(chess.A4, P("P"))]) + table.wait(2.0)
    elif breach == "illegal_move":
        facts = table.do([Lift(chess.F3), Place(chess.F5, P("N"))]) + table.wait(12.0)
    else:
        facts = table.do([Lift(chess.A2), Place(chess.A3, P("P"))]) + table.wait(1.0)
        facts += table.do([Lift(chess.H2), Place(chess.H3, P("P"))]) + table.wait(12.0)
    kind = "illegal_move" if breach == "two_moves" else breach
    assert kind in [a.kind for a in alerts(facts)]
    assert all(a.color in (chess.WHITE, None) for a in alerts(facts))


def test_a_board_nothing_explains_is_said_once_and_the_game_resumes_when_explained() -> None:
    table = Table(clock=False)
    table.play("e4", press=False)
    # Black's queen and king change places: no line of moves explains it, no press judges it.
    swap: list[Step] = [
        Lift(chess.D8),
        Lift(chess.E8),
        Place(chess.D8, P("k")),
        Place(chess.E8, P("q")),
    ]
    facts = table.do(swap) + table.wait(MISMATCH_AFTER + 0.5)
    [alert] = alerts(facts)
    assert (alert.kind, alert.color) == ("board_mismatch", None)
    assert alert.details["squares"] == ["d8", "e8"]
    assert table.arbiter.state is State.MISMATCH
    # Black plays on meanwhile; the two are put back: e5 is recorded, nothing said again.
    facts = table.do([Lift(chess.E7), Place(chess.E5, P("p"))]) + table.wait(3 * MISMATCH_AFTER)
    assert moves(facts) == []
    assert alerts(facts) == []
    back: list[Step] = [
        Lift(chess.D8),
        Lift(chess.E8),
        Place(chess.D8, P("q")),
        Place(chess.E8, P("k")),
    ]
    facts = table.do(back) + table.wait(2.0)
    assert [m.san for m in moves(facts)] == ["e5"]
    assert alerts(facts) == []
    table.board.push_san("e5")
    assert [m.san for m in moves(table.play("Nf3", press=False))] == ["Nf3"]


def test_a_board_with_pieces_missing_is_given_longer() -> None:
    table = Table(clock=False)
    table.play("e4", press=False)
    # Black's knight on c8 and his bishop off the board: no line of moves explains it - but a
    # bishop may be in a hand a while.
    facts = table.do([Lift(chess.B8), Lift(chess.C8), Place(chess.C8, P("n"))])
    facts += table.wait(MISMATCH_AFTER + 0.5)
    assert alerts(facts) == []
    facts = table.wait(HELD_AFTER)
    [alert] = alerts(facts)
    assert (alert.kind, alert.color, alert.details["squares"]) == (
        "board_mismatch",
        None,
        ["b8", "c8"],
    )


def test_two_lines_to_one_board_are_not_guessed_until_a_move_tells_them_apart() -> None:
    # An occupancy-only board: White's rook f7 to e7 and Black's king e6 to f6, or the rook to
    # f6 and the king to e7 - the squares read the same. The rook's next move tells.
    start = chess.Board("8/5R2/4k3/8/8/8/8/4K3 w - - 0 1")
    table = OccupancyBoard(start)
    facts = table.do([Lift(chess.F7), Lift(chess.E6), Place(chess.E7, P("R"))], 0.3)
    facts += table.do([Place(chess.F6, P("k"))]) + table.wait(5.0)
    assert moves(facts) == []
    [alert] = alerts(facts)
    assert alert.kind == "board_mismatch"
    lines = alert.details["lines"]
    assert isinstance(lines, list)
    assert sorted(lines) == ["f7e7 e6f6", "f7f6 e6e7"]
    facts = table.do([Lift(chess.E7), Place(chess.E1 + 8 * 1, P("R"))]) + table.wait(5.0)
    assert [m.uci() for m in table.recorded()] == ["f7e7", "e6f6", "e7e2"]
    assert [a for a in alerts(facts) if a.kind != "board_mismatch"] == []


def test_a_press_on_a_board_two_lines_explain_says_so_at_once() -> None:
    start = "8/5R2/4k3/8/8/8/8/4K3 w - - 0 1"
    table = Table(start)
    # A piece-identifying board tells rook from king, but a press with the line still unread
    # is judged on what the board shows: Re7 Kf6 made within one scan of each other.
    facts = table.do(
        [Lift(chess.F7), Lift(chess.E6), Place(chess.E7, P("R")), Place(chess.F6, P("k"))], 0.01
    )
    facts += table.press(chess.WHITE)
    assert [m.san for m in moves(facts)] == ["Re7+", "Kf6"]
    assert [a.kind for a in alerts(facts)] == []


def test_pegasus_plays_a_reply_begun_early_as_a_unique_line() -> None:
    plies = recorded_game()[:16]
    bench = played(Shape.OCCUPANCY, plies)
    assert bench.recorded() == [ply.move for ply in plies]
    assert [f for f in bench.facts if isinstance(f, AlertRaised)] == []


# On a board that senses occupancy only, pieces of either side look alike: the order in which
# squares were lifted and filled is all the engine has to tell lines apart.
BISHOPS = "r3k2r/ppp2ppp/2n5/8/2b2B2/2N5/PPP2PPP/R3K2R w KQkq - 0 1"


def sans_plies(
    start: str, sans: str, early: dict[int, Overlap], styles: dict[int, Style]
) -> list[Ply]:
    board = chess.Board(start)
    plies = []
    for i, san in enumerate(sans.split()):
        move = board.parse_san(san)
        plies.append(Ply(move, styles.get(i, Style.PLAIN), early.get(i, Overlap.NONE), 0.25))
        board.push(move)
    return plies


@pytest.mark.parametrize(("shape", "clock"), SHAPES_AND_CLOCKS)
def test_a_reply_made_while_the_movers_piece_is_in_the_air_after_a_line_is_released(
    shape: Shape, clock: bool
) -> None:
    """Bxc7 O-O Bf4 Bxa2: White lifts his bishop before O-O lands, slides it towards f4, and
    Black takes on a2 before it lands. The line is released move by move (the slide waits for
    its dwell); the capture on a2, where an occupancy board reads no change, stays in reach."""
    plies = sans_plies(
        BISHOPS,
        "Bxc7 O-O Bf4 Bxa2",
        early={1: Overlap.FIRST_LIFT, 2: Overlap.WHOLE},
        styles={2: Style.SLIDE},
    )
    bench = played(shape, plies, clock=clock, start=BISHOPS)
    assert bench.recorded() == [ply.move for ply in plies]
    assert bench.alerts() == []


def test_a_king_and_a_rook_moved_in_two_moves_are_no_castling_on_an_occupancy_board() -> None:
    """Kf1 ... Rg1 leaves the squares O-O leaves: but the piece put on f1 came before the rook
    left h1, so it was the king's."""
    start = "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/2NP1N2/PPP1QPPP/R1B1K2R w KQkq - 0 1"
    plies = sans_plies(
        start,
        "Kf1 Bxf2 Rg1 d6",
        early={0: Overlap.FIRST_LIFT, 1: Overlap.FIRST_LIFT},
        styles={},
    )
    bench = played(Shape.OCCUPANCY, plies, start=start)
    recorded = bench.recorded()
    assert recorded == [ply.move for ply in plies][: len(recorded)]
    assert chess.Move.from_uci("e1g1") not in recorded
    assert len(recorded) == len(plies)


def test_a_piece_put_down_and_lifted_again_while_the_reply_lands_is_not_guessed() -> None:
    """Bg5 Nxe5 Bh6 on an occupancy board, the bishop lifted from g5 again before the knight
    lands: Bh6 with the bishop slid over g5 leaves the same squares occupied, with White to
    move. The two lines are not guessed; the next move tells them apart."""
    start = "r1bqk2r/pP3ppp/2n2n2/2bpP3/8/2N2N2/PPP2pPP/R1BQKB1R w KQkq d6 0 8"
    game = "Ke2 Bxb7 b3 Rg8 Bg5 Nxe5 Bh6"
    plies = sans_plies(start, game, early={4: Overlap.FIRST_LIFT, 5: Overlap.FIRST_LIFT}, styles={})
    bench = played(Shape.OCCUPANCY, plies, start=start)
    recorded = bench.recorded()
    assert recorded == [ply.move for ply in plies][: len(recorded)]
    assert recorded[:4] == [ply.move for ply in plies[:4]]
    # The next move (Black's) tells them apart: the whole game is recorded.
    plies = sans_plies(
        start, game + " Rh8", early={4: Overlap.FIRST_LIFT, 5: Overlap.FIRST_LIFT}, styles={}
    )
    bench = played(Shape.OCCUPANCY, plies, start=start)
    assert bench.recorded() == [ply.move for ply in plies]


SLIDE_START = "r1b1k1nr/1p1p2pp/p1n2p2/q3p3/3p3P/2PQBPP1/PP2P3/RN2KBNR w KQkq - 0 9"


def hovered(clock: bool) -> Bench:
    """Bf1-h3 slid over g2, where the bishop hovers 0.35 s (longer than a scan, shorter than the
    dwell) while Black, reaching early, plays Qa5-c7, landing first; each presses after his
    move."""
    bench = Bench(chess.Board(SLIDE_START), Shape.EVENTS, clock=clock)
    bishop, queen = P("B"), P("q")
    laid = [
        Timed(0.0, Lift(chess.F1)),
        Timed(0.1, Place(chess.G2, bishop)),
        Timed(0.2, Lift(chess.A5)),
        Timed(0.45, Lift(chess.G2)),
        Timed(0.5, Place(chess.C7, queen)),
        Timed(0.6, Place(chess.H3, bishop)),
    ]
    if clock:
        laid += [Timed(1.0, press=chess.WHITE), Timed(1.3, press=chess.BLACK)]
    bench.play(laid)
    return bench


def test_a_clock_tells_a_hovering_slide_from_two_moves() -> None:
    # Bg2, Qc7, Bh3 (a ply longer) agrees with the hands too; the presses say whose turn it was:
    # White pressed once, after h3.
    bench = hovered(clock=True)
    assert [m.uci() for m in bench.recorded()] == ["f1h3", "a5c7"]
    assert bench.alerts() == []


def test_without_a_clock_a_hovering_slide_is_not_guessed() -> None:
    bench = hovered(clock=False)
    assert bench.recorded() == []
    [alert] = bench.alerts()
    assert alert.kind == "board_mismatch"
    shown = alert.details["lines"]
    assert isinstance(shown, list)
    assert sorted(shown) == ["f1g2 a5c7 g2h3", "f1h3 a5c7"]


def test_a_move_on_its_way_that_a_press_records_with_the_line_is_not_recorded_again() -> None:
    # Bh3 lands, then Black's queen on c7 (a slide: it waits for the dwell), and White presses
    # within it: the press records the line, queen move included. When the dwell ends there is
    # nothing left to record (it was recorded a second time, and the engine raised).
    bench = Bench(chess.Board(SLIDE_START), Shape.EVENTS, clock=True)
    bishop, queen = P("B"), P("q")
    bench.play(
        [
            Timed(0.0, Lift(chess.F1)),
            Timed(0.1, Place(chess.G2, bishop)),
            Timed(0.2, Lift(chess.A5)),
            Timed(0.45, Lift(chess.G2)),
            Timed(0.55, Place(chess.H3, bishop)),
            Timed(0.7, Place(chess.C7, queen)),
            Timed(1.0, press=chess.WHITE),
            Timed(1.3, press=chess.BLACK),
        ]
    )
    assert [m.uci() for m in bench.recorded()] == ["f1h3", "a5c7"]
    assert bench.alerts() == []
