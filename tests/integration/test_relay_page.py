"""The arbiters' page in a real headless Chromium, fed by a real table through Mosquitto."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import chess
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from bridge.demo.game import perform, press_side
from bridge.wire import payloads
from bridge.wire.config import Config, RelaySection
from drivers.choreography import Style
from drivers.dgt.emulator import DgtEmulator
from tests.browser import Browser, chromium
from tests.conftest import Mosquitto, Subscribe, Subscription
from tests.relay_harness import running_relay, running_table

pytestmark = [pytest.mark.mosquitto, pytest.mark.pty]

PASSWORD = "arbiters-of-the-open"


async def move(emu: DgtEmulator, board: chess.Board, san: str, rng: random.Random) -> None:
    chosen = board.parse_san(san)
    await perform(emu, board, chosen, rng.choice(list(Style)), rng, 4.0)
    mover = board.turn
    board.push(chosen)
    await asyncio.sleep(0.1)
    await emu.press(press_side(mover))


def open_alerts(sub: Subscription) -> list[list[str]]:
    """The open alerts' kinds in each retained ``game`` received, in order."""
    games = [json.loads(bytes(m.payload)) for m in sub.on("game") if m.payload]
    return [[a["kind"] for a in g["data"]["alerts"]] for g in games]


def card(table: str) -> str:
    return f'article[data-table="{table}"]'


async def sign_in(browser: Browser, name: str) -> None:
    def fill(driver: WebDriver) -> None:
        driver.find_element(By.ID, "signin-name").send_keys(name)
        driver.find_element(By.ID, "signin-password").send_keys(PASSWORD)
        driver.find_element(By.CSS_SELECTOR, "#signin button").click()

    await browser.until(lambda d: d.find_element(By.ID, "signin").is_displayed())
    await browser.call(fill)
    await browser.until(lambda d: name in d.find_element(By.ID, "me").text)


async def test_a_move_and_an_alert_appear_live_and_the_alert_is_acknowledged_from_the_page(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    rng = random.Random(3)
    config = Config(relay=RelaySection(password=PASSWORD))
    async with (
        running_table(mosquitto, table_id, tmp_path / "table", speed=4.0) as (emu, _),
        running_relay(mosquitto, tmp_path / "relay", config=config) as relay,
        mqtt_subscribe(mosquitto, payloads.topic(table_id, "game")) as games,
        chromium() as browser,
    ):
        await browser.get(f"{relay.url}/")
        await browser.until(lambda d: d.find_elements(By.CSS_SELECTOR, card(table_id)))
        await sign_in(browser, "Anna")

        emu.set_clock(600, 600, running="right")
        board = chess.Board()
        await move(emu, board, "e4", rng)
        last = f"{card(table_id)} .last-move"
        await browser.until(lambda d: d.find_element(By.CSS_SELECTOR, last).text == "1. e4")

        # Black lifts his knight, puts it back and moves a pawn: touch-move (4.3.1).
        await emu.lift("b8")
        await asyncio.sleep(0.4)
        await emu.place("b8", "n")
        await asyncio.sleep(0.4)
        await move(emu, board, "e5", rng)
        alert = f"{card(table_id)} .alert"
        shown = await browser.until(lambda d: d.find_element(By.CSS_SELECTOR, alert).text)
        assert "touch move" in shown
        assert "Art. 4.3" in shown
        classes = await browser.call(
            lambda d: d.find_element(By.CSS_SELECTOR, card(table_id)).get_attribute("class")
        )
        assert "has-alert" in (classes or "")
        await games.wait_for(lambda _: ["touch_move"] in open_alerts(games), within=10)

        await browser.call(lambda d: d.find_element(By.CSS_SELECTOR, card(table_id)).click())
        button = await browser.until(lambda d: d.find_element(By.CSS_SELECTOR, "#detail-open .ack"))
        await browser.call(lambda _: button.click())

        def closed_by_anna(driver: WebDriver) -> str | None:
            text: str = driver.find_element(By.ID, "detail-history").text
            return text if "by Anna" in text else None

        history = await browser.until(closed_by_anna)
        assert "touch move" in history
        # The table itself closed it: its retained game shows no open alert any more.
        await games.wait_for(lambda _: open_alerts(games)[-1] == [], within=10)
        await browser.until(
            lambda d: not d.find_elements(By.CSS_SELECTOR, f"{card(table_id)} .alert") or None
        )

        async with chromium() as viewer:
            await viewer.get(f"{relay.url}/#/table/{table_id}")
            moves = await viewer.until(lambda d: d.find_element(By.ID, "detail-moves").text)
            assert "1. e4" in moves
            assert "1... e5" in moves
            assert await viewer.css("#detail-open .ack") == []
            assert not await viewer.call(lambda d: d.find_element(By.ID, "actions").is_displayed())
            assert await viewer.call(lambda d: d.find_element(By.ID, "signin").is_displayed())
            status = await viewer.script(
                "const done = arguments[arguments.length - 1];"
                f"fetch('/api/table/{table_id}/ack_alert', {{method: 'POST',"
                " headers: {'Content-Type': 'application/json'}, body: '{\"id\": 1}'})"
                ".then(r => done(r.status));"
            )
            assert status == 401
