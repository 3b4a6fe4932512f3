"""A Millennium ChessLink board served on a pseudo-terminal.

Used by the integration tests and ``chessbridge emulate millennium``. A host opens
:attr:`MillenniumEmulator.path` as it would open the board's USB serial port.

Everything here is built from the vendor's protocol text as board-protocols.md §4 restates it,
in this module's own tables; nothing is imported from the codec, so the two cannot share a bug.
The board works in the vendor's own frame: status character 0 and LED 1 are at the A8 corner of
that frame. A board set up the usual way has that frame turned round against the players' (the
host programs observe h1 first), so the players' h1 is the vendor frame's A8; set up from
Black's side (``rotated``), the two frames agree.

Behaviour in brief: every byte carries 7 bits and an odd-parity bit; a command is taken only if
its parity and block check are right. The board scans every ``E2ROM[01]`` × 2.048 ms and
reports its status as ``E2ROM[02]`` says (every scan by default, on change, debounced, timed,
or never). The E2ROM survives a power cycle (unplug); the LEDs do not. Time runs ``speed``
times faster than real time (the scans too).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Final

import chess

from drivers._pty import PtyBoard

# --- §4: characters, block check, commands -----------------------------------------------------
_PARITY: Final = 0x80
_MASK: Final = 0x7F
_HEX: Final = "0123456789ABCDEF"
_COMMAND_LENGTHS: Final[dict[str, int]] = {
    # letter: total length with the 2 check digits
    "S": 3,
    "L": 1 + 2 + 81 * 2 + 2,
    "X": 3,
    "T": 3,
    "V": 3,
    "W": 1 + 2 + 2 + 2,
    "R": 1 + 2 + 2,
}
_STALE_PARTIAL_COMMAND: Final = 1.0  # seconds; a half-received command is dropped after this
_RESET_STARTUP: Final = 3.0  # §4 T: "a start-up delay of 3 seconds"
_RECEIVED_LIMIT: Final = 100_000

# --- §4: E2ROM ---------------------------------------------------------------------------------
_E2_SCAN_TIME: Final = 0x01
_E2_AUTO_REPORTS: Final = 0x02
_E2_REPORT_TIME: Final = 0x03
_E2_LED_BRIGHTNESS: Final = 0x04
_SCAN_UNIT: Final = 0.002048  # seconds per unit of E2ROM[01]
_REPORT_UNIT: Final = 0.004096  # seconds per unit of E2ROM[03]
_MIN_SCAN_TIME: Final = 15  # "anything less than this will set 20"
_DEFAULT_SCAN_TIME: Final = 20
_REPORT_EVERY_SCAN: Final = 0
_REPORT_NEVER: Final = 1
_REPORT_TIMED: Final = 2
_REPORT_ON_CHANGE: Final = 3
_DEBOUNCE_SCANS: Final[dict[int, int]] = {4: 2, 5: 3, 6: 4, 7: 5}

# --- §4: squares and LEDs (the vendor frame) ---------------------------------------------
_EMPTY: Final = "."
_PIECES: Final = frozenset("KQRBNPkqrbnp")
_LED_GRID: Final = 9  # LED 1 at the A8 corner, 9 at A1, 73 at H8, 81 at H1


def _with_parity(char: str) -> int:
    code = ord(char)
    return code | _PARITY if bin(code).count("1") % 2 == 0 else code


def _message(text: str) -> bytes:
    """``text`` with its block check (XOR of the characters, 2 hex digits), odd parity."""
    check = 0
    for char in text:
        check ^= ord(char)
    return bytes(_with_parity(c) for c in f"{text}{check:02X}")


def _vendor_index(file: int, rank: int) -> int:
    """Status index of a square in the vendor frame: A8 first, then B8 ... H8, A7 ... H1."""
    return (7 - rank) * 8 + file


def _led_index(file_edge: int, rank_edge: int) -> int:
    """0-based LED at a corner of the vendor frame (file edge 0..8 from A, rank edge 0..8 from
    the first rank): LED 1 (index 0) at A8's outer corner, 9 at A1's, 73 at H8's."""
    return file_edge * _LED_GRID + (8 - rank_edge)


@dataclass(slots=True)
class _Scanner:
    """When the board reports: the last scanned board, how long it has stood, what was sent."""

    scanned: str = ""
    stable_scans: int = 0
    reported: str = ""


class MillenniumEmulator(PtyBoard):
    """A Millennium board on a pty; squares are names in the players' frame.

    Satisfies :class:`drivers.emulation.EmulatedBoard` (``millennium:`` + :attr:`address`).
    """

    scheme: Final = "millennium"

    def __init__(
        self,
        *,
        position: str | None = None,
        speed: float = 1.0,
        rotated: bool = False,
        version: tuple[int, int] = (1, 3),
    ) -> None:
        if speed <= 0:
            raise ValueError(f"speed must be positive: {speed!r}")
        if not all(0 <= v <= 0xFF for v in version):
            raise ValueError(f"version out of range: {version!r}")
        self.received: list[str] = []
        """Every command taken, as text without its check digits."""
        self.leds: list[int] = [0] * (_LED_GRID * _LED_GRID)
        """The LED codes (8-slot patterns) last set, LED 1 first."""
        self.e2rom = bytearray(256)
        self.e2rom[_E2_SCAN_TIME] = _DEFAULT_SCAN_TIME
        self.e2rom[_E2_AUTO_REPORTS] = _REPORT_EVERY_SCAN
        self.e2rom[_E2_REPORT_TIME] = 0x40
        self.e2rom[_E2_LED_BRIGHTNESS] = 0x0F
        self._speed = speed
        self._rotated = rotated
        self._version = version
        board = chess.BaseBoard(
            chess.STARTING_BOARD_FEN if position is None else position.split()[0]
        )
        self._squares = [_EMPTY] * 64  # vendor-frame status order
        for square, piece in board.piece_map().items():
            self._squares[self._index(chess.square_name(square))] = piece.symbol()
        self._pending = ""
        self._pending_since = 0.0
        self._booting_until = 0.0
        self._scanner = _Scanner()
        self._scan_handle: asyncio.TimerHandle | None = None
        super().__init__("millennium")

    # --- the cable (drivers._pty.PtyBoard) -----------------------------------------------------

    def _plugged_in(self) -> None:
        """The board powers up (after a power cycle: E2ROM kept, LEDs off)."""
        self._power_up()

    def _pulled_out(self) -> None:
        """The board loses power; the host's reads fail."""
        self._stop_scanning()

    # --- physical use cases ---------------------------------------------------------------------

    @property
    def position(self) -> dict[str, str]:
        """The physical board: square name (players' frame) → piece letter."""
        return {
            name: self._squares[self._index(name)]
            for name in chess.SQUARE_NAMES
            if self._squares[self._index(name)] != _EMPTY
        }

    @property
    def lit(self) -> set[str]:
        """Squares (players' frame) whose four corner LEDs are all on."""
        out = set()
        for name in chess.SQUARE_NAMES:
            file, rank = self._vendor_square(name)
            corners = [_led_index(file + df, rank + dr) for df in (0, 1) for dr in (0, 1)]
            if all(self.leds[i] for i in corners):
                out.add(name)
        return out

    async def lift(self, square: str) -> str | None:
        """Lift the piece off ``square``; returns its letter, or None if the square was empty."""
        index = self._index(square)
        piece = self._squares[index]
        self._squares[index] = _EMPTY
        self._schedule_scan()
        await asyncio.sleep(0)
        return None if piece == _EMPTY else piece

    async def place(self, square: str, piece: str) -> None:
        """Put ``piece`` (a FEN letter) on ``square``, replacing whatever stood there."""
        if piece not in _PIECES:
            raise ValueError(f"unknown piece letter: {piece!r}")
        self._squares[self._index(square)] = piece
        self._schedule_scan()
        await asyncio.sleep(0)

    # --- the board's reactions ------------------------------------------------------------------

    def _power_up(self) -> None:
        self.leds = [0] * len(self.leds)
        self._pending = ""
        self._scanner = _Scanner()
        self._booting_until = 0.0
        self._schedule_scan()

    def _on_host_bytes(self, data: bytes, now: float) -> None:
        if self._pending and now - self._pending_since > _STALE_PARTIAL_COMMAND / self._speed:
            self._pending = ""
        for byte in data:
            if bin(byte).count("1") % 2 == 0:
                self._pending = ""  # a parity error: the command it was part of is void
                continue
            char = chr(byte & _MASK)
            if not self._pending:
                if char not in _COMMAND_LENGTHS:
                    continue
                self._pending_since = now
            self._pending += char
            if len(self._pending) == _COMMAND_LENGTHS[self._pending[0]]:
                command, self._pending = self._pending, ""
                self._take(command, now)

    def _take(self, text: str, now: float) -> None:
        """§4: a command is actioned only if its block check is right (and the board is up)."""
        body, check = text[:-2], text[-2:]
        expected = 0
        for char in body:
            expected ^= ord(char)
        if check != f"{expected:02X}" or now < self._booting_until:
            return
        self.received.append(body)
        if len(self.received) > _RECEIVED_LIMIT:
            del self.received[: _RECEIVED_LIMIT // 2]
        letter, data = body[0], body[1:]
        if any(c not in _HEX for c in data):
            return
        if letter == "S":
            self._send_status()
        elif letter == "V":
            major, minor = self._version
            self._port.send(_message(f"v{major:02X}{minor:02X}"))
        elif letter == "X":
            self.leds = [0] * len(self.leds)
            self._port.send(_message("x"))
        elif letter == "L":
            self.leds = [int(data[i : i + 2], 16) for i in range(2, len(data), 2)]
            self._port.send(_message("l"))
        elif letter == "W":
            address, value = int(data[:2], 16), int(data[2:], 16)
            self.e2rom[address] = value
            self._port.send(_message(f"w{data}"))
            self._schedule_scan()
        elif letter == "R":
            address = int(data, 16)
            self._port.send(_message(f"r{data}{self.e2rom[address]:02X}"))
        elif letter == "T":
            self._stop_scanning()
            self.leds = [0] * len(self.leds)
            self._scanner = _Scanner()
            self._booting_until = now + _RESET_STARTUP / self._speed
            loop = self._port.loop
            if loop is not None:
                loop.call_later(_RESET_STARTUP / self._speed, self._schedule_scan)

    def _send_status(self) -> None:
        board = "".join(self._squares)
        self._scanner.reported = board
        self._port.send(_message("s" + board))

    # --- scanning ---------------------------------------------------------------------------------

    def _scan_period(self) -> float:
        units = self.e2rom[_E2_SCAN_TIME]
        units = units if units >= _MIN_SCAN_TIME else _DEFAULT_SCAN_TIME
        return units * _SCAN_UNIT / self._speed

    def _schedule_scan(self) -> None:
        loop = self._port.loop
        if loop is None or not self._port.is_plugged or self._scan_handle is not None:
            return
        if time.monotonic() < self._booting_until:
            return
        mode = self.e2rom[_E2_AUTO_REPORTS] & 0x07
        if mode == _REPORT_NEVER:
            return
        delay = self._scan_period()
        if mode == _REPORT_TIMED:
            delay = max(self.e2rom[_E2_REPORT_TIME], 1) * _REPORT_UNIT / self._speed
        self._scan_handle = loop.call_later(delay, self._scan)

    def _stop_scanning(self) -> None:
        if self._scan_handle is not None:
            self._scan_handle.cancel()
            self._scan_handle = None

    def _scan(self) -> None:
        """One scan: report as E2ROM[02] says; scan again while anything is left to report."""
        self._scan_handle = None
        mode = self.e2rom[_E2_AUTO_REPORTS] & 0x07
        board = "".join(self._squares)
        scanner = self._scanner
        if board != scanner.scanned:
            scanner.scanned, scanner.stable_scans = board, 1
        else:
            scanner.stable_scans += 1
        needed = 1 if mode == _REPORT_ON_CHANGE else _DEBOUNCE_SCANS.get(mode, 0)
        if mode in (_REPORT_EVERY_SCAN, _REPORT_TIMED):
            self._send_status()
            self._schedule_scan()
        elif needed and board != scanner.reported:
            if scanner.stable_scans >= needed:
                self._send_status()
            else:
                self._schedule_scan()

    # --- square mapping -------------------------------------------------------------------------

    def _vendor_square(self, name: str) -> tuple[int, int]:
        """A players' square → (file, rank) in the vendor frame, turned round unless rotated."""
        square = chess.parse_square(name)
        if not self._rotated:
            square = 63 - square
        return chess.square_file(square), chess.square_rank(square)

    def _index(self, name: str) -> int:
        return _vendor_index(*self._vendor_square(name))
