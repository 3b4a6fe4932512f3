"""The relay on the demo's broker: the demo's finished game as the relay serves it."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from bridge.demo.game import OPERA_GAME
from tests.cli import chessbridge
from tests.conftest import Mosquitto
from tests.pgn_check import pgn_extract_accepts, read_games, sans
from tests.relay_harness import eventually, running_relay

pytestmark = pytest.mark.pty


async def test_the_demo_game_served_by_the_relay_passes_python_chess_and_pgn_extract(
    tmp_path: Path,
) -> None:
    proc = await chessbridge(
        "demo",
        "--no-view",
        "--speed",
        "20",
        "--port",
        "0",
        stdout=asyncio.subprocess.DEVNULL,
    )
    assert proc.stderr is not None
    seen: list[str] = []
    try:
        async with asyncio.timeout(30):
            while not (found := re.search(r"mqtt://127\.0\.0\.1:(\d+)", "".join(seen))):
                line = await proc.stderr.readline()
                assert line, "the demo ended early:\n" + "".join(seen)
                seen.append(line.decode())
        broker = Mosquitto(tmp_path / "unused", port=int(found.group(1)))  # its URL only
        drain = asyncio.create_task(proc.stderr.read())  # a full pipe would stall the demo
        async with running_relay(broker, tmp_path / "relay") as relay:

            async def finished() -> str | None:
                text = await relay.text("/round.pgn")
                return text if '[Result "1-0"]' in text else None

            text = await eventually(finished, within=100)  # the demo plays its whole game
            # and ends, though the relay is still connected to its broker (docs/relay.md)
            await asyncio.wait_for(proc.wait(), 30)
            # The relay keeps the finished game and goes on serving it, the broker gone.
            assert await relay.text("/round.pgn") == text
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
    rest = await asyncio.wait_for(drain, 30)
    assert proc.returncode == 0, "".join(seen) + rest.decode()
    (game,) = read_games(text)
    assert sans(game) == OPERA_GAME.moves.split()
    assert game.headers["White"] == OPERA_GAME.white
    assert game.headers["Termination"] == "normal"
    comments = " ".join(" ".join(node.comment.split()) for node in game.mainline())
    assert "Illegal move by White (Art. 7.5.1)" in comments  # the staged one, reinstated
    assert "touch" not in comments  # the staged touch-move is the arbiters' matter
    pgn_extract_accepts(text)
