"""``chessbridge install`` / ``uninstall`` against a folder standing for ``/``.

The folder gets a board device and the sysfs entries udev would read for a USB board; the
commands (useradd, udevadm, systemctl) are checked as listed, since this machine has no
systemd to run them against.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

UNIT = Path(__file__).resolve().parents[2] / "systemd" / "chessbridge@.service"
ENV = {**os.environ, "CHESSBRIDGE_MQTT_PASSWORD": "s3cret pass"}
ENV.pop("CHESSBRIDGE_MQTT_USERNAME", None)


UNINSTALL_T042 = [
    "run     systemctl disable --now chessbridge@t042",
    "remove  /etc/chessbridge/t042.env",
    "remove  /etc/chessbridge/t042.toml",
    "remove  /etc/udev/rules.d/99-chessbridge-t042.rules",
    "run     udevadm control --reload",
    "remove  /etc/systemd/system/chessbridge@.service",
    "run     systemctl daemon-reload",
    "keep    /var/lib/chessbridge/t042",
]
"""The steps of uninstalling the only table, t042, of a USB board (its state is kept)."""


def chessbridge(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bridge", *args],
        capture_output=True,
        text=True,
        env=ENV if env is None else env,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


def usb_board(root: Path, *, serial: str | None = "A1B2C3") -> None:
    """``/dev/ttyACM0`` and its sysfs entries, laid out as the kernel does on a Pi."""
    (root / "dev").mkdir(parents=True)
    (root / "dev" / "ttyACM0").touch()
    usb = root / "sys/devices/platform/soc/usb1/1-1/1-1.3"
    interface = usb / "1-1.3:1.0"
    (interface / "tty" / "ttyACM0").mkdir(parents=True)
    (usb / "idVendor").write_text("045b\n")
    (usb / "idProduct").write_text("0101\n")
    if serial is not None:
        (usb / "serial").write_text(f"{serial}\n")
    (interface / "tty" / "ttyACM0" / "device").symlink_to("../../../1-1.3:1.0")
    (root / "sys/class/tty").mkdir(parents=True)
    (root / "sys/class/tty/ttyACM0").symlink_to(
        "../../devices/platform/soc/usb1/1-1/1-1.3/1-1.3:1.0/tty/ttyACM0"
    )


def install(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return chessbridge(
        "install",
        "--root",
        str(root),
        "--table",
        "t042",
        "--board",
        "dgt:/dev/ttyACM0",
        "--broker",
        "mqtts://broker.lan:8883",
        "--username",
        "t042",
        *extra,
    )


def files(root: Path) -> dict[str, int]:
    """Every file and folder written under ``root`` except the board's, with its mode."""
    found = {}
    for path in root.rglob("*"):
        relative = "/" + str(path.relative_to(root))
        if not relative.startswith(("/dev", "/sys")):
            found[relative] = stat.S_IMODE(path.lstat().st_mode)
    return found


def steps(out: str) -> list[str]:
    return [line.strip() for line in out.splitlines() if line.startswith("  ") and line[2] != " "]


COMMANDS_OF_A_FIRST_INSTALL = [
    "run     useradd --system --user-group --no-create-home --shell /usr/sbin/nologin chessbridge",
    "run     udevadm control --reload",
    "run     udevadm trigger --subsystem-match=tty --action=add",
    "run     systemctl daemon-reload",
    "run     systemctl enable --now chessbridge@t042",
]


def test_dry_run_prints_a_complete_setup_and_changes_nothing(tmp_path: Path) -> None:
    usb_board(tmp_path)
    done = install(tmp_path, "--dry-run")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert [s for s in steps(out) if s.startswith("run")] == COMMANDS_OF_A_FIRST_INSTALL
    assert [s.split(" (")[0] for s in steps(out) if not s.startswith("run")] == [
        "mkdir   /etc/chessbridge",
        "mkdir   /var/lib/chessbridge",
        "mkdir   /var/lib/chessbridge/t042",
        "write   /etc/systemd/system/chessbridge@.service",
        "write   /etc/chessbridge/t042.env",
        "write   /etc/chessbridge/t042.toml",
        "write   /etc/udev/rules.d/99-chessbridge-t042.rules",
    ]
    assert "CHESSBRIDGE_BOARD=dgt:/dev/chessbridge-t042" in out
    assert 'ATTRS{idVendor}=="045b", ATTRS{idProduct}=="0101", ATTRS{serial}=="A1B2C3"' in out
    assert 'url = "mqtts://broker.lan:8883"' in out
    assert 'password = "********"' in out
    assert "s3cret" not in out + done.stderr
    assert f"ExecStart={Path(sys.executable).parent / 'chessbridge'} run" in out
    assert "dry run: nothing was changed" in out
    assert files(tmp_path) == {}


def test_install_writes_the_table_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    usb_board(tmp_path)
    first = install(tmp_path)
    assert first.returncode == 0, first.stderr
    assert files(tmp_path) == {
        "/etc": 0o755,
        "/etc/chessbridge": 0o755,
        "/etc/chessbridge/t042.env": 0o644,
        "/etc/chessbridge/t042.toml": 0o600,
        "/etc/systemd": 0o755,
        "/etc/systemd/system": 0o755,
        "/etc/systemd/system/chessbridge@.service": 0o644,
        "/etc/udev": 0o755,
        "/etc/udev/rules.d": 0o755,
        "/etc/udev/rules.d/99-chessbridge-t042.rules": 0o644,
        "/var": 0o755,
        "/var/lib": 0o755,
        "/var/lib/chessbridge": 0o755,
        "/var/lib/chessbridge/t042": 0o700,
    }
    config = (tmp_path / "etc/chessbridge/t042.toml").read_text()
    assert 'username = "t042"\npassword = "s3cret pass"\n' in config
    unit = (tmp_path / "etc/systemd/system/chessbridge@.service").read_text()
    packaged = UNIT.read_text()
    assert unit != packaged
    assert unit == packaged.replace(
        "ExecStart=/usr/local/bin/chessbridge ",
        f"ExecStart={Path(sys.executable).parent / 'chessbridge'} ",
    )
    assert "the commands listed (run) were not run" in first.stdout

    again = install(tmp_path)
    assert again.returncode == 0, again.stderr
    # The user is still missing from this folder's /etc/passwd, so useradd stays listed.
    assert steps(again.stdout) == [
        COMMANDS_OF_A_FIRST_INSTALL[0],
        "run     systemctl enable --now chessbridge@t042",
    ]


def test_a_changed_broker_rewrites_the_config_and_restarts_the_table(tmp_path: Path) -> None:
    usb_board(tmp_path)
    assert install(tmp_path).returncode == 0
    (tmp_path / "etc/passwd").write_text("chessbridge:x:999:999::/nonexistent:/usr/sbin/nologin\n")
    moved = chessbridge(
        "install",
        "--root",
        str(tmp_path),
        "--table",
        "t042",
        "--board",
        "dgt:/dev/ttyACM0",
        "--broker",
        "mqtt://other.lan",
        env={k: v for k, v in ENV.items() if k != "CHESSBRIDGE_MQTT_PASSWORD"},
    )
    assert moved.returncode == 0, moved.stderr
    assert [s.split(" (")[0] for s in steps(moved.stdout)] == [
        "write   /etc/chessbridge/t042.toml",
        "run     systemctl enable chessbridge@t042",
        "run     systemctl restart chessbridge@t042",
    ]
    config = (tmp_path / "etc/chessbridge/t042.toml").read_text()
    assert 'url = "mqtt://other.lan"' in config
    assert "password =" not in config


def test_a_board_without_a_usb_serial_number_is_named_by_its_port(tmp_path: Path) -> None:
    usb_board(tmp_path, serial=None)
    assert install(tmp_path).returncode == 0
    rule = (tmp_path / "etc/udev/rules.d/99-chessbridge-t042.rules").read_text()
    assert 'KERNELS=="1-1.3", SYMLINK+="chessbridge-t042"' in rule


def test_a_board_that_is_not_usb_keeps_its_path_and_gets_no_rule(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "rfcomm0").touch()
    done = chessbridge(
        "install",
        "--root",
        str(tmp_path),
        "--table",
        "t7",
        "--board",
        "dgt:/dev/rfcomm0",
        "--broker",
        "mqtt://broker.lan",
        env={k: v for k, v in ENV.items() if k != "CHESSBRIDGE_MQTT_PASSWORD"},
    )
    assert done.returncode == 0, done.stderr
    env_file = (tmp_path / "etc/chessbridge/t7.env").read_text()
    assert env_file == "CHESSBRIDGE_BOARD=dgt:/dev/rfcomm0\n"
    assert not (tmp_path / "etc/udev").exists()
    assert "udevadm" not in done.stdout


def test_uninstall_removes_the_table_keeps_its_state_and_is_idempotent(tmp_path: Path) -> None:
    usb_board(tmp_path)
    assert install(tmp_path).returncode == 0
    (tmp_path / "var/lib/chessbridge/t042/outbox.sqlite").write_text("unsent facts")
    gone = chessbridge("uninstall", "--root", str(tmp_path), "--table", "t042")
    assert gone.returncode == 0, gone.stderr
    assert [s.split(" (")[0] for s in steps(gone.stdout)] == UNINSTALL_T042
    assert set(files(tmp_path)) >= {"/var/lib/chessbridge/t042/outbox.sqlite"}
    assert not (tmp_path / "etc/chessbridge/t042.toml").exists()
    assert not (tmp_path / "etc/systemd/system/chessbridge@.service").exists()

    purged = chessbridge("uninstall", "--root", str(tmp_path), "--table", "t042", "--purge")
    assert purged.returncode == 0, purged.stderr
    assert steps(purged.stdout) == ["rmtree  /var/lib/chessbridge/t042"]
    assert not (tmp_path / "var/lib/chessbridge/t042").exists()
    again = chessbridge("uninstall", "--root", str(tmp_path), "--table", "t042", "--purge")
    assert again.returncode == 0
    assert "nothing to do: table t042 is not installed" in again.stdout


def test_uninstall_keeps_the_unit_while_another_table_uses_it(tmp_path: Path) -> None:
    usb_board(tmp_path)
    assert install(tmp_path).returncode == 0
    (tmp_path / "etc/chessbridge/t043.env").write_text("CHESSBRIDGE_BOARD=dgt:/dev/x\n")
    gone = chessbridge("uninstall", "--root", str(tmp_path), "--table", "t042")
    assert gone.returncode == 0, gone.stderr
    assert (tmp_path / "etc/systemd/system/chessbridge@.service").exists()


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--table", "t/42"], "table id 't/42' must be 1 to 64 letters"),
        (["--table", ""], "table id '' must be"),
        (["--board", "dgt:/dev/ttyACM9"], "board path /dev/ttyACM9 does not exist"),
        (["--board", "abc:/dev/ttyACM0"], "unknown board type 'abc'"),
        (["--broker", "http://broker.lan"], "broker URL must start with mqtt:// or mqtts://"),
        (["--broker", "mqtt://u:p@broker.lan"], "not in the URL"),
    ],
)
def test_a_bad_request_is_one_line_exit_2_and_nothing_installed(
    tmp_path: Path, args: list[str], error: str
) -> None:
    usb_board(tmp_path)
    base = {"--table": "t042", "--board": "dgt:/dev/ttyACM0", "--broker": "mqtt://broker.lan"}
    base.update(zip(args[::2], args[1::2], strict=True))
    done = chessbridge("install", "--root", str(tmp_path), *(x for kv in base.items() for x in kv))
    assert done.returncode == 2, done.stdout + done.stderr
    assert error in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert files(tmp_path) == {}


def test_a_username_without_a_password_on_no_terminal_is_refused(tmp_path: Path) -> None:
    usb_board(tmp_path)
    env = {k: v for k, v in ENV.items() if k != "CHESSBRIDGE_MQTT_PASSWORD"}
    done = chessbridge(
        "install",
        "--root",
        str(tmp_path),
        "--table",
        "t042",
        "--board",
        "dgt:/dev/ttyACM0",
        "--broker",
        "mqtt://broker.lan",
        "--username",
        "t042",
        env=env,
    )
    assert done.returncode == 2
    assert "no password for 't042': set CHESSBRIDGE_MQTT_PASSWORD" in done.stderr
    assert files(tmp_path) == {}


BLE_BOARD = "chessnut:EC:1B:00:11:22:33"
DROP_IN = "/etc/systemd/system/chessbridge@t042.service.d/bluetooth.conf"
NO_PASSWORD = {k: v for k, v in ENV.items() if k != "CHESSBRIDGE_MQTT_PASSWORD"}


def with_groups(root: Path, *groups: str) -> None:
    """The folder's ``/etc/group``, holding ``groups``."""
    (root / "etc").mkdir(parents=True, exist_ok=True)
    lines = ["root:x:0:", "dialout:x:20:", *(f"{g}:x:{100 + i}:" for i, g in enumerate(groups))]
    (root / "etc/group").write_text("\n".join(lines) + "\n")


def install_board(root: Path, board: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return chessbridge(
        "install",
        "--root",
        str(root),
        "--table",
        "t042",
        "--board",
        board,
        "--broker",
        "mqtt://broker.lan",
        *extra,
        env=NO_PASSWORD,
    )


@pytest.mark.parametrize("board", [BLE_BOARD, "pegasus:DGT_PEGASUS_1234", "millennium-ble:MILL"])
def test_a_bluetooth_le_board_gets_group_bluetooth_from_a_drop_in(
    tmp_path: Path, board: str
) -> None:
    with_groups(tmp_path, "bluetooth")
    before = files(tmp_path)
    dry = install_board(tmp_path, board, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "(Bluetooth LE: the service gets group bluetooth)" in dry.stdout.splitlines()[0]
    assert f"write   {DROP_IN} (mode 0644, owner root)" in steps(dry.stdout)
    assert "SupplementaryGroups=bluetooth" in [line.strip() for line in dry.stdout.splitlines()]
    assert [s for s in steps(dry.stdout) if s.startswith("run")] == [
        COMMANDS_OF_A_FIRST_INSTALL[0],  # useradd
        "run     systemctl daemon-reload",
        "run     systemctl enable --now chessbridge@t042",
    ]
    assert files(tmp_path) == before

    done = install_board(tmp_path, board)
    assert done.returncode == 0, done.stderr
    assert files(tmp_path)[DROP_IN] == 0o644
    drop_in = (tmp_path / DROP_IN.lstrip("/")).read_text()
    assert drop_in.endswith("\n[Service]\nSupplementaryGroups=bluetooth\n"), drop_in
    assert (tmp_path / "etc/chessbridge/t042.env").read_text() == f"CHESSBRIDGE_BOARD={board}\n"
    unit = (tmp_path / "etc/systemd/system/chessbridge@.service").read_text()
    assert "\nSupplementaryGroups=dialout\n" in unit  # the shared unit names no bluetooth group
    assert not (tmp_path / "etc/udev").exists()


def test_a_table_that_leaves_bluetooth_le_loses_its_drop_in(tmp_path: Path) -> None:
    with_groups(tmp_path, "bluetooth")
    assert install_board(tmp_path, BLE_BOARD).returncode == 0
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev/rfcomm0").touch()
    moved = install_board(tmp_path, "dgt:/dev/rfcomm0")
    assert moved.returncode == 0, moved.stderr
    assert [s.split(" (")[0] for s in steps(moved.stdout)] == [
        COMMANDS_OF_A_FIRST_INSTALL[0],
        "write   /etc/chessbridge/t042.env",
        f"remove  {DROP_IN}",
        "rmdir   /etc/systemd/system/chessbridge@t042.service.d",
        "run     systemctl daemon-reload",
        "run     systemctl enable chessbridge@t042",
        "run     systemctl restart chessbridge@t042",
    ]
    assert not (tmp_path / "etc/systemd/system/chessbridge@t042.service.d").exists()


def test_uninstall_removes_the_drop_in_of_a_bluetooth_le_table(tmp_path: Path) -> None:
    with_groups(tmp_path, "bluetooth")
    assert install_board(tmp_path, BLE_BOARD).returncode == 0
    (tmp_path / "etc/chessbridge/t043.env").write_text("CHESSBRIDGE_BOARD=dgt:/dev/x\n")
    gone = chessbridge("uninstall", "--root", str(tmp_path), "--table", "t042")
    assert gone.returncode == 0, gone.stderr
    assert [s.split(" (")[0] for s in steps(gone.stdout)] == [
        "run     systemctl disable --now chessbridge@t042",
        "remove  /etc/chessbridge/t042.env",
        "remove  /etc/chessbridge/t042.toml",
        f"remove  {DROP_IN}",
        "rmdir   /etc/systemd/system/chessbridge@t042.service.d",
        "run     systemctl daemon-reload",  # the unit stays for t043, the drop-in went
        "keep    /var/lib/chessbridge/t042",
    ]
    assert not (tmp_path / "etc/systemd/system/chessbridge@t042.service.d").exists()
    assert (tmp_path / "etc/systemd/system/chessbridge@.service").exists()


def test_a_bluetooth_le_board_without_the_bluetooth_group_is_refused(tmp_path: Path) -> None:
    with_groups(tmp_path)  # no BlueZ: no group bluetooth
    before = files(tmp_path)
    done = install_board(tmp_path, BLE_BOARD)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "has no group 'bluetooth'" in done.stderr
    assert "sudo apt install bluez" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert files(tmp_path) == before


def test_uninstall_dry_run_lists_the_steps_and_changes_nothing(tmp_path: Path) -> None:
    usb_board(tmp_path)
    assert install(tmp_path).returncode == 0
    before = files(tmp_path)
    dry = chessbridge("uninstall", "--root", str(tmp_path), "--table", "t042", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert [s.split(" (")[0] for s in steps(dry.stdout)] == UNINSTALL_T042
    assert "dry run: nothing was changed" in dry.stdout
    assert files(tmp_path) == before


@pytest.mark.parametrize("table", ["t/42", "", "../etc"])
def test_uninstall_with_a_bad_table_id_is_one_line_and_exit_2(tmp_path: Path, table: str) -> None:
    usb_board(tmp_path)
    assert install(tmp_path).returncode == 0
    before = files(tmp_path)
    done = chessbridge("uninstall", "--root", str(tmp_path), "--table", table)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"table id {table!r} must be 1 to 64 letters" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert files(tmp_path) == before


def not_root(*args: str) -> list[str]:
    """``chessbridge ARGS`` as a user who is not root: in a user namespace of its own when the
    tests run as root (its files stay reachable, but the command sees uid 65534)."""
    command = [sys.executable, "-m", "bridge", *args]
    if os.geteuid() != 0:
        return command
    unshare = shutil.which("unshare")
    assert unshare is not None, "unshare (util-linux) is needed to run a command as non-root"
    return [unshare, "--user", "--map-user=65534", "--map-group=65534", *command]


@pytest.mark.parametrize(
    "args",
    [
        ["install", "--board", "dgt:/dev/ttyACM0", "--broker", "mqtt://broker.lan"],
        ["uninstall"],
    ],
)
def test_the_commands_refuse_to_change_this_system_unless_root(args: list[str]) -> None:
    """No ``--root`` and no ``--dry-run``: this machine's own ``/``. Not root: one line, exit 2,
    before anything is looked at or written."""
    table = "t-not-root-check"
    command, rest = args[0], args[1:]
    done = subprocess.run(
        not_root(command, "--table", table, *rest),
        capture_output=True,
        text=True,
        env=ENV,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == (
        "chessbridge: must run as root: sudo chessbridge ... (add --dry-run to see the steps)"
    )
    assert done.stdout == ""
    assert not Path(f"/etc/chessbridge/{table}.env").exists()
    assert not Path(f"/var/lib/chessbridge/{table}").exists()
