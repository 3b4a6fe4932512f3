"""Arbiter requests as a sender builds them (pure): the other side of :mod:`bridge.wire.commands`.

:func:`build` checks the fields against the command's own schema (the one the daemon applies),
fills in ``transaction`` and ``expires_at`` and returns the payload for
``chessbridge/1/table/{table}/request/{command}``. A mistake is caught here, with the daemon's
wording, before anything is published.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import msgspec
import msgspec.inspect

from bridge.wire.commands import MAX_REQUEST_BYTES, REQUESTS, Response
from bridge.wire.payloads import Envelope

EXPIRY: Final = 60.0
"""Seconds a request stays valid after it is sent (the daemon refuses it later)."""


class RequestError(ValueError):
    """The request cannot be sent as given; the message says what to change."""


def build(
    command: str,
    fields: Mapping[str, object],
    *,
    transaction: str,
    expires_at: float,
    strict: bool = True,
) -> bytes:
    """The JSON payload of one request.

    ``strict=False`` accepts text for numbers and booleans (``id="3"``) and for lists
    (``moves="d7d6 d2d4"``), as typed on a command line.

    Raises:
        RequestError: an unknown command, a field the command does not take or of the wrong
            type, or a payload over the daemon's size limit.
    """
    schema = REQUESTS.get(command)
    if schema is None:
        raise RequestError(f"unknown command {command!r}; the commands are {', '.join(REQUESTS)}")
    given = {**fields, "transaction": transaction, "expires_at": expires_at}
    if not strict:
        # A list typed on a command line is one word: its items apart by spaces or commas.
        for field in msgspec.structs.fields(schema):
            value = given.get(field.name)
            if isinstance(value, str) and isinstance(
                msgspec.inspect.type_info(field.type), msgspec.inspect.ListType
            ):
                given[field.name] = value.replace(",", " ").split()
    try:
        request = msgspec.convert(given, schema, strict=strict)
    except msgspec.ValidationError as exc:
        raise RequestError(f"invalid {command} request: {exc}") from None
    payload = msgspec.json.encode(request)
    if len(payload) > MAX_REQUEST_BYTES:
        raise RequestError(f"request too large: {len(payload)} bytes, at most {MAX_REQUEST_BYTES}")
    return payload


def response_of(envelope: Envelope) -> Response | None:
    """The response in a ``response/{command}`` payload, or ``None`` if it is not one."""
    if envelope.type != "response":
        return None
    try:
        return msgspec.convert(envelope.data, Response)
    except msgspec.ValidationError:
        return None
