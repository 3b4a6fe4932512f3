"""The LiveChess API's messages (pure): a client's call in, answers and feeds out.

A call is one JSON text message ``{"id": N, "call": C, "param": P}``. Every message the server
sends is ``{"response": R, "id": N, "param": P, "time": T}``: ``R`` is ``"call"`` (the answer to a
call, ``id`` the call's), ``"error"`` (a call refused: ``id`` the call's, ``param`` is
``{"message": ...}``) or ``"feed"`` (``id`` the feed id the client chose when subscribing); ``T``
is the server's time in milliseconds since the epoch. The lichess page tells its answers from
its feeds by ``response``, and compares ``id`` with ``==``: ids are sent as numbers, whatever
form the client gave them in.

The calls (:func:`parse`):

- ``eboards``: the boards;
- ``subscribe`` with ``{"feed": "eboardevent", "id": F, "param": {"serialnr": S}}``;
- ``unsubscribe`` with ``{"id": F}``;
- ``call`` with ``{"id": F, "method": "setup", "param": {"fen": FEN}}`` or ``{"id": F,
  "method": "flip", "param": {"flip": true}}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import msgspec

MAX_MESSAGE: Final = 64 * 1024
"""Bytes of the largest call taken (a real one is under 200)."""

FEED: Final = "eboardevent"
"""The only feed served."""

CALLS: Final = "eboards, subscribe, unsubscribe and call (methods setup and flip)"
"""The calls served, as an error message names them."""

_MAX_ID: Final = 2**53
"""Ids beyond a JavaScript number's exact integers are refused."""

_ENCODER: Final = msgspec.json.Encoder()


class CallError(ValueError):
    """A call that cannot be carried out; ``call_id`` is its id when it had a usable one."""

    def __init__(self, message: str, call_id: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.call_id = call_id


@dataclass(frozen=True, slots=True)
class Eboards:
    """``eboards``: the list of boards."""

    id: int


@dataclass(frozen=True, slots=True)
class Subscribe:
    """``subscribe`` to the ``eboardevent`` feed of board ``serialnr``, as feed ``feed``."""

    id: int
    feed: int
    serialnr: str


@dataclass(frozen=True, slots=True)
class Unsubscribe:
    """``unsubscribe`` feed ``feed``."""

    id: int
    feed: int


@dataclass(frozen=True, slots=True)
class Setup:
    """``call`` ``setup``: the position ``fen`` is where feed ``feed``'s ``san`` starts."""

    id: int
    feed: int
    fen: str


@dataclass(frozen=True, slots=True)
class Flip:
    """``call`` ``flip``: feed ``feed``'s client sees the board turned round (or not)."""

    id: int
    feed: int
    flip: bool


Call = Eboards | Subscribe | Unsubscribe | Setup | Flip


def parse(text: str | bytes) -> Call:
    """One call from its text.

    Raises:
        CallError: not a JSON object, no usable ``id``, an unknown call, feed or method, or a
            ``param`` that does not fit the call; the message says which, for the client.
    """
    try:
        message = msgspec.json.decode(text)
    except msgspec.DecodeError as exc:
        raise CallError(f"not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise CallError('a call is a JSON object: {"id": N, "call": C, "param": P}')
    call_id = number(message.get("id"), "the call's id")
    name = message.get("call")
    param = message.get("param")
    try:
        match name:
            case "eboards":
                return Eboards(call_id)
            case "subscribe":
                return _subscribe(call_id, param)
            case "unsubscribe":
                return Unsubscribe(call_id, number(_field(param, "id", "unsubscribe"), "feed id"))
            case "call":
                return _method(call_id, param)
            case _:
                raise CallError(f"unknown call {name!r}: the calls served are {CALLS}")
    except CallError as exc:
        raise CallError(exc.message, call_id) from None


def _subscribe(call_id: int, param: object) -> Subscribe:
    feed = _field(param, "feed", "subscribe")
    if feed != FEED:
        raise CallError(f"unknown feed {feed!r}: the feed served is {FEED!r}")
    feed_id = number(_field(param, "id", "subscribe"), "feed id")
    serialnr = _field(_field(param, "param", "subscribe"), "serialnr", "subscribe's param")
    if isinstance(serialnr, int) and not isinstance(serialnr, bool):
        serialnr = str(serialnr)
    if not isinstance(serialnr, str):
        raise CallError("subscribe: serialnr must be text, as eboards lists it")
    return Subscribe(call_id, feed_id, serialnr)


def _method(call_id: int, param: object) -> Setup | Flip:
    method = _field(param, "method", "call")
    feed_id = number(_field(param, "id", "call"), "feed id")
    if method == "setup":
        fen = _field(_field(param, "param", "setup"), "fen", "setup's param")
        if not isinstance(fen, str):
            raise CallError("setup: fen must be text, a FEN")
        return Setup(call_id, feed_id, fen)
    if method == "flip":
        flip = _field(_field(param, "param", "flip"), "flip", "flip's param")
        if not isinstance(flip, bool):
            raise CallError("flip: flip must be true or false")
        return Flip(call_id, feed_id, flip)
    raise CallError(f"unknown method {method!r}: the methods served are setup and flip")


def _field(param: object, name: str, where: str) -> object:
    if not isinstance(param, dict) or name not in param:
        raise CallError(f"{where}: no {name!r} in its param")
    return param[name]


def number(value: object, what: str) -> int:
    """``value`` as an integer id: a number, or a text of digits (some clients send ``"1"``).

    Raises:
        CallError: anything else.
    """
    if isinstance(value, bool):
        pass
    elif isinstance(value, int):
        if abs(value) <= _MAX_ID:
            return value
    elif isinstance(value, float) and value.is_integer():
        if abs(value) <= _MAX_ID:
            return int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return number(int(value), what)
    raise CallError(f"{what} must be a number, not {value!r}")


def answer(call_id: int, param: object, now_ms: int) -> str:
    """The answer to call ``call_id``."""
    return _message("call", call_id, param, now_ms)


def error(call_id: int | None, message: str, now_ms: int) -> str:
    """A call refused, and why (``call_id`` ``None``: the call had no usable id)."""
    return _message("error", call_id, {"message": message}, now_ms)


def feed(feed_id: int, param: object, now_ms: int) -> str:
    """One message of feed ``feed_id``."""
    return _message("feed", feed_id, param, now_ms)


def _message(response: str, message_id: int | None, param: object, now_ms: int) -> str:
    body = {"response": response, "id": message_id, "param": param, "time": now_ms}
    return _ENCODER.encode(body).decode()
