"""Sensor events in one scan of the board: simultaneous touches, and knocks (``bridge.bursts``)."""

from __future__ import annotations

from collections.abc import Sequence

import chess
import pytest

from bridge.arbiter.bursts import Bursts
from bridge.arbiter.engine import Arbiter, EngineConfig
from bridge.arbiter.facts import AlertRaised, Fact
from drivers import CERTABO_SCAN
from drivers.events import SquareEmptied

P = chess.Piece.from_symbol


def knocks(
    events: Sequence[tuple[float, chess.Square, str | None, str | None]],
    board: chess.Board | None = None,
) -> list[float]:
    """When each knock was found, feeding ``(at, square, old, new)`` events.

    ``board`` is the game; by default, the pieces the events find on their squares.
    """
    if board is None:
        board = chess.Board(None)
        for _, square, old, _ in reversed(events):
            board.set_piece_at(square, None if old is None else P(old))
    bursts = Bursts(0.04)
    found = []
    for at, square, old, new in events:
        before = None if old is None else P(old)
        after = None if new is None else P(new)
        if bursts.feed(square, before, after, at, board):
            found.append(at)
    return found


def test_five_pieces_off_within_60_ms_are_one_knock() -> None:
    off = [(chess.A2, "P"), (chess.B1, "N"), (chess.C2, "P"), (chess.D2, "P"), (chess.E2, "P")]
    events = [(i * 0.015, sq, piece, None) for i, (sq, piece) in enumerate(off)]
    assert knocks(events) == [0.015]  # found once, at the second piece: the burst goes on


def test_two_pieces_of_one_colour_in_one_scan_are_a_knock() -> None:
    assert knocks([(0.0, chess.B1, "N", None), (0.01, chess.G1, "N", None)]) == [0.01]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ((chess.H1, "R"), (chess.E1, "K")),  # castling: king and rook together
        ((chess.E5, "P"), (chess.F5, "p")),  # en passant: the pawn and its victim
        ((chess.D5, "p"), (chess.E4, "P")),  # a capture: the victim and the capturer
    ],
)
def test_two_pieces_one_move_lifts_together_are_no_knock(
    first: tuple[chess.Square, str], second: tuple[chess.Square, str]
) -> None:
    assert knocks([(0.0, first[0], first[1], None), (0.01, second[0], second[1], None)]) == []


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ((chess.B2, "P"), (chess.B7, "p")),  # pawns on one file: neither takes the other
        ((chess.G1, "N"), (chess.B8, "n")),  # knights far apart
        ((chess.E4, "P"), (chess.E5, "p")),  # pawns face to face: blocked, no capture
        ((chess.A1, "R"), (chess.H8, "r")),  # rooks on a diagonal
    ],
)
def test_two_pieces_of_both_colours_no_move_lifts_together_are_a_knock(
    first: tuple[chess.Square, str], second: tuple[chess.Square, str]
) -> None:
    board = chess.Board(None)
    board.set_piece_at(first[0], P(first[1]))
    board.set_piece_at(second[0], P(second[1]))
    events = [(0.0, first[0], first[1], None), (0.01, second[0], second[1], None)]
    assert knocks(events, board) == [0.01]


def test_a_rook_and_the_rook_it_attacks_lifted_together_may_be_a_capture() -> None:
    board = chess.Board(None)
    board.set_piece_at(chess.A1, P("R"))
    board.set_piece_at(chess.A8, P("r"))
    events = [(0.0, chess.A8, "r", None), (0.01, chess.A1, "R", None)]
    assert knocks(events, board) == []


def test_a_move_ending_as_the_opponent_lifts_a_piece_is_no_knock() -> None:
    # Nbd7, read in one scan with White's king lifted for his reply: one player's move ends as
    # the other's begins. A board reading every 41 ms can put all three in one burst.
    board = chess.Board(None)
    board.set_piece_at(chess.B8, P("n"))
    board.set_piece_at(chess.E1, P("K"))
    events = [
        (0.0, chess.B8, "n", None),
        (0.0, chess.D7, None, "n"),
        (0.03, chess.E1, "K", None),
    ]
    assert knocks(events, board) == []


def test_quick_moves_one_after_another_are_no_knock() -> None:
    # Moves made faster than any person, 30 ms a step: lifts of three moves chain up, but no
    # three of them fall within one scan of each other.
    steps = [
        (chess.D3, "B", None),
        (chess.C4, None, "B"),
        (chess.G8, "n", None),
        (chess.F6, None, "n"),
        (chess.F3, "Q", None),
        (chess.B3, None, "Q"),
    ]
    assert knocks([(i * 0.03, sq, old, new) for i, (sq, old, new) in enumerate(steps)]) == []


def test_time_running_backwards_is_a_new_burst() -> None:
    events = [(10.0, chess.A2, "P", None), (9.99, chess.B2, "P", None)]
    assert knocks(events) == []


def test_a_slide_faster_than_a_scan_is_no_knock() -> None:
    # A bishop slid c8-d7-e6-f5, each square reported 20 ms apart: one piece, not a knock.
    path = [chess.C8, chess.D7, chess.E6, chess.F5]
    events: list[tuple[float, chess.Square, str | None, str | None]] = [(0.0, path[0], "b", None)]
    for square in path[1:]:
        events += [(0.0, square, None, "b"), (0.0, square, "b", None)]
    assert knocks([(i * 0.02, sq, old, new) for i, (_, sq, old, new) in enumerate(events)]) == []


def test_a_capture_and_the_next_lift_in_one_notification_are_no_knock() -> None:
    # A Bluetooth board sends a scan's changes together: dxe5 (the victim's square emptied and
    # filled by the capturer), and already Black's bishop lifted for the next move.
    events: list[tuple[float, chess.Square, str | None, str | None]] = [
        (0.0, chess.D4, "P", None),
        (0.2, chess.E5, "p", None),
        (0.2, chess.E5, None, "P"),
        (0.2, chess.G4, "b", None),
    ]
    assert knocks(events) == []


def test_a_knock_on_a_board_read_once_a_second_is_said_once_and_its_timer_ends() -> None:
    # A Certabo reads the board whole about once a second: three White pieces gone in one
    # reading is no two hands' work (a knock); a lone lift after it ends the burst, not the
    # knock's alert, which is raised once - and its deadline is gone, not left in the past.
    arbiter = Arbiter(EngineConfig(dwell=1.6, flicker=1.2, scan=CERTABO_SCAN))
    facts: list[Fact] = []
    for at, square in [(0.0, chess.A1), (0.01, chess.B1), (0.02, chess.C1), (0.5, chess.H7)]:
        facts += arbiter.feed(SquareEmptied(square=square, at=at), at)
    for _ in range(50):
        deadline = arbiter.next_deadline()
        if deadline is None or deadline > 10.0:
            break
        facts += arbiter.handle_timer(max(deadline, 2.0))
    else:
        pytest.fail(f"the timer never ends: next deadline {arbiter.next_deadline()}")
    alerts = [f for f in facts if isinstance(f, AlertRaised)]
    assert [a.kind for a in alerts] == ["displaced_pieces"]
    assert {"a1", "b1", "c1"} <= set(alerts[0].details["squares"] or [])  # type: ignore[arg-type]
