"""Engine cost per sensor event, next to a snapshot matcher, on the same event stream.

The snapshot matcher is what bridges before us do: after every change, try every legal move of
the game position and compare the resulting placement with the board. Both run in this process,
one after the other on the same recorded stream, so machine noise hits both alike.

    python -m bench.engine_bench [--games N] [--seed S]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import chess

from bridge.choreography import Style, steps, to_events
from bridge.engine import Arbiter, EngineConfig
from bridge.facts import MovePlayed
from drivers.events import SquareEmptied, SquareOccupied

Event = SquareEmptied | SquareOccupied


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
    """Per game, the sensor events of every move made in a random human style, 0.1 s apart."""
    out: list[tuple[int, list[Event]]] = []
    for game_no, game in enumerate(games):
        board = chess.Board()
        events: list[Event] = []
        t = 0.0
        for move in game:
            seq = steps(board, move, rng.choice(list(Style)))
            events.extend(to_events(seq, t, 0.1))
            t += 0.1 * len(seq) + 1.0  # a rest after each move: the dwell passes
            board.push(move)
        out.append((game_no, events))
    return out


def run_engine(games: list[tuple[int, list[Event]]]) -> tuple[list[int], int]:
    """Nanoseconds per event for the engine, and the moves it recorded."""
    costs: list[int] = []
    recorded = 0
    clock = time.perf_counter_ns
    for _, events in games:
        arbiter = Arbiter(EngineConfig())
        for event in events:
            t0 = clock()
            deadline = arbiter.next_deadline()
            facts = arbiter.handle_timer(event.at) if deadline and deadline <= event.at else []
            facts += arbiter.feed(event, event.at)
            costs.append(clock() - t0)
            recorded += sum(isinstance(f, MovePlayed) for f in facts)
        facts = arbiter.handle_timer(1e9)
        recorded += sum(isinstance(f, MovePlayed) for f in facts)
    return costs, recorded


def run_matcher(games: list[tuple[int, list[Event]]]) -> tuple[list[int], int]:
    """Nanoseconds per event for the snapshot matcher, and the moves it matched."""
    costs: list[int] = []
    matched = 0
    clock = time.perf_counter_ns
    for _, events in games:
        board = chess.Board()
        physical = board.piece_map()
        for event in events:
            t0 = clock()
            if isinstance(event, SquareEmptied):
                physical.pop(event.square, None)
            elif event.piece is not None:
                physical[event.square] = event.piece
            for move in board.legal_moves:
                board.push(move)
                if board.piece_map() == physical:
                    matched += 1
                    break
                board.pop()
            costs.append(clock() - t0)
    return costs, matched


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="random games to play (default 20)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    games = stream([random_game(rng) for _ in range(args.games)], rng)
    n_moves = sum(1 for _, events in games for _ in events)
    engine, recorded = run_engine(games)
    matcher, matched = run_matcher(games)
    engine_med = statistics.median(engine) / 1000
    matcher_med = statistics.median(matcher) / 1000
    print(f"events: {n_moves}, moves recorded by engine: {recorded}, by matcher: {matched}")
    print(f"{'':10}{'median µs':>12}{'p90 µs':>10}{'p99 µs':>10}")
    for name, costs in (("engine", engine), ("matcher", matcher)):
        print(
            f"{name:10}{statistics.median(costs) / 1000:12.1f}"
            f"{percentile(costs, 0.9):10.1f}{percentile(costs, 0.99):10.1f}"
        )
    print(f"engine is {matcher_med / engine_med:.0f}x faster than the matcher (medians)")


if __name__ == "__main__":
    main()
