"""A client of the LiveChess API as the lichess page is one (lichess-org/lila
``ui/dgt/src/play.ts``, read for its order and its rules, not copied): a real aiohttp websocket.

The page sends ``{"id":1,"call":"eboards"}``, takes the first board's ``serialnr``, subscribes
with call id 2 and feed id 1, and sends ``setup`` (call id 3) with its game's FEN, when it has a
game. It tells answers from feeds by ``response`` and compares ids with ``==``; it keeps the last
``board`` a feed carried and compares it with a position's placement; it counts new moves as
the length of ``san`` minus the length of the last list it took (none before its ``setup``:
the last move alone), ignores an empty list and the same list again. :class:`Page` keeps those
rules; :class:`LiveChessClient` holds the connection and every message, and waits for some.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Final

import aiohttp
import chess
import pytest

DEADLINE: Final = 20.0
"""Seconds a test waits for what it expects (never a measure of speed)."""

Message = dict[str, Any]


@dataclass
class Page:
    """The lichess page's rules for what the feeds carry."""

    last_san: list[str] | None = None
    board: str | None = None
    moves: list[str] = field(default_factory=list)
    """The moves the page would have sent to lichess, in order."""

    def setup_sent(self) -> None:
        """The page resets its count when it sends a setup."""
        self.last_san = []

    def take(self, message: Message) -> None:
        param = message["param"]
        if param.get("board"):
            self.board = param["board"]
        san = param.get("san")
        if not isinstance(san, list) or not san or san == self.last_san:
            return
        new = 1 if self.last_san is None else len(san) - len(self.last_san)
        self.last_san = san
        if new > 0:
            self.moves += san[-new:]


class LiveChessClient:
    """One websocket to the API: every message received, kept in order."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.messages: list[Message] = []
        self.pages: dict[int, Page] = {}
        """The page's rules applied to each feed, by feed id."""
        self._changed = asyncio.Event()

    def page(self, feed: int = 1) -> Page:
        return self.pages.setdefault(feed, Page())

    async def _read(self) -> None:
        async for message in self.ws:
            if message.type == aiohttp.WSMsgType.TEXT:
                decoded = json.loads(message.data)
                self.messages.append(decoded)
                if decoded["response"] == "feed":
                    self.page(decoded["id"]).take(decoded)
                self._changed.set()

    @property
    def feeds(self) -> list[Message]:
        return [m for m in self.messages if m["response"] == "feed"]

    async def until(
        self, check: Callable[[list[Message]], object], within: float = DEADLINE
    ) -> list[Message]:
        """Wait until ``check(messages)`` is true; fails the test after ``within`` seconds."""
        try:
            async with asyncio.timeout(within):
                while not check(self.messages):
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            pytest.fail(f"not there after {within} s; received: {self.messages[-10:]}")
        return self.messages

    async def call(self, message: Message | str, within: float = DEADLINE) -> Message:
        """Send a call; its answer or error (the first message with its id, not a feed)."""
        text = message if isinstance(message, str) else json.dumps(message)
        call_id = json.loads(text).get("id")
        start = len(self.messages)
        await self.ws.send_str(text)

        def answered(messages: list[Message]) -> bool:
            return any(_answers(m, call_id) for m in messages[start:])

        await self.until(answered, within)
        return next(m for m in self.messages[start:] if _answers(m, call_id))

    async def eboards(self) -> list[Message]:
        answer = await self.call('{"id":1,"call":"eboards"}')
        assert answer["response"] == "call", answer
        boards: list[Message] = answer["param"]
        return boards

    async def subscribe(self, serialnr: str, feed: int = 1, call: int = 2) -> Message:
        """The page's subscription; the feed that comes at once after the answer."""
        start = len(self.messages)
        answer = await self.call(
            {
                "id": call,
                "call": "subscribe",
                "param": {"feed": "eboardevent", "id": feed, "param": {"serialnr": serialnr}},
            }
        )
        assert answer == {"response": "call", "id": call, "param": None, "time": answer["time"]}
        await self.until(lambda ms: [m for m in ms[start:] if _feed_of(m, feed)])
        first = next(m for m in self.messages[start:] if _feed_of(m, feed))
        assert self.messages.index(answer) < self.messages.index(first), "answer, then the feed"
        return first

    async def setup(self, fen: str, feed: int = 1, call: int = 3) -> Message:
        """The page's setup: its answer (or error)."""
        self.page(feed).setup_sent()
        return await self.call(
            {
                "id": call,
                "call": "call",
                "param": {"id": feed, "method": "setup", "param": {"fen": fen}},
            }
        )

    async def feed_showing(
        self, check: Callable[[Message], object], feed: int = 1, *, since: int | None = None
    ) -> Message:
        """The first feed of ``feed`` whose ``param`` passes ``check``, from message ``since``
        on (default: from the last one received)."""
        start = max(0, len(self.messages) - 1) if since is None else since

        def showing(messages: list[Message]) -> list[Message]:
            return [m for m in messages[start:] if _feed_of(m, feed) and check(m["param"])]

        return showing(await self.until(showing))[0]

    async def board_shown(self, board: str, feed: int = 1) -> Message:
        """The first feed from now on (or the last one) that shows ``board``."""
        return await self.feed_showing(lambda param: param.get("board") == board, feed)

    async def moves_counted(self, moves: list[str], feed: int = 1) -> None:
        """Until the page has counted exactly ``moves`` on ``feed``."""
        page = self.page(feed)
        await self.until(lambda _: page.moves[: len(moves)] == moves)
        assert page.moves == moves


def _answers(message: Message, call_id: object) -> bool:
    return message["response"] in ("call", "error") and message["id"] == call_id


def _feed_of(message: Message, feed: int) -> bool:
    return bool(message["response"] == "feed" and message["id"] == feed)


@contextlib.asynccontextmanager
async def connected(
    port: int, *, origin: str | None = None, host: str = "127.0.0.1"
) -> AsyncIterator[LiveChessClient]:
    """A websocket to ``ws://HOST:PORT/api/v1.0`` (with an ``Origin`` header if given)."""
    headers = {} if origin is None else {"Origin": origin}
    async with (
        aiohttp.ClientSession() as http,
        http.ws_connect(f"ws://{host}:{port}/api/v1.0", headers=headers) as ws,
    ):
        client = LiveChessClient(ws)
        reader = asyncio.create_task(client._read())
        try:
            yield client
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader


async def first_board(
    client: LiveChessClient, state: str = "ACTIVE", *, battery: bool = False
) -> Message:
    """The page's first board, once the API lists it as ``state`` with a board known (and,
    with ``battery``, the battery the board reports a moment after it connects)."""
    deadline = asyncio.get_running_loop().time() + DEADLINE
    while True:
        boards = await client.eboards()
        if (
            boards
            and boards[0]["state"] == state
            and boards[0]["board"]
            and (not battery or boards[0]["battery"] is not None)
        ):
            return boards[0]
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(f"no {state} board listed after {DEADLINE} s: {boards}")
        await asyncio.sleep(0.1)


API_LINE: Final = re.compile(r"LiveChess API at ws://[^:\s]+:(\d+)/api/v1\.0")


def placement_after(*sans: str, start: str = chess.STARTING_FEN) -> str:
    board = chess.Board(start)
    for san in sans:
        board.push_san(san)
    return board.board_fen()


@dataclass
class Served:
    """A ``chessbridge`` command serving the API: its process, port, and what it said."""

    proc: asyncio.subprocess.Process
    port: int
    lines: list[str]


@contextlib.asynccontextmanager
async def serving(command: list[str]) -> AsyncIterator[Served]:
    """The ``chessbridge`` ``command`` line (``tests.cli.argv``'s; its stdout and stderr read as
    they come), once its log says where the API listens; SIGTERM at the end of the block, and
    its exit status must be 0."""
    proc = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    lines: list[str] = []
    bound: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def read() -> None:
        assert proc.stdout is not None
        while line := await proc.stdout.readline():
            text = line.decode(errors="replace").rstrip("\n")
            lines.append(text)
            found = API_LINE.search(text)
            if found and not bound.done():
                bound.set_result(int(found.group(1)))

    reader = asyncio.create_task(read())
    try:
        waited: list[asyncio.Future[Any]] = [bound, reader]
        done, _ = await asyncio.wait(waited, timeout=30, return_when=asyncio.FIRST_COMPLETED)
        if bound not in done:
            pytest.fail("the API never said where it listens:\n" + "\n".join(lines))
        yield Served(proc, bound.result(), lines)
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(proc.wait(), 15)
        assert code == 0, "\n".join(lines)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(reader, 5)
