"""Hypothesis properties of the DGT codec: chunking, garbage, resync and the buffer bound.

Valid frames are built here from the tables in board-protocols.md §1.5-§1.7 and §1.11, not by
the code under test.
"""

from __future__ import annotations

import itertools
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.dgt.codec import MAX_MESSAGE_SIZE, MAX_RAW_REPORTED, DgtCodec
from drivers.dgt.events import DgtEvent
from drivers.events import FrameDropped

AT = 3.0
SETTINGS = settings(max_examples=60, deadline=None)

seven_bits = st.integers(0, 0x7F)
squares = st.integers(0, 63)
piece_codes = st.integers(0, 0x0C)  # §1.6: empty and the twelve pieces
bcd = st.integers(0, 59).map(lambda n: (n // 10) << 4 | n % 10)


def frame(msg_id: int, payload: bytes) -> bytes:
    """§1.4: id, then the total size in two 7-bit bytes, then the payload."""
    size = len(payload) + 3
    return bytes([msg_id, size >> 7, size & 0x7F]) + payload


@st.composite
def bwtime_times(draw: st.DrawFn) -> bytes:
    """§1.7 times: hours 0-9 plus flag bits D4/D5/D6, BCD minutes and seconds, status."""
    sides = []
    for _ in range(2):
        hours = draw(st.integers(0, 9)) | draw(st.sampled_from([0x00, 0x10, 0x20, 0x40, 0x50]))
        sides += [hours, draw(bcd), draw(bcd)]
    status = draw(st.integers(0, 0x3F))
    return frame(0x8D, bytes([*sides, status]))


@st.composite
def bwtime_ack(draw: st.DrawFn) -> bytes:
    """§1.7 ack: low nibble 0x0A in byte 3 or 6; other bits free."""
    body = draw(st.lists(seven_bits, min_size=7, max_size=7))
    at = draw(st.sampled_from([0, 3]))
    body[at] = (body[at] & 0x70) | 0x0A
    return frame(0x8D, bytes(body))


@st.composite
def ee_moves(draw: st.DrawFn) -> bytes:
    """§1.11 tag stream of valid tags, ending with EE_EOF."""
    tags = draw(
        st.lists(
            st.one_of(
                st.tuples(st.integers(0x40, 0x4C) | st.integers(0x50, 0x5C), squares),
                st.tuples(
                    st.integers(0x60, 0x69) | st.integers(0x70, 0x79),
                    bcd,
                    bcd,
                ),
                st.sampled_from([0x6A, 0x6C, 0x6D, 0x6E, 0x6F, 0x7A, 0x7B, 0x7C, 0x7F, 0x00]).map(
                    lambda b: (b,)
                ),
            ),
            max_size=20,
        )
    )
    return frame(0x8F, bytes(b for tag in tags for b in tag) + b"\x6b")


valid_frames = st.one_of(
    st.tuples(squares, piece_codes).map(lambda t: frame(0x8E, bytes(t))),
    st.lists(piece_codes, min_size=64, max_size=64).map(lambda c: frame(0x86, bytes(c))),
    bwtime_times(),
    bwtime_ack(),
    # Firmware versions a board can have (drivers.identity: major 0-15, minor 0-99).
    st.tuples(st.integers(0, 15), st.integers(0, 99)).map(lambda t: frame(0x93, bytes(t))),
    st.text("0123456789", min_size=5, max_size=5).map(lambda s: frame(0x91, s.encode())),
    st.text("0123456789", min_size=10, max_size=10).map(lambda s: frame(0xA2, s.encode())),
    st.text("ABCdgt 09", min_size=0, max_size=63).map(lambda s: frame(0x92, b"D" + s.encode())),
    st.tuples(st.integers(0, 100), seven_bits).map(
        lambda t: frame(0xA0, bytes([t[0], 0x7F, 0x7F, 0, 0, 0, 0, 0, t[1]]))
    ),
    st.tuples(seven_bits, seven_bits).map(lambda t: frame(0x90, bytes(t))),
    ee_moves(),
)


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def feed_chunks(chunks: list[bytes]) -> tuple[list[DgtEvent], DgtCodec]:
    codec = DgtCodec()
    events: list[DgtEvent] = []
    for chunk in chunks:
        events += codec.feed(chunk, AT)
    return events, codec


def kept(events: list[DgtEvent]) -> list[DgtEvent]:
    return [e for e in events if not isinstance(e, FrameDropped)]


@SETTINGS
@given(frames=st.lists(valid_frames, max_size=12), cuts=st.lists(st.integers(0, 10**6)))
def test_any_chunking_of_a_valid_stream_gives_the_same_events(
    frames: list[bytes], cuts: list[int]
) -> None:
    stream = b"".join(frames)
    whole, codec = feed_chunks([stream])
    assert not [e for e in whole if isinstance(e, FrameDropped)]
    assert (codec.dropped_bytes, codec.dropped_frames, codec.buffered) == (0, 0, 0)
    assert feed_chunks(split(stream, cuts))[0] == whole


@SETTINGS
@given(data=st.binary(max_size=600), cuts=st.lists(st.integers(0, 10**6), max_size=20))
def test_arbitrary_bytes_never_raise(data: bytes, cuts: list[int]) -> None:
    whole, codec = feed_chunks([data])
    chunked, chunked_codec = feed_chunks(split(data, cuts))
    # Decoded events and the counters do not depend on chunking; only drop reports may merge.
    assert kept(chunked) == kept(whole)
    assert (chunked_codec.dropped_bytes, chunked_codec.dropped_frames) == (
        codec.dropped_bytes,
        codec.dropped_frames,
    )
    assert 0 <= codec.dropped_bytes <= len(data)
    assert codec.buffered <= len(data)
    drops = [e for e in whole if isinstance(e, FrameDropped)]
    # Coalesced: at most one drop report before each decoded event, plus one at the end.
    assert len(drops) <= len(kept(whole)) + 1
    assert all(0 < len(d.raw) <= MAX_RAW_REPORTED for d in drops)
    assert (codec.dropped_bytes > 0) == bool(drops)


@SETTINGS
@given(
    frames=st.lists(valid_frames, min_size=1, max_size=10),
    garbage=st.lists(st.binary(max_size=30).map(lambda b: bytes(x & 0x7F for x in b))),
    cuts=st.lists(st.integers(0, 10**6), max_size=10),
)
def test_frames_in_seven_bit_garbage_are_all_found(
    frames: list[bytes], garbage: list[bytes], cuts: list[int]
) -> None:
    gaps = [*garbage, *([b""] * (len(frames) + 1))][: len(frames) + 1]
    stream = gaps[0] + b"".join(f + g for f, g in zip(frames, gaps[1:], strict=True))
    expected, _ = feed_chunks([b"".join(frames)])
    got, codec = feed_chunks(split(stream, cuts))
    assert kept(got) == expected
    assert codec.dropped_bytes == sum(len(g) for g in gaps)
    assert codec.dropped_frames == 0


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    size=st.integers(20_000, 40_000),
    msb_rate=st.sampled_from([0.0, 0.0001, 0.01, 0.5]),
    chunk=st.integers(1, 5000),
)
def test_buffer_stays_bounded_on_a_huge_stream(
    seed: int, size: int, msb_rate: float, chunk: int
) -> None:
    rng = random.Random(seed)
    # Start with an EE_MOVES header claiming the largest size so a long payload can build up.
    data = b"\x8f\x40\x03" + bytes(noise_byte(rng, msb_rate) for _ in range(size))
    codec = DgtCodec()
    for start in range(0, len(data), chunk):
        events = codec.feed(data[start : start + chunk], AT)
        assert codec.buffered <= MAX_MESSAGE_SIZE
        drops = [e for e in events if isinstance(e, FrameDropped)]
        assert len(drops) <= len(kept(events)) + 1
        assert all(len(d.raw) <= MAX_RAW_REPORTED for d in drops)


def noise_byte(rng: random.Random, msb_rate: float) -> int:
    """A 7-bit byte, or with probability ``msb_rate`` a byte with the MSB set."""
    return rng.randrange(0x80, 0x100) if rng.random() < msb_rate else rng.randrange(0x80)
