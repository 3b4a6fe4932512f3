"""A relay started while a game is under way: the table's ``replay`` gives the earlier moves
their clock times (real daemon on an emulated DGT board, real Mosquitto)."""

from __future__ import annotations

import random
from pathlib import Path

import chess
import pytest

from tests.conftest import Mosquitto
from tests.integration.test_relay import play, table_moves
from tests.pgn_check import pgn_extract_accepts, read_games, sans
from tests.relay_harness import eventually, running_relay, running_table

pytestmark = [pytest.mark.mosquitto, pytest.mark.pty]


async def test_a_relay_that_joins_a_game_under_way_gets_the_clocks_of_the_earlier_moves(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path
) -> None:
    rng = random.Random(3)
    async with running_table(mosquitto, table_id, tmp_path / "table", speed=6.0) as (emu, _):
        emu.set_clock(900, 900, running="right")
        board = chess.Board()
        await play(emu, board, "e4 c5 Nf3 d6 d4", rng)  # nobody relays these yet
        async with running_relay(mosquitto, tmp_path / "relay") as relay:
            text = await table_moves(relay, table_id, 5)  # from the retained game at once

            async def all_clocked() -> str | None:
                text = await relay.text(f"/table/{table_id}.pgn")
                (game,) = read_games(text)
                clocks = [node.clock() for node in game.mainline()]
                return text if len(clocks) == 5 and None not in clocks else None

            text = await eventually(all_clocked)  # no move played meanwhile: the replay
            (game,) = read_games(text)
            assert sans(game) == ["e4", "c5", "Nf3", "d6", "d4"]
            assert all(0 < (node.clock() or 0) <= 900 for node in game.mainline())
            pgn_extract_accepts(text)
            await play(emu, board, "cxd4", rng)
            text = await table_moves(relay, table_id, 6)
            (game,) = read_games(text)
            assert None not in [node.clock() for node in game.mainline()]
