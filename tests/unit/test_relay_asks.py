"""The relay's link asks a table for a ``replay`` when a move waits for its position.

No broker: the link's client is a stand-in that keeps what it would publish, and the link's
clock is the test's. The relay was restarted (its stored payloads folded again, their ``seq``
holes settled), so the only reason to ask is the move that waits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from bridge.relay.gaps import ASK_GRACE, ASK_INTERVAL, ASK_TIMES
from bridge.relay.link import RelayLink
from bridge.relay.pgn import Broadcast
from bridge.relay.room import Room
from bridge.wire import payloads
from bridge.wire.config import BrokerSettings
from tests.relay_feed import TableFeed

AT = 100.0


@dataclass
class Client:
    """What the link publishes, in order."""

    sent: list[tuple[str, dict[str, object]]] = field(default_factory=list)

    async def publish(self, topic: str, payload: bytes, qos: int = 0) -> None:
        self.sent.append((topic, json.loads(payload)))


@dataclass
class Clock:
    now: float = AT

    def __call__(self) -> float:
        return self.now


def linked() -> tuple[RelayLink, Room, Client, Clock]:
    room, client, clock = Room(Broadcast()), Client(), Clock()
    link = RelayLink(BrokerSettings(host="broker.invalid", port=1883), room, clock=clock)
    link._client = client  # type: ignore[assignment]  # a stand-in: no broker in this test
    return link, room, client, clock


async def test_a_move_waiting_for_its_position_makes_the_link_ask_three_times_at_most() -> None:
    link, room, client, clock = linked()
    feed = TableFeed("t7", "t7-20260501T140000Z")
    items = [feed.status(), feed.snapshot(), *feed.play("d4 d5 c4")]
    lost = feed.play("e6")  # never came: the relay was down
    items.append(feed.move("Nc3"))
    for suffix, envelope in items:
        room.apply("t7", envelope, suffix=suffix, received=AT)
    table = room.tables["t7"]
    table.gaps.settle()  # as after folding the store again at start
    assert await link.ask_replays() == 0  # the grace: the table's snapshot usually follows
    asked_at: list[float] = []
    for _ in range(ASK_TIMES + 2):
        clock.now += ASK_GRACE if not asked_at else ASK_INTERVAL
        if await link.ask_replays():
            asked_at.append(clock.now)
    assert len(asked_at) == ASK_TIMES
    assert [topic for topic, _ in client.sent] == [
        payloads.topic("t7", "request/replay")
    ] * ASK_TIMES
    from_seq = client.sent[0][1]["from_seq"]
    assert isinstance(from_seq, int)
    assert from_seq <= lost[0][1].seq  # the replay resends the move that never came
    for suffix, envelope in lost[:2]:  # the table's answer
        room.apply("t7", envelope, suffix=suffix, received=clock.now)
    assert table.waiting() is None
    clock.now += 3600.0
    assert await link.ask_replays() == 0


async def test_a_table_whose_moves_all_follow_is_never_asked() -> None:
    link, room, client, clock = linked()
    feed = TableFeed("t7", "t7-20260501T140000Z")
    for suffix, envelope in [feed.status(), feed.snapshot(), *feed.play("e4 e5 Nf3 Nc6")]:
        room.apply("t7", envelope, suffix=suffix, received=AT)
    for _ in range(5):
        clock.now += ASK_INTERVAL
        assert await link.ask_replays() == 0
    assert client.sent == []
