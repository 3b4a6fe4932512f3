"""The Millennium ChessLink codec, against byte strings built here from board-protocols.md §4.

Frames are made by :func:`wire` below from the protocol text (odd parity in bit 7, block check
as two hex digits), never by the code under test.
"""

from __future__ import annotations

import chess
import pytest

from drivers.events import BoardInfo, BoardSnapshot, FrameDropped, SquareEmptied, SquareOccupied
from drivers.millennium import codec
from drivers.millennium.codec import Acknowledged, MillenniumCodec
from tests.chesslink import wire

AT = 7.5


def status_text(board: chess.BaseBoard) -> str:
    """The 64 status characters of ``board``: h1, g1, ..., a1, h2, ..., a8 (§4, as observed)."""
    chars = []
    for rank in range(8):
        for file in reversed(range(8)):
            piece = board.piece_at(chess.square(file, rank))
            chars.append("." if piece is None else piece.symbol())
    return "".join(chars)


def status(board: chess.BaseBoard) -> bytes:
    return wire("s" + status_text(board))


START = chess.BaseBoard()


def test_commands_match_the_worked_examples() -> None:
    # board-protocols.md §4: V -> D6 B5 B6, S -> D3 B5 B3, W0203 -> 57 B0 32 B0 B3 B5 B6.
    assert codec.version() == bytes.fromhex("d6b5b6")
    assert codec.status() == bytes.fromhex("d3b5b3")
    assert codec.write_e2rom(0x02, 0x03) == bytes.fromhex("57b032b0b3b5b6")
    assert codec.read_e2rom(0x01) == wire("R01")
    assert codec.leds_off() == wire("X")
    assert codec.reset() == wire("T")


def test_setup_identifies_sets_the_scan_and_reports_on_change() -> None:
    assert codec.setup() == (wire("V"), wire("W0114"), wire("W0203"), wire("S"))
    assert codec.setup(0x30)[1] == wire("W0130")
    with pytest.raises(ValueError, match="scan time"):
        codec.setup(14)


def test_the_version_reply_python_mchess_logged() -> None:
    # python-mchess: chess_link.py logs b'v\xb01\xb0\xb374' from a real board, "01.03".
    events = MillenniumCodec().feed(b"v\xb01\xb0\xb374", AT)
    assert events == [BoardInfo(version="1.03", at=AT)]


@pytest.mark.parametrize("body", ["7F7F", "FFFF", "1064", "0A00"])
def test_an_implausible_firmware_version_is_dropped_as_a_framing_error(body: str) -> None:
    """A well-framed version reply (parity and block check right) with a version no board has
    never reaches the retained board (127.127, 255.255, 16.100, 10.00 is kept)."""
    events = MillenniumCodec().feed(wire("v" + body), AT)
    major, minor = int(body[:2], 16), int(body[2:], 16)
    if major <= 15 and minor <= 99:
        assert events == [BoardInfo(version=f"{major}.{minor:02d}", at=AT)]
    else:
        (dropped,) = events
        assert isinstance(dropped, FrameDropped)
        assert "implausible firmware version" in dropped.reason


def test_the_first_status_is_a_snapshot_then_changes_per_square() -> None:
    mill = MillenniumCodec()
    (snapshot,) = mill.feed(status(START), AT)
    assert isinstance(snapshot, BoardSnapshot)
    assert snapshot.squares == tuple(START.piece_at(sq) for sq in chess.SQUARES)
    after = START.copy()
    after.remove_piece_at(chess.E2)
    after.set_piece_at(chess.E4, chess.Piece(chess.PAWN, chess.WHITE))
    assert mill.feed(status(after), AT + 1) == [
        SquareEmptied(square=chess.E2, at=AT + 1),
        SquareOccupied(square=chess.E4, piece=chess.Piece(chess.PAWN, chess.WHITE), at=AT + 1),
    ]
    assert mill.feed(status(after), AT + 2) == []  # the same board again: nothing new


def test_the_first_character_is_h1() -> None:
    text = "." * 64
    events = MillenniumCodec().feed(wire("sK" + text[1:]), AT)
    (snapshot,) = events
    assert isinstance(snapshot, BoardSnapshot)
    assert snapshot.squares[chess.H1] == chess.Piece(chess.KING, chess.WHITE)
    assert sum(occupant is not None for occupant in snapshot.squares) == 1
    last = MillenniumCodec().feed(wire("s" + text[:-1] + "q"), AT)[0]
    assert isinstance(last, BoardSnapshot)
    assert last.squares[chess.A8] == chess.Piece(chess.QUEEN, chess.BLACK)


def test_acknowledgements() -> None:
    data = wire("l") + wire("x") + wire("w0203") + wire("r0114")
    assert MillenniumCodec().feed(data, AT) == [
        Acknowledged(reply="l", data="", at=AT),
        Acknowledged(reply="x", data="", at=AT),
        Acknowledged(reply="w", data="0203", at=AT),
        Acknowledged(reply="r", data="0114", at=AT),
    ]


def test_a_reply_split_anywhere_is_reported_once_complete() -> None:
    data = status(START)
    for cut in range(1, len(data)):
        mill = MillenniumCodec()
        assert mill.feed(data[:cut], AT) == []
        assert mill.buffered == cut
        assert len(mill.feed(data[cut:], AT)) == 1
        assert mill.buffered == 0


def test_an_automatic_report_between_a_command_and_its_acknowledgement() -> None:
    # §4: reports may come between a command and its acknowledgement; replies go by letter.
    data = status(START) + wire("w0203")
    mill = MillenniumCodec()
    events = mill.feed(data[:40], AT) + mill.feed(data[40:], AT)
    assert [type(e) for e in events] == [BoardSnapshot, Acknowledged]
    assert mill.dropped_bytes == 0


def test_a_reply_cut_short_is_dropped_and_the_next_one_found() -> None:
    mill = MillenniumCodec()
    events = mill.feed(wire("w0203")[:4] + status(START), AT)
    assert [type(e) for e in events] == [FrameDropped, BoardSnapshot]
    assert mill.dropped_frames == 1


def test_a_bad_block_check_or_parity_drops_the_reply_and_keeps_what_follows() -> None:
    good = status(START)
    bad_check = bytearray(good)
    bad_check[-1] = wire("s" + status_text(START))[-1] ^ 0x01 ^ 0x80  # another digit, parity kept
    flipped = bytearray(good)
    flipped[10] ^= 0x01  # one data bit: the parity of that byte is wrong now
    for broken in (bytes(bad_check), bytes(flipped)):
        mill = MillenniumCodec()
        events = mill.feed(broken + wire("v0104"), AT)
        assert [type(e) for e in events] == [FrameDropped, BoardInfo]
        assert mill.dropped_frames >= 1
        assert mill.position is None, "a broken status must not be taken"


def test_a_black_rook_inside_a_status_is_no_reply() -> None:
    # 'r' is both a black rook and the E2ROM read reply: a status full of rooks still decodes.
    text = "r" * 64
    mill = MillenniumCodec()
    (snapshot,) = mill.feed(wire("s" + text), AT)
    assert isinstance(snapshot, BoardSnapshot)
    assert all(occupant == chess.Piece(chess.ROOK, chess.BLACK) for occupant in snapshot.squares)


def test_stray_bytes_and_unknown_letters_are_dropped() -> None:
    mill = MillenniumCodec()
    events = mill.feed(b"\x00\xff" + wire("i") + wire("v0104"), AT)
    assert [type(e) for e in events] == [FrameDropped, BoardInfo]
    assert mill.dropped_bytes == 2 + len(wire("i"))


def test_a_status_with_a_foreign_character_is_dropped() -> None:
    mill = MillenniumCodec()
    events = mill.feed(wire("s" + "X" * 64), AT)
    assert [type(e) for e in events] == [FrameDropped]
    assert "not a piece" in events[0].reason  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("square", "corners"),
    [
        # §4: LED 1 (index 0) and LED 81 (index 80) are the outer corners of the board, turned
        # round with the status frame: h1 and a8; LED 9 (8) is h8's, LED 73 (72) is a1's.
        (chess.H1, (0, 1, 9, 10)),
        (chess.H8, (7, 8, 16, 17)),
        (chess.A1, (63, 64, 72, 73)),
        (chess.A8, (70, 71, 79, 80)),
        (chess.E4, (30, 31, 39, 40)),
    ],
)
def test_led_corners(square: chess.Square, corners: tuple[int, ...]) -> None:
    assert codec.led_indices(square) == corners


def test_the_led_command_lights_the_corners_of_each_square() -> None:
    sent = codec.leds({chess.E2, chess.E4})
    text = bytes(b & 0x7F for b in sent).decode()
    assert sent == wire(text[:-2])
    assert text[0] == "L"
    assert text[1:3] == "20"
    codes = [text[3 + 2 * i : 5 + 2 * i] for i in range(81)]
    lit = {i for i, code in enumerate(codes) if code == "FF"}
    assert lit == set(codec.led_indices(chess.E2)) | set(codec.led_indices(chess.E4))
    assert set(codes) == {"FF", "00"}
    assert len(sent) == 1 + 2 + 162 + 2


def test_a_king_and_a_rook_lifted_in_one_reading_come_king_first() -> None:
    # Which went first no reading can say: the lawful order of castling (Art. 4.4) is assumed.
    mill = MillenniumCodec()
    mill.feed(status(START), AT)
    lifted = START.copy()
    lifted.remove_piece_at(chess.A1)
    lifted.remove_piece_at(chess.E1)
    events = mill.feed(status(lifted), AT + 1)
    assert [e.square for e in events if isinstance(e, SquareEmptied)] == [chess.E1, chess.A1]
