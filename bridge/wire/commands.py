"""Arbiter requests on the wire: a ``request/{command}`` payload in, a parsed :class:`Request`
or a :class:`Refusal` out. Pure: no I/O, no clock reads, no game.

docs/product.md §2: a request is one JSON object on
``chessbridge/1/table/{table}/request/{command}``; the answer goes to ``response/{command}`` as
the ``data`` of an ordinary envelope (type ``response``)::

    {"transaction": "a1", "status": "ok", "data": {...}, "error": null}
    {"transaction": "a1", "status": "error", "data": {}, "error": "what was wrong"}

:func:`parse` checks every request before anything is changed, in this order: the command name
must be a safe topic level (otherwise there is nowhere safe to answer and nothing is answered);
the payload at most :data:`MAX_REQUEST_BYTES`; one JSON object (``transaction`` is echoed when it
is a string of at most 64 characters, else the answer carries ``null``); a known command; the
command's own schema, which forbids unknown fields and requires ``transaction`` and
``expires_at`` (ISO 8601 UTC or Unix seconds: past, or more than :data:`MAX_EXPIRY_AHEAD`
seconds ahead, is refused). What needs the game (a FEN's position, legal UCI moves, plies in
range) is checked by the table when it carries the request out (:mod:`bridge.table.commands`).
A refused request changes nothing.

A request is carried out once: its ``(command, transaction)`` is kept with its response until its
``expires_at`` (the shell keeps them, in the outbox), and a repeat of it (a QoS 1 redelivery, a
client retrying) gets the first response again and changes nothing: :attr:`Request.digest`
tells a repeat from another request reusing the transaction.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any, Final, Literal

import msgspec

from bridge.wire.payloads import Assignment as Assignment  # the assign command's result

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

MAX_RECONSTRUCT: Final = 64
"""Most moves one ``reconstruct`` records."""

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
_Rating = Annotated[int, msgspec.Meta(ge=0, le=4000)]
_Fen = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
_Uci = Annotated[str, msgspec.Meta(min_length=4, max_length=5)]
_Seconds = Annotated[int, msgspec.Meta(ge=0, le=MAX_CLOCK_SECONDS)]
_Expiry = Annotated[str, msgspec.Meta(max_length=40)] | float
_Article = Annotated[str, msgspec.Meta(max_length=20)]


class _Fields(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What every request carries."""

    transaction: _Transaction
    expires_at: _Expiry


class NewGame(_Fields, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``new_game``: a new game (new id) from ``fen`` or the standard position.

    Assignment fields given replace those of the table; the others are kept.
    """

    fen: _Fen | None = None
    white: _Name | None = None
    black: _Name | None = None
    white_fide_id: _FideId | None = None
    black_fide_id: _FideId | None = None
    white_rating: _Rating | None = None
    black_rating: _Rating | None = None
    event: _Text | None = None
    round: _Round | None = None
    board: _BoardNumber | None = None


class SetPosition(_Fields, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``set_position``: the same game goes on from ``fen`` (which says who is to move)."""

    fen: _Fen


class CorrectMove(_Fields, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``correct_move``: the move really played at ``ply`` was ``uci``."""

    ply: Annotated[int, msgspec.Meta(ge=1, le=100_000)]
    uci: _Uci


class Reconstruct(_Fields, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``reconstruct``: the moves played since the last one recorded (UCI, in order), as an
    arbiter establishes them: a board nothing explained (``board_mismatch``) is settled."""

    moves: Annotated[list[_Uci], msgspec.Meta(min_length=1, max_length=MAX_RECONSTRUCT)]


class Takeback(_Fields, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``takeback``: remove the last ``plies`` moves."""

    plies: Annotated[int, msgspec.Meta(ge=1, le=100_000)] = 1


class SetResult(_Fields, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``set_result``: the arbiter ends the game."""

    result: ResultText
    reason: _Text
    article: _Article = ""


class ClaimDraw(_Fields, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``claim_draw``: the player having the move claims (9.2, 9.3), perhaps with his move."""

    move: _Uci | None = None


class AdjustClock(_Fields, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``adjust_clock``: set both times; ``running`` is the side to run, ``None`` pauses."""

    white: _Seconds
    black: _Seconds
    running: ColorName | None = None


class AckAlert(_Fields, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``ack_alert``: close the open alert ``id``."""

    id: Annotated[int, msgspec.Meta(ge=1, le=2**31)]


class Assign(_Fields, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``assign``: who plays at this table, and where, for displays and PGN headers."""

    white: _Name
    black: _Name
    white_fide_id: _FideId | None = None
    black_fide_id: _FideId | None = None
    white_rating: _Rating | None = None
    black_rating: _Rating | None = None
    event: _Text | None = None
    round: _Round | None = None
    board: _BoardNumber | None = None


class Replay(_Fields, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``replay``: resend the events with ``seq >= from_seq``."""

    from_seq: Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]


Command = (
    NewGame
    | SetPosition
    | CorrectMove
    | Reconstruct
    | Takeback
    | SetResult
    | ClaimDraw
    | AdjustClock
    | AckAlert
    | Assign
    | Replay
)
"""A request's fields, parsed by its command's schema."""

REQUESTS: Final[dict[str, type[Command]]] = {
    "new_game": NewGame,
    "set_position": SetPosition,
    "correct_move": CorrectMove,
    "reconstruct": Reconstruct,
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


def ok_response(transaction: str, data: dict[str, Any]) -> Response:
    """The response to an accepted request."""
    return Response(transaction=transaction, status="ok", data=data, error=None)


def error_response(transaction: str | None, message: str) -> Response:
    """The response to a refused request: nothing was changed."""
    return Response(transaction=transaction, status="error", data={}, error=message)


class RejectedError(ValueError):
    """A request refused; the message is the response's ``error``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """A request that passed every check that needs no game: ready to be carried out.

    ``(command, transaction)`` names it for idempotency: a repeat (a QoS 1 redelivery, a client
    retrying) is answered with the first response until ``expires`` (Unix seconds). ``digest``
    tells a repeat from another request reusing the transaction: it covers the command and
    every field but ``expires_at`` (a retry may carry a later expiry).
    """

    command: str
    fields: Command
    transaction: str
    expires: float
    digest: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """A request refused before anything was carried out.

    ``silent``: the command name is not a safe topic level, so nothing may be answered.
    """

    command: str
    response: Response
    silent: bool = False


# --- parsing -----------------------------------------------------------------------------------


def parse(command: str, payload: bytes, *, wall_now: float) -> Request | Refusal:
    """Check and parse one request (``command``: the last level of the request topic,
    ``payload``: its raw payload; ``wall_now``: Unix seconds now, for ``expires_at``)."""
    if not COMMAND_NAME.fullmatch(command):
        return Refusal(
            command=command, response=error_response(None, "unusable command name"), silent=True
        )
    if len(payload) > MAX_REQUEST_BYTES:
        return _refusal(
            command,
            None,
            f"request too large: {len(payload)} bytes, at most {MAX_REQUEST_BYTES} allowed",
        )
    if _nesting(payload) > MAX_NESTING:
        return _refusal(
            command,
            None,
            f"request is not valid JSON: nested too deeply (more than {MAX_NESTING} levels)",
        )
    try:
        raw = msgspec.json.decode(payload)
    except msgspec.DecodeError as exc:
        return _refusal(command, None, f"request is not valid JSON: {exc}")
    if not isinstance(raw, dict):
        return _refusal(command, None, "the request must be one JSON object")
    transaction = raw.get("transaction")
    echo = transaction if isinstance(transaction, str) and _echoable(transaction) else None
    schema = REQUESTS.get(command)
    if schema is None:
        known = ", ".join(REQUESTS)
        return _refusal(command, echo, f"unknown command {command!r}; the commands are {known}")
    try:
        fields = msgspec.json.decode(payload, type=schema)
    except msgspec.ValidationError as exc:
        return _refusal(command, echo, f"invalid {command} request: {exc}")
    try:
        expires = check_expiry(fields.expires_at, wall_now)
    except RejectedError as exc:
        return _refusal(command, fields.transaction, str(exc))
    canonical = _ENCODER.encode([command, msgspec.structs.replace(fields, expires_at=0.0)])
    return Request(
        command=command,
        fields=fields,
        transaction=fields.transaction,
        expires=expires,
        digest=hashlib.sha256(canonical).digest(),
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


def _refusal(command: str, transaction: str | None, message: str) -> Refusal:
    return Refusal(command=command, response=error_response(transaction, message))


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
