"""A restart into a game under way: what was played unheard, read off the board whole.

The daemon comes back with the game it last published; the players went on meanwhile (1, 3,
6 plies), perhaps with a piece in the hand when the board is read. The engine records the one
line of legal moves that leaves the board read, as ``reconstructed``; when none or several do,
one ``board_mismatch`` and nothing recorded until the board matches or an arbiter settles it.
"""

from __future__ import annotations

import chess
import pytest

from bridge.arbiter.engine import MISMATCH_AFTER, Arbiter, EngineConfig
from bridge.arbiter.facts import CompletedBy, Fact
from bridge.arbiter.lines import LISTED
from bridge.arbiter.recovery import HELD_AFTER
from bridge.arbiter.state import State
from drivers.choreography import Lift, Place, steps
from drivers.events import BoardSnapshot, ClockSide, Occupant
from tests.hands import Bench, Overlap, Ply, Shape, Timed, timeline
from tests.table import HandFed
from tests.unit.test_laws import Table, alerts, moves

GAME = "e4 e5 Nf3 Nc6 Bb5"


def board_after(sans: str, start: chess.Board | None = None) -> chess.Board:
    board = (start or chess.Board()).copy()
    for san in sans.split():
        board.push_san(san)
    return board


def restarted(*, clock: bool = True) -> Table:
    """A table whose daemon restarted with the game of five plies it last published."""
    table = Table(clock=clock)
    for san in GAME.split():
        table.board.push_san(san)
    table.arbiter.set_game(table.board)
    return table


def read(table: HandFed, board: chess.Board, *, in_hand: chess.Square | None = None) -> list[Fact]:
    squares = [board.piece_at(sq) for sq in chess.SQUARES]
    if in_hand is not None:
        squares[in_hand] = None
    out = table.arbiter.feed(BoardSnapshot(squares=tuple(squares), at=table.now), table.now)
    table.facts.extend(out)
    return out


def reconstructed(facts: list[Fact]) -> list[str]:
    return [m.san for m in moves(facts) if m.completed_by is CompletedBy.RECONSTRUCTED]


def test_one_ply_made_unheard_is_reconstructed() -> None:
    table = restarted()
    facts = read(table, board_after("a6", table.board))
    assert reconstructed(facts) == ["a6"]
    assert alerts(facts + table.wait(2 * MISMATCH_AFTER)) == []


def test_three_plies_in_the_only_order_they_could_come_are_reconstructed() -> None:
    table = restarted()
    facts = read(table, board_after("d6 Bxc6+ bxc6", table.board))
    assert reconstructed(facts) == ["d6", "Bxc6+", "bxc6"]
    assert table.arbiter.board.fen() == board_after("d6 Bxc6+ bxc6", table.board).fen()
    assert alerts(facts + table.wait(2 * MISMATCH_AFTER)) == []


def test_a_piece_in_the_hand_at_the_restart_is_a_hand_at_work() -> None:
    """Two plies made unheard, and the next mover holds his knight when the board is read."""
    table = restarted()
    played = board_after("a6 Ba4", table.board)
    facts = read(table, played, in_hand=chess.G8)
    assert reconstructed(facts) == ["a6", "Ba4"]
    assert table.arbiter.state.name != "MISMATCH"  # (a fresh reading of the state)
    facts = table.do([Place(chess.F6, chess.Piece(chess.KNIGHT, chess.BLACK))])
    assert [(m.san, m.completed_by) for m in moves(facts)] == [("Nf6", CompletedBy.RELEASE)]
    assert alerts(table.facts + table.wait(HELD_AFTER)) == []


def test_moves_in_either_order_are_one_alert_and_nothing_recorded() -> None:
    """Six plies that could have come in two orders: the board cannot tell, the arbiter can."""
    table = restarted()
    played = board_after("d6 d4 Bd7 Nc3 Nf6 O-O", table.board)
    facts = read(table, played)
    assert moves(facts) == []
    assert table.arbiter.state is State.MISMATCH
    facts += table.wait(MISMATCH_AFTER + 0.1)
    [alert] = alerts(facts)
    assert alert.kind == "board_mismatch"
    assert alert.details["plies"] == 6
    shown = alert.details["lines"]
    assert isinstance(shown, list)
    assert 2 <= len(shown) <= LISTED
    assert alert.details["search"] == "complete"
    assert "reconstruct" in alert.message
    # The players go on: a rook adjusted, a move made, the clock pressed. Nothing is recorded
    # on a game the board contradicts, no touch-move is judged, and the alert is not repeated.
    later = table.do([Lift(chess.A8), Place(chess.A8, chess.Piece(chess.ROOK, chess.BLACK))])
    later += table.do(steps(played, played.parse_san("Be7")))
    later += table.press(chess.BLACK) + table.wait(3 * MISMATCH_AFTER)
    assert moves(later) == []
    assert alerts(later) == []
    assert table.arbiter.state is State.MISMATCH
    # The arbiter sets the game: the table goes on.
    played.push_san("Be7")
    table.arbiter.set_game(played)
    assert table.arbiter.state.name != "MISMATCH"  # (a fresh reading of the state)
    table.board = played
    facts = table.play("Re1")
    assert [m.san for m in moves(facts)] == ["Re1"]


def test_a_board_put_back_ends_the_mismatch() -> None:
    table = restarted(clock=False)
    read(table, board_after("d6 d4 Bd7 Nc3 Nf6 O-O", table.board))
    assert table.arbiter.state is State.MISMATCH
    read(table, table.board)  # read again, as it was: the position of the game is back
    assert table.arbiter.state.name != "MISMATCH"  # (a fresh reading of the state)
    assert alerts(table.facts + table.wait(2 * MISMATCH_AFTER)) == []


def test_the_last_piece_put_down_explains_the_board() -> None:
    """Read with a piece in the hand and nothing that explains it yet: put down, it does."""
    table = restarted()
    played = board_after("d6 Bxc6+ bxc6", table.board)
    # c6 read empty: the pawn from b7 is in the hand, or the bishop is; the board waits.
    facts = read(table, played, in_hand=chess.C6)
    facts += table.wait(1.0)
    facts += table.do([Place(chess.C6, chess.Piece(chess.PAWN, chess.BLACK))])
    facts += table.wait(1.0)
    assert [m.san for m in moves(facts)] == ["d6", "Bxc6+", "bxc6"]
    assert alerts(facts + table.wait(2 * MISMATCH_AFTER)) == []


def test_a_press_on_a_board_nothing_explains_says_so_at_once() -> None:
    table = restarted()
    squares = board_after("a6", table.board)
    squares.set_piece_at(chess.D5, chess.Piece(chess.QUEEN, chess.WHITE))  # a second queen
    facts = read(table, squares)
    assert moves(facts) == []
    facts += table.press(chess.WHITE)
    [alert] = alerts(facts)
    assert alert.kind == "board_mismatch"
    assert alert.details["lines"] == []
    assert table.arbiter.illegal_counts == {chess.WHITE: 0, chess.BLACK: 0}


def test_an_occupancy_board_reads_a_capture_on_either_of_two_squares_as_a_mismatch() -> None:
    from tests.table import OccupancyBoard

    start = chess.Board("4k3/8/8/3pp3/3Q4/8/8/4K3 w - - 0 1")
    table = OccupancyBoard(start)
    facts = table.read_whole(board_after("Qxd5", start))
    assert moves(facts) == []
    [alert] = alerts(facts)
    shown = alert.details["lines"]
    assert isinstance(shown, list)
    assert sorted(shown) == ["d4d5", "d4e5"]
    assert alert.details["apart"] == ["d4", "d5", "e5"]


def test_an_arbiter_without_a_clock_is_not_needed_for_one_line() -> None:
    arbiter = Arbiter(EngineConfig())
    table = HandFed(arbiter)
    facts = read(table, board_after("e4 e5 Bc4"))
    assert reconstructed(facts) == ["e4", "e5", "Bc4"]


def test_a_capture_under_way_at_the_restart_is_a_hand_at_work() -> None:
    """One ply made unheard; White has the knight he takes and his bishop in his hands."""
    table = restarted()
    played = board_after("a6", table.board)
    played.remove_piece_at(chess.C6)
    facts = read(table, played, in_hand=chess.B5)
    assert reconstructed(facts) == ["a6"]
    assert table.arbiter.state.name != "MISMATCH"
    facts = table.do([Place(chess.C6, chess.Piece(chess.BISHOP, chess.WHITE))])
    assert [(m.san, m.completed_by) for m in moves(facts)] == [("Bxc6", CompletedBy.RELEASE)]
    assert alerts(table.facts + table.wait(HELD_AFTER)) == []


def test_pieces_missing_at_the_restart_are_given_longer_before_the_alert() -> None:
    """Two rooks off the board (knocked, or in hands): said once, after the longer wait."""
    table = restarted(clock=False)
    board = table.board.copy()
    board.remove_piece_at(chess.A8)
    board.remove_piece_at(chess.H1)
    facts = read(table, board) + table.wait(MISMATCH_AFTER + 0.5)
    assert alerts(facts) == []
    facts = table.wait(HELD_AFTER - MISMATCH_AFTER)
    [alert] = alerts(facts)
    assert alert.details["squares"] == ["h1", "a8"]


# -- a restart amid two hands (the players go on at once, each reaching early) -----------------


def restart_amid_two_hands(
    game: str, at: int, unheard: int, *, clock: bool, early: dict[int, Overlap]
) -> tuple[list[chess.Move], list[chess.Move], list[str]]:
    """``game`` (UCI) published up to ply ``at``; the daemon restarts with ``unheard`` plies
    made meanwhile and the next move's piece in a hand when the board is read; the players go
    on with the rest, the replies to the plies in ``early`` (counted from the read) begun
    before the move they answer has landed (their first lift, or all of them). The moves
    recorded, the moves played since the last one published, the alerts' kinds."""
    played = [chess.Move.from_uci(uci) for uci in game.split()]
    start = chess.Board()
    for move in played[:at]:
        start.push(move)
    bench = Bench(start, Shape.EVENTS, clock=clock)
    board = start.copy()
    for move in played[at : at + unheard]:
        board.push(move)
    held = played[at + unheard].from_square
    squares: list[Occupant | None] = [board.piece_at(sq) for sq in chess.SQUARES]
    squares[held] = None
    bench.squares = list(squares)
    bench.lever = ClockSide.RIGHT if board.turn == chess.WHITE else ClockSide.LEFT
    if clock:  # the clock as it stands: the last unheard move was pressed
        bench.arbiter.feed(bench.reading(1.0), 1.0)
    bench.facts.extend(bench.arbiter.feed(BoardSnapshot(squares=tuple(squares), at=1.0), 1.0))
    rest = [
        Ply(move, overlap=early.get(i, Overlap.NONE))
        for i, move in enumerate(played[at + unheard :])
    ]
    laid = timeline(board, rest, clock=clock)
    laid.remove(next(t for t in laid if t.step == Lift(held)))  # in the hand already
    bench.play([Timed(t.at + 1.5, t.step, t.press, t.ends) for t in laid])
    return bench.recorded(), played[at:], [a.kind for a in bench.alerts()]


GAME_A = (
    "d2d3 a7a6 b2b4 d7d5 g1h3 b7b5 b1a3 e7e5 e1d2 f8e7 a3b1 c8b7 b1a3 e7h4 d2c3 f7f6 c1b2 e8f7 "
    "f2f3 f7e6 h3g5 f6g5 h1g1 c7c6 d1e1"
)
GAME_B = (
    "d2d4 b7b6 d4d5 g8f6 d5d6 h7h5 c1f4 b8c6 b1a3 c8b7 f4h6 d8c8 g2g3 b6b5 a1c1 c6b4 g3g4 b7h1 "
    "g4h5 c7c5 h2h3 h8h6 a3c4 g7g6 c4d2 b4c6 e2e4 c8b8 g1e2 f6d5"
)


@pytest.mark.parametrize("clock", [False, True], ids=["no clock", "clock"])
def test_a_restart_with_a_hand_at_work_and_the_reply_begun_early_follows_the_game(
    clock: bool,
) -> None:
    # One ply made unheard (4... e5), White's king already in his hand when the board is read;
    # Black makes his whole reply (Be7) before the king lands on d2. Every move is recorded.
    early = {0: Overlap.WHOLE, 3: Overlap.FIRST_LIFT}
    recorded, played, kinds = restart_amid_two_hands(GAME_A, 7, 1, clock=clock, early=early)
    assert recorded == played
    assert kinds == []


@pytest.mark.parametrize("clock", [False, True], ids=["no clock", "clock"])
def test_a_piece_in_a_hand_at_the_restart_is_not_taken_for_a_longer_journey(clock: bool) -> None:
    # White's knight is in his hand when the board is read: four plies could also have taken it
    # off the board (Nb6, Qd8/Qb8, Nxc8, Qxc8). Neither is taken; the knight put down on d2
    # tells, and the game goes on.
    early = {1: Overlap.FIRST_LIFT}
    recorded, played, kinds = restart_amid_two_hands(GAME_B, 24, 0, clock=clock, early=early)
    assert recorded == played
    assert kinds == []


@pytest.mark.parametrize("clock", [False, True], ids=["no clock", "clock"])
def test_after_the_arbiters_reconstruct_the_moves_the_players_made_meanwhile_are_followed(
    clock: bool,
) -> None:
    # Read whole: a6, d3 and Nf6 in either order (two lines: said, nothing recorded). The
    # players go on with c3 while the arbiter asks them; he sets the three moves. The table
    # records them, then c3, and goes on following the game (Be7).
    table = restarted(clock=clock)
    unheard = board_after("a6 d3 Nf6", table.board)
    read(table, unheard)
    assert table.arbiter.state is State.MISMATCH
    played = board_after("c3", unheard)
    table.do(steps(unheard, played.peek()))
    facts = table.arbiter.reconstruct(played.move_stack[5:8], table.now)
    assert [m.san for m in moves(facts)] == ["a6", "d3", "Nf6", "c3"]
    table.board = played
    later = table.play("Be7", press=clock)
    assert [m.san for m in moves(later)] == ["Be7"]


@pytest.mark.parametrize("clock", [False, True], ids=["no clock", "clock"])
def test_moves_made_after_the_restart_are_ordered_by_the_hands_seen_making_them(
    clock: bool,
) -> None:
    # Two plies made unheard (d3 Kf7), and both players' next pieces in their hands when the
    # board is read: nothing explains the board yet. Then g4 and Nc7 are put down, watched:
    # read whole, d3 and g4 could come in either order, and so could Kf7 and Nc7; but what the
    # restarted daemon saw (g4 put down after the board was read) tells the order. The whole
    # game is recorded, with no alert.
    played = [chess.Move.from_uci(uci) for uci in GAME_C.split()]
    start = chess.Board()
    for move in played[:28]:
        start.push(move)
    bench = Bench(start, Shape.EVENTS, clock=clock)
    board = start.copy()
    for move in played[28:30]:
        board.push(move)
    squares: list[Occupant | None] = [board.piece_at(sq) for sq in chess.SQUARES]
    squares[chess.G3] = squares[chess.A6] = None  # both hands at work
    bench.squares = list(squares)
    bench.lever = ClockSide.RIGHT if board.turn == chess.WHITE else ClockSide.LEFT
    if clock:
        bench.arbiter.feed(bench.reading(1.0), 1.0)
    bench.facts.extend(bench.arbiter.feed(BoardSnapshot(squares=tuple(squares), at=1.0), 1.0))
    rest = [Ply(move) for move in played[30:]]
    laid = [
        t
        for t in timeline(board, rest, clock=clock)
        if t.step not in (Lift(chess.G3), Lift(chess.A6))
    ]
    bench.play([Timed(t.at + 1.2, t.step, t.press, t.ends) for t in laid])
    assert bench.recorded() == played[28:]
    assert [a.kind for a in bench.alerts()] == []


GAME_C = (
    "g2g3 f7f5 f2f3 g8f6 b2b3 d7d6 c1a3 f6d5 d1c1 g7g6 a3b2 e8d7 c1d1 d7e6 a2a3 d5f6 e2e3 g6g5 "
    "b2c3 f8g7 f1h3 h8e8 d1e2 g7h6 c3b4 c7c5 e2a6 b8a6 d2d3 e6f7 g3g4 a6c7 h3g2 a7a5 e1d2 c5c4 "
    "f3f4 f6d5 b4a5 c4c3"
)
"""A game a soak's table played (seed 1, table 4): killed after 28... Nxa6, the daemon came back
with d3 Kf7 made, g4 and Nc7 under way."""


def test_a_mismatch_said_before_its_lines_were_found_is_said_again_with_them() -> None:
    # Three plies made unheard (a5 h4 h6), White's h-pawn in his hand again when the board is
    # read, and his press at once: nothing explains the board yet (the search gives up), which
    # is said. The pawn put down on h5, two lines explain it (Black's a5 and h6 in either
    # order): said once more, with the lines, so that the arbiter can choose; he does, and the
    # table follows the game from there.
    played = [chess.Move.from_uci(uci) for uci in GAME_D.split()]
    start = chess.Board()
    for move in played[:3]:
        start.push(move)
    bench = Bench(start, Shape.EVENTS, clock=True)
    board = start.copy()
    for move in played[3:6]:
        board.push(move)
    squares: list[Occupant | None] = [board.piece_at(sq) for sq in chess.SQUARES]
    squares[chess.H4] = None  # in White's hand
    bench.squares = list(squares)
    bench.lever = ClockSide.RIGHT  # White's clock runs
    bench.arbiter.feed(bench.reading(1.0), 1.0)
    bench.facts.extend(bench.arbiter.feed(BoardSnapshot(squares=tuple(squares), at=1.0), 1.0))
    bench.play([Timed(1.2, press=chess.WHITE)], settle=0.0)
    [said] = bench.alerts()
    assert said.details["lines"] == []
    pawn = chess.Piece(chess.PAWN, chess.WHITE)
    bench.play([Timed(1.6, Place(chess.H5, pawn))], settle=MISMATCH_AFTER + 1.0)
    _, again = bench.alerts()
    assert again.kind == "board_mismatch"
    shown = again.details["lines"]
    assert isinstance(shown, list)
    assert sorted(shown) == ["a7a5 h2h4 h7h6 h4h5", "h7h6 h2h4 a7a5 h4h5"]
    later = bench.arbiter.reconstruct(played[3:7], bench.now)
    assert [m.move for m in moves(later)] == played[3:7]
    bench.facts.extend(later)
    board.push(played[6])
    rest = [Ply(move) for move in played[7:12]]
    at = bench.now + 1.0
    bench.play(
        [Timed(t.at + at, t.step, t.press, t.ends) for t in timeline(board, rest, clock=True)]
    )
    assert bench.recorded() == played[3:12]
    assert len(bench.alerts()) == 2


GAME_D = "f2f3 c7c5 b2b3 a7a5 h2h4 h7h6 h4h5 f7f5 f3f4 g7g5 e2e4 c5c4"
"""A soak's table (seed 1, table 6): killed after 2. b3, three plies made meanwhile."""
