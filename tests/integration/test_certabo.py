"""The Certabo emulator seen from a plain pyserial host, and the Certabo link against it.

Lines are read by hand here, from board-protocols.md §5; nothing uses the project's codec to
check the emulator. Waits poll with generous deadlines; nothing asserts a duration.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import chess
import pytest

from drivers.certabo.emulator import CertaboEmulator
from drivers.certabo.link import CertaboSerialLink
from drivers.certabo.link import probe as certabo_probe
from drivers.dgt.emulator import DgtEmulator
from drivers.errors import LinkLostError, NotABoardError
from drivers.events import UNKNOWN, BoardEvent, BoardSnapshot, SquareEmptied, SquareOccupied
from drivers.millennium.emulator import MillenniumEmulator
from tests.emulated import DEADLINE, SerialHost, until

pytestmark = pytest.mark.pty

FAST = 0.05
"""Seconds between two lines in these tests (a real board: about one a second)."""

Tags = list[tuple[int, ...]]


class Host(SerialHost):
    """A Certabo host: lines of tags."""

    async def line(self) -> Tags:
        """The next line's 64 tags (§5: ':', 320 numbers, ' \\r\\n'), a8 first."""
        async with asyncio.timeout(DEADLINE):
            while (end := self.buffer.find(b"\n")) < 0:
                await self.fill()
        raw = bytes(self.buffer[: end + 1])
        del self.buffer[: end + 1]
        assert raw.startswith(b":")
        assert raw.endswith(b" \r\n")
        numbers = [int(n) for n in raw[1:].split()]
        assert len(numbers) == 320
        return [tuple(numbers[i : i + 5]) for i in range(0, 320, 5)]


def at(tags: Tags, name: str) -> tuple[int, ...]:
    square = chess.parse_square(name)
    return tags[(7 - chess.square_rank(square)) * 8 + chess.square_file(square)]


# --- the emulator ---------------------------------------------------------------------------------


async def test_lines_carry_a_tag_per_piece_and_follow_the_pieces() -> None:
    async with CertaboEmulator(interval=FAST) as emu:
        with Host(emu.path) as host:
            tags = await host.line()
            occupied = {
                chess.square_name(chess.square(i % 8, 7 - i // 8))
                for i, tag in enumerate(tags)
                if tag != (0, 0, 0, 0, 0)
            }
            assert occupied == set(emu.position) == set(emu.tags)
            assert len({t for t in tags if t != (0, 0, 0, 0, 0)}) == 32, "one tag per piece"
            pawn = at(tags, "e2")
            await emu.lift("e2")
            await emu.place("e4", "P")
            await host.line()  # possibly read before the move
            tags = await host.line()
            assert at(tags, "e2") == (0, 0, 0, 0, 0)
            assert at(tags, "e4") == pawn, "the same pawn, so the same tag"
            await emu.place("e8", "Q")  # nobody holds a queen: a new one from the box
            await host.line()
            tags = await host.line()
            assert at(tags, "e8") not in (pawn, (0, 0, 0, 0, 0))


async def test_led_frames_light_squares() -> None:
    async with CertaboEmulator(interval=FAST) as emu:
        with Host(emu.path) as host:
            host.port.write(bytes([0x01, 0, 0, 0, 0, 0, 0x10, 0x80]))  # a8, e2, h1
            await until(lambda: emu.lit == {"a8", "e2", "h1"})


async def test_noise_and_a_board_set_up_turned_round() -> None:
    async with CertaboEmulator(interval=FAST, noise=True, rotated=True) as emu:
        with Host(emu.path) as host:
            tags = await host.line()
            phantoms = {t for t in tags if t in ((0, 0, 56, 0, 0), (201, 0, 0, 0, 0))}
            assert phantoms, "the vendor simulator's phantom tags on empty squares"
            assert at(tags, "a1") == emu.tags["h8"], "the players' h8 is the board's a1"


# --- the link ------------------------------------------------------------------------------------


async def test_the_link_learns_the_pieces_reports_moves_and_keeps_them_across_a_replug() -> None:
    events: list[BoardEvent] = []
    async with CertaboEmulator(interval=FAST, noise=True) as emu:
        link = CertaboSerialLink(emu.path, events.append, dead_after=1.0)
        await link.open()
        assert link.info.trademark == "Certabo"
        assert (link.leds is not None, link.clock, link.memory, link.battery) == (
            True,
            None,
            None,
            None,
        )
        runner = asyncio.create_task(link.run())
        try:
            await until(lambda: any(isinstance(e, BoardSnapshot) for e in events))
            snapshot = next(e for e in events if isinstance(e, BoardSnapshot))
            assert snapshot.squares == tuple(chess.Board().piece_at(sq) for sq in chess.SQUARES)
            await emu.lift("g1")
            await emu.place("f3", "N")
            await until(lambda: any(isinstance(e, SquareOccupied) for e in events))
            assert [
                (type(e).__name__, chess.square_name(e.square))
                for e in events
                if isinstance(e, SquareEmptied | SquareOccupied)
            ] == [("SquareEmptied", "g1"), ("SquareOccupied", "f3")]
            await link.show({chess.G1, chess.F3})
            await until(lambda: emu.lit == {"g1", "f3"})
            # Frames are paced; those superseded while waiting for their turn are never sent.
            frames = emu.led_frames
            await asyncio.gather(
                link.show({chess.A1}), link.show({chess.B1}), link.show({chess.C1})
            )
            await until(lambda: emu.lit == {"c1"})
            assert emu.led_frames - frames == 1, "a1 and b1 were superseded while waiting"
            await emu.unplug()
            with pytest.raises(LinkLostError):
                await asyncio.wait_for(runner, DEADLINE)
        finally:
            runner.cancel()
            await link.close()

        await emu.lift("b8")  # a move made while unplugged: no start position any more
        await emu.place("c6", "n")
        await emu.plug()
        events.clear()
        again = CertaboSerialLink(emu.path, events.append)
        await again.open()
        runner = asyncio.create_task(again.run())
        try:
            await until(lambda: any(isinstance(e, BoardSnapshot) for e in events))
            (snapshot,) = [e for e in events if isinstance(e, BoardSnapshot)]
            assert snapshot.squares[chess.C6] == chess.Piece(chess.KNIGHT, chess.BLACK)
            assert snapshot.squares[chess.F3] == chess.Piece(chess.KNIGHT, chess.WHITE)
            assert UNKNOWN not in snapshot.squares, "the tags were remembered across the replug"
        finally:
            runner.cancel()
            await again.close()


async def test_a_silent_port_is_not_a_certabo_board(silent_port: str) -> None:
    link = CertaboSerialLink(silent_port, lambda _: None, identify_timeout=0.5)
    with pytest.raises(NotABoardError, match="no Certabo board spoke"):
        await link.open()


async def test_the_probe_hears_a_certabo_and_nothing_else() -> None:
    async with (
        CertaboEmulator(interval=FAST) as certabo,
        MillenniumEmulator() as millennium,
        DgtEmulator() as dgt,
    ):
        info = await certabo_probe(certabo.path)
        assert info is not None
        assert info.trademark == "Certabo"
        assert await certabo_probe(millennium.path, within=0.5) is None
        assert await certabo_probe(dgt.path, within=0.5) is None


async def test_the_learnt_tags_are_kept_in_the_state_directory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tags_file = tmp_path / "certabo-tags.json"
    async with CertaboEmulator(interval=FAST, seed=3) as emu:
        first = CertaboSerialLink(emu.path, lambda _: None, tags_file=tags_file)
        await first.open()
        await first.close()
        assert len(json.loads(tags_file.read_text())) == 32
        await emu.lift("e2")  # no start position any more
        await emu.place("e4", "P")
        events: list[BoardEvent] = []
        again = CertaboSerialLink(emu.path, events.append, tags_file=tags_file)  # a new daemon
        await again.open()
        await again.close()
    (snapshot,) = [e for e in events if isinstance(e, BoardSnapshot)]
    assert snapshot.squares[chess.E4] == chess.Piece(chess.PAWN, chess.WHITE)
    assert UNKNOWN not in snapshot.squares

    tags_file.write_text("not json")
    with caplog.at_level("WARNING"):
        broken = CertaboSerialLink("/dev/null", lambda _: None, tags_file=tags_file)
    assert broken.codec.calibration == {}
    assert "unreadable" in caplog.text
