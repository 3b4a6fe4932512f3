"""Hypothesis properties of the Chessnut codec: chunking, garbage, and the buffer bound.

Valid notifications are built here from board-protocols.md §3 (header ``01 24``, 32 bytes of
nibbles 0-C, 4 trailing bytes), not by the code under test.
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.chessnut.codec import ChessnutCodec
from drivers.events import BoardEvent, FrameDropped

FEN = "1b7e8262-2877-41c3-b46e-cf057c562023"
OPERATION = "1b7e8273-2877-41c3-b46e-cf057c562023"
SETTINGS = settings(max_examples=80, deadline=None)

nibbles = st.integers(0, 0x0C)


@st.composite
def positions(draw: st.DrawFn) -> bytes:
    squares = draw(st.lists(nibbles, min_size=64, max_size=64))
    body = bytes(squares[i] | squares[i + 1] << 4 for i in range(0, 64, 2))
    return bytes([0x01, 0x24]) + body + draw(st.binary(min_size=4, max_size=4))


@st.composite
def chunked(draw: st.DrawFn, stream: bytes) -> list[bytes]:
    cuts = sorted(draw(st.lists(st.integers(0, len(stream)), max_size=12)))
    edges = [0, *cuts, len(stream)]
    return [stream[a:b] for a, b in itertools.pairwise(edges)]


def meaningful(events: list[BoardEvent]) -> list[BoardEvent]:
    return [e for e in events if not isinstance(e, FrameDropped)]


def feed_all(chunks: list[bytes], source: str = FEN) -> list[BoardEvent]:
    c = ChessnutCodec()
    out: list[BoardEvent] = []
    for chunk in chunks:
        out += c.feed(source, chunk, 1.0)
    return out


@SETTINGS
@given(st.lists(positions(), min_size=1, max_size=6), st.data())
def test_valid_positions_decode_the_same_however_they_are_split(
    frames: list[bytes], data: st.DataObject
) -> None:
    stream = b"".join(frames)
    whole = feed_all([stream])
    assert not any(isinstance(e, FrameDropped) for e in whole)
    assert feed_all(data.draw(chunked(stream))) == whole
    assert feed_all([bytes([b]) for b in stream]) == whole


@SETTINGS
@given(st.binary(max_size=400), st.data())
def test_garbage_never_raises_and_the_buffer_stays_bounded(
    junk: bytes, data: st.DataObject
) -> None:
    for source in (FEN, OPERATION):
        c = ChessnutCodec()
        for chunk in data.draw(chunked(junk)):
            c.feed(source, chunk, 1.0)
            assert c.buffered <= 38 + 2 + 64


@SETTINGS
@given(st.binary(max_size=120).map(lambda b: b.replace(b"\x01", b"")), positions(), st.data())
def test_a_position_after_garbage_is_found_again(
    junk: bytes, frame: bytes, data: st.DataObject
) -> None:
    """Junk with no header byte in it is dropped, and what follows decodes as if alone."""
    events = feed_all(data.draw(chunked(junk + frame)))
    assert meaningful(events) == feed_all([frame])
    assert (bytes(junk) != b"") == any(isinstance(e, FrameDropped) for e in events)
