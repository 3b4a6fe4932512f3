"""``chessbridge watch --room`` against a real Mosquitto, on a terminal."""

from __future__ import annotations

import asyncio

import aiomqtt
import pytest

from bridge.views.shell import watch
from bridge.wire import payloads
from bridge.wire.config import broker_settings
from tests.conftest import Mosquitto
from tests.integration.test_watch import _Stream
from tests.relay_feed import TableFeed


async def test_watch_room_draws_the_room_on_a_terminal(
    mosquitto_private: Mosquitto, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``watch(room_view=True)`` on a terminal redraws the one-line-per-table screen."""
    # A broker of its own (the shared one holds every other test's retained tables) and a
    # terminal of a known size: the table's line keeps its players. Other layouts: unit tests.
    mosquitto = mosquitto_private
    monkeypatch.setenv("LINES", "40")
    feed = TableFeed("roomtest1", "roomtest1-20260501T140000Z")
    feed.assign(white="Anna", black="Bea", board=4)
    out, stop = _Stream(terminal=True), asyncio.Event()
    task = asyncio.create_task(
        watch(
            broker_settings(mosquitto.url),
            table=None,
            plain=False,
            stop=stop,
            out=out,
            width=100,
            room_view=True,
        )
    )
    try:
        async with aiomqtt.Client(mosquitto.host, mosquitto.port) as client:
            for suffix, envelope in [feed.status(), feed.snapshot(), *feed.play("e4")]:
                topic = payloads.topic(feed.table, suffix)
                await client.publish(topic, feed.raw[envelope.seq], qos=1)
        await out.wait_for(lambda text: "B4 roomtest1" in text and "1. e4" in text)
    finally:
        stop.set()
        assert await task == 0
    assert "Anna – Bea" in out.getvalue()
