"""The search for moves made unheard (``bridge.arbiter.lines``): its time against its bar.

A daemon restarted mid-game reads the board whole and searches the lines of legal moves from
the last published position that leave it. The search must not stall the table: it gives up
after ``lines.BUDGET`` moves tried, and the bar is 100 ms per search on this machine. Each case
below (a game, the plies made unheard) is searched ``--runs`` times in this process; printed:
the median time, as a ratio to the bar, the moves tried and what was found. Beside it, for
the cases of up to three plies, the same question answered by trying every line of that length
(what a snapshot matcher that tries every legal move would do for several plies), timed in the
same run: the search's time as a ratio to it. Figures only: this program asserts nothing.

    python -m bench.lines_bench [--runs N]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from typing import Final

import chess

from bridge.arbiter import lines
from bridge.arbiter.positions import squares_of

BAR_MS: Final = 100.0

OPENING: Final = "e4 e5 Nf3 d6 d4"
"""The Opera Game's first five plies: where the restart tests kill the daemon."""

CASES: Final = (
    ("one ply", OPENING, "Bg4"),
    ("three plies, one order", OPENING, "Bg4 dxe5 Bxf3"),
    ("three plies, two orders", "e4 e5 Nf3", "Nc6 Bc4 Nf6"),
    ("six plies, quiet", "e4 e5 Nf3 Nc6 Bb5", "d6 d4 Bd7 Nc3 Nf6 O-O"),
    ("six plies, captures", OPENING, "Bg4 dxe5 Bxf3 Qxf3 dxe5 Bc4"),
    ("eight plies, captures", OPENING, "Bg4 dxe5 Bxf3 Qxf3 dxe5 Bc4 Nf6 Qb3"),
    ("a piece gone", OPENING, ""),
)


def after(sans: str, start: chess.Board | None = None) -> chess.Board:
    board = chess.Board() if start is None else start.copy()
    for san in sans.split():
        board.push_san(san)
    return board


def every_line(board: chess.Board, target: list[chess.Piece | None], plies: int) -> int:
    """How many lines of exactly ``plies`` legal moves leave ``target``: every one tried."""
    if plies == 0:
        return int(all(board.piece_at(sq) == target[sq] for sq in chess.SQUARES))
    count = 0
    for move in list(board.legal_moves):
        board.push(move)
        count += every_line(board, target, plies - 1)
        board.pop()
    return count


def median_ms(runs: int, work: object) -> float:
    assert callable(work)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        work()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="searches per case (default 5)")
    args = parser.parse_args()
    print(f"Python {platform.python_version()} on {platform.machine()}, chess {chess.__version__}")
    print(f"budget {lines.BUDGET} moves tried, at most {lines.MAX_PLIES} plies; bar {BAR_MS} ms")
    print(
        f"{'case':26} {'ms':>7} {'/bar':>6} {'tried':>6}  {'found':28} "
        f"{'every line ms':>13} {'ratio':>7}"
    )
    worst = 0.0
    for name, opening, unheard in CASES:
        start = after(opening)
        target = squares_of(after(unheard, start))
        if not unheard:
            target[chess.H2] = None
        found = lines.search(start, target)
        ms = median_ms(args.runs, lambda: lines.search(start, target))  # noqa: B023
        worst = max(worst, ms)
        if found.exhausted:
            said = f"gave up at {found.plies} plies"
        elif not found.lines:
            said = f"nothing up to {found.plies} plies"
        else:
            said = f"{len(found.lines)} line(s) of {found.plies}"
        plies = len(unheard.split())
        brute = ""
        if 0 < plies <= 3:
            board = start.copy()
            slow = median_ms(1, lambda: every_line(board, target, plies))  # noqa: B023
            brute = f"{slow:13.1f} {slow / ms:6.0f}x"
        print(f"{name:26} {ms:7.1f} {ms / BAR_MS:6.2f} {found.tried:6}  {said:28} {brute}")
    verdict = "met" if worst <= BAR_MS else "MISSED"
    print(f"worst search {worst:.1f} ms = {worst / BAR_MS:.2f} of the bar: {verdict}")


if __name__ == "__main__":
    main()
