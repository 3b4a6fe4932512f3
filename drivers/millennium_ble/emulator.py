"""A Millennium ChessLink board over Bluetooth LE, on the virtual radio, played by hand.

Built from board-protocols.md §4 alone, with its own tables below; it imports nothing from the
Millennium codec, so the two cannot share a bug. Every character is 7-bit ASCII with the odd
parity bit in bit 7; every message ends with its block check (the XOR of its characters, two
upper-case hex digits). Commands with bad parity or a bad check are ignored, as the vendor's
text says. Replies and reports are notifications, cut to the connection's MTU like the board's.

Square order: the status starts at h1 and runs h1..a1, h2..a2, ..., a8 (§4 [conflict]: what
python-mchess and DCMA read on a board set up the usual way); the 9 × 9 LED grid is numbered
in the same frame, LED 0 at h1's outer corner.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from types import TracebackType
from typing import Final

import chess

from drivers.ble.peripheral import RadioBoard
from drivers.ble.radio import Advertisement, Central, Characteristic, Service, VirtualRadio

# --- §4 Bluetooth LE: Microchip transparent UART
_SERVICE: Final = "49535343-fe7d-4ae5-8fa9-9fafd205e455"
_NOTIFY: Final = "49535343-1e4d-4bd9-ba61-23c647249616"
_WRITE: Final = "49535343-8841-43f4-a8d4-ecbe34729bb3"
_NAME: Final = "MILLENNIUM CHESS"

# --- §4 commands: letter → length of the whole command, block check included
_COMMAND_LENGTHS: Final[dict[str, int]] = {
    "S": 3, "V": 3, "X": 3, "T": 3, "W": 7, "R": 5, "L": 1 + 2 + 81 * 2 + 2,
}  # fmt: skip
_EMPTY: Final = "."

# --- §4 E2ROM
_E2_SCAN_TIME: Final = 0x01  # 2.048 ms units, minimum 15 (less: 20)
_E2_AUTO_REPORTS: Final = 0x02  # 0 every scan, 1 off, 2 every [03] × 4.096 ms, 3-7 on change
_E2_REPORT_TIME: Final = 0x03
_E2_DEFAULTS: Final = {
    0x00: 0,
    _E2_SCAN_TIME: 20,
    _E2_AUTO_REPORTS: 0,
    _E2_REPORT_TIME: 0x40,
    0x04: 15,
}
_SCAN_UNIT: Final = 0.002048
_REPORT_UNIT: Final = 0.004096
_LED_GRID: Final = 9


def _with_parity(text: str) -> bytes:
    """7-bit characters, each with bit 7 set when that makes its count of ones odd."""
    return bytes(c | (0 if c.bit_count() % 2 else 0x80) for c in text.encode("ascii"))


def _check(text: str) -> str:
    value = 0
    for char in text:
        value ^= ord(char)
    return f"{value:02X}"


def _message(text: str) -> bytes:
    return _with_parity(text + _check(text))


def _status_index(square: chess.Square) -> int:
    """h1 = 0, g1 = 1, ..., a1 = 7, h2 = 8, ..., a8 = 63."""
    return chess.square_rank(square) * 8 + (7 - chess.square_file(square))


def _corners(square: chess.Square) -> tuple[int, int, int, int]:
    """The four LEDs around ``square`` in the grid of the status frame (LED 0 at h1's corner)."""
    row, col = 7 - chess.square_file(square), chess.square_rank(square)
    top = row * _LED_GRID + col
    return top, top + 1, top + _LED_GRID, top + _LED_GRID + 1


class MillenniumBleEmulator(RadioBoard):
    """A Millennium board on a virtual radio; squares are names in the player's frame.

    Satisfies :class:`drivers.emulation.EmulatedBoard` (``millennium-ble:`` + :attr:`address`)
    and :class:`drivers.ble.radio.Peripheral`. Without a ``radio`` it serves one of its own.
    """

    scheme: Final = "millennium-ble"

    def __init__(
        self,
        *,
        radio: VirtualRadio | None = None,
        address: str = "00:1E:C0:00:4D:01",
        position: str | None = None,
        rotated: bool = False,
        version: tuple[int, int] = (1, 4),
        rssi: int = -62,
    ) -> None:
        super().__init__(
            radio=radio,
            address=address,
            advertisement=Advertisement(name=_NAME, services=(_SERVICE,), rssi=rssi),
            position=position,
            rotated=rotated,
        )
        self._version = version
        self.e2rom: dict[int, int] = dict(_E2_DEFAULTS)
        self.leds: list[int] = [0] * (_LED_GRID * _LED_GRID)
        self.received: list[str] = []
        """Every command the host sent that the board took (text, check included)."""
        self._pending = bytearray()
        self._ticker: asyncio.TimerHandle | None = None

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop_ticker()
        await super().__aexit__(exc_type, exc, tb)

    async def power_on(self) -> None:
        """Switch it back on (the E2ROM keeps its settings; the LEDs are off)."""
        self.leds = [0] * (_LED_GRID * _LED_GRID)
        await super().power_on()

    @property
    def lit(self) -> frozenset[str]:
        """Squares (player's frame) whose four corner LEDs are on."""
        return frozenset(
            chess.square_name(self.frame(sq))
            for sq in chess.SQUARES
            if all(self.leds[i] for i in _corners(sq))
        )

    # -- Peripheral -----------------------------------------------------------------------------

    @property
    def services(self) -> Sequence[Service]:
        return (
            Service(
                _SERVICE,
                (
                    Characteristic(_NOTIFY, ("notify",)),
                    Characteristic(_WRITE, ("write", "write-without-response")),
                ),
            ),
        )

    def on_connect(self, central: Central) -> None:
        self._pending.clear()
        super().on_connect(central)
        self._schedule()

    def on_disconnect(self) -> None:
        super().on_disconnect()
        self._stop_ticker()

    def on_write(self, uuid: str, value: bytes) -> None:
        if uuid != _WRITE:
            return
        self._pending += value
        while self._pending:
            letter = chr(self._pending[0] & 0x7F)
            length = _COMMAND_LENGTHS.get(letter)
            if length is None:
                del self._pending[:1]  # not a command letter: the board skips it
                continue
            if len(self._pending) < length:
                return
            raw = bytes(self._pending[:length])
            del self._pending[:length]
            self._execute(raw)

    # -- the board's reactions ------------------------------------------------------------------

    def _execute(self, raw: bytes) -> None:
        if any(b.bit_count() % 2 == 0 for b in raw):
            return  # a parity error: ignored
        text = bytes(b & 0x7F for b in raw).decode("ascii")
        body, check = text[:-2], text[-2:]
        if check != _check(body):
            return  # a bad block check: ignored
        self.received.append(text)
        letter, data = body[0], body[1:]
        try:
            if letter == "S":
                self.notify(_NOTIFY, self._status())
            elif letter == "V":
                major, minor = self._version
                self.notify(_NOTIFY, _message(f"v{major:02X}{minor:02X}"))
            elif letter == "W":
                self.e2rom[int(data[:2], 16)] = int(data[2:], 16)
                self.notify(_NOTIFY, _message(f"w{data}"))
                self._schedule()
            elif letter == "R":
                self.notify(_NOTIFY, _message(f"r{data}{self.e2rom.get(int(data, 16), 0):02X}"))
            elif letter == "L":
                self.leds = [int(data[i : i + 2], 16) for i in range(2, len(data), 2)]
                self.notify(_NOTIFY, _message("l"))
            elif letter == "X":
                self.leds = [0] * (_LED_GRID * _LED_GRID)
                self.notify(_NOTIFY, _message("x"))
            elif letter == "T":
                self.leds = [0] * (_LED_GRID * _LED_GRID)
        except ValueError:
            return  # not hex where hex belongs: ignored

    def _status(self) -> bytes:
        chars = [_EMPTY] * 64
        for sq, piece in self.pieces.items():
            chars[_status_index(sq)] = piece
        return _message("s" + "".join(chars))

    def on_square_changed(self, square: chess.Square) -> None:
        """In a report-on-change mode, the board reports its status."""
        if self.e2rom.get(_E2_AUTO_REPORTS, 0) >= 3:
            self.notify(_NOTIFY, self._status())

    def _schedule(self) -> None:
        """Every-scan (0) and timed (2) reports run on a timer while a host is connected."""
        self._stop_ticker()
        mode = self.e2rom.get(_E2_AUTO_REPORTS, 0)
        if self.central is None or mode not in (0, 2):
            return
        if mode == 0:
            units = self.e2rom.get(_E2_SCAN_TIME, 20)
            period = (units if units >= 15 else 20) * _SCAN_UNIT
        else:
            period = max(1, self.e2rom.get(_E2_REPORT_TIME, 1)) * _REPORT_UNIT

        def tick() -> None:
            self.notify(_NOTIFY, self._status())
            self._ticker = asyncio.get_running_loop().call_later(period, tick)

        self._ticker = asyncio.get_running_loop().call_later(period, tick)

    def _stop_ticker(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
