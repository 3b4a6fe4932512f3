"""The table daemon's feeding of its engine, in process (no broker: payloads stay in the outbox)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import chess
import msgspec

from bridge.table.daemon import GAME_DELAY, DaemonOptions, TableDaemon
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


BOUND = 0.5
"""Seconds within which the retained game follows a move (docs/mqtt.md)."""


def games_published(daemon: TableDaemon) -> list[payloads.GameData]:
    """Every retained game the daemon publishes from now on (the outbox keeps only the last
    one unsent, as the broker would)."""
    published: list[payloads.GameData] = []
    set_game = daemon.publisher.set_game

    def counted(data: payloads.GameData) -> int:
        published.append(data)
        return set_game(data)

    daemon.publisher.set_game = counted  # type: ignore[method-assign]
    return published


async def test_every_move_has_its_game_due_within_the_bound(tmp_path: Path) -> None:
    """Without a press (no clock), each move's retained game is due within BOUND of it
    (GAME_AFTER_MOVE), however recently a game went out; one publication shows quick moves together,
    with a higher seq than the moves; the lists are kept move by move."""
    daemon = table(tmp_path)
    loop = asyncio.get_running_loop()
    try:
        daemon._game_changed()  # a game has just gone out
        await closed_game(daemon)
        published = games_published(daemon)
        at = 10.0
        for start, end, piece in [("e2", "e4", "P"), ("e7", "e5", "p"), ("g1", "f3", "N")]:
            at = hand(daemon, start, end, piece, at)
            timer = game_timer(daemon)
            assert timer is not None
            assert timer.when() <= loop.time() + BOUND
        await closed_game(daemon)
        assert len(published) == 1
        game = published[0]
        assert game.moves.uci == ("e2e4", "e7e5", "g1f3")
        assert game.moves.san == ("e4", "e5", "Nf3")
        last_move = max(row.seq for row in daemon.outbox.pending(1000) if "event/move" in row.topic)
        assert game.last_seq >= last_move
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


async def test_a_move_and_its_press_make_one_retained_game(tmp_path: Path) -> None:
    """After a move the retained game waits for the press that follows, within BOUND
    (GAME_AFTER_MOVE), and the press ends the wait: one publication shows the move and the clock
    after it."""
    daemon = table(tmp_path)
    loop = asyncio.get_running_loop()
    try:
        daemon.board_event(clock(300, ClockSide.RIGHT, 9.0))  # White's clock (right) runs
        await closed_game(daemon)
        published = games_published(daemon)
        hand(daemon, "e2", "e4", "P", 10.0)
        assert [m["san"] for m in stored(daemon, "event/move")] == ["e4"]
        timer = game_timer(daemon)
        assert timer is not None
        assert timer.when() <= loop.time() + BOUND
        daemon.board_event(clock(299, ClockSide.LEFT, 11.0))  # White presses
        assert [c["by"] for c in stored(daemon, "event/clock")][-1:] == ["white"]
        await closed_game(daemon)
        assert len(published) == 1
        assert published[0].moves.san == ("e4",)
        assert stored(daemon, "game")[-1]["clocks"]["white"] == 299
        assert game_timer(daemon) is None
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
