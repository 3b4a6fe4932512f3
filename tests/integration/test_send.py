"""``chessbridge send TABLE COMMAND [FIELD=VALUE ...]`` against a real table daemon."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest

from bridge.views.send import parse_fields, send
from bridge.wire.config import broker_settings
from tests.cli import chessbridge
from tests.conftest import Mosquitto, MosquittoFactory
from tests.relay_harness import running_table

pytestmark = [pytest.mark.mosquitto]


async def cli(*args: str) -> tuple[int, str, str]:
    proc = await chessbridge(
        "send",
        *args,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.pty
async def test_a_command_from_the_shell_reaches_the_table_and_prints_its_response(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path
) -> None:
    async with running_table(mosquitto, table_id, tmp_path / "table") as (_, daemon):
        code, out, err = await cli(
            table_id,
            "assign",
            "white=Anna Ushenina",
            "black=Mariya Muzychuk",
            "white_fide_id=14114003",
            "board=3",
            "--broker",
            mosquitto.url,
        )
        assert code == 0, err
        response = json.loads(out)
        assert response["status"] == "ok"
        assert response["transaction"].startswith("send-")
        assert response["data"]["white_fide_id"] == 14114003  # typed as text, sent as a number
        assert daemon.assignment.white == "Anna Ushenina"
        assert daemon.assignment.board == 3

        stream = io.StringIO()
        refused = await send(
            table_id, "ack_alert", ["id=7"], broker=broker_settings(mosquitto.url), out=stream
        )
        assert refused == 1  # the table answered: no such alert
        assert json.loads(stream.getvalue())["error"].startswith("no open alert has id 7")


async def test_a_command_that_cannot_be_sent_is_exit_2_and_nothing_is_published(
    mosquitto: Mosquitto,
) -> None:
    code, out, err = await cli("t1", "ack_alert", "id=three", "--broker", mosquitto.url)
    assert code == 2
    assert out == ""
    assert "invalid ack_alert request" in err
    code, _, err = await cli("t1", "resign", "--broker", mosquitto.url)
    assert code == 2
    assert "unknown command 'resign'" in err
    code, _, err = await cli("t+1", "takeback", "--broker", mosquitto.url)
    assert code == 2
    assert "invalid table id" in err


async def test_no_table_answering_is_exit_1(mosquitto: Mosquitto) -> None:
    code, _, err = await cli("nobody-home", "takeback", "--broker", mosquitto.url, "--wait", "1")
    assert code == 1
    assert "no response from table nobody-home within 1 s" in err


async def test_refused_credentials_are_exit_2(
    mosquitto_factory: MosquittoFactory, tmp_path: Path
) -> None:
    broker = mosquitto_factory(users={"arbiter1": "right"})
    config = tmp_path / "c.toml"
    config.write_text('[broker]\nusername = "arbiter1"\npassword = "wrong"\n')
    code, _, err = await cli("t1", "takeback", "--broker", broker.url, "--config", str(config))
    assert code == 2
    assert "refused the login" in err
    assert "wrong" not in err


def test_fields_are_field_equals_value() -> None:
    assert parse_fields(["id=3", "reason=Black resigned", "running="]) == {
        "id": "3",
        "reason": "Black resigned",
        "running": None,
    }
    with pytest.raises(ValueError, match="FIELD=VALUE"):
        parse_fields(["id"])
    with pytest.raises(ValueError, match="given twice"):
        parse_fields(["id=1", "id=2"])
