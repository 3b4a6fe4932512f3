"""The deployment files: the systemd unit, the udev example and the example config.

The unit is read with a small parser of systemd's syntax rather than configparser, because
keys such as ``DeviceAllow=`` repeat and every occurrence counts. Its ``ExecStart=`` is parsed
with the real command-line parser, so the unit cannot drift from the CLI.
"""

from __future__ import annotations

import re
import shlex
import ssl
from pathlib import Path

import msgspec
import pytest

from bridge.__main__ import EXIT_BOARD, EXIT_CONFIG, _parser
from bridge.mqtt.outbox import Outbox
from bridge.mqtt.publisher import Publisher
from bridge.wire import config as config_module
from drivers import parse_board_uri

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "chessbridge@.service"
UDEV = ROOT / "systemd" / "99-chessbridge-dgt.rules"
EXAMPLE_CONFIG = ROOT / "docs" / "chessbridge.example.toml"

TABLE = "t042"
BOARD = "dgt:/dev/dgt-board-t042"

Unit = dict[str, list[tuple[str, str]]]


def parse_unit(text: str) -> Unit:
    """``{section: [(key, value), ...]}`` in file order, repeated keys kept."""
    unit: Unit = {}
    section: list[tuple[str, str]] | None = None
    logical = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not logical and (not line or line.startswith(("#", ";"))):
            continue
        if line.endswith("\\"):
            logical += line[:-1].rstrip() + " "
            continue
        line, logical = logical + line, ""
        if line.startswith("[") and line.endswith("]"):
            section = unit.setdefault(line[1:-1], [])
            continue
        key, sep, value = line.partition("=")
        assert sep, f"not KEY=VALUE: {line!r}"
        assert section is not None, f"{line!r} before any section"
        section.append((key.strip(), value.strip()))
    return unit


def values(unit: Unit, section: str, key: str) -> list[str]:
    return [value for name, value in unit.get(section, []) if name == key]


def value(unit: Unit, section: str, key: str) -> str:
    found = values(unit, section, key)
    assert len(found) == 1, f"[{section}] {key}= set {len(found)} times: {found}"
    return found[0]


@pytest.fixture(scope="module")
def unit() -> Unit:
    return parse_unit(UNIT.read_text(encoding="utf-8"))


def test_unit_parser_keeps_repeated_keys_and_continuations() -> None:
    parsed = parse_unit("# c\n[S]\nA=1\n; c\nA=2 \\\n  3\n[T]\nB = x=y\n")
    assert parsed == {"S": [("A", "1"), ("A", "2 3")], "T": [("B", "x=y")]}


def test_notify_service_with_watchdog_and_restart(unit: Unit) -> None:
    assert value(unit, "Service", "Type") == "notify"
    assert value(unit, "Service", "NotifyAccess") == "main"
    assert value(unit, "Service", "WatchdogSec") == "30s"
    assert value(unit, "Service", "Restart") == "on-failure"
    assert value(unit, "Service", "RestartSec") == "5s"
    # A configuration error is not retried for ever; a board missing at start is.
    assert value(unit, "Service", "RestartPreventExitStatus").split() == [str(EXIT_CONFIG)]
    assert EXIT_BOARD != EXIT_CONFIG
    assert value(unit, "Install", "WantedBy") == "multi-user.target"


def test_runs_unprivileged_with_its_state_directory(unit: Unit) -> None:
    assert value(unit, "Service", "User") == "chessbridge"
    assert "dialout" in value(unit, "Service", "SupplementaryGroups").split()
    assert value(unit, "Service", "StateDirectory") == "chessbridge/%i"
    assert value(unit, "Service", "EnvironmentFile") == "/etc/chessbridge/%i.env"


def test_serial_ports_allowed_but_no_other_device(unit: Unit) -> None:
    assert value(unit, "Service", "DevicePolicy") == "closed"
    allowed = values(unit, "Service", "DeviceAllow")
    assert {"char-ttyACM rw", "char-ttyUSB rw", "char-rfcomm rw"} <= set(allowed)
    # PrivateDevices=yes would hide every serial port from the daemon.
    assert values(unit, "Service", "PrivateDevices") in ([], ["no"], ["false"])


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("ProtectKernelTunables", "yes"),
        ("ProtectKernelModules", "yes"),
        ("ProtectKernelLogs", "yes"),
        ("ProtectControlGroups", "yes"),
        ("RestrictNamespaces", "yes"),
        ("LockPersonality", "yes"),
        ("MemoryDenyWriteExecute", "yes"),
        ("SystemCallArchitectures", "native"),
        ("RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6"),
    ],
)
def test_hardening(unit: Unit, key: str, expected: str) -> None:
    assert value(unit, "Service", key) == expected


def test_exec_start_is_accepted_by_the_command_line(unit: Unit) -> None:
    exec_start = value(unit, "Service", "ExecStart")
    # What systemd does: %i is the instance, ${VAR} one argument from the EnvironmentFile.
    expanded = exec_start.replace("%i", TABLE).replace("${CHESSBRIDGE_BOARD}", shlex.quote(BOARD))
    assert "%" not in expanded
    assert "$" not in expanded
    program, *argv = shlex.split(expanded)
    assert program == "/usr/local/bin/chessbridge"

    args = _parser().parse_args(argv)
    assert args.command == "run"
    assert args.board == BOARD
    assert args.table == TABLE
    assert args.config == Path(f"/etc/chessbridge/{TABLE}.toml")
    # The state directory comes from $STATE_DIRECTORY (StateDirectory=), not the command line.
    assert args.state_dir is None
    assert parse_board_uri(args.board).scheme == "dgt"


def test_udev_symlinks_never_take_a_kernel_name() -> None:
    text = UDEV.read_text(encoding="utf-8")
    rules = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    assert rules
    for rule in rules:
        assert 'SUBSYSTEM=="tty"' in rule
        assert 'TAG+="systemd"' in rule
        links = re.findall(r'SYMLINK\+="([^"]+)"', rule)
        assert links, rule
        for link in links:
            assert not re.match(r"tty|rfcomm", link), f"{link} looks like a kernel name"
    assert f'SYMLINK+="{BOARD.removeprefix("dgt:/dev/")}"' in text


def test_example_config_decodes() -> None:
    config = config_module.decode(EXAMPLE_CONFIG.read_bytes(), str(EXAMPLE_CONFIG))
    assert config.broker.url is not None
    assert config.broker.url.startswith("mqtts://")
    assert config.broker.username == TABLE
    assert config.rules == config_module.DEFAULT_RULES
    assert config.engine == config_module.EngineSection()  # the values shown are the defaults
    assert config.ble == config_module.BleSection()
    assert config.livechess == config_module.LiveChessSection()  # off: only commented lines


def test_example_config_documents_every_setting() -> None:
    text = EXAMPLE_CONFIG.read_text(encoding="utf-8")
    sections: dict[str, type[msgspec.Struct]] = {
        "broker": config_module.BrokerConfig,
        "engine": config_module.EngineSection,
        "ble": config_module.BleSection,
        "discovery": config_module.DiscoverySection,
        "livechess": config_module.LiveChessSection,
    }
    # [relay] belongs to the relay's own example (docs/relay.example.toml, tested with the relay).
    top_level = [
        f for f in config_module.Config.__struct_fields__ if f not in sections and f != "relay"
    ]
    for name in top_level:
        assert re.search(rf"^#?{name} = ", text.split("\n[", 1)[0], re.MULTILINE), name
    for section, struct in sections.items():
        body = text.split(f"\n[{section}]\n", 1)[1].split("\n[", 1)[0]
        for name in struct.__struct_fields__:
            assert re.search(rf"^#?{name} = ", body, re.MULTILINE), f"[{section}] {name}"


def test_example_config_is_accepted_by_the_publisher(tmp_path: Path) -> None:
    """TLS files go with an mqtts:// URL; they are read at start, so a missing one is said
    then, naming the setting and the file (here the example's CA file does not exist)."""
    config = config_module.decode(EXAMPLE_CONFIG.read_bytes())
    broker = config.broker
    assert broker.url is not None
    assert broker.ca_file is not None
    system_ca = ssl.get_default_verify_paths().cafile
    outbox = Outbox(tmp_path)
    try:
        with pytest.raises(ValueError, match=r"ca_file '/etc/chessbridge/venue-ca.pem'.*no such"):
            Publisher(TABLE, config_module.broker_settings(broker.url, broker), outbox)
        if system_ca is None:
            pytest.skip("this system names no CA bundle file to stand for the venue's")
        venue = msgspec.structs.replace(broker, ca_file=system_ca)
        Publisher(TABLE, config_module.broker_settings(broker.url, venue), outbox)
    finally:
        outbox.close()
