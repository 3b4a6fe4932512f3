"""Chessnut codec: notifications in, physical events out; commands as bytes.

Contract:

* ``ChessnutCodec.feed(source, data, at)`` accepts any bytes on either notifying characteristic
  (``source``, a lower-case UUID), in any chunking, and never raises. A board cut to a small MTU
  splits its 38-byte position over several notifications; each characteristic is read as a byte
  stream, so the events of a valid stream do not depend on how it was split.
* A position starts with ``01 24`` (board-protocols.md §3); bytes before it, and positions with
  a nibble that is no piece, are dropped and reported as ``FrameDropped``.
* The board reports its whole position on every change: a full reading, turned into a
  ``BoardSnapshot`` first and then the squares that changed (:mod:`drivers.readings`). A
  repeated position says nothing. Consecutive drops within one call are one report
  (:mod:`drivers.framing`).
* Squares are python-chess squares in the board's own frame (the engine turns a board set up
  from Black's side).
"""

from __future__ import annotations

from collections.abc import Collection

import chess

from drivers.chessnut import protocol as p
from drivers.events import BoardEvent, BoardInfo
from drivers.framing import Batch
from drivers.readings import Reading, Readings


class ChessnutCodec:
    """Sans-I/O decoder of a Chessnut board's two notifying characteristics."""

    def __init__(self) -> None:
        self._positions = bytearray()
        self._answers = bytearray()
        self._readings = Readings()

    @property
    def buffered(self) -> int:
        """Bytes held for messages not yet complete (at most a position and an answer)."""
        return len(self._positions) + len(self._answers)

    def feed(self, source: str, data: bytes, at: float) -> list[BoardEvent]:
        """Consume ``data`` notified on ``source`` at ``at``; return the events it completes."""
        out: Batch[BoardEvent] = Batch(at)
        if source == p.FEN_NOTIFY:
            self._positions += data
            self._read_positions(out)
        elif source == p.OPERATION_NOTIFY:
            self._answers += data
            self._read_answers(out)
        out.flush()
        return out.events

    def _read_positions(self, out: Batch[BoardEvent]) -> None:
        buf = self._positions
        while True:
            start = buf.find(p.POSITION_HEADER)
            if start < 0:
                keep = 1 if buf[-1:] == p.POSITION_HEADER[:1] else 0
                if len(buf) > keep:
                    out.drop("stray bytes outside a position", bytes(buf[: len(buf) - keep]))
                del buf[: len(buf) - keep]
                return
            if start:
                out.drop("stray bytes outside a position", bytes(buf[:start]))
                del buf[:start]
            if len(buf) < p.POSITION_SIZE:
                return
            frame = bytes(buf[: p.POSITION_SIZE])
            reading = _reading(frame[2 : 2 + p.POSITION_BYTES])
            if reading is None:
                out.drop("position with a nibble that is no piece", frame)
                del buf[: len(p.POSITION_HEADER)]
                continue
            del buf[: p.POSITION_SIZE]
            for event in self._readings.feed(reading, out.at):
                out.emit(event)

    def _read_answers(self, out: Batch[BoardEvent]) -> None:
        buf = self._answers
        while len(buf) >= 2:
            code, size = buf[0], buf[1]
            if size > p.MAX_ANSWER_SIZE:
                out.drop(f"answer 0x{code:02x} with impossible size {size}", bytes(buf[:2]))
                del buf[:1]
                continue
            if len(buf) < 2 + size:
                return
            payload = bytes(buf[2 : 2 + size])
            del buf[: 2 + size]
            if code == p.ANSWER_BATTERY and size >= 1:
                out.emit(_battery(payload, out.at))


def _reading(data: bytes) -> Reading | None:
    """32 bytes of nibbles → the piece on each python-chess square; ``None`` if one is no piece."""
    squares: list[chess.Piece | None] = [None] * 64
    for index, square in enumerate(p.SQUARE_ORDER):
        byte = data[index // 2]
        nibble = byte >> 4 if index % 2 else byte & 0x0F
        if nibble not in p.NIBBLE_PIECES:
            return None
        symbol = p.NIBBLE_PIECES[nibble]
        squares[square] = None if symbol is None else chess.Piece.from_symbol(symbol)
    return tuple(squares)


def _battery(payload: bytes, at: float) -> BoardInfo:
    level = payload[0]
    percent: int | None = level & p.BATTERY_PERCENT_MASK
    if percent is not None and percent > 100:
        percent = None
    charging = bool(level & p.BATTERY_CHARGING_BIT) or payload[1:2] == b"\x01"
    return BoardInfo(battery_percent=percent, charging=charging, at=at)


# --- Host → board commands (§3) --------------------------------------------------------------


def realtime() -> bytes:
    """Enable real-time reporting (the position now and on every change)."""
    return p.CMD_REALTIME


def battery() -> bytes:
    """Ask for the battery level (answered on the operation characteristic)."""
    return p.CMD_BATTERY


def leds(squares: Collection[chess.Square]) -> bytes:
    """Light exactly ``squares`` (board frame); an empty collection turns all lights off."""
    ranks = bytearray(8)
    for square in squares:
        ranks[7 - chess.square_rank(square)] |= 0x80 >> chess.square_file(square)
    return p.CMD_LEDS + bytes(ranks)
