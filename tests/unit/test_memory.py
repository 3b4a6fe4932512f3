"""Moves made while nobody listened, recovered from the board's own memory."""

from __future__ import annotations

import chess

from bridge.arbiter.engine import Arbiter
from bridge.arbiter.facts import AlertRaised, CompletedBy, MovePlayed
from drivers.choreography import Lift, Step, steps
from drivers.dgt.events import DgtEvent, StoredChange, StoredMarker, StoredTag
from drivers.dgt.memory import changes_since
from drivers.events import BoardSnapshot


def listing(board: chess.Board) -> list[DgtEvent]:
    """What a board stores at power-up: the marker, then every piece."""
    out: list[DgtEvent] = [StoredMarker(tag=StoredTag.POWER_UP, at=0.0)]
    out += [StoredChange(square=sq, piece=p, at=0.0) for sq, p in board.piece_map().items()]
    return out


def stored(seq: list[Step]) -> list[DgtEvent]:
    return [
        StoredChange(square=s.square, piece=None if isinstance(s, Lift) else s.piece, at=0.0)
        for s in seq
    ]


def played(
    board: chess.Board, *sans: str, touch_first: chess.Square | None = None
) -> list[DgtEvent]:
    """The stored changes of ``sans`` played by hand on ``board`` (which is advanced)."""
    out: list[DgtEvent] = []
    for san in sans:
        move = board.parse_san(san)
        if touch_first is not None and not out:
            piece = board.piece_at(touch_first)
            out += [
                StoredChange(square=touch_first, piece=None, at=0.0),
                StoredChange(square=touch_first, piece=piece, at=0.0),
            ]
        out += stored(steps(board, move))
        board.push(move)
    return out


def snapshot(board: chess.Board) -> BoardSnapshot:
    return BoardSnapshot(squares=tuple(board.piece_at(sq) for sq in chess.SQUARES), at=0.0)


def test_changes_after_the_board_last_looked_as_seen() -> None:
    board = chess.Board()
    log = listing(board) + played(board, "e4", "e5")
    seen = [board.piece_at(sq) for sq in chess.SQUARES]
    log += played(board, "Nf3", "Nc6")
    changes = changes_since(log, seen)
    assert changes == [
        (chess.G1, None),
        (chess.F3, chess.Piece.from_symbol("N")),
        (chess.B8, None),
        (chess.C6, chess.Piece.from_symbol("n")),
    ]


def test_a_log_without_power_up_or_never_showing_the_board_is_unusable() -> None:
    board = chess.Board()
    seen = [board.piece_at(sq) for sq in chess.SQUARES]
    assert changes_since(played(chess.Board(), "e4"), seen) is None
    other = chess.Board()
    other.push_san("d4")
    log = listing(other) + played(other, "d5")
    assert changes_since(log, seen) is None


def test_recover_replays_four_plies_as_reconstructed_moves() -> None:
    board = chess.Board()
    arbiter = Arbiter()
    log = listing(board) + played(board, "e4", "e5", "Nf3", "Nc6")
    facts = arbiter.recover(changes_since(log, arbiter.last_seen()), snapshot(board), 10.0)
    moves = [f for f in facts if isinstance(f, MovePlayed)]
    assert [m.san for m in moves] == ["e4", "e5", "Nf3", "Nc6"]
    assert {m.completed_by for m in moves} == {CompletedBy.RECONSTRUCTED}
    assert arbiter.board.move_stack == board.move_stack


def test_recovered_moves_are_judged_by_article_4_too() -> None:
    board = chess.Board()
    arbiter = Arbiter()
    knight, pawn = chess.Piece.from_symbol("N"), chess.Piece.from_symbol("P")
    # The knight is lifted, the e-pawn too, the knight goes back and the pawn to e4.
    log = [
        *listing(board),
        StoredChange(square=chess.G1, piece=None, at=0.0),
        StoredChange(square=chess.E2, piece=None, at=0.0),
        StoredChange(square=chess.G1, piece=knight, at=0.0),
        StoredChange(square=chess.E4, piece=pawn, at=0.0),
    ]
    board.push_san("e4")
    facts = arbiter.recover(changes_since(log, arbiter.last_seen()), snapshot(board), 10.0)
    assert [f.san for f in facts if isinstance(f, MovePlayed)] == ["e4"]
    assert [f.kind for f in facts if isinstance(f, AlertRaised)] == ["touch_move"]


def test_a_put_back_that_restores_the_last_seen_board_is_where_replay_starts() -> None:
    # The log cannot say when the host lost track: the last time the board looked as seen is
    # taken, so a lift and put-back just before the move is not replayed (a known limit).
    board = chess.Board()
    log = listing(board) + played(board, "e4", touch_first=chess.G1)
    changes = changes_since(log, [chess.Board().piece_at(sq) for sq in chess.SQUARES])
    assert changes == [(chess.E2, None), (chess.E4, chess.Piece.from_symbol("P"))]


def test_without_a_usable_log_the_full_board_still_gives_two_plies() -> None:
    board = chess.Board()
    arbiter = Arbiter()
    played(board, "d4", "d5")
    facts = arbiter.recover([], snapshot(board), 10.0)
    assert [f.san for f in facts if isinstance(f, MovePlayed)] == ["d4", "d5"]
