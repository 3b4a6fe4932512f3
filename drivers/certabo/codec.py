"""Certabo codec: board bytes in, physical events out; the LED command as bytes.

Contract:

* ``CertaboCodec.feed(data, at)`` accepts any bytes, in any chunking, and never raises. It
  returns the events of every line completed by ``data``, stamped ``at``.
* Framing (board-protocols.md §5): a line ends with ``\\n``; what follows its last ``:`` must be
  320 decimal numbers (``L``, ``D``, ``*`` and ``\\r`` are ignored). Any other line is dropped
  and reported as ``FrameDropped``; a run of bytes longer than any line is cut.
* Each line is a reading of the 64 tags, a8 first (board frame). A tag the codec knows is its
  piece; no tag is an empty square.
* Noise: a tag read on two squares at once cannot be a piece (every piece has its own tag): it
  is taken as no tag. A tag the codec does not know is reported as a piece of unknown identity
  (``UNKNOWN``) only once it has been read on the same square twice running; read once, the
  square keeps what it showed before. Known tags and empty squares count at once.
* Calibration: a reading with pieces exactly on the 32 squares of the start position, each with
  its own tag, read twice running, teaches the codec the tags it does not know yet: the piece
  the start position has on that square. Tags already known keep their piece (a knight and a
  bishop swapped at set-up are seen swapped, not learnt swapped), and they tell which way round
  the board stands: if most known tags fit the start position turned round, the new ones are
  learnt turned round too. The very first calibration of a set takes the board as set up with
  White on ranks 1 and 2: a board cannot tell the colour of a tag it has never seen. A
  :class:`Calibrated` event says how many tags were learnt.
* Readings become a ``BoardSnapshot`` (the first) and per-square changes (:mod:`drivers.readings`),
  from the second line on: the first is what the second is checked against.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Final

import chess

from drivers.certabo import protocol as p
from drivers.events import UNKNOWN, BoardEvent, Occupant
from drivers.framing import Batch
from drivers.readings import Readings

Tag = tuple[int, ...]
"""One RFID tag id: five numbers."""

Calibration = Mapping[Tag, chess.Piece]
"""Which piece each known tag is on."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Calibrated:
    """``pieces`` tags were learnt from the start position (``rotated``: set up turned round)."""

    pieces: int
    rotated: bool
    at: float


CertaboEvent = BoardEvent | Calibrated

_START: Final = chess.BaseBoard(p.CALIBRATION_POSITION)
_START_SQUARES: Final = frozenset(_START.piece_map())
_DIGITS: Final = frozenset(b"0123456789")


def square_at(index: int) -> chess.Square:
    """The square of tag ``index`` in a line (0 = a8, 7 = h8, 8 = a7, ..., 63 = h1)."""
    if not 0 <= index < p.SQUARE_COUNT:
        raise ValueError(f"tag index {index} out of range 0..63")
    return chess.square(index % 8, 7 - index // 8)


class CertaboCodec:
    """Sans-I/O decoder of the board's lines; see the module docstring."""

    def __init__(self, calibration: Calibration | None = None) -> None:
        self._buffer = bytearray()
        self._calibration: dict[Tag, chess.Piece] = dict(calibration or {})
        self._previous: list[Tag] | None = None
        self._readings = Readings()
        self._lines = 0
        self._dropped_bytes = 0
        self._dropped_lines = 0

    @property
    def calibration(self) -> Calibration:
        """The tags known so far (a copy)."""
        return dict(self._calibration)

    @property
    def lines_read(self) -> int:
        """Valid lines decoded so far."""
        return self._lines

    @property
    def dropped_bytes(self) -> int:
        """Bytes discarded so far (bad lines, over-long runs)."""
        return self._dropped_bytes

    @property
    def dropped_lines(self) -> int:
        """Lines rejected so far."""
        return self._dropped_lines

    @property
    def buffered(self) -> int:
        """Bytes held for a line not yet ended (at most ``protocol.MAX_LINE``)."""
        return len(self._buffer)

    def feed(self, data: bytes, at: float) -> list[CertaboEvent]:
        """Consume ``data`` received at time ``at``; return the events it completes, in order."""
        out: Batch[CertaboEvent] = Batch(at)
        buffer = self._buffer
        buffer += data
        while (end := buffer.find(p.LINE_END)) >= 0:
            line = bytes(buffer[: end + 1])
            del buffer[: end + 1]
            tags = self._parse(line, out)
            if tags is not None:
                self._lines += 1
                self._take(tags, out)
        if len(buffer) > p.MAX_LINE:
            # Keep a line that may have begun; what came before it belongs to no line.
            start = buffer.rfind(p.LINE_START)
            cut = len(buffer) if start < 0 or len(buffer) - start > p.MAX_LINE else start
            self._dropped_bytes += cut
            out.drop("a run of bytes longer than any line", bytes(buffer[:cut]))
            del buffer[:cut]
        out.flush()
        return out.events

    def _parse(self, line: bytes, out: Batch[CertaboEvent]) -> list[Tag] | None:
        """The 64 tags of a line, or ``None`` (the line reported dropped)."""
        problem = None
        start = line.rfind(p.LINE_START)
        numbers: list[bytes] = []
        if len(line) > p.MAX_LINE:
            problem = "a line too long"
        elif start < 0:
            problem = "a line without ':'"
        else:
            numbers = line[start + 1 :].translate(None, p.MARKERS).split()
            if len(numbers) != p.NUMBERS_PER_LINE:
                problem = f"a line of {len(numbers)} numbers, not {p.NUMBERS_PER_LINE}"
            elif not all(0 < len(n) <= p.MAX_NUMBER_DIGITS and set(n) <= _DIGITS for n in numbers):
                problem = "a line with something else than numbers"
        if problem is not None:
            self._dropped_lines += 1
            self._dropped_bytes += len(line)
            out.drop(problem, line)
            return None
        values = [int(n) for n in numbers]
        return [tuple(values[i : i + p.TAG_SIZE]) for i in range(0, len(values), p.TAG_SIZE)]

    def _take(self, tags: list[Tag], out: Batch[CertaboEvent]) -> None:
        """One reading: noise out, calibration, identities, then the square events."""
        counts = Counter(tag for tag in tags if tag != p.EMPTY_TAG)
        tags = [p.EMPTY_TAG if counts[tag] > 1 else tag for tag in tags]
        previous, self._previous = self._previous, tags
        if previous is None:
            return
        if tags == previous:
            calibrated = self._calibrate(tags, out.at)
            if calibrated is not None:
                out.emit(calibrated)
        shown = self._readings.last
        reading: list[Occupant | None] = [None] * p.SQUARE_COUNT
        for index, tag in enumerate(tags):
            square = square_at(index)
            if tag == p.EMPTY_TAG:
                continue
            piece = self._calibration.get(tag)
            if piece is not None:
                reading[square] = piece
            elif previous[index] == tag:
                reading[square] = UNKNOWN
            elif shown is not None:
                reading[square] = shown[square]
        for event in self._readings.feed(reading, out.at):
            out.emit(event)

    def _calibrate(self, tags: list[Tag], at: float) -> Calibrated | None:
        by_square = {square_at(i): tag for i, tag in enumerate(tags) if tag != p.EMPTY_TAG}
        if set(by_square) != _START_SQUARES:
            return None
        known = self._calibration
        normal = sum(known.get(tag) == _START.piece_at(sq) for sq, tag in by_square.items())
        turned = sum(known.get(tag) == _START.piece_at(63 - sq) for sq, tag in by_square.items())
        rotated = turned > normal
        learnt = {
            tag: _START.piece_at(63 - sq if rotated else sq)
            for sq, tag in by_square.items()
            if tag not in known
        }
        if not learnt:
            return None
        for tag, piece in learnt.items():
            assert piece is not None
            known[tag] = piece
        return Calibrated(pieces=len(learnt), rotated=rotated, at=at)


def leds(squares: Collection[chess.Square]) -> bytes:
    """The 8 bytes that light exactly ``squares`` (board frame): rank 8 first, bit 0 = a-file."""
    ranks = bytearray(p.LED_BYTES)
    for square in squares:
        if square not in chess.SQUARES:
            raise ValueError(f"not a square: {square!r}")
        ranks[7 - chess.square_rank(square)] |= 1 << chess.square_file(square)
    return bytes(ranks)
