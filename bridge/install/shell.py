"""``chessbridge install`` / ``uninstall``: set up (or remove) a Pi's service for one table.

Looks at the system, gets the steps from :mod:`bridge.install.plan`, and prints them
(``--dry-run``) or carries them out. ``--root DIR`` works on a folder standing for ``/`` (an
image being prepared, the tests): files are written there and the commands (``useradd``,
``udevadm``, ``systemctl``) are listed, not run, since they would act on this machine.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import importlib.resources
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

from bridge.install import plan
from bridge.install.plan import InstallRequest, Observed, Step, UsbIds
from bridge.wire.config import broker_settings
from drivers import parse_board_uri

EXIT_USAGE: Final = 2
EXIT_FAILED: Final = 1
_PROG: Final = "chessbridge"


class InstallError(Exception):
    """The request cannot be carried out; the message says why and what to do."""


def install(args: argparse.Namespace) -> int:
    """``chessbridge install``; returns the exit status."""
    root = Path(args.root)
    try:
        plan.check_privileges(os.geteuid(), live=root == Path("/"), dry_run=args.dry_run)
        table = plan.check_table(args.table)
        board = parse_board_uri(args.board)
        if board.address.startswith("/") and not _under(root, board.address).exists():
            raise InstallError(
                f"board path {board.address} does not exist: plug the board in, or give its "
                "path (ls /dev/ttyACM* /dev/serial/by-id/)"
            )
        broker_settings(args.broker)  # one URL, or the nodes of a cluster
        plan.check_groups(board, _groups(root))
        command = _command()
        if root == Path("/"):
            plan.check_command(command)
        username, password = _credentials(args.username)
        request = InstallRequest(
            table=table,
            board=board,
            broker=args.broker,
            username=username,
            password=password,
            command=command,
        )
    except (InstallError, ValueError) as exc:
        _say(str(exc))
        return EXIT_USAGE
    usb = _usb_ids(root, board.address) if board.address.startswith("/") else None
    observed = _observe(root, table, usb)
    steps = plan.install_steps(request, _packaged_unit(), observed)
    named = f", named /dev/chessbridge-{table} by udev" if usb is not None else ""
    if plan.bluetooth_le(board):
        named += f" (Bluetooth LE: the service gets group {plan.BLUETOOTH_GROUP})"
    print(f"{_PROG} install: table {table}, board {board}{named}, broker {args.broker}")
    return _carry_out(steps, root, dry_run=args.dry_run)


def uninstall(args: argparse.Namespace) -> int:
    """``chessbridge uninstall``; returns the exit status."""
    root = Path(args.root)
    try:
        plan.check_privileges(os.geteuid(), live=root == Path("/"), dry_run=args.dry_run)
        table = plan.check_table(args.table)
    except (InstallError, ValueError) as exc:
        _say(str(exc))
        return EXIT_USAGE
    observed = _observe(root, table, None)
    steps = plan.uninstall_steps(table, observed, purge=args.purge)
    print(f"{_PROG} uninstall: table {table}")
    if not steps:
        print(f"nothing to do: table {table} is not installed")
        return 0
    return _carry_out(steps, root, dry_run=args.dry_run)


# -- checks ---------------------------------------------------------------------------------


def _credentials(username: str | None) -> tuple[str | None, str | None]:
    username = username or os.environ.get("CHESSBRIDGE_MQTT_USERNAME") or None
    password = os.environ.get("CHESSBRIDGE_MQTT_PASSWORD") or None
    if username is None:
        if password is not None:
            raise InstallError("CHESSBRIDGE_MQTT_PASSWORD is set but no --username: give both")
        return None, None
    if password is None:
        if not sys.stdin.isatty():
            raise InstallError(
                f"no password for {username!r}: set CHESSBRIDGE_MQTT_PASSWORD (sudo -E keeps it), "
                "or run on a terminal to be asked"
            )
        password = getpass.getpass(f"broker password for {username}: ")
        if not password:
            raise InstallError("empty password: nothing installed")
    return username, password


def _command() -> str:
    """How systemd should start this chessbridge: its console script, else ``python -m bridge``."""
    script = Path(sys.executable).parent / "chessbridge"
    return str(script) if script.exists() else f"{sys.executable} -m bridge"


# -- looking at the system ------------------------------------------------------------------


def _under(root: Path, path: str) -> Path:
    return root / path.lstrip("/")


def _observe(root: Path, table: str, usb: UsbIds | None) -> Observed:
    paths = [
        plan.UNIT_PATH,
        plan.env_path(table),
        plan.config_path(table),
        plan.udev_path(table),
        plan.dropin_path(table),
    ]
    files = {path: _read(_under(root, path)) for path in paths}
    dirs = frozenset(
        path
        for path in (plan.CONFIG_DIR, plan.STATE_ROOT, plan.state_path(table))
        if _under(root, path).is_dir()
    )
    config_dir = _under(root, plan.CONFIG_DIR)
    tables = (
        frozenset(p.stem for p in config_dir.glob("*.env")) if config_dir.is_dir() else frozenset()
    )
    return Observed(
        user_exists=_user_exists(root),
        files=files,
        dirs=dirs,
        usb=usb,
        tables=tables,
        groups=_groups(root),
    )


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except FileNotFoundError:
        return None


def _user_exists(root: Path) -> bool:
    passwd = _read(_under(root, "/etc/passwd")) or ""
    return any(line.split(":", 1)[0] == plan.USER for line in passwd.splitlines())


def _groups(root: Path) -> frozenset[str]:
    group = _read(_under(root, "/etc/group")) or ""
    return frozenset(line.split(":", 1)[0] for line in group.splitlines() if line.strip())


def _usb_ids(root: Path, device: str) -> UsbIds | None:
    """The USB identity of the tty at ``device`` from sysfs, or ``None`` (not USB)."""
    name = _under(root, device).resolve().name
    node = _under(root, f"/sys/class/tty/{name}/device")
    if not node.exists():
        return None
    for parent in (node.resolve(), *node.resolve().parents):
        vendor, product = _read(parent / "idVendor"), _read(parent / "idProduct")
        if vendor and product:
            serial = _read(parent / "serial")
            return UsbIds(
                vendor=vendor.strip(),
                product=product.strip(),
                serial=serial.strip() if serial and serial.strip() else None,
                port=parent.name,
            )
        if parent == root:
            break
    return None


def _packaged_unit() -> str:
    return importlib.resources.files("bridge.install").joinpath("chessbridge@.service").read_text()


# -- carrying it out ------------------------------------------------------------------------


def _carry_out(steps: list[Step], root: Path, *, dry_run: bool) -> int:
    live = root == Path("/") and not dry_run
    for step in steps:
        for line in step.describe(show_content=dry_run):
            print(f"  {line}")
        if dry_run:
            continue
        try:
            _do(step, root, live)
        except (OSError, subprocess.CalledProcessError) as exc:
            _say(f"{step.action} {step.target} failed: {exc}; the steps above were done")
            return EXIT_FAILED
    if dry_run:
        print("dry run: nothing was changed")
    elif not live:
        print(f"files written under {root}; the commands listed (run) were not run")
    return 0


def _do(step: Step, root: Path, live: bool) -> None:
    path = _under(root, step.target)
    match step.action:
        case "run":
            if live:
                subprocess.run(step.argv, check=True)
        case "mkdir":
            path.mkdir(parents=True, exist_ok=True)
            _own(path, step, live)
        case "write":
            path.parent.mkdir(parents=True, exist_ok=True)
            staging = path.with_name(f".{path.name}.new")
            with contextlib.suppress(FileNotFoundError):
                staging.unlink()
            fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, step.mode or 0o600)
            with os.fdopen(fd, "w") as file:
                file.write(step.content or "")
            _own(staging, step, live)
            os.replace(staging, path)
        case "remove":
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        case "rmdir":
            with contextlib.suppress(OSError):  # absent, or holding a drop-in of one's own
                path.rmdir()
        case "rmtree":
            shutil.rmtree(path, ignore_errors=True)
        case "keep":
            print(f"          kept: facts not yet sent and the game; --purge deletes {step.target}")


def _own(path: Path, step: Step, live: bool) -> None:
    if step.mode is not None:
        os.chmod(path, step.mode)
    if live and step.owner != "root":
        entry = pwd.getpwnam(step.owner)
        os.chown(path, entry.pw_uid, entry.pw_gid)


def _say(message: str) -> None:
    print(f"{_PROG}: {message}", file=sys.stderr)
