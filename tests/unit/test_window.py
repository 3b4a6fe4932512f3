"""The send window's parts that need no broker: the topic alias property packed once."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from paho.mqtt.exception import MQTTException
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from bridge.mqtt.window import PackedAlias, TopicAliases


def paho_alias(alias: int) -> Properties:
    properties = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
    properties.TopicAlias = alias
    return properties


@given(st.integers(min_value=1, max_value=65535))
def test_a_packed_alias_writes_the_bytes_paho_writes(alias: int) -> None:
    packed = PackedAlias(alias)
    assert packed.pack() == paho_alias(alias).pack()  # type: ignore[no-untyped-call]
    assert packed.pack() == packed.pack()
    assert packed.TopicAlias == alias
    assert packed.packetType == PacketTypes.PUBLISH


@pytest.mark.parametrize("alias", [0, 65536])
def test_an_alias_out_of_range_is_refused_as_paho_refuses_it(alias: int) -> None:
    with pytest.raises(MQTTException):
        paho_alias(alias)
    with pytest.raises(MQTTException):
        PackedAlias(alias)


def test_the_second_send_of_a_topic_names_its_alias_and_the_third_sends_it_alone() -> None:
    aliases = TopicAliases(maximum=2)
    assert aliases.publish_args("a") == ("a", None)
    topic, properties = aliases.publish_args("a")
    assert topic == "a"
    assert properties is not None
    assert properties.pack() == paho_alias(1).pack()  # type: ignore[no-untyped-call]
    assert aliases.publish_args("a") == ("", properties)
