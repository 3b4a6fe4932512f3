"""The soak, as CI runs it: four tables play random games of 30 plies in real time while
SIGKILLs, a broker outage, an unplugged board and replies begun before the mover's piece lands
pile up (tests/soak.py), and every table's events and retained game must be the moves played.

Each daemon is killed once or twice, 0.2-0.8 s after a press, and started again on its state
directory 1-3 s later while the players go on; the broker (Mosquitto with persistence) stops
for 2-4 s from shortly before one of those kills; one board is unplugged and plugged back; half
the boards keep no memory of their moves (an arbiter settles with ``reconstruct`` the order of
moves no fact of the table tells). The games, the moments of the faults and the boards'
memories come from one seed, printed with any failure, with each table that is not exact: what
differs, everything it published and its daemons' log. ``pytest --soak-seed N
tests/integration/test_soak.py`` runs another seed. Faults one at a time have tests of their
own (test_faults.py, test_offline_restart.py); this one finds what only their piling up does.
The longer form, against the same tables without faults, is ``bench/soak_bench.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest

from tests.conftest import MosquittoFactory
from tests.soak import plan, run

pytestmark = [pytest.mark.pty, pytest.mark.mosquitto]

SEED: Final = 35
"""The seed CI runs."""
TABLES: Final = 4
PLIES: Final = 30


@pytest.fixture
def soak_seed(request: pytest.FixtureRequest) -> int:
    """``--soak-seed``, or :data:`SEED`."""
    seed: int | None = request.config.getoption("--soak-seed")
    return SEED if seed is None else seed


@pytest.mark.timeout(300)
async def test_every_table_publishes_the_moves_played_while_faults_pile_up(
    mosquitto_factory: MosquittoFactory, tmp_path: Path, soak_seed: int
) -> None:
    broker = mosquitto_factory(persistence=True)
    soak = plan(soak_seed, TABLES, PLIES)
    print(soak.describe())  # shown by pytest only on failure

    outcome = await run(soak, broker, tmp_path)

    # The faults were made, and the consumer lived through the outage too.
    assert [t.kills for t in outcome.tables] == [len(t.kills) for t in soak.tables]
    assert sum(len(t.kills) for t in soak.tables) >= TABLES
    assert sum(t.unplugs for t in outcome.tables) == 1
    assert outcome.outages == 1
    assert outcome.connections >= 2
    assert outcome.problems == [], outcome.report()
