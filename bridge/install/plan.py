"""What ``chessbridge install`` and ``uninstall`` do to a Pi, as a list of steps (pure).

The shell (:mod:`bridge.install.shell`) looks at the system (:class:`Observed`), asks this module
for the steps, prints them (``--dry-run``) or carries them out. Everything is checked before the
first step, so a refused request leaves nothing half-installed; a step whose result is already
there is left out, so running either command twice changes nothing the second time.

Per table ``t042`` the install writes ``/etc/chessbridge/t042.env`` (the board URI, read by
systemd as root), ``/etc/chessbridge/t042.toml`` (the broker URL and this table's credentials,
readable only by the service user), a udev rule naming a USB board ``/dev/chessbridge-t042``,
for a Bluetooth LE board a drop-in giving the service group ``bluetooth`` (BlueZ's), the state
directory ``/var/lib/chessbridge/t042``; once per Pi the system user ``chessbridge`` and the unit
``chessbridge@.service``; then it enables and starts ``chessbridge@t042``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from drivers import FAMILIES, BoardUri

USER: Final = "chessbridge"
UNIT_PATH: Final = "/etc/systemd/system/chessbridge@.service"
CONFIG_DIR: Final = "/etc/chessbridge"
STATE_ROOT: Final = "/var/lib/chessbridge"
UDEV_DIR: Final = "/etc/udev/rules.d"
UNIT_DIR: Final = "/etc/systemd/system"
BLUETOOTH_GROUP: Final = "bluetooth"
"""The group whose members BlueZ lets use Bluetooth over D-Bus (Debian's bluez package)."""
PACKAGED_EXEC: Final = "/usr/local/bin/chessbridge"
"""The command the packaged unit names; replaced by the one actually installed."""

_MANAGED_KEY: Final = re.compile(r"(url|username|password)\s*=")

TABLE_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
"""A table id usable as a topic level, a systemd instance name, a file name and a user name."""

USERADD: Final = (
    "useradd",
    "--system",
    "--user-group",
    "--no-create-home",
    "--shell",
    "/usr/sbin/nologin",
    USER,
)


@dataclass(frozen=True, slots=True)
class UsbIds:
    """What udev knows of a USB serial board."""

    vendor: str
    product: str
    serial: str | None
    port: str
    """The USB port path (``1-1.3``), for a board without a serial number."""


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallRequest:
    """``chessbridge install``'s arguments, checked."""

    table: str
    board: BoardUri
    broker: str
    username: str | None = None
    password: str | None = None
    command: str
    """How systemd starts chessbridge (the installed executable)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Observed:
    """The parts of the system the plan depends on."""

    user_exists: bool
    files: Mapping[str, str | None] = field(default_factory=dict)
    """Current contents of the files the plan may write or remove (``None``: absent)."""
    dirs: frozenset[str] = frozenset()
    """Which of the plan's directories exist."""
    usb: UsbIds | None = None
    """The board's USB identity, when it is a USB serial device."""
    tables: frozenset[str] = frozenset()
    """Tables installed now (an ``.env`` file in the config directory)."""
    groups: frozenset[str] = frozenset()
    """The system's groups (``/etc/group``)."""


@dataclass(frozen=True, slots=True)
class Step:
    """One thing done to the system."""

    action: str
    """``run``, ``mkdir``, ``write``, ``remove``, ``rmdir`` (if empty), ``rmtree``, ``keep``."""
    target: str
    """The path, or the command line for ``run``."""
    argv: tuple[str, ...] = ()
    content: str | None = None
    mode: int | None = None
    owner: str = "root"
    secret: bool = False
    """The content holds a password: never shown."""
    summary: str | None = None
    """Shown instead of a long content."""

    def describe(self, *, show_content: bool = False) -> list[str]:
        """The step as lines for a person (``--dry-run`` shows file contents, never secrets)."""
        detail = ""
        if self.mode is not None:
            detail = f" (mode {self.mode:04o}, owner {self.owner})"
        lines = [f"{self.action:<7} {self.target}{detail}"]
        if show_content and self.summary is not None:
            lines.append(f"          {self.summary}")
        elif show_content and self.content is not None:
            lines += [f"          {line}" for line in _shown(self).splitlines()]
        return lines


def env_path(table: str) -> str:
    return f"{CONFIG_DIR}/{table}.env"


def config_path(table: str) -> str:
    return f"{CONFIG_DIR}/{table}.toml"


def udev_path(table: str) -> str:
    return f"{UDEV_DIR}/99-chessbridge-{table}.rules"


def state_path(table: str) -> str:
    return f"{STATE_ROOT}/{table}"


def dropin_dir(table: str) -> str:
    return f"{UNIT_DIR}/chessbridge@{table}.service.d"


def dropin_path(table: str) -> str:
    """The table's own addition to the unit: group ``bluetooth`` for a Bluetooth LE board."""
    return f"{dropin_dir(table)}/bluetooth.conf"


def bluetooth_le(board: BoardUri) -> bool:
    """Whether the board is reached over Bluetooth LE (through BlueZ)."""
    family = FAMILIES.get(board.scheme)
    return family is not None and family.bluetooth_le


def check_groups(board: BoardUri, groups: frozenset[str]) -> None:
    """A Bluetooth LE board's service needs group ``bluetooth``, which BlueZ's package creates.

    Raises:
        ValueError: the board is a Bluetooth LE one and the group does not exist (a unit naming
            a missing group would not start).
    """
    if bluetooth_le(board) and BLUETOOTH_GROUP not in groups:
        raise ValueError(
            f"the {board.scheme} board is a Bluetooth LE one and this system has no group "
            f"{BLUETOOTH_GROUP!r}, which its service needs: install BlueZ (sudo apt install "
            "bluez) and run this again"
        )


def check_table(table: str) -> str:
    """The table id, if it is usable everywhere the install puts it.

    Raises:
        ValueError: not 1-64 letters, digits, ``-`` or ``_`` starting with a letter or digit.
    """
    if not TABLE_ID.fullmatch(table):
        raise ValueError(
            f"table id {table!r} must be 1 to 64 letters, digits, '-' or '_', starting with a "
            "letter or digit (it names a topic level, a service and files)"
        )
    return table


def check_privileges(euid: int, *, live: bool, dry_run: bool) -> None:
    """Changing this system (``live``, not a dry run) needs root.

    Raises:
        ValueError: not root.
    """
    if live and not dry_run and euid != 0:
        raise ValueError("must run as root: sudo chessbridge ... (add --dry-run to see the steps)")


def check_command(command: str) -> str:
    """The command systemd will start, if the service can see it.

    Raises:
        ValueError: it lies under /home or /root, hidden from the service (ProtectHome=yes).
    """
    executable = command.split()[0]
    if executable.startswith(("/home/", "/root/")):
        raise ValueError(
            f"chessbridge is installed under {executable}, which the service cannot see "
            "(ProtectHome=yes): install it system-wide (sudo pipx install --global chessbridge, "
            "or a venv in /opt/chessbridge)"
        )
    return command


def install_steps(request: InstallRequest, unit: str, observed: Observed) -> list[Step]:
    """The steps that bring the system to ``request``; only those not done already.

    ``unit`` is the packaged ``chessbridge@.service``.
    """
    table = request.table
    steps: list[Step] = []
    if not observed.user_exists:
        steps.append(Step("run", " ".join(USERADD), USERADD))
    for path, mode, owner in (
        (CONFIG_DIR, 0o755, "root"),
        (STATE_ROOT, 0o755, "root"),
        (state_path(table), 0o700, USER),
    ):
        if path not in observed.dirs:
            steps.append(Step("mkdir", path, mode=mode, owner=owner))
    board = request.board
    if observed.usb is not None:
        board = BoardUri(board.scheme, f"/dev/chessbridge-{table}")
    service = service_unit(unit, request.command)
    wanted = [
        (UNIT_PATH, service, 0o644, "root", False),
        (env_path(table), f"CHESSBRIDGE_BOARD={board}\n", 0o644, "root", False),
        (
            config_path(table),
            table_config(request, observed.files.get(config_path(table))),
            0o600,
            USER,
            request.password is not None,
        ),
    ]
    if observed.usb is not None:
        wanted.append((udev_path(table), udev_rule(table, observed.usb), 0o644, "root", False))
    if bluetooth_le(request.board):
        wanted.append((dropin_path(table), bluetooth_dropin(request), 0o644, "root", False))
    changed: set[str] = set()
    for path, content, mode, owner, secret in wanted:
        if observed.files.get(path) != content:
            summary = None
            if path == UNIT_PATH:
                start = next(x for x in service.splitlines() if x.startswith("ExecStart="))
                summary = f"the packaged chessbridge@.service, with {start}"
            step = Step("write", path, content=content, mode=mode, owner=owner, secret=secret)
            steps.append(dataclasses.replace(step, summary=summary))
            changed.add(path)
    if not bluetooth_le(request.board) and observed.files.get(dropin_path(table)) is not None:
        # The table had a Bluetooth LE board: its service needs the group no more.
        steps += [Step("remove", dropin_path(table)), Step("rmdir", dropin_dir(table))]
        changed.add(dropin_path(table))
    steps += _commands_after(table, changed, observed)
    return steps


def _commands_after(table: str, changed: set[str], observed: Observed) -> list[Step]:
    steps = []
    if udev_path(table) in changed:
        steps += [
            _run("udevadm", "control", "--reload"),
            _run("udevadm", "trigger", "--subsystem-match=tty", "--action=add"),
        ]
    if UNIT_PATH in changed or dropin_path(table) in changed:
        steps.append(_run("systemctl", "daemon-reload"))
    service = f"chessbridge@{table}"
    if changed and table in observed.tables:
        steps += [_run("systemctl", "enable", service), _run("systemctl", "restart", service)]
    else:
        steps.append(_run("systemctl", "enable", "--now", service))
    return steps


def uninstall_steps(table: str, observed: Observed, *, purge: bool) -> list[Step]:
    """The steps that remove ``table``'s service and files; the state too with ``purge``.

    The unit file goes with the last table; the system user only with ``purge`` and the last
    table. Without ``purge`` the state directory stays (facts not yet sent, the game).
    """
    steps: list[Step] = []
    service = f"chessbridge@{table}"
    if observed.files.get(env_path(table)) is not None:
        steps.append(_run("systemctl", "disable", "--now", service))
    owned = (env_path(table), config_path(table), udev_path(table), dropin_path(table))
    steps += [Step("remove", p) for p in owned if observed.files.get(p) is not None]
    dropin = observed.files.get(dropin_path(table)) is not None
    if dropin:
        steps.append(Step("rmdir", dropin_dir(table)))
    if observed.files.get(udev_path(table)) is not None:
        steps.append(_run("udevadm", "control", "--reload"))
    last = not (observed.tables - {table})
    if last and observed.files.get(UNIT_PATH) is not None:
        steps += [Step("remove", UNIT_PATH), _run("systemctl", "daemon-reload")]
    elif dropin:
        steps.append(_run("systemctl", "daemon-reload"))
    state = state_path(table)
    if state in observed.dirs:
        steps.append(Step("rmtree", state) if purge else Step("keep", state))
    if purge and last and observed.user_exists:
        steps.append(_run("userdel", USER))
    return steps


def service_unit(packaged: str, command: str) -> str:
    """The packaged unit with ``ExecStart`` naming the installed ``command``."""
    return packaged.replace(f"ExecStart={PACKAGED_EXEC} ", f"ExecStart={command} ", 1)


def table_config(request: InstallRequest, existing: str | None = None) -> str:
    """``/etc/chessbridge/TABLE.toml``: the broker URL and the table's credentials.

    An ``existing`` file keeps everything but those three settings: its comments, its other
    sections (``[engine]``, ``[discovery]``...) and the rest of ``[broker]`` (TLS files).
    """
    managed = [f"url = {_toml(request.broker)}"]
    if request.username is not None:
        managed.append(f"username = {_toml(request.username)}")
    if request.password is not None:
        managed.append(f"password = {_toml(request.password)}")
    if existing is None:
        header = [
            f"# chessbridge table {request.table}: written by `chessbridge install`, which "
            "rewrites only",
            "# [broker] url, username and password. Every setting: docs/chessbridge.example.toml.",
            "",
        ]
        return "\n".join([*header, "[broker]", *managed]) + "\n"
    lines = existing.splitlines()
    out: list[str] = []
    in_broker = found = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            in_broker = stripped == "[broker]"
            out.append(line)
            if in_broker:
                found = True
                out.extend(managed)
            continue
        if in_broker and _MANAGED_KEY.match(stripped):
            continue
        out.append(line)
    if not found:
        out += ["", "[broker]", *managed]
    return "\n".join(out) + "\n"


def bluetooth_dropin(request: InstallRequest) -> str:
    """The drop-in adding group ``bluetooth`` to the table's service (to ``dialout``, the unit's).

    In a drop-in of this table's instance, not in the shared unit: a Pi without BlueZ has no
    such group, and a unit naming a missing group does not start.
    """
    return (
        f"# chessbridge table {request.table}: a Bluetooth LE board ({request.board.scheme}:), "
        "reached through BlueZ, which\n"
        f"# lets the members of group {BLUETOOTH_GROUP} use it over D-Bus. "
        "Written by `chessbridge install`.\n"
        "[Service]\n"
        f"SupplementaryGroups={BLUETOOTH_GROUP}\n"
    )


def udev_rule(table: str, usb: UsbIds) -> str:
    """A udev rule giving the board ``/dev/chessbridge-TABLE`` whatever ttyACM number it gets."""
    match = f'ATTRS{{idVendor}}=="{usb.vendor}", ATTRS{{idProduct}}=="{usb.product}", '
    if usb.serial is not None:
        match += f'ATTRS{{serial}}=="{usb.serial}"'
        how = "by its USB serial number"
    else:
        match += f'KERNELS=="{usb.port}"'
        how = f"by the USB port it is plugged into ({usb.port}): it has no serial number"
    return (
        f"# chessbridge table {table}: the board, named {how}. Written by `chessbridge install`.\n"
        f'SUBSYSTEM=="tty", {match}, SYMLINK+="chessbridge-{table}", TAG+="systemd"\n'
    )


def _run(*argv: str) -> Step:
    return Step("run", " ".join(argv), argv)


def _toml(text: str) -> str:
    """A TOML basic string."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = "".join(ch if ch >= " " and ch != "\x7f" else f"\\u{ord(ch):04x}" for ch in escaped)
    return f'"{escaped}"'


def _shown(step: Step) -> str:
    content = step.content or ""
    if not step.secret:
        return content
    return re.sub(r'^password = ".*"$', 'password = "********"', content, flags=re.MULTILINE)
