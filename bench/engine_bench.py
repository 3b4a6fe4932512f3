"""Engine cost per sensor event, next to a snapshot matcher, on the same event stream.

The snapshot matcher is what bridges before us do: after every change, try every legal move of
the game position and compare the resulting placement with the board. Both run in this process,
one after the other on the same stream, so machine noise hits both alike.

The stream is what a DGT board with a clock sends during random games: every move made by hand
in a random style (captures either way, slides, castling king first, promotion through the
pawn), a clock press after it, and the clock's once-a-second time message while a player thinks
(1-10 s per move). Figures are given for all sensor events, for the board's own events (lifts and
places: the matcher's work), and for the events that complete a move (the engine's most costly).

    python -m bench.engine_bench [--games N] [--seed S]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import chess

from bridge.arbiter.engine import Arbiter, EngineConfig
from bridge.arbiter.facts import MovePlayed
from drivers.choreography import Style, steps, to_events
from drivers.events import ClockReading, ClockSide, SquareEmptied, SquareOccupied

Event = SquareEmptied | SquareOccupied | ClockReading


def random_game(rng: random.Random, max_plies: int = 120) -> list[chess.Move]:
    """A random legal game (stops at the end of the game or after ``max_plies``)."""
    board = chess.Board()
    moves: list[chess.Move] = []
    while not board.is_game_over() and len(moves) < max_plies:
        move = rng.choice(list(board.legal_moves))
        moves.append(move)
        board.push(move)
    return moves


def stream(games: list[list[chess.Move]], rng: random.Random) -> list[tuple[int, list[Event]]]:
    """Per game, the sensor events of a table with a clock (White's side on the right)."""
    out: list[tuple[int, list[Event]]] = []
    for game_no, game in enumerate(games):
        board = chess.Board()
        events: list[Event] = []
        times = {ClockSide.LEFT: 3600, ClockSide.RIGHT: 3600}
        high = ClockSide.RIGHT
        t = 0.0
        events.append(_reading(times, high, t))
        for move in game:
            for _ in range(rng.randint(1, 10)):  # thinking: one clock message a second
                t += 1.0
                times[high] -= 1
                events.append(_reading(times, high, t))
            seq = steps(board, move, rng.choice(list(Style)))
            events.extend(to_events(seq, t + 0.1, 0.1))
            t += 0.1 * len(seq) + 0.3
            high = ClockSide.LEFT if high is ClockSide.RIGHT else ClockSide.RIGHT
            events.append(_reading(times, high, t))  # the press
            board.push(move)
        out.append((game_no, events))
    return out


def _reading(times: dict[ClockSide, int], high: ClockSide, at: float) -> ClockReading:
    return ClockReading(
        left=times[ClockSide.LEFT],
        right=times[ClockSide.RIGHT],
        running=True,
        lever_high=high,
        connected=True,
        left_flag=False,
        right_flag=False,
        battery_low=False,
        at=at,
    )


Costs = dict[str, list[int]]
"""Nanoseconds per event: ``all``, ``board`` (lifts and places), ``move`` (completing a move)."""


def run_engine(games: list[tuple[int, list[Event]]]) -> tuple[Costs, int]:
    """Nanoseconds per event for the engine, and the moves it recorded."""
    costs: Costs = {"all": [], "board": [], "move": []}
    recorded = 0
    clock = time.perf_counter_ns
    for _, events in games:
        arbiter = Arbiter(EngineConfig(white_side=ClockSide.RIGHT))
        for event in events:
            t0 = clock()
            deadline = arbiter.next_deadline()
            facts = arbiter.handle_timer(event.at) if deadline and deadline <= event.at else []
            facts += arbiter.feed(event, event.at)
            cost = clock() - t0
            moved = sum(isinstance(f, MovePlayed) for f in facts)
            recorded += moved
            costs["all"].append(cost)
            if not isinstance(event, ClockReading):
                costs["board"].append(cost)
            if moved:
                costs["move"].append(cost)
    return costs, recorded


def run_matcher(games: list[tuple[int, list[Event]]]) -> tuple[Costs, int]:
    """Nanoseconds per event for the snapshot matcher, and the moves it matched."""
    costs: Costs = {"all": [], "board": [], "move": []}
    matched = 0
    clock = time.perf_counter_ns
    for _, events in games:
        board = chess.Board()
        physical = board.piece_map()
        for event in events:
            t0 = clock()
            if isinstance(event, ClockReading):
                costs["all"].append(clock() - t0)
                continue
            if isinstance(event, SquareEmptied):
                physical.pop(event.square, None)
            elif isinstance(event.piece, chess.Piece):
                physical[event.square] = event.piece
            found = False
            for move in board.legal_moves:
                board.push(move)
                if board.piece_map() == physical:
                    found = True
                    break
                board.pop()
            cost = clock() - t0
            matched += found
            costs["all"].append(cost)
            costs["board"].append(cost)
            if found:
                costs["move"].append(cost)
    return costs, matched


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="random games to play (default 20)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    games = stream([random_game(rng) for _ in range(args.games)], rng)
    engine, recorded = run_engine(games)
    matcher, matched = run_matcher(games)
    print(
        f"{args.games} random games: {len(engine['all'])} sensor events, "
        f"{len(engine['board'])} lifts and places; moves recorded by the engine: {recorded}, "
        f"positions matched by the matcher: {matched} (phantom moves on slides included)"
    )
    print(f"{'µs per event':28}{'median':>9}{'p90':>9}{'p99':>9}")
    for label, name, costs in (
        ("engine, all sensor events", "all", engine),
        ("engine, lifts and places", "board", engine),
        ("engine, completing a move", "move", engine),
        ("matcher, lifts and places", "board", matcher),
    ):
        values = costs[name]
        print(
            f"{label:28}{statistics.median(values) / 1000:9.1f}"
            f"{percentile(values, 0.9):9.1f}{percentile(values, 0.99):9.1f}"
        )
    ratio = statistics.median(matcher["board"]) / statistics.median(engine["board"])
    print(f"on lifts and places the engine is {ratio:.0f}x faster than the matcher (medians)")


if __name__ == "__main__":
    main()
