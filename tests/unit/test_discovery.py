"""The optional retained descriptions: the index entry and Home Assistant discovery (pure)."""

from __future__ import annotations

import json
import re

import pytest

from bridge.wire import discovery, payloads


def test_the_index_entry_says_where_the_tables_topics_are() -> None:
    raw = discovery.index_entry(
        "t042", driver="dgt", rules="fide-2018", version="0.1.0", ts=0.0, home_assistant=True
    )
    assert discovery.index_topic("t042") == "chessbridge/1/index/t042"
    assert json.loads(raw) == {
        "v": 1,
        "type": "index",
        "table": "t042",
        "ts": "1970-01-01T00:00:00.000Z",
        "data": {
            "topics": "chessbridge/1/table/t042/",
            "driver": "dgt",
            "rules": "fide-2018",
            "version": "0.1.0",
            "home_assistant": "chessbridge_t042",
        },
    }


def test_an_unusable_table_id_has_no_index_topic() -> None:
    with pytest.raises(ValueError, match="invalid table id"):
        discovery.index_topic("t/42")


def test_home_assistant_gets_one_device_with_six_sensors_on_the_tables_own_topics() -> None:
    config = json.loads(discovery.home_assistant_config("t042", driver="dgt", version="0.1.0"))
    assert discovery.home_assistant_topic("t042") == "homeassistant/device/chessbridge/t042/config"
    assert discovery.home_assistant_topic("t.42", "ha") == "ha/device/chessbridge/t_42/config"
    assert config["device"]["identifiers"] == ["chessbridge_t042"]
    assert config["availability"][0]["topic"] == "chessbridge/1/table/t042/status"
    components = config["components"]
    assert set(components) == {
        "board", "last_move", "white_clock", "black_clock", "alerts", "result",
    }  # fmt: skip
    unique = {c["unique_id"] for c in components.values()}
    assert len(unique) == 6
    for component in components.values():
        assert component["p"] == "sensor"
        assert component["state_topic"].startswith("chessbridge/1/table/t042/")


def _fields(template: str) -> set[str]:
    return set(re.findall(r"value_json\.data\.(\w+)", template))


def test_every_field_a_template_reads_is_in_the_payload_it_reads() -> None:
    """The templates name fields of the retained ``board`` and ``game`` data: they must exist."""
    config = json.loads(discovery.home_assistant_config("t042", driver="dgt", version="0"))
    known = {
        "chessbridge/1/table/t042/board": set(payloads.BoardData.__struct_fields__),
        "chessbridge/1/table/t042/game": set(payloads.GameData.__struct_fields__),
    }
    for component in config["components"].values():
        fields = _fields(
            component["value_template"] + component.get("json_attributes_template", "")
        )
        assert fields, component
        assert fields <= known[component["state_topic"]], component
    assert {"white", "black"} <= set(payloads.Clocks.__struct_fields__)
    assert "san" in payloads.MoveRecord.__struct_fields__
