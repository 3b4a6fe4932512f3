"""The LiveChess API's server in this process (aiohttp, real websocket clients), over a hall fed
by an engine played by hand: which web pages it lets in, what it says of where it listens, and
what a port already taken does to ``chessbridge run --livechess``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import chess
import pytest

from bridge.__main__ import EXIT_CONFIG
from bridge.livechess.hall import Hall
from bridge.livechess.origins import DEFAULT_ORIGINS, Origins
from bridge.livechess.server import ListenError, LiveChessServer, start
from bridge.wire import payloads
from tests.cli import chessbridge, chessbridge_without
from tests.conftest import Mosquitto
from tests.livechess_client import connected, first_board
from tests.published import Published


@contextlib.asynccontextmanager
async def served(
    origins: tuple[str, ...] = DEFAULT_ORIGINS, host: str = "127.0.0.1"
) -> AsyncIterator[tuple[LiveChessServer, int]]:
    """The API on a free port, one table in its hall (changes told to its clients)."""
    hall = Hall()
    server = LiveChessServer(hall, origins=Origins(origins))

    def publish(table: str, envelope: payloads.Envelope) -> None:
        if hall.apply(table, envelope, 0):
            server.changed(table)

    Published(publish)
    runner, port = await start(server, host, 0)
    try:
        yield server, port
    finally:
        await runner.cleanup()


async def refused(port: int, origin: str) -> int:
    """The HTTP status of a websocket handshake from a page of ``origin`` that was refused."""
    with pytest.raises(aiohttp.WSServerHandshakeError) as raised:
        async with connected(port, origin=origin):
            pass
    return raised.value.status


@pytest.mark.parametrize("origin", [None, "https://lichess.org", "https://www.chess.com"])
async def test_lichess_chess_com_and_tools_are_let_in(origin: str | None) -> None:
    async with served() as (_, port), connected(port, origin=origin) as client:
        board = await first_board(client)
        assert board["board"] == chess.Board().board_fen()


async def test_any_other_web_page_is_refused_and_said_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "chessbridge.livechess")
    async with served() as (server, port):
        assert await refused(port, "https://evil.example") == 403
        assert await refused(port, "https://evil.example") == 403
        assert await refused(port, "null") == 403, "a page of no origin (a sandboxed frame)"
        async with aiohttp.ClientSession() as http:
            url = f"http://127.0.0.1:{port}/api/v1.0/eboards"
            async with http.get(url, headers={"Origin": "https://evil.example"}) as response:
                assert response.status == 403
            async with http.get(url, headers={"Origin": "https://lichess.org"}) as response:
                assert response.status == 200
                assert response.headers["Access-Control-Allow-Origin"] == "https://lichess.org"
                assert len(await response.json()) == 1
        assert server.clients == set()
    said = [r.getMessage() for r in caplog.records if "evil.example" in r.getMessage()]
    assert len(said) == 1
    assert "[livechess] origins" in said[0]


async def test_the_origins_configured_replace_the_default() -> None:
    async with served(("https://broadcast.example",)) as (_, port):
        assert await refused(port, "https://lichess.org") == 403
        async with connected(port, origin="https://broadcast.example") as client:
            assert await client.eboards()


async def test_a_plain_request_to_the_websocket_says_what_it_is() -> None:
    async with (
        served() as (_, port),
        aiohttp.ClientSession() as http,
        http.get(f"http://127.0.0.1:{port}/api/v1.0") as response,
    ):
        assert response.status == 400
        assert "websocket" in await response.text()


async def test_listening_beyond_this_machine_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "chessbridge.livechess")
    async with served(host="0.0.0.0"):
        pass
    async with served(host="127.0.0.1"):
        pass
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "not on this machine only" in warnings[0]


async def test_a_port_taken_is_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = LiveChessServer(Hall(), origins=Origins())
        with pytest.raises(ListenError, match=f"cannot listen on 127.0.0.1:{port}"):
            await start(server, "127.0.0.1", port)


@pytest.mark.mosquitto
async def test_run_with_the_livechess_port_taken_stops_before_the_board_opens(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = await chessbridge(
            "run", "--board", "dgt:/dev/no-such-board", "--table", "t1", "--broker",
            mosquitto.url, "--state-dir", str(tmp_path), "--livechess", f"127.0.0.1:{port}",
        )  # fmt: skip
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == EXIT_CONFIG
    [line] = err.decode().splitlines()
    assert f"cannot listen on 127.0.0.1:{port}" in line
    assert "no-such-board" not in line, "the board was never opened"


@pytest.mark.parametrize(
    ("missing", "args", "code"),
    [
        (("aiohttp",), ("run", "--board", "dgt:/dev/null", "--table", "t1", "--livechess"), 78),
        (("aiohttp",), ("livechess", "--broker", "mqtt://127.0.0.1:1"), 2),
        (("amqtt", "amqtt.broker"), ("livechess", "--board", "dgt:/dev/null"), 2),
    ],
)
async def test_an_extra_not_installed_is_one_line_saying_which(
    missing: tuple[str, ...], args: tuple[str, ...], code: int, tmp_path: Path
) -> None:
    proc = await chessbridge_without(missing, *args, "--state-dir", str(tmp_path))
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == code
    [line] = err.decode().splitlines()
    assert "pip install 'chessbridge[livechess]'" in line
