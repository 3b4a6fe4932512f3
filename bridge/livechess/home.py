"""``chessbridge livechess --board URI``: a player's own board, served in one command.

The embedded MQTT broker (the demo's) on this machine, the table daemon reading the board and
publishing to it, and the LiveChess API serving the board, ``setup`` allowed (it is the
player's own machine): nothing else to install or start. Open lichess.org/dgt (or chess.com's
e-board settings) and play; ``chessbridge watch`` follows the game on the embedded broker too.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

from bridge import logs
from bridge.demo.broker import BrokerError, BrokerMissingError, start_local
from bridge.mqtt.state_dir import default_state_dir
from bridge.table.daemon import DaemonOptions
from bridge.wire.config import (
    DEFAULT_RULES,
    BrokerConfig,
    Config,
    broker_settings,
    check_rules,
    parse_listen,
)
from drivers import parse_board_uri

PROG: Final = "chessbridge livechess"

RunTable = Callable[[DaemonOptions, asyncio.Event, str], Awaitable[int]]
"""Runs a table daemon with the LiveChess API at ``[HOST:]PORT`` until stopped; its exit status
(``chessbridge run --livechess``'s)."""


async def serve_home(
    board: str,
    table: str,
    state_dir: Path | None,
    listen: str,
    config: Config,
    stop: asyncio.Event,
    run_table: RunTable,
) -> int:
    """Serve ``board`` as table ``table`` until ``stop``; the exit status (``run``'s, or 2 for
    a board URI or rules that cannot be used, or an embedded broker that cannot start)."""
    try:
        uri = parse_board_uri(board)
        rules = check_rules(config.rules or DEFAULT_RULES)
        host, port = parse_listen(listen)
    except ValueError as exc:
        logs.fatal(str(exc), prog=PROG)
        return 2
    try:
        embedded = await start_local(prog=PROG)
    except BrokerMissingError:
        logs.fatal(
            "the embedded MQTT broker is not installed: pip install 'chessbridge[livechess]' "
            "(or, with a broker of your own: chessbridge run --board URI --table ID --livechess)",
            prog=PROG,
        )
        return 2
    except BrokerError as exc:
        logs.fatal(str(exc), prog=PROG)
        return 2
    try:
        options = DaemonOptions(
            board=uri,
            table=table,
            # The embedded broker speaks MQTT 3.1.1 only: the daemon is told so.
            broker=broker_settings(embedded.url, BrokerConfig(mqtt5=False)),
            rules=rules,
            state_dir=state_dir or default_state_dir(table, os.environ),
            config=config,
        )
        shown = f"[{host}]" if ":" in host else host
        print(
            f"{PROG}: board {uri} served at ws://{shown}:{port}/api/v1.0 (the DGT LiveChess "
            "API): open https://lichess.org/dgt, or chess.com's e-board settings, and play. The "
            f"game is also on the embedded MQTT broker {embedded.url} (chessbridge watch "
            f"--broker {embedded.url}). Ctrl-C stops.",
            file=sys.stderr,
            flush=True,
        )
        return await run_table(options, stop, listen)
    finally:
        await embedded.close()
