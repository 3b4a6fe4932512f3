"""Pushing the round to lichess, against a local server answering as the push endpoint does."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiomqtt
import pytest
from selenium.webdriver.common.by import By

from bridge.relay.run import StartError, lichess_settings, run_relay
from bridge.wire import payloads
from bridge.wire.config import Config, LichessSection, RelaySection
from tests.browser import chromium
from tests.conftest import Mosquitto, MosquittoFactory
from tests.lichess_fake import FakeLichess
from tests.pgn_check import read_games, sans
from tests.relay_feed import Item, TableFeed
from tests.relay_harness import Relay, eventually, running_relay

pytestmark = [pytest.mark.mosquitto]

TOKEN = "lip_secret_token_42"
ROUND = "AbCd1234"


@pytest.fixture
async def lichess() -> AsyncIterator[FakeLichess]:
    server = FakeLichess(token=TOKEN, round_id=ROUND)
    await server.start()
    yield server
    await server.stop()


def config(url: str, **relay: object) -> Config:
    section = LichessSection(round_id=ROUND, url=url, debounce=0.1)
    return Config(relay=RelaySection(lichess=section, **relay))  # type: ignore[arg-type]


async def publish(broker: Mosquitto, feed: TableFeed, *items: Item) -> None:
    async with aiomqtt.Client(broker.host, broker.port) as client:
        for suffix, envelope in items:
            await client.publish(
                payloads.topic(feed.table, suffix),
                feed.raw[envelope.seq],
                qos=1,
                retain=suffix in ("status", "board", "game"),
            )


def feeds(count: int, prefix: str = "t") -> list[TableFeed]:
    out = []
    for number in range(1, count + 1):
        feed = TableFeed(f"{prefix}{number}", f"{prefix}{number}-20260501T140000Z")
        feed.assign(white=f"White {number}", black=f"Black {number}", round="1", board=number)
        out.append(feed)
    return out


async def test_every_change_is_pushed_and_rate_limits_are_waited_out(
    mosquitto_private: Mosquitto,
    lichess: FakeLichess,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    one, two = feeds(2)
    lichess.rate_limit = 2  # the first two pushes get 429, Retry-After: 1
    env = {"CHESSBRIDGE_LICHESS_TOKEN": TOKEN}
    async with running_relay(
        mosquitto_private, tmp_path / "relay", config=config(lichess.url), env=env
    ) as relay:
        await publish(mosquitto_private, one, one.snapshot(), *one.play("e4 e5"))
        await publish(mosquitto_private, two, two.snapshot(), *two.play("d4"))

        async def pushed(count: int) -> list[list[str]] | None:
            if not lichess.pushes:
                return None
            games = read_games(lichess.pushes[-1])
            moves = [sans(game) for game in games]
            return moves if sum(len(m) for m in moves) >= count else None

        assert await eventually(lambda: pushed(3)) == [["e4", "e5"], ["d4"]]
        assert lichess.statuses[:2] == [429, 429]
        await publish(mosquitto_private, two, *two.play("d5"))
        assert await eventually(lambda: pushed(4)) == [["e4", "e5"], ["d4", "d5"]]
        state = await relay.text("/api/state")
        assert "pushed 2 games" in state
        assert TOKEN not in state
    assert set(lichess.authorizations) == {f"Bearer {TOKEN}"}
    assert not any(TOKEN in record.getMessage() for record in caplog.records)
    assert any("HTTP 429" in record.getMessage() for record in caplog.records)


async def test_server_errors_back_off_and_refused_games_are_shown_on_the_page(
    mosquitto_private: Mosquitto,
    lichess: FakeLichess,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="chessbridge.relay.push")
    one, two = feeds(2)
    lichess.fail = 1
    lichess.refuse_white = {"White 2"}
    env = {"CHESSBRIDGE_LICHESS_TOKEN": TOKEN}
    async with running_relay(
        mosquitto_private, tmp_path / "relay", config=config(lichess.url), env=env
    ) as relay:
        await publish(mosquitto_private, one, one.snapshot(), *one.play("e4"))
        await publish(mosquitto_private, two, two.snapshot(), *two.play("c4"))

        async def refused() -> dict[str, Any] | None:
            async with relay.http.get("/api/state") as response:
                state = await response.json()
            by_table = {t["table"]: t for t in state["tables"]}
            t2 = by_table.get("t2")
            return state if t2 is not None and t2["pushError"] == "No move found" else None

        state = await eventually(refused)
        assert {t["table"]: t["pushError"] for t in state["tables"]} == {
            "t1": None,
            "t2": "No move found",
        }
        assert lichess.statuses[0] == 503
        assert state["push"] == "pushed 2 games, 1 refused"

        # The arbiters' page shows it on the table's card, in a real Chromium.
        async with chromium() as browser:
            await browser.get(f"{relay.url}/")
            error = 'article[data-table="t2"] .push-error'
            shown = await browser.until(lambda d: d.find_element(By.CSS_SELECTOR, error).text)
            assert shown == "lichess: No move found"
            assert await browser.css('article[data-table="t1"] .push-error') == []

        # More moves, more pushes, the same refusal: logged once.
        await publish(mosquitto_private, two, *two.play("e5 Nc3"))
        await eventually(lambda: _has_moves(lichess, "t2", 3))
        await publish(mosquitto_private, one, *one.play("e5"))
        await eventually(lambda: _has_moves(lichess, "t1", 2))
    refusals = [
        record
        for record in caplog.records
        if record.getMessage() == "lichess refused the game of table t2: No move found"
    ]
    assert len(refusals) == 1
    assert refusals[0].levelno == logging.WARNING
    assert len(lichess.pushes) >= 3
    assert not any("table t1" in record.getMessage() for record in caplog.records)


async def _has_moves(lichess: FakeLichess, table: str, count: int) -> bool:
    """Whether the last push lichess accepted has ``count`` moves in ``table``'s game."""
    if not lichess.pushes:
        return False
    games = read_games(lichess.pushes[-1])
    return any(g.headers.get("Table") == table and len(sans(g)) >= count for g in games)


@pytest.mark.allow_error_log
async def test_a_round_that_grows_past_64_games_while_running_stops_pushing_and_says_so(
    mosquitto_factory: MosquittoFactory,
    lichess: FakeLichess,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="chessbridge.relay.push")
    broker = mosquitto_factory()
    tables = feeds(66)
    env = {"CHESSBRIDGE_LICHESS_TOKEN": TOKEN}
    async with running_relay(
        broker, tmp_path / "relay", config=config(lichess.url), env=env
    ) as relay:
        async with aiomqtt.Client(broker.host, broker.port) as client:
            for feed in tables[:64]:
                _, envelope = feed.snapshot()
                topic = payloads.topic(feed.table, "game")
                await client.publish(topic, feed.raw[envelope.seq], qos=1, retain=True)

        async def pushed_all() -> bool:
            return bool(lichess.pushes) and len(read_games(lichess.pushes[-1])) == 64

        await eventually(pushed_all)  # 64 games: a full round is pushed
        accepted = len(lichess.pushes)
        await publish(broker, tables[64], tables[64].snapshot())  # a 65th table starts a game

        async def refused() -> str | None:
            async with relay.http.get("/api/state") as response:
                push = (await response.json())["push"]
            return push if "65 games" in push else None

        assert await eventually(refused) == "not pushed: 65 games, more than 64"
        await publish(broker, tables[65], tables[65].snapshot())  # and a 66th
        assert await eventually(lambda: _state_push(relay)) == "not pushed: 66 games, more than 64"
        assert len(lichess.pushes) == accepted  # nothing more was sent
    said = [
        r for r in caplog.records if "a lichess broadcast round holds at most 64" in r.getMessage()
    ]
    assert [r.levelno for r in said] == [logging.ERROR, logging.ERROR]  # once for each count
    assert "the round has 65 games" in said[0].getMessage()
    assert "[relay] round" in said[0].getMessage()


async def _state_push(relay: Relay) -> str | None:
    async with relay.http.get("/api/state") as response:
        push: str = (await response.json())["push"]
    return push if "66 games" in push else None


@pytest.mark.allow_error_log
async def test_more_games_than_a_round_holds_is_refused_at_start(
    mosquitto_factory: MosquittoFactory,
    lichess: FakeLichess,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import asyncio

    broker = mosquitto_factory()
    tables = feeds(65)
    async with aiomqtt.Client(broker.host, broker.port) as client:
        for feed in tables:
            _, envelope = feed.snapshot()
            topic = payloads.topic(feed.table, "game")
            await client.publish(topic, feed.raw[envelope.seq], qos=1, retain=True)
    code = await asyncio.wait_for(
        run_relay(
            broker=broker.url,
            http="127.0.0.1:0",
            config=config(lichess.url),
            state_dir=tmp_path / "relay",
            stop=asyncio.Event(),
            env={"CHESSBRIDGE_LICHESS_TOKEN": TOKEN},
        ),
        60,
    )
    assert code == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if "65 games" in line]
    assert len(lines) == 1
    assert "at most 64" in lines[0]
    assert "[relay] round" in lines[0]
    assert lichess.pushes == []


def test_the_token_comes_from_the_environment_or_its_file(tmp_path: Path) -> None:
    section = LichessSection(round_id=ROUND, token_file=str(tmp_path / "token"))
    settings = Config(relay=RelaySection(lichess=section))
    with pytest.raises(StartError, match="cannot read the lichess token file"):
        lichess_settings(settings, {})
    (tmp_path / "token").write_text(" from-file \n")
    found = lichess_settings(settings, {})
    assert found is not None
    assert found.token == "from-file"
    assert TOKEN not in repr(lichess_settings(settings, {"CHESSBRIDGE_LICHESS_TOKEN": TOKEN}))
    bare = Config(relay=RelaySection(lichess=LichessSection(round_id=ROUND)))
    with pytest.raises(StartError, match="there is no token"):
        lichess_settings(bare, {})
