"""``chessbridge round start`` and ``chessbridge round results``: a round's pairings to the
tables, and its results back for the pairing program (docs/rounds.md).

``start`` reads the pairings (:mod:`bridge.wire.pairings`), checks every request before anything
is sent (a mistake is one line naming the file's line, exit 2), reads every table's retained
``game`` and ``status``, then sends each table whose assignment differs ``assign`` (and, with
``new_games``, ``new_game``), all at once, and prints one line per board. Exit 0 when every
board's table has its assignment, 1 when one refused or did not answer.

``results`` reads the retained ``game`` of every table and writes the round's results: the
pairings file's TRF with the round's entries set, or CSV. Exit 0 when every board has a result,
1 when one has not (written ``*``, or left unplayed in a TRF).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TextIO

import aiomqtt
import msgspec

from bridge.mqtt import session
from bridge.mqtt.requests import NoResponseError, Responses, new_transaction
from bridge.mqtt.session import check_tls, refused_credentials
from bridge.wire import pairings, payloads, requests
from bridge.wire.commands import Response
from bridge.wire.config import BrokerSettings
from bridge.wire.pairings import Pairing, PairingsError, RoundPairings

EXIT_REFUSED: Final = 1
EXIT_USAGE: Final = 2
_MQTT_LOGGER: Final = logging.getLogger("chessbridge.round.mqtt")
_MQTT_LOGGER.setLevel(logging.CRITICAL)


class UsageError(Exception):
    """Nothing can be sent: the message says why, on one line."""


def _say(prog: str, message: str) -> None:
    print(f"chessbridge round {prog}: {message}", file=sys.stderr, flush=True)


def read_text(path: Path) -> str:
    """A file's text.

    Raises:
        UsageError: it cannot be read or is not UTF-8 (Latin-1 is taken as a fallback).
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


# --- what the tables hold ----------------------------------------------------------------------


@dataclass
class Room:
    """Every table's retained ``game`` and ``status`` as read from the broker, and the
    responses to the requests sent."""

    games: dict[str, payloads.GameData] = field(default_factory=dict)
    status: dict[str, str] = field(default_factory=dict)
    responses: Responses = field(default_factory=Responses)
    probe: str = field(default_factory=lambda: f"round-probe-{secrets.token_hex(6)}")
    caught_up: asyncio.Event = field(default_factory=asyncio.Event)

    def held(self, table: str) -> Held | None:
        """What ``table`` holds, if its game was seen; ``None`` otherwise."""
        game = self.games.get(table)
        return None if game is None else Held.of_game(game, self.status.get(table))

    def handle(self, topic: str, raw: object) -> None:
        where = payloads.split_topic(topic)
        if where is None or not isinstance(raw, bytes | bytearray):
            return
        table, suffix = where
        if table == self.probe:
            self.caught_up.set()
            return
        if not raw:
            return
        try:
            envelope = payloads.decode_envelope(bytes(raw))
            if envelope.table != table:
                return
            if suffix == "game":
                self.games[table] = payloads.data_as(envelope, payloads.GameData)
            elif suffix == "status":
                self.status[table] = payloads.data_as(envelope, payloads.StatusData).state
            elif envelope.type == "response":
                self.responses.deliver(envelope)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return


@contextlib.asynccontextmanager
async def _connected(
    broker: BrokerSettings, room: Room, wait: float
) -> AsyncIterator[aiomqtt.Client]:
    """A connection reading every table's retained ``game`` and ``status`` (and responses);
    entered once the retained ones have all come: the broker sends them before the echo of a
    message published after subscribing."""
    async with session.client(broker, keepalive=30, logger=_MQTT_LOGGER) as client:
        root = f"{payloads.TOPIC_ROOT}/table/+"
        await client.subscribe(
            [
                (f"{root}/game", 1),
                (f"{root}/status", 1),
                (f"{root}/response/assign", 1),
                (f"{root}/response/new_game", 1),
                (payloads.topic(room.probe, "request/probe"), 1),
            ]
        )
        reader = asyncio.create_task(_read(client, room))
        try:
            await client.publish(payloads.topic(room.probe, "request/probe"), b"{}", qos=1)
            try:
                await asyncio.wait_for(room.caught_up.wait(), wait)
            except TimeoutError:
                raise aiomqtt.MqttError(
                    f"the broker did not echo a message within {wait:g} s"
                ) from None
            yield client
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                await reader


async def _read(client: aiomqtt.Client, room: Room) -> None:
    async for message in client.messages:
        room.handle(message.topic.value, message.payload)


def _broker_failure(prog: str, broker: BrokerSettings, exc: aiomqtt.MqttError) -> int:
    if refused_credentials(exc):
        _say(
            prog,
            f"MQTT broker {broker.address} refused the login ({exc}): check [broker] "
            "username/password in the config or CHESSBRIDGE_MQTT_USERNAME/PASSWORD",
        )
        return EXIT_USAGE
    _say(prog, f"cannot reach MQTT broker {broker.address}: {exc}")
    return EXIT_REFUSED


# --- round start -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Plan:
    """What ``start`` sends: each board with its table and ``assign`` fields."""

    round: RoundPairings
    tables: Mapping[int, str]
    fields: Mapping[int, dict[str, object]]


def plan(
    text: str,
    source: str,
    round_number: int,
    *,
    venue: Mapping[int, str] | None = None,
    event: str | None = None,
) -> Plan:
    """Every board's table and request, each checked as the table will check it.

    Raises:
        PairingsError: the file, the map or a request built from them is wrong (one line).
    """
    pairings_, _ = pairings.read_pairings(text, round_number, source)
    tables = pairings.tables(pairings_, venue, source)
    fields: dict[int, dict[str, object]] = {}
    for pairing in pairings_.pairings:
        given = pairings.assign_fields(pairing, round_number, event or pairings_.event)
        try:
            requests.build("assign", given, transaction="check", expires_at=time.time() + 60)
        except requests.RequestError as exc:
            raise PairingsError(
                f"{source} line {pairing.line}: board {pairing.board}: {exc}"
            ) from None
        fields[pairing.board] = given
    return Plan(round=pairings_, tables=tables, fields=fields)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one board."""

    pairing: Pairing
    table: str
    ok: bool
    said: str


def _players(pairing: Pairing) -> str:
    def one(player: pairings.Player) -> str:
        return player.name if player.rating is None else f"{player.name} ({player.rating})"

    return f"{one(pairing.white)} - {one(pairing.black)}"


def _forfeit(pairing: Pairing) -> str:
    return f"; forfeit {pairing.result} in the file" if pairing.forfeit else ""


def render(outcomes: Sequence[Outcome], unpaired: Sequence[pairings.Unpaired]) -> str:
    """The table ``start`` prints: board, table, players, outcome; then who has no board."""
    rows = [("board", "table", "players", "")] + [
        (str(o.pairing.board), o.table, _players(o.pairing), o.said + _forfeit(o.pairing))
        for o in outcomes
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [
        f"{b:>{widths[0]}}  {t:<{widths[1]}}  {p:<{widths[2]}}  {s}".rstrip() for b, t, p, s in rows
    ]
    lines.extend(f"no board: {p.player.name} ({p.describe()})" for p in unpaired)
    good = sum(o.ok for o in outcomes)
    lines.append(f"{len(outcomes)} boards: {good} ok, {len(outcomes) - good} not")
    return "\n".join(lines) + "\n"


async def start(
    path: Path,
    round_number: int,
    *,
    broker: BrokerSettings,
    venue_path: Path | None = None,
    event: str | None = None,
    new_games: bool = False,
    dry_run: bool = False,
    wait: float = 10.0,
    out: TextIO = sys.stdout,
) -> int:
    """``chessbridge round start``: the exit code."""
    try:
        venue = None
        if venue_path is not None:
            venue = pairings.read_venue(read_text(venue_path), str(venue_path))
        the_plan = plan(read_text(path), str(path), round_number, venue=venue, event=event)
        if not dry_run:
            check_tls(broker)
    except (UsageError, ValueError) as exc:  # PairingsError is a ValueError
        _say("start", str(exc))
        return EXIT_USAGE
    if dry_run:
        out.write(_dry_run(the_plan, new_games))
        out.flush()
        return 0
    room = Room()
    try:
        async with _connected(broker, room, wait) as client:

            async def send(table: str, command: str, fields: Mapping[str, object]) -> Response:
                return await room.responses.send(
                    client,
                    table,
                    command,
                    fields,
                    transaction=new_transaction("round"),
                    within=wait,
                )

            outcomes = await asyncio.gather(
                *(
                    start_board(
                        send,
                        room.held(the_plan.tables[pairing.board]),
                        the_plan.tables[pairing.board],
                        pairing,
                        the_plan.fields[pairing.board],
                        new_games,
                    )
                    for pairing in the_plan.round.pairings
                )
            )
    except aiomqtt.MqttError as exc:
        return _broker_failure("start", broker, exc)
    out.write(render(outcomes, the_plan.round.unpaired))
    out.flush()
    return 0 if all(o.ok for o in outcomes) else EXIT_REFUSED


def _dry_run(the_plan: Plan, new_games: bool) -> str:
    lines: list[str] = []
    for pairing in the_plan.round.pairings:
        table = the_plan.tables[pairing.board]
        fields = msgspec.json.encode(the_plan.fields[pairing.board]).decode()
        lines.append(f"board {pairing.board}: {table} assign {fields}")
        if new_games:
            lines.append(f"board {pairing.board}: {table} new_game {{}}")
    lines.extend(f"no board: {p.player.name} ({p.describe()})" for p in the_plan.round.unpaired)
    lines.append(f"{len(the_plan.round.pairings)} boards; nothing sent (--dry-run)")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class Held:
    """What a table holds now: its assignment and how far its game is."""

    players: Mapping[str, str] | None
    event: str | None
    round: str | None
    board: str | None
    plies: int
    over: bool
    status: str | None = None
    """The table's retained status (``online``, ``lost``, ``offline``); ``None``: never seen."""

    @classmethod
    def of_game(cls, game: payloads.GameData, status: str | None) -> Held:
        return cls(
            players=game.players,
            event=game.event,
            round=game.round,
            board=game.board,
            plies=len(game.moves.uci),
            over=game.result is not None,
            status=status,
        )

    def has(self, fields: Mapping[str, object]) -> bool:
        """Whether the table already holds the assignment the ``assign`` ``fields`` give."""
        wanted = msgspec.convert(fields, payloads.Assignment)
        board = None if wanted.board is None else str(wanted.board)
        return (dict(self.players or {}), self.event, self.round, self.board) == (
            wanted.players() or {},
            wanted.event,
            wanted.round,
            board,
        )


Sender = Callable[[str, str, Mapping[str, object]], Awaitable[Response]]
"""Sends a command to a table and waits for its response: ``(table, command, fields)``;
raises :class:`NoResponseError` when none comes."""


async def start_board(
    send: Sender,
    held: Held | None,
    table: str,
    pairing: Pairing,
    fields: Mapping[str, object],
    new_games: bool,
) -> Outcome:
    """Give one board's table its assignment (and a new game): what became of it."""

    def outcome(ok: bool, said: str) -> Outcome:
        return Outcome(pairing=pairing, table=table, ok=ok, said=said)

    if held is not None and held.has(fields):
        if not new_games or (not held.plies and not held.over):
            return outcome(True, "ok (unchanged)")
        return outcome(True, "ok (unchanged; its game under way or over is kept)")
    if new_games and held is not None and held.plies and not held.over:
        return outcome(
            False,
            f"not sent: a game is in play there ({held.plies} plies, round "
            f"{held.round or '?'}, no result): finish it, or send new_game yourself",
        )
    commands = ["assign", "new_game"] if new_games else ["assign"]
    for command in commands:
        try:
            response = await send(table, command, fields if command == "assign" else {})
        except NoResponseError:
            state = None if held is None else held.status
            why = "never seen on this broker" if state is None else f"status {state}"
            return outcome(False, f"no answer ({why})")
        if response.status != "ok":
            return outcome(False, f"refused {command}: {response.error}")
    return outcome(True, "ok" + (" (new game)" if new_games else ""))


# --- round results -----------------------------------------------------------------------------

RESULT_COLUMNS: Final = (
    "round",
    "board",
    "table",
    "white",
    "black",
    "white_fide_id",
    "black_fide_id",
    "white_rating",
    "black_rating",
    "result",
    "reason",
)


@dataclass(frozen=True, slots=True)
class BoardResult:
    """One board's result as written."""

    board: int
    table: str | None
    white: pairings.Player
    black: pairings.Player
    result: pairings.Result
    reason: str | None
    forfeit: bool = False


def _result(game: payloads.GameData) -> pairings.Result:
    return next((r for r in pairings.RESULTS if r == game.result), "*")


def _player(players: Mapping[str, str], color: str) -> pairings.Player:
    def number(key: str) -> int | None:
        text = players.get(f"{color}_{key}")
        return int(text) if text is not None and text.isdigit() else None

    return pairings.Player(
        name=players.get(color) or "?", fide_id=number("fide_id"), rating=number("rating")
    )


def collect(
    games: Mapping[str, payloads.GameData],
    round_number: int,
    round_pairings: RoundPairings | None,
) -> tuple[list[BoardResult], list[str]]:
    """Each board's result from the tables' retained games (one per table, however many parts
    an illegal move that stood split its PGN into), and what to tell the arbiter."""
    notes: list[str] = []
    by_board: dict[int, tuple[str, payloads.GameData]] = {}
    for name, held in sorted(games.items()):
        if held.round != str(round_number) or held.board is None or not held.board.isdigit():
            continue
        number = int(held.board)
        if number in by_board:
            notes.append(
                f"board {number}: tables {by_board[number][0]} and {name} both hold it; "
                f"{by_board[number][0]}'s game is taken"
            )
            continue
        by_board[number] = (name, held)
    rows: list[BoardResult] = []
    if round_pairings is None:
        for board, (holder, game) in sorted(by_board.items()):
            players = game.players or {}
            rows.append(
                BoardResult(
                    board=board,
                    table=holder,
                    white=_player(players, "white"),
                    black=_player(players, "black"),
                    result=_result(game),
                    reason=game.reason,
                )
            )
        if not rows:
            notes.append(f"no table holds a game of round {round_number}")
        return rows, notes
    for pairing in round_pairings.pairings:
        found = by_board.get(pairing.board)
        table: str | None = None
        result = pairing.result
        reason: str | None = "forfeit" if pairing.forfeit else None
        if found is None:
            if result == "*":
                notes.append(f"board {pairing.board}: no table holds round {round_number}'s game")
        else:
            table, game = found
            players = game.players or {}
            if (players.get("white"), players.get("black")) != (
                pairing.white.name,
                pairing.black.name,
            ):
                notes.append(
                    f"board {pairing.board}: table {table} has {players.get('white')} - "
                    f"{players.get('black')}, not {pairing.white.name} - {pairing.black.name}; "
                    "its game is not taken"
                )
                table = None
            elif game.result is not None:
                result, reason = _result(game), game.reason
        if result == "*" and found is not None and table is not None:
            notes.append(f"board {pairing.board}: table {table}'s game is not finished")
        rows.append(
            BoardResult(
                board=pairing.board,
                table=table,
                white=pairing.white,
                black=pairing.black,
                result=result,
                reason=reason,
                forfeit=pairing.forfeit and reason == "forfeit",
            )
        )
    return rows, notes


def results_csv(rows: Sequence[BoardResult], round_number: int) -> str:
    """The results as CSV (a file ``round start`` and ``--pairings`` read too)."""
    return pairings.write_csv(
        (
            {
                "round": round_number,
                "board": row.board,
                "table": row.table,
                "white": row.white.name,
                "black": row.black.name,
                "white_fide_id": row.white.fide_id,
                "black_fide_id": row.black.fide_id,
                "white_rating": row.white.rating,
                "black_rating": row.black.rating,
                "result": row.result,
                "reason": row.reason,
            }
            for row in rows
        ),
        RESULT_COLUMNS,
    )


async def results(
    round_number: int,
    *,
    broker: BrokerSettings,
    pairings_path: Path | None = None,
    fmt: str = "csv",
    output: Path | None = None,
    wait: float = 10.0,
    out: TextIO = sys.stdout,
) -> int:
    """``chessbridge round results``: the exit code."""
    round_pairings: RoundPairings | None = None
    trf: pairings.Trf | None = None
    try:
        if pairings_path is not None:
            round_pairings, trf = pairings.read_pairings(
                read_text(pairings_path), round_number, str(pairings_path)
            )
        elif not 1 <= round_number <= pairings.MAX_ROUND:
            raise UsageError(f"round must be 1 to {pairings.MAX_ROUND}, not {round_number}")
        if fmt == "trf" and trf is None:
            raise UsageError("--format trf needs --pairings FILE, the round's TRF file")
        check_tls(broker)
    except (UsageError, ValueError) as exc:
        _say("results", str(exc))
        return EXIT_USAGE
    room = Room()
    try:
        async with _connected(broker, room, wait):
            games = dict(room.games)
    except aiomqtt.MqttError as exc:
        return _broker_failure("results", broker, exc)
    rows, notes = collect(games, round_number, round_pairings)
    if trf is not None and fmt == "trf":
        text = pairings.with_results(
            trf,
            round_number,
            {
                row.board: (row.white.rank or 0, row.black.rank or 0, row.result, row.forfeit)
                for row in rows
            },
        )
    else:
        text = results_csv(rows, round_number)
    for note in notes:
        _say("results", note)
    if output is None:
        out.write(text)
        out.flush()
    else:
        try:
            _write(output, text)
        except OSError as exc:
            _say("results", f"cannot write {output}: {exc.strerror or exc}")
            return EXIT_USAGE
    done = bool(rows) and all(row.result != "*" for row in rows)
    return 0 if done else EXIT_REFUSED


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
