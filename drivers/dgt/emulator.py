"""A DGT e-board with a DGT 3000 clock behind it, served on a pseudo-terminal.

Used by the integration tests, ``chessbridge demo`` and ``chessbridge emulate dgt``. A host opens
:attr:`DgtEmulator.path` with pyserial exactly as it would open a real board.

The emulator builds every frame from its own tables below, each citing the section of
``board-protocols.md`` it restates. It deliberately imports nothing from the DGT codec, so the two
cannot share a bug.

Layout follows pyatv's fake devices: a *State* (:class:`_Clock`, :class:`_Eeprom` and the piece
codes), a *Service* (the pty, :class:`drivers._pty.PtyDevice`, shared by every serial emulator)
and the *UseCases* (the public methods of :class:`DgtEmulator`).

Behaviour in brief (§1.2): power-up in bus mode, silent; any single-board command switches to IDLE
and is executed; 0x44/0x43/0x4B select the update modes; a bus command (MSB set) or 0x4A returns to
bus mode without being executed. The board keeps a cyclic EEPROM log of every field change and
lever press while powered, also while no host is connected (§1.11). The clock counts down in real
time scaled by ``speed``; the side whose lever is high runs (§1.7).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Literal

import chess

from drivers._pty import PtyBoard

Side = Literal["left", "right"]
Mode = Literal["bus", "idle", "update_board", "update", "update_nice"]
Memory = Literal["log", "empty", "partial", "cut", "silent"]
"""How the board answers EE_MOVES (§1.11): its whole log; only EE_EOF, as a board whose store
was erased or that keeps none; the log's newest part only, as a cyclic store that wrapped over
its power-up listing (nothing left to read it forward from); the first half of the message and
then nothing, as an answer cut short; or not at all, as firmware without the command."""

# --- §1.3 host → board commands (single-board mode)
_CMD_SEND_RESET: Final = 0x40
_CMD_SEND_CLK: Final = 0x41
_CMD_SEND_BRD: Final = 0x42
_CMD_SEND_UPDATE: Final = 0x43
_CMD_SEND_UPDATE_BRD: Final = 0x44
_CMD_RETURN_SERIALNR: Final = 0x45
_CMD_RETURN_BUSADRES: Final = 0x46
_CMD_SEND_TRADEMARK: Final = 0x47
_CMD_SEND_EE_MOVES: Final = 0x49
_CMD_TO_BUSMODE: Final = 0x4A
_CMD_SEND_UPDATE_NICE: Final = 0x4B
_CMD_SEND_BATTERY_STATUS: Final = 0x4C
_CMD_SEND_VERSION: Final = 0x4D
_CMD_RETURN_LONG_SERIALNR: Final = 0x55
_CMD_SET_LEDS: Final = 0x60  # §1.9: Revelation II only; consumed and ignored here
_CMD_CLOCK_MESSAGE: Final = 0x2B  # §1.8 wrapper
# §1.8/§1.9: these are followed by a size byte and that many bytes.
_SIZED_COMMANDS: Final = frozenset({_CMD_CLOCK_MESSAGE, _CMD_SET_LEDS})
_MAX_SIZE_BYTE: Final = 0x0F  # §1.8: the longest defined clock command (REV2 ASCII)
# §1.12: a bus command is always 4 bytes: cmd (MSB set), addr_hi, addr_lo, checksum.
_BUS_COMMAND_LENGTH: Final = 4
_STALE_PARTIAL_COMMAND: Final = 1.0  # seconds; a half-received command is dropped after this
_RECEIVED_LIMIT: Final = 100_000  # commands kept in DgtEmulator.received

# --- §1.4 framing, §1.5 board → host messages
_HEADER_LENGTH: Final = 3
_MSG_BOARD_DUMP: Final = 0x86
_MSG_BWTIME: Final = 0x8D
_MSG_FIELD_UPDATE: Final = 0x8E
_MSG_EE_MOVES: Final = 0x8F
_MSG_BUSADRES: Final = 0x90
_MSG_SERIALNR: Final = 0x91
_MSG_TRADEMARK: Final = 0x92
_MSG_VERSION: Final = 0x93
_MSG_BATTERY_STATUS: Final = 0xA0
_MSG_LONG_SERIALNR: Final = 0xA2
# §1.5 BATTERY_STATUS payload (9 bytes, 12 total): 100 %, run time n/a (0x7F), on-time 0:00,
# standby 0 d 0:00, status 0 (neither charging nor discharging).
_BATTERY_PAYLOAD: Final = bytes([100, 0x7F, 0x7F, 0, 0, 0, 0, 0, 0])

# --- §1.6 squares and piece codes (index 0 = a8 ... 63 = h1, board frame)
_EMPTY: Final = 0x00
_PIECE_CODES: Final[dict[str, int]] = {
    "P": 0x01, "R": 0x02, "N": 0x03, "B": 0x04, "K": 0x05, "Q": 0x06,
    "p": 0x07, "r": 0x08, "n": 0x09, "b": 0x0A, "k": 0x0B, "q": 0x0C,
}  # fmt: skip
_PIECE_SYMBOLS: Final[dict[int, str]] = {code: symbol for symbol, code in _PIECE_CODES.items()}

# --- §1.7 BWTIME (0x8D): bytes 3-5 right side, 6-8 left side, 9 status
_TIME_HOURS_MASK: Final = 0x0F
_TIME_FLAG_BLOCKED: Final = 0x10  # D4 flag fallen and clock blocked at 0
_TIME_PER_MOVE: Final = 0x20  # D5 Fischer/Bronstein indicator
_TIME_FLAG_SHOWN: Final = 0x40  # D6 flag fallen shown
_MAX_DISPLAY_SECONDS: Final = 9 * 3600 + 59 * 60 + 59  # hours are 0-9
_STATUS_RUNNING: Final = 0x01  # D0
_STATUS_RIGHT_HIGH: Final = 0x02  # D1: 1 = right lever high, 0 = left lever high
_STATUS_LEFT_TURN: Final = 0x08  # D3, as in the real captures (§1.7 [conflict])
_STATUS_RIGHT_TURN: Final = 0x10  # D4, as in the real captures (§1.7 [conflict])
_STATUS_NO_CLOCK: Final = 0x20  # D5: no clock connected, reading invalid
# §1.7 clock-ack variant: low nibble 0x0A in byte 3 or byte 6 marks an ack. The doc gives
# ack0 = b4 | b6.D4<<7, ack1 = b5 | b6.D5<<7, ack2 = b7 | b3.D4<<7, ack3 = b8 | b3.D5<<7.
_ACK_MARKER: Final = 0x0A
_ACK_OK: Final = 0x10
_UPDATE_PERIOD: Final = 1.0  # §1.2 UPDATE: BWTIME at least every second

# --- §1.8 clock commands: 0x2B, size, 0x03, cmd, payload..., 0x00
_CLOCK_WRAP: Final = 0x03
_CLOCK_TERMINATOR: Final = 0x00
_CLOCK_DISPLAY: Final = 0x01
_CLOCK_ICONS: Final = 0x02
_CLOCK_END: Final = 0x03
_CLOCK_BUTTONS: Final = 0x08
_CLOCK_VERSION: Final = 0x09
_CLOCK_SETNRUN: Final = 0x0A
_CLOCK_BEEP: Final = 0x0B
_CLOCK_ASCII: Final = 0x0C
_CLOCK_SIZES: Final[dict[int, int]] = {
    _CLOCK_DISPLAY: 0x0B, _CLOCK_ICONS: 0x0B, _CLOCK_END: 0x03, _CLOCK_BUTTONS: 0x03,
    _CLOCK_VERSION: 0x03, _CLOCK_SETNRUN: 0x0A, _CLOCK_BEEP: 0x04, _CLOCK_ASCII: 0x0C,
}  # fmt: skip
_SETNRUN_LEFT: Final = 0x01
_SETNRUN_RIGHT: Final = 0x02
_SETNRUN_PAUSE: Final = 0x04
_SETNRUN_TOGGLE: Final = 0x08

# --- §1.11 EEPROM move store
_EE_CAPACITY: Final = 0x1F00  # bytes, including the closing EE_EOF
_EE_FIELD: Final = 0x40  # 0 1 0 r nnnn, then the square
_EE_CLOCK: Final = 0x60  # 0 1 1 f hhhh, then BCD minutes, BCD seconds
_EE_RAPID: Final = 0x10  # r: < ~250 ms since the previous tag
_EE_RAPID_WINDOW: Final = 0.25
_EE_LEFT_DISPLAY: Final = 0x10  # f
_EE_POWERUP: Final = 0x6A
_EE_EOF: Final = 0x6B
_EE_EMPTYBOARD: Final = 0x6D
_EE_BEGINPOS: Final = 0x6F
_EE_BEGINPOS_ROT: Final = 0x7A
_EE_NOP: Final = 0x7F
_LISTING_LOST: Final = 16  # pieces of the power-up listing a wrapped store has lost
_EE_BEGINPOS_HYSTERESIS: Final = 2  # more than this many pieces must leave before a new tag


def _bcd(value: int) -> int:
    return (value // 10) << 4 | value % 10


def _frame(message_id: int, payload: bytes) -> bytes:
    """§1.4: id, length bits 13..7, length bits 6..0 (total length), payload bytes < 0x80."""
    if any(b & 0x80 for b in payload):
        raise ValueError(f"payload byte with MSB set in message 0x{message_id:02X}: {payload!r}")
    length = len(payload) + _HEADER_LENGTH
    return bytes([message_id, (length >> 7) & 0x7F, length & 0x7F]) + payload


def _board_index(square: chess.Square) -> int:
    """§1.6: python-chess square (a1 = 0) → DGT index (a8 = 0) in an unrotated frame."""
    return (7 - chess.square_rank(square)) * 8 + chess.square_file(square)


def _codes_for(board_fen: str) -> bytes:
    codes = bytearray(64)
    for square, piece in chess.BaseBoard(board_fen).piece_map().items():
        codes[_board_index(square)] = _PIECE_CODES[piece.symbol()]
    return bytes(codes)


_START_CODES: Final = _codes_for(chess.STARTING_BOARD_FEN)
_START_CODES_ROTATED: Final = _START_CODES[::-1]


@dataclass(slots=True)
class _Clock:
    """DGT 3000 time display; times are clock seconds, ``now`` is real monotonic seconds."""

    speed: float
    left: float = 0.0
    right: float = 0.0
    lever_high: Side = "left"
    running: Side | None = None
    toggle_on_lever: bool = True
    increment: float = 0.0
    fallen: set[Side] = field(default_factory=set)
    anchor: float = 0.0

    def advance(self, now: float) -> None:
        side = self.running
        spent = max(0.0, now - self.anchor) * self.speed
        self.anchor = now
        if side is None:
            return
        rest = self.remaining(side) - spent
        if rest <= 0.0:
            rest = 0.0
            self.fallen.add(side)
            self.running = None
        self._store(side, rest)

    def remaining(self, side: Side) -> float:
        return self.left if side == "left" else self.right

    def shown(self, side: Side) -> int:
        """Displayed whole seconds: a side reads 0:00 exactly when its flag falls."""
        return min(_MAX_DISPLAY_SECONDS, max(0, math.ceil(self.remaining(side) - 1e-6)))

    def next_change_in(self) -> float | None:
        """Real seconds until the running side's display changes (call right after advance)."""
        if self.running is None:
            return None
        rest = self.remaining(self.running)
        return (rest - max(self.shown(self.running) - 1, 0)) / self.speed + 1e-4

    def time_bytes(self, side: Side) -> bytes:
        shown = self.shown(side)
        hours, minutes, seconds = shown // 3600, shown % 3600 // 60, shown % 60
        flags = _TIME_PER_MOVE if self.increment > 0 else 0
        if side in self.fallen:
            flags |= _TIME_FLAG_BLOCKED | _TIME_FLAG_SHOWN
        return bytes([(hours & _TIME_HOURS_MASK) | flags, _bcd(minutes), _bcd(seconds)])

    def status(self) -> int:
        status = _STATUS_RIGHT_HIGH if self.lever_high == "right" else 0
        if self.running is not None:
            status |= _STATUS_RUNNING
            status |= _STATUS_LEFT_TURN if self.running == "left" else _STATUS_RIGHT_TURN
        return status

    def set(self, left: float, right: float, running: Side | None, now: float) -> None:
        self.advance(now)
        self.left, self.right, self.running = float(left), float(right), running
        self.fallen.clear()

    def press(self, side: Side, now: float) -> bool:
        """That side's button goes down; False when it already was down."""
        if self.lever_high != side:
            return False
        self.advance(now)
        other: Side = "right" if side == "left" else "left"
        self.lever_high = other
        if not self.toggle_on_lever or self.fallen:
            return True
        if self.running == side:
            self._store(side, self.remaining(side) + self.increment)
            self.running = other
        elif self.running is None and self.remaining(other) > 0.0:
            self.running = other  # the first press of a paused-but-set clock starts it
        return True

    def _store(self, side: Side, value: float) -> None:
        if side == "left":
            self.left = value
        else:
            self.right = value


class _Eeprom:
    """§1.11 cyclic store: whole tags, oldest dropped first, EE_EOF appended on read-out."""

    def __init__(self, speed: float) -> None:
        self._speed = speed
        self._tags: deque[bytes] = deque()
        self._size = 0
        self._last_at: float | None = None

    def append(self, tag: bytes, now: float) -> None:
        self._tags.append(tag)
        self._size += len(tag)
        while self._size > _EE_CAPACITY - 1:
            self._size -= len(self._tags.popleft())
        self._last_at = now

    def field(self, square: int, code: int, now: float) -> None:
        rapid = self._last_at is not None and (now - self._last_at) * self._speed < _EE_RAPID_WINDOW
        self.append(bytes([_EE_FIELD | (_EE_RAPID if rapid else 0) | code, square]), now)

    def payload(self) -> bytes:
        return b"".join(self._tags) + bytes([_EE_EOF])

    def wrapped_payload(self) -> bytes:
        """:meth:`payload` as if the store had wrapped over its last power-up listing: the tags
        after that listing's marker, half of the listing gone with it."""
        tags = list(self._tags)
        markers = [i for i, tag in enumerate(tags) if tag[0] == _EE_POWERUP]
        start = markers[-1] + 1 + _LISTING_LOST if markers else 0
        return b"".join(tags[start:]) + bytes([_EE_EOF])


class _CommandSplitter:
    """Cuts the host's byte stream into commands (§1.3, §1.8, §1.12)."""

    def __init__(self) -> None:
        self._pending = bytearray()
        self._since = 0.0

    def reset(self) -> None:
        self._pending.clear()

    def feed(self, data: bytes, now: float) -> list[bytes]:
        if self._pending and now - self._since > _STALE_PARTIAL_COMMAND:
            self._pending.clear()
        commands: list[bytes] = []
        for byte in data:
            if not self._pending:
                self._since = now
            self._pending.append(byte)
            needed = self._needed(self._pending)
            if len(self._pending) >= needed:
                commands.append(bytes(self._pending))
                self._pending.clear()
        return commands

    @staticmethod
    def _needed(pending: bytearray) -> int:
        first = pending[0]
        if first & 0x80:
            return _BUS_COMMAND_LENGTH
        if first not in _SIZED_COMMANDS:
            return 1
        if len(pending) < 2:
            return 2
        size = pending[1]
        return 2 if size > _MAX_SIZE_BYTE else 2 + size  # oversized: dropped as a unit


class DgtEmulator(PtyBoard):
    """A DGT e-board (+ DGT 3000 clock) on a pty; squares are names in the player's frame.

    Satisfies :class:`drivers.emulation.EmulatedBoard` (``dgt:`` + :attr:`address`).
    """

    scheme: Final = "dgt"

    def __init__(
        self,
        *,
        position: str | None = None,
        clock: bool = True,
        speed: float = 1.0,
        serial: str = "01234",
        version: tuple[int, int] = (1, 7),
        rotated: bool = False,
        clock_version: tuple[int, int] = (2, 2),
        long_serial: str | None = None,
        memory: Memory = "log",
    ) -> None:
        if len(serial) != 5 or not serial.isdigit():
            raise ValueError(f"serial must be 5 ASCII digits: {serial!r}")
        long_serial = serial.rjust(10, "0") if long_serial is None else long_serial
        if len(long_serial) != 10 or not long_serial.isascii():
            raise ValueError(f"long_serial must be 10 ASCII characters: {long_serial!r}")
        if speed <= 0:
            raise ValueError(f"speed must be positive: {speed!r}")
        if not all(0 <= v < 0x80 for v in version) or not all(0 <= v < 16 for v in clock_version):
            raise ValueError(f"version out of range: {version!r}, {clock_version!r}")
        self._mode: Mode = "bus"
        self.memory: Memory = memory
        """How the board answers EE_MOVES; tests may change it at any time."""
        self.received: list[bytes] = []
        self.clock_text: str | None = None
        self.clock_display: bytes | None = None  # last DISPLAY (7-segment) payload
        self.clock_beeps: list[int] = []  # BEEP durations, 64 ms units
        self._rotated = rotated
        self._speed = speed
        self._serial = serial
        self._long_serial = long_serial
        self._version = version
        self._clock_version = clock_version
        self._clock = _Clock(speed=speed, anchor=time.monotonic()) if clock else None
        self._eeprom = _Eeprom(speed)
        board_fen = chess.STARTING_BOARD_FEN if position is None else position.split()[0]
        codes = _codes_for(board_fen)
        self._codes = bytearray(codes[::-1] if rotated else codes)
        self._begin_tagged: bytes | None = None
        super().__init__("dgt")
        self._splitter = _CommandSplitter()
        self._tick_handle: asyncio.TimerHandle | None = None
        self._last_bwtime: bytes | None = None
        self._last_bwtime_at: float | None = None
        self._handlers = self._command_table()
        self._power_up(time.monotonic())

    # --- the cable (drivers._pty.PtyBoard) -----------------------------------------------------

    def _plugged_back(self) -> None:
        """The board restarts in bus mode on its new pty: the host must set it up again."""
        self._mode = "bus"
        self._splitter.reset()

    def _pulled_out(self) -> None:
        """The clock's time reports stop; the host's reads fail."""
        self._cancel_tick()

    # --- the port and the board's state, as tests observe them ----------------------------------

    @property
    def on_write(self) -> Callable[[bytes, float], None] | None:
        """Called with each chunk the host could read, and the loop time it was written."""
        return self._port.on_write

    @on_write.setter
    def on_write(self, callback: Callable[[bytes, float], None] | None) -> None:
        self._port.on_write = callback

    @property
    def last_write_at(self) -> float | None:
        """Loop time of the last bytes written to the host."""
        return self._port.last_write_at

    @property
    def mode(self) -> str:
        """Board mode (§1.2): "bus", "idle", "update_board", "update" or "update_nice"."""
        return self._mode

    @property
    def device(self) -> str | None:
        """The raw pty slave name while plugged in (it may change across plug cycles)."""
        return self._port.device

    @property
    def is_started(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._port.is_started

    # --- physical use cases ---------------------------------------------------------------------

    @property
    def position(self) -> dict[str, str]:
        """The physical board: square name (player's frame) → piece symbol."""
        result: dict[str, str] = {}
        for index, code in enumerate(self._codes):
            if code in _PIECE_SYMBOLS:
                result[self._square_name(index)] = _PIECE_SYMBOLS[code]
        return result

    async def lift(self, square: str) -> str | None:
        """Lift the piece off ``square``; returns its symbol, or None if the square was empty."""
        index = self._index(square)
        symbol = _PIECE_SYMBOLS.get(self._codes[index])
        if self._codes[index] != _EMPTY:
            self._change(index, _EMPTY)
        await asyncio.sleep(0)
        return symbol

    async def place(self, square: str, piece: str) -> None:
        """Put ``piece`` (e.g. "P", "n") on ``square``, replacing whatever stood there."""
        if piece not in _PIECE_CODES:
            raise ValueError(f"unknown piece symbol: {piece!r}")
        index = self._index(square)
        if self._codes[index] != _PIECE_CODES[piece]:
            self._change(index, _PIECE_CODES[piece])
        await asyncio.sleep(0)

    async def press(self, side: str) -> None:
        """Press the clock button on ``side`` ("left" or "right"): that lever goes down.

        Without a clock (``clock=False``) nothing happens.
        """
        if side not in ("left", "right"):
            raise ValueError(f"side must be 'left' or 'right': {side!r}")
        if self._clock is None:
            return  # no clock behind the board: nothing to press (EmulatedBoard)
        now = time.monotonic()
        pressed: Side = "left" if side == "left" else "right"
        if self._clock.press(pressed, now):
            hours, minutes, seconds = self._clock.time_bytes(pressed)
            flag = _EE_LEFT_DISPLAY if pressed == "left" else 0
            tag = bytes([_EE_CLOCK | flag | (hours & _TIME_HOURS_MASK), minutes, seconds])
            self._eeprom.append(tag, now)
            self._tick()
        await asyncio.sleep(0)

    @property
    def has_clock(self) -> bool:
        """Whether a clock is connected (``clock=False``: none)."""
        return self._clock is not None

    def set_clock(
        self, left: int, right: int, *, running: str | None = None, increment: int = 0
    ) -> None:
        """Set both displays (seconds); ``running`` side starts now, None leaves it paused."""
        if self._clock is None:
            raise RuntimeError("no clock connected (clock=False)")
        if left < 0 or right < 0 or increment < 0:
            raise ValueError(f"negative clock setting: {left!r}, {right!r}, {increment!r}")
        if running not in ("left", "right", None):
            raise ValueError(f"running must be 'left', 'right' or None: {running!r}")
        side: Side | None = "left" if running == "left" else "right" if running else None
        self._clock.set(left, right, side, time.monotonic())
        self._clock.increment = float(increment)
        self._clock.toggle_on_lever = True
        if side is not None:
            self._clock.lever_high = side
        self._tick()

    @property
    def clock_times(self) -> tuple[int, int] | None:
        """Displayed (left, right) seconds, or None without a clock."""
        if self._clock is None:
            return None
        self._clock.advance(time.monotonic())
        return self._clock.shown("left"), self._clock.shown("right")

    @property
    def clock_running(self) -> str | None:
        """The side whose time is counting down, or None."""
        if self._clock is None:
            return None
        self._clock.advance(time.monotonic())
        return self._clock.running

    # --- the board's reactions ------------------------------------------------------------------

    def _power_up(self, now: float) -> None:
        """§1.11: 3 × EE_NOP, EE_POWERUP, then a field tag for every piece."""
        for tag in (_EE_NOP, _EE_NOP, _EE_NOP, _EE_POWERUP):
            self._eeprom.append(bytes([tag]), now)
        for index, code in enumerate(self._codes):
            if code != _EMPTY:
                self._eeprom.field(index, code, now)
        self._note_setup(now, was_empty=False)

    def _change(self, index: int, code: int) -> None:
        was_empty = not any(self._codes)
        self._codes[index] = code
        if self._mode in ("update_board", "update", "update_nice"):
            self._send(_frame(_MSG_FIELD_UPDATE, bytes([index, code])))
        now = time.monotonic()
        self._eeprom.field(index, code, now)
        self._note_setup(now, was_empty=was_empty)

    def _note_setup(self, now: float, *, was_empty: bool) -> None:
        """§1.11 begin-position tags with hysteresis, and the empty-board tag."""
        codes = bytes(self._codes)
        if not any(codes) and not was_empty:
            self._eeprom.append(bytes([_EE_EMPTYBOARD]), now)
        if self._begin_tagged is not None:
            missing = sum(
                1
                for got, want in zip(codes, self._begin_tagged, strict=True)
                if got != want and want
            )
            if missing > _EE_BEGINPOS_HYSTERESIS:
                self._begin_tagged = None
        elif codes in (_START_CODES, _START_CODES_ROTATED):
            tag = _EE_BEGINPOS if codes == _START_CODES else _EE_BEGINPOS_ROT
            self._eeprom.append(bytes([tag]), now)
            self._begin_tagged = codes

    def _execute(self, command: bytes) -> None:
        first = command[0]
        if first & 0x80:
            self._set_mode("bus")  # §1.12: a bus command switches to bus mode, not executed
            return
        handler = self._handlers.get(first)
        if handler is None:
            return  # unknown command bytes are ignored
        if first in _SIZED_COMMANDS and len(command) != 2 + command[1]:
            return  # oversized size byte: dropped
        if self._mode == "bus":
            self._mode = "idle"
        handler(command)

    def _command_table(self) -> dict[int, Callable[[bytes], None]]:
        """§1.3: command byte → action; bytes not listed are ignored."""
        return {
            _CMD_SEND_RESET: lambda _: self._set_mode("idle"),
            _CMD_SEND_CLK: lambda _: self._send_times(),
            _CMD_SEND_BRD: lambda _: self._send(_frame(_MSG_BOARD_DUMP, bytes(self._codes))),
            _CMD_SEND_UPDATE: lambda _: self._set_mode("update"),
            _CMD_SEND_UPDATE_BRD: lambda _: self._set_mode("update_board"),
            _CMD_RETURN_SERIALNR: lambda _: self._send(
                _frame(_MSG_SERIALNR, self._serial.encode("ascii"))
            ),
            _CMD_RETURN_BUSADRES: lambda _: self._send(_frame(_MSG_BUSADRES, self._bus_address())),
            _CMD_SEND_TRADEMARK: lambda _: self._send(_frame(_MSG_TRADEMARK, self._trademark())),
            _CMD_SEND_EE_MOVES: lambda _: self._send_memory(),
            _CMD_TO_BUSMODE: lambda _: self._set_mode("bus"),
            _CMD_SEND_UPDATE_NICE: lambda _: self._set_mode("update_nice"),
            _CMD_SEND_BATTERY_STATUS: lambda _: self._send(
                _frame(_MSG_BATTERY_STATUS, _BATTERY_PAYLOAD)
            ),
            _CMD_SEND_VERSION: lambda _: self._send(_frame(_MSG_VERSION, bytes(self._version))),
            _CMD_RETURN_LONG_SERIALNR: lambda _: self._send(
                _frame(_MSG_LONG_SERIALNR, self._long_serial.encode("ascii"))
            ),
            _CMD_SET_LEDS: lambda _: None,
            _CMD_CLOCK_MESSAGE: self._clock_message,
        }

    def _send_memory(self) -> None:
        """§1.11: the EEPROM log and EE_EOF, only EE_EOF, its newest part, half of the message,
        or nothing (see :data:`Memory`)."""
        if self.memory == "log":
            self._send(_frame(_MSG_EE_MOVES, self._eeprom.payload()))
        elif self.memory == "empty":
            self._send(_frame(_MSG_EE_MOVES, bytes([_EE_EOF])))
        elif self.memory == "partial":
            self._send(_frame(_MSG_EE_MOVES, self._eeprom.wrapped_payload()))
        elif self.memory == "cut":
            message = _frame(_MSG_EE_MOVES, self._eeprom.payload())
            self._send(message[: len(message) // 2])

    def _set_mode(self, mode: Mode) -> None:
        self._mode = mode
        self._last_bwtime = None
        self._last_bwtime_at = None
        self._tick()

    def _bus_address(self) -> bytes:
        address = int(self._serial)  # §1.5: the address equals the decimal serial number
        return bytes([(address >> 7) & 0x7F, address & 0x7F])

    def _trademark(self) -> bytes:
        major, minor = self._version
        return (
            f"Digital Game Technology\r\nchessbridge e-board emulator\r\n"
            f"software version: {major}.{minor:02d}\r\nserial no: {self._serial}"
        ).encode("ascii")

    def _clock_message(self, command: bytes) -> None:
        """§1.8: 0x2B, size, 0x03, cmd, payload..., 0x00; acked only in UPDATE/UPDATE_NICE."""
        if self._clock is None or len(command) < 5:
            return  # no clock behind the board: nobody answers
        if command[2] != _CLOCK_WRAP or command[-1] != _CLOCK_TERMINATOR:
            return
        code, payload = command[3], command[4:-1]
        if _CLOCK_SIZES.get(code) != command[1]:
            return
        ack2 = 0
        if code == _CLOCK_ASCII:
            self.clock_text = payload[:8].decode("ascii", errors="replace")
            self.clock_display = None
        elif code == _CLOCK_DISPLAY:
            self.clock_display = bytes(payload)
            self.clock_text = None
        elif code == _CLOCK_END:
            self.clock_text = None
            self.clock_display = None
        elif code == _CLOCK_BEEP:
            self.clock_beeps.append(payload[0])
        elif code == _CLOCK_VERSION:
            ack2 = self._clock_version[0] << 4 | self._clock_version[1]
        elif code == _CLOCK_SETNRUN:
            self._set_and_run(payload)
        if self._mode in ("update", "update_nice"):
            self._send(self._ack_frame(_ACK_OK, code, ack2, 0))
        self._tick()

    def _set_and_run(self, payload: bytes) -> None:
        """§1.8 SETNRUN: binary left h, m, s, right h, m, s, flags (count-up is not emulated)."""
        assert self._clock is not None
        lh, lm, ls, rh, rm, rs, flags = payload
        left = (lh & _TIME_HOURS_MASK) * 3600 + lm * 60 + ls
        right = (rh & _TIME_HOURS_MASK) * 3600 + rm * 60 + rs
        running: Side | None = None
        if not flags & _SETNRUN_PAUSE:
            if flags & _SETNRUN_LEFT:
                running = "left"
            elif flags & _SETNRUN_RIGHT:
                running = "right"
        self._clock.set(left, right, running, time.monotonic())
        self._clock.increment = 0.0  # in mode 23 the host adds increments itself
        self._clock.toggle_on_lever = bool(flags & _SETNRUN_TOGGLE)

    def _ack_frame(self, ack0: int, ack1: int, ack2: int, ack3: int) -> bytes:
        """§1.7 ack variant, built by inverting the doc's decoding formulas."""
        b3 = _ACK_MARKER | (ack2 & 0x80) >> 3 | (ack3 & 0x80) >> 2
        b6 = _ACK_MARKER | (ack0 & 0x80) >> 3 | (ack1 & 0x80) >> 2
        status = self._clock.status() if self._clock is not None else _STATUS_NO_CLOCK
        data = bytes([b3, ack0 & 0x7F, ack1 & 0x7F, b6, ack2 & 0x7F, ack3 & 0x7F, status])
        return _frame(_MSG_BWTIME, data)

    def _times_data(self) -> bytes:
        """§1.7 times variant: right h/m/s, left h/m/s, status."""
        if self._clock is None:
            return bytes(6) + bytes([_STATUS_NO_CLOCK])
        self._clock.advance(time.monotonic())
        clock = self._clock
        return clock.time_bytes("right") + clock.time_bytes("left") + bytes([clock.status()])

    def _send_times(self, data: bytes | None = None) -> None:
        data = self._times_data() if data is None else data
        self._send(_frame(_MSG_BWTIME, data))
        self._last_bwtime = data
        self._last_bwtime_at = time.monotonic()

    def _tick(self) -> None:
        """Stream BWTIME per §1.2 and re-arm for the next display change or UPDATE period."""
        self._cancel_tick()
        loop = self._port.loop
        if loop is None or not self._port.is_plugged:
            return
        if self._mode not in ("update", "update_nice"):
            return
        data = self._times_data()
        now = time.monotonic()
        period = _UPDATE_PERIOD / self._speed
        if self._mode == "update_nice":
            if self._clock is not None and data != self._last_bwtime:
                self._send_times(data)
        elif (
            data != self._last_bwtime
            or self._last_bwtime_at is None
            or now - self._last_bwtime_at >= period
        ):
            self._send_times(data)
        delays: list[float] = []
        if self._mode == "update" and self._last_bwtime_at is not None:
            delays.append(self._last_bwtime_at + period - now)
        if self._clock is not None and (change := self._clock.next_change_in()) is not None:
            delays.append(change)
        if delays:
            self._tick_handle = loop.call_later(max(0.0, min(delays)), self._tick)

    # --- the host's bytes ---------------------------------------------------------------------

    def _cancel_tick(self) -> None:
        if self._tick_handle is not None:
            self._tick_handle.cancel()
            self._tick_handle = None

    def _on_host_bytes(self, data: bytes, now: float) -> None:
        for command in self._splitter.feed(data, now):
            self.received.append(command)
            if len(self.received) > _RECEIVED_LIMIT:
                del self.received[: _RECEIVED_LIMIT // 2]  # bounded for long `emulate` runs
            self._execute(command)

    def _send(self, data: bytes) -> None:
        self._port.send(data)

    # --- square mapping -------------------------------------------------------------------------

    def _index(self, name: str) -> int:
        """Square name in the player's frame → board-frame index (§1.6: 63 - i when rotated)."""
        index = _board_index(chess.parse_square(name))
        return 63 - index if self._rotated else index

    def _square_name(self, index: int) -> str:
        player = 63 - index if self._rotated else index
        return chess.square_name(chess.square(player % 8, 7 - player // 8))


async def serve_forever(emu: DgtEmulator) -> None:
    """Serve ``emu`` until cancelled; starts it if needed and then also stops it."""
    started_here = not emu.is_started
    if started_here:
        await emu.start()
    try:
        await asyncio.get_running_loop().create_future()
    finally:
        if started_here:
            await emu.stop()
