"""The Chessnut codec on bytes written from board-protocols.md §3, not from the code under test."""

from __future__ import annotations

import chess

from drivers.chessnut import codec
from drivers.chessnut.codec import ChessnutCodec
from drivers.events import BoardInfo, BoardSnapshot, FrameDropped, SquareEmptied, SquareOccupied

FEN = "1b7e8262-2877-41c3-b46e-cf057c562023"
OPERATION = "1b7e8273-2877-41c3-b46e-cf057c562023"

# §3: the start position's bytes 2..33 (RMA: main.py), then 4 bytes the codec ignores.
START = (
    bytes.fromhex("0124")
    + bytes.fromhex("5823318544444444")
    + bytes(16)
    + bytes.fromhex("77777777A6C99B6A")
    + bytes.fromhex("0700 0000")
)


def with_nibble(frame: bytes, index: int, nibble: int) -> bytes:
    """``frame`` with square number ``index`` (h8 = 0, g8 = 1 ... a1 = 63) set to ``nibble``."""
    data = bytearray(frame)
    byte = 2 + index // 2
    if index % 2:
        data[byte] = (data[byte] & 0x0F) | nibble << 4
    else:
        data[byte] = (data[byte] & 0xF0) | nibble
    return bytes(data)


E2, E4 = 6 * 8 + 3, 4 * 8 + 3  # h-file first: e is the fourth square of its rank
AFTER_E2 = with_nibble(START, E2, 0x0)
AFTER_E4 = with_nibble(AFTER_E2, E4, 0x7)  # 7 = white pawn


def test_the_first_position_is_a_snapshot_of_the_start() -> None:
    events = ChessnutCodec().feed(FEN, START, 1.0)
    assert events == [
        BoardSnapshot(squares=tuple(chess.Board().piece_at(sq) for sq in chess.SQUARES), at=1.0)
    ]


def test_later_positions_are_the_squares_that_changed() -> None:
    c = ChessnutCodec()
    c.feed(FEN, START, 1.0)
    assert c.feed(FEN, AFTER_E2, 2.0) == [SquareEmptied(square=chess.E2, at=2.0)]
    assert c.feed(FEN, AFTER_E4, 3.0) == [
        SquareOccupied(square=chess.E4, piece=chess.Piece.from_symbol("P"), at=3.0)
    ]
    assert c.feed(FEN, AFTER_E4, 4.0) == []  # the same position again says nothing


def test_a_capture_seen_in_one_scan_lifts_before_it_places() -> None:
    c = ChessnutCodec()
    c.feed(FEN, START, 1.0)
    # d2 (index 52) emptied and d7 (index 12) now a white pawn, in one report.
    both = with_nibble(with_nibble(START, 6 * 8 + 4, 0x0), 1 * 8 + 4, 0x7)
    assert c.feed(FEN, both, 2.0) == [
        SquareEmptied(square=chess.D2, at=2.0),
        SquareOccupied(square=chess.D7, piece=chess.Piece.from_symbol("P"), at=2.0),
    ]


def test_a_position_split_over_small_notifications_is_put_back_together() -> None:
    c = ChessnutCodec()
    assert c.feed(FEN, START[:20], 1.0) == []
    assert c.buffered == 20
    events = c.feed(FEN, START[20:], 2.0)
    assert [type(e) for e in events] == [BoardSnapshot]
    assert c.buffered == 0


def test_bytes_before_a_position_are_dropped_and_reported() -> None:
    events = ChessnutCodec().feed(FEN, b"\x55\x66" + START, 1.0)
    assert isinstance(events[0], FrameDropped)
    assert events[0].raw == b"\x55\x66"
    assert isinstance(events[1], BoardSnapshot)


def test_a_nibble_that_is_no_piece_drops_the_position() -> None:
    bad = with_nibble(START, 40, 0xD)
    events = ChessnutCodec().feed(FEN, bad + START, 1.0)
    assert isinstance(events[0], FrameDropped)
    assert "no piece" in events[0].reason
    assert isinstance(events[-1], BoardSnapshot)


def test_battery_bit_7_and_the_fourth_byte_both_say_charging() -> None:
    c = ChessnutCodec()
    # §3: 2A 02 <level> <x>; CNO: bit 7 = charging; PC: x == 1 = charging.
    assert c.feed(OPERATION, bytes.fromhex("2A025A00"), 1.0) == [
        BoardInfo(battery_percent=90, charging=False, at=1.0)
    ]
    assert c.feed(OPERATION, bytes.fromhex("2A02DA00"), 2.0) == [
        BoardInfo(battery_percent=90, charging=True, at=2.0)
    ]
    assert c.feed(OPERATION, bytes.fromhex("2A025A01"), 3.0) == [
        BoardInfo(battery_percent=90, charging=True, at=3.0)
    ]


def test_other_answers_and_other_characteristics_say_nothing() -> None:
    c = ChessnutCodec()
    assert c.feed(OPERATION, bytes.fromhex("210100"), 1.0) == []
    assert c.feed("00002a19-0000-1000-8000-00805f9b34fb", START, 1.0) == []


def test_commands_are_the_documented_bytes() -> None:
    assert codec.realtime() == bytes.fromhex("210100")
    assert codec.battery() == bytes.fromhex("290100")
    # §3's example: e2e4 lit is 0A 08 00 00 00 00 08 00 08 00.
    assert codec.leds([chess.E2, chess.E4]) == bytes.fromhex("0A08 0000 0000 0800 0800")
    assert codec.leds([chess.A8, chess.H1]) == bytes.fromhex("0A08 8000 0000 0000 0001")
    assert codec.leds([]) == bytes.fromhex("0A08") + bytes(8)
