"""``chessbridge demo`` works with nothing else running: embedded broker, emulator, daemon, view;
its broker can be joined from outside, it can publish to a broker of one's own, it announces
the staged irregularities before they happen, and SIGTERM ends it cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
from collections.abc import Sequence

import aiomqtt
import pytest

from bridge.demo.game import OPERA_GAME
from tests.cli import chessbridge, chessbridge_without_amqtt, output
from tests.conftest import Mosquitto, Subscribe, free_port

pytestmark = pytest.mark.pty


async def demo(*args: str) -> asyncio.subprocess.Process:
    return await chessbridge(
        "demo",
        "--no-view",
        *args,
    )


def index_of(lines: Sequence[str], part: str) -> int:
    return next(i for i, line in enumerate(lines) if part in line)


async def test_the_demo_plays_its_game_to_the_end_and_announces_what_is_staged() -> None:
    proc = await demo("--speed", "20", "--table", "demo-test", "--port", "0")
    text = await output(proc)
    assert proc.returncode == 0, text
    assert "game over, 1-0" in text
    assert "17. Rd8#" in text
    assert "Traceback" not in text
    lines = text.splitlines()
    # Each staged irregularity is announced before it happens, and then it happens.
    touch = index_of(lines, "alert touch_move")
    illegal = index_of(lines, "alert illegal_move")
    assert index_of(lines, "staged next, on purpose: Black lifts his knight") < touch
    assert index_of(lines, "staged next, on purpose: White puts his bishop on c5") < illegal


async def test_its_embedded_broker_can_be_joined_on_the_port_it_prints() -> None:
    port = free_port()
    proc = await demo("--speed", "10", "--port", str(port))
    try:
        assert proc.stderr is not None
        said = (await asyncio.wait_for(proc.stderr.readline(), 30)).decode()
        assert f"embedded MQTT broker at mqtt://127.0.0.1:{port}" in said
        assert f"chessbridge watch --broker mqtt://127.0.0.1:{port}" in said
        async with aiomqtt.Client("127.0.0.1", port) as client:
            await client.subscribe("chessbridge/1/table/demo/event/move", qos=1)
            async with asyncio.timeout(60):
                async for message in client.messages:
                    assert isinstance(message.payload, bytes)
                    move = json.loads(message.payload)
                    assert move["data"]["san"] == "e4"
                    break
    finally:
        proc.send_signal(signal.SIGTERM)
        text = await output(proc)
    assert proc.returncode == 0, text
    assert "chessbridge demo: stopped" in text
    assert "Traceback" not in text


async def test_chessbridge_watch_joins_the_demo_from_another_terminal() -> None:
    """As the demo's first line says: ``chessbridge watch --broker URL`` in a second terminal
    shows the demo's table, move by move."""
    proc = await demo("--port", "0")
    watcher = None
    shown: list[str] = []
    try:
        assert proc.stderr is not None
        said = (await asyncio.wait_for(proc.stderr.readline(), 30)).decode()
        found = re.search(r"chessbridge watch --broker (mqtt://127\.0\.0\.1:\d+)", said)
        assert found, said
        watcher = await chessbridge("watch", "--plain", "--broker", found.group(1))
        assert watcher.stdout is not None
        async with asyncio.timeout(60):  # two moves, as they are made
            while sum(line.startswith("demo move ") for line in shown) < 2:
                line = (await watcher.stdout.readline()).decode()
                assert line, "watch ended early:\n" + "".join(shown)
                shown.append(line)
    finally:
        for process in (watcher, proc):
            if process is not None and process.returncode is None:
                process.send_signal(signal.SIGTERM)
        text = await output(proc)
    assert watcher is not None
    rest = await output(watcher)
    assert watcher.returncode == 0, rest
    assert proc.returncode == 0, text
    assert "demo status online\n" in shown
    assert any(line.startswith("demo board connected") for line in shown)
    game = OPERA_GAME.moves.split()
    for line in (line for line in shown if line.startswith("demo move ")):
        number, san = line.split()[2:4]  # "demo move 3... Bg4 (clock) W 4:53* B 4:27"
        ply = 2 * int(number.rstrip(".")) - (0 if number.endswith("...") else 1)
        assert san == game[ply - 1], line  # the Opera Game's move, from wherever it joined
    assert "Traceback" not in text + rest


async def test_the_demo_ends_with_its_game_while_clients_stay_connected() -> None:
    """Clients of the embedded broker do not keep the demo from ending: a ``watch`` (which
    reconnects when the broker drops it), an MQTT subscriber that never disconnects, and a
    connection that never sends its CONNECT. amqtt's shutdown waits for its clients (on Python
    3.12 and later for every connection still open; on 3.11 for a client's reader whose
    cancellation was lost), so the demo cuts off those still there after a moment."""
    proc = await demo("--speed", "20", "--port", "0")
    watcher = None
    try:
        assert proc.stderr is not None
        said = (await asyncio.wait_for(proc.stderr.readline(), 30)).decode()
        found = re.search(r"mqtt://127\.0\.0\.1:(\d+)", said)
        assert found, said
        port = int(found.group(1))
        watcher = await chessbridge("watch", "--plain", "--broker", found.group(0))
        with (
            socket.create_connection(("127.0.0.1", port), timeout=10),  # never says CONNECT
            contextlib.suppress(aiomqtt.MqttError),  # the broker is gone when the client leaves
        ):
            async with aiomqtt.Client("127.0.0.1", port) as client:
                await client.subscribe("chessbridge/1/#", qos=1)
                text = await output(proc)  # the game is played to its end; the demo exits
                async with asyncio.timeout(30):  # and this client was dropped: read to its end
                    async for _ in client.messages:
                        pass
    finally:
        for process in (proc, watcher):
            if process is not None and process.returncode is None:
                process.send_signal(signal.SIGTERM)
                await asyncio.wait_for(process.wait(), 30)
    assert proc.returncode == 0, text
    assert "game over, 1-0" in text
    assert "Traceback" not in text
    assert watcher is not None
    # The watch was still connected (or reconnecting) when the demo ended: it ends only now.
    rest = await output(watcher)
    assert watcher.returncode == 0, rest
    assert "demo move 17. Rd8#" in rest


@pytest.mark.mosquitto
async def test_it_publishes_to_a_broker_of_ones_own(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str
) -> None:
    async with mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/event/#") as sub:
        proc = await demo("--speed", "20", "--table", table_id, "--broker", mosquitto.url)
        text = await output(proc)
        assert proc.returncode == 0, text
        await sub.wait_for(lambda _: bool(sub.on("event/result")), within=10)
    assert f"publishing to {mosquitto.url}" in text
    assert len(sub.on("event/move")) >= 33


async def test_sigterm_while_the_live_view_draws_ends_it_with_the_cursor_back() -> None:
    """On a terminal (a pseudo-terminal here) the screen is drawn; SIGTERM ends the demo with
    exit 0, the cursor shown again and nothing left behind in the state folder."""
    master, slave = os.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "40"}
    proc = await chessbridge(
        "demo",
        "--port",
        "0",
        stdout=slave,
        env=env,
    )
    os.close(slave)
    screen = bytearray()
    loop = asyncio.get_running_loop()
    drawn = asyncio.Event()

    def read() -> None:
        try:
            screen.extend(os.read(master, 65536))
        except OSError:  # EIO: the demo closed its end
            loop.remove_reader(master)
            return
        if "♜".encode() in screen:
            drawn.set()

    loop.add_reader(master, read)
    try:
        await asyncio.wait_for(drawn.wait(), 60)  # the board is on the screen
        proc.send_signal(signal.SIGTERM)
        text = await output(proc)
        await asyncio.sleep(0.2)
    finally:
        loop.remove_reader(master)
        os.close(master)
    assert proc.returncode == 0, text
    assert "chessbridge demo: stopped" in text
    assert "Traceback" not in text
    assert screen.startswith(b"\x1b[2J\x1b[?25l")  # cleared, cursor hidden
    assert screen.rstrip(b"\r\n").endswith(b"\x1b[?25h"), bytes(screen[-200:])  # shown again
    assert b"demo: Paul Morphy" in screen  # the caption
    assert b"\x1b[48;5;" in screen  # in colour


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--broker", "http://x"], "chessbridge: "),
        (["--port", "70000"], "--port 0 to 65535"),
        (["--speed", "0"], "--speed must be positive"),
    ],
)
async def test_bad_arguments_are_one_line_and_exit_2(args: list[str], error: str) -> None:
    proc = await demo(*args)
    text = await output(proc)
    assert proc.returncode == 2, text
    assert error in text
    assert len(text.strip().splitlines()) == 1, text


async def test_without_the_demo_extra_it_says_how_to_install_it() -> None:
    proc = await chessbridge_without_amqtt("demo", "--no-view", "--port", "0")
    text = await output(proc)
    assert proc.returncode == 2, text
    assert "pip install 'chessbridge[demo]'" in text
    assert len(text.strip().splitlines()) == 1, text
