"""Golden tests for the DGT codec, built from the byte tables in board-protocols.md §1 and §8.

Expected values are written out from the protocol tables, never computed by the code under test.
"""

from __future__ import annotations

from collections.abc import Callable

import chess
import pytest

from drivers.dgt import codec
from drivers.dgt.codec import DgtCodec
from drivers.dgt.events import (
    ClockAck,
    DgtEvent,
    StoredChange,
    StoredClockTime,
    StoredEnd,
    StoredMarker,
    StoredTag,
)
from drivers.events import (
    BoardInfo,
    BoardSnapshot,
    ClockButton,
    ClockReading,
    ClockSide,
    FrameDropped,
    SquareEmptied,
    SquareOccupied,
)

AT = 12.5
RIGHT = ClockSide.RIGHT

# §8: first message of a real capture, the start position (a8 first).
START_DUMP = (
    bytes.fromhex("86 00 43 08 09 0A 0C 0B 0A 09 08")
    + bytes([0x07] * 8)
    + bytes(32)
    + bytes([0x01] * 8)
    + bytes.fromhex("02 03 04 06 05 04 03 02")
)

# §1.6 piece code table.
PIECE_TABLE = {
    0x01: "P",
    0x02: "R",
    0x03: "N",
    0x04: "B",
    0x05: "K",
    0x06: "Q",
    0x07: "p",
    0x08: "r",
    0x09: "n",
    0x0A: "b",
    0x0B: "k",
    0x0C: "q",
}


def feed(data: bytes, at: float = AT) -> tuple[list[DgtEvent], DgtCodec]:
    c = DgtCodec()
    return c.feed(data, at), c


def only(events: list[DgtEvent]) -> DgtEvent:
    assert len(events) == 1, events
    return events[0]


def drops(events: list[DgtEvent]) -> list[FrameDropped]:
    return [e for e in events if isinstance(e, FrameDropped)]


def kept(events: list[DgtEvent]) -> list[DgtEvent]:
    return [e for e in events if not isinstance(e, FrameDropped)]


def field_update(index: int, code: int) -> bytes:
    return bytes([0x8E, 0x00, 0x05, index, code])


def bwtime_ack(ack0: int, ack1: int, ack2: int, ack3: int, *, marker_in_b3: bool = False) -> bytes:
    """Spread four ack bytes over a BWTIME message by inverting the §1.7 formulas."""
    b3 = ((ack2 >> 7) << 4) | ((ack3 >> 7) << 5)
    b6 = ((ack0 >> 7) << 4) | ((ack1 >> 7) << 5)
    if marker_in_b3:
        b3 |= 0x0A
    else:
        b6 |= 0x0A
    body = [b3, ack0 & 0x7F, ack1 & 0x7F, b6, ack2 & 0x7F, ack3 & 0x7F, 0x00]
    return bytes([0x8D, 0x00, 0x0A, *body])


# --- BOARD_DUMP ------------------------------------------------------------------------------


def test_start_position_dump_matches_python_chess() -> None:
    event = only(feed(START_DUMP)[0])
    assert isinstance(event, BoardSnapshot)
    assert len(event.squares) == 64
    got = {sq: piece for sq, piece in enumerate(event.squares) if piece is not None}
    assert got == chess.Board().piece_map()
    assert event.at == AT


@pytest.mark.parametrize(
    ("index", "square"),
    [(0, chess.A8), (1, chess.B8), (7, chess.H8), (8, chess.A7), (52, chess.E2), (63, chess.H1)],
)
def test_dump_square_numbering(index: int, square: chess.Square) -> None:
    payload = bytearray(64)
    payload[index] = 0x0C  # black queen
    event = only(feed(bytes([0x86, 0x00, 0x43]) + payload)[0])
    assert isinstance(event, BoardSnapshot)
    assert event.squares[square] == chess.Piece(chess.QUEEN, chess.BLACK)
    assert sum(p is not None for p in event.squares) == 1


@pytest.mark.parametrize("code", [0x0D, 0x0E, 0x0F, 0x10, 0x7F])
def test_dump_with_invalid_code_is_dropped(code: int) -> None:
    data = bytearray(START_DUMP)
    data[3 + 20] = code
    events, c = feed(bytes(data))
    drop = only(events)
    assert isinstance(drop, FrameDropped)
    assert f"0x{code:02x}" in drop.reason
    assert drop.raw == bytes(data[:64])  # reported raw bytes are capped
    assert (c.dropped_frames, c.dropped_bytes) == (1, 67)


# --- FIELD_UPDATE ----------------------------------------------------------------------------


def test_real_capture_pawn_e2_e4() -> None:
    # §1.13 (ARN 1.inbytes): e2 empties, then a white pawn appears on e4.
    events, c = feed(bytes.fromhex("8E 00 05 34 00 8E 00 05 24 01"))
    assert events == [
        SquareEmptied(square=chess.E2, at=AT),
        SquareOccupied(square=chess.E4, piece=chess.Piece(chess.PAWN, chess.WHITE), at=AT),
    ]
    assert (c.dropped_bytes, c.dropped_frames) == (0, 0)


@pytest.mark.parametrize(("code", "symbol"), sorted(PIECE_TABLE.items()))
def test_field_update_piece_codes(code: int, symbol: str) -> None:
    event = only(feed(field_update(0x3C, code))[0])  # index 60 = e1
    assert event == SquareOccupied(square=chess.E1, piece=chess.Piece.from_symbol(symbol), at=AT)


@pytest.mark.parametrize(("code", "word"), [(0x0D, "magic"), (0x0E, "magic"), (0x0F, "magic")])
def test_field_update_magic_piece_is_dropped(code: int, word: str) -> None:
    events, c = feed(field_update(0x00, code) + field_update(0x01, 0x05))
    drop, occupied = events
    assert isinstance(drop, FrameDropped)
    assert word in drop.reason
    assert f"0x{code:02x}" in drop.reason
    assert occupied == SquareOccupied(
        square=chess.B8, piece=chess.Piece(chess.KING, chess.WHITE), at=AT
    )
    assert c.dropped_frames == 1


@pytest.mark.parametrize("code", [0x10, 0x21, 0x7F])
def test_field_update_code_above_0f_is_dropped(code: int) -> None:
    drop = only(feed(field_update(0x00, code))[0])
    assert isinstance(drop, FrameDropped)
    assert f"0x{code:02x}" in drop.reason


def test_field_update_square_out_of_range_is_dropped() -> None:
    drop = only(feed(field_update(64, 0x01))[0])
    assert isinstance(drop, FrameDropped)
    assert "64" in drop.reason


# --- BWTIME: times ---------------------------------------------------------------------------


def reading(
    *,
    left: int = 0,
    right: int = 0,
    running: bool = False,
    lever_high: ClockSide = ClockSide.LEFT,
    connected: bool = True,
    left_flag: bool = False,
    right_flag: bool = False,
    battery_low: bool = False,
) -> ClockReading:
    return ClockReading(
        left=left,
        right=right,
        running=running,
        lever_high=lever_high,
        connected=connected,
        left_flag=left_flag,
        right_flag=right_flag,
        battery_low=battery_low,
        at=AT,
    )


@pytest.mark.parametrize(
    ("hexdata", "expected"),
    [
        # right 1:30:05, left 0:59:59, running, lever D1 = right high
        (
            "8D 00 0A 01 30 05 00 59 59 03",
            reading(right=5405, left=3599, running=True, lever_high=RIGHT),
        ),
        # 9:59:59 both sides, stopped, left lever high
        ("8D 00 0A 09 59 59 09 59 59 00", reading(right=35999, left=35999)),
        # D4 of byte 3: right flag fallen and blocked
        (
            "8D 00 0A 10 00 00 00 10 00 01",
            reading(right=0, left=600, running=True, right_flag=True),
        ),
        # D6 of byte 6: left flag shown
        ("8D 00 0A 00 05 00 40 00 00 00", reading(right=300, left=0, left_flag=True)),
        # D5 of byte 3 (time-per-move indicator) is not a flag
        ("8D 00 0A 20 05 00 00 05 00 00", reading(right=300, left=300)),
        # status D2: battery low
        ("8D 00 0A 00 00 07 00 00 08 04", reading(right=7, left=8, battery_low=True)),
        # status D5: no clock connected
        ("8D 00 0A 00 00 00 00 00 00 20", reading(connected=False)),
        # status D3 / D4 turn bits are ignored (0x09 = D3 + running, 0x13 = D4 + D1 + running)
        ("8D 00 0A 00 10 00 00 20 00 09", reading(right=600, left=1200, running=True)),
        (
            "8D 00 0A 00 10 00 00 20 00 13",
            reading(right=600, left=1200, running=True, lever_high=RIGHT),
        ),
    ],
)
def test_bwtime_times(hexdata: str, expected: ClockReading) -> None:
    assert only(feed(bytes.fromhex(hexdata))[0]) == expected


def test_bwtime_null_message_is_ignored_silently() -> None:
    events, c = feed(bytes.fromhex("8D 00 0A 00 00 00 00 00 00 00"))
    assert events == []
    assert (c.dropped_bytes, c.dropped_frames, c.buffered) == (0, 0, 0)


@pytest.mark.parametrize(
    ("hexdata", "bad"),
    [
        ("8D 00 0A 00 60 00 00 00 00 01", "0x60"),  # minutes 60
        ("8D 00 0A 00 00 5A 00 00 00 01", "0x5a"),  # seconds nibble > 9
        ("8D 00 0A 00 00 00 00 3F 00 01", "0x3f"),  # left minutes nibble > 9
        ("8D 00 0A 0B 00 00 00 00 00 01", "11"),  # hours > 9
    ],
)
def test_bwtime_invalid_bcd_is_dropped(hexdata: str, bad: str) -> None:
    events, c = feed(bytes.fromhex(hexdata))
    drop = only(events)
    assert isinstance(drop, FrameDropped)
    assert bad in drop.reason
    assert drop.raw == bytes.fromhex(hexdata)
    assert (c.dropped_frames, c.dropped_bytes) == (1, 10)


def test_bwtime_invalid_times_without_clock_still_report_disconnected() -> None:
    event = only(feed(bytes.fromhex("8D 00 0A 00 7F 7F 00 7F 7F 20"))[0])
    assert event == reading(connected=False)


# --- BWTIME: clock acks and buttons ----------------------------------------------------------


def test_button_press_literal() -> None:
    # ack0 0x10, ack1 0x88 (b6 D5 supplies the high bit), ack3 0x33 = run; b6 low nibble 0x0A.
    event = only(feed(bytes.fromhex("8D 00 0A 00 10 08 2A 00 33 00"))[0])
    assert event == ClockButton(button="run", at=AT)


@pytest.mark.parametrize(
    ("ack3", "name"),
    [
        (0x31, "back"),
        (0x32, "plus"),
        (0x33, "run"),
        (0x34, "minus"),
        (0x35, "ok"),
        (0x36, "unknown:0x36"),
        (0xB1, "unknown:0xb1"),
    ],
)
@pytest.mark.parametrize("marker_in_b3", [False, True])
def test_clock_buttons(ack3: int, name: str, marker_in_b3: bool) -> None:
    data = bwtime_ack(0x10, 0x88, 0x00, ack3, marker_in_b3=marker_in_b3)
    assert only(feed(data)[0]) == ClockButton(button=name, at=AT)


@pytest.mark.parametrize(
    ("acks", "error"),
    [
        ((0x10, 0x09, 0x13, 0x00), False),  # clock version 1.3
        ((0x10, 0x0A, 0x00, 0x00), False),  # SETNRUN done
        ((0x40, 0x0A, 0x00, 0x00), True),  # SETNRUN while not in mode 23
        ((0x10, 0x0C, 0x00, 0x00), False),  # ASCII
        ((0x10, 0x81, 0x00, 0x00), False),  # unsolicited: ready
        ((0x10, 0x90, 0x00, 0x00), False),  # unsolicited: not in mode 23
        ((0x90, 0x8A, 0xC5, 0xF7), False),  # every reassembled high bit set
        ((0x10, 0x09, 0x93, 0x05), False),  # high bit of ack2 only
        ((0x10, 0x0B, 0x05, 0x93), False),  # high bit of ack3 only
        ((0x90, 0x01, 0x00, 0x00), False),  # high bit of ack0 only
    ],
)
@pytest.mark.parametrize("marker_in_b3", [False, True])
def test_clock_acks(acks: tuple[int, int, int, int], error: bool, marker_in_b3: bool) -> None:
    event = only(feed(bwtime_ack(*acks, marker_in_b3=marker_in_b3))[0])
    assert event == ClockAck(command=acks[1], error=error, data=acks, at=AT)


# --- Identity and health ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hexdata", "expected"),
    [
        ("91 00 08 30 31 30 32 35", BoardInfo(serial="01025", at=AT)),
        # 1998 form: digits, a space, the storage version "1.0"
        ("91 00 0C 30 31 30 32 35 20 31 2E 30", BoardInfo(serial="01025", at=AT)),
        ("A2 00 0D 33 2E 32 35 20 31 32 33 34 35", BoardInfo(serial="3.25 12345", at=AT)),
        ("A2 00 0D 31 32 33 34 35 36 20 20 20 20", BoardInfo(serial="123456", at=AT)),
        ("93 00 05 01 02", BoardInfo(version="1.02", at=AT)),
        ("93 00 05 03 0A", BoardInfo(version="3.10", at=AT)),
        ("92 00 09 44 47 54 20 21 0D", BoardInfo(trademark="DGT !", at=AT)),
        (
            "A0 00 0C 4B 02 1E 00 05 00 00 00 01",
            BoardInfo(battery_percent=75, charging=True, at=AT),
        ),
        (
            "A0 00 0C 64 7F 7F 00 05 00 00 00 02",
            BoardInfo(battery_percent=100, charging=False, at=AT),
        ),
        ("90 00 05 08 01", BoardInfo(serial="01025", at=AT)),  # §1.5: 0x08 0x01 = 1025
    ],
)
def test_board_info(hexdata: str, expected: BoardInfo) -> None:
    assert only(feed(bytes.fromhex(hexdata))[0]) == expected


# --- EE_MOVES --------------------------------------------------------------------------------


def ee_message(payload: bytes) -> bytes:
    size = len(payload) + 3
    return bytes([0x8F, size >> 7, size & 0x7F]) + payload


def test_ee_moves_tag_stream() -> None:
    payload = bytes.fromhex(
        "7F 7F 7F 6A"  # 3 × EE_NOP, EE_POWERUP
        " 45 3C 4B 04"  # white king e1, black king e8 (no delay bit)
        " 6F"  # EE_BEGINPOS
        " 50 34 41 24"  # r=1: e2 empty; white pawn e4
        " 71 05 30"  # clock tag, f=1 left display: 1:05:30
        " 60 59 59"  # right display 0:59:59
        " 00 7D 7E"  # EE_NOP2, reserved bytes: skipped
        " 6C 6D 6E 7A 7B 7C"  # remaining one-byte markers
        " 6B"  # EE_EOF
        " 41 00 01 02"  # stale bytes after EOF: ignored
    )
    events, c = feed(ee_message(payload))
    white, black = chess.WHITE, chess.BLACK
    assert events == [
        StoredMarker(tag=StoredTag.POWER_UP, at=AT),
        StoredChange(square=chess.E1, piece=chess.Piece(chess.KING, white), at=AT),
        StoredChange(square=chess.E8, piece=chess.Piece(chess.KING, black), at=AT),
        StoredMarker(tag=StoredTag.BEGIN_POSITION, at=AT),
        StoredChange(square=chess.E2, piece=None, at=AT),
        StoredChange(square=chess.E4, piece=chess.Piece(chess.PAWN, white), at=AT),
        StoredClockTime(side=ClockSide.LEFT, seconds=3930, at=AT),
        StoredClockTime(side=ClockSide.RIGHT, seconds=3599, at=AT),
        StoredMarker(tag=StoredTag.FOUR_ROWS, at=AT),
        StoredMarker(tag=StoredTag.EMPTY_BOARD, at=AT),
        StoredMarker(tag=StoredTag.DOWNLOADED, at=AT),
        StoredMarker(tag=StoredTag.BEGIN_POSITION_ROTATED, at=AT),
        StoredMarker(tag=StoredTag.START_GAME, at=AT),
        StoredMarker(tag=StoredTag.WATCHDOG, at=AT),
        StoredEnd(at=AT),
    ]
    assert (c.dropped_bytes, c.dropped_frames) == (0, 0)


@pytest.mark.parametrize(
    "payload", [b"\x6b", b"", b"\x7f\x7f\x6b"], ids=["only-eof", "nothing", "only-nops"]
)
def test_an_empty_memory_still_ends(payload: bytes) -> None:
    """A board whose store holds nothing answers with (at most) EE_EOF: the end is reported."""
    events, c = feed(ee_message(payload))
    assert events == [StoredEnd(at=AT)]
    assert c.buffered == 0


def test_receiving_names_the_message_under_way() -> None:
    c = DgtCodec()
    idle = c.receiving
    c.feed(ee_message(b"\x6a\x6b")[:3], AT)
    under_way = c.receiving
    events = c.feed(b"\x6a\x6b", AT)
    assert (idle, under_way, c.receiving) == (None, 0x8F, None)
    assert events == [StoredMarker(tag=StoredTag.POWER_UP, at=AT), StoredEnd(at=AT)]


def test_ee_moves_malformed_tags_are_dropped_and_decoding_continues() -> None:
    payload = bytes.fromhex(
        "4D 10"  # magic piece code in a field tag
        " 41 40"  # square 64
        " 01"  # not a tag
        " 6A"  # EE_POWERUP, valid
        " 60 5A 00"  # clock tag with bad BCD minutes 0x5A
        " 42 00"  # white rook a8, valid
        " 41"  # cut short by the end of the message (no EE_EOF)
    )
    events, c = feed(ee_message(payload))
    assert len(events) == 6
    first_drop, marker, second_drop, rook, last_drop, end = events
    assert isinstance(first_drop, FrameDropped)
    assert first_drop.raw == bytes.fromhex("4D 10 41 40 01")
    assert "0x0d" in first_drop.reason
    assert "+2 more" in first_drop.reason
    assert marker == StoredMarker(tag=StoredTag.POWER_UP, at=AT)
    assert isinstance(second_drop, FrameDropped)
    assert second_drop.raw == bytes.fromhex("60 5A 00")
    assert rook == StoredChange(square=chess.A8, piece=chess.Piece(chess.ROOK, chess.WHITE), at=AT)
    assert isinstance(last_drop, FrameDropped)
    assert last_drop.raw == b"\x41"
    assert end == StoredEnd(at=AT)
    assert (c.dropped_frames, c.dropped_bytes) == (5, 9)


def test_ee_moves_largest_message_is_accepted() -> None:
    payload = bytes([0x7F] * (0x2000 - 3)) + bytes.fromhex("42 3F 6B")  # ends: white rook h1, EOF
    data = ee_message(payload)
    assert len(data) == 0x2003
    events, c = feed(data)
    assert events == [
        StoredChange(square=chess.H1, piece=chess.Piece(chess.ROOK, chess.WHITE), at=AT),
        StoredEnd(at=AT),
    ]
    assert c.buffered == 0


# --- Framing ---------------------------------------------------------------------------------

STREAM = (
    START_DUMP
    + bytes.fromhex("8E 00 05 34 00 8E 00 05 24 01")
    + bytes.fromhex("8D 00 0A 01 30 05 00 59 59 03")
    + bytes.fromhex("93 00 05 01 02")
    + ee_message(bytes.fromhex("6A 41 24 6B"))
)


def test_byte_at_a_time_equals_whole() -> None:
    whole, _ = feed(STREAM)
    assert len(whole) == 8
    assert drops(whole) == []
    c = DgtCodec()
    pieces = [c.feed(bytes([b]), AT) for b in STREAM]
    assert [e for part in pieces for e in part] == whole
    # Only the last byte of each of the six messages completes it.
    assert sum(bool(part) for part in pieces) == 6


def test_event_is_stamped_by_the_completing_feed() -> None:
    c = DgtCodec()
    assert c.feed(bytes.fromhex("8E 00 05"), 1.0) == []
    assert c.buffered == 3
    assert c.feed(bytes.fromhex("34 00"), 2.0) == [SquareEmptied(square=chess.E2, at=2.0)]


def test_stray_bytes_before_and_between_frames() -> None:
    data = b"\x00\x01hello" + field_update(0x34, 0) + b"\x7f\x7f" + field_update(0x24, 1)
    events, c = feed(data)
    assert kept(events) == kept(feed(STREAM[67:77])[0])
    first, _, second, _ = events
    assert isinstance(first, FrameDropped)
    assert first.raw == b"\x00\x01hello"
    assert isinstance(second, FrameDropped)
    assert second.raw == b"\x7f\x7f"
    assert (c.dropped_bytes, c.dropped_frames) == (9, 0)


def test_unknown_id_is_dropped_with_its_payload() -> None:
    # 0x94 (draughts dump) and 0xC3 are not handled; their payloads become stray bytes.
    data = bytes.fromhex("94 00 06 01 02 03 C3 05") + field_update(0x24, 1)
    events, c = feed(data)
    drop, occupied = events
    assert isinstance(drop, FrameDropped)
    assert drop.reason.startswith("unknown message id 0x94")
    assert drop.raw == bytes.fromhex("94 00 06 01 02 03 C3 05")
    assert isinstance(occupied, SquareOccupied)
    assert (c.dropped_bytes, c.dropped_frames) == (8, 2)


def test_msb_inside_payload_aborts_and_resyncs() -> None:
    data = bytes.fromhex("8E 00 05 34") + field_update(0x24, 1)
    events, c = feed(data)
    drop, occupied = events
    assert isinstance(drop, FrameDropped)
    assert "interrupted" in drop.reason
    assert drop.raw == bytes.fromhex("8E 00 05 34")
    assert occupied == SquareOccupied(
        square=chess.E4, piece=chess.Piece(chess.PAWN, chess.WHITE), at=AT
    )
    assert (c.dropped_bytes, c.dropped_frames) == (4, 1)


def test_truncated_frame_across_feeds_is_reported_whole() -> None:
    c = DgtCodec()
    assert c.feed(START_DUMP[:40], 1.0) == []
    events = c.feed(field_update(0x34, 0), 2.0)
    drop, emptied = events
    assert isinstance(drop, FrameDropped)
    assert drop.raw == START_DUMP[:40]
    assert emptied == SquareEmptied(square=chess.E2, at=2.0)


@pytest.mark.parametrize(
    "header",
    [
        "8E 00 06",  # FIELD_UPDATE must be 5
        "8E 00 04",
        "86 00 42",  # BOARD_DUMP must be 67
        "8D 00 09",  # BWTIME must be 10
        "93 00 02",  # below the header size
        "92 00 00",
        "92 00 44",  # TRADEMARK of 68: over the 64-byte payload bound
        "91 00 09",  # SERIALNR is 8 or 12
        "A0 00 07",  # BATTERY_STATUS: trust 12
        "8F 40 04",  # EE_MOVES of 0x2004
        "86 7F 7F",  # 16383
    ],
)
def test_impossible_sizes_are_dropped(header: str) -> None:
    data = bytes.fromhex(header) + bytes(70) + field_update(0x34, 0)
    events, c = feed(data)
    drop, emptied = events
    assert isinstance(drop, FrameDropped)
    assert "size" in drop.reason
    assert drop.raw[:3] == bytes.fromhex(header)
    assert emptied == SquareEmptied(square=chess.E2, at=AT)
    assert (c.dropped_bytes, c.dropped_frames) == (73, 1)
    assert c.buffered == 0


def test_garbage_flood_gives_one_event_with_capped_raw() -> None:
    garbage = bytes(range(256)) * 40
    events, c = feed(garbage)
    drop = only(events)
    assert isinstance(drop, FrameDropped)
    assert drop.raw == garbage[:64]
    assert c.dropped_bytes == len(garbage)
    assert c.dropped_frames > 1


def test_drops_are_reported_per_feed_call() -> None:
    c = DgtCodec()
    first = c.feed(b"\x01\x02", 1.0)
    second = c.feed(b"\x03", 2.0)
    assert first == [FrameDropped(reason="stray bytes outside a message", raw=b"\x01\x02", at=1.0)]
    assert second == [FrameDropped(reason="stray bytes outside a message", raw=b"\x03", at=2.0)]
    assert c.dropped_bytes == 3


def test_buffer_stays_bounded_for_the_longest_claimed_message() -> None:
    c = DgtCodec()
    assert c.feed(bytes.fromhex("8F 40 03"), AT) == []  # EE_MOVES of 0x2003 bytes
    for _ in range(8):
        assert c.feed(bytes([0x7F] * 1000), AT) == []
        assert c.buffered <= codec.MAX_MESSAGE_SIZE
    assert c.buffered == 8003
    # Byte 0x2003 is EE_EOF: the end of an empty memory.
    assert c.feed(bytes([0x7F] * 191) + b"\x6b", AT) == [StoredEnd(at=AT)]
    assert c.buffered == 0
    for _ in range(10):
        c.feed(bytes.fromhex("8F 7F 7F") + bytes([0x7F] * 1000), AT)
        assert c.buffered <= codec.MAX_MESSAGE_SIZE
    assert c.buffered == 0
    assert c.dropped_bytes == 10 * 1003


# --- Commands (§1.3, §1.8) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoder", "expected"),
    [
        (codec.reset, "40"),
        (codec.send_clock, "41"),
        (codec.send_board, "42"),
        (codec.update, "43"),
        (codec.update_board, "44"),
        (codec.serial_number, "45"),
        (codec.bus_address, "46"),
        (codec.trademark, "47"),
        (codec.ee_moves, "49"),
        (codec.update_nice, "4B"),
        (codec.battery_status, "4C"),
        (codec.version, "4D"),
        (codec.long_serial_number, "55"),
        (codec.clock_end, "2B 03 03 03 00"),
        (codec.clock_buttons, "2B 03 03 08 00"),
        (codec.clock_version, "2B 03 03 09 00"),  # §1.10: PC's clock version request
    ],
)
def test_simple_commands(encoder: Callable[[], bytes], expected: str) -> None:
    assert encoder() == bytes.fromhex(expected)


def test_clock_beep() -> None:
    assert codec.clock_beep(5) == bytes.fromhex("2B 04 03 0B 05 00")


@pytest.mark.parametrize(
    ("text", "beep", "expected"),
    [
        ("hello", 0, "2B 0C 03 0C 68 65 6C 6C 6F 20 20 20 00 00"),
        ("ABCDEFGHIJ", 3, "2B 0C 03 0C 41 42 43 44 45 46 47 48 03 00"),
        ("é½\x01x", 0, "2B 0C 03 0C 3F 3F 3F 78 20 20 20 20 00 00"),
        ("", 255, "2B 0C 03 0C 20 20 20 20 20 20 20 20 FF 00"),
    ],
)
def test_clock_ascii(text: str, beep: int, expected: str) -> None:
    assert codec.clock_ascii(text, beep) == bytes.fromhex(expected)


def test_clock_ascii_default_beep_is_silent() -> None:
    assert codec.clock_ascii("12345678")[-2:] == b"\x00\x00"


def test_clock_set_and_run_times_are_binary() -> None:
    # left 1:30:00, right 1:01:01, left counts down, toggle on lever (default) → flags 0x09
    data = codec.clock_set_and_run(5400, 3661, left_runs=True, right_runs=False)
    assert data == bytes.fromhex("2B 0A 03 0A 01 1E 00 01 01 01 09 00")


@pytest.mark.parametrize(
    ("kwargs", "flags"),
    [
        ({"left_runs": False, "right_runs": False, "toggle_on_lever": False}, 0x00),
        ({"left_runs": True, "right_runs": False, "toggle_on_lever": False}, 0x01),
        ({"left_runs": False, "right_runs": True, "toggle_on_lever": False}, 0x02),
        ({"left_runs": False, "right_runs": False, "pause": True, "toggle_on_lever": False}, 0x04),
        ({"left_runs": False, "right_runs": False}, 0x08),
        ({"left_runs": True, "right_runs": True, "pause": True}, 0x0F),
    ],
)
def test_clock_set_and_run_flags(kwargs: dict[str, bool], flags: int) -> None:
    data = codec.clock_set_and_run(35999, 0, **kwargs)
    assert data == bytes([0x2B, 0x0A, 0x03, 0x0A, 9, 59, 59, 0, 0, 0, flags, 0x00])


def test_clock_commands_size_byte_counts_the_rest() -> None:
    for data in [
        codec.clock_ascii("x"),
        codec.clock_set_and_run(1, 2, left_runs=True, right_runs=True),
        codec.clock_end(),
        codec.clock_beep(1),
        codec.clock_version(),
        codec.clock_buttons(),
    ]:
        assert data[0] == 0x2B
        assert data[1] == len(data) - 2
        assert data[2] == 0x03
        assert data[-1] == 0x00


@pytest.mark.parametrize(("left", "right"), [(-1, 0), (0, 36000), (10**6, 0)])
def test_clock_set_and_run_rejects_times_out_of_range(left: int, right: int) -> None:
    with pytest.raises(ValueError, match="must be within"):
        codec.clock_set_and_run(left, right, left_runs=True, right_runs=False)


def test_byte_arguments_out_of_range() -> None:
    with pytest.raises(ValueError, match="beep"):
        codec.clock_ascii("x", 256)
    with pytest.raises(ValueError, match="units"):
        codec.clock_beep(-1)


# --- implausible identity --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hexdata", "why"),
    [
        ("91 00 08 30 31 07 32 35", "serial"),  # BEL in the serial
        ("91 00 08 30 1B 5B 32 4B", "serial"),  # ESC [2K
        ("A2 00 0D 31 32 0A 63 68 65 73 73 0D 31 32", "serial"),  # a line break
        ("91 00 08 20 20 20 20 20", "serial"),  # nothing but blanks
        ("93 00 05 7F 7F", "firmware"),  # 127.127
        ("93 00 05 01 64", "firmware"),  # 1.100
        ("92 00 09 44 47 54 1B 5B 07", "trademark"),  # ESC and BEL
        ("92 00 05 0D 0A", "trademark"),  # nothing but a line break
    ],
)
def test_implausible_identity_is_dropped_as_a_framing_error(hexdata: str, why: str) -> None:
    events, c = feed(bytes.fromhex(hexdata))
    assert not [e for e in events if isinstance(e, BoardInfo)]
    [dropped] = drops(events)
    assert why in dropped.reason
    assert c.dropped_frames == 1


def test_a_trademark_on_several_lines_is_one_line() -> None:
    data = b"Digital Game Technology\r\nsoftware version: 1.07"
    events, _ = feed(bytes([0x92, 0, len(data) + 3]) + data)
    assert only(events) == BoardInfo(
        trademark="Digital Game Technology / software version: 1.07", at=AT
    )
