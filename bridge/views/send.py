"""``chessbridge send TABLE COMMAND [FIELD=VALUE ...]``: an arbiter's command from a shell.

The fields are checked against the command's schema first (the daemon's own; numbers may be
typed as text, an empty value is null), the request gets its ``transaction`` and ``expires_at``,
and the table's response is printed as JSON. Exit 0 when the table accepted the command, 1 when
it refused it or did not answer, 2 when the command cannot be sent (a bad field, TLS files that
cannot be used, credentials the broker refuses; a bad broker URL is the command line's).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
import time
from collections.abc import Sequence
from typing import Final, TextIO

import aiomqtt
import msgspec

from bridge.mqtt import session
from bridge.mqtt.requests import NoResponseError, Responses, new_transaction
from bridge.mqtt.session import check_tls, refused_credentials
from bridge.wire import payloads, requests
from bridge.wire.config import BrokerSettings

EXIT_REFUSED: Final = 1
EXIT_USAGE: Final = 2
_MQTT_LOGGER: Final = logging.getLogger("chessbridge.send.mqtt")
_MQTT_LOGGER.setLevel(logging.CRITICAL)


def parse_fields(items: Sequence[str]) -> dict[str, object]:
    """``["id=3", "reason=Black resigned", "running="]`` as fields (empty value: ``None``).

    Raises:
        ValueError: an item without ``=``, or a field given twice.
    """
    fields: dict[str, object] = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not name:
            raise ValueError(f"fields are FIELD=VALUE, e.g. id=3: got {item!r}")
        if name in fields:
            raise ValueError(f"field {name!r} given twice")
        fields[name] = value if value else None
    return fields


def _say(message: str) -> None:
    print(f"chessbridge send: {message}", file=sys.stderr, flush=True)


async def send(
    table: str,
    command: str,
    items: Sequence[str],
    *,
    broker: BrokerSettings,
    wait: float = 10.0,
    out: TextIO = sys.stdout,
) -> int:
    """Send one command to the table through ``broker`` and print its response; the exit
    code."""
    try:
        fields = parse_fields(items)
        payloads.topic(table, "")
        requests.build(
            command, fields, transaction="check", expires_at=time.time() + 60, strict=False
        )
        check_tls(broker)
    except ValueError as exc:  # RequestError is a ValueError
        _say(str(exc))
        return EXIT_USAGE
    count = len(broker.nodes)
    for index in range(count):
        node = broker.node(index)
        connected: list[bool] = []
        try:
            return await _send_through(table, command, fields, node, wait, out, connected)
        except aiomqtt.MqttError as exc:
            if refused_credentials(exc):
                _say(
                    f"MQTT broker {node.address} refused the login ({exc}): check [broker] "
                    "username/password in the config or CHESSBRIDGE_MQTT_USERNAME/PASSWORD"
                )
                return EXIT_USAGE
            if connected:  # the request may have gone out: never sent twice
                _say(f"lost the connection to MQTT broker {node.address} ({exc}) before the reply")
                return EXIT_REFUSED
            if index == count - 1:
                _say(f"cannot reach MQTT broker {node.address}: {exc}")
                return EXIT_REFUSED
            _say(f"cannot reach MQTT broker {node.address} ({exc}); trying the next node")
    return EXIT_REFUSED  # not reached: a broker has at least one node


async def _send_through(
    table: str,
    command: str,
    fields: dict[str, object],
    broker: BrokerSettings,
    wait: float,
    out: TextIO,
    connected: list[bool],
) -> int:
    """Send the command through one broker node (``connected`` gets ``True`` once connected).

    Raises:
        aiomqtt.MqttError: the node cannot be reached, refused the login, or was lost.
    """
    responses = Responses()
    try:
        async with session.client(broker, keepalive=30, logger=_MQTT_LOGGER) as client:
            connected.append(True)
            await client.subscribe(payloads.topic(table, f"response/{command}"), qos=1)
            reader = asyncio.create_task(_read(client, responses))
            try:
                response = await responses.send(
                    client,
                    table,
                    command,
                    fields,
                    transaction=new_transaction("send"),
                    within=wait,
                    strict=False,
                )
            finally:
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                    await reader
    except NoResponseError as exc:
        _say(str(exc))
        return EXIT_REFUSED
    out.write(json.dumps(msgspec.to_builtins(response), indent=2, ensure_ascii=False) + "\n")
    out.flush()
    if response.status != "ok":
        _say(f"table {table} refused {command}: {response.error}")
        return EXIT_REFUSED
    return 0


async def _read(client: aiomqtt.Client, responses: Responses) -> None:
    async for message in client.messages:
        raw = message.payload
        if isinstance(raw, bytes | bytearray):
            with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                responses.deliver(payloads.decode_envelope(bytes(raw)))
