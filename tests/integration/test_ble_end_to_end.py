"""End to end over Bluetooth LE, from the command line: ``chessbridge emulate FAMILY`` (a board
on a virtual radio, played by hand on its standard input) → ``chessbridge run --board
FAMILY:ADDR`` with ``[ble] radio`` → mosquitto, for each Bluetooth LE family. Only what reaches
MQTT is judged. The DGT Pegasus senses occupancy only: the same game must come out of it, the
move made while it was off included. ``chessbridge scan`` lists each family's board. With the
emulators in this process: two plies made while a board was off, a board on its charger, and
the lights of a Chessnut (the last move; after a mismatch, the squares to put right).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import chess
import pytest

from bridge.demo.game import OPERA_GAME
from tests.cli import chessbridge
from tests.conftest import Mosquitto, Subscribe, Subscription
from tests.integration.test_end_to_end import daemon, payloads_on, state_is

pytestmark = [pytest.mark.mosquitto]

OFF_AFTER_PLY = 10
"""The board is switched off after this ply, the next move made while it is off."""


@dataclass
class Emulated:
    """``chessbridge emulate FAMILY`` as a subprocess: its address, radio, and a hand."""

    proc: asyncio.subprocess.Process
    address: str
    radio: str

    async def say(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        await self.proc.stdin.drain()


@contextlib.asynccontextmanager
async def emulate(family: str, *extra: str) -> AsyncIterator[Emulated]:
    proc = await chessbridge(
        "emulate",
        family,
        *extra,
        stdin=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        address = (await asyncio.wait_for(proc.stdout.readline(), 15)).decode().strip()
        radio = (await asyncio.wait_for(proc.stdout.readline(), 15)).decode().strip()
        assert address, "emulate printed no address"
        assert radio.endswith("/radio"), f"emulate printed no radio socket: {radio!r}"
        yield Emulated(proc, address, radio)
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()


def radio_config(tmp_path: Path, radio: str) -> Path:
    config = tmp_path / "table.toml"
    config.write_text(f'[ble]\nradio = "{radio}"\nscan_timeout = 5\n', encoding="utf-8")
    return config


def radio_daemon(
    scheme: str, address: str, radio: str, table_id: str, broker: Mosquitto, tmp_path: Path
) -> contextlib.AbstractAsyncContextManager[asyncio.subprocess.Process]:
    """``chessbridge run`` for the board at ``address`` on the virtual ``radio``."""
    return daemon(
        f"{scheme}:{address}",
        table_id,
        broker.url,
        tmp_path / "state",
        "--config",
        str(radio_config(tmp_path, radio)),
    )


def board_states(sub: Subscription) -> list[str]:
    states = [p["data"]["state"] for p in payloads_on(sub, "board")]
    return [s for i, s in enumerate(states) if i == 0 or states[i - 1] != s]


@dataclass(frozen=True)
class Expected:
    """What the retained ``board`` says of each family's emulated board."""

    model: str
    serial: str | None
    rssi: int
    battery: int | None
    charging: bool | None


FAMILIES = {
    "chessnut": Expected(model="Chessnut Air", serial=None, rssi=-58, battery=87, charging=False),
    # The Pegasus's serial number is the last line of its trademark (the emulator's 12345).
    "pegasus": Expected(model="DGT Pegasus", serial="12345", rssi=-66, battery=72, charging=False),
    "millennium-ble": Expected(
        model="MILLENNIUM CHESS", serial=None, rssi=-62, battery=None, charging=None
    ),
}


@pytest.mark.parametrize("family", list(FAMILIES))
async def test_a_game_on_a_bluetooth_board_switched_off_midway(
    family: str, mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    sans = OPERA_GAME.moves.split()
    expected = FAMILIES[family]
    async with (
        emulate(family, "--speed", "4") as board,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
        radio_daemon(family, board.address, board.radio, table_id, mosquitto, tmp_path) as proc,
    ):
        await sub.wait_for(lambda _: state_is(sub, "board", "connected"), within=20)
        await sub.wait_for(lambda _: state_is(sub, "status", "online"), within=15)
        game = chess.Board()
        for ply, san in enumerate(sans, start=1):
            move = game.parse_san(san)
            if ply == OFF_AFTER_PLY + 1:
                await board.say("off")
                await sub.wait_for(lambda _: board_states(sub)[-1] == "disconnected", 15)
                # Made while nobody listens, and read off the board when it is back: also
                # on the Pegasus, which senses occupancy only (the one legal move that leaves
                # its squares occupied as read: Bc4).
                await board.say(move.uci())
                await asyncio.sleep(1.0)
                await board.say("on")
            else:
                await board.say(move.uci())
            game.push(move)
            await sub.wait_for(
                lambda _, n=ply: len(payloads_on(sub, "event/move")) >= n,  # type: ignore[misc]
                within=20,
            )
        await sub.wait_for(lambda _: bool(sub.on("event/result")), within=10)
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 10) == 0

    moves = [p["data"] for p in payloads_on(sub, "event/move")]
    assert [m["uci"] for m in moves] == [m.uci() for m in game.move_stack]
    assert [m["san"] for m in moves] == sans
    completed = ["release"] * len(sans)  # no clock on these boards
    completed[OFF_AFTER_PLY] = "reconstructed"
    assert [m["completed_by"] for m in moves] == completed
    assert not [m for m in moves if m.get("supersedes", False)]
    assert board_states(sub)[:3] == ["connected", "disconnected", "connected"]
    board = payloads_on(sub, "board")[-1]["data"]
    assert board["driver"] == family
    assert board["model"] == expected.model
    assert board["serial"] == expected.serial
    assert board["rssi"] == expected.rssi
    assert board["battery"] == expected.battery
    assert board["charging"] is expected.charging
    assert board["orientation"] == "normal"
    result = payloads_on(sub, "event/result")[0]["data"]
    assert result == {"result": "1-0", "reason": "checkmate", "article": "5.1.1"}
    everything = [json.loads(bytes(m.payload)) for m in sub.messages]
    seqs = [p["seq"] for p in everything if p["type"] not in ("status", "claim")]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == len(seqs), "a seq was reused"
    alerts = [p["data"]["kind"] for p in payloads_on(sub, "event/alert")]
    assert alerts == [], "a game played cleanly raises no alert"


SCANNED = {
    "chessnut": ("Chessnut Air", "Chessnut Air/Pro/Go over Bluetooth LE, -58 dBm"),
    "pegasus": ("DGT_PEGASUS_12345", "DGT Pegasus over Bluetooth LE, -66 dBm"),
    "millennium-ble": ("MILLENNIUM CHESS", "Millennium ChessLink over Bluetooth LE, -62 dBm"),
}
"""What ``chessbridge scan`` says of each family's emulated board: advertised name, detail."""


@pytest.mark.parametrize("family", list(SCANNED))
async def test_scan_lists_the_emulated_board_with_its_uri(family: str, tmp_path: Path) -> None:
    name, detail = SCANNED[family]
    async with emulate(family) as board:
        proc = await chessbridge(
            "scan",
            "--timeout",
            "1",
            "--config",
            str(radio_config(tmp_path, board.radio)),
        )
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, err.decode()
    lines = out.decode().splitlines()
    assert lines == [f"{family}:{board.address}\t{name}\t({detail})"]


async def test_run_says_in_one_line_when_the_board_is_not_in_range(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    async with emulate("chessnut") as board:
        config = radio_config(tmp_path, board.radio)
        proc = await chessbridge(
            "run",
            "--board",
            "chessnut:EC:1B:00:00:00:99",
            "--table",
            "t1",
            "--broker",
            mosquitto.url,
            "--state-dir",
            str(tmp_path / "state"),
            "--config",
            str(config),
        )
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 2
    text = err.decode()
    assert "no Chessnut Air/Pro/Go board EC:1B:00:00:00:99 in range" in text
    assert "Traceback" not in text


async def test_run_says_in_one_line_when_the_device_is_another_familys_board(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    async with emulate("chessnut") as board:
        proc = await chessbridge(
            "run", "--board", f"pegasus:{board.address}", "--table", "t1",
            "--broker", mosquitto.url, "--state-dir", str(tmp_path / "state"),
            "--config", str(radio_config(tmp_path, board.radio)),
        )  # fmt: skip
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 2
    text = err.decode()
    [line] = [line for line in text.splitlines() if "but not a" in line]
    assert f"{board.address} is a Bluetooth LE device but not a DGT Pegasus board" in line
    assert "Traceback" not in text


@pytest.mark.parametrize("rotated", [False, True], ids=["normal", "rotated"])
async def test_a_board_with_lights_shows_the_last_move(
    rotated: bool, mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    """The lights are in the board's own frame: a board set up from Black's side is turned."""
    import random

    from bridge.demo.game import perform
    from drivers.chessnut.emulator import ChessnutEmulator
    from drivers.choreography import Style

    game = chess.Board()
    async with (
        ChessnutEmulator(rotated=rotated) as emu,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
        radio_daemon("chessnut", emu.address, emu.radio.path, table_id, mosquitto, tmp_path),
    ):
        await sub.wait_for(lambda _: state_is(sub, "board", "connected"), within=20)
        for ply, san in enumerate(["e4", "Nf6"], start=1):
            move = game.parse_san(san)
            await perform(emu, game, move, Style.PLAIN, random.Random(ply), 4.0)
            game.push(move)
            await sub.wait_for(
                lambda _, n=ply: len(payloads_on(sub, "event/move")) >= n,  # type: ignore[misc]
                within=10,
            )
            lit = {chess.square_name(move.from_square), chess.square_name(move.to_square)}
            async with asyncio.timeout(10):
                while emu.lit != lit:  # noqa: ASYNC110  # polls emulator state
                    await asyncio.sleep(0.02)
    orientation = payloads_on(sub, "board")[-1]["data"]["orientation"]
    assert orientation == ("rotated" if rotated else "normal")


@pytest.mark.parametrize("family", ["chessnut", "pegasus"])
async def test_a_board_on_its_charger_says_so_on_board(
    family: str, mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    from drivers.chessnut.emulator import ChessnutEmulator
    from drivers.pegasus.emulator import PegasusEmulator

    emulator = ChessnutEmulator if family == "chessnut" else PegasusEmulator
    async with (
        emulator(battery=40, charging=True) as emu,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/board") as sub,
        radio_daemon(family, emu.address, emu.radio.path, table_id, mosquitto, tmp_path),
    ):
        await sub.wait_for(
            lambda _: any(p["data"]["battery"] == 40 for p in payloads_on(sub, "board")),
            within=20,
        )
    board = next(p["data"] for p in payloads_on(sub, "board") if p["data"]["battery"] == 40)
    assert board["state"] == "connected"
    assert board["charging"] is True


@pytest.mark.parametrize("family", ["chessnut", "pegasus"])
async def test_two_plies_made_while_the_board_was_off_are_both_read_off_it(
    family: str, mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    """Also on the Pegasus, which senses occupancy only: after 1. e4 e5, only 2. Nf3 d6 leaves
    g1 and d7 empty and f3 and d6 taken."""
    import random

    from bridge.demo.game import perform
    from drivers.chessnut.emulator import ChessnutEmulator
    from drivers.choreography import Style
    from drivers.pegasus.emulator import PegasusEmulator

    sans = OPERA_GAME.moves.split()[:5]  # 1. e4 e5 2. Nf3 d6 3. d4
    game = chess.Board()
    rng = random.Random(2)

    async def play(ply: int) -> None:
        move = game.parse_san(sans[ply - 1])
        await perform(emu, game, move, Style.PLAIN, rng, 4.0)
        game.push(move)

    emulator = ChessnutEmulator if family == "chessnut" else PegasusEmulator
    async with (
        emulator() as emu,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
        radio_daemon(family, emu.address, emu.radio.path, table_id, mosquitto, tmp_path),
    ):
        await sub.wait_for(lambda _: state_is(sub, "board", "connected"), within=20)
        for ply in (1, 2):
            await play(ply)
            await sub.wait_for(
                lambda _, n=ply: len(payloads_on(sub, "event/move")) >= n,  # type: ignore[misc]
                within=20,
            )
        await emu.power_off()
        await sub.wait_for(lambda _: board_states(sub)[-1] == "disconnected", 15)
        await play(3)
        await play(4)  # nobody listening
        await emu.power_on()
        await sub.wait_for(lambda _: len(payloads_on(sub, "event/move")) >= 4, within=20)
        await play(5)
        await sub.wait_for(lambda _: len(payloads_on(sub, "event/move")) >= 5, within=20)
    moves = [p["data"] for p in payloads_on(sub, "event/move")]
    assert [m["uci"] for m in moves] == [m.uci() for m in game.move_stack]
    assert [m["san"] for m in moves] == sans
    assert [m["completed_by"] for m in moves] == [
        "release", "release", "reconstructed", "reconstructed", "release",
    ]  # fmt: skip
    assert board_states(sub)[:3] == ["connected", "disconnected", "connected"]
    assert payloads_on(sub, "event/alert") == []


async def test_the_lights_show_the_squares_to_put_right_after_a_mismatch(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    import random

    from bridge.demo.game import perform
    from drivers.chessnut.emulator import ChessnutEmulator
    from drivers.choreography import Style

    game = chess.Board()
    async with (
        ChessnutEmulator() as emu,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
        radio_daemon("chessnut", emu.address, emu.radio.path, table_id, mosquitto, tmp_path),
    ):

        async def lit(squares: set[str]) -> None:
            async with asyncio.timeout(10):
                while emu.lit != squares:  # noqa: ASYNC110  # polls emulator state
                    await asyncio.sleep(0.02)

        await sub.wait_for(lambda _: state_is(sub, "board", "connected"), within=20)
        move = game.parse_san("e4")
        await perform(emu, game, move, Style.PLAIN, random.Random(1), 4.0)
        game.push(move)
        await sub.wait_for(lambda _: len(payloads_on(sub, "event/move")) >= 1, within=20)
        await lit({"e2", "e4"})

        # Pieces knocked off a8 and h1 while the board is off: no move explains the board.
        await emu.power_off()
        await sub.wait_for(lambda _: board_states(sub)[-1] == "disconnected", 15)
        rook = await emu.lift("a8")
        other_rook = await emu.lift("h1")
        await emu.power_on()
        await sub.wait_for(lambda _: bool(payloads_on(sub, "event/alert")), within=20)
        alert = payloads_on(sub, "event/alert")[0]["data"]
        assert alert["kind"] == "board_mismatch"
        assert sorted(alert["details"]["squares"]) == ["a8", "h1"]
        await lit({"a8", "h1"})

        assert rook is not None
        assert other_rook is not None
        await emu.place("a8", rook)
        await lit({"h1"})  # each square goes out as it is put right
        await emu.place("h1", other_rook)
        await lit({"e2", "e4"})  # the board agrees again: the last move
    assert [m["data"]["uci"] for m in payloads_on(sub, "event/move")] == ["e2e4"]
