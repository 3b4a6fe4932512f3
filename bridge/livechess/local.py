"""``chessbridge run ... --livechess``: the LiveChess API of the table daemon in this process.

The daemon's publisher hands every payload it stores to the hall
(:attr:`~bridge.mqtt.publisher.Publisher.taps`), taken as soon as the daemon's step is over
(after its commit and its MQTT frames: the websocket could not be written sooner): the API
follows the board without the broker, and goes on while the broker is away. A
``setup`` of another position than the game's is carried out by the daemon as a ``new_game``
request made in this process, answered and recorded as one from the broker is; ``[livechess]
setup = false`` refuses it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from bridge.livechess.hall import Hall
from bridge.livechess.origins import DEFAULT_ORIGINS, Origins
from bridge.livechess.server import ListenError, LiveChessServer, start
from bridge.mqtt.requests import new_transaction
from bridge.table.daemon import TableDaemon
from bridge.wire import payloads, requests
from bridge.wire.config import Config, parse_listen

ServeDaemon = Callable[[TableDaemon, str, Config, asyncio.Event], Awaitable[None]]
""":func:`serve_daemon`'s type."""


class DaemonSource:
    """The daemon's payloads into ``hall``, each change told to ``changed``; its setups."""

    def __init__(self, daemon: TableDaemon, hall: Hall, changed: Callable[[str], None]) -> None:
        self.daemon = daemon
        self.table = daemon.options.table
        self.hall = hall
        self.changed = changed
        # Whether the table publishes its touches is known here, before the first one.
        hall.add(self.table).touching = daemon.options.config.engine.touch_events
        daemon.publisher.taps.append(self._tap)
        self._stored: list[bytes] = []

    def _tap(self, suffix: str, payload: bytes) -> None:
        """A payload stored: taken once the daemon's step is over (its commit and its MQTT
        frames first; the websocket is written after the step anyway)."""
        if not self._stored:
            asyncio.get_running_loop().call_soon(self._take)
        self._stored.append(payload)

    def _take(self) -> None:
        """Fold what was stored (nothing: done already)."""
        stored, self._stored = self._stored, []
        received = int(time.time() * 1000)
        changed = False
        for payload in stored:
            changed = (
                self.hall.apply(self.table, payloads.decode_envelope(payload), received) or changed
            )
        if changed:
            self.changed(self.table)

    async def setup(self, table: str, fen: str) -> str | None:
        """A new game at the table from ``fen``; ``None`` once started, else why not."""
        raw = requests.build(
            "new_game",
            {"fen": fen},
            transaction=new_transaction("livechess"),
            expires_at=time.time() + requests.EXPIRY,
        )
        response = await self.daemon.carry_out("new_game", raw)
        self._take()  # the new game in the hall before the setup is answered
        if response is not None and response.status == "ok":
            return None
        why = "no answer" if response is None else response.error
        return f"table {table} did not start a new game from {fen}: {why}"


async def serve_daemon(
    daemon: TableDaemon,
    listen: str,
    config: Config,
    stop: asyncio.Event,
    ready: Callable[[int], None] | None = None,
) -> None:
    """Run ``daemon`` until ``stop``, its board served by the LiveChess API at ``listen``
    (``[HOST:]PORT``, already checked) from before its board is opened; ``ready`` gets the port
    bound (useful with port 0).

    Raises:
        ListenError: the API cannot listen there (nothing was started).
        LinkError, TableTakenError: as ``daemon.run`` raises them.
    """
    section = config.livechess
    hall = Hall()
    server = LiveChessServer(hall, origins=Origins(section.origins or DEFAULT_ORIGINS))
    source = DaemonSource(daemon, hall, server.changed)
    if section.setup is not False:
        server.setup = source.setup
    try:
        runner, port = await start(server, *parse_listen(listen))
    except ListenError:
        daemon.outbox.close()
        raise
    if ready is not None:
        ready(port)
    try:
        await daemon.run(stop)
    finally:
        await runner.cleanup()
