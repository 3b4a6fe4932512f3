"""Sending an arbiter's request and waiting for the table's response, by ``transaction``.

Used by ``chessbridge send`` and by the relay, which holds the arbiters' MQTT credentials and
acts for the page. The caller's connection must already be subscribed to the table's
``response/{command}`` topic (the relay is subscribed to everything of every table) and hands
each response payload to :meth:`Responses.deliver`.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Mapping

import aiomqtt

from bridge.wire import payloads, requests
from bridge.wire.commands import Response
from bridge.wire.payloads import Envelope


class NoResponseError(Exception):
    """The table did not answer in time (its daemon is down, or the broker dropped it)."""


def new_transaction(prefix: str) -> str:
    """A transaction id no other request will have."""
    return f"{prefix}-{secrets.token_hex(6)}"


class Responses:
    """Requests waiting for their response."""

    def __init__(self) -> None:
        self._waiting: dict[str, asyncio.Future[Response]] = {}

    def deliver(self, envelope: Envelope) -> bool:
        """Hand over a ``response`` payload; whether a request was waiting for it."""
        response = requests.response_of(envelope)
        if response is None or response.transaction is None:
            return False
        future = self._waiting.get(response.transaction)
        if future is None or future.done():
            return False
        future.set_result(response)
        return True

    async def send(
        self,
        client: aiomqtt.Client,
        table: str,
        command: str,
        fields: Mapping[str, object],
        *,
        transaction: str,
        within: float = 10.0,
        strict: bool = True,
    ) -> Response:
        """Publish the request and wait for its response.

        Raises:
            RequestError: the request is not valid (nothing was sent).
            ValueError: the table id cannot be a topic level.
            NoResponseError: no response within ``within`` seconds.
            aiomqtt.MqttError: the connection failed.
        """
        payload = requests.build(
            command,
            fields,
            transaction=transaction,
            expires_at=time.time() + requests.EXPIRY,
            strict=strict,
        )
        topic = payloads.topic(table, f"{payloads.REQUEST_PREFIX}/{command}")
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._waiting[transaction] = future
        try:
            await client.publish(topic, payload, qos=1, retain=False)
            return await asyncio.wait_for(future, within)
        except TimeoutError:
            raise NoResponseError(
                f"no response from table {table} within {within:g} s: "
                "is its daemon running and connected to this broker?"
            ) from None
        finally:
            self._waiting.pop(transaction, None)
