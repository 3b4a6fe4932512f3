"""The install plan (pure): which steps for which system, and the checks made before any."""

from __future__ import annotations

import pytest

from bridge.install import plan
from bridge.install.plan import InstallRequest, Observed, UsbIds
from drivers import BoardUri

UNIT = "[Service]\nExecStart=/usr/local/bin/chessbridge run --board ${CHESSBRIDGE_BOARD}\n"


def request(**changes: object) -> InstallRequest:
    fields: dict[str, object] = {
        "table": "t042",
        "board": BoardUri("dgt", "/dev/ttyACM0"),
        "broker": "mqtt://broker.lan",
        "command": "/opt/chessbridge/bin/chessbridge",
    }
    fields.update(changes)
    return InstallRequest(**fields)  # type: ignore[arg-type]


def actions(steps: list[plan.Step]) -> list[str]:
    return [f"{s.action} {s.target}" for s in steps]


def test_the_unit_starts_the_installed_command() -> None:
    written = plan.service_unit(UNIT, "/opt/chessbridge/bin/chessbridge")
    assert "ExecStart=/opt/chessbridge/bin/chessbridge run --board" in written


def test_a_ble_board_gets_no_udev_rule_and_keeps_its_address() -> None:
    steps = plan.install_steps(
        request(board=BoardUri("chessnut", "AA:BB:CC:DD:EE:FF")), UNIT, Observed(user_exists=True)
    )
    env = next(s for s in steps if s.target == plan.env_path("t042"))
    assert env.content == "CHESSBRIDGE_BOARD=chessnut:AA:BB:CC:DD:EE:FF\n"
    assert not any("udev" in step.target for step in steps)


def test_a_usb_board_is_renamed_for_the_table() -> None:
    usb = UsbIds(vendor="045b", product="0101", serial="X1", port="1-1.3")
    steps = plan.install_steps(request(), UNIT, Observed(user_exists=True, usb=usb))
    env = next(s for s in steps if s.target == plan.env_path("t042"))
    assert env.content == "CHESSBRIDGE_BOARD=dgt:/dev/chessbridge-t042\n"


def test_nothing_but_enabling_when_all_is_in_place() -> None:
    usb = UsbIds(vendor="045b", product="0101", serial="X1", port="1-1.3")
    first = plan.install_steps(request(), UNIT, Observed(user_exists=True, usb=usb))
    written = {s.target: s.content for s in first if s.action == "write"}
    dirs = frozenset(s.target for s in first if s.action == "mkdir")
    observed = Observed(
        user_exists=True, files=written, dirs=dirs, usb=usb, tables=frozenset({"t042"})
    )
    assert actions(plan.install_steps(request(), UNIT, observed)) == [
        "run systemctl enable --now chessbridge@t042"
    ]


def test_the_password_is_never_shown() -> None:
    steps = plan.install_steps(
        request(username="t042", password='p"w'), UNIT, Observed(user_exists=True)
    )
    config = next(s for s in steps if s.target == plan.config_path("t042"))
    assert config.secret
    assert config.mode == 0o600
    assert config.owner == plan.USER
    assert 'password = "p\\"w"' in (config.content or "")
    shown = "\n".join(config.describe(show_content=True))
    assert 'password = "********"' in shown
    assert "p\\" not in shown


def test_purge_of_the_last_table_removes_the_user_too() -> None:
    observed = Observed(
        user_exists=True,
        files={plan.env_path("t1"): "x", plan.UNIT_PATH: "u"},
        dirs=frozenset({plan.state_path("t1")}),
        tables=frozenset({"t1"}),
    )
    assert actions(plan.uninstall_steps("t1", observed, purge=True)) == [
        "run systemctl disable --now chessbridge@t1",
        "remove /etc/chessbridge/t1.env",
        "remove /etc/systemd/system/chessbridge@.service",
        "run systemctl daemon-reload",
        "rmtree /var/lib/chessbridge/t1",
        "run userdel chessbridge",
    ]


@pytest.mark.parametrize("table", ["t042", "T-1", "board_7", "a" * 64])
def test_good_table_ids(table: str) -> None:
    assert plan.check_table(table) == table


@pytest.mark.parametrize("table", ["", "t/1", "-t", "t 1", "t+", "a" * 65, "t.1", "é"])
def test_bad_table_ids(table: str) -> None:
    with pytest.raises(ValueError, match="must be 1 to 64 letters"):
        plan.check_table(table)


def test_only_root_changes_the_system() -> None:
    with pytest.raises(ValueError, match="must run as root: sudo chessbridge"):
        plan.check_privileges(1000, live=True, dry_run=False)
    plan.check_privileges(1000, live=True, dry_run=True)
    plan.check_privileges(1000, live=False, dry_run=False)  # a folder standing for /
    plan.check_privileges(0, live=True, dry_run=False)


@pytest.mark.parametrize(
    "command", ["/root/.local/bin/chessbridge", "/home/pi/venv/bin/python -m bridge"]
)
def test_a_command_the_service_cannot_see_is_refused(command: str) -> None:
    with pytest.raises(ValueError, match="ProtectHome=yes"):
        plan.check_command(command)
    assert plan.check_command("/opt/chessbridge/bin/chessbridge")


def test_a_reinstall_rewrites_only_the_broker_url_and_credentials() -> None:
    edited = (
        "# table t042, edited by hand\n"
        'rules = "fide-2018-rapid"\n'
        "\n"
        "[broker]\n"
        'url = "mqtt://old.lan"\n'
        'username = "t042"\n'
        'password = "old"\n'
        'ca_file = "/etc/chessbridge/venue-ca.pem"\n'
        "\n"
        "[engine]\n"
        "dwell = 0.5  # slow sliders at this venue\n"
    )
    new = plan.table_config(
        request(broker="mqtts://new.lan", username="t042", password="new"), edited
    )
    assert new == edited.replace('url = "mqtt://old.lan"', 'url = "mqtts://new.lan"').replace(
        'password = "old"', 'password = "new"'
    )
    no_broker = plan.table_config(request(), "[engine]\ndwell = 0.5\n")
    assert no_broker == '[engine]\ndwell = 0.5\n\n[broker]\nurl = "mqtt://broker.lan"\n'
    without_credentials = plan.table_config(request(), edited)
    assert "username" not in without_credentials
    assert "password" not in without_credentials
    assert "ca_file" in without_credentials
    assert "dwell = 0.5  # slow sliders at this venue" in without_credentials


@pytest.mark.parametrize("scheme", ["chessnut", "pegasus", "millennium-ble"])
def test_a_bluetooth_le_board_needs_the_bluetooth_group(scheme: str) -> None:
    board = BoardUri(scheme, "AA:BB:CC:DD:EE:FF")
    with pytest.raises(ValueError, match="install BlueZ"):
        plan.check_groups(board, frozenset({"dialout"}))
    plan.check_groups(board, frozenset({"dialout", "bluetooth"}))
    steps = plan.install_steps(request(board=board), UNIT, Observed(user_exists=True))
    drop_in = next(s for s in steps if s.target == plan.dropin_path("t042"))
    assert drop_in.content is not None
    assert drop_in.content.endswith("[Service]\nSupplementaryGroups=bluetooth\n")


@pytest.mark.parametrize("scheme", ["dgt", "millennium", "certabo"])
def test_a_serial_board_needs_no_bluetooth_group_nor_drop_in(scheme: str) -> None:
    board = BoardUri(scheme, "/dev/ttyUSB0")
    plan.check_groups(board, frozenset())
    steps = plan.install_steps(request(board=board), UNIT, Observed(user_exists=True))
    assert not any(".service.d" in step.target for step in steps)
