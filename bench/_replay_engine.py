"""Time one tree's engine on streams written by ``bench.engine_then``; run by path, not imported.

    python bench/_replay_engine.py TREE STREAMS.json

``TREE`` is the root of a source tree of this project: the current one, or an earlier commit's
unpacked by ``engine_then``. Its ``bridge`` and ``drivers`` are imported ahead of any installed
copy, and the events are rebuilt with that tree's own event classes, so an engine whose module
layout has changed since can still be fed. Each call is timed as ``engine_bench.run_engine``
times it (``feed``, then ``next_deadline``; timers as they fall due). The figures go to stdout
as JSON: per stream, nanoseconds per event by bucket, the moves recorded and the games whose
moves equal the played ones.
"""

from __future__ import annotations

import gc
import importlib
import json
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


def _load(tree: Path) -> tuple[Any, Any, Any]:
    """The tree's ``Arbiter`` and ``EngineConfig``, its ``MovePlayed``, and its events module."""
    sys.path.insert(0, str(tree))
    events = importlib.import_module("drivers.events")
    # Before the layout by layers the engine was bridge/engine.py.
    package = "bridge.arbiter" if (tree / "bridge" / "arbiter").is_dir() else "bridge"
    engine = importlib.import_module(f"{package}.engine")
    facts = importlib.import_module(f"{package}.facts")
    for module in (events, engine, facts):
        loaded = Path(str(module.__file__)).resolve()
        if not loaded.is_relative_to(tree.resolve()):
            raise SystemExit(f"_replay_engine: {module.__name__} came from {loaded}, not {tree}")
    return engine, facts.MovePlayed, events


def collect_moves(facts: Iterable[Any], move_played: Any, recorded: list[Any]) -> bool:
    """Append the moves (``move_played``) in ``facts`` to ``recorded``; whether there were any.

    A superseding move replaces the last. ``engine_bench`` uses this too: only the standard
    library is imported at this module's top, so either tree's engine may be loaded after it.
    """
    moved = False
    for fact in facts:
        if isinstance(fact, move_played):
            moved = True
            if fact.supersedes and recorded:
                recorded.pop()
            recorded.append(fact.move)
    return moved


def bucket_of(kind: str, moved: bool) -> str:
    """Where a call's cost goes: a lift or place that recorded a move is ``completing``; a press
    (which completes a move still within its dwell), a tick and a timer keep their kind."""
    return "completing" if moved and kind in ("lift", "place") else kind


def time_game(
    arbiter: Any,
    events: Iterable[tuple[str, Any]],
    move_played: Any,
    count: Callable[[str, int, bool], None],
) -> list[Any]:
    """Feed one game's ``(kind, event)`` pairs to ``arbiter``, timing each call as the daemon
    makes it (``feed`` or ``handle_timer``, then ``next_deadline``; timers as they fall due).

    ``count(kind, ns, moved)`` is called after each call, outside the time taken: ``kind`` is
    the event's, or ``"timer"``. Returns the moves recorded, a superseding move replacing the
    last. ``engine_bench.run_engine`` and this program's ``main`` both play games with it.
    """
    clock = time.perf_counter_ns
    recorded: list[Any] = []
    deadline: float | None = None

    def timers_until(until: float | None) -> float | None:
        due = deadline
        while due is not None and (until is None or due <= until):
            t0 = clock()
            facts = arbiter.handle_timer(due)
            due = arbiter.next_deadline()
            cost = clock() - t0
            count("timer", cost, collect_moves(facts, move_played, recorded))
        return due

    for kind, event in events:
        at = event.at
        deadline = timers_until(at)
        t0 = clock()
        facts = arbiter.feed(event, at)
        deadline = arbiter.next_deadline()
        cost = clock() - t0
        count(kind, cost, collect_moves(facts, move_played, recorded))
    timers_until(None)
    return recorded


def main() -> None:
    tree, streams_file = Path(sys.argv[1]), Path(sys.argv[2])
    engine, move_played, events = _load(tree)
    import chess

    side = events.ClockSide

    def event_of(raw: list[Any]) -> object:
        kind = raw[0]
        if kind == "lift":
            return events.SquareEmptied(square=raw[1], at=raw[2])
        if kind == "place":
            return events.SquareOccupied(
                square=raw[1], piece=chess.Piece.from_symbol(raw[2]), at=raw[3]
            )
        left, right, high, at = raw[1:]
        return events.ClockReading(
            left=left,
            right=right,
            running=True,
            lever_high=side.LEFT if high == "left" else side.RIGHT,
            connected=True,
            left_flag=False,
            right_flag=False,
            battery_low=False,
            at=at,
        )

    config = engine.EngineConfig(white_side=side.RIGHT)
    out: dict[str, Any] = {}
    for name, games in json.loads(streams_file.read_text()).items():
        decoded = [
            (
                [chess.Move.from_uci(uci) for uci in game["moves"]],
                [(kind, event_of(raw)) for kind, raw in game["events"]],
            )
            for game in games
        ]
        costs: dict[str, list[int]] = {b: [] for b in ("lift", "place", "completing", "press")}
        moves = equal = 0
        for n, (played, timed) in enumerate(decoded):
            # The first game warms up; ticks and timers are not asked.
            sink: dict[str, list[int]] = costs if n > 0 else {}

            def count(kind: str, cost: int, moved: bool, sink: dict[str, list[int]] = sink) -> None:
                values = sink.get(bucket_of(kind, moved))
                if values is not None:
                    values.append(cost)

            gc.collect()
            recorded = time_game(engine.Arbiter(config), timed, move_played, count)
            moves += len(recorded)
            equal += recorded == played
        out[name] = {"costs": costs, "moves": moves, "equal": equal, "games": len(decoded)}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
