"""The relay's settings: the example file decodes and documents every one; bad values refused."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from bridge.relay.run import StartError, parse_http
from bridge.wire import config as config_module

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "relay.example.toml"


def test_the_relay_example_decodes_and_documents_every_setting() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    config = config_module.decode(text.encode(), str(EXAMPLE))
    assert config.relay.lichess is not None
    assert config.relay.lichess.round_id == "AbCd1234"
    assert config.broker.username == "relay"
    sections: dict[str, type[msgspec.Struct]] = {
        "relay": config_module.RelaySection,
        "relay.lichess": config_module.LichessSection,
    }
    for section, struct in sections.items():
        body = text.split(f"\n[{section}]\n", 1)[1].split("\n[", 1)[0]
        for name in struct.__struct_fields__:
            if name == "lichess":
                continue  # its own section
            assert re.search(rf"^#?{name} = ", body, re.MULTILINE), f"[{section}] {name}"


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[relay]\ndelay = 500\n", "relay.delay"),
        ('[relay.lichess]\nround_id = "short"\n', "round_id must be the 8"),
        ('[relay.lichess]\nround_id = "AbCd1234"\nurl = "ftp://x"\n', "https://"),
        ("[relay]\nunknown = 1\n", "unknown"),
    ],
)
def test_bad_relay_settings_are_refused_with_their_name(toml: str, message: str) -> None:
    with pytest.raises(config_module.ConfigError, match=message):
        config_module.decode(toml.encode())


def test_the_arbiters_password_may_come_from_the_environment() -> None:
    env = {config_module.ENV_RELAY_PASSWORD: "from-env"}
    assert config_module.with_environment(config_module.Config(), env).relay.password == "from-env"


def test_http_addresses() -> None:
    assert parse_http("0.0.0.0:8080") == ("0.0.0.0", 8080)
    assert parse_http("[::1]:80") == ("::1", 80)
    for bad in ("8080", "host:", "host:99999", ":80"):
        with pytest.raises(StartError, match="HOST:PORT"):
            parse_http(bad)
