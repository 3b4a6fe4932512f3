"""The engine against the engine of an earlier commit, on the same streams, turn about.

``engine_bench``'s bar for the event that completes a move (≤ 30 µs median) is a time on this
machine, and the machine's speed moves about 2.5× from one day to the next: the same engine took
45-56 µs on one day and 19-22 µs on another. Issue 12 set that bar against its own measurement
of the engine of its day: 75 µs, on the machine it was filed on. Its demand, 30 of 75 µs, is a
ratio of two engines, and a ratio holds on any machine when both engines run on it side by side.

This program writes ``engine_bench``'s streams (the styles with a clock: the engine of the issue's
day knew no occupancy-only board) to a file, unpacks the earlier commit's tree with
``git archive``, and runs ``bench/_replay_engine.py`` on each tree in turn, alternating the order
round by round, so that a change in the machine's speed during the run hits both alike. Each
child process imports its own tree's engine and event classes, and times every call as
``engine_bench`` does. The first game of each stream warms up and is not counted.

Printed per stream and round, then / now: the median completing event and the ratio of the two
(now / then), the medians of the other lifts and places, how many events completed a move (the
rest were completed by a press or a timer), the moves recorded and the games whose moves equal
the played ones (the two must play the same games). The issue's bar as a ratio: 30 / 75 = 0.40.

    python -m bench.engine_then [--rev REV] [--rounds N] [--games N] [--seed S] [--stream NAME ...]

``REV`` defaults to 30d6b4f, the state the issue measured: the last commit before the work on it,
after the landing that brought the relay and the Bluetooth boards it names on the daemon's path.
d0a928c, the commit before that landing, holds the engine before the board seam (occupancy,
recovery and commands changed it); run with ``--rev d0a928c`` it gives the same times. With
``--rev HEAD`` it sets a change not yet committed against the last commit.

When the two engines record other moves, or complete them at other events, on a stream, the
times are not about the same work: the program says where and gives no verdict.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any, Final

import chess

from bench.engine_bench import STREAMS, Game, make_stream
from drivers.events import ClockReading, ClockSide, SquareEmptied, SquareOccupied

ISSUE_REV: Final = "30d6b4f"
"""The last commit before the work on issue 12: its engine is the one the issue measured."""
ISSUE_ENGINES: Final = ("30d6b4f", "d0a928c")
"""Commits whose engine is the issue's (d0a928c's before the board seam, as quick): against any
other, the ratio is printed without the issue's verdict."""
ISSUE_THEN_US: Final = 75.0
"""The issue's median completing event, measured on the machine it was filed on."""
BAR_US: Final = 30.0
"""The bar the issue set on that machine."""
ROOT: Final = Path(__file__).resolve().parent.parent


def encode(games: list[Game]) -> list[dict[str, Any]]:
    """The games as plain JSON: the played moves, and each event as its kind and its fields."""
    out = []
    for game in games:
        events: list[tuple[str, list[Any]]] = []
        for timed in game.events:
            event = timed.event
            if isinstance(event, SquareEmptied):
                raw: list[Any] = ["lift", event.square, event.at]
            elif isinstance(event, SquareOccupied):
                piece = event.piece
                assert isinstance(piece, chess.Piece)  # the streams with a clock know the pieces
                raw = ["place", event.square, piece.symbol(), event.at]
            else:
                assert isinstance(event, ClockReading)
                high = "left" if event.lever_high is ClockSide.LEFT else "right"
                raw = ["clock", event.left, event.right, high, event.at]
            events.append((timed.kind, raw))
        out.append({"moves": [m.uci() for m in game.moves], "events": events})
    return out


def unpack(rev: str, into: Path) -> Path:
    """The tree of ``rev`` (its ``bridge`` and ``drivers``), unpacked under ``into``."""
    archive = into / "then.tar"
    try:
        with archive.open("wb") as f:
            subprocess.run(
                ["git", "-C", str(ROOT), "archive", rev, "bridge", "drivers"],
                stdout=f,
                stderr=subprocess.PIPE,
                check=True,
            )
    except subprocess.CalledProcessError as e:
        raise SystemExit(
            f"engine_then: cannot read commit {rev!r} from this repository "
            f"({e.stderr.decode().strip()}); run it in a clone with the history"
        ) from None
    tree = into / "then"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    return tree


def is_issue_engine(rev: str) -> bool:
    """Whether ``rev`` names one of ``ISSUE_ENGINES`` in this repository."""
    resolved = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return any(resolved.startswith(commit) for commit in ISSUE_ENGINES) if resolved else False


def replay(tree: Path, streams: Path) -> dict[str, Any]:
    """One child's figures for ``tree``."""
    child = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "_replay_engine.py"), str(tree), str(streams)],
        capture_output=True,
        text=True,
        check=False,
    )
    if child.returncode != 0:
        raise SystemExit(f"engine_then: the engine of {tree} failed:\n{child.stderr.strip()}")
    result: dict[str, Any] = json.loads(child.stdout)
    return result


def same_games(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two engines' figures for one stream are about the same work: the same moves
    recorded, the same games equal to the played ones, as many events completing a move."""
    return (
        a["moves"] == b["moves"]
        and a["equal"] == b["equal"]
        and len(a["costs"]["completing"]) == len(b["costs"]["completing"])
    )


def median_us(values: list[int]) -> float:
    return statistics.median(values) / 1000 if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--rev", default=ISSUE_REV, help=f"the earlier commit (default {ISSUE_REV})"
    )
    parser.add_argument("--rounds", type=int, default=3, help="runs of each engine (default 3)")
    parser.add_argument("--games", type=int, default=20, help="games per stream (default 20)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    clocked = [s.name for s in STREAMS if not s.occupancy]
    parser.add_argument(
        "--stream", action="append", choices=clocked, help="only this stream (repeatable)"
    )
    args = parser.parse_args()
    if args.rounds < 1 or args.games < 2:
        parser.error("--rounds must be at least 1 and --games at least 2 (the first warms up)")
    chosen = [s for s in STREAMS if s.name in (args.stream or clocked)]
    with tempfile.TemporaryDirectory() as tmp:
        streams = Path(tmp) / "streams.json"
        streams.write_text(
            json.dumps({s.name: encode(make_stream(s, args.games, args.seed)) for s in chosen})
        )
        trees = {"then": unpack(args.rev, Path(tmp)), "now": ROOT}
        runs: dict[str, list[dict[str, Any]]] = {"then": [], "now": []}
        for round_ in range(args.rounds):
            order = ("then", "now") if round_ % 2 == 0 else ("now", "then")
            for who in order:
                runs[who].append(replay(trees[who], streams))
    print(
        f"engine_then: {args.rev} (then) against this tree (now), {args.rounds} rounds, "
        f"{args.games - 1} games per stream counted, seed {args.seed}"
    )
    print(f"the issue's bar as a ratio of completing medians: {BAR_US:g} / {ISSUE_THEN_US:g}")
    print(f"  = {BAR_US / ISSUE_THEN_US:.2f}\n")
    header = f"{'stream':<13} {'round':>5} {'then µs':>8} {'now µs':>8} {'now/then':>9}"
    print(header + f" {'lift':>11} {'place':>11} {'completing':>11}  moves, games equal")
    worst = 0.0
    differ: list[str] = []
    for spec in chosen:
        for i, (then, now) in enumerate(zip(runs["then"], runs["now"], strict=True)):
            a, b = then[spec.name], now[spec.name]
            ratio = median_us(b["costs"]["completing"]) / median_us(a["costs"]["completing"])
            worst = max(worst, ratio)
            lift = f"{median_us(a['costs']['lift']):.1f}/{median_us(b['costs']['lift']):.1f}"
            place = f"{median_us(a['costs']['place']):.1f}/{median_us(b['costs']['place']):.1f}"
            count = f"{len(a['costs']['completing'])}/{len(b['costs']['completing'])}"
            if not same_games(a, b):
                differ.append(f"{spec.name} round {i + 1}")
            print(
                f"{spec.name:<13} {i + 1:>5} {median_us(a['costs']['completing']):>8.1f} "
                f"{median_us(b['costs']['completing']):>8.1f} {ratio:>9.2f} {lift:>11} "
                f"{place:>11} {count:>11}  {a['moves']}/{b['moves']}, {a['equal']}/{b['equal']} "
                f"of {a['games']}"
            )
    if differ:
        print(
            "\nthe engines recorded other moves, or completed them at other events, in: "
            f"{', '.join(differ)}; not judged"
        )
    elif not is_issue_engine(args.rev):
        print(f"\nworst now/then {worst:.2f} ({args.rev} is not the issue's engine: no verdict)")
    else:
        verdict = "met" if worst <= BAR_US / ISSUE_THEN_US else "MISSED"
        print(
            f"\nworst now/then {worst:.2f}: on the issue's machine, {ISSUE_THEN_US:g} µs × "
            f"{worst:.2f} = {ISSUE_THEN_US * worst:.1f} µs against the bar of {BAR_US:g} µs: "
            f"{verdict}"
        )


if __name__ == "__main__":
    main()
