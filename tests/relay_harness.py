"""The relay and a table, each running in the test's event loop, against a real Mosquitto.

- ``running_relay(broker, state_dir, config=...)``: ``chessbridge relay`` (``run_relay``) on a
  free port; yields a :class:`Relay` with an aiohttp client session on it.
- ``running_table(broker, table, state_dir)``: an emulated DGT board with a clock and the table
  daemon reading it; yields ``(emulator, daemon)``.
- ``eventually(check)``: polls an async check until it returns something truthy (fails the test
  after ``within`` seconds: generous, never a measure of speed).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import aiohttp
import pytest

from bridge.relay.run import run_relay
from bridge.table.daemon import DaemonOptions, TableDaemon
from bridge.wire.config import DEFAULT_RULES, Config, broker_settings
from drivers import BoardUri
from drivers.dgt.emulator import DgtEmulator

T = TypeVar("T")


class Broker(Protocol):
    """Where to connect: a Mosquitto of the tests, or a cluster (its nodes' URLs, in order)."""

    @property
    def url(self) -> str: ...


@dataclass
class Relay:
    """A running relay: its port, an HTTP session on it, its task (the exit code)."""

    port: int
    http: aiohttp.ClientSession
    task: asyncio.Task[int]
    stop: asyncio.Event

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def text(self, path: str) -> str:
        async with self.http.get(path) as response:
            assert response.status == 200, (path, response.status, await response.text())
            return await response.text()

    async def finish(self) -> int:
        """Stop the relay; its exit code."""
        self.stop.set()
        return await asyncio.wait_for(self.task, 20)


async def eventually(check: Callable[[], Awaitable[T | None]], within: float = 20.0) -> T:
    """The first truthy result of ``check``, polled until ``within`` seconds have passed."""
    last: T | None = None
    try:
        async with asyncio.timeout(within):
            while True:
                last = await check()
                if last:
                    return last
                await asyncio.sleep(0.05)
    except TimeoutError:
        pytest.fail(f"not there after {within} s; last seen: {last!r}")


@contextlib.asynccontextmanager
async def running_relay(
    broker: Broker,
    state_dir: Path,
    *,
    config: Config | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Relay]:
    """The relay in this event loop, on a free port, until the block ends."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    bound: asyncio.Future[int] = loop.create_future()
    task = asyncio.create_task(
        run_relay(
            broker=broker.url,
            http="127.0.0.1:0",
            config=config or Config(),
            state_dir=state_dir,
            stop=stop,
            env=env or {},
            ready=bound.set_result,
        )
    )
    done, _ = await asyncio.wait({task, bound}, timeout=20, return_when=asyncio.FIRST_COMPLETED)
    if bound not in done:
        stop.set()
        code = await task if task in done else None
        pytest.fail(f"the relay did not start (exit {code})")
    jar = aiohttp.CookieJar(unsafe=True)  # the session cookie of an IP address host
    base = f"http://127.0.0.1:{bound.result()}"
    async with aiohttp.ClientSession(base_url=base, cookie_jar=jar) as http:
        relay = Relay(bound.result(), http, task, stop)
        await _subscribed(relay)
        try:
            yield relay
        finally:
            stop.set()
            if not task.cancelled():  # a relay killed by the test (its task cancelled) is gone
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(task), 20)


async def _subscribed(relay: Relay) -> None:
    """Until the relay follows the broker (its subscription granted: ``broker`` in
    ``/api/state``), it ends, or 10 s pass: the relay answers HTTP before it has subscribed,
    and a payload published in between, not retained, would never reach it. A relay that is
    not to connect (a broker refusing it, none at all) is handed over as it is."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(10):
            while not relay.task.done():
                with contextlib.suppress(aiohttp.ClientError):
                    async with relay.http.get("/api/state") as response:
                        state = await response.json() if response.status == 200 else {}
                        if state.get("broker") is True:
                            return
                await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def running_table(
    broker: Broker,
    table: str,
    state_dir: Path,
    *,
    speed: float = 1.0,
    serve: Callable[[TableDaemon, asyncio.Event], Coroutine[Any, Any, None]] | None = None,
) -> AsyncIterator[tuple[DgtEmulator, TableDaemon]]:
    """An emulated board with a clock and its table daemon, connected to ``broker``; ``serve``
    runs the daemon until its event is set (default: ``TableDaemon.run``)."""
    async with DgtEmulator(speed=speed) as emu:
        daemon = TableDaemon(
            DaemonOptions(
                board=BoardUri("dgt", emu.path),
                table=table,
                broker=broker_settings(broker.url),
                rules=DEFAULT_RULES,
                state_dir=state_dir,
            )
        )
        stop = asyncio.Event()
        task = asyncio.create_task((serve or TableDaemon.run)(daemon, stop))
        try:
            await asyncio.wait_for(daemon.first_open.wait(), 15)
            await asyncio.wait_for(daemon.publisher.connected.wait(), 15)
            yield emu, daemon
        finally:
            stop.set()
            await asyncio.wait_for(task, 20)
