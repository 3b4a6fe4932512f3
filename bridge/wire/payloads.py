"""The MQTT wire format: topics, the envelope, and the JSON shape of every fact.

This is the published contract of docs/product.md §2; names and JSON shapes are chosen here and
nowhere else. The module is pure: no I/O and no clock reads (the timestamp comes in as a
parameter).

Every payload is one JSON object::

    {"v": 1, "type": "move", "table": "t042", "game": "...", "epoch": 17, "seq": 1234,
     "ts": "2026-05-01T14:03:22.123Z", "data": {...}}

``seq`` is per table and never reused; ``epoch`` is the restart counter. Consumers drop
duplicates by ``(epoch, seq)`` and ignore fields they do not know. Status payloads also carry a
top-level ``"state"`` equal to ``data.state``, so that plain ``{"state": "online"}`` consumers work.

Topics live under ``chessbridge/1/table/{table}/``; the ``1`` changes only with a breaking change.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal, TypeVar, assert_never

import chess
import msgspec

from bridge.arbiter.facts import (
    AlertRaised,
    ClockChanged,
    ClockPressed,
    ClockTimes,
    CompletedBy,
    Fact,
    GameEnded,
    MovePlayed,
    TouchAction,
    TouchReported,
)

SCHEMA_VERSION: Final = 1
"""The envelope's ``v``: minor versions only add fields."""

TOPIC_ROOT: Final = "chessbridge/1"
"""Root of every topic; the ``1`` is the protocol's major version."""

ColorName = Literal["white", "black"]

# Topic suffixes under ``chessbridge/1/table/{table}/``.
STATUS: Final = "status"
CLAIM: Final = "claim"
BOARD: Final = "board"
GAME: Final = "game"
EVENT_MOVE: Final = "event/move"
EVENT_TOUCH: Final = "event/touch"
EVENT_CLOCK: Final = "event/clock"
EVENT_ALERT: Final = "event/alert"
EVENT_RESULT: Final = "event/result"
REQUEST_PREFIX: Final = "request"
RESPONSE_PREFIX: Final = "response"

_FORBIDDEN_IN_TABLE: Final = frozenset("/+#\x00")


def topic(table: str, suffix: str) -> str:
    """The full topic for ``suffix`` (e.g. ``"event/move"``) of one table.

    Raises:
        ValueError: the table id is empty or contains ``/``, ``+``, ``#`` or NUL, which would
            put its messages under another table or make the topic a wildcard.
    """
    if not table or not _FORBIDDEN_IN_TABLE.isdisjoint(table):
        raise ValueError(f"invalid table id for an MQTT topic: {table!r}")
    return f"{TOPIC_ROOT}/table/{table}/{suffix}"


def split_topic(topic: str) -> tuple[str, str] | None:
    """``(table, suffix)`` of a topic under ``chessbridge/1/table/``, or ``None``.

    ``chessbridge/1/table/t042/event/move`` gives ``("t042", "event/move")``.
    """
    root = f"{TOPIC_ROOT}/table/"
    if not topic.startswith(root):
        return None
    table, slash, suffix = topic[len(root) :].partition("/")
    if not table or not slash or not suffix:
        return None
    return table, suffix


# --- data of the events ---------------------------------------------------------------------


class Clocks(msgspec.Struct, frozen=True, kw_only=True):
    """Remaining seconds by colour and the running side (``None``: stopped)."""

    white: int
    black: int
    running: ColorName | None


class MoveData(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """``event/move``: one legal move; ``fen`` is the position after it.

    The two flags are sent only when true (absent means ``false``): they are additions to the
    fields of docs/product.md §2, which are always sent, and are false on nearly every move.
    """

    ply: int
    uci: str
    san: str
    fen: str
    color: ColorName
    touched: tuple[str, ...]
    clock: Clocks | None
    completed_by: Literal["release", "clock", "reconstructed"]
    supersedes: bool = False
    """This move replaces the one already published for its ply (the board is the truth)."""
    promotion_assumed: bool = False
    """A promotion to a queen on a board that cannot sense the new piece (occupancy only):
    assumed until an arbiter corrects it."""


class TouchData(msgspec.Struct, frozen=True, kw_only=True):
    """``event/touch``: one lift or place, its chess meaning, and whose hand it is taken to be.

    ``hand`` is an addition to the fields of docs/product.md §2: ``null`` when either player's
    may be (a piece the player having the move can capture: the move that follows tells) or
    nobody's (a piece knocked off).
    """

    action: Literal["lift", "place"]
    square: str
    piece: str | None
    meaning: str
    ply: int
    hand: ColorName | None = None


class ClockData(msgspec.Struct, frozen=True, kw_only=True):
    """``event/clock``: a press (``kind == "press"``) or a state change (``kind`` = the state).

    ``by`` and ``completes_ply`` are only set for presses; times are ``None`` when unknown.
    """

    kind: str
    by: ColorName | None
    white: int | None
    black: int | None
    running: ColorName | None
    completes_ply: int | None


AlertDetails = dict[str, str | int | list[str] | None]


class AlertData(msgspec.Struct, frozen=True, kw_only=True):
    """``event/alert``: a breach or irregularity, with the article of the rules edition."""

    kind: str
    article: str
    ply: int
    color: ColorName | None
    message: str
    details: AlertDetails
    id: int = 0


class ResultData(msgspec.Struct, frozen=True, kw_only=True):
    """``event/result``: the game ended (``1-0``, ``0-1``, ``1/2-1/2``)."""

    result: str
    reason: str
    article: str


# --- retained state ------------------------------------------------------------------------


class StatusData(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """``status``: ``online``, ``offline`` (clean stop) or ``lost`` (the Last Will).

    ``error`` (only when there is one): what keeps the daemon from working as it should while
    it runs, e.g. its outbox cannot be written (the disk is full) and lives in memory meanwhile.
    Absent fields are not sent.
    """

    state: Literal["online", "offline", "lost"]
    error: str | None = None
    broker: str | None = None
    """``host:port`` of the broker node the daemon is connected to (a clustered broker has
    several): the node it was on when it went ``offline`` or was ``lost``. Added in 1.x;
    older daemons leave it out."""


INSTANCE_PATTERN: Final = r"\A[0-9a-f]{8,64}\Z"
"""A claim's ``instance``: lowercase hex digits, 8 to 64 of them (a daemon makes 16)."""

TIMESTAMP_PATTERN: Final = r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z\Z"
"""A timestamp exactly as :func:`format_ts` writes it (``2026-05-01T14:03:22.123Z``)."""


class ClaimData(msgspec.Struct, frozen=True, kw_only=True):
    """``claim`` (retained): the daemon process that runs the table, so that a second daemon
    started for the same table (by mistake) sees it and stops.

    ``instance`` is random, new at every start (:data:`INSTANCE_PATTERN`); ``since`` is when
    that process started, as :func:`format_ts` writes it (:data:`TIMESTAMP_PATTERN`, so that
    two claims compare as text): of two claims, the earlier one stands. Both are checked on
    decoding, as any text from outside: a claim that does not match is not a claim.
    """

    instance: Annotated[str, msgspec.Meta(pattern=INSTANCE_PATTERN)]
    since: Annotated[str, msgspec.Meta(pattern=TIMESTAMP_PATTERN)]


class BoardData(msgspec.Struct, frozen=True, kw_only=True):
    """``board``: the board link and what the board told us about itself."""

    state: Literal["connecting", "connected", "disconnected", "error"]
    driver: str
    uri: str
    model: str | None = None
    serial: str | None = None
    firmware: str | None = None
    battery: int | None = None
    charging: bool | None = None
    """Whether the board's battery is charging, as the board last said with its ``battery``
    (``None``: it never said, or has no battery the host reads); an addition to
    docs/product.md §2's list of ``board`` fields."""
    rssi: int | None = None
    """Signal strength in dBm of a Bluetooth LE board, as it advertised when found (an
    addition to docs/product.md §2's list of ``board`` fields)."""
    orientation: Literal["normal", "rotated"] | None = None
    error: str | None = None


class MoveRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One move of the game, as consumers hold it (:meth:`MoveList.records`)."""

    ply: int
    uci: str
    san: str
    color: ColorName


class MoveList(msgspec.Struct, frozen=True, kw_only=True):
    """The moves of the game snapshot, compact: two lists of one string per ply.

    ``uci[i]`` and ``san[i]`` are the move of ply ``first_ply + i``; ``first_ply`` is 1 from the
    standard position (odd plies are White's), more when the game started from a FEN. Example::

        {"first_ply": 1, "uci": ["e2e4", "e7e5", "g1f3"], "san": ["e4", "e5", "Nf3"]}
    """

    first_ply: int = 1
    uci: tuple[str, ...] = ()
    san: tuple[str, ...] = ()

    def records(self) -> list[MoveRecord]:
        """One :class:`MoveRecord` per move, with its ply and colour."""
        return [
            MoveRecord(
                ply=self.first_ply + i, uci=uci, san=san, color=ply_color(self.first_ply + i)
            )
            for i, (uci, san) in enumerate(zip(self.uci, self.san, strict=True))
        ]


def ply_color(ply: int) -> ColorName:
    """Who made ply ``ply`` (1 is White's first move)."""
    return "white" if ply % 2 else "black"


def game_start(fen: str) -> str:
    """The ``start_fen`` to give :class:`GameData` for a game started from ``fen``: the standard
    position as the very object of its default, which is how msgspec knows to leave it out
    (a default is recognised by identity, not by an equal text)."""
    return chess.STARTING_FEN if fen == chess.STARTING_FEN else fen


class GameData(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """``game``: the full snapshot, enough for a late subscriber to catch up.

    ``moves`` is a :class:`MoveList` (UCI and SAN, one list each). ``last_seq`` is the ``seq`` of
    the last event folded into the snapshot. ``players`` maps ``"white"``/``"black"`` to names;
    ``event``, ``round`` and ``board`` feed the PGN headers.

    The fields docs/product.md §2 lists (``id``, ``fen``, ``moves``, ``clocks``, ``turn``,
    ``alerts``, ``result``, ``last_seq``), ``claimable`` and ``rules`` are always sent; the other
    additions only when they say something: ``start_fen`` when the game did not start from the
    standard position (as PGN leaves out its FEN tag), ``reason`` and ``article`` with a result,
    the assignment once assigned. The snapshot is sent after every move, so each field left out
    is left out of every move's bytes.
    """

    id: str
    fen: str
    start_fen: str = chess.STARTING_FEN
    """Sent only when not the standard position: :func:`game_start` gives the value to set."""
    moves: MoveList
    clocks: Clocks | None
    turn: ColorName
    alerts: tuple[AlertData, ...]
    result: str | None
    reason: str | None = None
    article: str | None = None
    claimable: tuple[str, ...]
    rules: str
    last_seq: int
    players: dict[str, str] | None = None
    event: str | None = None
    round: str | None = None
    board: str | None = None


PLAYER_FIELDS: Final = (
    "white",
    "black",
    "white_fide_id",
    "black_fide_id",
    "white_rating",
    "black_rating",
)
"""The assignment's fields in the retained game's ``players`` (as text)."""


class Assignment(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Who plays at the table and where (the ``assign`` command); kept across games."""

    white: str | None = None
    black: str | None = None
    white_fide_id: int | None = None
    black_fide_id: int | None = None
    white_rating: int | None = None
    black_rating: int | None = None
    event: str | None = None
    round: str | None = None
    board: int | None = None

    def players(self) -> dict[str, str] | None:
        """The retained game's ``players``: names by colour, and FIDE ids and ratings if known."""
        out: dict[str, str] = {}
        for key in PLAYER_FIELDS:
            value = getattr(self, key)
            if value is not None:
                out[key] = str(value)
        return out or None


EventData = MoveData | TouchData | ClockData | AlertData | ResultData
"""The ``data`` of a non-retained event."""

# --- envelope ------------------------------------------------------------------------------


class _Header(msgspec.Struct, frozen=True, kw_only=True):
    """The envelope's fields before ``data``, in their order on the wire."""

    v: int
    type: str
    table: str
    game: str
    epoch: int
    seq: int
    ts: str


class Envelope(_Header, frozen=True, kw_only=True):
    """A decoded payload; ``data`` stays a plain dict (see :func:`data_as`).

    ``state`` is present only on status payloads.
    """

    data: dict[str, Any]
    state: str | None = None


class _Outgoing(_Header, frozen=True, kw_only=True):
    """The envelope as encoded: the same fields, ``data`` any wire struct."""

    data: msgspec.Struct


_ENCODER: Final = msgspec.json.Encoder()
_ENVELOPE_DECODER: Final = msgspec.json.Decoder(Envelope)
_ENVELOPE_FIELDS: Final = frozenset(Envelope.__struct_fields__)

_T = TypeVar("_T", bound=msgspec.Struct)


_second: tuple[float, str] = (math.nan, "")
"""The whole second :func:`format_ts` wrote last, and its text up to the seconds."""


def format_ts(ts: float) -> str:
    """Unix seconds as UTC ISO 8601 with milliseconds and ``Z`` (truncated, not rounded).

    The text of ``datetime.fromtimestamp(ts, UTC)``: ``ts`` rounded to microseconds (half to
    even, as it rounds), the milliseconds cut from them. The date and time up to the second
    are made once a second: the events of one step share their second, and a datetime made
    and written for each of them cost more than the rest of its envelope.
    """
    global _second  # a one-entry cache
    fraction, whole = math.modf(ts)
    micro = round(fraction * 1e6)
    if micro >= 1_000_000:
        whole += 1.0
        micro -= 1_000_000
    elif micro < 0:
        whole -= 1.0
        micro += 1_000_000
    second = _second
    if second[0] != whole:
        text = datetime.fromtimestamp(whole, tz=UTC).isoformat().removesuffix("+00:00")
        second = _second = (whole, text)
    return f"{second[1]}.{micro // 1000:03d}Z"


def encode(
    table: str,
    game: str,
    epoch: int,
    seq: int,
    ts: float,
    type: str,  # noqa: A002  # the envelope's field name
    data: msgspec.Struct,
    extra: dict[str, str | int | None] | None = None,
) -> bytes:
    """One payload as JSON bytes; ``ts`` is Unix seconds, ``extra`` adds top-level fields.

    Raises:
        ValueError: ``extra`` would overwrite an envelope field.
    """
    out = _Outgoing(
        v=SCHEMA_VERSION,
        type=type,
        table=table,
        game=game,
        epoch=epoch,
        seq=seq,
        ts=format_ts(ts),
        data=data,
    )
    if not extra:
        return _ENCODER.encode(out)
    clash = _ENVELOPE_FIELDS.intersection(extra) - {"state"}
    if clash:
        raise ValueError(f"extra fields would overwrite the envelope: {sorted(clash)}")
    fields: dict[str, object] = {name: getattr(out, name) for name in out.__struct_fields__}
    fields.update(extra)
    return _ENCODER.encode(fields)


def encode_status(
    table: str,
    game: str,
    epoch: int,
    seq: int,
    ts: float,
    state: Literal["online", "offline", "lost"],
    error: str | None = None,
    *,
    broker: str | None = None,
) -> bytes:
    """A ``status`` payload: the envelope plus a top-level ``state`` equal to ``data.state``."""
    data = StatusData(state=state, error=error, broker=broker)
    return encode(table, game, epoch, seq, ts, "status", data, {"state": state})


def decode_envelope(raw: bytes) -> Envelope:
    """Parse one payload; unknown fields are ignored (later minor versions add some).

    Raises:
        msgspec.ValidationError: a required field is missing or has the wrong type.
        msgspec.DecodeError: not JSON.
    """
    return _ENVELOPE_DECODER.decode(raw)


def data_as(envelope: Envelope, cls: type[_T]) -> _T:
    """The envelope's ``data`` as the wire struct ``cls`` (e.g. ``MoveData``), validated."""
    return msgspec.convert(envelope.data, cls)


# --- facts ---------------------------------------------------------------------------------


_COMPLETED_BY: Final[dict[CompletedBy, Literal["release", "clock", "reconstructed"]]] = {
    CompletedBy.RELEASE: "release",
    CompletedBy.CLOCK: "clock",
    CompletedBy.RECONSTRUCTED: "reconstructed",
}
_TOUCH_ACTION: Final[dict[TouchAction, Literal["lift", "place"]]] = {
    TouchAction.LIFT: "lift",
    TouchAction.PLACE: "place",
}


def color_name(color: chess.Color) -> ColorName:
    """``"white"`` or ``"black"``."""
    return "white" if color == chess.WHITE else "black"


def _optional_color(color: chess.Color | None) -> ColorName | None:
    return None if color is None else color_name(color)


def clocks(times: ClockTimes | None) -> Clocks | None:
    """The JSON form of clock times (``None`` stays ``None``)."""
    if times is None:
        return None
    return Clocks(white=times.white, black=times.black, running=_optional_color(times.running))


def fact_data(fact: Fact) -> tuple[str, str, EventData]:
    """``(type, topic suffix, data)`` of the event that publishes ``fact``."""
    match fact:
        case MovePlayed():
            return "move", EVENT_MOVE, _move_data(fact)
        case TouchReported():
            piece = None if fact.piece is None else fact.piece.symbol()
            touch = TouchData(
                action=_TOUCH_ACTION[fact.action],
                square=chess.square_name(fact.square),
                piece=piece,
                meaning=fact.meaning,
                ply=fact.ply,
                hand=_optional_color(fact.hand),
            )
            return "touch", EVENT_TOUCH, touch
        case ClockPressed():
            return (
                "clock",
                EVENT_CLOCK,
                _clock_data("press", fact.clock, fact.by, fact.completes_ply),
            )
        case ClockChanged():
            return "clock", EVENT_CLOCK, _clock_data(fact.state, fact.clock, None, None)
        case AlertRaised():
            return "alert", EVENT_ALERT, alert_data(fact)
        case GameEnded():
            return (
                "result",
                EVENT_RESULT,
                ResultData(result=fact.result, reason=fact.reason, article=fact.article),
            )
        case _:
            assert_never(fact)


def alert_data(fact: AlertRaised) -> AlertData:
    """The JSON form of an alert (also listed among the open alerts of ``game``)."""
    return AlertData(
        kind=fact.kind,
        article=fact.article,
        ply=fact.ply,
        color=_optional_color(fact.color),
        message=fact.message,
        details=dict(fact.details),
        id=fact.id,
    )


def _move_data(fact: MovePlayed) -> MoveData:
    return MoveData(
        ply=fact.ply,
        uci=fact.move.uci(),
        san=fact.san,
        fen=fact.fen,
        color=color_name(fact.color),
        touched=tuple(chess.square_name(square) for square in fact.touched),
        clock=clocks(fact.clock),
        completed_by=_COMPLETED_BY[fact.completed_by],
        supersedes=fact.supersedes,
        promotion_assumed=fact.promotion_assumed,
    )


def _clock_data(
    kind: str, times: ClockTimes | None, by: chess.Color | None, completes_ply: int | None
) -> ClockData:
    return ClockData(
        kind=kind,
        by=_optional_color(by),
        white=None if times is None else times.white,
        black=None if times is None else times.black,
        running=None if times is None else _optional_color(times.running),
        completes_ply=completes_ply,
    )
