"""The table daemon's feeding of its engine, in process (no broker: payloads stay in the outbox)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import chess
import msgspec

from bridge.table.daemon import GAME_DELAY, GAME_INTERVAL, DaemonOptions, TableDaemon
from bridge.wire import payloads
from bridge.wire.config import broker_settings
from drivers import BoardUri
from drivers.events import BoardEvent, ClockReading, ClockSide, SquareEmptied, SquareOccupied

P = chess.Piece.from_symbol


def table(state_dir: Path) -> TableDaemon:
    options = DaemonOptions(
        board=BoardUri("dgt", "/dev/nonexistent-board"),
        table="t1",
        broker=broker_settings("mqtt://127.0.0.1:9"),
        rules="fide-2018",
        state_dir=state_dir,
    )
    return TableDaemon(options)


async def closed(daemon: TableDaemon) -> None:
    """Let the retained game due after the events go out, then close the outbox."""
    while daemon._game_due:  # noqa: ASYNC110  # the daemon offers no event for it
        await asyncio.sleep(GAME_DELAY)
    daemon.outbox.close()


def stored(daemon: TableDaemon, suffix: str) -> list[dict[str, Any]]:
    topic = payloads.topic("t1", suffix)
    rows = [row for row in daemon.outbox.pending(1000) if row.topic == topic]
    return [msgspec.json.decode(row.payload)["data"] for row in rows]


async def test_held_events_are_judged_at_the_time_they_arrived(tmp_path: Path) -> None:
    """Events released together after a recovery were made seconds apart: the knight lifted
    and put back a second later is an adjustment (touch-move applies), not sensor flicker."""
    daemon = table(tmp_path)
    try:
        held: list[BoardEvent] = [
            SquareEmptied(square=chess.G1, at=10.0),
            SquareOccupied(square=chess.G1, piece=P("N"), at=11.0),
            SquareEmptied(square=chess.E2, at=12.0),
            SquareOccupied(square=chess.E4, piece=P("P"), at=12.4),
        ]
        for event in held:
            daemon.board_event(event)
        assert [m["san"] for m in stored(daemon, "event/move")] == ["e4"]
        assert [a["kind"] for a in stored(daemon, "event/alert")] == ["touch_move"]
        meanings = [t["meaning"] for t in stored(daemon, "event/touch")]
        assert "put back on its square" in meanings[1]
    finally:
        await closed(daemon)


async def test_the_engine_time_never_goes_back(tmp_path: Path) -> None:
    daemon = table(tmp_path)
    try:
        daemon.board_event(SquareEmptied(square=chess.G1, at=20.0))
        # An event stamped earlier (held from before a board reading) is judged no earlier.
        daemon.board_event(SquareOccupied(square=chess.G1, piece=P("N"), at=19.0))
        meanings = [t["meaning"] for t in stored(daemon, "event/touch")]
        assert "flicker" in meanings[1]  # 0 s in the hand, not -1 s
    finally:
        await closed(daemon)


def hand(daemon: TableDaemon, start: str, end: str, piece: str, at: float) -> float:
    daemon.board_event(SquareEmptied(square=chess.parse_square(start), at=at))
    daemon.board_event(SquareOccupied(square=chess.parse_square(end), piece=P(piece), at=at + 0.2))
    return at + 1.0


async def test_the_retained_game_goes_with_each_move(tmp_path: Path) -> None:
    """Each move's retained game is stored right after the move (its step's rows, a higher
    seq), on no timer, however quick the moves; the lists are kept move by move."""
    daemon = table(tmp_path)
    try:
        at = 10.0
        played: list[str] = []
        for start, end, piece in [("e2", "e4", "P"), ("e7", "e5", "p"), ("g1", "f3", "N")]:
            at = hand(daemon, start, end, piece, at)
            played.append(start + end)
            assert daemon._game_timer is None  # nothing waits: the game is stored already
            # (an unsent retained row is replaced by the next: the outbox holds the last game)
            rows = daemon.outbox.pending(1000)
            move = max(row.seq for row in rows if row.topic.endswith("/event/move"))
            [game] = [row for row in rows if row.topic.endswith("/game")]
            data = msgspec.json.decode(game.payload)["data"]
            assert data["moves"]["uci"] == played
            assert game.seq > move
            assert data["last_seq"] == move
        assert data["moves"]["san"] == ["e4", "e5", "Nf3"]
        # A takeback (the engine's game changed without a move): the lists are rebuilt.
        board = daemon.arbiter.board.copy()
        board.pop()
        daemon.arbiter.set_game(board, keep_counts=True)
        assert daemon.moves.of(daemon.arbiter).uci == ("e2e4", "e7e5")
    finally:
        await closed(daemon)


def clock(right: int, high: ClockSide, at: float) -> ClockReading:
    return ClockReading(
        left=300,
        right=right,
        running=True,
        lever_high=high,
        connected=True,
        left_flag=False,
        right_flag=False,
        battery_low=False,
        at=at,
    )


async def test_the_press_after_a_move_is_coalesced_the_move_never_waits(tmp_path: Path) -> None:
    """The move's retained game goes with it; the press that follows changes the game again,
    published no sooner than GAME_INTERVAL after the move's; a move never waits for it."""
    daemon = table(tmp_path)
    try:
        daemon.board_event(clock(300, ClockSide.RIGHT, 9.0))  # White's clock (right) runs
        await closed_game(daemon)
        hand(daemon, "e2", "e4", "P", 10.0)
        assert game_timer(daemon) is None  # the move's game is out, nothing waits
        assert stored(daemon, "game")[-1]["moves"]["san"] == ["e4"]
        sent = daemon._game_sent_at
        daemon.board_event(clock(299, ClockSide.LEFT, 11.0))  # White presses
        assert [c["by"] for c in stored(daemon, "event/clock")][-1:] == ["white"]
        timer = game_timer(daemon)
        assert timer is not None
        assert timer.when() >= sent + GAME_INTERVAL
        await closed_game(daemon)
        assert stored(daemon, "game")[-1]["clocks"]["white"] == 299
        assert daemon._game_timer is None
    finally:
        await closed(daemon)


def game_timer(daemon: TableDaemon) -> asyncio.TimerHandle | None:
    """The retained game's pending publication (a function: each call reads it anew)."""
    return daemon._game_timer


async def closed_game(daemon: TableDaemon) -> None:
    while daemon._game_due:  # noqa: ASYNC110  # the daemon offers no event for it
        await asyncio.sleep(GAME_DELAY)


def test_move_list_records_from_a_position_with_black_to_move() -> None:
    moves = payloads.MoveList(first_ply=2, uci=("e7e5", "g1f3"), san=("e5", "Nf3"))
    assert moves.records() == [
        payloads.MoveRecord(ply=2, uci="e7e5", san="e5", color="black"),
        payloads.MoveRecord(ply=3, uci="g1f3", san="Nf3", color="white"),
    ]
