"""A DGT Pegasus on the virtual radio (:mod:`drivers.ble.radio`), played by hand.

The host reaches it as it would a real Pegasus: Nordic UART service, DGT framing, occupancy
only. The emulator builds every message from its own tables below, each citing the section of
``board-protocols.md`` it restates, and imports nothing from the Pegasus or DGT codecs. Like the
board, it cuts a message longer than the connection's MTU allows into several notifications.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Final

import chess

from drivers.ble.peripheral import RadioBoard
from drivers.ble.radio import Advertisement, Central, Characteristic, Service, VirtualRadio

# --- §2 GATT: Nordic UART Service
_NUS: Final = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
_RX: Final = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"  # host writes
_TX: Final = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"  # board notifies

# --- §1.3 / §2 commands the board takes (single bytes, but for the two sized ones)
_CMD_RESET: Final = 0x40  # no reply; idle
_CMD_SEND_BRD: Final = 0x42
_CMD_UPDATE_BRD: Final = 0x44
_CMD_TRADEMARK: Final = 0x47
_CMD_BATTERY: Final = 0x4C
_CMD_VERSION: Final = 0x4D
_CMD_LEDS: Final = 0x60  # 60 <len> <len bytes>: 05 speed mode brightness squares... 00; off 00 00
_CMD_DEVELOPER_KEY: Final = 0x63  # 63 <len> <len bytes>; no reply
_SIZED: Final = frozenset({_CMD_LEDS, _CMD_DEVELOPER_KEY})
_LEDS_ON: Final = 0x05

# --- §1.4 framing and §1.5 / §2 messages
_MSG_BOARD_DUMP: Final = 0x86
_MSG_FIELD_UPDATE: Final = 0x8E
_MSG_TRADEMARK: Final = 0x92
_MSG_VERSION: Final = 0x93
_MSG_BATTERY: Final = 0xA0
_OCCUPIED: Final = 0x01  # §2: 0x00 empty, non-zero occupied (no identity)
_EMPTY: Final = 0x00
_VERSION: Final = bytes([1, 2])  # §1.5 note: a Pegasus answers VERSION with major 1
_DISCHARGING: Final = 0x02  # §2: battery status byte (DCMA sends 2; 1 = charging for MONO)
_CHARGING: Final = 0x01


def _frame(message_id: int, payload: bytes) -> bytes:
    """§1.4: id, total length in two 7-bit bytes, payload (every byte < 0x80)."""
    size = len(payload) + 3
    return bytes([message_id, size >> 7 & 0x7F, size & 0x7F]) + payload


def _index(square: chess.Square) -> int:
    """§1.6: python-chess square → DGT index (a8 = 0 ... h1 = 63)."""
    return (7 - chess.square_rank(square)) * 8 + chess.square_file(square)


class PegasusEmulator(RadioBoard):
    """A DGT Pegasus on a virtual radio; squares are names in the player's frame.

    Satisfies :class:`drivers.emulation.EmulatedBoard` (``pegasus:`` + :attr:`address`) and
    :class:`drivers.ble.radio.Peripheral`. Without a ``radio`` it serves one of its own. It keeps
    the pieces a person put down (for :attr:`position`) but reports only that a square is taken.
    """

    scheme: Final = "pegasus"

    def __init__(
        self,
        *,
        radio: VirtualRadio | None = None,
        address: str = "D0:6A:00:00:0A:51",
        serial: str = "12345",
        position: str | None = None,
        rotated: bool = False,
        battery: int = 72,
        charging: bool = False,
        rssi: int = -66,
    ) -> None:
        super().__init__(
            radio=radio,
            address=address,
            advertisement=Advertisement(name=f"DGT_PEGASUS_{serial}", services=(_NUS,), rssi=rssi),
            position=position,
            rotated=rotated,
        )
        self._serial = serial
        self.battery_level = battery
        self.charging = charging
        self._updating = False
        self._pending = bytearray()
        self.lit: frozenset[str] = frozenset()
        """Squares (player's frame) the host has lit."""
        self.received: list[bytes] = []
        """Every command the host sent, in order."""

    # -- EmulatedBoard ----------------------------------------------------------------------------

    async def place(self, square: str, piece: str) -> None:
        """Put ``piece`` on ``square``; the board reports the square taken (not which piece)."""
        chess.Piece.from_symbol(piece)  # a FEN letter, or ValueError
        sq = self.square(square)
        was = self.pieces.get(sq)
        self.pieces[sq] = piece
        if was is not None:
            # A hand that replaces a piece lifts it first: the square reads empty for a moment.
            self._field(sq, _EMPTY)
        self._field(sq, _OCCUPIED)
        await asyncio.sleep(0)

    # -- Peripheral ----------------------------------------------------------------------------

    @property
    def services(self) -> Sequence[Service]:
        return (
            Service(
                _NUS,
                (
                    Characteristic(_RX, ("write", "write-without-response")),
                    Characteristic(_TX, ("notify",)),
                ),
            ),
        )

    def on_connect(self, central: Central) -> None:
        self._updating = False
        self._pending.clear()
        super().on_connect(central)

    def on_disconnect(self) -> None:
        self._updating = False
        super().on_disconnect()

    def on_write(self, uuid: str, value: bytes) -> None:
        if uuid != _RX:
            return
        self._pending += value
        while self._pending:
            first = self._pending[0]
            size = 1
            if first in _SIZED:
                if len(self._pending) < 2:
                    return
                size = 2 + self._pending[1]
            if len(self._pending) < size:
                return
            command = bytes(self._pending[:size])
            del self._pending[:size]
            self.received.append(command)
            self._execute(command)

    # -- the board's reactions ------------------------------------------------------------------

    def _execute(self, command: bytes) -> None:
        code = command[0]
        if code == _CMD_RESET:
            self._updating = False
        elif code == _CMD_SEND_BRD:
            self.notify(_TX, _frame(_MSG_BOARD_DUMP, self._dump()))
        elif code == _CMD_UPDATE_BRD:
            self._updating = True
        elif code == _CMD_VERSION:
            self.notify(_TX, _frame(_MSG_VERSION, _VERSION))
        elif code == _CMD_TRADEMARK:
            text = (
                "Digital Game Technology\r\nCopyright (c) 2021 DGT\r\n"
                "software version: 1.02, build: 210722\r\n"
                f"hardware version: 1.00, serial no: {self._serial}"
            )
            self.notify(_TX, _frame(_MSG_TRADEMARK, text.encode("ascii")))
        elif code == _CMD_BATTERY:
            status = _CHARGING if self.charging else _DISCHARGING
            payload = bytes([self.battery_level, 0x7F, 0x7F, 0, 0, 0, 0, 0, status])
            self.notify(_TX, _frame(_MSG_BATTERY, payload))
        elif code == _CMD_LEDS:
            body = command[2:]
            if body[:1] == bytes([_LEDS_ON]) and len(body) >= 5:
                self.lit = frozenset(
                    chess.square_name(self.frame(chess.square(i % 8, 7 - i // 8)))
                    for i in body[4:-1]
                    if i < 64
                )
            else:
                self.lit = frozenset()

    def _dump(self) -> bytes:
        codes = bytearray(64)
        for sq in self.pieces:
            codes[_index(sq)] = _OCCUPIED
        return bytes(codes)

    def on_square_changed(self, square: chess.Square) -> None:
        """A piece lifted: the board reports the square empty (:meth:`place` reports its own)."""
        self._field(square, _OCCUPIED if square in self.pieces else _EMPTY)

    def _field(self, square: chess.Square, code: int) -> None:
        if self._updating:
            self.notify(_TX, _frame(_MSG_FIELD_UPDATE, bytes([_index(square), code])))
