"""Pushing the round's PGN to a lichess broadcast round.

``POST {url}/api/broadcast/round/{round_id}/push``, bearer token (scope ``study:write``), body
``text/plain`` PGN: the whole round each time, after every change, debounced (:attr:`debounce`
seconds gather the moves of many tables into one push) and never twice the same text. The answer
lists each game with its tags and move count, or an error (``"No move found"``...): per-game
errors are logged once each and shown on the arbiters' page. 429 waits as the service asks
(``Retry-After``, else a minute) and 5xx or a network failure backs off with
:class:`~drivers.backoff.Backoff`; both retry with the latest PGN. A refused token or an unknown
round (401, 403, 404) or a refused PGN (400) is logged once and retried only on the next change.

A lichess broadcast round holds at most :data:`MAX_GAMES` games: the relay refuses to start
with more (see :mod:`bridge.relay.run`) and, if the round grows past it, stops pushing and says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import aiohttp

from bridge.relay.room import Document, Room
from drivers.backoff import Backoff

log = logging.getLogger("chessbridge.relay.push")

MAX_GAMES: Final = 64
"""Games a lichess broadcast round (a study) holds."""
RATE_LIMITED_WAIT: Final = 60.0
"""Seconds to wait after a 429 without ``Retry-After`` (lichess asks for a full minute)."""
DEFAULT_URL: Final = "https://lichess.org"


@dataclass(frozen=True, slots=True, kw_only=True)
class LichessSettings:
    """``[relay.lichess]``; the token is never shown by ``repr``."""

    round_id: str
    token: str = field(repr=False)
    url: str = DEFAULT_URL
    debounce: float = 2.0

    @property
    def endpoint(self) -> str:
        """The push URL of the round."""
        return f"{self.url.rstrip('/')}/api/broadcast/round/{self.round_id}/push"


def count_games(text: str) -> int:
    """Games in a PGN text: one ``[Event`` tag each."""
    return sum(1 for line in text.splitlines() if line.startswith("[Event "))


class Pusher:
    """Keeps a lichess broadcast round up to date with the room's round PGN."""

    def __init__(
        self,
        room: Room,
        settings: LichessSettings,
        *,
        clock: Callable[[], float] = time.time,
        backoff: Backoff | None = None,
    ) -> None:
        self.room = room
        self.settings = settings
        self.clock = clock
        self.errors: dict[str, str] = {}
        """Table id -> the error lichess gave for its game in the last answer."""
        self.status = "not pushed yet"
        """One line for the page: the last push and how it went."""
        self.pushes = 0
        """Pushes lichess accepted."""
        self._backoff = backoff or Backoff(1.0, 60.0)
        self._wake = asyncio.Event()
        self._pushed: str | None = None
        self._logged: set[str] = set()

    def changed(self) -> None:
        """Something in the room changed: push (after the debounce)."""
        self._wake.set()

    async def run(self, stop: asyncio.Event) -> None:
        """Push on every change until ``stop``."""
        timeout = aiohttp.ClientTimeout(total=30)
        async with aiohttp.ClientSession(timeout=timeout) as http:
            while not stop.is_set():
                await self._next_change(stop)
                if stop.is_set():
                    return
                await _sleep(self.settings.debounce, stop)
                self._wake.clear()
                while not stop.is_set():
                    retry = await self.push_once(http)
                    if retry is None:
                        break
                    await _sleep(retry, stop)

    async def _next_change(self, stop: asyncio.Event) -> None:
        """Wait for a change, or for the next delayed move to come due."""
        due = self.room.next_due(self.clock())
        waits = {asyncio.create_task(self._wake.wait()), asyncio.create_task(stop.wait())}
        try:
            timeout = None if due is None else max(due - self.clock(), 0.0)
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waits:
                task.cancel()

    async def push_once(self, http: aiohttp.ClientSession) -> float | None:
        """Push the round's PGN if it changed; seconds to wait before retrying, or ``None``."""
        now = self.clock()
        document = self.room.round_document(now, now)
        if document.etag == self._pushed:
            return None
        games = count_games(document.text)
        if games > MAX_GAMES:
            self._once(
                f"not pushing: the round has {games} games and a lichess broadcast round holds "
                f"at most {MAX_GAMES}; set [relay] round so that each relay pushes one round",
                logging.ERROR,
            )
            self.status = f"not pushed: {games} games, more than {MAX_GAMES}"
            return None
        try:
            async with http.post(
                self.settings.endpoint,
                data=document.text.encode(),
                headers={
                    "Authorization": f"Bearer {self.settings.token}",
                    "Content-Type": "text/plain; charset=utf-8",
                },
            ) as answer:
                body = await answer.text()
                return self._answered(
                    answer.status, answer.headers.get("Retry-After"), body, document
                )
        except (aiohttp.ClientError, TimeoutError) as exc:
            wait = self._backoff.next()
            what = str(exc) or type(exc).__name__
            log.warning("push to lichess failed (%s); retrying in %.0f s", what, wait)
            self.status = f"push failed ({type(exc).__name__}); retrying"
            return wait

    def _answered(
        self, status: int, retry_after: str | None, body: str, document: Document
    ) -> float | None:
        if status == 200:
            self._backoff.reset()
            self._pushed = document.etag
            self.pushes += 1
            self._read_games(body, document)
            bad = len(self.errors)
            self.status = f"pushed {count_games(document.text)} games" + (
                f", {bad} refused" if bad else ""
            )
            return None
        if status == 429:
            wait = _seconds(retry_after) or RATE_LIMITED_WAIT
            log.warning("lichess asks to slow down (HTTP 429); pushing again in %.0f s", wait)
            self.status = "rate limited by lichess; waiting"
            return wait
        if status >= 500:
            wait = self._backoff.next()
            log.warning("lichess answered HTTP %d; retrying in %.0f s", status, wait)
            self.status = f"lichess answered HTTP {status}; retrying"
            return wait
        detail = _error_text(body)
        if status in (401, 403):
            what = (
                f"lichess refused the token (HTTP {status}{': ' + detail if detail else ''}): "
                "it needs the study:write scope and its owner must be a contributor of the "
                "broadcast"
            )
        elif status == 404:
            what = f"lichess has no broadcast round {self.settings.round_id!r} (HTTP 404)"
        else:
            what = f"lichess refused the PGN (HTTP {status}): {detail or body[:200]!r}"
        self._once(what, logging.ERROR)
        self.status = what
        self._pushed = document.etag  # the same text would be refused again
        return None

    def _read_games(self, body: str, document: Document) -> None:
        try:
            answer: Any = json.loads(body)
        except ValueError:
            return
        results = answer.get("games") if isinstance(answer, dict) else None
        if not isinstance(results, list):
            return
        tables = [
            line[len('[Table "') : -2]
            for line in document.text.splitlines()
            if line.startswith('[Table "')
        ]
        errors: dict[str, str] = {}
        for index, result in enumerate(results):
            if not isinstance(result, dict) or "error" not in result:
                continue
            tags = result.get("tags") if isinstance(result.get("tags"), dict) else {}
            table = tags.get("Table") if isinstance(tags, dict) else None
            if not isinstance(table, str):
                table = tables[index] if index < len(tables) else f"game {index + 1}"
            error = str(result["error"])[:200]
            errors[table] = error
            self._once(f"lichess refused the game of table {table}: {error}", logging.WARNING)
        self.errors = errors

    def _once(self, message: str, level: int) -> None:
        if message in self._logged:
            return
        if len(self._logged) > 1000:
            self._logged.clear()
        self._logged.add(message)
        log.log(level, "%s", message)


def _seconds(text: str | None) -> float | None:
    if text is None:
        return None
    with contextlib.suppress(ValueError):
        return max(float(text), 0.0)
    return None


def _error_text(body: str) -> str:
    with contextlib.suppress(ValueError):
        data = json.loads(body)
        if isinstance(data, dict) and isinstance(data.get("error"), str):
            return str(data["error"])[:200]
    return ""


async def _sleep(seconds: float, stop: asyncio.Event) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
