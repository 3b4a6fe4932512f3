"""``chessbridge broker``: the embedded broker (the demo extra's) run on its own, so that a person
on a machine without Mosquitto plays an emulated board by hand: broker, ``emulate``, ``run``,
``watch``, every one of them a ``chessbridge`` command, as the README says."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.cli import chessbridge, chessbridge_without_amqtt, output
from tests.conftest import Mosquitto, Subscribe, free_port
from tests.integration.test_emulate import emulate, presses, type_lines
from tests.integration.test_end_to_end import daemon, payloads_on, state_is

pytestmark = pytest.mark.pty


@contextlib.asynccontextmanager
async def broker(*args: str) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """``chessbridge broker ARGS``; yields it and the URL it printed. SIGTERM at the end."""
    proc = await chessbridge("broker", *args)
    try:
        assert proc.stdout is not None
        url = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip()
        assert url.startswith("mqtt://"), url + await output(proc)
        yield proc, url
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(proc.wait(), 30)


def stand_in(url: str, tmp_path: Path) -> Mosquitto:
    """The embedded broker's address in the shape the subscriber fixture takes (never started)."""
    return Mosquitto(tmp_path / "address-only", port=int(url.rsplit(":", 1)[1]))


async def test_moves_typed_into_emulate_reach_mqtt_through_chessbridge_broker(
    mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    """The README's recipe, with no Mosquitto: broker, emulate (typed into), run; an MQTT
    subscriber sees the typed moves and presses as the table's moves and presses."""
    async with broker("--port", "0") as (server, url):
        async with (
            mqtt_subscribe(stand_in(url, tmp_path), f"chessbridge/1/table/{table_id}/#") as sub,
            emulate() as (board, uri),
            daemon(uri, table_id, url, tmp_path / "state") as run,
        ):
            await sub.wait_for(lambda _: state_is(sub, "board", "connected"), within=30)
            await sub.wait_for(lambda _: state_is(sub, "status", "online"), within=30)
            await type_lines(board, "press", "e2e4", "press", "wait 0.5", "e7e5", "press")
            await type_lines(board, "wait 0.5", "Nf3", "press")
            await sub.wait_for(lambda _: len(payloads_on(sub, "event/move")) >= 3, within=30)
            await sub.wait_for(lambda _: presses(sub)[-3:] == ["white", "black", "white"], 30)
            assert run.returncode is None
        outlived = server.returncode is None  # the broker outlives its clients
    text = await output(server)
    assert outlived, text
    assert server.returncode == 0, text
    moves = [p["data"] for p in payloads_on(sub, "event/move")]
    assert [(m["ply"], m["san"]) for m in moves] == [(1, "e4"), (2, "e5"), (3, "Nf3")]
    assert "chessbridge broker: stopped" in text
    assert "Traceback" not in text


async def test_it_prints_its_url_and_says_run_and_watch_find_it_on_1883() -> None:
    port = free_port()
    async with broker("--port", str(port)) as (proc, url):
        assert proc.stderr is not None
        said = (await asyncio.wait_for(proc.stderr.readline(), 30)).decode()
        # Connectable at once: its URL is printed once it listens.
        with socket.create_connection(("127.0.0.1", port), timeout=10):
            pass
    assert url == f"mqtt://127.0.0.1:{port}"
    assert f"MQTT broker at {url}" in said
    assert f"--broker {url}" in said  # not 1883: run and watch must be told
    assert "Ctrl-C stops it" in said


async def test_a_port_in_use_is_one_line_and_exit_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = await chessbridge("broker", "--port", str(port))
        text = await output(proc)
    assert proc.returncode == 2, text
    assert f"chessbridge broker: 127.0.0.1:{port} is in use" in text
    assert len(text.strip().splitlines()) == 1, text


async def test_a_bad_port_is_one_line_and_exit_2() -> None:
    proc = await chessbridge("broker", "--port", "70000")
    text = await output(proc)
    assert proc.returncode == 2, text
    assert "--port must be 0 to 65535" in text
    assert len(text.strip().splitlines()) == 1, text


async def test_without_the_demo_extra_it_says_what_to_install() -> None:
    proc = await chessbridge_without_amqtt("broker", "--port", "0")
    text = await output(proc)
    assert proc.returncode == 2, text
    assert "not installed: pip install 'chessbridge[demo]', or run Mosquitto" in text
    assert len(text.strip().splitlines()) == 1, text
