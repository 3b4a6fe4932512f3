"""Where the engine's move-completing event spends its time: each part timed on its own.

For every move of a stream's games (``engine_bench``'s streams, the same seeds), the position
before the move is set up as the engine sees it at the event that completes the move (the game's
squares, the board's squares with the move made, the squares that differ), and each step of the
engine's path is timed on it by itself, many times over: reading the move off the squares
(``find_move``, told whether the side to move is in check, as the engine keeps it per position),
asking whether its piece may go on (``is_ambiguous``), the touch-move check with the mover's own
lift (``touch_breach``, which the engine skips when only the moving piece, not a king, was
touched), the move made with its SAN and the squares it changes (``positions.play``, and
python-chess's pop), the check test, the end-of-game test and the FEN (two ranks redrawn);
``move_changes`` and ``san_body`` alone, which ``play`` does in one with the push, are timed
for comparison. python-chess's own calls for
the same facts are timed alongside (``san``, its push, its check test, a legal-move search,
``is_legal``). The whole event
is then timed as ``engine_bench`` times it, on the same games in this process, so that the sum of
the parts can be set against it: the rest is the engine's bookkeeping (the touch fact, the move
fact, the squares that differ, the state of the turn).

    python -m bench.engine_parts [--stream NAME] [--games N] [--seed S] [--repeat R]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable

import chess

from bench.engine_bench import STREAMS, Run, make_stream, run_engine
from bridge.arbiter import judge, positions, rules

Part = Callable[[], object]


def parts_of(board: chess.Board, move: chess.Move) -> dict[str, Part]:
    """The steps of recording ``move`` on ``board``, each a call that leaves ``board`` as it is."""
    game = [board.piece_at(sq) for sq in chess.SQUARES]
    physical = list(game)
    changes = positions.move_changes(board, move)
    for square, piece in changes:
        physical[square] = piece
    diff = {sq for sq in chess.SQUARES if physical[sq] != game[sq]}
    mover = game[move.from_square]
    assert mover is not None
    touches = [judge.Touch(square=move.from_square, piece=mover, at=0.0)]
    edition = rules.DEFAULT
    after = board.copy(stack=8)
    after.push(move)
    check = after.is_check()
    in_check = board.is_check()
    ranks = [positions.rank_text(physical, rank) for rank in range(8)]
    letters = positions.letters_of(physical)
    redraw = sorted({chess.square_rank(sq) for sq, _ in changes})

    def play_pop() -> None:
        positions.play(board, move)
        board.pop()

    def chess_push_pop() -> None:
        board.push(move)
        board.pop()

    def fen() -> str:
        if len(changes) == 2:  # the usual move: its one or two ranks in one call, as the engine
            positions.redraw(ranks, letters, after.occupied, move.from_square, move.to_square)
        else:
            for rank in redraw:
                ranks[rank] = positions.rank_of(letters, after.occupied, rank)
        return positions.fen(after, ranks)

    return {
        "find_move": lambda: positions.find_move(board, game, physical, diff, in_check),
        "is_ambiguous": lambda: positions.is_ambiguous(board, move, in_check),
        "touch_breach": lambda: judge.touch_breach(board, move, touches, edition, 0.04),
        "play + pop": play_pop,
        "move_changes": lambda: positions.move_changes(board, move),
        "san_body": lambda: positions.san_body(board, move),
        "is_check": lambda: positions.in_check(after),
        "ending_after_move": lambda: judge.ending_after_move(after, edition, check=check),
        "fen (2 ranks redrawn)": fen,
        "python-chess san": lambda: board.san(move),
        "python-chess push + pop": chess_push_pop,
        "python-chess is_check": after.is_check,
        "python-chess legal search": lambda: any(True for _ in after.generate_legal_moves()),
        "python-chess is_legal": lambda: board.is_legal(move),
    }


PATH = (
    "find_move",
    "is_ambiguous",
    "touch_breach",
    "play + pop",
    "is_check",
    "ending_after_move",
    "fen (2 ranks redrawn)",
)
"""The parts on the engine's path (the others are python-chess's, for comparison)."""


def main() -> None:
    """Run the harness from the command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--stream", default="mixed", choices=[s.name for s in STREAMS])
    parser.add_argument("--games", type=int, default=20, help="games (default 20)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--repeat", type=int, default=20, help="calls per part and move")
    args = parser.parse_args()
    spec = next(s for s in STREAMS if s.name == args.stream)
    games = make_stream(spec, args.games, args.seed)
    clock = time.perf_counter_ns
    costs: dict[str, list[float]] = {}
    for game in games:
        board = chess.Board()
        for move in game.moves:
            for name, part in parts_of(board, move).items():
                t0 = clock()
                for _ in range(args.repeat):
                    part()
                costs.setdefault(name, []).append((clock() - t0) / args.repeat / 1000)
            board.push(move)
    run_engine(games[:1], spec.config())  # warm-up
    run = Run()
    for game in games:
        gc.collect()
        run_engine([game], spec.config(), run)
    print(f"{spec.name}: {sum(len(g.moves) for g in games)} moves, medians in µs")
    for name, values in costs.items():
        mark = "" if name in PATH else "   (for comparison)"
        print(f"  {name:28}{statistics.median(values):8.2f}{mark}")
    path = sum(statistics.median(costs[name]) for name in PATH)
    whole = statistics.median(run.costs["completing"]) / 1000
    print(f"  {'sum of the parts on the path':28}{path:8.2f}")
    print(f"  {'engine completing event':28}{whole:8.2f}  (as engine_bench times it)")
    print(f"  {'the rest (bookkeeping)':28}{whole - path:8.2f}")


if __name__ == "__main__":
    main()
