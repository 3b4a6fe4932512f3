"""The arbiters' page in a real headless Chromium, fed by a real table through Mosquitto."""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from pathlib import Path
from typing import Any, Final

import aiomqtt
import chess
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from bridge.demo.game import perform, press_side
from bridge.wire import payloads
from bridge.wire.config import Config, RelaySection
from drivers.choreography import Style
from drivers.dgt.emulator import DgtEmulator
from tests.browser import Browser, chromium
from tests.conftest import Mosquitto, Subscribe, Subscription
from tests.pgn_check import pgn_extract_accepts, read_games, sans
from tests.relay_feed import Item, TableFeed
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


def last_game(sub: Subscription) -> dict[str, Any]:
    """The data of the last retained ``game`` received."""
    games = [json.loads(bytes(m.payload)) for m in sub.on("game") if m.payload]
    data: dict[str, Any] = games[-1]["data"] if games else {}
    return data


async def fill(browser: Browser, form: str, **values: str) -> None:
    """Type ``values`` into the inputs (or choose in the selects) of ``#form`` and submit it."""

    def act(driver: WebDriver) -> None:
        for name, value in values.items():
            field = driver.find_element(By.CSS_SELECTOR, f"#{form} [name={name}]")
            if field.tag_name == "select":
                Select(field).select_by_visible_text(value)
            else:
                field.clear()
                field.send_keys(value)
        button = driver.find_element(By.CSS_SELECTOR, f"#{form} button")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
        button.click()

    await browser.call(act)


async def done(browser: Browser, command: str) -> None:
    await browser.until(lambda d: d.find_element(By.ID, "message").text == f"{command}: done")


async def test_the_page_corrects_a_move_sets_the_clocks_and_the_result(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    rng = random.Random(9)
    config = Config(relay=RelaySection(password=PASSWORD))
    async with (
        running_table(mosquitto, table_id, tmp_path / "table", speed=4.0) as (emu, _),
        running_relay(mosquitto, tmp_path / "relay", config=config) as relay,
        mqtt_subscribe(mosquitto, payloads.topic(table_id, "game")) as games,
        chromium() as browser,
    ):
        emu.set_clock(600, 600, running="right")
        board = chess.Board()
        for san in ("e4", "e5", "Nf3"):
            await move(emu, board, san, rng)
        await browser.get(f"{relay.url}/#/table/{table_id}")
        await sign_in(browser, "Anna")
        await browser.until(lambda d: "2. Nf3" in d.find_element(By.ID, "detail-moves").text)
        assert await browser.call(lambda d: d.find_element(By.ID, "actions").is_displayed())

        # correct_move: the scoresheet says 1... e6.
        await fill(browser, "form-correct", ply="2", uci="e7e6")
        await done(browser, "correct_move")
        await games.wait_for(
            lambda _: last_game(games).get("moves", {}).get("uci", [])[1:2] == ["e7e6"]
        )
        assert last_game(games)["moves"]["san"] == ["e4", "e6", "Nf3"]

        def corrected(driver: WebDriver) -> str | None:
            item = driver.find_element(By.CSS_SELECTOR, '#detail-moves li[data-ply="2"]')
            text: str = item.text
            return text if "1... e6" in text and "corrected" in text else None

        shown = await browser.until(corrected)
        assert "The arbiter corrected move 1... e6" in shown  # the comment, under its move
        assert await browser.css("#detail-moves li.part-start") == []  # one part: no split
        text = await relay.text(f"/table/{table_id}.pgn")
        (game,) = read_games(text)
        assert sans(game) == ["e4", "e6", "Nf3"]

        # adjust_clock: White 9:00, Black 8:30, paused. White's clock is the right side.
        await fill(browser, "form-clock", white="9:00", black="8:30", running="paused")
        await done(browser, "adjust_clock")
        assert emu.clock_times == (510, 540)
        assert emu.clock_running is None
        await browser.until(
            lambda d: (
                "set the clocks: White 9:00, Black 8:30 (Anna)"
                in d.find_element(By.ID, "detail-actions").text
            )
        )

        # set_result: a draw agreed.
        await fill(browser, "form-result", result="1/2-1/2", reason="draw agreed")
        await done(browser, "set_result")
        await games.wait_for(lambda _: last_game(games).get("result") == "1/2-1/2")
        assert last_game(games)["reason"] == "draw agreed"
        await browser.until(lambda d: "1/2-1/2" in d.find_element(By.ID, "detail-state").text)
        text = await relay.text(f"/table/{table_id}.pgn")
        (game,) = read_games(text)
        assert game.headers["Result"] == "1/2-1/2"
        pgn_extract_accepts(text)


def stood_game(table: str) -> tuple[TableFeed, list[Item]]:
    """1. d4 d5 2. Nf3 Nf6 3. Bf1-c4 (through the pawn on e2), nobody claims, 3... dxc4 4. e3."""
    feed = TableFeed(table, f"{table}-20260501T140000Z")
    feed.assign(white="Anna Averbakh-Longname", black="Boris Borisovich-Longname", board=3)
    irregular = chess.Board()
    for san in ("d4", "d5", "Nf3", "Nf6"):
        irregular.push_san(san)
    irregular.remove_piece_at(chess.F1)
    irregular.set_piece_at(chess.C4, chess.Piece(chess.BISHOP, chess.WHITE))
    irregular.turn = chess.BLACK
    items = [feed.status(), feed.snapshot(), *feed.play("d4 d5 Nf3 Nf6")]
    items += [
        feed.alert("illegal_move", "7.5.1, A.4.2", "white", squares=["f1", "c4"]),
        feed.press("white"),
        feed.snapshot(),
        feed.stood(irregular.fen(), "f1c4", "A.4.2, B.4"),
        feed.move("dxc4", completed_by="clock"),
        feed.press("black"),
        feed.snapshot(),
        *feed.play("e3"),
    ]
    return feed, items


async def published(broker: Mosquitto, table: str) -> None:
    """A table's payloads for :func:`stood_game`, published as its daemon would."""
    feed, items = stood_game(table)
    async with aiomqtt.Client(broker.host, broker.port) as client:
        for suffix, envelope in items:
            await client.publish(
                payloads.topic(table, suffix),
                feed.raw[envelope.seq],
                qos=1,
                retain=suffix in ("status", "board", "game"),
            )


async def test_the_page_shows_an_illegal_move_that_stood_and_where_part_2_begins(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path
) -> None:
    async with (
        running_relay(mosquitto, tmp_path / "relay") as relay,
        chromium() as browser,
    ):
        await published(mosquitto, table_id)
        await browser.get(f"{relay.url}/#/table/{table_id}")
        head = '#detail-moves li.part-start[data-part="2"]'
        start = await browser.until(lambda d: d.find_element(By.CSS_SELECTOR, head).text)
        assert "Part 2, from move 3" in start
        assert "continues after the illegal move 3. Bf1-c4 by White, which stood" in start
        notes = await browser.text("#detail-notes")
        assert "Illegal move 3. Bf1-c4 by White stood (Art. A.4.2, B.4)" in notes
        assert "continues in part 2" in notes
        moves = await browser.text("#detail-moves")
        # Part 1's moves, its ending, then part 2's from the irregular position.
        assert moves.index("2... Nf6") < moves.index("Part 2") < moves.index("3... dxc4")
        assert moves.index("3... dxc4") < moves.index("4. e3")
        ending = await browser.text('#detail-moves li.part-end[data-part="1"]')
        assert "stood" in ending


PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}


WIDER: Final = """
    return [...document.querySelectorAll("body *")]
      .filter((node) => node.getBoundingClientRect().right > arguments[0] + 0.5)
      .map((node) => `${node.tagName}.${node.className}: ${node.textContent.slice(0, 60)}`)
      .slice(0, 10);
"""
"""The elements that reach past the screen's right edge (for the failure message)."""


async def no_sideways_scroll(browser: Browser) -> None:
    """The page is no wider than the phone's screen: nothing to scroll sideways to."""
    widths = await browser.call(
        lambda d: d.execute_script(
            "return [document.documentElement.scrollWidth, document.body.scrollWidth,"
            " window.innerWidth]"
        )
    )
    wider = await browser.call(lambda d: d.execute_script(WIDER, PHONE["width"]))
    assert isinstance(widths, list)
    document, body, viewport = widths
    # A mobile browser widens the layout viewport to what overflows: it must stay the screen's.
    assert viewport == PHONE["width"], (widths, wider)
    assert document <= viewport, (widths, wider)
    assert body <= viewport, (widths, wider)


async def reachable(browser: Browser, selector: str) -> None:
    """The element, scrolled to, lies within the screen's width and nothing covers it."""
    script = """
        const node = document.querySelector(arguments[0]);
        node.scrollIntoView({block: "center", inline: "nearest"});
        const box = node.getBoundingClientRect();
        const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
        return [box.left, box.right, window.innerWidth, hit === node || node.contains(hit)];
    """
    found = await browser.call(lambda d: d.execute_script(script, selector))
    assert isinstance(found, list)
    left, right, width, on_top = found
    assert left >= 0, (selector, found)
    assert right <= width, (selector, found)
    assert on_top, (selector, found)


async def test_on_a_phone_the_room_and_a_table_fit_the_screen_and_the_controls_are_reachable(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    config = Config(relay=RelaySection(password=PASSWORD))
    # Ids as long as a table's may be in a venue, on boards with a number: the cards' titles.
    tables = [f"t{n}{uuid.uuid4().hex[:15]}" for n in range(3)]
    async with (
        running_relay(mosquitto, tmp_path / "relay", config=config) as relay,
        chromium(width=PHONE["width"], height=PHONE["height"]) as browser,
    ):
        await browser.call(lambda d: d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE))
        for table in tables:
            await published(mosquitto, table)
        await browser.get(f"{relay.url}/")
        await browser.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "article.card")) >= 3)
        await no_sideways_scroll(browser)
        for control in ("#signin-name", "#signin-password", "#signin button"):
            await reachable(browser, control)
        await sign_in(browser, "Anna")
        await no_sideways_scroll(browser)
        await browser.call(
            lambda d: d.find_element(By.CSS_SELECTOR, f'article[data-table="{tables[0]}"]').click()
        )
        await browser.until(lambda d: "4. e3" in d.find_element(By.ID, "detail-moves").text)
        await browser.until(lambda d: d.find_element(By.ID, "actions").is_displayed())
        await no_sideways_scroll(browser)
        for control in (
            "#back",
            "#detail-open .ack",
            "#form-correct [name=ply]",
            "#form-correct [name=uci]",
            "#form-correct button",
            "#form-result [name=result]",
            "#form-result [name=reason]",
            "#form-result button",
            "#form-clock [name=white]",
            "#form-clock [name=black]",
            "#form-clock [name=running]",
            "#form-clock button",
            "#signout",
        ):
            await reachable(browser, control)
        await no_sideways_scroll(browser)


async def test_the_page_records_the_moves_a_restart_could_not_tell_apart(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    """The table's daemon restarts after 1. e4 e5 2. Nf3 while 2... Nc6 3. Bc4 Nf6 are played:
    Black's knights could have come in either order, the board cannot tell, the arbiter can."""
    from tests.integration.test_faults import daemon, has_moves, moves, online_and_connected

    rng = random.Random(11)
    config = Config(relay=RelaySection(password=PASSWORD))
    board = chess.Board()
    async with (
        DgtEmulator(speed=4.0, memory="empty") as emu,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
        daemon(f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "state") as table,
        running_relay(mosquitto, tmp_path / "relay", config=config) as relay,
        chromium() as browser,
    ):
        await online_and_connected(sub)
        emu.set_clock(600, 600, running="right")
        for san in ("e4", "e5", "Nf3"):
            await move(emu, board, san, rng)
        await sub.wait_for(has_moves(3), within=20)
        await asyncio.sleep(0.1)
        await table.kill()
        for san in ("Nc6", "Bc4", "Nf6"):
            await move(emu, board, san, rng)
        await table.start()
        await sub.wait_for(lambda _: bool(sub.on("event/alert")), within=40)
        await browser.get(f"{relay.url}/#/table/{table_id}")
        await sign_in(browser, "Anna")
        played = " ".join(m.uci() for m in board.move_stack[3:])

        def record_button(driver: WebDriver) -> Any:
            buttons = driver.find_elements(By.CSS_SELECTOR, "#detail-open .reconstruct")
            texts = sorted(b.text for b in buttons)
            assert texts in ([], sorted([f"Record {played}", "Record g8f6 f1c4 b8c6"]))
            return next((b for b in buttons if b.text == f"Record {played}"), None)

        button = await browser.until(record_button)
        await browser.call(lambda _: button.click())
        await done(browser, "reconstruct")
        await sub.wait_for(has_moves(6), within=20)

    got = [m["data"] for m in moves(sub.messages)]
    assert [m["uci"] for m in got] == [m.uci() for m in board.move_stack]
    assert [m["completed_by"] for m in got[3:]] == ["reconstructed"] * 3
    # A replay the relay asks for may send the alert again: consumers drop it by (epoch, seq).
    sent = [json.loads(bytes(m.payload)) for m in sub.on("event/alert")]
    alerts = list({(a["epoch"], a["seq"]): a["data"] for a in sent}.values())
    assert [a["kind"] for a in alerts] == ["board_mismatch"]
