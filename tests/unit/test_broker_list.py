"""``--broker`` with a comma-separated list: the nodes of a clustered broker."""

from __future__ import annotations

import asyncio
import random

import aiomqtt
import pytest

from bridge.mqtt.session import Nodes, run_sessions
from bridge.wire.config import BrokerConfig, BrokerSettings, broker_settings
from drivers.backoff import Backoff

LIST = "mqtt://10.0.0.1:1883,mqtt://10.0.0.2:1883, mqtt://10.0.0.3"


def test_a_list_gives_every_node_with_the_same_credentials_and_tls() -> None:
    config = BrokerConfig(username="t042", password="SECRET", ca_file="ca.pem")
    settings = broker_settings(LIST.replace("mqtt://", "mqtts://"), config)
    assert settings.nodes == (("10.0.0.1", 1883), ("10.0.0.2", 1883), ("10.0.0.3", 8883))
    assert settings.address == "10.0.0.1:1883,10.0.0.2:1883,10.0.0.3:8883"
    third = settings.node(2)
    assert (third.host, third.port, third.tls) == ("10.0.0.3", 8883, True)
    assert (third.username, third.password, third.ca_file) == ("t042", "SECRET", "ca.pem")
    assert third.nodes == (("10.0.0.3", 8883),)
    assert "SECRET" not in repr(settings)


def test_one_url_is_as_before() -> None:
    settings = broker_settings("mqtt://h:1999")
    assert settings == BrokerSettings(host="h", port=1999)
    assert settings.nodes == (("h", 1999),)
    assert settings.node(1) == settings


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("mqtt://a,http://b", r"number 2 of the list: broker URL must start with mqtt://"),
        ("mqtt://a,,mqtt://c", r"number 2 of the list .* is empty"),
        ("mqtt://a,mqtt://b:99999", r"number 2 of the list: bad port"),
        ("mqtt://a:1883,mqtt://a", r"number 2 of the list names a:1883 again"),
        ("mqtt://a,mqtts://b", r"mix mqtt:// and mqtts://"),
        ("mqtt://a,", r"number 2 of the list .* is empty"),
    ],
)
def test_a_malformed_url_in_the_list_is_named(url: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        broker_settings(url)


def test_a_password_in_a_listed_url_is_never_repeated() -> None:
    for url in ("mqtt://a,mqtt://user:SECRET@b", "mqtt://user:SEC,RET@a", "mqtt://u:SEC,RET@a,"):
        with pytest.raises(ValueError, match="username/password") as refused:
            broker_settings(url)
        assert "SEC" not in str(refused.value)
        assert "RET" not in str(refused.value)


def test_nodes_go_round_in_turn() -> None:
    nodes = Nodes(broker_settings(LIST))
    seen = []
    for _ in range(4):
        seen.append(nodes.address)
        nodes.move_on()
    assert seen == ["10.0.0.1:1883", "10.0.0.2:1883", "10.0.0.3:1883", "10.0.0.1:1883"]
    assert nodes.several
    assert not Nodes(broker_settings("mqtt://h")).several


LOW = 0.001
"""The first delay in these tests: the waits are slept, briefly."""


async def failed_waits(url: str, failures: int, same: set[int] | None = None) -> list[float]:
    """The waits ``run_sessions`` gives for ``failures`` connections that fail in a row
    (``same``: the failures after which the client stays on its node, as for MQTT 5)."""
    waits: list[float] = []
    stop = asyncio.Event()

    async def session() -> None:
        raise aiomqtt.MqttError("no answer")

    def failed(exc: aiomqtt.MqttError, wait: float) -> None:
        waits.append(wait)
        if len(waits) == failures:
            stop.set()

    await run_sessions(
        session,
        backoff=Backoff(LOW, 30 * LOW, rng=random.Random(3)),
        failed=failed,
        stop=stop,
        nodes=Nodes(broker_settings(url)),
        stay=lambda exc: len(waits) in (same or set()),
    )
    return waits


def ceilings(waits: list[float]) -> list[float]:
    """The delay each wait was drawn under, in ``LOW``s (a wait is jittered in its upper
    half)."""
    found = []
    for wait in waits:
        ceiling = 1.0
        while wait > ceiling * LOW:
            ceiling *= 2
        assert ceiling / 2 * LOW <= wait <= ceiling * LOW
        found.append(ceiling)
    return found


async def test_the_wait_grows_once_per_pass_over_the_nodes() -> None:
    # Three nodes: each pass tries them all at one delay before it doubles.
    waits = await failed_waits(LIST, 9)
    assert ceilings(waits) == [1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 4.0, 4.0, 4.0]
    # One broker: it doubles after every failure, as before.
    waits = await failed_waits("mqtt://h", 4)
    assert ceilings(waits) == [1.0, 2.0, 4.0, 8.0]
    # Staying on a node (it refused MQTT 5, asked again in 3.1.1) does not make it grow.
    waits = await failed_waits("mqtt://h", 3, same={0})
    assert ceilings(waits) == [1.0, 1.0, 2.0]
