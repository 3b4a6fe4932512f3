"""Hypothesis properties of the Certabo codec: chunking, garbage and the buffer bound.

Lines are built here from board-protocols.md §5 (``:``, 320 numbers, `` \\r\\n``), not by the code
under test.
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.certabo import protocol
from drivers.certabo.codec import CertaboCodec, CertaboEvent
from drivers.events import FrameDropped
from drivers.framing import MAX_RAW_REPORTED

AT = 5.0
SETTINGS = settings(max_examples=60, deadline=None)

tags = st.sampled_from(
    [(0, 0, 0, 0, 0)] * 6 + [(3, 0, 100 + n, 7, n) for n in range(40)] + [(0, 0, 56, 0, 0)]
)
readings = st.lists(tags, min_size=64, max_size=64)
lines = readings.map(
    lambda squares: b":" + " ".join(str(n) for tag in squares for n in tag).encode() + b" \r\n"
)
no_line_end = st.binary(max_size=200).map(lambda b: b.replace(b"\n", b""))


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def feed_chunks(chunks: list[bytes]) -> tuple[list[CertaboEvent], CertaboCodec]:
    codec = CertaboCodec()
    events: list[CertaboEvent] = []
    for chunk in chunks:
        events += codec.feed(chunk, AT)
    return events, codec


def kept(events: list[CertaboEvent]) -> list[CertaboEvent]:
    return [e for e in events if not isinstance(e, FrameDropped)]


@SETTINGS
@given(board_lines=st.lists(lines, max_size=6), cuts=st.lists(st.integers(0, 10**6)))
def test_any_chunking_of_a_valid_stream_gives_the_same_events(
    board_lines: list[bytes], cuts: list[int]
) -> None:
    stream = b"".join(board_lines)
    whole, codec = feed_chunks([stream])
    assert not [e for e in whole if isinstance(e, FrameDropped)]
    assert (codec.dropped_bytes, codec.lines_read, codec.buffered) == (0, len(board_lines), 0)
    assert feed_chunks(split(stream, cuts))[0] == whole


@SETTINGS
@given(data=st.binary(max_size=3000), cuts=st.lists(st.integers(0, 10**6), max_size=20))
def test_arbitrary_bytes_never_raise(data: bytes, cuts: list[int]) -> None:
    whole, codec = feed_chunks([data])
    chunked, chunked_codec = feed_chunks(split(data, cuts))
    assert kept(chunked) == kept(whole)
    assert chunked_codec.lines_read == codec.lines_read
    assert codec.dropped_bytes + codec.buffered <= len(data)
    assert codec.buffered <= protocol.MAX_LINE
    drops = [e for e in whole if isinstance(e, FrameDropped)]
    assert all(0 < len(d.raw) <= MAX_RAW_REPORTED for d in drops)


@SETTINGS
@given(
    board_lines=st.lists(lines, min_size=1, max_size=5),
    garbage=st.lists(no_line_end, min_size=1),
    cuts=st.lists(st.integers(0, 10**6), max_size=10),
)
def test_lines_after_garbage_are_all_found(
    board_lines: list[bytes], garbage: list[bytes], cuts: list[int]
) -> None:
    # Noise before a line ends up before its ':' and is cut off with it: the line survives.
    clean, _ = feed_chunks([b"".join(board_lines)])
    noisy = b"".join(g + line for g, line in zip(itertools.cycle(garbage), board_lines))
    events, codec = feed_chunks(split(noisy, cuts))
    assert kept(events) == clean
    assert codec.lines_read == len(board_lines)


@SETTINGS
@given(board_lines=st.lists(lines, min_size=2, max_size=5), cut=st.integers(1, 1200))
def test_a_line_cut_short_loses_only_itself(board_lines: list[bytes], cut: int) -> None:
    first, *rest = board_lines
    last_number = first.rstrip(b" \r\n").rfind(b" ")  # cut before it: fewer than 320 numbers
    stream = first[: min(cut, last_number)] + b"\r\n" + b"".join(rest)
    _, codec = feed_chunks([stream])
    assert codec.lines_read == len(rest)
    assert codec.dropped_lines == 1
