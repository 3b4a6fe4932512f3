"""The board supervisor: one board link kept open, whatever its family, for the table.

It builds the link from the board URI through the drivers' registry (``drivers.create_link``)
and knows only the :class:`~drivers.link.BoardLink` protocol. It opens the link, reconnects with
capped, jittered backoff when it dies, and after a reconnect (or when a game is resumed) asks the
board what happened while nobody listened: the events that arrive meanwhile are held, the
board's own memory is recalled if the link has one (:class:`~drivers.link.BoardMemory`), the
table replays it with the last full board read, and then gets what was held after that board,
each event with the time it arrived (the table judges it at that time, not at the release).
Square events held from before that board are in it (or in the memory) already, so they are
dropped. Everything else goes to the table as it arrives: physical events, the board's identity
and health, the link's state.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Final, Literal, Protocol

import msgspec

from drivers import BoardUri, create_link
from drivers.backoff import Backoff
from drivers.errors import LinkError
from drivers.events import (
    BoardEvent,
    BoardInfo,
    BoardSnapshot,
    Occupant,
    SquareEmptied,
    SquareOccupied,
    merge_info,
)
from drivers.link import BoardLink, EventCallback, RecoveredStep

log = logging.getLogger("chessbridge")

LinkState = Literal["connecting", "connected", "disconnected", "error"]
LinkFactory = Callable[[BoardUri, EventCallback], BoardLink]


class BoardSink(Protocol):
    """What a supervisor feeds: a table (its engine and publisher)."""

    def board_event(self, event: BoardEvent) -> None:
        """A physical event, to be judged at ``event.at`` (when it arrived)."""

    def board_changed(self) -> None:
        """The link's state or the board's identity changed (see the supervisor's attributes)."""

    def last_seen(self) -> Sequence[Occupant | None]:
        """The board as the table last saw it, in the board's frame (for its memory)."""
        ...

    def recovered(
        self, steps: list[RecoveredStep] | None, snapshot: BoardSnapshot | None, at: float
    ) -> None:
        """What the board stored while nobody listened (if it could say), then its full board;
        ``at`` is when that board was read (the events that follow arrived later)."""


class BoardSupervisor:
    """Keeps the board at ``uri`` connected for ``sink``; see the module docstring."""

    def __init__(
        self,
        uri: BoardUri,
        sink: BoardSink,
        *,
        reconnect_min: float = 0.5,
        reconnect_max: float = 10.0,
        link_factory: LinkFactory = create_link,
    ) -> None:
        self.uri = uri
        self.state: LinkState = "connecting"
        self.error: str | None = None
        self.info = BoardInfo(at=0.0)
        self.link: BoardLink | None = None
        self.first_open = asyncio.Event()
        self._sink = sink
        self._backoff = Backoff(reconnect_min, reconnect_max)
        self._factory = link_factory
        self._holding: list[BoardEvent] | None = None
        self._unconfirmed: dict[str, str] = {}
        """Identity values the board said once, differing from what it said before."""

    async def open(self, *, recover: bool) -> None:
        """Open the board the first time; a board that cannot be opened raises ``LinkError``.

        With ``recover`` (a game resumed), events are held until :meth:`run` has recalled what
        the board stored.
        """
        link = self._new_link()
        self._holding = [] if recover else None
        await link.open()
        self._connected(link)

    async def run(self, *, recover: bool) -> None:
        """Serve the link opened by :meth:`open`, reconnecting for ever when it dies."""
        link = self.link
        assert link is not None, "open() first"
        while True:
            try:
                await self._serve(link, recover)
            except LinkError as exc:
                log.warning("%s; reconnecting", exc)
                self._set_state("disconnected", str(exc))
            self._holding = None
            link = await self._reconnect()
            recover = True

    async def _reconnect(self) -> BoardLink:
        while True:
            delay = self._backoff.next()
            await asyncio.sleep(delay)
            link = self._new_link()
            self._holding = []
            try:
                await link.open()
            except LinkError as exc:
                log.warning("%s; retrying in %.1f s", exc, delay)
                continue
            self._backoff.reset()
            self._connected(link)
            return link

    async def _serve(self, link: BoardLink, recover: bool) -> None:
        """Read the board until the link dies; first, if asked, recover what it stored."""
        reader = asyncio.create_task(link.run(), name="board-reader")
        try:
            if recover:
                steps = None
                memory = link.memory
                if memory is not None:
                    recall = asyncio.create_task(memory.recall(self._sink.last_seen()))
                    done, _ = await asyncio.wait(
                        {reader, recall}, return_when=asyncio.FIRST_COMPLETED
                    )
                    if recall in done:
                        steps = recall.result()
                    else:
                        recall.cancel()
                self._release(steps)
            await reader
        finally:
            reader.cancel()

    def _release(self, steps: list[RecoveredStep] | None) -> None:
        """Replay the board's memory and its last full board, then what arrived after it."""
        held = self._holding
        if held is None:
            return
        self._holding = None
        last = max((i for i, e in enumerate(held) if isinstance(e, BoardSnapshot)), default=-1)
        snapshot = held[last] if last >= 0 else None
        assert snapshot is None or isinstance(snapshot, BoardSnapshot)
        if steps:
            log.info("read %d stored changes and presses from the board's memory", len(steps))
        if snapshot is not None:
            at = snapshot.at
        else:
            at = held[0].at if held else asyncio.get_running_loop().time()
        self._sink.recovered(steps, snapshot, at)
        for i, event in enumerate(held):
            if i > last or not isinstance(event, BoardSnapshot | SquareEmptied | SquareOccupied):
                self._sink.board_event(event)

    def _new_link(self) -> BoardLink:
        link = self._factory(self.uri, self._on_event)
        self.link = link
        return link

    def _connected(self, link: BoardLink) -> None:
        self.first_open.set()
        self.info = link.info
        self._unconfirmed = {}
        self._set_state("connected", None)
        log.info("board %s connected (%s)", self.uri, _describe(link.info))

    def _set_state(self, state: LinkState, error: str | None) -> None:
        self.state = state
        self.error = error
        self._sink.board_changed()

    def _on_event(self, event: BoardEvent) -> None:
        if isinstance(event, BoardInfo):
            merged = merge_info(self.info, self._confirmed(event))
            changed = msgspec.structs.replace(merged, at=0.0) != msgspec.structs.replace(
                self.info, at=0.0
            )
            self.info = merged
            if changed and self.first_open.is_set():
                self._sink.board_changed()
        elif self._holding is not None:
            self._holding.append(event)
        else:
            self._sink.board_event(event)

    def _confirmed(self, info: BoardInfo) -> BoardInfo:
        """``info`` without the identity it changes unconfirmed (see ``IDENTITY``).

        A board's serial number, firmware and trademark do not change while it is connected;
        a message that says otherwise once is line noise that happened to frame well (the DGT
        protocol has no checksum). A new value counts when the board says it in two messages
        about it in a row (a DGT board answers the keep-alive's serial request every second), or
        on reconnect; a value the board had not said before is taken as said.
        """
        changes: dict[str, None] = {}
        for name in IDENTITY:
            new = getattr(info, name)
            old = getattr(self.info, name)
            if new is None:
                continue  # a message about something else
            if old is None or new == old:
                self._unconfirmed.pop(name, None)
                continue
            if self._unconfirmed.get(name) == new:
                del self._unconfirmed[name]  # said twice in a row: the board's own
                continue
            self._unconfirmed[name] = new
            changes[name] = None
            log.debug("board %s said %s %r once; kept %r", self.uri, name, new, old)
        return msgspec.structs.replace(info, **changes) if changes else info


IDENTITY: Final = ("serial", "version", "trademark")
"""What a board says of itself that cannot change while it stays connected."""


def _describe(info: BoardInfo) -> str:
    parts = [
        info.trademark.splitlines()[0] if info.trademark and not info.serial else "",
        f"serial {info.serial}" if info.serial else "",
        f"v{info.version}" if info.version else "",
        f"{info.rssi} dBm" if info.rssi is not None else "",
    ]
    return ", ".join(p for p in parts if p) or "no identity reported"
