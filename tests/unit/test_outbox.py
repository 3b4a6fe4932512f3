"""The durable outbox: seq allocation, restart counter, ordering, acknowledgement, state."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bridge.mqtt import outbox as outbox_module
from bridge.mqtt.outbox import Outbox
from bridge.mqtt.records import OutboxRow, StoredAnswer
from bridge.mqtt.state_dir import (
    RESERVE_NAME,
    RESERVE_SIZE,
    OutboxLockedError,
    OutboxUnavailableError,
)
from tests.conftest import SmallDisk


def _payload(epoch: int, seq: int) -> bytes:
    return f"{epoch}:{seq}".encode()


def test_first_open_is_epoch_one_and_seq_starts_at_one(tmp_path: Path) -> None:
    with Outbox(tmp_path / "state") as outbox:
        assert outbox.epoch == 1
        assert outbox.last_seq == 0
        assert outbox.add("a/b", _payload) == 1
        assert outbox.add("a/b", _payload) == 2
        assert outbox.pending(10) == [
            OutboxRow(1, "a/b", b"1:1", retain=False),
            OutboxRow(2, "a/b", b"1:2", retain=False),
        ]


def test_seq_continues_across_reopen_and_epochs(tmp_path: Path) -> None:
    with Outbox(tmp_path) as outbox:
        for _ in range(3):
            outbox.add("t", _payload)
        for row in outbox.pending(10):
            outbox.ack(row.seq)  # acknowledged rows are gone, their seqs stay used
        assert outbox.count() == 0
    with Outbox(tmp_path) as outbox:
        assert outbox.epoch == 2
        assert outbox.last_seq == 3
        assert outbox.add("t", _payload) == 4
        assert outbox.pending(10)[0].payload == b"2:4"
    with Outbox(tmp_path) as outbox:
        assert outbox.epoch == 3
        assert outbox.next_seq() == 5
        assert outbox.add("t", _payload) == 6


def test_unacknowledged_rows_survive_reopen_in_order(tmp_path: Path) -> None:
    with Outbox(tmp_path) as outbox:
        for index in range(5):
            outbox.add(f"topic/{index}", _payload, retain=index == 2)
        outbox.ack(1)
        outbox.ack(4)
    with Outbox(tmp_path) as outbox:
        assert [(row.seq, row.topic, row.retain) for row in outbox.pending(10)] == [
            (2, "topic/1", False),
            (3, "topic/2", True),
            (5, "topic/4", False),
        ]
        assert outbox.is_pending(3)
        assert not outbox.is_pending(4)
        assert [row.seq for row in outbox.pending(2)] == [2, 3]


def test_ack_twice_is_harmless(tmp_path: Path) -> None:
    with Outbox(tmp_path) as outbox:
        seq = outbox.add("t", _payload)
        outbox.ack(seq)
        outbox.ack(seq)
        outbox.ack(999)
        assert outbox.pending(10) == []


def test_retained_row_replaces_a_waiting_one_of_the_same_topic(tmp_path: Path) -> None:
    with Outbox(tmp_path) as outbox:
        outbox.add("game", _payload, retain=True)
        outbox.add("event", _payload)
        outbox.add("game", _payload, retain=True)
        outbox.add("board", _payload, retain=True)
        assert [(row.seq, row.topic) for row in outbox.pending(10)] == [
            (2, "event"),
            (3, "game"),
            (4, "board"),
        ]


def test_failing_payload_factory_changes_nothing(tmp_path: Path) -> None:
    def broken(epoch: int, seq: int) -> bytes:
        raise RuntimeError("encoder bug")

    with Outbox(tmp_path) as outbox:
        outbox.add("t", _payload)
        with pytest.raises(RuntimeError, match="encoder bug"):
            outbox.add("t", broken)
        assert outbox.add("t", _payload) == 2
    with Outbox(tmp_path) as outbox:
        assert outbox.last_seq == 2


def test_key_value_state(tmp_path: Path) -> None:
    with Outbox(tmp_path) as outbox:
        assert outbox.get("engine") is None
        outbox.put("engine", b"\x00state-1")
        outbox.put("engine", b"state-2")
        outbox.put("other", b"")
    with Outbox(tmp_path) as outbox:
        assert outbox.get("engine") == b"state-2"
        assert outbox.get("other") == b""


def test_one_outbox_per_state_directory(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path)
    with pytest.raises(OutboxLockedError, match="already open"):
        Outbox(tmp_path)
    outbox.close()
    outbox.close()  # idempotent
    with Outbox(tmp_path) as reopened:
        assert reopened.epoch == 2


def test_rows_survive_sigkill(tmp_path: Path) -> None:
    """A row is on disk when add() returns, even if the process dies right after."""
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from bridge.mqtt.outbox import Outbox\n"
        "box = Outbox(Path(sys.argv[1]))\n"
        "for _ in range(50):\n"
        "    box.add('t', lambda epoch, seq: b'x%d' % seq)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], cwd=root, check=False, timeout=30
    )
    assert done.returncode == -9
    with Outbox(tmp_path) as outbox:  # the lock died with the process
        assert outbox.epoch == 2
        rows = outbox.pending(100)
        assert [row.seq for row in rows] == list(range(1, 51))
        assert rows[-1].payload == b"x50"


def test_full_synchronous_mode(tmp_path: Path) -> None:
    with Outbox(tmp_path, synchronous="FULL") as outbox:
        assert outbox.add("t", _payload) == 1


# --- the journal (replay) ---------------------------------------------------------------------


def test_journal_keeps_non_retained_payloads_after_ack(tmp_path: Path) -> None:
    with Outbox(tmp_path) as outbox:
        outbox.add("event/move", _payload)
        outbox.add("game", _payload, retain=True)
        outbox.add("event/alert", _payload)
        for row in outbox.pending(10):
            outbox.ack(row.seq)
        assert outbox.journal_since(0, 100) == [
            OutboxRow(1, "event/move", b"1:1", retain=False),
            OutboxRow(3, "event/alert", b"1:3", retain=False),
        ]
        assert outbox.journal_since(2, 100) == [OutboxRow(3, "event/alert", b"1:3", False)]
        assert outbox.journal_since(4, 100) == []
        assert outbox.journal_oldest() == 1


def test_journal_is_bounded_and_survives_reopen(tmp_path: Path) -> None:
    with Outbox(tmp_path, journal_size=3) as outbox:
        assert outbox.journal_oldest() is None
        for _ in range(5):
            outbox.add("e", _payload)
        outbox.add("g", _payload, retain=True)  # retained rows never count
        assert [row.seq for row in outbox.journal_since(0, 100)] == [3, 4, 5]
    with Outbox(tmp_path, journal_size=3) as outbox:
        outbox.add("e", _payload)
        assert [row.payload for row in outbox.journal_since(0, 100)] == [b"1:4", b"1:5", b"2:7"]
    with Outbox(tmp_path, journal_size=2) as outbox:  # a smaller size prunes on the next add
        outbox.add("e", _payload)
        assert [row.seq for row in outbox.journal_since(0, 100)] == [7, 8]


def test_a_full_journal_is_pruned_a_hundredth_at_a_time_never_below_its_size(
    tmp_path: Path,
) -> None:
    with Outbox(tmp_path, journal_size=200) as outbox:
        held = []
        for _ in range(650):
            outbox.add("e", _payload)
            rows = outbox.journal_since(0, 1000)
            held.append(len(rows))
            assert rows[-1].seq == outbox.last_seq  # the newest is always there
            assert [row.seq for row in rows] == list(range(rows[0].seq, outbox.last_seq + 1))
        assert min(held[200:]) == 200  # never fewer than journal_size once that many were stored
        assert max(held) == 201  # pruned when it is two over (a hundredth of 200)
        assert held.count(200) > 200  # and pruned back to the size each time


def test_a_file_of_a_newer_version_is_refused(tmp_path: Path) -> None:
    with Outbox(tmp_path):
        pass
    db = sqlite3.connect(tmp_path / "outbox.sqlite3", isolation_level=None)
    db.execute("PRAGMA user_version = 3")
    db.close()
    with pytest.raises(sqlite3.DatabaseError, match="schema 3, newer than this version knows"):
        Outbox(tmp_path)


def test_journal_limit_and_order(tmp_path: Path) -> None:
    with Outbox(tmp_path) as outbox:
        for index in range(10):
            outbox.add(f"e/{index}", _payload)
        rows = outbox.journal_since(4, 3)
        assert [(row.seq, row.topic) for row in rows] == [(4, "e/3"), (5, "e/4"), (6, "e/5")]


def test_requeue_sends_the_original_payloads_again_in_seq_order(tmp_path: Path) -> None:
    with Outbox(tmp_path) as outbox:
        for _ in range(4):
            outbox.add("e", _payload)
        for seq in (1, 2, 3):
            outbox.ack(seq)
        rows = outbox.journal_since(2, 100)
        assert outbox.requeue(rows) == 2  # seq 4 is still waiting: not doubled
        assert outbox.pending(10) == [
            OutboxRow(2, "e", b"1:2", False),
            OutboxRow(3, "e", b"1:3", False),
            OutboxRow(4, "e", b"1:4", False),
        ]
        assert outbox.add("e", _payload) == 5  # the counter is not moved back
        assert len(outbox.journal_since(0, 100)) == 5  # requeued rows are not journaled twice
    with Outbox(tmp_path) as outbox:
        assert outbox.last_seq == 5


def test_failing_payload_factory_leaves_the_journal_alone(tmp_path: Path) -> None:
    def broken(epoch: int, seq: int) -> bytes:
        raise RuntimeError("encoder bug")

    with Outbox(tmp_path, journal_size=1) as outbox:
        outbox.add("e", _payload)
        with pytest.raises(RuntimeError):
            outbox.add("e", broken)
        assert [row.seq for row in outbox.journal_since(0, 10)] == [1]


def test_journal_size_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="journal_size"):
        Outbox(tmp_path, journal_size=0)


def test_answers_are_kept_until_they_expire_and_across_reopen(tmp_path: Path) -> None:
    answer = StoredAnswer(b"digest", b'{"status":"ok"}')
    with Outbox(tmp_path) as outbox:
        outbox.remember_answer("takeback", "tx-1", answer, expires=1000.0, now=900.0)
        assert outbox.answer("takeback", "tx-1", 950.0) == answer
        assert outbox.answer("claim_draw", "tx-1", 950.0) is None
    with Outbox(tmp_path) as outbox:
        assert outbox.answer("takeback", "tx-1", 1000.0) == answer
        assert outbox.answer("takeback", "tx-1", 1000.5) is None  # expired
        # Expired answers are dropped when another is kept.
        outbox.remember_answer("assign", "tx-2", answer, expires=3000.0, now=2000.0)
        (count,) = outbox._db.execute("SELECT count(*) FROM answered").fetchone()
        assert count == 1


def test_seq_handed_out_in_a_batch_stays_used_once_its_rows_are_acknowledged(
    tmp_path: Path,
) -> None:
    # The counter is written once, at the batch's commit: the retained rows (not journaled)
    # and the seq given to a payload that is not stored must still count after a reopen.
    with Outbox(tmp_path) as outbox:
        with outbox.batch():
            outbox.add("t/game", _payload, retain=True)
            outbox.add("t/board", _payload, retain=True)
            assert outbox.next_seq() == 3
        for row in outbox.pending(10):
            outbox.ack(row.seq)
        assert outbox.count() == 0
        with outbox.batch():
            outbox.put("game", b"no seq")
    with Outbox(tmp_path) as outbox:
        assert outbox.last_seq == 3
        with outbox.batch():
            assert outbox.add("t/game", _payload, retain=True) == 4
        outbox.ack(4)
    with Outbox(tmp_path) as outbox:
        assert outbox.last_seq == 4


def test_a_batch_is_one_transaction(tmp_path: Path) -> None:
    def crashing(outbox: Outbox) -> None:
        with outbox.batch():
            outbox.add("t/a", lambda e, s: b"a")
            outbox.put("game", b"new")
            raise RuntimeError("crash")

    with Outbox(tmp_path) as outbox:
        with pytest.raises(RuntimeError, match="crash"):
            crashing(outbox)
        assert outbox.pending() == []
        assert outbox.get("game") is None
        with outbox.batch():
            seq = outbox.add("t/b", lambda e, s: b"b")
            outbox.put("game", b"newer")
        assert [row.seq for row in outbox.pending()] == [seq]
    with Outbox(tmp_path) as outbox:
        assert outbox.get("game") == b"newer"
        assert [row.payload for row in outbox.pending()] == [b"b"]


# --- a full disk --------------------------------------------------------------------------------


def trouble_of(outbox: Outbox) -> str | None:
    return outbox.trouble


def test_a_full_disk_keeps_everything_in_memory_until_space_returns(small_disk: SmallDisk) -> None:
    state = small_disk.path / "state"
    told: list[str | None] = []
    with Outbox(state) as outbox:
        outbox.on_trouble = told.append
        first = outbox.add("t/move", _payload)
        small_disk.fill()
        seqs = [outbox.add("t/move", _payload) for _ in range(3)]
        with outbox.batch():
            seqs.append(outbox.add("t/game", _payload, retain=True))
            outbox.put("game", b"in memory")
        assert trouble_of(outbox) == "no space left on the disk"
        assert told == ["no space left on the disk"]
        assert [row.seq for row in outbox.pending()] == [first, *seqs]
        assert outbox.get("game") == b"in memory"
        outbox.ack(first)  # a row on disk, sent while the disk is full
        outbox.ack(seqs[0])  # a row in memory only
        assert [row.seq for row in outbox.pending()] == seqs[1:]
        assert [row.seq for row in outbox.journal_since(0, 10)] == [first, *seqs[:3]]
        assert outbox.retry() is False
        assert told == ["no space left on the disk"]

        small_disk.free()
        assert outbox.retry() is True
        assert told == ["no space left on the disk", None]
        assert trouble_of(outbox) is None
        assert [row.seq for row in outbox.pending()] == seqs[1:]
    with Outbox(state) as outbox:
        assert outbox.epoch == 2
        assert [row.seq for row in outbox.pending()] == seqs[1:]
        assert outbox.get("game") == b"in memory"
        assert outbox.add("t/move", _payload) == seqs[-1] + 1


def test_a_restart_on_a_full_disk_counts_its_epoch_with_the_reserve(
    small_disk: SmallDisk,
) -> None:
    state = small_disk.path / "state"
    with Outbox(state) as outbox:
        outbox.add("t/move", _payload)
    reserve = (state / RESERVE_NAME).stat().st_size
    assert reserve == RESERVE_SIZE
    small_disk.fill()
    with Outbox(state) as outbox:  # no sqlite3.Error: the reserve made room for the epoch
        assert outbox.epoch == 2
        assert outbox.trouble is None
    assert (state / RESERVE_NAME).stat().st_size < reserve
    small_disk.free()
    with Outbox(state) as outbox:
        assert outbox.epoch == 3
    assert (state / RESERVE_NAME).stat().st_size == RESERVE_SIZE  # grown back


def killed_with_the_outbox_open(state: Path) -> int:
    """A process that opened the outbox in ``state``, added a row and was SIGKILLed (its WAL
    and WAL index stay, as they do after a crash); the row's seq."""
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from bridge.mqtt.outbox import Outbox\n"
        "outbox = Outbox(Path(sys.argv[1]))\n"
        "print(outbox.add('t/move', lambda e, s: b'x'), flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(state)], capture_output=True, text=True, check=False
    )
    return int(done.stdout)


def test_without_a_reserve_the_epoch_is_kept_in_memory_and_seq_jumps(
    small_disk: SmallDisk,
) -> None:
    state = small_disk.path / "state"
    last = killed_with_the_outbox_open(state)
    os.truncate(state / RESERVE_NAME, 0)  # used up by earlier restarts on this full disk
    small_disk.fill()
    with Outbox(state) as outbox:
        assert outbox.epoch == 2
        assert outbox.trouble is not None
        seq = outbox.add("t/move", _payload)
        assert seq > last + 1000  # a run that might not be saved does not reuse a seq
        small_disk.free()
        assert outbox.retry()
    with Outbox(state) as outbox:
        assert outbox.epoch == 3
        assert outbox.add("t/move", _payload) == seq + 1


def test_no_room_at_all_is_said_in_one_line(small_disk: SmallDisk) -> None:
    state = small_disk.path / "state"
    with Outbox(state):
        pass  # closed cleanly: the next open must create its WAL index
    os.truncate(state / RESERVE_NAME, 0)
    small_disk.fill()
    with pytest.raises(OutboxUnavailableError, match=r"no space left.*free space on that"):
        Outbox(state)


class _StepFailedError(Exception):
    pass


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@example(  # a row requeued while the rows before it still wait, then read one at a time
    steps=[("add", "e/touch"), ("add", "e/move"), ("add", "e/move"), ("ack", 0, 2), ("requeue", 1)]
)
@given(
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("add"), st.sampled_from(["e/touch", "e/move", "game", "board"])),
            st.tuples(st.just("ack"), st.integers(0, 3), st.integers(0, 6)),
            st.tuples(st.just("batch"), st.integers(1, 3), st.booleans(), st.booleans()),
            st.tuples(st.just("requeue"), st.integers(1, 4)),
            st.tuples(st.just("reopen"), st.none()),
        ),
        max_size=40,
    )
)
def test_the_rows_held_in_memory_are_the_rows_on_disk(
    steps: list[tuple[object, ...]],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whatever is stored, acknowledged, rolled back, requeued or reopened, :meth:`pending`
    (from memory where it can) returns what a query of the disk returns."""
    monkeypatch.setattr(outbox_module, "TAIL_ROWS", 4)  # the disk alone also holds them, at times
    path = tmp_path_factory.mktemp("tail")
    outbox = Outbox(path)

    def add(topic: str) -> None:
        outbox.add(topic, _payload, retain=topic in ("game", "board"))

    try:
        for step in steps:
            kind = step[0]
            if kind == "add":
                add(str(step[1]))
            elif kind == "ack":  # the PUBACKs of the first rows, or of one further on
                waiting = outbox.pending(100)
                count, one = int(str(step[1])), int(str(step[2]))
                for row in waiting[:count] + waiting[one : one + 1]:
                    if outbox.is_pending(row.seq):
                        outbox.ack(row.seq)
            elif kind == "batch":
                oldest = outbox.pending(1)
                with contextlib.suppress(_StepFailedError), outbox.batch():
                    for index in range(int(str(step[1]))):
                        add("e/touch" if index % 2 else "game")
                    if step[2] and oldest:
                        outbox.ack(oldest[0].seq)
                    if step[3]:
                        raise _StepFailedError
            elif kind == "requeue":
                outbox.requeue(outbox.journal_since(0, 100)[-int(str(step[1])) :])
            else:
                outbox.close()
                outbox = Outbox(path)
            on_disk = [
                OutboxRow(seq, topic, payload, bool(retain))
                for seq, topic, payload, retain in outbox._db.execute(
                    "SELECT seq, topic, payload, retain FROM outbox ORDER BY seq"
                )
            ]
            for limit in (1, 3, 100):
                assert outbox.pending(limit) == on_disk[:limit]
            assert outbox.count() == len(on_disk)
            for row in on_disk:
                assert outbox.is_pending(row.seq)
            assert not outbox.is_pending(outbox.last_seq + 1)
    finally:
        outbox.close()
