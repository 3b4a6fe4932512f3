"""One way to reach the broker, for the publisher and the views.

:func:`client` turns :class:`~bridge.wire.config.BrokerSettings` (the broker's address,
credentials and TLS files) into aiomqtt clients, :func:`check_tls` loads its TLS files at start;
:func:`run_sessions` runs a connection again and again with :class:`~drivers.backoff.Backoff`
until asked to stop, moving on to the next node of a clustered broker (:class:`Nodes`) after
each failure; :func:`refused_credentials` tells a refused login from an outage, and
:func:`subscribe` a subscription the ACL refuses from one a node cannot serve now.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

import aiomqtt
from paho.mqtt.reasoncodes import ReasonCode

from bridge.wire.config import BrokerSettings
from drivers.backoff import Backoff

REFUSED_CREDENTIALS: Final = frozenset({4, 5, 134, 135})
"""CONNACK codes for bad username/password and not authorised (MQTT 3.1.1 and 5)."""

REFUSED_PROTOCOL: Final = frozenset({1, 132})
"""CONNACK codes for an unacceptable / unsupported protocol version (MQTT 3.1.1 and 5)."""


def client(
    settings: BrokerSettings,
    *,
    identifier: str | None = None,
    will: aiomqtt.Will | None = None,
    keepalive: int = 30,
    logger: logging.Logger | None = None,
    mqtt5: bool = False,
) -> aiomqtt.Client:
    """A new client of the broker of ``settings``, for one connection (aiomqtt clients are
    reusable, not reentrant).

    With ``mqtt5``, the connection speaks MQTT 5 (a clean start, no session kept), else 3.1.1
    with a clean session. ``identifier`` defaults to ``settings.client_id``.
    """
    tls = None
    if settings.tls:
        tls = aiomqtt.TLSParameters(
            ca_certs=settings.ca_file, certfile=settings.cert_file, keyfile=settings.key_file
        )
    return aiomqtt.Client(
        settings.host,
        settings.port,
        identifier=settings.client_id if identifier is None else identifier,
        username=settings.username,
        password=settings.password,
        will=will,
        protocol=aiomqtt.ProtocolVersion.V5 if mqtt5 else aiomqtt.ProtocolVersion.V311,
        clean_session=None if mqtt5 else True,
        keepalive=keepalive,
        tls_params=tls,
        logger=logger,
    )


def check_tls(settings: BrokerSettings) -> None:
    """Load the TLS files of an ``mqtts://`` broker now (:func:`check_tls_files`).

    Raises:
        ValueError: a file cannot be read, is not PEM of its kind, or the key does not match.
    """
    if settings.tls:
        check_tls_files(settings.ca_file, settings.cert_file, settings.key_file)


def check_tls_files(
    ca_file: str | Path | None, cert_file: str | Path | None, key_file: str | Path | None
) -> None:
    """Load the TLS files now, so that a missing or wrong one is said at start, in one line,
    not retried as a network error on every connection attempt.

    Raises:
        ValueError: a file cannot be read, is not PEM of its kind, or the key does not match.
    """
    if key_file is not None and cert_file is None:
        raise ValueError("broker key_file given without cert_file; set both or neither")
    where, path = "ca_file", ca_file
    try:
        context = ssl.create_default_context(cafile=None if ca_file is None else str(ca_file))
        if cert_file is not None:
            where, path = "cert_file", cert_file
            # A passphrase-protected key is not supported: fail rather than prompt on a tty.
            context.load_cert_chain(
                str(cert_file), None if key_file is None else str(key_file), password=""
            )
    except (OSError, ssl.SSLError) as exc:
        reason = str(exc)
        if not isinstance(exc, ssl.SSLError) and exc.errno:
            reason = os.strerror(exc.errno).lower()
        raise ValueError(
            f"broker {where} {str(path)!r} cannot be used: {reason}; check the path and that it "
            "is PEM (a CA certificate; a certificate with its unencrypted key)"
        ) from exc


def refused_protocol(exc: aiomqtt.MqttError) -> bool:
    """Whether the broker refused the protocol version (an MQTT 3.1.1-only broker)."""
    if not isinstance(exc, aiomqtt.MqttCodeError):
        return False
    return reason_code(exc.rc) in REFUSED_PROTOCOL


def refused_credentials(exc: aiomqtt.MqttError) -> bool:
    """Whether the broker refused the login (bad username/password, not authorised)."""
    if not isinstance(exc, aiomqtt.MqttCodeError):
        return False
    return reason_code(exc.rc) in REFUSED_CREDENTIALS


class SubscriptionRefusedError(Exception):
    """The broker refused a subscription it never granted before: its ACL, nothing to retry."""


async def subscribe(client: aiomqtt.Client, topics: str, *, granted_before: bool) -> None:
    """Subscribe ``client`` to ``topics`` at QoS 1.

    Raises:
        SubscriptionRefusedError: refused, and never granted before: the broker's ACL (the
            message reads ``refused the subscription to TOPICS``).
        aiomqtt.MqttError: refused though granted before: not the ACL but a node of a cluster
            that cannot serve it now (NATS while its JetStream elects a leader), retried as an
            outage is.
    """
    granted = await client.subscribe(topics, qos=1)
    if any((reason_code(code) or 0) >= 0x80 for code in granted):
        if granted_before:
            raise aiomqtt.MqttError(f"the subscription to {topics} was refused")
        raise SubscriptionRefusedError(f"refused the subscription to {topics}")


def reason_code(rc: int | ReasonCode | None) -> int | None:
    """The number of an MQTT reason code, whichever form paho gives it in."""
    return rc.value if isinstance(rc, ReasonCode) else rc


class Nodes:
    """Which node of a broker (one, or the nodes of a cluster: ``BrokerSettings.nodes``) the
    next connection goes to: the first at start, then, after each failure, the next in turn."""

    def __init__(self, settings: BrokerSettings) -> None:
        self._settings = settings
        self._count = len(settings.nodes)
        self._index = 0

    @property
    def current(self) -> BrokerSettings:
        """The settings of the node to connect to (that node alone)."""
        return self._settings.node(self._index)

    @property
    def address(self) -> str:
        """``host:port`` of the current node."""
        return self.current.address

    @property
    def several(self) -> bool:
        """Whether there is another node to move on to."""
        return self._count > 1

    @property
    def last(self) -> bool:
        """Whether the current node is the last of the list (the only one, with one broker):
        moving on from it starts another pass over the list."""
        return self._index == self._count - 1

    def move_on(self) -> None:
        """The next node in turn (the first again after the last)."""
        self._index = (self._index + 1) % self._count


async def run_sessions(
    session: Callable[[], Awaitable[None]],
    *,
    backoff: Backoff,
    failed: Callable[[aiomqtt.MqttError, float], None],
    stop: asyncio.Event,
    nodes: Nodes | None = None,
    stay: Callable[[aiomqtt.MqttError], bool] | None = None,
) -> None:
    """Run ``session`` until ``stop`` is set, waiting ``backoff`` after each ``MqttError``.

    ``session`` makes one connection (to ``nodes.current``, if given) and returns when ``stop``
    is set (or raises); it calls ``backoff.reset()`` once connected. ``failed(exc, wait)``
    reports each failure, and may raise to give up (a refused login, say). After a failure the
    next connection goes to the next of ``nodes``, unless ``stay(exc)`` (asked before
    ``failed``) says to try the same node again (it refused MQTT 5: not a dead node).

    With several nodes the wait grows once per pass over the list, after its last node, not
    after each node: a node lost (or, on NATS, refusing subscriptions while its streams elect
    new leaders) is left for the next one after the short first wait, and the backoff still
    spaces out the passes when no node answers. With one broker it grows after every failure.
    """
    while not stop.is_set():
        try:
            await session()
        except aiomqtt.MqttError as exc:
            if stop.is_set():
                break
            same = stay is not None and stay(exc)
            wait = backoff.next(grow=nodes is None or (nodes.last and not same))
            failed(exc, wait)
            if nodes is not None and not same:
                nodes.move_on()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), wait)
