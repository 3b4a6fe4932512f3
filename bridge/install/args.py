"""The options of ``chessbridge install`` and ``uninstall``, declared without importing them.

The CLI builds every subcommand's parser at each start, ``run`` included: this module imports
argparse only, so the daemon's start does not pay for the installer (its plan, the system
lookups) that it never uses.
"""

from __future__ import annotations

import argparse


def add_arguments(
    install_parser: argparse.ArgumentParser, uninstall_parser: argparse.ArgumentParser
) -> None:
    """The two commands' options (the CLI keeps only their names)."""
    for parser in (install_parser, uninstall_parser):
        parser.add_argument("--table", required=True, metavar="ID", help="table id, e.g. t042")
    install_parser.add_argument(
        "--board", required=True, metavar="URI", help="the board, e.g. dgt:/dev/ttyACM0"
    )
    install_parser.add_argument(
        "--broker", required=True, metavar="URL", help="mqtt://host:1883 or mqtts://host:8883"
    )
    install_parser.add_argument(
        "--username",
        metavar="NAME",
        help="this table's broker account (default: $CHESSBRIDGE_MQTT_USERNAME, else none); "
        "the password comes from $CHESSBRIDGE_MQTT_PASSWORD or is asked for",
    )
    uninstall_parser.add_argument(
        "--purge",
        action="store_true",
        help="also delete the table's state (facts not yet sent, the game) and, with the last "
        "table, the system user",
    )
    for parser in (install_parser, uninstall_parser):
        parser.add_argument(
            "--dry-run", action="store_true", help="print what would be done, change nothing"
        )
        parser.add_argument(
            "--root",
            metavar="DIR",
            default="/",
            help="work on DIR as if it were / (an image being prepared): files are written "
            "there, commands are listed but not run",
        )
