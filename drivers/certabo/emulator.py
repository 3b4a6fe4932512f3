"""A Certabo board served on a pseudo-terminal.

Used by the integration tests and ``chessbridge emulate certabo``. A host opens
:attr:`CertaboEmulator.path` as it would open the board's USB serial port.

Built from board-protocols.md §5 in this module's own terms (the vendor's Arduino simulator
of the board's stream is the model); nothing is imported from the codec. Every piece has its
own RFID tag: the 32 pieces of a set, and spare pieces taken from the box when a letter is put
down that nobody holds (a promoted queen), each with a tag of its own. The board sends a line
of every square's tag every ``interval`` seconds (the vendor's simulator: one a second), and
takes 8-byte LED frames. With ``noise``, empty squares sometimes read a phantom tag, as the
vendor's simulator does on purpose (``0 0 56 0 0``, ``201 0 0 0 0``).
"""

from __future__ import annotations

import asyncio
import random
from typing import Final

import chess

from drivers._pty import PtyBoard

# --- §5: the line, the tags, the LEDs ------------------------------------------------------------
_EMPTY_TAG: Final = (0, 0, 0, 0, 0)
_NOISE_TAGS: Final = ((0, 0, 56, 0, 0), (201, 0, 0, 0, 0))  # the vendor simulator's phantoms
_LED_FRAME: Final = 8  # one byte per rank, rank 8 first, bit 0 = a-file
_STALE_PARTIAL_FRAME: Final = 1.0  # seconds; half an LED frame is dropped after this
_PIECES: Final = frozenset("KQRBNPkqrbnp")

Tag = tuple[int, int, int, int, int]


def _line(tags: list[Tag]) -> bytes:
    """§5: ':' then the 320 numbers (a8 first), then ' \\r\\n'."""
    return b":" + " ".join(str(n) for tag in tags for n in tag).encode("ascii") + b" \r\n"


def _index(square: chess.Square) -> int:
    """A square's place in the line (§5: a8 first, then b8 ... h8, a7 ... h1)."""
    return (7 - chess.square_rank(square)) * 8 + chess.square_file(square)


class CertaboEmulator(PtyBoard):
    """A Certabo board on a pty; squares are names in the players' frame.

    Satisfies :class:`drivers.emulation.EmulatedBoard` (``certabo:`` + :attr:`address`).
    """

    scheme: Final = "certabo"

    def __init__(
        self,
        *,
        position: str | None = None,
        speed: float = 1.0,
        interval: float = 1.0,
        rotated: bool = False,
        noise: bool = False,
        seed: int = 0,
    ) -> None:
        if speed <= 0 or interval <= 0:
            raise ValueError(f"speed and interval must be positive: {speed!r}, {interval!r}")
        self.leds = bytes(_LED_FRAME)
        """The last LED frame the host sent."""
        self.led_frames = 0
        """How many LED frames the host sent."""
        self._period = interval / speed
        self._rotated = rotated
        self._noise = noise
        self._random = random.Random(seed)
        self._next_tag = seed * 1000
        self._squares: dict[int, tuple[str, Tag]] = {}  # line index → (letter, tag)
        self._hand: list[tuple[str, Tag]] = []
        fen = chess.STARTING_BOARD_FEN if position is None else position.split()[0]
        for square, piece in chess.BaseBoard(fen).piece_map().items():
            self._squares[self._index(chess.square_name(square))] = (piece.symbol(), self._tag())
        self._partial = b""
        self._partial_since = 0.0
        self._ticker: asyncio.TimerHandle | None = None
        super().__init__("certabo")

    # --- the cable (drivers._pty.PtyBoard) -----------------------------------------------------

    def _plugged_in(self) -> None:
        """The lines start."""
        self._tick()

    def _plugged_back(self) -> None:
        """The lines start again, LEDs off."""
        self.leds = bytes(_LED_FRAME)
        self._tick()

    def _pulled_out(self) -> None:
        """The lines stop; the host's reads fail."""
        self._stop_ticking()

    # --- physical use cases ---------------------------------------------------------------------

    @property
    def position(self) -> dict[str, str]:
        """The physical board: square name (players' frame) → piece letter."""
        return {
            name: self._squares[self._index(name)][0]
            for name in chess.SQUARE_NAMES
            if self._index(name) in self._squares
        }

    @property
    def tags(self) -> dict[str, Tag]:
        """The tag under each piece, by square name (players' frame)."""
        return {
            name: self._squares[self._index(name)][1]
            for name in chess.SQUARE_NAMES
            if self._index(name) in self._squares
        }

    @property
    def lit(self) -> set[str]:
        """Squares (players' frame) whose LED the last frame lights."""
        return {
            name
            for name in chess.SQUARE_NAMES
            if self.leds[self._index(name) // 8] >> (self._index(name) % 8) & 1
        }

    async def lift(self, square: str) -> str | None:
        """Lift the piece off ``square`` into the hand; its letter, or None if empty."""
        held = self._squares.pop(self._index(square), None)
        if held is not None:
            self._hand.append(held)
        await asyncio.sleep(0)
        return None if held is None else held[0]

    async def place(self, square: str, piece: str) -> None:
        """Put ``piece`` on ``square``: the last such piece lifted, else a new one from the box."""
        if piece not in _PIECES:
            raise ValueError(f"unknown piece letter: {piece!r}")
        held = next((h for h in reversed(self._hand) if h[0] == piece), None)
        if held is None:
            held = (piece, self._tag())
        else:
            self._hand.remove(held)
        index = self._index(square)
        displaced = self._squares.get(index)
        if displaced is not None:
            self._hand.append(displaced)  # pushed off by the hand that puts this one down
        self._squares[index] = held
        await asyncio.sleep(0)

    # --- the board's reactions ------------------------------------------------------------------

    def _tag(self) -> Tag:
        """A tag no other piece has: five numbers, as the board prints them."""
        self._next_tag += 1
        n = self._next_tag
        return (3 + n % 9, n % 7, 100 + n % 150, 1 + n * 37 % 250, 1 + n * 11 % 250)

    def _tick(self) -> None:
        loop = self._port.loop
        if loop is None or not self._port.is_plugged:
            return
        self._port.send(_line(self._reading()))
        self._ticker = loop.call_later(self._period, self._tick)

    def _stop_ticking(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None

    def _reading(self) -> list[Tag]:
        tags: list[Tag] = []
        for index in range(64):
            held = self._squares.get(index)
            if held is not None:
                tags.append(held[1])
            elif self._noise and self._random.random() < 0.6:
                tags.append(self._random.choice(_NOISE_TAGS))
            else:
                tags.append(_EMPTY_TAG)
        return tags

    def _on_host_bytes(self, data: bytes, now: float) -> None:
        """§5: the host sends 8-byte LED frames. The vendor's simulator throws away whatever
        arrives with a frame; this board takes every whole frame, in order (the last one
        stands), so that a test machine slow to read cannot lose one."""
        if self._partial and now - self._partial_since > _STALE_PARTIAL_FRAME:
            self._partial = b""
        if not self._partial:
            self._partial_since = now
        self._partial += data
        while len(self._partial) >= _LED_FRAME:
            self.leds, self._partial = self._partial[:_LED_FRAME], self._partial[_LED_FRAME:]
            self.led_frames += 1

    # --- square mapping -------------------------------------------------------------------------

    def _index(self, name: str) -> int:
        square = chess.parse_square(name)
        return _index(63 - square if self._rotated else square)
