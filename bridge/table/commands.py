"""Arbiter commands carried out on the table: a parsed request in, the response and the changes
out.

The wire layer (:mod:`bridge.wire.commands`) checks a ``request/{command}`` payload and parses it
into a :class:`~bridge.wire.commands.Request` (or refuses it); :func:`carry_out` carries it out
on the table's :class:`~bridge.arbiter.engine.Arbiter`, after the checks that need the game (a
FEN's position, legal UCI moves, plies in range), and returns a :class:`CommandOutcome`: the
response, the facts to publish, and what only the shell can do (a new game id, the assignment to
store, the clock to set, events to replay). A refused request changes nothing.

Pure: no I/O and no clock reads (``now`` comes in). :func:`handle` parses and carries out in one
step; the daemon calls :func:`~bridge.wire.commands.parse` and :func:`carry_out` itself, with the
check for a repeat (:func:`repeat_of`) between them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, assert_never

import chess
import msgspec

from bridge.arbiter import judge
from bridge.arbiter.engine import Arbiter
from bridge.arbiter.facts import Fact, MovePlayed
from bridge.wire import commands as wire
from bridge.wire import payloads
from bridge.wire.commands import (
    AckAlert,
    AdjustClock,
    Assign,
    Assignment,
    ClaimDraw,
    Command,
    CorrectMove,
    NewGame,
    Reconstruct,
    Refusal,
    RejectedError,
    Replay,
    Request,
    Response,
    SetPosition,
    SetResult,
    Takeback,
)
from drivers.events import ClockSide
from drivers.link import ClockSetting


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandOutcome:
    """The answer to one request and the work left to the shell.

    ``silent``: the command name is not a safe topic level, so nothing may be answered.
    ``game_changed``: publish the retained game and save it (facts, if any, first).
    """

    command: str
    response: Response
    silent: bool = False
    facts: tuple[Fact, ...] = ()
    game_changed: bool = False
    new_game: bool = False
    """Give the game a new id (and add it to the response as ``data.game``)."""
    assignment: Assignment | None = None
    """The table's new assignment; ``None``: unchanged."""
    set_clock: ClockSetting | None = None
    replay_from: int | None = None
    """Resend the journaled events from this ``seq`` (and add the counts to the response)."""
    repeated: bool = False
    """A repeat of a request answered before: the same response, nothing changed."""

    @classmethod
    def refused(cls, refusal: Refusal) -> CommandOutcome:
        """The outcome of a request the wire layer refused: its response, no changes."""
        return cls(command=refusal.command, response=refusal.response, silent=refusal.silent)

    @property
    def ok(self) -> bool:
        """Whether the request was accepted."""
        return self.response.status == "ok"

    @property
    def topic_suffix(self) -> str:
        """Where the response goes: ``response/{command}``."""
        return f"{payloads.RESPONSE_PREFIX}/{self.command}"

    def with_data(self, **data: Any) -> CommandOutcome:
        """The same outcome with more fields in the response's ``data``."""
        response = self.response
        merged = msgspec.structs.replace(response, data={**response.data, **data})
        return dataclasses.replace(self, response=merged)

    def failed(self, message: str) -> CommandOutcome:
        """The request refused after all (by the shell): an error response and no changes."""
        return _error(self.command, self.response.transaction, message)


@dataclass(frozen=True, slots=True)
class _Context:
    command: str
    transaction: str
    arbiter: Arbiter
    assignment: Assignment
    now: float

    def ok(self, data: dict[str, Any], **changes: Any) -> CommandOutcome:
        response = wire.ok_response(self.transaction, data)
        return CommandOutcome(command=self.command, response=response, **changes)


def handle(
    command: str,
    payload: bytes,
    *,
    arbiter: Arbiter,
    assignment: Assignment,
    wall_now: float,
    now: float,
) -> CommandOutcome:
    """Parse one request and, if it is acceptable, carry it out on ``arbiter``.

    Args:
        command: the last level of the request topic.
        payload: the request's raw payload.
        arbiter: the table's engine; changed only if the request is accepted.
        assignment: the table's current assignment.
        wall_now: Unix seconds now, for ``expires_at``.
        now: the engine's time (as given to ``Arbiter.feed``).
    """
    parsed = wire.parse(command, payload, wall_now=wall_now)
    if isinstance(parsed, Refusal):
        return CommandOutcome.refused(parsed)
    return carry_out(parsed, arbiter=arbiter, assignment=assignment, now=now)


def carry_out(
    request: Request, *, arbiter: Arbiter, assignment: Assignment, now: float
) -> CommandOutcome:
    """Carry out a parsed request on ``arbiter`` (changed only if the request is accepted)."""
    context = _Context(request.command, request.transaction, arbiter, assignment, now)
    try:
        return _run(request.fields, context)
    except RejectedError as exc:
        return _error(request.command, request.transaction, str(exc))


def repeat_of(request: Request, first: Response, digest: bytes) -> CommandOutcome:
    """The answer to a request whose transaction was answered before (``first``, for a
    request of ``digest``): the first response again, or a refusal if the request differs."""
    if digest == request.digest:
        return CommandOutcome(command=request.command, response=first, repeated=True)
    return _error(
        request.command,
        request.transaction,
        f"transaction {request.transaction!r} already answered a different {request.command} "
        "request; use a new transaction for a new request",
    )


def _error(command: str, transaction: str | None, message: str) -> CommandOutcome:
    return CommandOutcome(command=command, response=wire.error_response(transaction, message))


def _run(fields: Command, ctx: _Context) -> CommandOutcome:
    match fields:
        case NewGame():
            return _new_game(fields, ctx)
        case SetPosition():
            return _set_position(fields, ctx)
        case CorrectMove():
            return _correct_move(fields, ctx)
        case Reconstruct():
            return _reconstruct(fields, ctx)
        case Takeback():
            return _takeback(fields, ctx)
        case SetResult():
            return _set_result(fields, ctx)
        case ClaimDraw():
            return _claim_draw(fields, ctx)
        case AdjustClock():
            return _adjust_clock(fields, ctx)
        case AckAlert():
            return _ack_alert(fields, ctx)
        case Assign():
            return _assign(fields, ctx)
        case Replay():
            return ctx.ok({"from_seq": fields.from_seq}, replay_from=fields.from_seq)
    assert_never(fields)


# --- the commands ------------------------------------------------------------------------------


def _new_game(request: NewGame, ctx: _Context) -> CommandOutcome:
    board = chess.Board() if request.fen is None else _board_from_fen(request.fen)
    given = {
        name: getattr(request, name)
        for name in Assignment.__struct_fields__
        if getattr(request, name) is not None
    }
    assignment = msgspec.structs.replace(ctx.assignment, **given)
    ctx.arbiter.set_game(board)
    facts = _ending(ctx)
    return ctx.ok(
        {"fen": ctx.arbiter.board.fen()},
        facts=facts,
        game_changed=True,
        new_game=True,
        assignment=assignment,
    )


def _set_position(request: SetPosition, ctx: _Context) -> CommandOutcome:
    board = _board_from_fen(request.fen)
    ctx.arbiter.set_game(board, keep_counts=True)
    return ctx.ok({"fen": board.fen()}, facts=_ending(ctx), game_changed=True)


def _correct_move(request: CorrectMove, ctx: _Context) -> CommandOutcome:
    game = ctx.arbiter.board
    moves = list(game.move_stack)
    if not moves:
        raise RejectedError("the game has no moves to correct")
    first = game.root().ply() + 1
    last = first + len(moves) - 1
    if not first <= request.ply <= last:
        raise RejectedError(
            f"ply {request.ply} is not in the game (its moves are plies {first}..{last})"
        )
    index = request.ply - first
    board = game.root()
    for move in moves[:index]:
        board.push(move)
    move = _legal_move(board, request.uci, f"at ply {request.ply}")
    if move == moves[index]:
        return ctx.ok(
            {
                "ply": request.ply,
                "uci": move.uci(),
                "san": board.san(move),
                "changed": False,
                "later_moves": "kept",
                "dropped": [],
                "fen": game.fen(),
            }
        )
    san = board.san_and_push(move)
    later = moves[index + 1 :]
    replayed = board.copy()
    for again in later:
        if not replayed.is_legal(again):
            dropped = [m.uci() for m in later]
            break
        replayed.push(again)
    else:
        board, dropped = replayed, []
    ctx.arbiter.set_game(board, keep_counts=True)
    return ctx.ok(
        {
            "ply": request.ply,
            "uci": move.uci(),
            "san": san,
            "changed": True,
            "later_moves": "cut" if dropped else "replayed",
            "dropped": dropped,
            "fen": board.fen(),
        },
        facts=_ending(ctx),
        game_changed=True,
    )


def _reconstruct(request: Reconstruct, ctx: _Context) -> CommandOutcome:
    arbiter = ctx.arbiter
    if arbiter.result is not None:
        raise RejectedError(f"the game is over ({arbiter.result.result}, {arbiter.result.reason})")
    board = arbiter.board.copy()
    line: list[chess.Move] = []
    for uci in request.moves:
        move = _legal_move(board, uci, f"at ply {board.ply() + 1}")
        board.push(move)
        line.append(move)
    facts = arbiter.reconstruct(line, ctx.now)
    data = {
        "moves": [m.uci() for m in line],
        "san": [f.san for f in facts if isinstance(f, MovePlayed)],
        "fen": arbiter.board.fen(),
    }
    return ctx.ok(data, facts=tuple(facts), game_changed=True)


def _takeback(request: Takeback, ctx: _Context) -> CommandOutcome:
    board = ctx.arbiter.board.copy()
    count = len(board.move_stack)
    if request.plies > count:
        raise RejectedError(
            f"cannot take back {_plies(request.plies)}: the game has {_plies(count)}"
        )
    removed = [board.pop().uci() for _ in range(request.plies)]
    removed.reverse()
    ctx.arbiter.set_game(board, keep_counts=True)
    return ctx.ok(
        {"plies": request.plies, "removed": removed, "fen": board.fen()},
        facts=_ending(ctx),
        game_changed=True,
    )


def _set_result(request: SetResult, ctx: _Context) -> CommandOutcome:
    ended = ctx.arbiter.set_result(request.result, request.reason, request.article, ctx.now)
    data = {"result": ended.result, "reason": ended.reason, "article": ended.article}
    return ctx.ok(data, facts=(ended,), game_changed=True)


def _claim_draw(request: ClaimDraw, ctx: _Context) -> CommandOutcome:
    arbiter = ctx.arbiter
    if arbiter.result is not None:
        raise RejectedError(f"the game is over ({arbiter.result.result}, {arbiter.result.reason})")
    move = None
    if request.move is not None:
        move = _legal_move(arbiter.board, request.move, "for the player having the move")
    ended, alert = arbiter.claim_draw(move, ctx.now)
    if ended is not None:
        data = {
            "valid": True,
            "result": ended.result,
            "reason": ended.reason,
            "article": ended.article,
        }
        return ctx.ok(data, facts=(ended,), game_changed=True)
    assert alert is not None
    data = {
        "valid": False,
        "article": alert.article,
        "penalty": arbiter.edition.claim_penalty_text,
        "alert_id": alert.id,
    }
    return ctx.ok(data, facts=(alert,), game_changed=True)


def _adjust_clock(request: AdjustClock, ctx: _Context) -> CommandOutcome:
    arbiter = ctx.arbiter
    # The engine knows which side is White's (configured, or seen before move 1) but has no
    # public accessor for it yet; clock_times() is None when the clock or its sides are unknown.
    white_side: ClockSide | None = arbiter.white_side
    times = arbiter.clock_times()
    if times is None or white_side is None:
        raise RejectedError(
            "no clock connected, or which clock side is White's is not known yet "
            "(set engine.clock_white_side in the config, or start the clock before move 1)"
        )
    # The clock tells which side runs only by its lever: the side whose lever is up. Running
    # the other side would be shown (and judged) as the wrong player's time.
    lever = times.running
    if request.running is not None and lever is not None and request.running != _name(lever):
        raise RejectedError(
            f"the clock's lever is up on {_name(lever)}'s side: only that side can run; "
            "pause the clock (running null) or let the player press it first"
        )
    black_side = ClockSide.RIGHT if white_side is ClockSide.LEFT else ClockSide.LEFT
    by_side = {white_side: request.white, black_side: request.black}
    runs = {"white": white_side, "black": black_side, None: None}[request.running]
    setting = ClockSetting(
        left=by_side[ClockSide.LEFT],
        right=by_side[ClockSide.RIGHT],
        left_runs=runs is ClockSide.LEFT,
        right_runs=runs is ClockSide.RIGHT,
        pause=runs is None,
    )
    data = {"white": request.white, "black": request.black, "running": request.running}
    return ctx.ok(data, set_clock=setting)


def _ack_alert(request: AckAlert, ctx: _Context) -> CommandOutcome:
    open_ids = [alert.id for alert in ctx.arbiter.alerts]
    if request.id not in open_ids:
        listed = ", ".join(map(str, open_ids)) or "none"
        raise RejectedError(f"no open alert has id {request.id} (open: {listed})")
    ctx.arbiter.ack_alert(request.id)
    return ctx.ok({"id": request.id}, game_changed=True)


def _assign(request: Assign, ctx: _Context) -> CommandOutcome:
    # Every field of the assignment is the request's (the same names, as in ``_new_game``).
    assignment = Assignment(
        **{name: getattr(request, name) for name in Assignment.__struct_fields__}
    )
    return ctx.ok(msgspec.structs.asdict(assignment), game_changed=True, assignment=assignment)


def _name(color: chess.Color) -> str:
    return "white" if color == chess.WHITE else "black"


def _plies(count: int) -> str:
    return f"{count} ply" if count == 1 else f"{count} plies"


# --- chess checks ------------------------------------------------------------------------------


def _board_from_fen(fen: str) -> chess.Board:
    try:
        board = chess.Board(fen)
    except ValueError as exc:
        raise RejectedError(f"invalid FEN {fen!r}: {exc}") from None
    if not board.is_valid():
        status = board.status()
        problems = [str(flag.name).lower() for flag in chess.Status if flag and flag in status]
        raise RejectedError(f"impossible position in FEN {fen!r}: {', '.join(problems)}")
    return board


def _legal_move(board: chess.Board, uci: str, where: str) -> chess.Move:
    try:
        move = chess.Move.from_uci(uci)
    except ValueError:
        raise RejectedError(f"{uci!r} is not a move in UCI notation (e.g. e2e4, e7e8q)") from None
    if not board.is_legal(move):
        raise RejectedError(f"{uci} is not a legal move {where} (position {board.fen()})")
    return move


def _ending(ctx: _Context) -> tuple[Fact, ...]:
    """The game ends at once if the position reached does (mate, stalemate, dead position)."""
    arbiter = ctx.arbiter
    ending = judge.ending_after_move(arbiter.board, arbiter.edition)
    if ending is None:
        return ()
    return (arbiter.set_result(ending.result, ending.reason, ending.article, ctx.now),)
