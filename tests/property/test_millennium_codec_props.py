"""Hypothesis properties of the Millennium codec: chunking, garbage, resync and the buffer bound.

Valid replies are built here from board-protocols.md §4 (odd parity in bit 7, a block check of
two hex digits), not by the code under test.
"""

from __future__ import annotations

import itertools

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from drivers.events import FrameDropped
from drivers.framing import MAX_RAW_REPORTED
from drivers.millennium import protocol
from drivers.millennium.codec import MillenniumCodec, MillenniumEvent
from tests.chesslink import wire

AT = 3.0
SETTINGS = settings(max_examples=80, deadline=None)


hex2 = st.integers(0, 255).map(lambda n: f"{n:02X}")
valid_replies = st.one_of(
    st.text("KQRBNPkqrbnp.", min_size=64, max_size=64).map(lambda t: wire("s" + t)),
    # A plausible firmware version (drivers.identity): another is dropped as a framing error.
    st.tuples(st.integers(0, 15), st.integers(0, 99)).map(lambda t: wire(f"v{t[0]:02X}{t[1]:02X}")),
    st.tuples(hex2, hex2).map(lambda t: wire("w" + t[0] + t[1])),
    st.tuples(hex2, hex2).map(lambda t: wire("r" + t[0] + t[1])),
    st.just(wire("l")),
    st.just(wire("x")),
)
even_parity_bytes = st.binary(max_size=40).map(
    lambda b: bytes(x ^ 0x80 if bin(x).count("1") % 2 else x for x in b)
)
"""Bytes whose parity is wrong for this link: never the start, nor a byte, of a valid reply."""


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def feed_chunks(chunks: list[bytes]) -> tuple[list[MillenniumEvent], MillenniumCodec]:
    mill = MillenniumCodec()
    events: list[MillenniumEvent] = []
    for chunk in chunks:
        events += mill.feed(chunk, AT)
    return events, mill


def kept(events: list[MillenniumEvent]) -> list[MillenniumEvent]:
    return [e for e in events if not isinstance(e, FrameDropped)]


@SETTINGS
@given(replies=st.lists(valid_replies, max_size=12), cuts=st.lists(st.integers(0, 10**6)))
def test_any_chunking_of_a_valid_stream_gives_the_same_events(
    replies: list[bytes], cuts: list[int]
) -> None:
    stream = b"".join(replies)
    whole, mill = feed_chunks([stream])
    assert not [e for e in whole if isinstance(e, FrameDropped)]
    assert (mill.dropped_bytes, mill.dropped_frames, mill.buffered) == (0, 0, 0)
    assert len(whole) >= len(replies) - sum(r[0] == ord("s") for r in replies)
    assert feed_chunks(split(stream, cuts))[0] == whole


@SETTINGS
@given(data=st.binary(max_size=600), cuts=st.lists(st.integers(0, 10**6), max_size=20))
def test_arbitrary_bytes_never_raise(data: bytes, cuts: list[int]) -> None:
    whole, mill = feed_chunks([data])
    chunked, chunked_mill = feed_chunks(split(data, cuts))
    assert kept(chunked) == kept(whole)
    assert (chunked_mill.dropped_bytes, chunked_mill.dropped_frames) == (
        mill.dropped_bytes,
        mill.dropped_frames,
    )
    assert mill.dropped_bytes + mill.buffered <= len(data)
    assert mill.buffered < protocol.MAX_REPLY_LENGTH
    drops = [e for e in whole if isinstance(e, FrameDropped)]
    assert len(drops) <= len(kept(whole)) + 1
    assert all(0 < len(d.raw) <= MAX_RAW_REPORTED for d in drops)
    assert (mill.dropped_bytes > 0) == bool(drops)


@SETTINGS
@given(
    replies=st.lists(valid_replies, min_size=1, max_size=10),
    garbage=st.lists(even_parity_bytes, min_size=1),
    cuts=st.lists(st.integers(0, 10**6), max_size=10),
)
def test_replies_in_garbage_are_all_found(
    replies: list[bytes], garbage: list[bytes], cuts: list[int]
) -> None:
    clean, _ = feed_chunks([b"".join(replies)])
    noisy = b"".join(g + r for g, r in zip(itertools.cycle(garbage), replies)) + garbage[0]
    events, mill = feed_chunks(split(noisy, cuts))
    assert kept(events) == clean
    assert mill.buffered == 0


@SETTINGS
@given(
    replies=st.lists(valid_replies, min_size=1, max_size=8),
    cut_short=st.lists(st.tuples(valid_replies, st.integers(1, 66)), min_size=1, max_size=8),
)
def test_a_reply_cut_short_never_hides_the_next(
    replies: list[bytes], cut_short: list[tuple[bytes, int]]
) -> None:
    # A line that drops bytes mid-reply: the fragment is dropped, the next whole reply is found
    # - unless the fragment, completed by the next reply's first bytes, passes the one-byte
    # checksum by chance (1 in 256), which no reader can tell from a reply.
    clean, _ = feed_chunks([b"".join(replies)])
    pairs = [
        (frag[: min(n, len(frag) - 1)], reply)
        for (frag, n), reply in zip(itertools.cycle(cut_short), replies)
    ]
    assume(not any(_completed_by_chance(fragment, reply) for fragment, reply in pairs))
    stream = b"".join(fragment + reply for fragment, reply in pairs)
    events, mill = feed_chunks([stream])
    assert kept(events) == clean
    assert mill.buffered == 0


def _completed_by_chance(fragment: bytes, reply: bytes) -> bool:
    """Whether ``fragment`` followed by some of the first bytes of ``reply`` (not all of it)
    reads as a whole reply."""
    return any(kept(feed_chunks([fragment + reply[:k]])[0]) for k in range(1, len(reply)))
