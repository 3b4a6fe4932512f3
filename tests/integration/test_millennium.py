"""The Millennium emulator seen from a plain pyserial host, and the Millennium link against it.

Expected bytes are built here from board-protocols.md §4 (odd parity in bit 7, the block check),
never with the project's codec. Waits poll with generous deadlines; nothing asserts a duration.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

import chess
import pytest

from drivers.dgt.emulator import DgtEmulator
from drivers.dgt.link import probe as dgt_probe
from drivers.errors import BoardNotFoundError, LinkLostError, NotABoardError
from drivers.events import BoardEvent, BoardSnapshot, SquareEmptied, SquareOccupied
from drivers.millennium.emulator import MillenniumEmulator
from drivers.millennium.link import MillenniumSerialLink
from drivers.millennium.link import probe as millennium_probe
from tests.chesslink import wire
from tests.emulated import DEADLINE, SerialHost, until

pytestmark = pytest.mark.pty

START_STATUS = "RNBKQBNR" + "PPPPPPPP" + "." * 32 + "pppppppp" + "rnbkqbnr"
"""§4 as observed: h1, g1, ..., a1, h2, ..., a8 on a board set up the usual way."""


REPLY_LENGTHS = {"s": 67, "v": 7, "l": 3, "x": 3, "w": 7, "r": 7}


class Host(SerialHost):
    """A ChessLink host: commands and replies as text."""

    def send(self, text: str) -> None:
        self.port.write(wire(text))

    async def reply(self) -> str:
        """The next reply, checked here byte by byte (parity, length, block check)."""
        async with asyncio.timeout(DEADLINE):
            while True:
                if self.buffer:
                    letter = chr(self.buffer[0] & 0x7F)
                    length = REPLY_LENGTHS[letter]
                    if len(self.buffer) >= length:
                        raw = bytes(self.buffer[:length])
                        del self.buffer[:length]
                        text = "".join(chr(b & 0x7F) for b in raw)
                        assert raw == wire(text[:-2]), f"bad parity or check: {raw.hex(' ')}"
                        return text[:-2]
                await self.fill()

    async def reply_where(self, wanted: Callable[[str], bool]) -> str:
        while not wanted(text := await self.reply()):
            pass
        return text


# --- the emulator ---------------------------------------------------------------------------------


async def test_power_up_reports_on_every_scan() -> None:
    async with MillenniumEmulator() as emu:
        with Host(emu.path) as host:
            # §4 E2ROM 02 default 0: a status on every scan, unasked.
            assert await host.reply() == "s" + START_STATUS
            assert await host.reply() == "s" + START_STATUS


async def test_commands_and_their_replies() -> None:
    async with MillenniumEmulator(version=(1, 3)) as emu:
        with Host(emu.path) as host:
            host.send("W0201")  # no automatic reports: only replies from here on
            assert await host.reply_where(lambda t: t[0] != "s") == "w0201"
            host.send("V")
            assert await host.reply_where(lambda t: t[0] != "s") == "v0103"
            host.send("R01")
            assert await host.reply_where(lambda t: t[0] != "s") == "r0114"  # 20 scan units
            host.send("S")
            assert await host.reply_where(lambda t: t[0] == "s") == "s" + START_STATUS
            assert emu.received == ["W0201", "V", "R01", "S"]


async def test_a_bad_block_check_or_parity_is_not_actioned() -> None:
    async with MillenniumEmulator() as emu:
        with Host(emu.path) as host:
            host.send("W0201")
            await until(lambda: emu.received == ["W0201"])
            bad_check = bytearray(wire("V"))
            bad_check[-1] ^= 0x03  # another hex digit ('6' -> '5'), parity still odd
            host.port.write(bytes(bad_check))
            host.port.write(bytes([wire("V")[0] ^ 0x80]))  # even parity: a line error
            host.port.write(wire("V")[1:])
            host.send("X")
            await until(lambda: emu.received[-1:] == ["X"])
            assert emu.received == ["W0201", "X"]


async def test_reports_on_change_only_once_set_so() -> None:
    async with MillenniumEmulator() as emu:
        with Host(emu.path) as host:
            host.send("W0203")
            await host.reply_where(lambda t: t[0] == "w")
            await host.quiet(0.2)
            host.buffer.clear()
            assert await host.quiet(0.3) == b"", "a still board is silent in mode 3"
            assert await emu.lift("e2") == "P"
            text = await host.reply()
            assert text == "s" + START_STATUS[:11] + "." + START_STATUS[12:]  # e2 is index 11
            await emu.place("e4", "P")
            text = await host.reply()
            assert text[1 + 11] == "."
            assert text[1 + 27] == "P"


async def test_debounced_reports_wait_for_a_still_board() -> None:
    async with MillenniumEmulator(speed=4.0) as emu:
        with Host(emu.path) as host:
            host.send("W0207")  # on change, 5-scan debounce
            await host.reply_where(lambda t: t[0] == "w")
            await host.quiet(0.1)
            host.buffer.clear()
            await emu.lift("g1")
            await emu.place("f3", "N")
            text = await host.reply()
            assert text[1 + 1] == "."
            assert text[1 + 18] == "N"


async def test_leds_light_the_corners_of_squares() -> None:
    async with MillenniumEmulator() as emu:
        with Host(emu.path) as host:
            host.send("W0201")
            codes = ["00"] * 81
            # §4: LED 1 at the vendor frame's A8 corner = the players' h1 outer corner; the
            # four corners of the players' h1 are LEDs 1, 2, 10, 11.
            for led in (0, 1, 9, 10):
                codes[led] = "FF"
            host.send("L20" + "".join(codes))
            assert await host.reply_where(lambda t: t[0] != "s" and t[0] != "w") == "l"
            assert emu.lit == {"h1"}
            host.send("X")
            assert await host.reply_where(lambda t: t[0] == "x") == "x"
            assert emu.lit == set()


async def test_a_board_set_up_from_blacks_side() -> None:
    async with MillenniumEmulator(rotated=True) as emu:
        with Host(emu.path) as host:
            assert await host.reply() == "s" + START_STATUS[::-1]
        assert emu.position["e2"] == "P"


async def test_unplug_and_plug_keep_the_e2rom() -> None:
    async with MillenniumEmulator() as emu:
        with Host(emu.path) as host:
            host.send("W0203")
            await until(lambda: emu.e2rom[2] == 3)
        path = emu.path
        await emu.unplug()
        assert not await asyncio.to_thread(os.path.exists, path)
        await emu.plug()
        assert await asyncio.to_thread(os.path.exists, path)
        with Host(emu.path) as host:
            await host.quiet(0.2)
            host.buffer.clear()
            assert await host.quiet(0.2) == b"", "mode 3 survived the power cycle: silent"


# --- the link ------------------------------------------------------------------------------------


async def test_the_link_identifies_the_board_and_reports_changes() -> None:
    events: list[BoardEvent] = []
    async with MillenniumEmulator(version=(1, 4)) as emu:
        link = MillenniumSerialLink(emu.path, events.append)
        await link.open()
        assert link.info.version == "1.04"
        assert link.info.trademark == "Millennium ChessLink"
        assert (link.leds is not None, link.clock, link.memory, link.battery) == (
            True,
            None,
            None,
            None,
        )
        snapshots = [e for e in events if isinstance(e, BoardSnapshot)]
        assert snapshots[0].squares == tuple(chess.Board().piece_at(sq) for sq in chess.SQUARES)
        await until(lambda: emu.e2rom[2] == 3)  # reports on change, as the setup asked
        runner = asyncio.create_task(link.run())
        try:
            await emu.lift("e2")
            await until(lambda: any(isinstance(e, SquareEmptied) for e in events))
            await emu.place("e4", "P")
            await until(lambda: any(isinstance(e, SquareOccupied) for e in events))
            moved = [e for e in events if isinstance(e, SquareEmptied | SquareOccupied)]
            assert [(type(e).__name__, chess.square_name(e.square)) for e in moved] == [
                ("SquareEmptied", "e2"),
                ("SquareOccupied", "e4"),
            ]
            await link.show({chess.E2, chess.E4})
            # Corner lights: e3 shares all four corners with e2 and e4, so it lights up too.
            await until(lambda: emu.lit == {"e2", "e3", "e4"})
            await link.show({chess.B1, chess.C3})
            await until(lambda: emu.lit == {"b1", "c3"})
            await link.show(set())
            await until(lambda: emu.lit == set())
            await emu.unplug()
            with pytest.raises(LinkLostError):
                await asyncio.wait_for(runner, DEADLINE)
        finally:
            runner.cancel()
            await link.close()


async def test_a_silent_port_is_not_a_millennium_board(silent_port: str) -> None:
    link = MillenniumSerialLink(silent_port, lambda _: None, identify_timeout=0.5)
    with pytest.raises(NotABoardError, match="no Millennium board answered"):
        await link.open()


async def test_a_missing_port_is_one_clear_line() -> None:
    link = MillenniumSerialLink("/dev/no-such-board", lambda _: None)
    with pytest.raises(BoardNotFoundError, match=r"no such device.*millennium:/dev/ttyUSB0"):
        await link.open()


async def test_probes_tell_the_families_apart() -> None:
    async with MillenniumEmulator() as mill, DgtEmulator() as dgt:
        info = await millennium_probe(mill.path)
        assert info is not None
        assert info.version == "1.03"
        assert await millennium_probe(dgt.path, within=0.5) is None
        dgt_info = await dgt_probe(dgt.path)
        assert dgt_info is not None
        assert dgt_info.serial == "01234"
        assert await dgt_probe(mill.path, within=0.5) is None
        assert mill.e2rom[2] == 0, "a probe writes nothing to the board's E2ROM"
