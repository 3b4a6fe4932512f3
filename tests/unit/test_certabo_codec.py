"""The Certabo codec, against lines built here from board-protocols.md §5.

A line is ``:`` and 320 decimal numbers (a tag of five per square, a8 first) then `` \\r\\n``;
the lines are made by :func:`line` below, never by the code under test.
"""

from __future__ import annotations

import chess
import pytest

from drivers.certabo.codec import Calibrated, CertaboCodec, leds
from drivers.events import (
    UNKNOWN,
    BoardEvent,
    BoardSnapshot,
    FrameDropped,
    Occupant,
    SquareEmptied,
    SquareOccupied,
)

AT = 2.0
Tags = dict[str, tuple[int, ...]]


def line(tags: Tags, noise: tuple[int, ...] | None = None) -> bytes:
    """§5: the board's line for ``tags`` by square name; ``noise`` on every other square."""
    numbers: list[int] = []
    for rank in reversed(range(8)):
        for file in range(8):
            empty = (0, 0, 0, 0, 0) if noise is None else noise
            numbers += tags.get(chess.square_name(chess.square(file, rank)), empty)
    return b":" + " ".join(map(str, numbers)).encode() + b" \r\n"


def start_tags(rotated: bool = False, first: int = 1) -> Tags:
    """One tag per piece of the start position, numbered from ``first``."""
    out: Tags = {}
    for n, square in enumerate(sorted(chess.BaseBoard().piece_map())):
        placed = 63 - square if rotated else square
        out[chess.square_name(placed)] = (3, 0, 100 + first + n, 7, 200 - n)
    return out


def board(occupants: tuple[Occupant | None, ...]) -> dict[str, str]:
    return {
        chess.square_name(sq): "?" if o is UNKNOWN else o.symbol()  # type: ignore[union-attr]
        for sq, o in enumerate(occupants)
        if o is not None
    }


START = {chess.square_name(sq): p.symbol() for sq, p in chess.BaseBoard().piece_map().items()}


def calibrated_codec(tags: Tags) -> tuple[CertaboCodec, list[BoardEvent | Calibrated]]:
    codec = CertaboCodec()
    assert codec.feed(line(tags), AT) == [], "one reading is only what the next is checked by"
    return codec, codec.feed(line(tags), AT + 1)


def test_the_start_position_read_twice_calibrates_every_tag() -> None:
    codec, events = calibrated_codec(start_tags())
    calibrated, snapshot = events
    assert calibrated == Calibrated(pieces=32, rotated=False, at=AT + 1)
    assert isinstance(snapshot, BoardSnapshot)
    assert board(snapshot.squares) == START
    assert len(codec.calibration) == 32


def test_a_move_after_calibration_is_a_lift_and_a_place_of_known_pieces() -> None:
    tags = start_tags()
    codec, _ = calibrated_codec(tags)
    pawn = tags.pop("e2")
    assert codec.feed(line(tags), AT + 2) == [SquareEmptied(square=chess.E2, at=AT + 2)]
    tags["e4"] = pawn
    assert codec.feed(line(tags), AT + 3) == [
        SquareOccupied(square=chess.E4, piece=chess.Piece(chess.PAWN, chess.WHITE), at=AT + 3)
    ]


def test_both_in_one_reading_come_lift_first() -> None:
    tags = start_tags()
    codec, _ = calibrated_codec(tags)
    tags["f3"] = tags.pop("g1")
    events = codec.feed(line(tags), AT + 2)
    assert [(type(e).__name__, chess.square_name(e.square)) for e in events] == [  # type: ignore[union-attr]
        ("SquareEmptied", "g1"),
        ("SquareOccupied", "f3"),
    ]


def test_before_calibration_pieces_are_unknown() -> None:
    tags = start_tags()
    del tags["e2"]  # not the start position: nothing to learn from
    codec = CertaboCodec()
    codec.feed(line(tags), AT)
    (snapshot,) = codec.feed(line(tags), AT + 1)
    assert isinstance(snapshot, BoardSnapshot)
    shown = board(snapshot.squares)
    assert set(shown) == set(START) - {"e2"}
    assert set(shown.values()) == {"?"}
    assert codec.calibration == {}


def test_an_unknown_tag_counts_once_read_twice_on_its_square() -> None:
    tags = start_tags()
    codec, _ = calibrated_codec(tags)
    tags["e4"] = (9, 9, 9, 9, 9)  # a spare queen nobody calibrated
    assert codec.feed(line(tags), AT + 2) == []
    assert codec.feed(line(tags), AT + 3) == [
        SquareOccupied(square=chess.E4, piece=UNKNOWN, at=AT + 3)
    ]


def test_a_misread_tag_on_an_occupied_square_changes_nothing() -> None:
    tags = start_tags()
    codec, _ = calibrated_codec(tags)
    misread = dict(tags, d1=(3, 0, 1, 2, 3))
    assert codec.feed(line(misread), AT + 2) == []
    assert codec.feed(line(tags), AT + 3) == []


def test_one_id_on_many_squares_is_noise() -> None:
    # The vendor's simulator reports "0 0 56 0 0" on most empty squares (§5).
    tags = start_tags()
    codec = CertaboCodec()
    codec.feed(line(tags, noise=(0, 0, 56, 0, 0)), AT)
    calibrated, snapshot = codec.feed(line(tags, noise=(0, 0, 56, 0, 0)), AT + 1)
    assert isinstance(calibrated, Calibrated)
    assert isinstance(snapshot, BoardSnapshot)
    assert board(snapshot.squares) == START


def test_known_tags_tell_a_board_set_up_turned_round() -> None:
    codec, _ = calibrated_codec(start_tags())
    turned = CertaboCodec(codec.calibration)
    rotated = {
        chess.square_name(63 - chess.parse_square(name)): tag for name, tag in start_tags().items()
    }
    turned.feed(line(rotated), AT)
    (snapshot,) = turned.feed(line(rotated), AT + 1)  # nothing new to learn
    assert isinstance(snapshot, BoardSnapshot)
    assert snapshot.squares == tuple(chess.BaseBoard().piece_at(63 - sq) for sq in chess.SQUARES)
    # Two new pieces on a turned board are learnt turned round, as their neighbours show.
    rotated["e7"] = (1, 1, 1, 1, 1)  # the players' d2 pawn, White's
    rotated["d8"] = (2, 2, 2, 2, 2)  # the players' e1 king
    turned.feed(line(rotated), AT + 2)
    events = turned.feed(line(rotated), AT + 3)
    assert events[0] == Calibrated(pieces=2, rotated=True, at=AT + 3)
    assert turned.calibration[(1, 1, 1, 1, 1)] == chess.Piece(chess.PAWN, chess.WHITE)
    assert turned.calibration[(2, 2, 2, 2, 2)] == chess.Piece(chess.KING, chess.WHITE)


def test_known_tags_keep_their_piece_when_set_up_wrongly() -> None:
    tags = start_tags()
    codec, _ = calibrated_codec(tags)
    tags["b1"], tags["c1"] = tags["c1"], tags["b1"]  # knight and bishop swapped at set-up
    events = codec.feed(line(tags), AT + 2) + codec.feed(line(tags), AT + 3)
    assert not any(isinstance(e, Calibrated) for e in events)
    bishop = chess.Piece(chess.BISHOP, chess.WHITE)
    assert SquareOccupied(square=chess.B1, piece=bishop, at=AT + 2) in events


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (b"0 0 0 0 0\r\n", "without ':'"),
        (b":1 2 3\r\n", "of 3 numbers"),
        (b":" + b"1 " * 319 + b"x\r\n", "something else"),
        (b":" + b"1 " * 319 + b"1234\r\n", "something else"),
    ],
)
def test_bad_lines_are_dropped_and_said(bad: bytes, reason: str) -> None:
    codec = CertaboCodec()
    (dropped,) = codec.feed(bad, AT)
    assert isinstance(dropped, FrameDropped)
    assert reason in dropped.reason
    assert codec.dropped_lines == 1
    assert codec.lines_read == 0


def test_markers_and_large_numbers_are_taken() -> None:
    # PicoChess strips 'L'/'D' (RGB-LED boards); the vendor's simulator sends 276, 345.
    tags = start_tags()
    tags["e1"] = (208, 0, 345, 1, 84)
    data = line(tags).replace(b" \r\n", b" L \r\n")
    codec = CertaboCodec()
    codec.feed(data, AT)
    assert isinstance(codec.feed(data, AT + 1)[0], Calibrated)
    assert codec.calibration[(208, 0, 345, 1, 84)] == chess.Piece(chess.KING, chess.WHITE)


def test_garbage_before_a_line_and_an_endless_run() -> None:
    tags = start_tags()
    codec = CertaboCodec()
    assert codec.feed(b"\xff\x00garbage" + line(tags), AT) == []
    assert codec.lines_read == 1
    events = codec.feed(b"9" * 5000, AT)
    assert [type(e) for e in events] == [FrameDropped]
    assert codec.buffered <= 2000
    codec.feed(b"\n" + line(tags), AT)
    assert codec.lines_read == 2


def test_led_bytes() -> None:
    # §5: byte 0 is rank 8, bit 0 the a-file; PicoChess's calibration pattern FF FF 08 00 00 08
    # FF FF lights ranks 8, 7, 2, 1 and the spare queens' squares d6 and d3.
    lit = {sq for sq in chess.SQUARES if chess.square_rank(sq) in (0, 1, 6, 7)}
    assert leds(lit | {chess.D6, chess.D3}) == bytes.fromhex("FFFF080000 08FFFF".replace(" ", ""))
    assert leds({chess.A8}) == bytes([1, 0, 0, 0, 0, 0, 0, 0])
    assert leds({chess.H1}) == bytes([0, 0, 0, 0, 0, 0, 0, 0x80])
    assert leds(()) == bytes(8)
