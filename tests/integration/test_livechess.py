"""The LiveChess API end to end, as an outside client sees it: a real aiohttp websocket client
following the lichess page's sequence and rules (tests/livechess_client.py), against
``chessbridge run --livechess`` on the DGT emulator, ``chessbridge livechess --broker`` over a
real Mosquitto with two tables, and ``chessbridge livechess --board`` (the embedded broker) on a
Chessnut through the virtual radio. What reaches MQTT is the reference."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import aiohttp
import chess
import pytest

from bridge.demo.game import OPERA_GAME, perform, press_side
from bridge.wire import payloads
from drivers.choreography import Lift, Style, steps
from drivers.dgt.emulator import DgtEmulator
from tests.cli import argv
from tests.conftest import Mosquitto, Subscribe, Subscription
from tests.integration.test_ble_end_to_end import emulate, radio_config
from tests.integration.test_end_to_end import payloads_on, run_argv
from tests.livechess_client import (
    LiveChessClient,
    connected,
    first_board,
    placement_after,
    serving,
)
from tests.relay_harness import running_table

pytestmark = [pytest.mark.pty, pytest.mark.mosquitto]

SPEED = 8.0
START = chess.STARTING_FEN
SANS = OPERA_GAME.moves.split()
BY_HAND = 4
"""The first plies are made lift by lift, each lift and place awaited on the websocket."""


def run_args(board: str, table: str, broker: Mosquitto, state: Path, *extra: str) -> list[str]:
    """``run`` with the API on a free port (``--livechess``, unless ``extra`` says otherwise)."""
    return run_argv(board, table, broker.url, state, *(extra or ("--livechess", "127.0.0.1:0")))


def mqtt_moves(sub: Subscription) -> list[str]:
    return [p["data"]["san"] for p in payloads_on(sub, "event/move")]


def last_game(sub: Subscription) -> dict[str, Any]:
    data: dict[str, Any] = payloads_on(sub, "game")[-1]["data"]
    return data


async def by_hand(emu: DgtEmulator, client: LiveChessClient, game: chess.Board, san: str) -> None:
    """Make ``san`` lift by lift and place by place, each awaited as a feed with the board."""
    move = game.parse_san(san)
    physical = chess.BaseBoard(game.board_fen())
    for step in steps(game, move):
        name = chess.square_name(step.square)
        if isinstance(step, Lift):
            physical.remove_piece_at(step.square)
            await emu.lift(name)
        else:
            physical.set_piece_at(step.square, step.piece)
            await emu.place(name, step.piece.symbol())
        await client.board_shown(physical.board_fen())
    mover = game.turn
    game.push(move)
    await emu.press(press_side(mover))


def clocks_run(client: LiveChessClient) -> list[bool | None]:
    return [f["param"]["clock"]["run"] for f in client.feeds if f["param"].get("clock")]


async def test_a_whole_game_reaches_the_lichess_pages_sequence_through_run(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    rng = random.Random(11)
    async with (
        DgtEmulator(speed=SPEED) as emu,
        mqtt_subscribe(mosquitto, payloads.topic(table_id, "#")) as sub,
    ):
        args = run_args(f"dgt:{emu.path}", table_id, mosquitto, tmp_path / "state")
        async with serving(args) as served, connected(served.port) as client:
            board = await first_board(client)
            assert board["serialnr"] == "01234"  # the emulated DGT board's own
            assert board["board"] == chess.Board().board_fen()
            assert board["source"] == f"dgt:{emu.path}"
            first = await client.subscribe(board["serialnr"])
            # At once: the board for the page to compare with its game's, the clock.
            assert set(first["param"]) == {"serialnr", "flipped", "board", "clock"}
            assert first["param"]["board"] == chess.Board().board_fen()
            answer = await client.setup(START)
            assert answer["response"] == "call"
            assert answer["id"] == 3
            after = await client.feed_showing(lambda param: "start" in param)
            assert (after["param"]["start"], after["param"]["san"]) == (START, [])

            emu.set_clock(600, 600, running="right")
            await client.until(lambda _: True in clocks_run(client))  # White's clock runs
            game = chess.Board()
            for ply in range(1, BY_HAND + 1):
                await by_hand(emu, client, game, SANS[ply - 1])
                await client.moves_counted(SANS[:ply])
            await client.until(lambda _: clocks_run(client)[-1] is True)
            assert False in clocks_run(client), "Black's clock ran after White's press"

            # The page is loaded again mid-game: a new connection, the same sequence, a setup
            # of its game's position: san starts there.
            async with connected(served.port) as again:
                await again.subscribe((await first_board(again))["serialnr"])
                await again.setup(game.fen())
                await again.feed_showing(lambda param: param.get("start") == game.fen())
                for san in SANS[BY_HAND:]:
                    move = game.parse_san(san)
                    await perform(emu, game, move, rng.choice(list(Style)), rng, SPEED)
                    mover = game.turn
                    game.push(move)
                    if not game.is_game_over():
                        await emu.press(press_side(mover))
                await again.moves_counted(SANS[BY_HAND:])
            await client.moves_counted(SANS)
            await sub.wait_for(lambda _: bool(sub.on("event/result")))
            assert client.page().board == game.board_fen()
            assert client.feeds[-1]["param"]["match"] is True
            async with aiohttp.ClientSession() as http:
                url = f"http://127.0.0.1:{served.port}/api/v1.0/eboards"
                async with http.get(url) as response:
                    assert response.status == 200
                    [listed] = await response.json()
            assert listed["board"] == game.board_fen()
            assert listed["state"] == "ACTIVE"
    assert mqtt_moves(sub) == SANS
    assert last_game(sub)["moves"]["san"] == SANS


async def test_bad_calls_change_nothing_and_a_setup_starts_a_new_game_at_home(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    config = tmp_path / "table.toml"  # the config file's way: [livechess] listen
    config.write_text('[livechess]\nlisten = "127.0.0.1:0"\n', encoding="utf-8")
    extra = ("--config", str(config))
    async with (
        DgtEmulator(speed=SPEED) as emu,
        mqtt_subscribe(mosquitto, payloads.topic(table_id, "game")) as games,
        serving(run_args(f"dgt:{emu.path}", table_id, mosquitto, tmp_path / "s", *extra)) as served,
        connected(served.port) as client,
    ):
        await client.subscribe((await first_board(client))["serialnr"])
        await games.wait_for(lambda _: bool(games.messages))
        game_id = last_game(games)["id"]
        for bad, wanted in (
            ('{"id":5,"call":"sources"}', "unknown call"),
            (
                '{"id":6,"call":"subscribe","param":{"feed":"eboardevent","id":2,'
                '"param":{"serialnr":"no-such-board"}}}',
                "no board",
            ),
            (
                '{"id":7,"call":"call","param":{"id":1,"method":"setup","param":{"fen":"x"}}}',
                "not a FEN",
            ),
        ):
            error = await client.call(bad)
            assert error["response"] == "error"
            assert error["id"] == json.loads(bad)["id"]
            assert wanted in error["param"]["message"]
        assert last_game(games)["id"] == game_id, "nothing changed"

        # At home, the page's setup of its own game's position starts that game at the table.
        fen = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
        answer = await client.setup(fen)
        assert answer["response"] == "call", answer
        since = client.messages.index(answer)
        feed = await client.feed_showing(lambda param: "start" in param, since=since)
        assert client.messages.index(feed) == since + 1, "the answer, then the feed"
        assert feed["param"]["start"] == fen
        assert feed["param"]["san"] == []
        assert feed["param"]["match"] is False  # the pieces stand as before: not that position
        await games.wait_for(lambda _: last_game(games)["id"] != game_id)
        assert last_game(games)["fen"] == fen
        # The board set up as the page's game: it matches; the game goes on from there.
        for square, piece in (("e2", None), ("e4", "P"), ("e7", None), ("e5", "p")):
            await (emu.lift(square) if piece is None else emu.place(square, piece))
        await client.feed_showing(lambda param: param["match"] is True)
        await emu.lift("g1")
        await emu.place("f3", "N")
        await client.moves_counted(["Nf3"])


async def test_a_venue_two_tables_in_table_id_order_and_setup_refused(
    mosquitto_private: Mosquitto, table_id: str, tmp_path: Path
) -> None:
    rng = random.Random(5)
    first, second = f"{table_id}-2", f"{table_id}-10"
    async with (
        running_table(mosquitto_private, second, tmp_path / "b", speed=SPEED) as (emu_b, _),
        running_table(mosquitto_private, first, tmp_path / "a", speed=SPEED) as (emu_a, _),
        serving(
            argv("livechess", "--broker", mosquitto_private.url, "--listen", "127.0.0.1:0")
        ) as served,
        connected(served.port) as client,
    ):
        async with asyncio.timeout(20):
            boards = await client.eboards()
            while len(boards) < 2 or not all(b["state"] == "ACTIVE" and b["board"] for b in boards):
                await asyncio.sleep(0.1)
                boards = await client.eboards()
        # Ordered by table id (t-2 before t-10); both emulated boards say serial 01234: the
        # second keeps its table id.
        assert [b["comment"] for b in boards] == [f"table {first}", f"table {second}"]
        assert [b["serialnr"] for b in boards] == ["01234", second]
        await client.subscribe("01234", feed=1, call=2)
        await client.subscribe(second, feed=2, call=4)
        games = {1: (emu_a, chess.Board()), 2: (emu_b, chess.Board())}
        for number, (emu, game) in games.items():
            emu.set_clock(600, 600, running="right")
            call = {1: 3, 2: 5}[number]
            answer = await client.setup(game.fen(), feed=number, call=call)
            assert answer["response"] == "call", "the game's own position: taken"
        for ply, san in enumerate(SANS, start=1):
            # The whole game at the first table, its first eight plies at the second.
            for emu, game in list(games.values())[: 1 if ply > 8 else 2]:
                move = game.parse_san(san)
                await perform(emu, game, move, rng.choice(list(Style)), rng, SPEED)
                mover = game.turn
                game.push(move)
                if not game.is_game_over():
                    await emu.press(press_side(mover))
        await client.moves_counted(SANS, feed=1)
        await client.moves_counted(SANS[:8], feed=2)
        assert client.page(1).board == placement_after(*SANS)
        assert client.page(2).board == placement_after(*SANS[:8])
        clocks = [
            f["param"]["clock"] for f in client.feeds if f["id"] == 1 and f["param"].get("clock")
        ]
        assert {clock["run"] for clock in clocks} >= {True, False}, "each side's clock ran"
        assert all(isinstance(clock["white"], int) and clock["time"] for clock in clocks)

        # A venue's tables are the arbiters': a setup of another position is refused.
        refused = await client.setup(START, feed=1, call=6)
        assert refused["response"] == "error"
        assert refused["id"] == 6
        assert "setup refused" in refused["param"]["message"]
        await asyncio.sleep(0.5)
        [board_a, _] = await client.eboards()
        assert board_a["board"] == placement_after(*SANS), "the game is as it was"


async def test_at_home_in_one_command_a_chessnut_on_the_radio(tmp_path: Path) -> None:
    """``chessbridge livechess --board chessnut:ADDR``: the embedded broker, the daemon and the
    API in one process; a whole game played on the board (no clock) reaches the page."""
    async with emulate("chessnut", "--speed", "4") as board:
        config = radio_config(tmp_path, board.radio)
        async with (
            serving(argv(
                "livechess", "--board", f"chessnut:{board.address}", "--config", str(config),
                "--listen", "127.0.0.1:0", "--state-dir", str(tmp_path / "state"),
            )) as served,
            connected(served.port) as client,
        ):  # fmt: skip
            listed = await first_board(client, battery=True)
            assert listed["serialnr"] == "home"  # a Chessnut reports no serial: the table id
            assert listed["battery"] == "87%"
            assert listed["clock"] is None
            assert any("open https://lichess.org/dgt" in line for line in served.lines)
            await client.subscribe("home")
            await client.setup(START)
            game = chess.Board()
            for ply, san in enumerate(SANS, start=1):
                move = game.parse_san(san)
                await board.say(move.uci())
                game.push(move)
                await client.moves_counted(SANS[:ply])
            assert client.page().board == game.board_fen()
