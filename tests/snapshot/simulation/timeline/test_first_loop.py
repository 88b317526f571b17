"""A timeline with no arrivals decides in its first loop what ``simulate autoscale`` decides on
the same cluster (issue 35's Done-when), on every case of the repository's cluster-autoscaler
tables: the 16 given clusters and the 330 of ``tests/fixtures/autoscale-random/``.

"The same cluster" is the one the timeline's first loop sees: the scheduler's pass at t=0 has
bound what fits (by kube-scheduler's scores, where ``autoscale``'s filterOutSchedulable packs by
round robin, so pods may sit on other nodes). That state, exported, is given to ``autoscale``:
it must place nothing more, and choose the same scale-up and find the same nodes unneeded. (The
timeline deletes none of them in that loop: a node's unneeded time starts there.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.simulation.autoscale_config import files_digest
from drasnap.snapshot.simulation.export import write_state
from drasnap.snapshot.simulation.inputs import source_digest
from drasnap.snapshot.simulation.runner import prepare, simulate
from drasnap.snapshot.simulation.settings import Settings
from drasnap.snapshot.simulation.timeline.records import LOOP_KIND, loop_key
from drasnap.snapshot.simulation.timeline.state import STATE_KEY, STATE_KIND
from drasnap.store import MemoryStore, Store

from tests.snapshot.simulation.ca_cases import case_inputs, given_cases, random_cases

CASES = given_cases() + random_cases()


def first_loop(case: dict[str, Any], tmp: Path) -> tuple[dict[str, int], set[str], Path, Path]:
    """The timeline's first loop on ``case``: its scale-up, the nodes it found unneeded, and
    the state it saw, exported (with the node-groups file)."""
    source, groups = case_inputs(case, tmp)
    trace = tmp / "trace.jsonl"
    trace.write_text("")
    settings = Settings(
        "timeline",
        source=str(source),
        source_digest=files_digest(source_digest(source), str(groups), None, str(trace)),
        node_groups_file=str(groups),
        expander=case["expander"],
        scale_down_utilization_threshold=case["threshold"],
        trace=str(trace),
        until="0s",
    ).resolved()
    db = str(tmp / "timeline.db")
    with ClusterSnapshot(Store.open(db, name="t")) as cs:
        simulate(cs, settings, lambda: prepare(settings))
        loop = cs.store.get(LOOP_KIND, loop_key(0)) or {}
        unneeded = set(cs.store.get(STATE_KIND, STATE_KEY)["unneeded"])
    seen = tmp / "seen"
    write_state(db, "t", None, seen)
    return dict(loop.get("scaled_up") or {}), unneeded, seen, groups


@pytest.mark.slow
@pytest.mark.parametrize("entry", CASES, ids=[e["case"]["name"] for e in CASES])
def test_the_first_loop_decides_what_autoscale_decides(
    entry: dict[str, Any], tmp_path: Path
) -> None:
    case = entry["case"]
    scaled_up, unneeded, seen, groups = first_loop(case, tmp_path)
    settings = Settings(
        "autoscale",
        source=str(seen),
        source_digest=files_digest(source_digest(seen), str(groups)),
        node_groups_file=str(groups),
        expander=case["expander"],
        scale_down_utilization_threshold=case["threshold"],
    ).resolved()
    decided = simulate(ClusterSnapshot(MemoryStore()), settings, lambda: prepare(settings)).result
    assert decided["placed_on_existing"] == {}  # the scheduler placed all that fits
    assert scaled_up == decided["added"]
    assert unneeded == set(decided["unneeded"])
