"""Millennium over Bluetooth LE: the serial codec behind the BLE link's codec interface.

Wire bytes are the worked examples of board-protocols.md §4, written out by hand.
"""

from __future__ import annotations

import chess

from drivers.events import BoardInfo, BoardSnapshot
from drivers.millennium_ble.link import FAMILY, MillenniumBleCodec, leds
from tests.chesslink import wire

NOTIFY = "49535343-1e4d-4bd9-ba61-23c647249616"


def test_replies_become_events_and_acknowledgements_stay_in_the_link() -> None:
    codec = MillenniumBleCodec()
    assert codec.feed(NOTIFY, wire("v0104"), 1.0) == [BoardInfo(version="1.04", at=1.0)]
    assert codec.feed(NOTIFY, wire("w0203"), 2.0) == []  # the E2ROM write acknowledged
    assert codec.feed(NOTIFY, wire("l"), 3.0) == []  # the LEDs acknowledged
    # The status starts at h1 (§4 [conflict], as the codec reads it).
    start = "RNBKQBNR" + "P" * 8 + "." * 32 + "p" * 8 + "rnbkqbnr"
    [snapshot] = codec.feed(NOTIFY, wire("s" + start), 4.0)
    assert isinstance(snapshot, BoardSnapshot)
    assert snapshot.squares == tuple(chess.Board().piece_at(sq) for sq in chess.SQUARES)


def test_other_characteristics_and_garbage_say_nothing_that_is_a_move() -> None:
    codec = MillenniumBleCodec()
    assert codec.feed("49535343-8841-43f4-a8d4-ecbe34729bb3", wire("v0104"), 1.0) == []
    events = codec.feed(NOTIFY, b"\x00\xff\x41garbage", 2.0)
    assert all(type(e).__name__ == "FrameDropped" for e in events)


def test_no_lights_is_the_all_off_command() -> None:
    assert leds([]) == bytes.fromhex("58 B5 38")  # "X58" with odd parity (§4: X, then its check)
    assert leds([chess.E4])[0] == 0x4C  # "L" has odd parity already
    assert FAMILY.write_gap > 0  # python-mchess keeps 0.1 s between BLE writes (§4)
