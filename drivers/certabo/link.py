"""Certabo board over a serial port (USB): the I/O shell.

Opens the port at 38400 8N1 and turns the LEDs off; the board needs no command to talk: it sends
a line of every square's tag again and again (board-protocols.md §5). The board is identified by
its whole board: two lines, the first being what the second is checked against (and what
calibration needs read twice). A board that sends nothing for ``dead_after`` seconds is declared
lost. All decoding, and the calibration that learns which piece each tag is on, is the codec's.

What the codec learnt outlives the link: it is kept in the table's state directory
(``certabo-tags.json``), so that a board unplugged and plugged back, or a daemon restarted in the
middle of a game, knows its pieces still, and a set learnt once tells a board set up from
Black's side. Without a state directory (``chessbridge scan``, tests) it is kept for the process
only; a piece whose tag is not known reads as a piece of unknown identity, which the engine
names from the game.

Capabilities (:mod:`drivers.link`): the LEDs (one under each square).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Collection
from pathlib import Path
from typing import Final

import chess

from drivers import _serial
from drivers._serial import SerialBoardLink
from drivers.certabo import codec
from drivers.certabo.codec import Calibrated, Calibration, CertaboCodec, CertaboEvent
from drivers.certabo.protocol import BAUD
from drivers.events import BoardInfo
from drivers.link import BoardLink, EventCallback, LinkSettings

log = logging.getLogger(__name__)

MODEL: Final = "Certabo"
"""What the board is called in its ``board`` topic (it does not name itself)."""

LED_GAP: Final = 0.2
"""Seconds between two LED frames. The vendor's simulator reads a frame once 8 bytes are in and
throws away whatever came with them: frames sent back to back could lose the second."""

TAGS_FILE: Final = "certabo-tags.json"
"""In the state directory: which piece each tag is on, ``[[[5 numbers], "P"], ...]``."""

_LEARNT: dict[str, Calibration] = {}
"""Without a state directory: the tags each board path has taught, for this process."""


class CertaboSerialLink(SerialBoardLink[CertaboEvent]):
    """One open connection to a Certabo board; ``run()`` reads until the link dies."""

    def __init__(
        self,
        path: str,
        on_event: EventCallback,
        *,
        tags_file: Path | None = None,
        identify_timeout: float = 4.0,
        dead_after: float = 4.0,
    ) -> None:
        super().__init__(
            path,
            on_event,
            info=BoardInfo(at=0.0, trademark=MODEL),
            identify_timeout=identify_timeout,
            dead_after=dead_after,
        )
        self._tags_file = tags_file
        self.codec: CertaboCodec = CertaboCodec(
            _LEARNT.get(path) if tags_file is None else _read_tags(tags_file)
        )
        self._lights = asyncio.Lock()
        self._lights_wanted = self._lights_sent = codec.leds(())
        self._lights_sent_at = -LED_GAP

    # -- capabilities (drivers.link) ------------------------------------------------------------

    @property
    def info(self) -> BoardInfo:
        """A Certabo board says nothing of itself: its model only."""
        return self._info

    @property
    def leds(self) -> CertaboSerialLink:
        """A light under each square: :meth:`show`."""
        return self

    async def show(self, squares: Collection[chess.Square]) -> None:
        """Light exactly ``squares`` (board frame): at most a frame every ``LED_GAP`` seconds,
        the latest asked for (a frame superseded while waiting is never sent)."""
        self._lights_wanted = codec.leds(squares)
        loop = asyncio.get_running_loop()
        async with self._lights:
            if self._lights_wanted == self._lights_sent or self._port is None:
                return
            await asyncio.sleep(max(0.0, self._lights_sent_at + LED_GAP - loop.time()))
            frame = self._lights_wanted
            await self._port.write(frame)
            self._lights_sent, self._lights_sent_at = frame, loop.time()

    # -- the connection -----------------------------------------------------------------------

    async def open(self) -> None:
        """Open the port and wait for the board's whole board; raise a ``LinkError`` if none."""
        lights_off = (self._lights_sent,)
        await self._open_port(baudrate=BAUD, example="certabo:/dev/ttyUSB0", startup=lights_off)
        self._lights_sent_at = asyncio.get_running_loop().time()
        await self._identify(
            failure=f"{self.path} opened but no Certabo board spoke within "
            f"{self._identify_timeout:g} s (expected lines of RFID tags at 38400 baud)",
            version=False,
        )

    def _dispatch(self, event: CertaboEvent) -> None:
        if isinstance(event, Calibrated):
            if self._tags_file is None:
                _LEARNT[self.path] = self.codec.calibration
            else:
                _write_tags(self._tags_file, self.codec.calibration)
            log.info(
                "%s: learnt the tags of %d pieces from the start position%s",
                self.path,
                event.pieces,
                " (set up from Black's side)" if event.rotated else "",
            )
        else:
            self._on_event(event)


def create(path: str, on_event: EventCallback, settings: LinkSettings | None = None) -> BoardLink:
    """The registry's factory (``drivers.create_link``): a Certabo board at ``path``."""
    state_dir = None if settings is None else settings.state_dir
    tags_file = None if state_dir is None else Path(state_dir) / TAGS_FILE
    return CertaboSerialLink(path, on_event, tags_file=tags_file)


def _read_tags(path: Path) -> Calibration | None:
    """The tags kept in ``path``; ``None`` if there are none (a bad file is said, and ignored)."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
        return {
            tuple(int(n) for n in tag): chess.Piece.from_symbol(symbol) for tag, symbol in entries
        }
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError) as exc:
        log.warning("%s unreadable (%s); the pieces will be learnt again", path, exc)
        return None


def _write_tags(path: Path, calibration: Calibration) -> None:
    entries = [[list(tag), piece.symbol()] for tag, piece in calibration.items()]
    staging = path.with_name(path.name + ".new")
    try:
        staging.write_text(json.dumps(entries), encoding="utf-8")
        os.replace(staging, path)
    except OSError as exc:
        log.warning("cannot keep the learnt tags in %s (%s)", path, exc)


async def probe(path: str, within: float = 2.5) -> BoardInfo | None:
    """Whether a Certabo board speaks at ``path`` (for ``chessbridge scan``): its model.

    Sends nothing: it listens for one line of tags (the board sends one about every second).
    """
    certabo = CertaboCodec()

    def identity(data: bytes, now: float) -> BoardInfo | None:
        certabo.feed(data, now)
        return BoardInfo(at=now, trademark=MODEL) if certabo.lines_read else None

    return await _serial.probe(path, baudrate=BAUD, send=(), identity=identity, within=within)
