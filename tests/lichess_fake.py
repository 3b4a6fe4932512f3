"""A local HTTP server answering as lichess's broadcast push endpoint is documented to.

``POST /api/broadcast/round/{roundId}/push``, bearer token, ``text/plain`` PGN: 200 with
``{"games": [{"tags": {...}, "moves": N} | {"tags": {...}, "error": "..."}]}``, 400 with
``{"error": ...}`` for a PGN it cannot take (more games than a round holds), 401 for a wrong
token, 404 for an unknown round, 429 when asked to rate-limit (with ``Retry-After``), 5xx when
asked to fail. Games are read with python-chess; one it cannot read is answered with an error,
as the service does ("No move found").
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

import chess.pgn
from aiohttp import web


@dataclass
class FakeLichess:
    """The server's behaviour and what it received."""

    token: str
    round_id: str
    rate_limit: int = 0
    """The next this many pushes get 429."""
    retry_after: str | None = "1"
    fail: int = 0
    """The next this many pushes get 503."""
    refuse_white: set[str] = field(default_factory=set)
    """Games whose White is one of these are answered with an error."""
    pushes: list[str] = field(default_factory=list)
    """Every PGN pushed and accepted (200)."""
    statuses: list[int] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)
    url: str = ""
    _runner: web.AppRunner | None = None

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/api/broadcast/round/{round}/push", self._push)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def _answer(self, status: int, data: object, **headers: str) -> web.Response:
        self.statuses.append(status)
        return web.json_response(data, status=status, headers=headers or None)

    async def _push(self, request: web.Request) -> web.Response:
        self.authorizations.append(request.headers.get("Authorization", ""))
        if request.match_info["round"] != self.round_id:
            return self._answer(404, {"error": "Not found"})
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return self._answer(401, {"error": "No such token"})
        if self.rate_limit > 0:
            self.rate_limit -= 1
            headers = {} if self.retry_after is None else {"Retry-After": self.retry_after}
            return self._answer(429, {"error": "Too many requests"}, **headers)
        if self.fail > 0:
            self.fail -= 1
            return self._answer(503, {"error": "Service unavailable"})
        if not request.content_type.startswith("text/plain"):
            return self._answer(400, {"error": "Expected text/plain"})
        text = await request.text()
        stream = io.StringIO(text)
        games: list[dict[str, object]] = []
        while (game := chess.pgn.read_game(stream)) is not None:
            tags = dict(game.headers)
            if game.errors or tags.get("White") in self.refuse_white:
                games.append({"tags": tags, "error": "No move found"})
            else:
                games.append({"tags": tags, "moves": len(list(game.mainline_moves()))})
        if len(games) > 64:
            return self._answer(400, {"error": "Too many games"})
        self.pushes.append(text)
        return self._answer(200, {"games": games})
