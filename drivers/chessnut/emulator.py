"""A Chessnut Air on the virtual radio (:mod:`drivers.ble.radio`), played by hand.

Used by the tests, ``chessbridge emulate chessnut`` and ``chessbridge scan``'s tests. A host
reaches it exactly as it would reach a real board over Bluetooth LE: it scans, connects,
subscribes, writes ``21 01 00`` and gets the position on every change.

The emulator builds every notification from its own tables below, each citing the section of
``board-protocols.md`` it restates; it imports nothing from the Chessnut codec or its protocol
module, so the two cannot share a bug. Like the board, it splits a position longer than the
connection's MTU allows into several notifications (§3: "set MTU ... or FEN notifications may be
incomplete").
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Final

import chess

from drivers.ble.peripheral import RadioBoard
from drivers.ble.radio import Advertisement, Central, Characteristic, Service, VirtualRadio

# --- §3 GATT layout
_FEN_SERVICE: Final = "1b7e8261-2877-41c3-b46e-cf057c562023"
_FEN_NOTIFY: Final = "1b7e8262-2877-41c3-b46e-cf057c562023"
_OP_SERVICE: Final = "1b7e8271-2877-41c3-b46e-cf057c562023"
_OP_WRITE: Final = "1b7e8272-2877-41c3-b46e-cf057c562023"
_OP_NOTIFY: Final = "1b7e8273-2877-41c3-b46e-cf057c562023"
_OTHER_SERVICE: Final = "1b7e8281-2877-41c3-b46e-cf057c562023"  # seen, meaning unknown (§3)
_COMPANY_ID: Final = 0x4450  # manufacturer data of a Chessnut Air advertisement (§8, DCMA)

# --- §3 position notification: 01 24, 32 bytes of nibbles h8..a1 (low nibble first), 4 more
_POSITION_HEADER: Final = bytes([0x01, 0x24])
_NIBBLES: Final[dict[str, int]] = {
    "q": 0x1, "k": 0x2, "b": 0x3, "p": 0x4, "n": 0x5, "R": 0x6,
    "P": 0x7, "r": 0x8, "B": 0x9, "N": 0xA, "Q": 0xB, "K": 0xC,
}  # fmt: skip

# --- §3 commands written to the operation characteristic
_CMD_REALTIME: Final = 0x21  # 21 01 00: report the position now and on every change
_CMD_LEDS: Final = 0x0A  # 0A 08 + 8 bytes: rank 8 first, bit 7 = a-file
_CMD_BATTERY: Final = 0x29  # 29 01 00 → 2A 02 <level> <x>
_ANSWER_BATTERY: Final = 0x2A
_CHARGING: Final = 0x80


class ChessnutEmulator(RadioBoard):
    """A Chessnut Air on a virtual radio; squares are names in the player's frame.

    Satisfies :class:`drivers.emulation.EmulatedBoard` (``chessnut:`` + :attr:`address`) and
    :class:`drivers.ble.radio.Peripheral`. Without a ``radio`` it serves one of its own.
    """

    scheme: Final = "chessnut"

    def __init__(
        self,
        *,
        radio: VirtualRadio | None = None,
        address: str = "EC:1B:00:00:C0:01",
        name: str = "Chessnut Air",
        position: str | None = None,
        rotated: bool = False,
        battery: int = 87,
        charging: bool = False,
        rssi: int = -58,
    ) -> None:
        if not 0 <= battery <= 100:
            raise ValueError(f"battery must be 0..100 percent: {battery!r}")
        super().__init__(
            radio=radio,
            address=address,
            advertisement=Advertisement(
                name=name, manufacturer_data={_COMPANY_ID: b"\x01\x00"}, rssi=rssi
            ),
            position=position,
            rotated=rotated,
        )
        self.battery_level = battery
        self.charging = charging
        self._reporting = False
        self._started = time.monotonic()
        self.lit: frozenset[str] = frozenset()
        """Squares (player's frame) the host has lit."""
        self.written: list[bytes] = []
        """Every command the host wrote, in order."""

    # -- Peripheral (what the radio sees) ---------------------------------------------------------

    @property
    def services(self) -> Sequence[Service]:
        return (
            Service(_FEN_SERVICE, (Characteristic(_FEN_NOTIFY, ("notify",)),)),
            Service(
                _OP_SERVICE,
                (
                    Characteristic(_OP_WRITE, ("write", "write-without-response")),
                    Characteristic(_OP_NOTIFY, ("notify",)),
                ),
            ),
            Service(_OTHER_SERVICE, ()),
        )

    def on_connect(self, central: Central) -> None:
        self._reporting = False
        super().on_connect(central)

    def on_disconnect(self) -> None:
        self._reporting = False
        super().on_disconnect()

    def on_write(self, uuid: str, value: bytes) -> None:
        if uuid != _OP_WRITE or not value:
            return
        self.written.append(value)
        command = value[0]
        if command == _CMD_REALTIME:
            self._reporting = True
            self._report()
        elif command == _CMD_LEDS and len(value) == 10:
            self.lit = frozenset(
                chess.square_name(self.frame(chess.square(file, 7 - rank)))
                for rank, byte in enumerate(value[2:])
                for file in range(8)
                if byte & (0x80 >> file)
            )
        elif command == _CMD_BATTERY:
            level = self.battery_level | (_CHARGING if self.charging else 0)
            self.notify(_OP_NOTIFY, bytes([_ANSWER_BATTERY, 2, level, int(self.charging)]))

    # -- the board's reports ----------------------------------------------------------------------

    def on_square_changed(self, square: chess.Square) -> None:
        """The board reports its whole position again."""
        self._report()

    def _report(self) -> None:
        if self._reporting:
            self.notify(_FEN_NOTIFY, self._position_frame())

    def _position_frame(self) -> bytes:
        """§3: 01 24, then h8, g8 ... a1 two to a byte (low nibble first), then 4 bytes."""
        nibbles = [
            _NIBBLES.get(self.pieces.get(chess.square(7 - i % 8, 7 - i // 8), ""), 0)
            for i in range(64)
        ]
        body = bytes(nibbles[i] | nibbles[i + 1] << 4 for i in range(0, 64, 2))
        uptime = int(time.monotonic() - self._started) & 0xFFFF
        return _POSITION_HEADER + body + uptime.to_bytes(2, "little") + bytes(2)
