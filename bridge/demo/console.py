"""``chessbridge emulate FAMILY``: an emulated board played by hand, from stdin or a PGN file.

Every family's emulator is driven the same way, through :class:`drivers.emulation.EmulatedBoard`:
a whole move (``e2e4``, ``Nf3``) is made by hand-like lifts and places
(:mod:`drivers.choreography`); single lifts and places, clock presses, a knock, a set-up from a
FEN let a person stage anything an arbiter may meet. ``--play FILE.pgn`` plays a game the same
way, pressing the clock after every move.

The console keeps the game as the hands know it (the moves made, whether typed whole or piece by
piece), to choreograph the next move and to know whose clock a bare ``press`` is. It judges
nothing: the daemon reading the board does.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Final, TextIO

import chess
import chess.pgn

from bridge.demo.game import WHITE_SIDE, make, press_side
from drivers import FAMILIES
from drivers.choreography import Lift, Step, Style, steps
from drivers.emulation import (
    EmulatedBoard,
    SettableClock,
    Switchable,
    create_emulator,
    has_clock,
)

HELP: Final = """\
commands, one per line:
  e2e4, Nf3, O-O [STYLE]  a legal move, made with the hands; STYLE: plain (default), slide,
                          victim-first, victim-after-lift, promote-via-pawn. No clock press.
  press [white|black|left|right]
                          press the clock (default: the player who just moved; White's
                          button is on the right); a board without a clock says so
  lift e2                 take the piece off e2; it stays in the hand
  place e4 [P]            put a piece on e4 (default: the last one lifted); FEN letters
  knock [e4]              knock over the pieces on and around e4 (default: the last move's square)
  restore                 put every piece back as the game stands
  reset                   set up the start position (the daemon needs new_game for a new game)
  new                     the hands start a new game from the start position (board untouched)
  off, on                 switch a wireless board off and on (its host loses and finds it)
  FEN                     set up that position, e.g. 4k3/8/8/8/8/8/8/4K2R w K - 0 1
  clock 5:00 [4:30]       set White's and Black's time, paused until the next press
  wait 1.5                pause that many seconds (for commands piped in)
  show                    the board as it stands, and the game as the hands know it
  help                    this text
  quit                    stop the emulator"""

DEFAULT_TIME: Final = 300
"""Seconds on each side of a settable clock when the console starts (5 minutes, as the demo)."""

STEP_PAUSE: Final = 0.3
"""Seconds between the hand's steps of a typed move, at speed 1."""

MIN_STEP_PAUSE: Final = 0.2
"""Never quicker: a lift and put-back on one square within 0.15 s is sensor flicker."""

SETUP_PAUSE: Final = 0.05
"""Seconds between the pieces of a set-up (``reset``, a FEN, ``restore``)."""

THINK: Final = 1.5
"""Seconds a player of ``--play`` thinks before each move, at speed 1."""

MAX_WAIT: Final = 3600.0

PROMPT: Final = "emulate> "

_STYLES: Final = {style.value.replace("_", "-"): style for style in Style}
_SIDES: Final = ("left", "right")
_TIME: Final = re.compile(r"(?:(\d+):)?(\d+):(\d\d)|(\d+)")


class ConsoleError(ValueError):
    """A command that cannot be carried out; the message says why and what to type."""


class _QuitError(Exception):
    """``quit`` was typed."""


class Console:
    """A person at an emulated board: each line typed becomes lifts, places and presses."""

    def __init__(
        self, board: EmulatedBoard, *, speed: float = 1.0, out: TextIO = sys.stdout
    ) -> None:
        self.board = board
        self.game = chess.Board()
        self.hand: list[str] = []
        self.out = out
        self.speed = speed
        self._last_square: chess.Square | None = None

    # -- lines ----------------------------------------------------------------------------

    async def execute(self, line: str) -> str:
        """Carry out one command line; returns what to show.

        Raises:
            ConsoleError: the command is unknown or cannot be done now.
        """
        words = line.split()
        if not words:
            return ""
        verb, args = words[0].lower(), words[1:]
        if verb in ("off", "on"):
            args = [verb]
        handlers: dict[str, Callable[[list[str]], Awaitable[str]]] = {
            "press": self._press,
            "lift": self._lift,
            "place": self._place,
            "knock": self._knock,
            "restore": self._restore,
            "reset": self._reset,
            "clock": self._clock,
            "new": self._new,
            "off": self._power,
            "on": self._power,
            "wait": self._wait,
            "show": self._show,
        }
        if verb in ("help", "?"):
            return HELP
        if verb in ("quit", "exit"):
            raise _QuitError
        if verb in handlers:
            return await handlers[verb](args)
        if "/" in words[0]:
            return await self._fen(" ".join(words))
        return await self._move(words[0], args)

    async def run(self, lines: AsyncIterator[str]) -> bool:
        """Execute ``lines`` until they end or ``quit``; true when ``quit`` ended them."""
        async for line in lines:
            try:
                reply = await self.execute(line)
            except ConsoleError as exc:
                reply = f"error: {exc}"
            except _QuitError:
                return True
            if reply:
                self.say(reply)
        return False

    def say(self, text: str) -> None:
        """Show ``text`` (a reply, a move played)."""
        print(text, file=self.out, flush=True)

    # -- whole moves ----------------------------------------------------------------------

    async def _move(self, token: str, args: list[str]) -> str:
        if self.game.is_game_over():
            outcome = self.game.result()
            raise ConsoleError(f"the game is over ({outcome}); type reset or a FEN to go on")
        move = self._parse_move(token)
        style = Style.PLAIN
        if args:
            style = _STYLES.get(args[0].lower())  # type: ignore[assignment]
            if style is None:
                raise ConsoleError(f"unknown style {args[0]!r}; styles: {', '.join(_STYLES)}")
        label = self._label(move)
        done = await self.perform(move, style)
        return f"{label} ({done})"

    async def perform(self, move: chess.Move, style: Style = Style.PLAIN) -> str:
        """Make a legal ``move`` with the hands; returns the steps, e.g. ``lift e2, place e4 P``."""
        seq = steps(self.game, move, style)
        pause = max(MIN_STEP_PAUSE, STEP_PAUSE / self.speed)
        await make(self.board, seq, lambda: pause)
        self.game.push(move)
        self._last_square = move.to_square
        self.hand.clear()
        return ", ".join(_described(step) for step in seq)

    def _parse_move(self, token: str) -> chess.Move:
        with contextlib.suppress(ValueError):
            move = chess.Move.from_uci(token.lower())
            if move in self.game.legal_moves:
                return move
        try:
            return self.game.parse_san(token)
        except ValueError:
            pass
        mover = "White" if self.game.turn == chess.WHITE else "Black"
        raise ConsoleError(
            f"{token!r} is not a command nor a legal move for {mover} here (type help); "
            "to stage an illegal move, make it with lift and place"
        )

    def _label(self, move: chess.Move) -> str:
        number = self.game.fullmove_number
        dots = "." if self.game.turn == chess.WHITE else "..."
        return f"{number}{dots} {self.game.san(move)}"

    # -- one piece at a time --------------------------------------------------------------

    async def _lift(self, args: list[str]) -> str:
        square = _square(args, "lift e2")
        piece = await self.board.lift(chess.square_name(square))
        if piece is None:
            return f"{chess.square_name(square)} was empty"
        self.hand.append(piece)
        return f"lifted {piece} from {chess.square_name(square)}{self._recognised()}"

    async def _place(self, args: list[str]) -> str:
        square = _square(args[:1], "place e4 P")
        if len(args) > 1:
            piece = args[1]
            if len(piece) != 1 or piece not in "PNBRQKpnbrqk":
                raise ConsoleError(
                    f"{piece!r} is not a piece: FEN letters, white upper case (P N B R Q K), "
                    "black lower case"
                )
            if piece in self.hand:
                self.hand.remove(piece)
        elif self.hand:
            piece = self.hand.pop()
        else:
            raise ConsoleError("the hand is empty: say which piece, e.g. place e4 Q")
        await self.board.place(chess.square_name(square), piece)
        return f"placed {piece} on {chess.square_name(square)}{self._recognised()}"

    def _recognised(self) -> str:
        """If the board now shows a legal move of the game, the hands know it was made."""
        standing = self.board.position
        for move in self.game.legal_moves:
            label = self._label(move)
            self.game.push(move)
            after = {chess.square_name(sq): p.symbol() for sq, p in self.game.piece_map().items()}
            if after == standing:
                self._last_square = move.to_square
                self.hand.clear()
                return f": {label} on the board"
            self.game.pop()
        return ""

    # -- the clock ------------------------------------------------------------------------

    async def _press(self, args: list[str]) -> str:
        if not has_clock(self.board):
            return (
                f"the {self.board.scheme} board has no clock: nothing was pressed (its moves "
                "complete when the piece is released)"
            )
        if not args:
            mover = not self.game.turn
            side = press_side(mover)
            who = f"{_colour(mover)}'s, who moved last"
        else:
            word = args[0].lower()
            if word in ("white", "black"):
                side = press_side(word == "white")
            elif word in _SIDES:
                side = word
            else:
                raise ConsoleError(f"press which side? white, black, left or right, not {word!r}")
            who = f"{_colour(side == WHITE_SIDE)}'s"
        await self.board.press(side)
        return f"pressed the clock on the {side}: {who}"

    async def _clock(self, args: list[str]) -> str:
        if not has_clock(self.board):
            raise ConsoleError(f"the {self.board.scheme} board has no clock the hands can set")
        if not 1 <= len(args) <= 2:
            raise ConsoleError("clock WHITE [BLACK], e.g. clock 5:00 or clock 1:30:00 1:29:12")
        white = _seconds(args[0])
        black = _seconds(args[1]) if len(args) > 1 else white
        self.set_clock(white, black)
        return f"clock set: White {_clock_text(white)}, Black {_clock_text(black)}, paused"

    def set_clock(self, white: int, black: int) -> None:
        """Set the clock's times, paused (the next press starts it), if the board has one."""
        if isinstance(self.board, SettableClock) and self.board.has_clock:
            left, right = (black, white) if WHITE_SIDE == "right" else (white, black)
            self.board.set_clock(left, right)

    # -- accidents and set-ups ------------------------------------------------------------

    async def _knock(self, args: list[str]) -> str:
        centre = _square(args, "knock e4") if args else self._last_square or chess.E4
        around = sorted(
            (sq for sq in chess.SQUARES if chess.square_distance(sq, centre) <= 1),
            key=lambda sq: (chess.square_distance(sq, centre), sq),
        )
        standing = self.board.position
        hit = [sq for sq in around if chess.square_name(sq) in standing][:3]
        if not hit:
            return f"nothing stands on or around {chess.square_name(centre)}"
        fallen = []
        for square in hit:
            piece = await self.board.lift(chess.square_name(square))
            fallen.append(f"{piece} {chess.square_name(square)}")
        empty = [sq for sq in around if chess.square_name(sq) not in self.board.position]
        said = f"knocked over {', '.join(fallen)}"
        landing = next((sq for sq in empty if sq not in hit), None)
        if landing is not None:
            first = standing[chess.square_name(hit[0])]
            await self.board.place(chess.square_name(landing), first)
            said += f"; the {first} rolled onto {chess.square_name(landing)}"
        return said + " (restore puts them back)"

    async def _restore(self, args: list[str]) -> str:
        changed = await self.setup(self.game)
        return f"restored the position of the game ({changed} squares changed)"

    async def _reset(self, args: list[str]) -> str:
        game = chess.Board()
        changed = await self.setup(game)
        self.game = game
        self._last_square = None
        return f"start position set up ({changed} squares changed)"

    async def _new(self, args: list[str]) -> str:
        self.game = chess.Board()
        self._last_square = None
        self.hand.clear()
        return "the hands start a new game from the start position"

    async def _power(self, args: list[str]) -> str:
        if not isinstance(self.board, Switchable):
            raise ConsoleError(f"the {self.board.scheme} board cannot be switched off and on")
        if args == ["off"]:
            await self.board.power_off()
            return "switched the board off"
        await self.board.power_on()
        return "switched the board on"

    async def _fen(self, fen: str) -> str:
        try:
            game = chess.Board(fen)
        except ValueError as exc:
            raise ConsoleError(f"not a FEN ({exc}): e.g. 4k3/8/8/8/8/8/8/4K2R w K - 0 1") from exc
        changed = await self.setup(game)
        self.game = game
        self._last_square = None
        return f"set up {game.fen()} ({changed} squares changed)"

    async def setup(self, target: chess.Board) -> int:
        """Make the board show ``target``'s pieces: wrong pieces off first, then the missing on."""
        want = {chess.square_name(sq): p.symbol() for sq, p in target.piece_map().items()}
        standing = self.board.position
        wrong = sorted(sq for sq, piece in standing.items() if want.get(sq) != piece)
        missing = sorted(sq for sq, piece in want.items() if standing.get(sq) != piece)
        for square in wrong:
            await self.board.lift(square)
            await asyncio.sleep(SETUP_PAUSE)
        for square in missing:
            await self.board.place(square, want[square])
            await asyncio.sleep(SETUP_PAUSE)
        self.hand.clear()
        return len(set(wrong) | set(missing))

    # -- the rest -------------------------------------------------------------------------

    async def _wait(self, args: list[str]) -> str:
        try:
            seconds = float(args[0]) if len(args) == 1 else -1.0
        except ValueError:
            seconds = -1.0
        if not 0 <= seconds <= MAX_WAIT:
            raise ConsoleError(f"wait SECONDS, between 0 and {MAX_WAIT:.0f}, e.g. wait 1.5")
        await asyncio.sleep(seconds)
        return ""

    async def _show(self, args: list[str]) -> str:
        standing = chess.BaseBoard.empty()
        for name, symbol in self.board.position.items():
            standing.set_piece_at(chess.parse_square(name), chess.Piece.from_symbol(symbol))
        moves = chess.Board(self.game.root().fen()).variation_san(self.game.move_stack)
        lines = [str(standing), f"game: {self.game.fen()}"]
        if self.game.move_stack:
            lines.append(f"moves: {moves}")
        if self.hand:
            lines.append(f"in the hand: {' '.join(self.hand)}")
        return "\n".join(lines)

    # -- a whole game ---------------------------------------------------------------------

    async def play(self, game: chess.pgn.Game) -> None:
        """Play ``game``'s main line: think, move by hand, press the clock; then stop."""
        start = game.board()
        if start.board_fen() != self.game.board_fen() or start.fen() != self.game.fen():
            await self.setup(start)
            self.game = start
        base = _base_time(game.headers.get("TimeControl", ""))
        if base is not None:
            self.set_clock(base, base)
        for move in game.mainline_moves():
            await asyncio.sleep(THINK / self.speed)
            mover = self.game.turn
            label = self._label(move)
            await self.perform(move)
            self.say(label)
            if not self.game.is_game_over():
                await asyncio.sleep(max(MIN_STEP_PAUSE, STEP_PAUSE / self.speed))
                await self.board.press(press_side(mover))
        result = game.headers.get("Result", "*")
        self.say(f"game over: {result}; the board stays until quit or Ctrl-C")


class _QuietBuilder(chess.pgn.GameBuilder[chess.pgn.Game]):
    """Keeps a PGN's errors in ``game.errors`` without logging them: we report them ourselves."""

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)


def read_pgn(path: Path) -> chess.pgn.Game:
    """The first game of the PGN file at ``path``.

    Raises:
        ConsoleError: unreadable file, no game in it, or an illegal move in its main line.
    """
    try:
        with path.open(encoding="utf-8-sig", errors="replace") as file:
            game = chess.pgn.read_game(file, Visitor=_QuietBuilder)
    except OSError as exc:
        raise ConsoleError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if game is None:
        raise ConsoleError(f"{path} holds no PGN game")
    if game.errors:
        raise ConsoleError(f"{path}: {game.errors[0]}")
    if game.next() is None:
        raise ConsoleError(f"{path}: the game has no moves")
    return game


async def stdin_lines(stream: TextIO = sys.stdin) -> AsyncIterator[str]:
    """Lines typed or piped on ``stream``, read by a thread so the event loop never blocks.

    Works for terminals, pipes and files alike (a file cannot be watched by the event loop). On
    a terminal the lines are read with ``input()`` and the standard ``readline`` module: a
    prompt, line editing and history (the arrow keys), the prompt shown again only once the
    previous line has been carried out.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    terminal = stream is sys.stdin and stream.isatty()
    ready = threading.Event()
    ready.set()

    def put(line: str | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is already closed
            loop.call_soon_threadsafe(queue.put_nowait, line)

    def pump() -> None:
        try:
            if not terminal:
                for line in stream:
                    put(line)
                return
            import readline  # noqa: F401  # gives input() line editing and history

            while ready.wait():
                ready.clear()
                put(input(PROMPT) + "\n")
        except (EOFError, OSError, ValueError):
            pass
        finally:
            put(None)

    threading.Thread(target=pump, name="emulate stdin", daemon=True).start()
    while (line := await queue.get()) is not None:
        yield line
        ready.set()


async def emulate(
    scheme: str,
    *,
    speed: float,
    clock: bool,
    rotated: bool,
    play: Path | None,
    stop: asyncio.Event,
    radio: str | None = None,
    lines: AsyncIterator[str] | None = None,
    out: TextIO = sys.stdout,
) -> int:
    """``chessbridge emulate``: serve the board, play ``play`` if given, then take commands.

    Prints the board's address as the first line of ``out`` (for a Bluetooth LE family, the
    virtual radio's path as the second). Runs until ``quit``, ``stop``, or the end of input on
    a terminal (Ctrl-D); piped input that ends leaves the board up.

    Returns:
        0, or 2 for an unknown family, an option its board lacks, an unusable PGN file or a
        radio socket that cannot be made.
    """
    ready = False
    try:
        game = read_pgn(play) if play is not None else None
        async with contextlib.AsyncExitStack() as stack:
            virtual = None
            family = FAMILIES.get(scheme)
            if family is not None and family.bluetooth_le:
                from drivers.ble.radio import VirtualRadio  # only for Bluetooth LE families

                virtual = await stack.enter_async_context(VirtualRadio(radio))
            board = create_emulator(
                scheme, speed=speed, clock=clock, rotated=rotated, radio=virtual
            )
            await stack.enter_async_context(board)
            print(board.address, file=out, flush=True)
            uri = f"{scheme}:{board.address}"
            how = f"chessbridge run --board {uri} --table t1"
            if virtual is not None:
                print(virtual.path, file=out, flush=True)
                how = f"CHESSBRIDGE_BLE_RADIO={virtual.path} {how}"
            print(
                f"chessbridge: emulated {scheme} board {uri}. To play it: an MQTT broker on "
                "localhost:1883 (chessbridge broker, or Mosquitto), then in two more terminals "
                f"{how} and chessbridge watch; type moves here ({_first_move(board)}; help "
                "lists every command). quit or Ctrl-C stops.",
                file=sys.stderr,
                flush=True,
            )
            ready = True
            await _serve(board, game, speed, stop, lines, out)
    except (ValueError, OSError) as exc:
        if ready:
            raise  # not a bad request: a fault of the console itself
        print(f"chessbridge: {exc}", file=sys.stderr)
        return 2
    return 0


async def _serve(
    board: EmulatedBoard,
    game: chess.pgn.Game | None,
    speed: float,
    stop: asyncio.Event,
    lines: AsyncIterator[str] | None,
    out: TextIO,
) -> None:
    interactive = lines is None and sys.stdin.isatty() and out.isatty()
    source = lines if lines is not None else stdin_lines()
    console = Console(board, speed=speed, out=out)
    console.set_clock(DEFAULT_TIME, DEFAULT_TIME)
    session = asyncio.create_task(_session(console, game, source, interactive))
    stopped = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait({session, stopped}, return_when=asyncio.FIRST_COMPLETED)
    for task in (session, stopped):
        task.cancel()
    await asyncio.gather(session, stopped, return_exceptions=True)
    if session in done:
        session.result()  # a crash of the console is not swallowed


async def _session(
    console: Console,
    game: chess.pgn.Game | None,
    lines: AsyncIterator[str],
    interactive: bool,
) -> None:
    if game is not None:
        console.say("press Enter to play the game (start chessbridge run first)")
        with contextlib.suppress(StopAsyncIteration):
            await anext(aiter(lines))
        await console.play(game)
    quit_typed = await console.run(lines)
    if quit_typed or interactive:
        return
    await asyncio.get_running_loop().create_future()  # piped input ended: serve until stopped


# -- parsing ---------------------------------------------------------------------------------


def _square(args: list[str], example: str) -> chess.Square:
    if len(args) != 1:
        raise ConsoleError(f"which square? e.g. {example}")
    try:
        return chess.parse_square(args[0].lower())
    except ValueError:
        raise ConsoleError(f"{args[0]!r} is not a square (a1 to h8), e.g. {example}") from None


def _seconds(text: str) -> int:
    match = _TIME.fullmatch(text)
    if match is None:
        raise ConsoleError(f"{text!r} is not a time: 5:00, 1:30:00 or seconds")
    hours, minutes, seconds, plain = match.groups()
    if plain is not None:
        return int(plain)
    return int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds)


def _clock_text(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def _base_time(time_control: str) -> int | None:
    """The base seconds of a PGN ``TimeControl`` such as ``300+2`` or ``40/5400:1800``."""
    match = re.match(r"(?:\d+/)?(\d+)(?:\+\d+)?", time_control)
    return int(match.group(1)) if match else None


def _described(step: Step) -> str:
    square = chess.square_name(step.square)
    return f"lift {square}" if isinstance(step, Lift) else f"place {square} {step.piece.symbol()}"


def _first_move(board: EmulatedBoard) -> str:
    if has_clock(board):
        return "e2e4, then press for the clock"
    return f"e2e4: the {board.scheme} board has no clock, a move completes on release"


def _colour(color: chess.Color) -> str:
    return "White" if color == chess.WHITE else "Black"
