"""``chessbridge relay``: every table's game as live broadcast PGN, and the arbiters' page.

Pure parts (no I/O, no clock: time comes in as a parameter): :mod:`~bridge.relay.game` (one
table's game folded from its payloads, on top of the views' ``TableView``),
:mod:`~bridge.relay.parts` (the game in parts from the positions the table published),
:mod:`~bridge.relay.gaps` (what the relay lacks and the replays it asks for),
:mod:`~bridge.relay.notes` (the comments and the alert and action history),
:mod:`~bridge.relay.pgn` (the PGN text), :mod:`~bridge.relay.room` (all the tables of a round,
the cached round PGN with its ETag), :mod:`~bridge.relay.page` (what the page shows, as JSON),
:mod:`~bridge.relay.auth` (sign-in checks and their rate limit).

The shell: :mod:`~bridge.relay.link` (the MQTT subscription, replays, the page's commands),
:mod:`~bridge.relay.server` (aiohttp: the PGN, the page, server-sent events, the arbiters'
actions), :mod:`~bridge.relay.push` (lichess broadcast push), :mod:`~bridge.relay.store`
(what the relay saw, kept on disk for its restart) and :mod:`~bridge.relay.run` (the command).
aiohttp is an optional dependency (the ``relay`` extra): nothing on the table daemon's path
imports this package.
"""
