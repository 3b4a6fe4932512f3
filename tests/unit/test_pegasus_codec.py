"""The DGT Pegasus codec on bytes written from board-protocols.md §1.4-§1.5 and §2."""

from __future__ import annotations

import chess
import pytest

from drivers.events import (
    UNKNOWN,
    BoardInfo,
    BoardSnapshot,
    FrameDropped,
    SquareEmptied,
    SquareOccupied,
)
from drivers.pegasus import codec
from drivers.pegasus.codec import PegasusCodec

TX = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
START_OCCUPANCY = bytes([1] * 16 + [0] * 32 + [1] * 16)  # a8..h7, then a2..h1 (§1.6 order)
START_DUMP = bytes.fromhex("86 00 43") + START_OCCUPANCY


def occupied_start() -> tuple[object, ...]:
    return tuple(UNKNOWN if chess.Board().piece_at(sq) else None for sq in chess.SQUARES)


def test_the_dump_says_where_pieces_stand_not_which() -> None:
    [snapshot] = PegasusCodec().feed(TX, START_DUMP, 1.0)
    assert isinstance(snapshot, BoardSnapshot)
    assert snapshot.squares == occupied_start()


def test_0x7f_reads_as_empty_as_a_real_board_sends_it() -> None:
    # §2 [conflict]: DCMA's sniffer saw 0x7F for empty squares on a real Pegasus.
    dump = bytes.fromhex("86 00 43") + bytes(0x7F if b == 0 else 0x01 for b in START_OCCUPANCY)
    [snapshot] = PegasusCodec().feed(TX, dump, 1.0)
    assert isinstance(snapshot, BoardSnapshot)
    assert snapshot.squares == occupied_start()


def test_field_updates_are_lifts_and_unknown_places() -> None:
    c = PegasusCodec()
    # §2: 8E 00 05 <square, a8 = 0> <0 = lifted / non-zero = placed>; e2 is index 52.
    assert c.feed(TX, bytes.fromhex("8E 00 05 34 00"), 1.0) == [
        SquareEmptied(square=chess.E2, at=1.0)
    ]
    assert c.feed(TX, bytes.fromhex("8E 00 05 24 01"), 2.0) == [
        SquareOccupied(square=chess.E4, piece=UNKNOWN, at=2.0)
    ]
    assert c.feed(TX, bytes.fromhex("8E 00 05 24 06"), 3.0) == [
        SquareOccupied(square=chess.E4, piece=UNKNOWN, at=3.0)
    ]


def trademark_message(text: bytes) -> bytes:
    size = len(text) + 3  # §1.4: id, two 7-bit length bytes, then the payload
    return bytes([0x92, size >> 7, size & 0x7F]) + text


# §2 (DCMA): the four lines a Pegasus answers DGT_SEND_TRADEMARK with.
TRADEMARK = (
    b"Digital Game Technology\r\nCopyright (c) 2021 DGT\r\n"
    b"software version: 1.02, build: 210722\r\nhardware version: 1.00, serial no: 12345"
)


def test_identity_and_battery() -> None:
    c = PegasusCodec()
    assert c.feed(TX, bytes.fromhex("93 00 05 01 02"), 1.0) == [BoardInfo(version="1.02", at=1.0)]
    assert c.feed(TX, trademark_message(TRADEMARK), 2.0) == [
        BoardInfo(trademark="DGT Pegasus", serial="12345", at=2.0)
    ]
    # §2: battery, 9 bytes: percent first, status last (1 = charging for MONO, 2 discharging).
    assert c.feed(TX, bytes.fromhex("A0 00 0C 48 7F 7F 00 00 00 00 00 02"), 3.0) == [
        BoardInfo(battery_percent=72, charging=False, at=3.0)
    ]
    assert c.feed(TX, bytes.fromhex("A0 00 0C 48 7F 7F 00 00 00 00 00 01"), 4.0) == [
        BoardInfo(battery_percent=72, charging=True, at=4.0)
    ]


@pytest.mark.parametrize(
    ("text", "serial"),
    [
        (b"hardware version: 1.00, serial no: P0A1B2C3\r\n", "P0A1B2C3"),
        (b"Digital Game Technology\r\nHardware Version: 1.00, Serial No: 12345, x", "12345"),
        (b"Digital Game Technology\r\nCopyright (c) 2021 DGT", None),  # no serial line
        (b"hardware version: 1.00, serial no: ", None),  # an empty serial
        (b"hardware version: 1.00, serial no: -12!", None),  # not a plausible serial
    ],
)
def test_the_serial_number_is_read_out_of_the_trademark(text: bytes, serial: str | None) -> None:
    assert PegasusCodec().feed(TX, trademark_message(text), 1.0) == [
        BoardInfo(trademark="DGT Pegasus", serial=serial, at=1.0)
    ]


def test_a_trademark_that_is_not_text_is_dropped() -> None:
    [dropped] = PegasusCodec().feed(TX, trademark_message(b"Digital\x1b[31m Game"), 1.0)
    assert isinstance(dropped, FrameDropped)
    assert dropped.reason.startswith("TRADEMARK: implausible trademark")


def test_a_dump_split_over_notifications_and_noise() -> None:
    c = PegasusCodec()
    assert c.feed(TX, b"\x11\x22" + START_DUMP[:20], 1.0)[0] == FrameDropped(
        reason="stray bytes outside a message", raw=b"\x11\x22", at=1.0
    )
    events = c.feed(TX, START_DUMP[20:], 2.0)
    assert [type(e) for e in events] == [BoardSnapshot]
    # A DGT clock message: no Pegasus sends one; dropped, with the stray bytes after its id.
    [dropped] = c.feed(TX, bytes.fromhex("8D 00 0A 00 00 00 00 00 00 00"), 3.0)
    assert isinstance(dropped, FrameDropped)
    assert dropped.reason.startswith("unknown message id 0x8d")


def test_other_characteristics_say_nothing() -> None:
    assert PegasusCodec().feed("6e400002-b5a3-f393-e0a9-e50e24dcca9e", START_DUMP, 1.0) == []


@pytest.mark.parametrize(
    ("squares", "expected"),
    [
        ([], "60 02 00 00"),
        ([chess.E2, chess.E4], "60 07 05 01 00 00 24 34 00"),  # §2: len, 05, speed, mode, ...
        ([chess.A8], "60 06 05 01 00 00 00 00"),
    ],
)
def test_led_commands(squares: list[chess.Square], expected: str) -> None:
    assert codec.leds(squares) == bytes.fromhex(expected)


def test_start_up_commands_are_dgt_bytes() -> None:
    assert codec.reset() + codec.send_board() + codec.update_board() == bytes.fromhex("40 42 44")
    assert codec.version() + codec.trademark() + codec.battery() == bytes.fromhex("4D 47 4C")
