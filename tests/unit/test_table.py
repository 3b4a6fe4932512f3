"""The table daemon's feeding of its engine, in process (no broker: payloads stay in the outbox)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import chess
import msgspec

from bridge.table.daemon import GAME_DELAY, DaemonOptions, TableDaemon
from bridge.wire import payloads
from drivers import BoardUri
from drivers.events import BoardEvent, SquareEmptied, SquareOccupied

P = chess.Piece.from_symbol


def table(state_dir: Path) -> TableDaemon:
    options = DaemonOptions(
        board=BoardUri("dgt", "/dev/nonexistent-board"),
        table="t1",
        broker="mqtt://127.0.0.1:9",
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
