"""The LiveChess API on the command line: ``run ... --livechess [HOST:]PORT`` and
``chessbridge livechess``.

Loaded with every command (its options are part of ``chessbridge``'s parser): argparse only,
nothing that serves. What serves is imported when a command serves, and aiohttp (the
``livechess`` extra's) only then.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

from bridge import logs
from bridge.wire.config import LIVECHESS_LISTEN, Config, ConfigError, parse_listen

if TYPE_CHECKING:
    from bridge.livechess.home import RunTable
    from bridge.livechess.local import ServeDaemon

P = TypeVar("P", bound=argparse.ArgumentParser)

MISSING: Final = "the LiveChess API needs aiohttp: pip install 'chessbridge[livechess]'"

DESCRIPTION: Final = """\
Serve the DGT LiveChess local API (a websocket at ws://HOST:PORT/api/v1.0, and GET
/api/v1.0/eboards), so that lichess.org/dgt, chess.com's e-board support and the tools made for
DGT LiveChess work with every board family, until stopped (SIGTERM/Ctrl-C).

With --broker (or without --board): every table on that MQTT broker, in table id order. A
client's setup of another position than a table's game is refused (it must not reset an
arbiter's game) unless --allow-setup.

With --board: that board alone, on this machine, with the embedded MQTT broker (the demo's):
the one command a player at home needs. Then open https://lichess.org/dgt and play."""

EPILOG: Final = """\
At home, a Chessnut Air: chessbridge livechess --board chessnut:'Chessnut Air' (chessbridge scan
gives a board's URI). A table that also publishes to a broker: chessbridge run --board URI
--table ID --livechess. Listens on 127.0.0.1:1982, this machine only, unless --listen or
[livechess] listen says otherwise; web pages may connect from lichess.org, chess.com and this
machine only, unless [livechess] origins says otherwise. docs/livechess.md."""


def _listen(text: str) -> str:
    try:
        parse_listen(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_run_option(run: argparse.ArgumentParser) -> None:
    """``run --livechess [[HOST:]PORT]``."""
    run.add_argument(
        "--livechess",
        nargs="?",
        const=LIVECHESS_LISTEN,
        type=_listen,
        metavar="[HOST:]PORT",
        help="also serve this board as DGT LiveChess does, for lichess.org/dgt, chess.com and "
        "LiveChess's tools (default 127.0.0.1:1982, this machine only; also [livechess] listen "
        "in the config; docs/livechess.md)",
    )


def add_command(sub: argparse._SubParsersAction[P]) -> P:
    """The ``livechess`` command's parser (its ``func`` is the caller's to set)."""
    command = sub.add_parser(
        "livechess",
        help="the DGT LiveChess API (lichess.org/dgt, chess.com) for every table of a broker, "
        "or for one board at home",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = command.add_mutually_exclusive_group()
    source.add_argument(
        "--broker",
        metavar="LIST",
        help="the venue's broker: mqtt://host:1883, mqtts://host:8883, or its nodes separated "
        "by commas (default: the config's [broker] url, else mqtt://localhost:1883)",
    )
    source.add_argument(
        "--board",
        metavar="URI",
        help="serve this board alone, e.g. chessnut:ADDR or dgt:/dev/ttyACM0",
    )
    command.add_argument(
        "--listen",
        type=_listen,
        metavar="[HOST:]PORT",
        help="where to listen (default: [livechess] listen, else 127.0.0.1:1982; 0.0.0.0:1982 "
        "for every address, which is logged)",
    )
    command.add_argument(
        "--allow-setup",
        action="store_true",
        help="with --broker: a client's setup of another position starts a new game at that "
        "table (a new_game request: the broker's ACL must allow this user to send it)",
    )
    command.add_argument(
        "--table", default="home", metavar="ID", help="with --board: the table id (default home)"
    )
    command.add_argument(
        "--config", metavar="FILE", type=Path, help="TOML config ([broker], [livechess], [ble])"
    )
    command.add_argument(
        "--state-dir",
        metavar="DIR",
        type=Path,
        help="with --board: where the game is kept (default ~/.local/state/chessbridge/TABLE)",
    )
    command.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return command


def daemon_server() -> ServeDaemon:
    """What serves a table daemon with the LiveChess API (``run --livechess``).

    Raises:
        ConfigError: aiohttp is not installed.
    """
    try:
        from bridge.livechess.local import serve_daemon
    except ModuleNotFoundError as exc:
        if exc.name != "aiohttp":
            raise
        raise ConfigError(MISSING) from None
    return serve_daemon


async def main(
    args: argparse.Namespace, config: Config, stop: asyncio.Event, run_table: RunTable
) -> int:
    """``chessbridge livechess``: its exit status (2 for a start that cannot work)."""
    listen = args.listen or config.livechess.listen or LIVECHESS_LISTEN
    try:
        if args.board is not None:
            from bridge.livechess.home import serve_home

            return await serve_home(
                args.board, args.table, args.state_dir, listen, config, stop, run_table
            )
        from bridge.livechess.venue import serve_venue
    except ModuleNotFoundError as exc:
        if exc.name != "aiohttp":
            raise
        logs.fatal(MISSING, prog="chessbridge livechess")
        return 2
    broker = args.broker or config.broker.url or "mqtt://localhost:1883"
    return await serve_venue(broker, listen, config, allow_setup=args.allow_setup, stop=stop)
