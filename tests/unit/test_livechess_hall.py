"""The LiveChess API's hall: the boards folded from what real tables publish (an engine fed by
hand, tests/published.py), and the mapping of docs/livechess.md."""

from __future__ import annotations

import chess
import pytest

from bridge.livechess.hall import Hall, LiveTable
from bridge.wire import payloads
from drivers.choreography import Lift, Place
from tests.published import Published

P = chess.Piece.from_symbol


def placement(board: chess.Board, *lifted: chess.Square) -> str:
    """``board``'s placement with ``lifted`` squares emptied."""
    base = chess.BaseBoard(board.board_fen())
    for square in lifted:
        base.remove_piece_at(square)
    return base.board_fen()


def table_of(hall: Hall, table: str = "t1") -> LiveTable:
    found = hall.tables.get(table)
    assert found is not None
    return found


def matching(live: LiveTable) -> bool:
    """``live.matches``, read anew (not narrowed by an earlier assert)."""
    return live.matches


def state_of(live: LiveTable) -> str | None:
    return live.state


def received(hall: Hall, when: int = 1_000) -> Published:
    return Published(lambda table, envelope: hall.apply(table, envelope, when))


def test_the_board_follows_every_lift_and_place_and_matches_after_the_move() -> None:
    hall = Hall()
    table = received(hall)
    live = table_of(hall)
    assert live.placement() == chess.Board().board_fen()
    assert matching(live)
    table.do([Lift(chess.E2)])
    assert live.placement() == placement(chess.Board(), chess.E2)
    assert not matching(live)
    table.do([Place(chess.E4, P("P"))])
    table.wait(1.0)
    after = chess.Board()
    after.push_san("e4")
    assert live.placement() == after.board_fen()
    assert matching(live)
    assert live.sans == ["e4"]


def test_the_opponents_hand_at_work_before_the_move_is_recorded_shows() -> None:
    hall = Hall()
    table = received(hall, when=5)
    live = table_of(hall)
    table.play("e4")
    table.play("e5")
    # White's bishop could still go on (to b5, a6): not recorded until it rests, and Black's hand
    # is already on his knight.
    table.do([Lift(chess.F1), Place(chess.C4, P("B")), Lift(chess.B8)])
    table.wait(1.0)
    position = chess.Board()
    for san in ("e4", "e5", "Bc4"):
        position.push_san(san)
    assert live.sans == ["e4", "e5", "Bc4"]
    assert live.placement() == placement(position, chess.B8)
    assert not matching(live)
    table.do([Place(chess.C6, P("n"))])
    table.wait(1.0)
    position.push_san("Nc6")
    assert live.sans[-1] == "Nc6"
    assert live.placement() == position.board_fen()
    assert matching(live)


def test_a_table_without_touches_shows_its_games_position() -> None:
    hall = Hall()
    table = Published(lambda t, e: hall.apply(t, e, 0), touches=False)
    live = table_of(hall)
    table.do([Lift(chess.E2)])
    assert live.placement() == chess.Board().board_fen()
    table.do([Place(chess.E4, P("P"))])
    table.wait(1.0)
    assert live.sans == ["e4"]
    assert live.placement() == table.arbiter.board.board_fen()
    table.new_game()
    assert live.placement() == chess.Board().board_fen(), "no touch told where the pieces are"
    assert matching(live)


def test_a_new_game_leaves_the_pieces_where_they_stood_until_they_are_put_back() -> None:
    hall = Hall()
    table = received(hall)
    live = table_of(hall)
    table.play("e4")
    before = table.arbiter.board.board_fen()
    table.new_game()
    assert live.sans == []
    assert live.placement() == before
    assert not matching(live)
    table.do([Lift(chess.E4), Place(chess.E2, P("P"))])
    assert live.placement() == chess.Board().board_fen()
    assert matching(live)


def test_a_snapshot_that_brings_moves_missed_is_taken_as_those_moves() -> None:
    hall = Hall()
    table = Published(lambda t, e: hall.apply(t, e, 0))
    live = table_of(hall)
    table.on = lambda t, e: None  # the connection is lost: the move's events never come
    table.play("d4")
    table.on = lambda t, e: hall.apply(t, e, 0)
    table.snapshot()  # the retained game, on reconnecting
    assert live.sans == ["d4"]
    assert live.placement() == table.arbiter.board.board_fen()
    assert matching(live)


def test_a_superseded_move_replaces_the_last_san() -> None:
    castle = "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 0 8"
    hall = Hall()
    table = Published(lambda t, e: hall.apply(t, e, 0), board=chess.Board(castle))
    live = table_of(hall)
    table.do([Lift(chess.H1), Place(chess.F1, P("R"))])
    table.wait(1.0)
    assert live.sans == ["Rf1"]
    table.do([Lift(chess.E1), Place(chess.G1, P("K"))])
    table.wait(1.0)
    assert live.sans == ["O-O"]
    assert matching(live)
    assert live.start_fen == castle


def test_flipped_is_the_board_turned_round() -> None:
    hall = Hall()
    received(hall)
    live = table_of(hall)
    assert live.placement(flipped=True) == "RNBKQBNR/PPPPPPPP/8/8/8/8/pppppppp/rnbkqbnr"


def test_serial_numbers_are_the_boards_else_the_table_ids_and_unique() -> None:
    hall = Hall()
    Published(lambda t, e: hall.apply(t, e, 0), table="t10", serial="777")
    Published(lambda t, e: hall.apply(t, e, 0), table="t2", serial=None)
    Published(lambda t, e: hall.apply(t, e, 0), table="t3", serial="777")
    Published(lambda t, e: hall.apply(t, e, 0), table="t1", serial="777")
    assert [t.id for t in hall.ordered()] == ["t1", "t2", "t3", "t10"]
    assert hall.serials() == {"t1": "777", "t2": "t2", "t3": "t3", "t10": "t10"}
    assert [entry["serialnr"] for entry in hall.eboards()] == ["777", "t2", "t3", "t10"]
    assert hall.find("777") is hall.tables["t1"]
    assert hall.find("t10") is hall.tables["t10"], "a table id is taken too"
    assert hall.find("888") is None


def test_state_from_the_link_and_the_daemon() -> None:
    hall = Hall()
    live = hall.add("t1")
    assert state_of(live) is None, "no board yet"
    table = received(hall)
    assert state_of(live) == "ACTIVE"
    for state in ("connecting", "disconnected", "error"):
        table.set_board(state)
        assert state_of(live) == "NOTRESPONDING"
    table.set_board("connected")
    assert state_of(live) == "ACTIVE"
    table.status("lost")
    assert state_of(live) == "NOTRESPONDING"
    table.status("online")
    assert state_of(live) == "ACTIVE"


def test_an_eboards_entry() -> None:
    hall = Hall()
    table = received(hall)
    table.set_board("connected", battery=84)
    table.publish(
        "clock",
        payloads.ClockData(
            kind="press", by="white", white=297, black=300, running="black", completes_ply=1
        ),
    )
    [entry] = hall.eboards()
    assert entry == {
        "serialnr": "01234",
        "source": "dgt:/dev/ttyACM0",
        "state": "ACTIVE",
        "battery": "84%",
        "comment": "table t1",
        "board": chess.Board().board_fen(),
        "flipped": False,
        "clock": {"white": 297, "black": 300, "run": False, "time": 1_000},
    }
    assert hall.eboards({"t1"})[0]["flipped"] is True


@pytest.mark.parametrize(("running", "run"), [("white", True), ("black", False), (None, None)])
def test_the_clocks_run_is_true_for_white_false_for_black_null_when_stopped(
    running: str | None, run: bool | None
) -> None:
    hall = Hall()
    table = received(hall)
    data = payloads.ClockData(
        kind="press" if running else "stopped",
        by=None,
        white=60,
        black=59,
        running=running,  # type: ignore[arg-type]
        completes_ply=None,
    )
    table.publish("clock", data)
    clock = table_of(hall).clock
    assert clock is not None
    assert clock["run"] is run


def test_a_duplicate_payload_changes_nothing() -> None:
    hall = Hall()
    envelopes: list[payloads.Envelope] = []
    Published(lambda t, e: envelopes.append(e))
    assert all(hall.apply("t1", e, 0) for e in envelopes)
    assert not any(hall.apply("t1", e, 0) for e in envelopes)
