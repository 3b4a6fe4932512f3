"""The LiveChess API's messages, the web pages let in, and its settings."""

from __future__ import annotations

import json
import re

import msgspec
import pytest

from bridge.livechess import protocol
from bridge.livechess.origins import DEFAULT_ORIGINS, Origins
from bridge.livechess.protocol import CallError, Eboards, Flip, Setup, Subscribe, Unsubscribe
from bridge.wire import config as config_module
from bridge.wire.config import parse_listen


@pytest.mark.parametrize(
    ("text", "call"),
    [
        ('{"id": 1, "call": "eboards"}', Eboards(1)),
        ('{"id": 1, "call": "eboards", "param": null}', Eboards(1)),
        (
            '{"id": 2, "call": "subscribe", "param": {"feed": "eboardevent", "id": 1, '
            '"param": {"serialnr": "24958"}}}',
            Subscribe(2, 1, "24958"),
        ),
        (
            '{"id": 2, "call": "subscribe", "param": {"feed": "eboardevent", "id": "7", '
            '"param": {"serialnr": 24958}}}',
            Subscribe(2, 7, "24958"),
        ),
        ('{"id": 4, "call": "unsubscribe", "param": {"id": 1}}', Unsubscribe(4, 1)),
        (
            '{"id": 3, "call": "call", "param": {"id": 1, "method": "setup", '
            '"param": {"fen": "8/8/8/8/8/8/8/8 w - - 0 1"}}}',
            Setup(3, 1, "8/8/8/8/8/8/8/8 w - - 0 1"),
        ),
        (
            '{"id": 5, "call": "call", "param": {"id": 1, "method": "flip", '
            '"param": {"flip": true}}}',
            Flip(5, 1, True),
        ),
        ('{"id": 6.0, "call": "eboards"}', Eboards(6)),
    ],
)
def test_calls_as_clients_send_them(text: str, call: protocol.Call) -> None:
    assert protocol.parse(text) == call


@pytest.mark.parametrize(
    ("text", "call_id", "wanted"),
    [
        ("{", None, "not JSON"),
        ('"eboards"', None, "a call is a JSON object"),
        ('{"call": "eboards"}', None, "the call's id must be a number"),
        ('{"id": 1.5, "call": "eboards"}', None, "must be a number"),
        ('{"id": 2e20, "call": "eboards"}', None, "must be a number"),
        ('{"id": 1, "call": "sources"}', 1, "unknown call"),
        ('{"id": 1, "call": "subscribe", "param": {"feed": "other", "id": 1}}', 1, "unknown feed"),
        ('{"id": 1, "call": "subscribe", "param": []}', 1, "no 'feed'"),
        (
            '{"id": 1, "call": "subscribe", "param": {"feed": "eboardevent", "id": 1, '
            '"param": {"serialnr": null}}}',
            1,
            "serialnr must be text",
        ),
        ('{"id": 1, "call": "call", "param": {"id": 1, "method": "setup"}}', 1, "no 'param'"),
        (
            '{"id": 1, "call": "call", "param": {"id": 1, "method": "flip", '
            '"param": {"flip": "yes"}}}',
            1,
            "true or false",
        ),
    ],
)
def test_calls_that_cannot_be_carried_out(text: str, call_id: int | None, wanted: str) -> None:
    with pytest.raises(CallError, match=wanted) as raised:
        protocol.parse(text)
    assert raised.value.call_id == call_id


def test_every_message_has_response_id_param_and_time() -> None:
    assert json.loads(protocol.answer(3, None, 17)) == {
        "response": "call",
        "id": 3,
        "param": None,
        "time": 17,
    }
    assert json.loads(protocol.feed(1, {"san": []}, 17))["response"] == "feed"
    error = json.loads(protocol.error(None, "bad", 17))
    assert error == {"response": "error", "id": None, "param": {"message": "bad"}, "time": 17}


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),
        ("https://lichess.org", True),
        ("https://LICHESS.org:443", True),
        ("https://www.chess.com", True),
        ("https://chess.com", True),
        ("http://localhost:8080", True),
        ("http://127.0.0.1:5173", True),
        ("http://[::1]:3000", True),
        ("http://lichess.org", False),
        ("https://lichess.org:8443", False),
        ("https://lichess.org.example.com", False),
        ("https://evilchess.com", False),
        ("https://example.com", False),
        ("null", False),
        ("garbage", False),
    ],
)
def test_the_default_origins(origin: str | None, allowed: bool) -> None:
    assert Origins(DEFAULT_ORIGINS).allows(origin) is allowed


def test_configured_origins() -> None:
    origins = Origins(("https://broadcast.example:8443", "http://*.club.lan:*", "null"))
    assert origins.allows("https://broadcast.example:8443")
    assert not origins.allows("https://broadcast.example")
    assert origins.allows("http://board.club.lan:9000")
    assert not origins.allows("http://club.lan")
    assert origins.allows("null")
    assert not origins.allows("https://lichess.org")
    assert Origins(("*",)).allows("https://anything.example")


@pytest.mark.parametrize(
    "pattern", ["lichess.org", "ftp://x", "https://*", "https://a/b", "https://a:x"]
)
def test_an_origin_pattern_that_is_not_one_is_refused(pattern: str) -> None:
    with pytest.raises(ValueError, match="is not scheme://host"):
        Origins((pattern,))


def test_listen_addresses() -> None:
    assert parse_listen("1982") == ("127.0.0.1", 1982)
    assert parse_listen("0.0.0.0:1982") == ("0.0.0.0", 1982)
    assert parse_listen("[::1]:1982") == ("::1", 1982)
    for bad in ("::1", "host:", ":1982", "1982x", "70000"):
        with pytest.raises(ValueError, match=r"\[HOST:\]PORT"):
            parse_listen(bad)


@pytest.mark.parametrize(
    ("toml", "wanted"),
    [
        ('[livechess]\nlisten = "anywhere"\n', "livechess.listen"),
        ('[livechess]\norigins = ["lichess.org"]\n', "livechess.origins"),
        ("[livechess]\nsetup = 1\n", "livechess.setup"),
        ("[livechess]\nport = 1982\n", "unknown field"),
    ],
)
def test_bad_livechess_settings_are_refused_with_their_name(toml: str, wanted: str) -> None:
    with pytest.raises(config_module.ConfigError, match=re.escape(wanted)):
        config_module.decode(toml.encode())


def test_livechess_settings() -> None:
    toml = (
        '[livechess]\nlisten = "0.0.0.0:1982"\norigins = ["https://lichess.org"]\nsetup = false\n'
    )
    section = config_module.decode(toml.encode()).livechess
    assert section == config_module.LiveChessSection(
        listen="0.0.0.0:1982", origins=("https://lichess.org",), setup=False
    )
    assert msgspec.structs.asdict(config_module.Config().livechess) == {
        "listen": None,
        "origins": None,
        "setup": None,
    }
