"""Every row of docs/product.md §3 (the Laws as engine behaviour), in both editions where they
differ."""

from __future__ import annotations

import chess
import pytest

from bridge.arbiter import rules
from bridge.arbiter.engine import MISMATCH_AFTER, Arbiter, EngineConfig
from bridge.arbiter.facts import (
    AlertRaised,
    ClockPressed,
    CompletedBy,
    Fact,
    GameEnded,
    MovePlayed,
    TouchReported,
)
from bridge.arbiter.state import State
from drivers.choreography import Lift, Place, Step, steps
from drivers.events import BoardSnapshot, ClockReading, ClockSide
from tests.table import HandFed

WHITE_SIDE = ClockSide.RIGHT
P = chess.Piece.from_symbol


class Table(HandFed):
    """An arbiter fed by hand, with a DGT-like clock (White on the right) and its own time."""

    def __init__(
        self, fen: str = chess.STARTING_FEN, rules_label: str = "fide-2018", *, clock: bool = True
    ) -> None:
        self.board = chess.Board(fen)
        config = EngineConfig(rules=rules.edition(rules_label), white_side=WHITE_SIDE)
        super().__init__(Arbiter(config, self.board))
        self.times = {ClockSide.LEFT: 300, ClockSide.RIGHT: 300}
        self.high: ClockSide = WHITE_SIDE if self.board.turn == chess.WHITE else ClockSide.LEFT
        if clock:
            self._reading()

    def _reading(self, *, left_flag: bool = False, right_flag: bool = False) -> list[Fact]:
        reading = ClockReading(
            left=self.times[ClockSide.LEFT],
            right=self.times[ClockSide.RIGHT],
            running=True,
            lever_high=self.high,
            connected=True,
            left_flag=left_flag,
            right_flag=right_flag,
            battery_low=False,
            at=self.now,
        )
        out = self.arbiter.feed(reading, self.now)
        self.facts.extend(out)
        return out

    def press(self, color: chess.Color) -> list[Fact]:
        """The player of ``color`` presses his side: the other side goes up."""
        mine = WHITE_SIDE if color == chess.WHITE else ClockSide.LEFT
        self.high = ClockSide.LEFT if mine is ClockSide.RIGHT else ClockSide.RIGHT
        self.now += 0.2
        return self._reading()

    def flag(self, color: chess.Color) -> list[Fact]:
        side = WHITE_SIDE if color == chess.WHITE else ClockSide.LEFT
        self.times[side] = 0
        self.now += 1
        return self._reading(left_flag=side is ClockSide.LEFT, right_flag=side is ClockSide.RIGHT)

    def do(self, seq: list[Step], interval: float = 0.3) -> list[Fact]:
        return super().do(seq, interval)

    def play(self, san: str, *, press: bool = True) -> list[Fact]:
        move = self.board.parse_san(san)
        color = self.board.turn
        out = self.do(steps(self.board, move))
        self.board.push(move)
        out += self.wait(1.0)
        if press:
            out += self.press(color)
        return out


def alerts(facts: list[Fact], kind: str | None = None) -> list[AlertRaised]:
    return [f for f in facts if isinstance(f, AlertRaised) and kind in (None, f.kind)]


def moves(facts: list[Fact]) -> list[MovePlayed]:
    return [f for f in facts if isinstance(f, MovePlayed)]


def results(facts: list[Fact]) -> list[GameEnded]:
    return [f for f in facts if isinstance(f, GameEnded)]


BOTH = pytest.mark.parametrize("edition", ["fide-1997", "fide-2018"])


# -- Article 4 ------------------------------------------------------------------------------


@pytest.mark.parametrize(("edition", "article"), [("fide-1997", "4.3(a)"), ("fide-2018", "4.3.1")])
def test_own_piece_touched_then_another_moved(edition: str, article: str) -> None:
    table = Table(rules_label=edition)
    knight = P("N")
    table.do([Lift(chess.G1), Place(chess.G1, knight)], interval=0.5)
    facts = table.play("e4")
    assert [m.san for m in moves(facts)] == ["e4"]
    [alert] = alerts(facts, "touch_move")
    assert alert.article == article
    assert alert.details["square"] == "g1"
    assert alert.details["obligation"] == "move"
    assert "unless j'adoube was announced" in alert.message
    assert alert.color == chess.WHITE


def test_adjustment_is_reported_as_touch_with_jadoube_meaning() -> None:
    table = Table()
    facts = table.do([Lift(chess.G1), Place(chess.G1, P("N"))], interval=0.5)
    place = [f for f in facts if isinstance(f, TouchReported)][-1]
    assert "j'adoube" in place.meaning
    assert "4.2.1" in place.meaning


def test_touching_a_piece_that_cannot_move_obliges_nothing() -> None:
    table = Table()
    table.do([Lift(chess.A1), Place(chess.A1, P("R"))], interval=0.5)  # the rook has no move
    table.do([Lift(chess.E8), Place(chess.E8, P("k"))], interval=0.5)  # cannot be captured
    assert alerts(table.play("e4")) == []


def test_sensor_flicker_is_not_a_touch() -> None:
    table = Table()
    table.do([Lift(chess.G1), Place(chess.G1, P("N"))], interval=0.05)
    assert alerts(table.play("e4")) == []


@pytest.mark.parametrize(("edition", "article"), [("fide-1997", "4.3(a)"), ("fide-2018", "4.3.2")])
def test_opponent_piece_touched_that_could_be_captured(edition: str, article: str) -> None:
    table = Table("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 2", edition)
    table.do([Lift(chess.D5), Place(chess.D5, P("p"))], interval=0.5)
    facts = table.play("Nf3")
    [alert] = alerts(facts, "touch_move")
    assert alert.article == article
    assert alert.details["square"] == "d5"
    assert alert.details["obligation"] == "capture"


def test_own_and_opponent_touched_must_capture_with_the_own_piece() -> None:
    table = Table("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 2")
    table.do([Lift(chess.E4), Place(chess.E4, P("P"))], interval=0.5)
    table.do([Lift(chess.D5), Place(chess.D5, P("p"))], interval=0.5)
    facts = table.play("e5")
    [alert] = alerts(facts, "touch_move")
    assert alert.article == "4.3.3"


CASTLE = "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 0 8"


@pytest.mark.parametrize(("edition", "article"), [("fide-1997", "4.4(a)"), ("fide-2018", "4.4.2")])
def test_rook_before_king_then_castling(edition: str, article: str) -> None:
    table = Table(CASTLE, edition)
    facts = table.do(
        [Lift(chess.H1), Place(chess.F1, P("R")), Lift(chess.E1), Place(chess.G1, P("K"))],
        interval=0.1,  # quicker than the dwell: the rook move is never recorded on its own
    )
    facts += table.press(chess.WHITE)
    assert [(m.san, m.supersedes) for m in moves(facts)] == [("O-O", False)]
    [alert] = alerts(facts, "castling_rook_first")
    assert alert.article == article
    assert alerts(facts, "touch_move") == []


def test_rook_released_before_king_then_castling_supersedes() -> None:
    table = Table(CASTLE)
    first = table.do([Lift(chess.H1), Place(chess.F1, P("R"))]) + table.wait(1.0)
    assert [m.san for m in moves(first)] == ["Rf1"]
    facts = table.do([Lift(chess.E1), Place(chess.G1, P("K"))])
    assert [(m.san, m.supersedes, m.ply) for m in moves(facts)] == [("O-O", True, 15)]
    [alert] = alerts(facts, "castling_rook_first")
    assert alert.details["first_move"] == "h1f1"


@BOTH
def test_released_piece_moved_on(edition: str) -> None:
    table = Table("4k3/8/8/8/8/8/8/Q3K3 w - - 0 1", edition)
    first = table.do([Lift(chess.A1), Place(chess.C3, P("Q"))]) + table.wait(1.0)
    assert [m.san for m in moves(first)] == ["Qc3"]
    facts = table.do([Lift(chess.C3), Place(chess.A5, P("Q"))]) + table.wait(1.0)
    assert [(m.san, m.supersedes) for m in moves(facts)] == [("Qa5", True)]
    [alert] = alerts(facts, "released_piece_moved")
    assert alert.article == "4.7"
    assert alert.details["released_on"] == "c3"
    assert table.arbiter.board.move_stack == [chess.Move.from_uci("a1a5")]


# -- illegal moves, displaced pieces, the clock -------------------------------------------


@pytest.mark.parametrize(
    ("edition", "article", "text"),
    [
        ("fide-1997", "7.4", "reinstated"),
        ("fide-1997-rapid", "10.3", "2 minutes extra"),
        ("fide-1997-blitz", "C.3", "claim a win"),
        ("fide-2018", "7.5.1", "2 minutes extra"),
        ("fide-2018-blitz", "7.5.1, A.4.2", "1 minute extra"),
    ],
)
def test_illegal_move_completed_by_the_clock(edition: str, article: str, text: str) -> None:
    table = Table(rules_label=edition)
    table.do([Lift(chess.E2), Place(chess.E5, P("P"))])
    assert moves(table.facts) == []
    facts = table.press(chess.WHITE)
    [alert] = alerts(facts, "illegal_move")
    assert alert.article == article
    assert alert.details["count"] == 1
    assert text in str(alert.details["penalty"])
    assert alert.color == chess.WHITE
    # The engine waits for the position before the irregularity, then play goes on.
    table.do([Lift(chess.E5), Place(chess.E2, P("P"))])
    assert table.arbiter.snapshot().illegal_moves == (1, 0)
    facts = table.play("e4")
    assert [m.san for m in moves(facts)] == ["e4"]
    assert alerts(facts) == []


def test_illegal_then_legal_continuation_resumes() -> None:
    table = Table()
    table.do([Lift(chess.G1), Place(chess.G4, P("N"))])
    table.press(chess.WHITE)
    facts = table.do([Lift(chess.G4), Place(chess.F3, P("N"))]) + table.wait(1.0)
    assert [m.san for m in moves(facts)] == ["Nf3"]


@pytest.mark.parametrize(("edition", "second_loses"), [("fide-2018", True), ("fide-1997", False)])
def test_second_illegal_move(edition: str, second_loses: bool) -> None:
    table = Table(rules_label=edition)
    for _ in range(2):
        table.do([Lift(chess.E2), Place(chess.E5, P("P"))])
        table.press(chess.WHITE)
        table.do([Lift(chess.E5), Place(chess.E2, P("P"))])
        table.press(chess.BLACK)  # the opponent restarts the clock of the offender
    assert table.arbiter.illegal_counts[chess.WHITE] == 2
    ended = results(table.facts)
    assert bool(ended) is second_loses
    if second_loses:
        assert ended[0].result == "0-1"


def test_illegal_move_on_a_board_without_clock_left_still() -> None:
    table = Table(clock=False)
    table.do([Lift(chess.E2), Place(chess.E5, P("P"))])
    assert alerts(table.wait(5.0)) == []
    [alert] = alerts(table.wait(6.0), "illegal_move")
    assert "left still" in alert.message


@pytest.mark.parametrize(("edition", "article"), [("fide-1997", "7.3"), ("fide-2018", "7.4.1")])
def test_displaced_pieces(edition: str, article: str) -> None:
    table = Table(rules_label=edition)
    # Knocked over: a knight and a pawn swap squares... the player presses before fixing it.
    table.do([Lift(chess.B1), Lift(chess.B2), Place(chess.B2, P("N")), Place(chess.B1, P("P"))])
    facts = table.press(chess.WHITE)
    [alert] = alerts(facts, "displaced_pieces")
    assert alert.article == article
    assert alert.details["squares"] == ["b1", "b2"]
    table.do([Lift(chess.B1), Lift(chess.B2), Place(chess.B1, P("N")), Place(chess.B2, P("P"))])
    assert [m.san for m in moves(table.play("e4"))] == ["e4"]


def test_nothing_explains_the_board_gives_the_squares() -> None:
    table = Table()
    table.do([Place(chess.E4, P("q")), Place(chess.D4, P("q"))])
    [alert] = alerts(table.press(chess.WHITE), "board_mismatch")
    assert alert.details["squares"] == ["d4", "e4"]


@pytest.mark.parametrize(
    ("edition", "kind", "article"),
    [("fide-1997", "press_without_move", "6.7(a)"), ("fide-2018", "illegal_move", "7.5.3")],
)
def test_clock_pressed_without_a_move(edition: str, kind: str, article: str) -> None:
    table = Table(rules_label=edition)
    [alert] = alerts(table.press(chess.WHITE))
    assert (alert.kind, alert.article) == (kind, article)


@pytest.mark.parametrize(("edition", "article"), [("fide-1997", "6.7(a)"), ("fide-2018", "6.2.1")])
def test_move_made_but_clock_not_pressed_before_the_opponent_moves(
    edition: str, article: str
) -> None:
    table = Table(rules_label=edition)
    table.play("e4", press=False)
    facts = table.play("e5")
    [alert] = alerts(facts, "clock_not_pressed")
    assert alert.article == article
    assert alert.color == chess.WHITE
    assert alert.ply == 1


def test_clock_press_reports_who_and_which_ply() -> None:
    table = Table()
    facts = table.play("e4")
    [press] = [f for f in facts if isinstance(f, ClockPressed)]
    assert press.by == chess.WHITE
    assert press.completes_ply == 1


@BOTH
def test_flag_fall_loses(edition: str) -> None:
    table = Table(rules_label=edition)
    table.play("e4")
    [ended] = results(table.flag(chess.BLACK))
    assert (ended.result, ended.reason) == ("1-0", "flag fall")


@BOTH
def test_flag_fall_against_a_lone_king_is_a_draw(edition: str) -> None:
    table = Table("8/8/4k3/8/8/8/3QK3/8 w - - 0 1", edition)
    [ended] = results(table.flag(chess.WHITE))
    assert ended.result == "1/2-1/2"


@pytest.mark.parametrize(
    ("edition", "result"), [("fide-1997-blitz", "1/2-1/2"), ("fide-2018-blitz", "0-1")]
)
def test_blitz_mating_potential_two_knights(edition: str, result: str) -> None:
    table = Table("8/8/4k3/8/8/3nn3/4K3/8 w - - 0 1", edition)
    [ended] = results(table.flag(chess.WHITE))
    assert ended.result == result


# -- the end of the game ---------------------------------------------------------------------


@BOTH
def test_checkmate_and_stalemate(edition: str) -> None:
    table = Table("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", edition)
    [ended] = results(table.play("Ra8#", press=False))
    assert (ended.result, ended.reason) == ("1-0", "checkmate")
    table = Table("7k/8/6Q1/8/8/8/8/6K1 w - - 0 1", edition)
    [ended] = results(table.play("Qf7", press=False))
    assert (ended.result, ended.reason) == ("1/2-1/2", "stalemate")


@pytest.mark.parametrize(("edition", "article"), [("fide-1997", "9.6"), ("fide-2018", "5.2.2")])
def test_dead_position(edition: str, article: str) -> None:
    table = Table("8/8/4k3/8/8/3n4/4K3/8 w - - 0 1", edition)
    [ended] = results(table.play("Kxd3", press=False))
    assert (ended.reason, ended.article) == ("dead position", article)


SHUFFLE = ["Nf3", "Nf6", "Ng1", "Ng8"] * 4


@pytest.mark.parametrize(("edition", "ends"), [("fide-2018", True), ("fide-1997", False)])
def test_fivefold_repetition(edition: str, ends: bool) -> None:
    table = Table(rules_label=edition)
    for san in SHUFFLE:
        table.play(san)
    ended = results(table.facts)
    assert bool(ended) is ends
    if ends:
        assert (ended[0].reason, ended[0].article) == ("fivefold repetition", "9.6.1")


@pytest.mark.parametrize(("edition", "ends"), [("fide-2018", True), ("fide-1997", False)])
def test_seventy_five_moves(edition: str, ends: bool) -> None:
    table = Table("8/8/4k3/8/8/3QK3/8/7r w - - 149 120", edition)
    ended = results(table.play("Qd2"))
    assert bool(ended) is ends


def test_threefold_and_fifty_moves_are_claimable_not_automatic() -> None:
    table = Table()
    for san in SHUFFLE[:8]:
        table.play(san)
    assert results(table.facts) == []
    assert "threefold" in table.arbiter.snapshot().claimable
    table = Table("8/8/4k3/8/8/3QK3/8/7r w - - 99 80")
    table.play("Qd2")
    assert "fifty_moves" in table.arbiter.snapshot().claimable


@pytest.mark.parametrize(
    ("edition", "penalty"),
    [("fide-1997", "three minutes are added"), ("fide-2018", "two minutes are added")],
)
def test_incorrect_draw_claim_penalty(edition: str, penalty: str) -> None:
    table = Table(rules_label=edition)
    table.play("e4")
    ended, alert = table.arbiter.claim_draw(None, table.now)
    assert ended is None
    assert alert is not None
    assert penalty in alert.message
    for san in ["e5", "Nf3", "Nc6", "Ng1", "Nb8", "Nf3", "Nc6", "Ng1", "Nb8"]:
        table.play(san)
    ended, alert = table.arbiter.claim_draw(None, table.now)
    assert alert is None
    assert ended is not None
    assert ended.result == "1/2-1/2"


@pytest.mark.parametrize(
    ("white", "black", "result"),
    [(chess.E4, chess.D5, "1-0"), (chess.D4, chess.E5, "0-1"), (chess.E4, chess.E5, "1/2-1/2")],
)
def test_kings_in_the_centre_are_a_result_not_moves(
    white: chess.Square, black: chess.Square, result: str
) -> None:
    table = Table()
    table.play("e4")
    table.play("e5")
    facts = table.do([Lift(chess.E1), Place(white, P("K")), Lift(chess.E8), Place(black, P("k"))])
    assert results(facts) == []  # not yet: at rest for the dwell first
    facts += table.wait(0.5)
    assert moves(facts) == []
    [ended] = results(facts)
    assert ended.result == result


def test_after_checkmate_kings_in_the_centre_are_ignored() -> None:
    table = Table("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
    table.play("Ra8#", press=False)
    facts = table.do(
        [Lift(chess.G1), Place(chess.E4, P("K")), Lift(chess.G8), Place(chess.D5, P("k"))]
    )
    assert moves(facts) == []
    assert results(facts) == []


# -- moves made while nobody listened, orientation -----------------------------------------


def snapshot_after(*sans: str) -> BoardSnapshot:
    board = chess.Board()
    for san in sans:
        board.push_san(san)
    return BoardSnapshot(squares=tuple(board.piece_at(sq) for sq in chess.SQUARES), at=0.0)


@pytest.mark.parametrize("plies", [("e4",), ("e4", "c5")])
def test_moves_made_while_disconnected_are_reconstructed(plies: tuple[str, ...]) -> None:
    arbiter = Arbiter()
    facts = arbiter.feed(snapshot_after(*plies), 1.0)
    assert [m.san for m in moves(facts)] == list(plies)
    assert all(m.completed_by is CompletedBy.RECONSTRUCTED for m in moves(facts))


def test_an_unexplained_board_on_reconnect_is_a_mismatch_once_it_stays_so() -> None:
    arbiter = Arbiter()
    facts = arbiter.feed(snapshot_after("e4", "e5", "Nf3"), 1.0)
    assert facts == []  # perhaps a piece in the hand: judged when the board stays so
    deadline = arbiter.next_deadline()
    assert deadline == 1.0 + MISMATCH_AFTER
    assert arbiter.handle_timer(deadline - 0.01) == []
    facts = arbiter.handle_timer(deadline)
    assert moves(facts) == []
    [alert] = alerts(facts, "board_mismatch")
    assert alert.details["squares"] == ["g1", "e2", "f3", "e4", "e5", "e7"]
    assert arbiter.next_deadline() is None


def test_three_plies_ahead_is_a_mismatch_not_a_guess() -> None:
    arbiter = Arbiter()
    assert arbiter.feed(snapshot_after("Nf3", "Nf6", "Ng1"), 1.0) == []
    facts = arbiter.handle_timer(1.0 + MISMATCH_AFTER)
    assert moves(facts) == []
    assert alerts(facts, "board_mismatch")


def reading_with_piece_in_hand(square: chess.Square, *sans: str) -> BoardSnapshot:
    squares = list(snapshot_after(*sans).squares)
    squares[square] = None
    return BoardSnapshot(squares=tuple(squares), at=0.0)


def test_a_board_read_with_a_piece_in_the_hand_is_a_move_when_it_is_put_down() -> None:
    """A restart reads the board while the player holds the pawn he is moving to e4."""
    table = HandFed(Arbiter())
    facts = table.arbiter.feed(reading_with_piece_in_hand(chess.E4, "e4"), table.now)
    assert facts == []
    facts = table.do([Place(chess.E4, P("P"))])
    assert [(m.san, m.completed_by) for m in moves(facts)] == [("e4", CompletedBy.RELEASE)]
    assert alerts(table.wait(2 * MISMATCH_AFTER)) == []


def test_a_reading_mid_way_through_the_second_ply_gives_both() -> None:
    """One ply made while nobody listened, the next one's piece in the hand when read."""
    table = HandFed(Arbiter())
    read = table.arbiter.feed(reading_with_piece_in_hand(chess.E5, "e4", "e5"), table.now)
    assert [(m.san, m.completed_by) for m in moves(read)] == [("e4", CompletedBy.RECONSTRUCTED)]
    assert table.arbiter.state is not State.MISMATCH
    facts = table.do([Place(chess.E5, P("p"))])
    assert [(m.san, m.completed_by) for m in moves(facts)] == [("e5", CompletedBy.RELEASE)]
    assert alerts(read + facts + table.wait(2 * MISMATCH_AFTER)) == []


def test_a_press_on_an_unexplained_board_is_a_mismatch_not_an_illegal_move() -> None:
    table = Table()
    assert table.arbiter.feed(snapshot_after("Nf3", "Nf6", "Ng1"), table.now) == []
    facts = table.press(chess.WHITE)
    assert [a.kind for a in alerts(facts)] == ["board_mismatch"]
    assert table.arbiter.illegal_counts[chess.WHITE] == 0


def test_a_correction_does_not_judge_a_clockless_board_at_once() -> None:
    """A takeback leaves the board a move ahead for a moment: it is not an old, still board."""
    table = Table(clock=False)
    table.play("e4", press=False)
    table.play("e5", press=False)
    board = table.arbiter.board.copy()
    board.pop()
    table.arbiter.set_game(board, keep_counts=True)
    deadline = table.arbiter.next_deadline()
    assert deadline is None or deadline > table.now


def test_a_move_that_may_slide_on_is_released_when_the_opponent_takes_a_piece_victim_first() -> (
    None
):
    """A slow board (Certabo's dwell): d7-d6 could still go on to d5 when White, quick, lifts
    the queen he takes first, then his rook. The pawn's move was released (4.7): both moves."""
    from drivers import CERTABO_DWELL, CERTABO_FLICKER

    fen = "1rb2k1r/3pbp1p/2p4p/ppn5/2P1P1P1/P1N2N1P/1PK1P3/1R1Q2qR b - - 0 17"
    table = HandFed(
        Arbiter(EngineConfig(dwell=CERTABO_DWELL, flicker=CERTABO_FLICKER), chess.Board(fen))
    )
    facts = table.do([Lift(chess.D7), Place(chess.D6, P("p"))], interval=1.0)
    facts += table.do([Lift(chess.G1), Lift(chess.H1), Place(chess.G1, P("R"))], interval=0.3)
    facts += table.wait(3.0)
    assert [m.san for m in moves(facts)] == ["d6", "Rxg1"]
    assert alerts(facts) == []
