"""Arbiter commands: a ``request/{command}`` payload in, the response and the changes out.

docs/product.md §2: a request is one JSON object on
``chessbridge/1/table/{table}/request/{command}``; the answer goes to ``response/{command}`` as
the ``data`` of an ordinary envelope (type ``response``)::

    {"transaction": "a1", "status": "ok", "data": {...}, "error": null}
    {"transaction": "a1", "status": "error", "data": {}, "error": "what was wrong"}

Every request is checked before anything is changed, in this order: the command name must be a
safe topic level (otherwise there is nowhere safe to answer and nothing is answered); the payload
at most :data:`MAX_REQUEST_BYTES`; one JSON object (``transaction`` is echoed when it is a string
of at most 64 characters, else the answer carries ``null``); a known command; the command's own
schema, which forbids unknown fields and requires ``transaction`` and ``expires_at`` (ISO 8601 UTC
or Unix seconds: past, or more than :data:`MAX_EXPIRY_AHEAD` seconds ahead, is refused); then the
chess content with python-chess (FEN, legal UCI moves, plies in range). A refused request changes
nothing.

A request is carried out once: its ``(command, transaction)`` is kept with its response until its
``expires_at`` (the shell keeps them, in the outbox), and a repeat of it (a QoS 1 redelivery, a
client retrying) gets the first response again and changes nothing (:func:`check`,
:func:`carry_out`, :func:`repeat_of`).

:func:`handle` is pure: no I/O and no clock reads (``wall_now`` and ``now`` come in). It changes
the :class:`~bridge.arbiter.engine.Arbiter` it is given only when the request is accepted, and
returns a :class:`CommandOutcome`: the response, the facts to publish, and what only the shell
can do (a new game id, the assignment to store, the clock to set, events to replay).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any, Final, Literal

import chess
import msgspec

from bridge.arbiter import judge
from bridge.arbiter.engine import Arbiter
from bridge.arbiter.facts import Fact
from bridge.wire import payloads
from bridge.wire.payloads import Assignment as Assignment  # the assign command's result
from drivers.events import ClockSide
from drivers.link import ClockSetting

MAX_REQUEST_BYTES: Final = 4096
"""Larger payloads are refused before they are parsed."""

MAX_NESTING: Final = 16
"""Deepest nesting of arrays and objects a request may have (real ones need 3): checked before
decoding, so the answer never depends on the interpreter's recursion limit."""

MAX_TRANSACTION: Final = 64
"""Longest ``transaction`` echoed back."""

MAX_EXPIRY_AHEAD: Final = 3600.0
"""An ``expires_at`` further ahead than this (seconds) is refused: a wrong clock or a replay."""

MAX_REPLAY: Final = 10_000
"""Most events one ``replay`` resends."""

MAX_CLOCK_SECONDS: Final = 9 * 3600 + 59 * 60 + 59
"""The longest time a chess clock display shows (9:59:59)."""

COMMAND_NAME: Final = re.compile(r"[a-z][a-z0-9_]{0,31}")
"""A command name that is safe as the last level of the response topic."""

_ENCODER: Final = msgspec.json.Encoder()

ColorName = Literal["white", "black"]
ResultText = Literal["1-0", "0-1", "1/2-1/2"]

# --- request schemas ---------------------------------------------------------------------------

_Transaction = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_TRANSACTION)]
_Name = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
_Text = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
_Round = Annotated[str, msgspec.Meta(min_length=1, max_length=32)]
_FideId = Annotated[int, msgspec.Meta(ge=1, le=999_999_999)]
_BoardNumber = Annotated[int, msgspec.Meta(ge=1, le=9999)]
_Fen = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
_Uci = Annotated[str, msgspec.Meta(min_length=4, max_length=5)]
_Seconds = Annotated[int, msgspec.Meta(ge=0, le=MAX_CLOCK_SECONDS)]
_Expiry = Annotated[str, msgspec.Meta(max_length=40)] | float
_Article = Annotated[str, msgspec.Meta(max_length=20)]


class _Request(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What every request carries."""

    transaction: _Transaction
    expires_at: _Expiry


class NewGame(_Request, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``new_game``: a new game (new id) from ``fen`` or the standard position.

    Assignment fields given replace those of the table; the others are kept.
    """

    fen: _Fen | None = None
    white: _Name | None = None
    black: _Name | None = None
    white_fide_id: _FideId | None = None
    black_fide_id: _FideId | None = None
    event: _Text | None = None
    round: _Round | None = None
    board: _BoardNumber | None = None


class SetPosition(_Request, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``set_position``: the same game goes on from ``fen`` (which says who is to move)."""

    fen: _Fen


class CorrectMove(_Request, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``correct_move``: the move really played at ``ply`` was ``uci``."""

    ply: Annotated[int, msgspec.Meta(ge=1, le=100_000)]
    uci: _Uci


class Takeback(_Request, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``takeback``: remove the last ``plies`` moves."""

    plies: Annotated[int, msgspec.Meta(ge=1, le=100_000)] = 1


class SetResult(_Request, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``set_result``: the arbiter ends the game."""

    result: ResultText
    reason: _Text
    article: _Article = ""


class ClaimDraw(_Request, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``claim_draw``: the player having the move claims (9.2, 9.3), perhaps with his move."""

    move: _Uci | None = None


class AdjustClock(_Request, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``adjust_clock``: set both times; ``running`` is the side to run, ``None`` pauses."""

    white: _Seconds
    black: _Seconds
    running: ColorName | None = None


class AckAlert(_Request, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``ack_alert``: close the open alert ``id``."""

    id: Annotated[int, msgspec.Meta(ge=1, le=2**31)]


class Assign(_Request, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``assign``: who plays at this table, and where, for displays and PGN headers."""

    white: _Name
    black: _Name
    white_fide_id: _FideId | None = None
    black_fide_id: _FideId | None = None
    event: _Text | None = None
    round: _Round | None = None
    board: _BoardNumber | None = None


class Replay(_Request, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``replay``: resend the events with ``seq >= from_seq``."""

    from_seq: Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]


REQUESTS: Final[dict[str, type[_Request]]] = {
    "new_game": NewGame,
    "set_position": SetPosition,
    "correct_move": CorrectMove,
    "takeback": Takeback,
    "set_result": SetResult,
    "claim_draw": ClaimDraw,
    "adjust_clock": AdjustClock,
    "ack_alert": AckAlert,
    "assign": Assign,
    "replay": Replay,
}
"""Every command by name, with its request schema."""

# --- what comes out ----------------------------------------------------------------------------


class Response(msgspec.Struct, frozen=True, kw_only=True):
    """The ``data`` of a ``response/{command}`` envelope."""

    transaction: str | None
    status: Literal["ok", "error"]
    data: dict[str, Any]
    error: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandOutcome:
    """The answer to one request and the work left to the shell.

    ``silent``: the command name is not a safe topic level, so nothing may be answered.
    ``game_changed``: publish the retained game and save it (facts, if any, first).
    """

    command: str
    response: Response
    silent: bool = False
    facts: tuple[Fact, ...] = ()
    game_changed: bool = False
    new_game: bool = False
    """Give the game a new id (and add it to the response as ``data.game``)."""
    assignment: Assignment | None = None
    """The table's new assignment; ``None``: unchanged."""
    set_clock: ClockSetting | None = None
    replay_from: int | None = None
    """Resend the journaled events from this ``seq`` (and add the counts to the response)."""
    repeated: bool = False
    """A repeat of a request answered before: the same response, nothing changed."""

    @property
    def ok(self) -> bool:
        """Whether the request was accepted."""
        return self.response.status == "ok"

    @property
    def topic_suffix(self) -> str:
        """Where the response goes: ``response/{command}``."""
        return f"{payloads.RESPONSE_PREFIX}/{self.command}"

    def with_data(self, **data: Any) -> CommandOutcome:
        """The same outcome with more fields in the response's ``data``."""
        response = self.response
        merged = msgspec.structs.replace(response, data={**response.data, **data})
        return dataclasses.replace(self, response=merged)

    def failed(self, message: str) -> CommandOutcome:
        """The request refused after all (by the shell): an error response and no changes."""
        return _error(self.command, self.response.transaction, message)


class RejectedError(ValueError):
    """A request refused; the message is the response's ``error``."""


@dataclass(frozen=True, slots=True)
class _Context:
    command: str
    transaction: str
    arbiter: Arbiter
    assignment: Assignment
    now: float

    def ok(self, data: dict[str, Any], **changes: Any) -> CommandOutcome:
        response = Response(transaction=self.transaction, status="ok", data=data, error=None)
        return CommandOutcome(command=self.command, response=response, **changes)


# --- the handler -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckedRequest:
    """A request that passed every check that needs no game: ready to be carried out.

    ``(command, transaction)`` names it for idempotency: a repeat (a QoS 1 redelivery, a client
    retrying) is answered with the first response until ``expires`` (Unix seconds). ``digest``
    tells a repeat from another request reusing the transaction: it covers the command and
    every field but ``expires_at`` (a retry may carry a later expiry).
    """

    command: str
    request: _Request
    transaction: str
    expires: float
    digest: bytes


def handle(
    command: str,
    payload: bytes,
    *,
    arbiter: Arbiter,
    assignment: Assignment,
    wall_now: float,
    now: float,
) -> CommandOutcome:
    """Check one request and, if it is acceptable, carry it out on ``arbiter``.

    Args:
        command: the last level of the request topic.
        payload: the request's raw payload.
        arbiter: the table's engine; changed only if the request is accepted.
        assignment: the table's current assignment.
        wall_now: Unix seconds now, for ``expires_at``.
        now: the engine's time (as given to ``Arbiter.feed``).
    """
    checked = check(command, payload, wall_now=wall_now)
    if isinstance(checked, CommandOutcome):
        return checked
    return carry_out(checked, arbiter=arbiter, assignment=assignment, now=now)


def check(command: str, payload: bytes, *, wall_now: float) -> CheckedRequest | CommandOutcome:
    """The checks of :func:`handle` that need no game: a :class:`CheckedRequest`, or the
    refusal (``silent`` when the command name cannot even be answered)."""
    if not COMMAND_NAME.fullmatch(command):
        unsafe = _error(command, None, "unusable command name")
        return dataclasses.replace(unsafe, silent=True)
    if len(payload) > MAX_REQUEST_BYTES:
        return _error(
            command,
            None,
            f"request too large: {len(payload)} bytes, at most {MAX_REQUEST_BYTES} allowed",
        )
    if _nesting(payload) > MAX_NESTING:
        return _error(
            command,
            None,
            f"request is not valid JSON: nested too deeply (more than {MAX_NESTING} levels)",
        )
    try:
        raw = msgspec.json.decode(payload)
    except msgspec.DecodeError as exc:
        return _error(command, None, f"request is not valid JSON: {exc}")
    if not isinstance(raw, dict):
        return _error(command, None, "the request must be one JSON object")
    transaction = raw.get("transaction")
    echo = transaction if isinstance(transaction, str) and _echoable(transaction) else None
    schema = REQUESTS.get(command)
    if schema is None:
        known = ", ".join(REQUESTS)
        return _error(command, echo, f"unknown command {command!r}; the commands are {known}")
    try:
        request = msgspec.json.decode(payload, type=schema)
    except msgspec.ValidationError as exc:
        return _error(command, echo, f"invalid {command} request: {exc}")
    try:
        expires = check_expiry(request.expires_at, wall_now)
    except RejectedError as exc:
        return _error(command, request.transaction, str(exc))
    canonical = _ENCODER.encode([command, msgspec.structs.replace(request, expires_at=0.0)])
    return CheckedRequest(
        command=command,
        request=request,
        transaction=request.transaction,
        expires=expires,
        digest=hashlib.sha256(canonical).digest(),
    )


def carry_out(
    checked: CheckedRequest, *, arbiter: Arbiter, assignment: Assignment, now: float
) -> CommandOutcome:
    """Carry out a checked request on ``arbiter`` (changed only if the request is accepted)."""
    context = _Context(checked.command, checked.transaction, arbiter, assignment, now)
    try:
        return _run(checked.request, context)
    except RejectedError as exc:
        return _error(checked.command, checked.transaction, str(exc))


def repeat_of(checked: CheckedRequest, first: Response, digest: bytes) -> CommandOutcome:
    """The answer to a request whose transaction was answered before (``first``, for a
    request of ``digest``): the first response again, or a refusal if the request differs."""
    if digest == checked.digest:
        return CommandOutcome(command=checked.command, response=first, repeated=True)
    return _error(
        checked.command,
        checked.transaction,
        f"transaction {checked.transaction!r} already answered a different {checked.command} "
        "request; use a new transaction for a new request",
    )


def check_expiry(expires_at: str | float, wall_now: float) -> float:
    """``expires_at`` as Unix seconds, if the request is still valid at ``wall_now``.

    Raises:
        RejectedError: not ISO 8601 UTC nor finite seconds, already past, or too far ahead.
    """
    if isinstance(expires_at, str):
        try:
            stamp = datetime.fromisoformat(expires_at)
        except ValueError:
            raise RejectedError(
                f"expires_at {expires_at!r} is not an ISO 8601 time "
                "(e.g. 2026-05-01T14:03:22Z) nor Unix seconds"
            ) from None
        if stamp.utcoffset() != timedelta(0):
            raise RejectedError(f"expires_at {expires_at!r} must be in UTC (end with Z or +00:00)")
        seconds = stamp.timestamp()
    else:
        seconds = expires_at
        if not math.isfinite(seconds):
            raise RejectedError("expires_at must be a finite number of Unix seconds")
    if seconds <= wall_now:
        raise RejectedError(f"request expired {wall_now - seconds:.1f} s ago (expires_at)")
    if seconds > wall_now + MAX_EXPIRY_AHEAD:
        raise RejectedError(
            f"expires_at is {seconds - wall_now:.0f} s ahead, more than the "
            f"{MAX_EXPIRY_AHEAD:.0f} s allowed; check the sender's clock"
        )
    return seconds


def _echoable(transaction: str) -> bool:
    return 1 <= len(transaction) <= MAX_TRANSACTION


def _error(command: str, transaction: str | None, message: str) -> CommandOutcome:
    response = Response(transaction=transaction, status="error", data={}, error=message)
    return CommandOutcome(command=command, response=response)


def _run(request: _Request, ctx: _Context) -> CommandOutcome:
    match request:
        case NewGame():
            return _new_game(request, ctx)
        case SetPosition():
            return _set_position(request, ctx)
        case CorrectMove():
            return _correct_move(request, ctx)
        case Takeback():
            return _takeback(request, ctx)
        case SetResult():
            return _set_result(request, ctx)
        case ClaimDraw():
            return _claim_draw(request, ctx)
        case AdjustClock():
            return _adjust_clock(request, ctx)
        case AckAlert():
            return _ack_alert(request, ctx)
        case Assign():
            return _assign(request, ctx)
        case Replay():
            return ctx.ok({"from_seq": request.from_seq}, replay_from=request.from_seq)
    raise AssertionError(f"no handler for {type(request).__name__}")  # pragma: no cover


# --- the commands ------------------------------------------------------------------------------


def _new_game(request: NewGame, ctx: _Context) -> CommandOutcome:
    board = chess.Board() if request.fen is None else _board_from_fen(request.fen)
    given = {
        name: getattr(request, name)
        for name in Assignment.__struct_fields__
        if getattr(request, name) is not None
    }
    assignment = msgspec.structs.replace(ctx.assignment, **given)
    ctx.arbiter.set_game(board)
    facts = _ending(ctx)
    return ctx.ok(
        {"fen": ctx.arbiter.board.fen()},
        facts=facts,
        game_changed=True,
        new_game=True,
        assignment=assignment,
    )


def _set_position(request: SetPosition, ctx: _Context) -> CommandOutcome:
    board = _board_from_fen(request.fen)
    ctx.arbiter.set_game(board, keep_counts=True)
    return ctx.ok({"fen": board.fen()}, facts=_ending(ctx), game_changed=True)


def _correct_move(request: CorrectMove, ctx: _Context) -> CommandOutcome:
    game = ctx.arbiter.board
    moves = list(game.move_stack)
    if not moves:
        raise RejectedError("the game has no moves to correct")
    first = game.root().ply() + 1
    last = first + len(moves) - 1
    if not first <= request.ply <= last:
        raise RejectedError(
            f"ply {request.ply} is not in the game (its moves are plies {first}..{last})"
        )
    index = request.ply - first
    board = game.root()
    for move in moves[:index]:
        board.push(move)
    move = _legal_move(board, request.uci, f"at ply {request.ply}")
    if move == moves[index]:
        return ctx.ok(
            {
                "ply": request.ply,
                "uci": move.uci(),
                "san": board.san(move),
                "changed": False,
                "later_moves": "kept",
                "dropped": [],
                "fen": game.fen(),
            }
        )
    san = board.san_and_push(move)
    later = moves[index + 1 :]
    replayed = board.copy()
    for again in later:
        if not replayed.is_legal(again):
            dropped = [m.uci() for m in later]
            break
        replayed.push(again)
    else:
        board, dropped = replayed, []
    ctx.arbiter.set_game(board, keep_counts=True)
    return ctx.ok(
        {
            "ply": request.ply,
            "uci": move.uci(),
            "san": san,
            "changed": True,
            "later_moves": "cut" if dropped else "replayed",
            "dropped": dropped,
            "fen": board.fen(),
        },
        facts=_ending(ctx),
        game_changed=True,
    )


def _takeback(request: Takeback, ctx: _Context) -> CommandOutcome:
    board = ctx.arbiter.board.copy()
    count = len(board.move_stack)
    if request.plies > count:
        raise RejectedError(
            f"cannot take back {_plies(request.plies)}: the game has {_plies(count)}"
        )
    removed = [board.pop().uci() for _ in range(request.plies)]
    removed.reverse()
    ctx.arbiter.set_game(board, keep_counts=True)
    return ctx.ok(
        {"plies": request.plies, "removed": removed, "fen": board.fen()},
        facts=_ending(ctx),
        game_changed=True,
    )


def _set_result(request: SetResult, ctx: _Context) -> CommandOutcome:
    ended = ctx.arbiter.set_result(request.result, request.reason, request.article, ctx.now)
    data = {"result": ended.result, "reason": ended.reason, "article": ended.article}
    return ctx.ok(data, facts=(ended,), game_changed=True)


def _claim_draw(request: ClaimDraw, ctx: _Context) -> CommandOutcome:
    arbiter = ctx.arbiter
    if arbiter.result is not None:
        raise RejectedError(f"the game is over ({arbiter.result.result}, {arbiter.result.reason})")
    move = None
    if request.move is not None:
        move = _legal_move(arbiter.board, request.move, "for the player having the move")
    ended, alert = arbiter.claim_draw(move, ctx.now)
    if ended is not None:
        data = {
            "valid": True,
            "result": ended.result,
            "reason": ended.reason,
            "article": ended.article,
        }
        return ctx.ok(data, facts=(ended,), game_changed=True)
    assert alert is not None
    data = {
        "valid": False,
        "article": alert.article,
        "penalty": arbiter.edition.claim_penalty_text,
        "alert_id": alert.id,
    }
    return ctx.ok(data, facts=(alert,), game_changed=True)


def _adjust_clock(request: AdjustClock, ctx: _Context) -> CommandOutcome:
    arbiter = ctx.arbiter
    # The engine knows which side is White's (configured, or seen before move 1) but has no
    # public accessor for it yet; clock_times() is None when the clock or its sides are unknown.
    white_side: ClockSide | None = arbiter.white_side
    times = arbiter.clock_times()
    if times is None or white_side is None:
        raise RejectedError(
            "no clock connected, or which clock side is White's is not known yet "
            "(set engine.clock_white_side in the config, or start the clock before move 1)"
        )
    # The clock tells which side runs only by its lever: the side whose lever is up. Running
    # the other side would be shown (and judged) as the wrong player's time.
    lever = times.running
    if request.running is not None and lever is not None and request.running != _name(lever):
        raise RejectedError(
            f"the clock's lever is up on {_name(lever)}'s side: only that side can run; "
            "pause the clock (running null) or let the player press it first"
        )
    black_side = ClockSide.RIGHT if white_side is ClockSide.LEFT else ClockSide.LEFT
    by_side = {white_side: request.white, black_side: request.black}
    runs = {"white": white_side, "black": black_side, None: None}[request.running]
    setting = ClockSetting(
        left=by_side[ClockSide.LEFT],
        right=by_side[ClockSide.RIGHT],
        left_runs=runs is ClockSide.LEFT,
        right_runs=runs is ClockSide.RIGHT,
        pause=runs is None,
    )
    data = {"white": request.white, "black": request.black, "running": request.running}
    return ctx.ok(data, set_clock=setting)


def _ack_alert(request: AckAlert, ctx: _Context) -> CommandOutcome:
    open_ids = [alert.id for alert in ctx.arbiter.alerts]
    if request.id not in open_ids:
        listed = ", ".join(map(str, open_ids)) or "none"
        raise RejectedError(f"no open alert has id {request.id} (open: {listed})")
    ctx.arbiter.ack_alert(request.id)
    return ctx.ok({"id": request.id}, game_changed=True)


def _assign(request: Assign, ctx: _Context) -> CommandOutcome:
    assignment = Assignment(
        white=request.white,
        black=request.black,
        white_fide_id=request.white_fide_id,
        black_fide_id=request.black_fide_id,
        event=request.event,
        round=request.round,
        board=request.board,
    )
    return ctx.ok(msgspec.structs.asdict(assignment), game_changed=True, assignment=assignment)


def _name(color: chess.Color) -> str:
    return "white" if color == chess.WHITE else "black"


def _plies(count: int) -> str:
    return f"{count} ply" if count == 1 else f"{count} plies"


# --- chess checks ------------------------------------------------------------------------------


def _board_from_fen(fen: str) -> chess.Board:
    try:
        board = chess.Board(fen)
    except ValueError as exc:
        raise RejectedError(f"invalid FEN {fen!r}: {exc}") from None
    if not board.is_valid():
        status = board.status()
        problems = [str(flag.name).lower() for flag in chess.Status if flag and flag in status]
        raise RejectedError(f"impossible position in FEN {fen!r}: {', '.join(problems)}")
    return board


def _legal_move(board: chess.Board, uci: str, where: str) -> chess.Move:
    try:
        move = chess.Move.from_uci(uci)
    except ValueError:
        raise RejectedError(f"{uci!r} is not a move in UCI notation (e.g. e2e4, e7e8q)") from None
    if not board.is_legal(move):
        raise RejectedError(f"{uci} is not a legal move {where} (position {board.fen()})")
    return move


def _ending(ctx: _Context) -> tuple[Fact, ...]:
    """The game ends at once if the position reached does (mate, stalemate, dead position)."""
    arbiter = ctx.arbiter
    ending = judge.ending_after_move(arbiter.board, arbiter.edition)
    if ending is None:
        return ()
    return (arbiter.set_result(ending.result, ending.reason, ending.article, ctx.now),)


def _nesting(payload: bytes) -> int:
    """The deepest nesting of ``[`` and ``{`` in ``payload``, brackets inside strings ignored."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in payload:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # closing quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return deepest
