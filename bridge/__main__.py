"""The ``chessbridge`` command line: run, demo, watch, relay, livechess, send, round, emulate,
broker, scan, install, uninstall."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TypeAlias

from bridge import __version__, logs
from bridge.livechess import cli as livechess
from bridge.mqtt.publisher import TableTakenError
from bridge.mqtt.state_dir import OutboxLockedError, OutboxUnavailableError, default_state_dir
from bridge.table.daemon import DaemonOptions, TableDaemon
from bridge.wire.config import (
    DEFAULT_RULES,
    BrokerSettings,
    Config,
    ConfigError,
    broker_settings,
    check_rules,
    decode,
    link_settings,
    with_environment,
)
from drivers import EMULATED, parse_board_uri
from drivers.errors import LinkError

log = logging.getLogger("chessbridge")

EXIT_USAGE = 2
"""Exit status of the other commands for a bad argument or config."""

EXIT_BOARD = 2
"""``run``: the board cannot be reached at start. Not a configuration error: systemd starts the
daemon again (a board switched on late, a cable plugged in late)."""

EXIT_TEMPFAIL = 75
"""``run``: the state directory cannot be used now (another process holds it, or the disk has
no room at all); systemd starts the daemon again (sysexits EX_TEMPFAIL)."""

EXIT_CONFIG = 78
"""``run``: the configuration is wrong (arguments, config file, URIs, TLS files, or a second
daemon for the same table). systemd does not restart it (RestartPreventExitStatus=78, the
unit's); fix the configuration and start it (sysexits EX_CONFIG)."""

DESCRIPTION = """\
chessbridge reads an electronic chess board and its clock, judges every lift, place and clock
press as an arbiter applying the FIDE Laws of Chess would, and publishes the game over MQTT
under chessbridge/1/table/{table}/ (status, board, game, event/move, event/clock, event/touch,
event/alert, event/result)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``chessbridge`` console script."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = _parser()
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exc:
        # A wrong command line of `run` is a configuration error, as systemd must see it.
        if exc.code == EXIT_USAGE and arguments[:1] == ["run"]:
            raise SystemExit(EXIT_CONFIG) from None
        raise
    logs.setup(sys.stderr, verbose=getattr(args, "verbose", False))
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `chessbridge install --dry-run ... | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return code


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its usage errors said as a fatal line is (:func:`logs.say_lines`:
    escaped, at priority err in the journal); its subcommands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        usage = self.format_usage().splitlines()
        logs.say_lines([*usage, f"{self.prog}: error: {message}"])
        raise SystemExit(EXIT_USAGE)


if TYPE_CHECKING:
    # What ``add_subparsers`` returns (argparse has no public name for it).
    Subparsers: TypeAlias = argparse._SubParsersAction[_Parser]


def _parser() -> argparse.ArgumentParser:
    """The command line's parser: one subcommand parser per command, each built by its own
    function below."""
    parser = _Parser(
        prog="chessbridge",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"chessbridge {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in (
        _add_run,
        _add_demo,
        _add_watch,
        _add_relay,
        _add_livechess,
        _add_send,
        _add_round,
        _add_emulate,
        _add_broker_command,
        _add_scan,
        _add_install,
        _add_uninstall,
    ):
        add(sub)
    return parser


def _add_run(sub: Subparsers) -> None:
    run = sub.add_parser(
        "run",
        help="run the daemon for one table",
        description="Read a board and publish its game over MQTT, until stopped (SIGTERM/Ctrl-C).",
        epilog=(
            "Board URIs: dgt:/dev/ttyACM0 (DGT serial, USB or rfcomm), millennium:/dev/ttyUSB0, "
            "certabo:/dev/ttyUSB0 (serial); chessnut:ADDR, pegasus:ADDR, millennium-ble:ADDR "
            "(Bluetooth LE: an address or advertised name). chessbridge scan lists the boards in "
            "reach with their URIs.\n"
            "Broker credentials come from the config file ([broker] username/password) or the "
            "environment (CHESSBRIDGE_MQTT_USERNAME, CHESSBRIDGE_MQTT_PASSWORD), never from the "
            "command line."
        ),
    )
    run.add_argument(
        "--board", required=True, metavar="URI", help="the board, e.g. dgt:/dev/ttyACM0"
    )
    run.add_argument("--table", required=True, metavar="ID", help="table id, the topic level")
    _add_broker(
        run,
        "mqtt://host:1883 or mqtts://host:8883 (default: the config's, else mqtt://localhost:1883)",
    )
    run.add_argument(
        "--rules",
        metavar="EDITION",
        help=f"fide-2018 or fide-1997, optionally -rapid or -blitz (default {DEFAULT_RULES})",
    )
    _add_config(run, "TOML config file")
    _add_state_dir(
        run,
        "where the outbox and the game in progress are kept (default: $STATE_DIRECTORY, "
        "else ~/.local/state/chessbridge/TABLE)",
    )
    livechess.add_run_option(run)
    _add_verbose(run)
    run.set_defaults(func=_cmd_run)


def _add_demo(sub: Subparsers) -> None:
    demo = sub.add_parser(
        "demo",
        help="a whole table in one process: broker, emulated board, daemon, live view",
        description="Start an embedded MQTT broker, an emulated DGT board with a clock, the daemon "
        "and a live terminal view, and play a real master game by hand-like lifts, places and "
        "clock presses, with a touch-move breach and an illegal move staged (and announced) in "
        "it. The broker's address is printed so that watch, mosquitto_sub or a relay can join. "
        "Exits 0 when the game is over or when stopped.",
    )
    demo.add_argument("--speed", type=float, default=1.0, help="play X times faster (default 1)")
    demo.add_argument("--table", default="demo", help="table id (default demo)")
    _add_broker(
        demo,
        "publish to this broker instead of the embedded one (credentials: --config or "
        "the environment)",
    )
    demo.add_argument(
        "--port",
        type=int,
        default=1883,
        help="the embedded broker's loopback port (default 1883, else a free one; 0: any)",
    )
    _add_config(demo, "TOML config ([broker])")
    demo.add_argument("--no-view", action="store_true", help="no live view; log moves instead")
    _add_verbose(demo)
    demo.set_defaults(func=_cmd_demo)


def _add_watch(sub: Subparsers) -> None:
    watch = sub.add_parser(
        "watch",
        help="live terminal view of one or all tables",
        description="Subscribe to a broker and show the tables' games live.",
    )
    watch.add_argument("--table", metavar="ID", help="only this table (default: all)")
    _add_broker(
        watch, "broker URL (default: the config's [broker] url, else mqtt://localhost:1883)"
    )
    _add_config(watch, "TOML config ([broker] url and credentials)")
    watch.add_argument("--plain", action="store_true", help="one line per event, no screen")
    watch.add_argument(
        "--room",
        action="store_true",
        help="one line per table (board, players, last move, clocks, open alerts, link), in "
        "columns when the terminal is wide: 100 tables fit a 180x40 terminal; a table with an "
        "open alert is never the one left off a screen too small",
    )
    watch.set_defaults(func=_cmd_watch)


def _add_relay(sub: Subparsers) -> None:
    relay = sub.add_parser(
        "relay",
        help="every table as live PGN (and pushed to lichess), and the arbiters' web page",
        description="Follow every table on the broker and serve the round as live PGN "
        "(/round.pgn, /table/ID.pgn, with ETag/304), optionally pushed to a lichess broadcast "
        "round, and the arbiters' page (/), until stopped (SIGTERM/Ctrl-C).",
        epilog="Settings ([relay], [relay.lichess]): docs/relay.example.toml. The relay's MQTT "
        "account and the arbiters' page password come from the config file or the environment "
        "(CHESSBRIDGE_MQTT_USERNAME/_PASSWORD, CHESSBRIDGE_RELAY_PASSWORD); the lichess token "
        "from CHESSBRIDGE_LICHESS_TOKEN or the file named by [relay.lichess] token_file, never "
        "from the config file itself. None from the command line.",
    )
    _add_broker(relay, "mqtt://host:1883 or mqtts://host:8883")
    relay.add_argument(
        "--http", required=True, metavar="HOST:PORT", help="where to serve, e.g. 0.0.0.0:8080"
    )
    _add_config(relay, "TOML config file")
    _add_state_dir(
        relay,
        "where the relay keeps what it received (default: $STATE_DIRECTORY, else "
        "~/.local/state/chessbridge/relay)",
    )
    _add_verbose(relay)
    relay.set_defaults(func=_cmd_relay)


def _add_livechess(sub: Subparsers) -> None:
    livechess.add_command(sub).set_defaults(func=_cmd_livechess)


def _add_send(sub: Subparsers) -> None:
    send = sub.add_parser(
        "send",
        help="send an arbiter's command to a table and print its response",
        description="Publish request/COMMAND to TABLE (transaction and expiry filled in) and "
        "print the table's response as JSON. Exit 0 when the table accepted it, 1 when it "
        "refused it or did not answer, 2 for a command that cannot be sent.",
        epilog="Examples: chessbridge send t042 ack_alert id=3 | chessbridge send t042 "
        "set_result result=1-0 'reason=Black resigned' | chessbridge send t042 takeback plies=2 "
        "| chessbridge send t042 reconstruct moves='c8g4 d4e5 g4f3' (a list: space-separated). "
        "The fields of each command: docs/commands.md.",
    )
    send.add_argument("table", metavar="TABLE", help="table id")
    send.add_argument("command", metavar="COMMAND", help="e.g. ack_alert, set_result, replay")
    send.add_argument("fields", metavar="FIELD=VALUE", nargs="*", help="the command's fields")
    _add_broker(send, "broker URL (default: the config's, else localhost)")
    _add_config(send, "TOML config (credentials)")
    send.add_argument(
        "--wait", type=float, default=10.0, metavar="S", help="seconds to wait (default 10)"
    )
    send.set_defaults(func=_cmd_send)


def _add_round(sub: Subparsers) -> None:
    round_ = sub.add_parser(
        "round",
        help="a round's pairings to the tables (start), its results back (results)",
        description="A round from the pairing program to the boards, and its results back: "
        "docs/rounds.md.",
    )
    commands = round_.add_subparsers(dest="round_command", metavar="ACTION", required=True)
    start = commands.add_parser(
        "start",
        help="assign each board's players to its table",
        description="Read the round's pairings (a FIDE TRF-16 file or a CSV: board, white, "
        "black, white_fide_id, black_fide_id, white_rating, black_rating), send each board's "
        "table assign (and new_game with --new-games) where it differs, and print a line per "
        "board: ok, refused (why) or no answer. Exit 0 when every table has its assignment, 1 "
        "when one refused or did not answer, 2 for a file that cannot be used (nothing sent).",
        epilog="Board N goes to table bN unless --venue names a venue map (TOML: [boards] "
        '1 = "t001"). TRF boards are numbered as FIDE\'s pairing rules list them: the higher '
        "score first, then the sum of scores, then the higher-ranked player's start rank.",
    )
    start.add_argument("--pairings", required=True, type=Path, metavar="FILE", help="TRF or CSV")
    start.add_argument("--round", required=True, type=int, metavar="N", help="the round")
    start.add_argument(
        "--venue", "--map", type=Path, metavar="FILE", help="board -> table map (TOML)"
    )
    start.add_argument("--event", metavar="TEXT", help="the event (default: the TRF's 012 line)")
    start.add_argument(
        "--new-games", action="store_true", help="also start a new game at each table assigned"
    )
    start.add_argument("--dry-run", action="store_true", help="print what would be sent")
    _add_broker(start, "broker URL (default: the config's, else localhost)")
    _add_config(start, "TOML config (credentials)")
    start.add_argument(
        "--wait", type=float, default=10.0, metavar="S", help="seconds to wait (default 10)"
    )
    start.set_defaults(func=_cmd_round_start)
    results = commands.add_parser(
        "results",
        help="the round's results from the tables, for the pairing program",
        description="Read every table's retained game of round N and write the results: with "
        "--format trf, the --pairings TRF with round N's column filled in; else CSV. Exit 0 "
        "when every board has a result, 1 when one has not (written * or left unplayed).",
    )
    results.add_argument("--round", required=True, type=int, metavar="N", help="the round")
    results.add_argument(
        "--format", choices=("trf", "csv"), default="csv", help="the output (default csv)"
    )
    results.add_argument(
        "--pairings", type=Path, metavar="FILE", help="the round's pairings (TRF or CSV)"
    )
    results.add_argument(
        "--output", type=Path, metavar="FILE", help="write here (default: standard output)"
    )
    _add_broker(results, "broker URL (default: the config's, else localhost)")
    _add_config(results, "TOML config (credentials)")
    results.add_argument(
        "--wait", type=float, default=10.0, metavar="S", help="seconds to wait (default 10)"
    )
    results.set_defaults(func=_cmd_round_results)


def _add_emulate(sub: Subparsers) -> None:
    emulate = sub.add_parser(
        "emulate",
        help="an emulated board to play by hand, for trying without hardware",
        description="Emulate a board: a serial family on a pseudo-terminal (prints the device "
        "path), a Bluetooth LE family on a virtual radio socket (prints the board's address, "
        "then the radio's path, for [ble] radio or CHESSBRIDGE_BLE_RADIO). Then play it by "
        "typing commands on stdin (e2e4, press, lift e2, place e4 P, knock, reset, a FEN; help "
        "lists them all), or play a PGN game with --play.",
    )
    emulate.add_argument("family", choices=EMULATED, help="board family")
    emulate.add_argument(
        "--play", metavar="FILE.pgn", type=Path, help="play this game's moves, then take commands"
    )
    emulate.add_argument(
        "--speed", type=float, default=1.0, help="play and run the clock X times faster"
    )
    emulate.add_argument("--no-clock", action="store_true", help="no clock behind the board")
    emulate.add_argument("--rotated", action="store_true", help="board set up from Black's side")
    emulate.add_argument(
        "--radio",
        metavar="PATH",
        help="Bluetooth LE: the virtual radio socket (default: a new one)",
    )
    emulate.set_defaults(func=_cmd_emulate)


def _add_broker_command(sub: Subparsers) -> None:
    broker = sub.add_parser(
        "broker",
        help="an MQTT broker for trying chessbridge on one machine (the demo extra's)",
        description="Run the demo's embedded MQTT broker (amqtt, installed by the demo extra: "
        "pip install 'chessbridge[demo]') until stopped (SIGTERM/Ctrl-C), and print its URL. "
        "Anonymous and in memory: for emulate + run + watch on one machine. At 127.0.0.1:1883 "
        "(the default), run, watch and relay find it with no --broker. A venue runs Mosquitto.",
    )
    broker.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1; 0.0.0.0: every interface)",
    )
    broker.add_argument(
        "--port", type=int, default=1883, help="the port (default 1883; 0: any free one)"
    )
    broker.set_defaults(func=_cmd_broker)


def _add_scan(sub: Subparsers) -> None:
    scan = sub.add_parser(
        "scan",
        help="the boards in reach, each with its board URI",
        description="List the boards in reach, one per line: the board URI to give run --board, "
        "the board's name, and what it said of itself. Serial boards: every serial port is asked "
        "by each serial family in turn (certabo, millennium, dgt); a USB one is followed by an "
        "indented udev rule that gives it a stable name (/dev/FAMILY-board-SERIAL) for "
        "/etc/udev/rules.d. Bluetooth LE boards: those advertising nearby (through the system's "
        "Bluetooth, or the virtual radio of [ble] radio / CHESSBRIDGE_BLE_RADIO).",
    )
    scan.add_argument(
        "--timeout",
        type=float,
        default=5.0,
        help="seconds to listen for Bluetooth LE boards (default 5)",
    )
    scan.add_argument(
        "--port",
        metavar="PATH",
        action="append",
        help="ask only this serial port (repeatable; default: every port under "
        "/dev/serial/by-id, and the ttyACM*, ttyUSB*, rfcomm* ports none of those names)",
    )
    _add_config(scan, "TOML config ([ble] radio)")
    scan.set_defaults(func=_cmd_scan)


def _add_install(sub: Subparsers) -> None:
    install = sub.add_parser(
        "install",
        help="set up this Pi's service for a table (as root)",
        description="Create the system user, the table's config and credentials file, its state "
        "directory, a udev name for a USB board or, for a Bluetooth LE board, a drop-in giving "
        "the service group bluetooth, install the systemd unit, then enable and start "
        "chessbridge@TABLE. Running it again changes only what differs.",
    )
    install.add_argument("--table", required=True, metavar="ID", help="table id, e.g. t042")
    install.add_argument(
        "--board", required=True, metavar="URI", help="the board, e.g. dgt:/dev/ttyACM0"
    )
    install.add_argument(
        "--broker", required=True, metavar="URL", help="mqtt://host:1883 or mqtts://host:8883"
    )
    install.add_argument(
        "--username",
        metavar="NAME",
        help="this table's broker account (default: $CHESSBRIDGE_MQTT_USERNAME, else none); "
        "the password comes from $CHESSBRIDGE_MQTT_PASSWORD or is asked for",
    )
    _add_install_target(install)
    install.set_defaults(func=_cmd_install)


def _add_uninstall(sub: Subparsers) -> None:
    uninstall = sub.add_parser(
        "uninstall",
        help="remove a table's service from this Pi (as root)",
        description="Stop and disable chessbridge@TABLE and remove its files; the state "
        "directory stays unless --purge.",
    )
    uninstall.add_argument("--table", required=True, metavar="ID", help="table id, e.g. t042")
    uninstall.add_argument(
        "--purge",
        action="store_true",
        help="also delete the table's state (facts not yet sent, the game) and, with the last "
        "table, the system user",
    )
    _add_install_target(uninstall)
    uninstall.set_defaults(func=_cmd_uninstall)


# -- options several commands share, each with its command's own help text -----------------


def _add_broker(command: argparse.ArgumentParser, help_text: str) -> None:
    command.add_argument("--broker", metavar="URL", help=help_text)


def _add_config(command: argparse.ArgumentParser, help_text: str) -> None:
    command.add_argument("--config", metavar="FILE", type=Path, help=help_text)


def _add_state_dir(command: argparse.ArgumentParser, help_text: str) -> None:
    command.add_argument("--state-dir", metavar="DIR", type=Path, help=help_text)


def _add_verbose(command: argparse.ArgumentParser) -> None:
    command.add_argument("-v", "--verbose", action="store_true", help="debug logging")


def _add_install_target(command: argparse.ArgumentParser) -> None:
    """``install`` and ``uninstall``: a dry run, and the root they work on."""
    command.add_argument(
        "--dry-run", action="store_true", help="print what would be done, change nothing"
    )
    command.add_argument(
        "--root",
        metavar="DIR",
        default="/",
        help="work on DIR as if it were / (an image being prepared): files are written "
        "there, commands are listed but not run",
    )


# -- run ------------------------------------------------------------------------------------


def _load_config(path: Path | None) -> Config:
    if path is None:
        return with_environment(Config(), os.environ)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    return with_environment(decode(raw, str(path)), os.environ)


def _config_or_say(args: argparse.Namespace) -> Config | None:
    """The config of ``--config`` (or the environment's alone); ``None`` once said why not."""
    try:
        return _load_config(args.config)
    except ConfigError as exc:
        logs.fatal(str(exc))
        return None


def _broker(args: argparse.Namespace, config: Config) -> str:
    """The broker's URL: ``--broker``, else the config's, else the local one."""
    url: str = args.broker or config.broker.url or "mqtt://localhost:1883"
    return url


def _broker_settings_or_say(
    args: argparse.Namespace, config: Config, prog: str
) -> BrokerSettings | None:
    """The broker's settings (``--broker`` or the config's URL, the config's ``[broker]``);
    ``None`` once said why not."""
    try:
        return broker_settings(_broker(args, config), config.broker)
    except ValueError as exc:
        logs.fatal(str(exc), prog=prog)
        return None


def _cmd_run(args: argparse.Namespace) -> int:
    try:
        config = _load_config(args.config)
        board = parse_board_uri(args.board)
        rules = check_rules(args.rules or config.rules or DEFAULT_RULES)
        broker = broker_settings(_broker(args, config), config.broker)
    except (ConfigError, ValueError) as exc:
        logs.fatal(str(exc))
        return EXIT_CONFIG
    state_dir = args.state_dir or default_state_dir(args.table, os.environ)
    options = DaemonOptions(
        board=board,
        table=args.table,
        broker=broker,
        rules=rules,
        state_dir=state_dir,
        config=config,
    )
    listen = args.livechess or config.livechess.listen
    return _until_signalled(lambda stop: _run(options, stop, listen))


async def _run(options: DaemonOptions, stop: asyncio.Event, livechess_at: str | None = None) -> int:
    """Run the table daemon until ``stop`` (with the LiveChess API at ``livechess_at``)."""
    try:
        daemon = TableDaemon(options)
    except (OutboxLockedError, OutboxUnavailableError, OSError) as exc:
        logs.fatal(str(exc))
        return EXIT_TEMPFAIL
    except ValueError as exc:  # the table id, the TLS files
        logs.fatal(str(exc))
        return EXIT_CONFIG
    try:
        if livechess_at is None:
            await daemon.run(stop)
        else:
            await livechess.daemon_server()(daemon, livechess_at, options.config, stop)
    except LinkError as exc:
        logs.fatal(str(exc))
        return EXIT_BOARD
    except (TableTakenError, ConfigError) as exc:  # ConfigError: the LiveChess API's address
        logs.fatal(str(exc))
        return EXIT_CONFIG
    return 0


def _until_signalled(main: Callable[[asyncio.Event], Awaitable[int]]) -> int:
    """Run ``main(stop)`` on a new event loop, ``stop`` set by SIGINT or SIGTERM; its exit code."""

    async def run() -> int:
        return await main(_stop_on_signals())

    return asyncio.run(run())


def _stop_on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    with contextlib.suppress(NotImplementedError, AttributeError):
        loop.add_signal_handler(signal.SIGUSR1, _say_what_waits)
    return stop


def _say_what_waits() -> None:
    """SIGUSR1: log every task of the event loop and where it waits (a daemon that hangs)."""
    tasks = asyncio.all_tasks()
    log = logging.getLogger("chessbridge")
    log.warning("SIGUSR1: %d tasks", len(tasks))
    for task in sorted(tasks, key=lambda t: t.get_name()):
        frames = task.get_stack()
        where = " <- ".join(
            f"{f.f_code.co_name} ({Path(f.f_code.co_filename).name}:{f.f_lineno})"
            for f in reversed(frames)
        )
        log.warning("task %s: %s", task.get_name(), where or "(not started or done)")


# -- demo, watch, emulate -------------------------------------------------------------------


def _cmd_demo(args: argparse.Namespace) -> int:
    from bridge.demo.run import DemoError, DemoOptions, run_demo

    if args.speed <= 0 or not 0 <= args.port <= 65535:
        logs.fatal("--speed must be positive and --port 0 to 65535")
        return EXIT_USAGE
    try:
        options = DemoOptions(
            speed=args.speed,
            table=args.table,
            view=not args.no_view,
            broker=args.broker,
            port=args.port,
            config=_load_config(args.config),
        )
    except ConfigError as exc:
        logs.fatal(str(exc))
        return EXIT_USAGE

    try:
        return _until_signalled(lambda stop: run_demo(options, stop=stop))
    except DemoError as exc:
        logs.fatal(str(exc))
        return EXIT_USAGE


def _cmd_watch(args: argparse.Namespace) -> int:
    from bridge.views.shell import watch

    config = _config_or_say(args)
    if config is None:
        return EXIT_USAGE
    broker = _broker_settings_or_say(args, config, "chessbridge watch")
    if broker is None:
        return EXIT_USAGE

    return _until_signalled(
        lambda stop: watch(
            broker,
            table=args.table,
            plain=args.plain,
            stop=stop,  # SIGTERM and Ctrl-C end the view cleanly, exit 0
            room_view=args.room,
        )
    )


def _cmd_relay(args: argparse.Namespace) -> int:
    config = _config_or_say(args)
    if config is None:
        return EXIT_USAGE
    from bridge.relay.run import run_relay  # aiohttp: only the relay needs it

    return _until_signalled(
        lambda stop: run_relay(
            broker=_broker(args, config),
            http=args.http,
            config=config,
            state_dir=args.state_dir,
            stop=stop,
        )
    )


def _cmd_livechess(args: argparse.Namespace) -> int:
    config = _config_or_say(args)
    if config is None:
        return EXIT_USAGE
    return _until_signalled(lambda stop: livechess.main(args, config, stop, _run))


def _cmd_send(args: argparse.Namespace) -> int:
    config = _config_or_say(args)
    if config is None:
        return EXIT_USAGE
    broker = _broker_settings_or_say(args, config, "chessbridge send")
    if broker is None:
        return EXIT_USAGE
    from bridge.views.send import send

    return asyncio.run(send(args.table, args.command, args.fields, broker=broker, wait=args.wait))


def _cmd_round_start(args: argparse.Namespace) -> int:
    config = _config_or_say(args)
    if config is None:
        return EXIT_USAGE
    broker = _broker_settings_or_say(args, config, "chessbridge round start")
    if broker is None:
        return EXIT_USAGE
    from bridge.views.round import start

    return asyncio.run(
        start(
            args.pairings,
            args.round,
            broker=broker,
            venue_path=args.venue,
            event=args.event,
            new_games=args.new_games,
            dry_run=args.dry_run,
            wait=args.wait,
        )
    )


def _cmd_round_results(args: argparse.Namespace) -> int:
    config = _config_or_say(args)
    if config is None:
        return EXIT_USAGE
    broker = _broker_settings_or_say(args, config, "chessbridge round results")
    if broker is None:
        return EXIT_USAGE
    from bridge.views.round import results

    return asyncio.run(
        results(
            args.round,
            broker=broker,
            pairings_path=args.pairings,
            fmt=args.format,
            output=args.output,
            wait=args.wait,
        )
    )


def _cmd_emulate(args: argparse.Namespace) -> int:
    from bridge.demo.console import emulate

    if args.speed <= 0:
        logs.fatal("--speed must be positive")
        return EXIT_USAGE

    return _until_signalled(
        lambda stop: emulate(
            args.family,
            speed=args.speed,
            clock=not args.no_clock,
            rotated=args.rotated,
            play=args.play,
            radio=args.radio,
            stop=stop,
        )
    )


def _cmd_broker(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        print("chessbridge: --port must be 0 to 65535", file=sys.stderr)
        return EXIT_USAGE
    from bridge.demo.broker import serve  # amqtt (the demo extra): only this command loads it

    return _until_signalled(lambda stop: serve(args.host, args.port, stop))


def _cmd_scan(args: argparse.Namespace) -> int:
    from bridge.scan import scan

    config = _config_or_say(args)
    if config is None:
        return EXIT_USAGE
    return asyncio.run(scan(link_settings(config), args.timeout, args.port))


def _cmd_install(args: argparse.Namespace) -> int:
    from bridge.install.shell import install

    return install(args)


def _cmd_uninstall(args: argparse.Namespace) -> int:
    from bridge.install.shell import uninstall

    return uninstall(args)


if __name__ == "__main__":
    sys.exit(main())
