"""Chessnut codec: notifications in, physical events out; commands as bytes.

Contract:

* ``ChessnutCodec.feed(source, data, at)`` accepts any bytes on either notifying characteristic
  (``source``, a lower-case UUID), in any chunking, and never raises. A board cut to a small MTU
  splits its 38-byte position over several notifications; each characteristic is read as a byte
  stream, so the events of a valid stream do not depend on how it was split.
* A position starts with ``01 24`` (board-protocols.md §3); bytes before it, and positions with
  a nibble that is no piece, are dropped and reported as ``FrameDropped``.
* The board reports its whole position on every change. The first position is a
  ``BoardSnapshot``; after it, only the squares that changed: the ones emptied first (a hand
  lifts before it places), then the ones occupied. A repeated position says nothing.
* Squares are python-chess squares in the board's own frame (the engine turns a board set up
  from Black's side).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

import chess

from drivers.chessnut import protocol as p
from drivers.events import (
    BoardEvent,
    BoardInfo,
    BoardSnapshot,
    FrameDropped,
    SquareEmptied,
    SquareOccupied,
)

MAX_RAW_REPORTED: Final = 64
"""``FrameDropped.raw`` keeps at most this many bytes."""

Position = tuple[chess.Piece | None, ...]


class ChessnutCodec:
    """Sans-I/O decoder of a Chessnut board's two notifying characteristics."""

    def __init__(self) -> None:
        self._positions = bytearray()
        self._answers = bytearray()
        self._last: Position | None = None

    @property
    def buffered(self) -> int:
        """Bytes held for messages not yet complete (at most a position and an answer)."""
        return len(self._positions) + len(self._answers)

    def feed(self, source: str, data: bytes, at: float) -> list[BoardEvent]:
        """Consume ``data`` notified on ``source`` at ``at``; return the events it completes."""
        if source == p.FEN_NOTIFY:
            self._positions += data
            return self._read_positions(at)
        if source == p.OPERATION_NOTIFY:
            self._answers += data
            return self._read_answers(at)
        return []

    def _read_positions(self, at: float) -> list[BoardEvent]:
        out: list[BoardEvent] = []
        buf = self._positions
        while True:
            start = buf.find(p.POSITION_HEADER)
            if start < 0:
                keep = 1 if buf[-1:] == p.POSITION_HEADER[:1] else 0
                _drop(out, "stray bytes outside a position", buf[: len(buf) - keep], at)
                del buf[: len(buf) - keep]
                return out
            if start:
                _drop(out, "stray bytes outside a position", buf[:start], at)
                del buf[:start]
            if len(buf) < p.POSITION_SIZE:
                return out
            frame = bytes(buf[: p.POSITION_SIZE])
            position = _position(frame[2 : 2 + p.POSITION_BYTES])
            if position is None:
                _drop(out, "position with a nibble that is no piece", frame, at)
                del buf[: len(p.POSITION_HEADER)]
                continue
            del buf[: p.POSITION_SIZE]
            out.extend(self._changes(position, at))

    def _changes(self, position: Position, at: float) -> list[BoardEvent]:
        last, self._last = self._last, position
        if last is None:
            return [BoardSnapshot(squares=position, at=at)]
        emptied: list[BoardEvent] = [
            SquareEmptied(square=square, at=at)
            for square in chess.SQUARES
            if position[square] is None and last[square] is not None
        ]
        occupied: list[BoardEvent] = [
            SquareOccupied(square=square, piece=piece, at=at)
            for square in chess.SQUARES
            if (piece := position[square]) is not None and piece != last[square]
        ]
        return emptied + occupied

    def _read_answers(self, at: float) -> list[BoardEvent]:
        out: list[BoardEvent] = []
        buf = self._answers
        while len(buf) >= 2:
            code, size = buf[0], buf[1]
            if size > p.MAX_ANSWER_SIZE:
                _drop(out, f"answer 0x{code:02x} with impossible size {size}", buf[:2], at)
                del buf[:1]
                continue
            if len(buf) < 2 + size:
                break
            payload = bytes(buf[2 : 2 + size])
            del buf[: 2 + size]
            if code == p.ANSWER_BATTERY and size >= 1:
                out.append(_battery(payload, at))
        return out


def _position(data: bytes) -> Position | None:
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


def _drop(out: list[BoardEvent], reason: str, raw: bytes | bytearray, at: float) -> None:
    if raw:
        out.append(FrameDropped(reason=reason, raw=bytes(raw[:MAX_RAW_REPORTED]), at=at))


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
