"""Hypothesis properties of the DGT Pegasus codec: chunking, garbage, and the buffer bound.

Valid messages are built here from board-protocols.md §1.4 and §2 (occupancy codes 0x00, 0x01,
0x7F), not by the code under test.
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.events import UNKNOWN, BoardEvent, FrameDropped, SquareOccupied
from drivers.pegasus.codec import PegasusCodec

TX = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
SETTINGS = settings(max_examples=80, deadline=None)
codes = st.sampled_from([0x00, 0x01, 0x7F, 0x05])


def frame(msg_id: int, payload: bytes) -> bytes:
    size = len(payload) + 3
    return bytes([msg_id, size >> 7, size & 0x7F]) + payload


messages = st.one_of(
    st.lists(codes, min_size=64, max_size=64).map(lambda c: frame(0x86, bytes(c))),
    st.tuples(st.integers(0, 63), codes).map(lambda t: frame(0x8E, bytes(t))),
    # Firmware versions a board can have (drivers.identity: major 0-15, minor 0-99).
    st.tuples(st.integers(0, 15), st.integers(0, 99)).map(lambda t: frame(0x93, bytes(t))),
    st.lists(st.integers(0, 100), min_size=9, max_size=9).map(lambda b: frame(0xA0, bytes(b))),
)


@st.composite
def chunked(draw: st.DrawFn, stream: bytes) -> list[bytes]:
    cuts = sorted(draw(st.lists(st.integers(0, len(stream)), max_size=12)))
    return [stream[a:b] for a, b in itertools.pairwise([0, *cuts, len(stream)])]


def feed_all(chunks: list[bytes]) -> list[BoardEvent]:
    c = PegasusCodec()
    return [e for chunk in chunks for e in c.feed(TX, chunk, 1.0)]


@SETTINGS
@given(st.lists(messages, min_size=1, max_size=8), st.data())
def test_valid_messages_decode_the_same_however_they_are_split(
    frames: list[bytes], data: st.DataObject
) -> None:
    stream = b"".join(frames)
    whole = feed_all([stream])
    assert not any(isinstance(e, FrameDropped) for e in whole)
    assert len(whole) == len(frames)
    assert feed_all(data.draw(chunked(stream))) == whole
    placed = [e for e in whole if isinstance(e, SquareOccupied)]
    assert all(e.piece is UNKNOWN for e in placed), "an occupancy board never names a piece"


@SETTINGS
@given(st.binary(max_size=300), st.data())
def test_garbage_never_raises_and_the_buffer_stays_bounded(
    junk: bytes, data: st.DataObject
) -> None:
    c = PegasusCodec()
    for chunk in data.draw(chunked(junk)):
        c.feed(TX, chunk, 1.0)
        assert c.buffered <= 3 + 200


@SETTINGS
@given(st.binary(max_size=100), messages)
def test_a_message_after_garbage_is_found(junk: bytes, message: bytes) -> None:
    events = feed_all([junk, message])
    meaningful = [e for e in events if not isinstance(e, FrameDropped)]
    assert meaningful[-1:] == feed_all([message])
