"""``chessbridge demo`` works with nothing else running: embedded broker, emulator, daemon, view."""

from __future__ import annotations

import asyncio
import sys

import pytest

pytestmark = pytest.mark.pty


async def test_the_demo_plays_its_game_to_the_end_and_exits_0() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge",
        "demo",
        "--no-view",
        "--speed",
        "20",
        "--table",
        "demo-test",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    text = out.decode() + err.decode()
    assert proc.returncode == 0, text
    assert "game over, 1-0" in text
    assert "17. Rd8#" in text
    assert "alert touch_move" in text  # the staged touch-move breach
    assert "alert illegal_move" in text  # the staged illegal move
    assert "Traceback" not in text
