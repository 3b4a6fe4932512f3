"""``chessbridge emulate`` for Bluetooth LE families: a board on a virtual radio, played by hand.

The board serves its GATT services on a virtual radio socket (docs/virtual-radio.md). Its address
goes to standard output, then the radio's path, so a script can read both; a line on standard
error says how to connect ``chessbridge run`` to it. Then the board is played by hand from
standard input, one command per line, or from a PGN file (``--play``):

- ``e2e4`` (a move in UCI): lifts and places as a hand makes that move in the game so far;
- ``lift e2``, ``place e4 P`` (a FEN letter), ``press left`` / ``press right`` (if it has a clock);
- ``new``: the game so far starts again from the start position (the board is not touched);
- ``off`` / ``on``: switch the board off (the host's connection drops) and on again.

Every emulator is driven through :class:`drivers.emulation.EmulatedBoard` only.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import random
import stat
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol, runtime_checkable

import chess
import chess.pgn

from bridge.demo.game import perform, press_side
from drivers import FAMILIES
from drivers.choreography import Style
from drivers.emulation import EmulatedBoard


@runtime_checkable
class Switchable(Protocol):
    """A wireless board that can be switched off and on (its host loses and finds it)."""

    async def power_off(self) -> None: ...
    async def power_on(self) -> None: ...


async def emulate_ble(
    family: str,
    *,
    radio_path: str | None,
    rotated: bool,
    play: Path | None,
    speed: float,
    stop: asyncio.Event,
) -> int:
    """Serve a ``family`` board on a virtual radio until ``stop`` (or the end of ``play``)."""
    from drivers.ble.radio import VirtualRadio

    emulator = FAMILIES[family].emulator
    assert emulator is not None, f"no emulator for {family}"
    module, _, name = emulator.partition(":")
    factory = getattr(importlib.import_module(module), name)
    game = _read_game(play) if play is not None else None
    async with VirtualRadio(radio_path) as radio:
        board: EmulatedBoard = factory(radio=radio, rotated=rotated)
        async with board:
            print(board.address, flush=True)
            print(radio.path, flush=True)
            print(
                f"chessbridge: emulated {family} board {board.address} on the virtual radio "
                f"{radio.path}; try: CHESSBRIDGE_BLE_RADIO={radio.path} chessbridge run "
                f"--board {family}:{board.address} --table t1. Ctrl-C stops.",
                file=sys.stderr,
            )
            play_or_hands = _play(board, game, speed) if game is not None else _hands(board, speed)
            player = asyncio.create_task(play_or_hands)
            try:
                await stop.wait()  # the game played, or stdin closed: the board stays on
            finally:
                player.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await player
    return 0


def _read_game(path: Path) -> chess.pgn.Game:
    with path.open(encoding="utf-8") as handle:
        game = chess.pgn.read_game(handle)
    if game is None:
        raise ValueError(f"no game in {path}")
    return game


async def _play(board: EmulatedBoard, game: chess.pgn.Game, speed: float) -> None:
    """Make the game's moves by hand, pressing the clock after each."""
    position = game.board()
    rng = random.Random(0)
    for move in game.mainline_moves():
        await asyncio.sleep(1.0 / speed)
        await perform(board, position, move, Style.PLAIN, rng, speed)
        mover = position.turn
        position.push(move)
        await asyncio.sleep(0.3 / speed)
        await board.press(press_side(mover))


async def _hands(board: EmulatedBoard, speed: float) -> None:
    """Carry out the commands read on standard input (see the module docstring)."""
    position = chess.Board()
    rng = random.Random(0)
    async for line in _stdin_lines():
        words = line.split()
        try:
            if not words:
                continue
            if words[0] == "lift" and len(words) == 2:
                await board.lift(words[1])
            elif words[0] == "place" and len(words) == 3:
                await board.place(words[1], words[2])
            elif words[0] == "press" and len(words) == 2 and words[1] in ("left", "right"):
                await board.press(words[1])
            elif words == ["new"]:
                position = chess.Board()
            elif words in (["off"], ["on"]) and isinstance(board, Switchable):
                await (board.power_off() if words == ["off"] else board.power_on())
            elif len(words) == 1:
                move = chess.Move.from_uci(words[0])
                if not position.is_legal(move):
                    raise ValueError(f"{words[0]} is not legal in {position.fen()}")
                await perform(board, position, move, Style.PLAIN, rng, speed)
                position.push(move)
            else:
                raise ValueError(
                    "expected e2e4, lift SQ, place SQ PIECE, press left|right, new, off, on"
                )
        except ValueError as exc:
            print(f"chessbridge: {line.strip()!r}: {exc}", file=sys.stderr, flush=True)


async def _stdin_lines() -> AsyncIterator[str]:
    """Standard input, line by line, without blocking the event loop (none if it is a file)."""
    mode = os.fstat(sys.stdin.fileno()).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or sys.stdin.isatty()):
        for line in sys.stdin:  # a regular file (or /dev/null): read it at once
            yield line
        return
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line_bytes := await reader.readline():
        yield line_bytes.decode(errors="replace")
