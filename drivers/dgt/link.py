"""DGT board over a serial port (USB, RS232, classic-Bluetooth rfcomm): the I/O shell.

Opens the port at 9600 8N1, takes the board out of bus mode, identifies it, asks for the full
board and puts it in UPDATE_NICE mode so that field changes and clock data arrive by themselves
(board-protocols.md §1.2, §1.10). A keep-alive asks for the serial number every second; a board
that stays silent for ``dead_after`` seconds is declared lost. All decoding is the codec's.

Capabilities (:mod:`drivers.link`): the board's memory (EE_MOVES, §1.11) and the DGT 3000
clock's SETNRUN. The DGT-only events of the codec (clock acknowledgements, the stored log) stay
here; the daemon gets the events of :mod:`drivers.events` only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Final

from drivers import _serial
from drivers._serial import SerialBoardLink
from drivers.dgt import codec, memory
from drivers.dgt import protocol as p
from drivers.dgt.events import ClockAck, DgtEvent, StoredEnd, StoredEntry
from drivers.events import BoardInfo, BoardSnapshot, Occupant, merge_info
from drivers.link import BoardLink, ClockSetting, EventCallback, LinkSettings, RecoveredStep

log = logging.getLogger(__name__)

BAUD: Final = 9600
"""DGT serial speed (§1.1)."""

STARTUP: Final = (
    codec.reset(),  # leaves bus mode (any single-board command does), IDLE
    codec.version(),
    codec.serial_number(),
    codec.send_board(),
    codec.update_nice(),  # field updates + clock data when it changes (§1.2)
    codec.clock_version(),  # a clock behind the board answers with an ack
)
"""What the host sends after opening the port."""

MEMORY_ANSWER: Final = 2.0
"""Seconds for the board to begin answering EE_MOVES (it does within milliseconds; a firmware
without the command never does, and then the full board alone must tell what happened), and
the longest silence in the middle of the answer (its bytes flow without a pause: one that stops
half-way, cut short, is given up after this silence, not after ``MEMORY_TIMEOUT``)."""

MEMORY_TIMEOUT: Final = 15.0
"""Seconds for the whole memory once it has begun (a full EEPROM takes about 8 s at 9600 baud)."""

BOARD_ANSWER: Final = 2.0
"""Seconds for the board dump asked for after the memory."""


class DgtSerialLink(SerialBoardLink[DgtEvent]):
    """One open connection to a DGT board; ``run()`` reads until the link dies."""

    def __init__(
        self,
        path: str,
        on_event: EventCallback,
        *,
        identify_timeout: float = 3.0,
        keepalive: float = 1.0,
        dead_after: float = 4.0,
    ) -> None:
        super().__init__(
            path,
            on_event,
            info=BoardInfo(at=0.0),
            identify_timeout=identify_timeout,
            dead_after=dead_after,
            keepalive=codec.serial_number(),
            every=keepalive,
        )
        self.codec: codec.DgtCodec = codec.DgtCodec()
        self._stored: list[DgtEvent] | None = None
        self._memory_begun = asyncio.Event()
        self._memory_ended = asyncio.Event()
        self._memory_broken = False
        """The memory's message ended without its end (interrupted or of an impossible size)."""
        self._memory_bytes = 0
        """Bytes received while the memory's message is under way (to tell a pause from flow)."""
        self._board_read = asyncio.Event()

    # -- capabilities (drivers.link) ------------------------------------------------------------

    @property
    def memory(self) -> DgtSerialLink:
        """The board's EEPROM log of changes: :meth:`recall`."""
        return self

    @property
    def clock(self) -> DgtSerialLink:
        """The DGT 3000 behind the board: :meth:`set_clock`."""
        return self

    async def recall(self, last_seen: Sequence[Occupant | None]) -> list[RecoveredStep] | None:
        """Ask for the board's memory (EE_MOVES) and read what was done since ``last_seen``.

        The answer must begin within ``MEMORY_ANSWER`` seconds, never pause that long, and end
        within ``MEMORY_TIMEOUT``; ``None`` otherwise, and also when the message ends broken (cut
        short by another message): the full board alone then tells what happened. When steps are
        found, the full board is read again after them (see :class:`~drivers.link.BoardMemory`).
        """
        self._stored = []
        self._memory_begun.clear()
        self._memory_ended.clear()
        self._memory_broken = False
        self._memory_bytes = 0
        try:
            await self.send(codec.ee_moves())
            answered = await self._memory_answered()
            stored = self._stored
        finally:
            self._stored = None
        steps = memory.steps_since(stored, last_seen) if answered else None
        if steps is not None:
            self._board_read.clear()
            await self.send(codec.send_board())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._board_read.wait(), BOARD_ANSWER)
        return steps

    async def _memory_answered(self) -> bool:
        try:
            await asyncio.wait_for(self._memory_begun.wait(), MEMORY_ANSWER)
        except TimeoutError:
            log.info(
                "board at %s did not answer the memory request within %g s; "
                "the full board alone tells what happened",
                self.path,
                MEMORY_ANSWER,
            )
            return False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + MEMORY_TIMEOUT
        seen = -1
        while not self._memory_ended.is_set():
            if self._memory_bytes == seen or loop.time() >= deadline:
                log.warning(
                    "the memory of the board at %s stopped arriving (%s); ignored: the full "
                    "board alone tells what happened",
                    self.path,
                    f"no byte for {MEMORY_ANSWER:g} s"
                    if self._memory_bytes == seen
                    else f"not whole within {MEMORY_TIMEOUT:g} s",
                )
                return False
            seen = self._memory_bytes
            with contextlib.suppress(TimeoutError):
                wait = min(MEMORY_ANSWER, max(0.0, deadline - loop.time()))
                await asyncio.wait_for(self._memory_ended.wait(), wait)
        if self._memory_broken:
            log.warning(
                "the memory of the board at %s arrived broken (cut short); ignored: the full "
                "board alone tells what happened",
                self.path,
            )
            return False
        return True

    async def set_clock(self, setting: ClockSetting) -> None:
        """SETNRUN: both times, and which side counts down (or pause)."""
        await self.send(
            codec.clock_set_and_run(
                setting.left,
                setting.right,
                left_runs=setting.left_runs,
                right_runs=setting.right_runs,
                pause=setting.pause,
            )
        )

    # -- the connection -----------------------------------------------------------------------

    async def open(self) -> None:
        """Open the port and check that a DGT board answers; raise a ``LinkError`` if not."""
        await self._open_port(baudrate=BAUD, example="dgt:/dev/ttyACM0", startup=STARTUP)
        await self._identify(
            failure=f"{self.path} opened but no DGT board answered within "
            f"{self._identify_timeout:g} s (expected a DGT e-board speaking the DGT serial "
            "protocol at 9600 baud)",
            version=True,
        )

    def _feed(self, data: bytes, now: float) -> None:
        # Only an id has its top bit set (§1.4): the memory's id in ``data`` begins its message.
        under_way = self.codec.receiving == p.MSG_EE_MOVES or p.MSG_EE_MOVES in data
        super()._feed(data, now)
        if self._stored is None or self._memory_ended.is_set():
            return
        if self.codec.receiving == p.MSG_EE_MOVES:
            self._memory_begun.set()  # a full memory takes seconds to arrive
            self._memory_bytes += len(data)
        elif under_way:
            # The message began and is no more, with no end decoded: the codec dropped it
            # (another message cut in, or its size was impossible). Its end ends the wait.
            self._memory_broken = True
            self._memory_begun.set()
            self._memory_ended.set()

    def _dispatch(self, event: DgtEvent) -> None:
        """Generic events to the callback; the stored log to :meth:`recall`; acks nowhere."""
        if isinstance(event, StoredEntry):
            stored = self._stored
            if stored is None:
                return  # an answer nobody waits for any more
            if isinstance(event, StoredEnd):
                self._memory_begun.set()
                self._memory_ended.set()
            else:
                stored.append(event)
        elif not isinstance(event, ClockAck):
            if isinstance(event, BoardSnapshot):
                self._board_read.set()
            elif isinstance(event, BoardInfo) and event.trademark is not None:
                # The link never asks for the trademark: one that arrives is line noise that
                # framed well (the protocol has no checksum), not the board speaking.
                return
            self._on_event(event)


def create(path: str, on_event: EventCallback, settings: LinkSettings | None = None) -> BoardLink:
    """The registry's factory (``drivers.create_link``): a DGT board on the port at ``path``."""
    return DgtSerialLink(path, on_event)


async def probe(path: str, within: float = 1.5) -> BoardInfo | None:
    """Whether a DGT board answers at ``path`` (for ``chessbridge scan``): its identity.

    Sends only the reset (leaving bus mode), version and serial number requests.
    """
    dgt = codec.DgtCodec()
    info = BoardInfo(at=0.0, trademark="DGT e-board")

    def identity(data: bytes, now: float) -> BoardInfo | None:
        nonlocal info
        for event in dgt.feed(data, now):
            if isinstance(event, BoardInfo):
                info = merge_info(info, event)
        return info if info.version is not None and info.serial is not None else None

    return await _serial.probe(
        path,
        baudrate=BAUD,
        send=(codec.reset(), codec.version(), codec.serial_number()),
        identity=identity,
        within=within,
    )
