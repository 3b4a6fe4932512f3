"""Optional retained descriptions a table publishes so dashboards find it without configuration.

Both are off by default (``[discovery]`` in the config) and stay out of the hot path: they are
built once when the daemon starts and republished by the publisher on every connection, never
stored in the outbox and never given a ``seq`` (they describe the table; they are not events).

* **The index of tables**: ``chessbridge/1/index/{table}`` (retained) says that the table exists
  and where its topics are. A dashboard subscribes to ``chessbridge/1/index/+`` and lists every
  table. The payload carries ``v``, ``type`` (``"index"``), ``table``, ``ts`` and ``data`` like
  the envelope, but no ``game``/``epoch``/``seq``: it is republished as is, never deduplicated.
* **Home Assistant MQTT discovery**: one device-based discovery message,
  ``homeassistant/device/chessbridge/{table}/config`` (retained; ``chessbridge`` is Home
  Assistant's *node id*, the table its *object id*, a whole topic level so that a broker ACL can
  grant it with ``%u``), with the table's sensors: the
  board link, the last move, both clocks, the open alerts and the result. The sensors read the
  table's own retained ``status``, ``board`` and ``game`` topics through value templates, so
  nothing more is published while the game goes on.
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

from bridge.wire import payloads

HA_PREFIX: Final = "homeassistant"
"""Home Assistant's default discovery prefix."""

_ID_UNSAFE: Final = re.compile(r"[^a-zA-Z0-9_-]")


class IndexData(msgspec.Struct, frozen=True, kw_only=True):
    """``index/{table}``: where the table's topics are and what runs it."""

    topics: str
    """The table's topic prefix, ending in ``/``."""
    driver: str
    """The board family (the board URI's scheme)."""
    rules: str
    version: str
    """The daemon's version."""
    home_assistant: str | None
    """The Home Assistant device id, when discovery is on."""


class _Index(msgspec.Struct, frozen=True, kw_only=True):
    v: int
    type: str
    table: str
    ts: str
    data: IndexData


def index_topic(table: str) -> str:
    """``chessbridge/1/index/{table}``."""
    payloads.topic(table, "")  # the same table ids as the table's own topics
    return f"{payloads.TOPIC_ROOT}/index/{table}"


def index_entry(
    table: str, *, driver: str, rules: str, version: str, ts: float, home_assistant: bool
) -> bytes:
    """The retained index entry of ``table``."""
    data = IndexData(
        topics=payloads.topic(table, ""),
        driver=driver,
        rules=rules,
        version=version,
        home_assistant=device_id(table) if home_assistant else None,
    )
    entry = _Index(
        v=payloads.SCHEMA_VERSION, type="index", table=table, ts=payloads.format_ts(ts), data=data
    )
    return msgspec.json.encode(entry)


def device_id(table: str) -> str:
    """The Home Assistant device id of ``table`` (letters, digits, ``_`` and ``-`` only)."""
    return "chessbridge_" + _ID_UNSAFE.sub("_", table)


def home_assistant_topic(table: str, prefix: str = HA_PREFIX) -> str:
    """``{prefix}/device/chessbridge/{table}/config`` (characters Home Assistant does not take in
    an object id become ``_``)."""
    return f"{prefix}/device/chessbridge/{_ID_UNSAFE.sub('_', table)}/config"


def home_assistant_config(table: str, *, driver: str, version: str) -> bytes:
    """The device-based discovery message of ``table``: one device, six sensors."""
    device = device_id(table)
    base = payloads.topic(table, "")
    game = base + payloads.GAME
    data = "value_json.data"

    def sensor(key: str, name: str, topic: str, value: str, **extra: object) -> dict[str, object]:
        return {
            "p": "sensor",
            "name": name,
            "unique_id": f"{device}_{key}",
            "state_topic": topic,
            "value_template": value,
            **extra,
        }

    clock = {"unit_of_measurement": "s", "device_class": "duration"}
    components = {
        "board": sensor(
            "board",
            "Board link",
            base + payloads.BOARD,
            f"{{{{ {data}.state }}}}",
            json_attributes_topic=base + payloads.BOARD,
            json_attributes_template=f"{{{{ {data} | tojson }}}}",
        ),
        "last_move": sensor(
            "last_move",
            "Last move",
            game,
            f"{{{{ {data}.moves.san[-1] if {data}.moves.san else '' }}}}",
        ),
        "white_clock": sensor(
            "white_clock",
            "White's clock",
            game,
            f"{{{{ {data}.clocks.white if {data}.clocks else None }}}}",
            **clock,
        ),
        "black_clock": sensor(
            "black_clock",
            "Black's clock",
            game,
            f"{{{{ {data}.clocks.black if {data}.clocks else None }}}}",
            **clock,
        ),
        "alerts": sensor(
            "alerts",
            "Open alerts",
            game,
            f"{{{{ {data}.alerts | count }}}}",
            json_attributes_topic=game,
            json_attributes_template=f"{{{{ {{'alerts': {data}.alerts}} | tojson }}}}",
        ),
        "result": sensor("result", "Result", game, f"{{{{ {data}.result or 'in progress' }}}}"),
    }
    config = {
        "device": {
            "identifiers": [device],
            "name": f"Chess table {table}",
            "manufacturer": "chessbridge",
            "model": f"{driver} board",
            "sw_version": version,
        },
        "origin": {"name": "chessbridge", "sw_version": version},
        "availability": [
            {
                "topic": base + payloads.STATUS,
                "value_template": "{{ 'online' if value_json.state == 'online' else 'offline' }}",
            }
        ],
        "components": components,
        "qos": 1,
    }
    return msgspec.json.encode(config)
