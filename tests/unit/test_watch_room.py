"""``chessbridge watch --room``: one line per table, a hundred tables on one screen."""

from __future__ import annotations

import re

from bridge.views.model import TableView
from bridge.views.render import room, room_line
from bridge.wire import payloads
from tests.relay_feed import TableFeed

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def table(number: int, sans: str, **assignment: str | int) -> TableView:
    feed = TableFeed(f"t{number}", f"t{number}-20260501T140000Z")
    feed.assign(white=f"White Player {number}", black=f"Black Player {number}", **assignment)
    view = TableView(feed.table)
    items = [feed.status(), feed.snapshot(), *feed.play(sans)]
    board = payloads.BoardData(state="connected", driver="dgt", uri="dgt:/dev/x", battery=80)
    items.append(("board", feed.envelope("board", board)))
    for _, envelope in items:
        view.apply(envelope)
    return view


def test_a_hundred_tables_fit_a_screen_one_line_each() -> None:
    views = {f"t{n}": table(n, "e4 e5 Nf3", board=n) for n in range(1, 101)}
    text = room(views, 120, title="chessbridge watch")
    lines = text.splitlines()
    assert len(lines) == 102  # the title, the count, a line per table
    assert all(len(line) <= 120 for line in lines)
    assert lines[1] == "100 tables, 0 with open alerts"
    assert lines[2].startswith("B1 t1 ")
    assert lines[-1].startswith("B100 t100")
    assert "White Player 1 – Black Player 1" in lines[2]
    assert "2. Nf3" in lines[2]
    assert "W 1:29:36 B 1:29:48*" in lines[2]
    assert lines[2].endswith("ok 80%")
    assert "\x1b[" not in text


def test_alerts_and_a_link_down_stand_out_in_colour() -> None:
    view = table(1, "e4")
    feed = TableFeed("t1", view.game_id or "")
    feed.seq = 100
    _, alert = feed.alert("touch_move", "4.3.1", "black")
    _, lost = feed.status("lost")
    view.apply(alert)
    view.apply(lost)
    plain = room_line(view, 100)
    assert "! touch_move 4.3.1" in plain
    assert "lost/connected" in plain
    painted = room_line(view, 100, color=True)
    assert ANSI.sub("", painted) == plain
    assert "\x1b[31m\x1b[1m! touch_move 4.3.1\x1b[0m" in painted
    assert "\x1b[31mlost/connected 80%\x1b[0m" in painted


def test_a_narrow_screen_drops_the_players_first_and_never_overflows() -> None:
    view = table(7, "d4 d5", board=7)
    for width in (40, 60, 80):
        line = room_line(view, width)
        assert len(line) <= width
    assert "White Player" not in room_line(view, 60)
    assert "White Player" in room_line(view, 110)
