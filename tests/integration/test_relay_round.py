"""A round started from the arbiters' page, in a real headless Chromium: the pairings file
uploaded (or a CSV pasted), the preview, the start sent by the relay to real table daemons on a
real Mosquitto (most of the round's tables offline), and the room view showing the players."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from bridge.wire.config import Config, RelaySection
from tests.browser import chromium
from tests.conftest import Mosquitto
from tests.integration.test_relay_page import PASSWORD, card, sign_in
from tests.relay_harness import running_relay, running_table
from tests.trf import thirty_boards, trf

pytestmark = [pytest.mark.mosquitto, pytest.mark.pty]


def rows_when(
    check: Callable[[dict[str, str]], bool],
) -> Callable[[WebDriver], dict[str, str] | None]:
    """A poll for the round table's rows once ``check`` holds of them."""

    def poll(driver: WebDriver) -> dict[str, str] | None:
        found = rows(driver)
        return found if check(found) else None

    return poll


def rows(driver: WebDriver) -> dict[str, str]:
    """The round table's rows by board: their text."""
    found = driver.find_elements(By.CSS_SELECTOR, "#round-rows tr")
    return {row.get_attribute("data-board") or "": row.text for row in found}


async def test_an_arbiter_uploads_the_pairings_previews_and_starts_the_round(
    mosquitto_private: Mosquitto, tmp_path: Path
) -> None:
    broker = mosquitto_private
    pairings_file = tmp_path / "round1.trf"
    pairings_file.write_text(trf(thirty_boards()))
    config = Config(relay=RelaySection(password=PASSWORD))
    # No venue map: board N plays at table bN. Boards 1 and 2 run; the 28 others are offline.
    async with (
        running_table(broker, "b1", tmp_path / "b1") as (_, first),
        running_table(broker, "b2", tmp_path / "b2") as (_, second),
        running_relay(broker, tmp_path / "relay", config=config) as relay,
        chromium() as browser,
    ):
        await browser.get(f"{relay.url}/")
        await browser.until(lambda d: d.find_elements(By.CSS_SELECTOR, card("b2")))
        assert not await browser.call(lambda d: d.find_element(By.ID, "round").is_displayed())
        await sign_in(browser, "Bo")
        await browser.call(lambda d: d.find_element(By.CSS_SELECTOR, "#round summary").click())

        # A pasted CSV with a player twice: one line naming the line; nothing can be started.
        def paste(driver: WebDriver) -> None:
            driver.find_element(By.ID, "round-text").send_keys("board,white,black\n1,A,B\n2,C,A\n")
            driver.find_element(By.ID, "round-number").send_keys("1")
            driver.find_element(By.ID, "round-preview").click()

        await browser.call(paste)
        error = await browser.until(lambda d: d.find_element(By.ID, "round-error").text)
        assert error == "pasted CSV line 3: A plays twice in round 1 (also on line 2)"
        assert not await browser.call(lambda d: d.find_element(By.ID, "round-start").is_enabled())

        # The TRF uploaded (it takes the place of the pasted text): the preview, nothing sent.
        def upload(driver: WebDriver) -> None:
            driver.find_element(By.ID, "round-text").clear()
            driver.find_element(By.ID, "round-file").send_keys(str(pairings_file))
            driver.find_element(By.ID, "round-preview").click()

        await browser.call(upload)
        preview = await browser.until(rows_when(lambda found: len(found) == 30))
        assert preview["1"] == "1 b1 Player01, Test (2690) Player31, Test (2390) will assign"
        assert preview["3"].endswith("will assign (table not seen)")
        assert preview["30"].endswith("forfeit 0-1 in the file")
        unpaired = await browser.text("#round-unpaired")
        assert "no board: Player61, Test (pairing-allocated bye)" in unpaired
        summary = await browser.text("#round-summary")
        assert summary == "round 1: 30 boards, nothing sent yet"
        assert first.assignment.white is None
        before = first.assignment

        await browser.call(lambda d: d.find_element(By.ID, "round-start").click())
        done = await browser.until(
            lambda d: "boards:" in (t := d.find_element(By.ID, "round-summary").text) and t
        )
        assert done == "30 boards: 2 ok, 28 not"
        started = await browser.call(rows)
        assert started["1"].endswith(" ok")
        assert started["2"].endswith(" ok")
        assert started["3"].endswith("no answer (never seen on this broker)")
        classes = await browser.call(
            lambda d: d.find_element(By.CSS_SELECTOR, '#round-rows tr[data-board="3"]')
        )
        assert await browser.call(lambda _: classes.get_attribute("class")) == "not"
        assigned = first.assignment
        assert assigned != before
        assert (assigned.white, assigned.black) == ("Player01, Test", "Player31, Test")
        assert (assigned.round, assigned.board) == ("1", 1)
        assert second.assignment.white_rating == 2380

        # The room view: each board's players as assigned.
        players = await browser.until(
            lambda d: (
                "Player32" in (t := d.find_element(By.CSS_SELECTOR, f"{card('b2')} .players").text)
                and t
            )
        )
        assert players == "Player32, Test – Player02, Test"
        title = await browser.text(f"{card('b1')} h2")
        assert title.startswith("Board 1")

        # Again: the tables hold it already; nothing is sent to them.
        await browser.call(lambda d: d.find_element(By.ID, "round-preview").click())
        again = await browser.until(rows_when(lambda found: found["1"].endswith("unchanged")))
        assert again["2"].endswith("unchanged")


async def test_the_round_needs_a_signed_in_arbiter_and_a_usable_file(
    mosquitto_private: Mosquitto, tmp_path: Path
) -> None:
    config = Config(relay=RelaySection(password=PASSWORD))
    body = {"pairings": trf(thirty_boards()), "name": "r1.trf", "round": 1}
    async with running_relay(mosquitto_private, tmp_path / "relay", config=config) as relay:
        for path in ("/api/round/preview", "/api/round/start"):
            async with relay.http.post(path, json=body) as response:
                assert response.status == 401
        async with relay.http.post("/login", json={"name": "Bo", "password": PASSWORD}) as login:
            assert login.status == 200
            csrf = (await login.json())["csrf"]
        async with relay.http.post("/api/round/start", json=body) as response:
            assert response.status == 403  # no CSRF token
        headers = {"X-CSRF-Token": csrf}
        async with relay.http.post(
            "/api/round/start", json=body | {"round": 2}, headers=headers
        ) as response:
            assert response.status == 400
            assert (await response.json())["error"] == (
                "r1.trf: round 2 is not in the file (it holds rounds 1 to 1)"
            )
        venue = '[boards]\n1 = "t1"\n'
        async with relay.http.post(
            "/api/round/preview", json=body | {"venue": venue}, headers=headers
        ) as response:
            assert response.status == 400
            assert (await response.json())["error"] == (
                "r1.trf line 35: board 2 has no table in the venue map"
            )
        async with relay.http.post("/api/round/preview", json=body, headers=headers) as response:
            assert response.status == 200
            assert len((await response.json())["rows"]) == 30
        # The rest keeps its small limit (signing in, the tables' actions).
        big = {"name": "Bo", "password": PASSWORD, "pad": "x" * 5000}
        async with relay.http.post("/login", json=big) as response:
            assert response.status == 400
            assert "over 4096 bytes" in await response.text()
