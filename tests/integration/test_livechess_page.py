"""A web page in a real headless Chromium that uses the LiveChess API as the lichess page does
(lichess-org/lila ``ui/dgt/src/play.ts``: its order of calls and its rules, written here anew),
served by ``run --livechess`` in this process on the emulated DGT board: the page finds the
board, sets up its game once the board shows it, and counts every move played. A page of
another website (a name mapped to this machine) is refused."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncIterator, Coroutine
from pathlib import Path
from typing import Any, Final

import chess
import pytest
from aiohttp import web

from bridge.demo.game import OPERA_GAME, perform, press_side
from bridge.livechess.local import serve_daemon
from bridge.table.daemon import TableDaemon
from bridge.wire.config import Config
from drivers.choreography import Style
from drivers.dgt.emulator import DgtEmulator
from tests.browser import chromium
from tests.conftest import Mosquitto
from tests.relay_harness import running_table

pytestmark = [pytest.mark.mosquitto, pytest.mark.pty]

SPEED = 8.0
SANS = OPERA_GAME.moves.split()[:10]

PAGE: Final = """<!doctype html>
<meta charset="utf-8">
<title>e-board</title>
<script>
// As the lichess page does: eboards (id 1); the first board's serialnr; subscribe (id 2) as
// feed 1; once a feed shows the board standing as the game's position, setup (id 3) with the
// game's FEN; every feed's board kept; new moves counted as the new length of san minus the
// old, an empty list and the same list ignored.
const game = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const state = {opened: false, closed: false, board: null, moves: [], errors: [], setUp: false};
window.lc = state;
let lastSan;
let setupSent = false;
const ws = new WebSocket(new URLSearchParams(location.search).get("api"));
ws.onopen = () => { state.opened = true; ws.send('{"id":1,"call":"eboards"}'); };
ws.onclose = () => { state.closed = true; };
ws.onmessage = (event) => {
  const m = JSON.parse(event.data);
  if (m.response == "error") { state.errors.push(m.param.message); return; }
  if (m.response == "call") {
    if (m.id == "1") {
      const serialnr = m.param[0].serialnr;
      ws.send(JSON.stringify(
        {id: 2, call: "subscribe", param: {feed: "eboardevent", id: 1, param: {serialnr}}}));
    }
    if (m.id == "3") state.setUp = true;
    return;
  }
  if (m.param.board) {
    state.board = m.param.board;
    if (!setupSent && m.param.board == game.split(" ")[0]) {
      setupSent = true;
      lastSan = [];
      ws.send(JSON.stringify(
        {id: 3, call: "call", param: {id: 1, method: "setup", param: {fen: game}}}));
    }
  }
  const san = m.param.san;
  if (!san || san.length == 0 || JSON.stringify(san) == JSON.stringify(lastSan)) return;
  const count = lastSan === undefined ? 1 : san.length - lastSan.length;
  lastSan = san;
  for (let i = count; i > 0; i--) state.moves.push(san[san.length - i]);
};
</script>
"""


@contextlib.asynccontextmanager
async def page_server() -> AsyncIterator[int]:
    """The page on a free port of this machine, whatever name it is asked by."""

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield runner.addresses[0][1]
    finally:
        await runner.cleanup()


@contextlib.asynccontextmanager
async def livechess_table(
    broker: Mosquitto, table: str, state_dir: Path
) -> AsyncIterator[tuple[DgtEmulator, int]]:
    """``run --livechess`` in this process on an emulated board: the board and the API's port."""
    bound: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def serve(daemon: TableDaemon, stop: asyncio.Event) -> Coroutine[Any, Any, None]:
        return serve_daemon(daemon, "127.0.0.1:0", Config(), stop, bound.set_result)

    async with running_table(broker, table, state_dir, speed=SPEED, serve=serve) as (emu, _):
        yield emu, await asyncio.wait_for(bound, 20)


async def test_a_page_finds_the_board_sets_up_and_counts_every_move(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "chessbridge.livechess")
    rng = random.Random(2)
    rules = "--host-resolver-rules=MAP evil.example 127.0.0.1"
    async with (
        livechess_table(mosquitto, table_id, tmp_path / "state") as (emu, api),
        page_server() as port,
        chromium(flags=(rules,)) as browser,
    ):
        url = f"/?api=ws://127.0.0.1:{api}/api/v1.0"
        await browser.get(f"http://127.0.0.1:{port}{url}")
        await browser.until(lambda d: d.execute_script("return window.lc.setUp"))
        emu.set_clock(600, 600, running="right")
        board = chess.Board()
        for san in SANS:
            move = board.parse_san(san)
            await perform(emu, board, move, rng.choice(list(Style)), rng, SPEED)
            mover = board.turn
            board.push(move)
            await emu.press(press_side(mover))
        shown = " ".join(SANS)
        await browser.until(lambda d: d.execute_script("return window.lc.moves.join(' ')") == shown)
        assert await browser.call(lambda d: d.execute_script("return window.lc.board")) == (
            board.board_fen()
        )
        assert await browser.call(lambda d: d.execute_script("return window.lc.errors")) == []

        # The same page from another website: refused at the handshake, never opened.
        await browser.get(f"http://evil.example:{port}{url}")
        await browser.until(lambda d: d.execute_script("return window.lc.closed"))
        assert not await browser.call(lambda d: d.execute_script("return window.lc.opened"))
    # Refused by the API itself, for its origin (not by the browser).
    assert f"from http://evil.example:{port}: add it to [livechess] origins" in caplog.text
