"""The soak, longer: many tables play random games in real time while faults pile up, against
the same tables and games with no fault, in the same run.

The soak is tests/soak.py (its docstring says how it plays and judges): each table an emulated
DGT board with its clock and ``chessbridge run`` with a state directory of its own, one
Mosquitto with persistence, one consumer with a persistent session. For each run (seed
``--seed``, then the next ones), a plan of ``--tables`` random games of ``--plies`` is drawn and
played twice, each time on a new broker and new state directories:

1. **baseline**: the plan without its faults, the tables as in a quiet round;
2. **soak**: the same games with their faults: every daemon SIGKILLed once or twice, 0.2-0.8 s
   after a press, and started again 1-3 s later; the broker stopped for 2-4 s, from shortly
   before one of those kills; one board unplugged and plugged back; about half the replies
   begun before the mover's piece lands, in both.

Printed for each: the tables, the faults made and survived (a kill or an unplug survived when
its table ends exact, the outage when every table does), the moves played, the moves
published (``event/move``, copies dropped by ``(game, epoch, seq)``), the moves lost (plies of
which no move was published) and, of the moves a daemon recorded (its log), those whose event
never arrived (the delivery's share), the wrong ones (a ply's last published move not the one
played), the tables whose events and retained ``game`` both equal the moves played, the
``board_mismatch`` alerts the soak's arbiter settled with a ``reconstruct`` (the order of moves
no fact of the table tells, on a board whose memory holds nothing), the alerts that name a
player and those that do not, and the time from the first move to every table's moves and game
published; for the tables complete in both, the soak's against the baseline's, as ratios (the
slowest table's, and the median table's). Any table that is not exact is listed
with what differs (``--details``: with what it published, its alerts and its daemons' log;
``--verbose``: the daemons log at DEBUG). Figures only: this program asserts nothing.

    python -m bench.soak_bench [--tables N] [--plies N] [--seed S] [--runs N]
                               [--details] [--verbose]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.faults_bench import commit
from bench.latency_bench import compile_bytecode, mosquitto_version
from tests.conftest import Mosquitto
from tests.soak import Outcome, Plan, plan, run


async def measured(soak: Plan, directory: Path, verbose: bool) -> Outcome:
    """``soak`` on a new Mosquitto with persistence in ``directory``."""
    broker = Mosquitto(directory / "broker", persistence=True)
    await broker.astart()
    try:
        return await run(soak, broker, directory, verbose=verbose)
    finally:
        await broker.astop()


def figures(outcome: Outcome) -> dict[str, str]:
    """What one side of a run shows, by name."""
    tables = outcome.tables
    exact = [t for t in tables if t.exact]
    kills = sum(t.kills for t in tables)
    unplugs = sum(t.unplugs for t in tables)
    alerts = [a["data"] for t in tables for a in t.alerts]
    blaming = [a for a in alerts if a.get("color") is not None]
    kinds = sorted({a["kind"] for a in alerts})
    retained = sum(1 for t in tables if t.retained == t.plan.moves)
    return {
        "tables": f"{len(tables)}",
        "faults made": f"kills {kills}, outages {outcome.outages}, unplugs {unplugs}",
        "faults survived": (
            f"kills {sum(t.kills for t in exact)}/{kills}, "
            f"outages {outcome.outages if len(exact) == len(tables) else 0}/{outcome.outages}, "
            f"unplugs {sum(t.unplugs for t in exact)}/{unplugs}"
        ),
        "moves played": f"{sum(len(t.plan.plies) for t in tables)}",
        "moves published": f"{sum(len(t.events) for t in tables)}",
        "moves lost": f"{sum(t.lost for t in tables)}",
        "moves recorded whose event/move never arrived": (
            f"{sum(len(t.undelivered) for t in tables)}"
        ),
        "wrong moves": f"{sum(t.wrong for t in tables)}",
        "tables exact (events and retained game)": f"{len(exact)}/{len(tables)}",
        "retained games exact": f"{retained}/{len(tables)}",
        "board_mismatch settled by the arbiter": f"{sum(len(t.settled) for t in tables)}",
        "alerts naming a player / others": (
            f"{len(blaming)} / {len(alerts) - len(blaming)}"
            + (f" ({', '.join(kinds)})" if kinds else "")
        ),
        "first move -> last move made, last fault over": f"{outcome.played:.1f} s",
        "first move -> every table's moves and game published": (
            f"{outcome.settled:.1f} s" if outcome.complete else "not all (gave up waiting)"
        ),
    }


def show(baseline: Outcome, soak: Outcome, details: bool) -> None:
    base, faulty = figures(baseline), figures(soak)
    print(f"  {'':<48} {'baseline':>24}   {'soak':>24}")
    for key in base:
        print(f"  {key:<48} {base[key]:>24}   {faulty[key]:>24}")
    both = [
        (b.complete_at, s.complete_at)
        for b, s in zip(baseline.tables, soak.tables, strict=True)
        if b.complete_at is not None and s.complete_at is not None
    ]
    if both:
        slowest = max(s for _, s in both) / max(b for b, _ in both)
        median = statistics.median(s / b for b, s in both)
        print(
            f"  {'first move -> a table all published, soak / baseline':<48} "
            f"{f'slowest {slowest:.2f}x, median {median:.2f}x':>24}   "
            f"(the {len(both)} tables complete in both)"
        )
    for name, outcome in (("baseline", baseline), ("soak", soak)):
        for table in outcome.tables:
            if table.exact:
                continue
            print(f"\n  {name}, table {table.plan.index} is not exact:")
            for problem in table.problems[:12]:
                print(f"    {problem}")
            if len(table.problems) > 12:
                print(f"    ... and {len(table.problems) - 12} more")
            if details:
                print(table.report())


async def main_async(args: argparse.Namespace) -> None:
    for seed in range(args.seed, args.seed + args.runs):
        soak = plan(seed, args.tables, args.plies)
        print(f"\n{soak.describe()}\n", flush=True)
        with tempfile.TemporaryDirectory(prefix="bench-soak-") as directory:
            base = Path(directory) / "baseline"
            baseline = await measured(soak.without_faults(), base, args.verbose)
            faulty = await measured(soak, Path(directory) / "soak", args.verbose)
        show(baseline, faulty, args.details)
        print(flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tables", type=int, default=8, help="tables at once (default 8)")
    parser.add_argument("--plies", type=int, default=40, help="plies of each game (default 40)")
    parser.add_argument("--seed", type=int, default=1, help="the first run's seed (default 1)")
    parser.add_argument("--runs", type=int, default=1, help="runs, seeds S, S+1, ... (default 1)")
    parser.add_argument(
        "--details", action="store_true", help="a table not exact: its events, alerts and log"
    )
    parser.add_argument(
        "--verbose", action="store_true", help="the daemons log at DEBUG (shown with --details)"
    )
    args = parser.parse_args()
    logging.getLogger("tests.mqtt").disabled = True  # the broker stops on purpose
    compile_bytecode()
    print(
        f"soak_bench: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{sys.version.split()[0]}, Mosquitto {mosquitto_version()}, commit {commit()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}; {args.tables} tables x {args.plies} plies, "
        f"seeds {args.seed}-{args.seed + args.runs - 1}",
        flush=True,
    )
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
