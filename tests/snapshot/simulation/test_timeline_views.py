"""The SQL views of a timeline, as a user reads them with ``drasnap query``: ``timeline`` (one
row per loop that decided something) and ``pod_waits`` (one row per pod), on SQLite and
PostgreSQL, against a run whose every row is derived by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.simulation.runner import prepare, simulate
from drasnap.snapshot.simulation.timeline.records import POD_LIFE
from drasnap.store import Store
from drasnap.tools.cli import cli

from tests.conftest import Database
from tests.snapshot.simulation.test_autoscale import settings, write
from tests.snapshot.simulation.timeline.helpers import (
    create,
    delete,
    group_entry,
    node,
    pod,
    run_timeline,
)


def sql(target: str, text: str) -> list[dict[str, Any]]:
    """``drasnap query TARGET "TEXT" --json``: the rows."""
    result = CliRunner().invoke(cli, ["query", target, text, "--json"])
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.stdout)
    return rows


def run_small(tmp: Path, target: str) -> None:
    """n1 (group cpu, 2 CPUs, at its minimum size) and group big (4 CPUs, 2m to provision):

    - p0 (1 CPU, priority 5) arrives at 5s, binds to n1 at once, completes at 105s;
    - p1 (3 CPUs) arrives at 6s; the loop at 10s scales big up by one; big-0 is ready at 130s
      and p1 binds there (a wait of 124s); the trace deletes it at 200s;
    - p3 (16 CPUs) arrives at 8s and fits no node nor group: pending at the end;
    - big-0, empty from 200s, is unneeded for the 1m unneeded-time strictly after 260s: the
      loop at 270s deletes it (deleted 5s later, after the taint).
    """
    trace = [
        create(5, pod("p0", "1", priority=5), runs=100),
        create(6, pod("p1", "3")),
        create(8, pod("p3", "16")),
        delete(200, "p1"),
    ]
    with Store.open(target, name="tl") as store:
        run_timeline(
            tmp,
            [node("n1", "cpu", 2)],
            [group_entry("cpu", 2, min_size=1), group_entry("big", 4)],
            trace,
            store=store,
            until="10m",
            scale_down_delay_after_add="0s",
            scale_down_unneeded_time="1m",
        )


def test_timeline_has_one_row_per_deciding_loop(tmp_path: Path, database: Database) -> None:
    run_small(tmp_path, database.target)
    rows = sql(
        database.target,
        "SELECT store, t, loop, pending, nodes_ready, nodes_provisioning, nodes_deleting, "
        "groups, scaled_up, deleted, unneeded, timed_out FROM timeline ORDER BY t",
    )
    for row in rows:  # JSON text: compact on SQLite, jsonb's spacing on PostgreSQL
        for column in ("groups", "scaled_up", "deleted", "timed_out"):
            row[column] = None if row[column] is None else json.loads(row[column])
    assert rows == [
        {  # the scale-up: p1 and p3 pending, big-0 provisioning
            "store": "tl",
            "t": 10.0,
            "loop": 1,
            "pending": 2,
            "nodes_ready": 1,
            "nodes_provisioning": 1,
            "nodes_deleting": 0,
            "groups": {
                "big": {"ready": 0, "provisioning": 1, "deleting": 0},
                "cpu": {"ready": 1, "provisioning": 0, "deleting": 0},
            },
            "scaled_up": {"big": 1},
            "deleted": [],
            "unneeded": 0,
            "timed_out": [],
        },
        {  # the scale-down: big-0 tainted, deleting; p3 still pending
            "store": "tl",
            "t": 270.0,
            "loop": 27,
            "pending": 1,
            "nodes_ready": 1,
            "nodes_provisioning": 0,
            "nodes_deleting": 1,
            "groups": {
                "big": {"ready": 0, "provisioning": 0, "deleting": 1},
                "cpu": {"ready": 1, "provisioning": 0, "deleting": 0},
            },
            "scaled_up": None,
            "deleted": ["big-0"],
            "unneeded": 1,
            "timed_out": [],
        },
    ]


def test_timeline_seq_is_where_inspect_at_shows_the_loop(
    tmp_path: Path, database: Database
) -> None:
    # The seq of a loop's row is its record's write: the record exists as of it, not before.
    run_small(tmp_path, database.target)
    (row,) = sql(database.target, "SELECT seq FROM timeline WHERE t = 270")
    seq = int(row["seq"])
    writes = sql(
        database.target,
        "SELECT seq, op, depth FROM journal WHERE kind = 'TimelineLoop' AND key = '000000270000'",
    )
    assert writes == [{"seq": seq, "op": "put", "depth": 0}]


def test_pod_waits_has_one_row_per_pod(tmp_path: Path, database: Database) -> None:
    run_small(tmp_path, database.target)
    rows = sql(
        database.target,
        "SELECT store, pod, incarnation_of, priority, arrived, bound, wait, node, node_group, "
        "ended, fate FROM pod_waits ORDER BY pod",
    )
    assert rows == [
        {
            "store": "tl",
            "pod": "default/p0",
            "incarnation_of": None,
            "priority": 5,
            "arrived": 5.0,
            "bound": 5.0,
            "wait": 0.0,
            "node": "n1",
            "node_group": "cpu",
            "ended": 105.0,
            "fate": "completed",
        },
        {
            "store": "tl",
            "pod": "default/p1",
            "incarnation_of": None,
            "priority": 0,
            "arrived": 6.0,
            "bound": 130.0,
            "wait": 124.0,
            "node": "big-0",
            "node_group": "big",
            "ended": 200.0,
            "fate": "deleted",
        },
        {  # never bound, never ended: pending at the end (the record's fate is null)
            "store": "tl",
            "pod": "default/p3",
            "incarnation_of": None,
            "priority": 0,
            "arrived": 8.0,
            "bound": None,
            "wait": None,
            "node": None,
            "node_group": None,
            "ended": None,
            "fate": "pending",
        },
    ]
    (reason,) = sql(database.target, "SELECT reason FROM pod_waits WHERE pod = 'default/p3'")
    assert "pod didn't trigger scale-up" in reason["reason"]


def test_pod_waits_match_the_records_and_the_totals(tmp_path: Path) -> None:
    # A busier run (60 pods over 5 minutes, scale-ups and -downs): each row is its PodLife
    # record in seconds, and the waits' maximum and the pods left pending are the run's totals.
    db = tmp_path / "sim.db"
    trace = [
        create(5 * i + 1, pod(f"p{i}", "8" if i % 3 == 0 else "1"), runs=600 + 37 * i)
        for i in range(60)
    ]
    with Store.open(db, name="busy") as store:
        outcome, _ = run_timeline(
            tmp_path,
            [node("n1", "cpu", 4), node("n2", "cpu", 4)],
            [group_entry("cpu", 4), group_entry("big", 8)],
            trace,
            store=store,
            until="30m",
        )
        lives = store.items(POD_LIFE)
    rows = {r["pod"]: r for r in sql(str(db), "SELECT * FROM pod_waits")}
    assert set(rows) == set(lives)

    def seconds(ms: Any) -> float | None:
        return None if ms is None else ms / 1000

    for key, life in lives.items():
        row = rows[key]
        assert row["arrived"] == seconds(life["arrived"]), key
        assert row["bound"] == seconds(life["bound"]), key
        assert row["ended"] == seconds(life["ended"]), key
        assert (row["node"], row["node_group"]) == (life["node"], life["group"]), key
        if life["bound"] is not None:
            assert row["wait"] == (life["bound"] - life["arrived"]) / 1000, key
    result = outcome.result
    (summary,) = sql(
        str(db),
        "SELECT max(wait) AS worst, sum(CASE WHEN fate = 'pending' THEN 1 ELSE 0 END) AS left_, "
        "count(wait) AS bound FROM pod_waits",
    )
    assert summary["worst"] == result["pod_wait_s"]["max"]
    assert summary["left_"] == result["never_scheduled"]
    assert summary["bound"] == result["pods_bound"]
    assert result["never_scheduled"] > 0  # (the run leaves some pending: the rule is exercised)


@pytest.mark.parametrize("view", ["timeline", "pod_waits"])
def test_a_run_without_a_timeline_has_empty_views(tmp_path: Path, view: str) -> None:
    # Every simulation database holds the views; another scenario's run has no rows in them.
    s = settings(write(tmp_path / "c", node("n1", "cpu", 2), pod("p", "1")))
    db = tmp_path / "sim.db"
    with ClusterSnapshot(Store.open(db, name="auto")) as cs:
        simulate(cs, s, lambda: prepare(s))
    assert sql(str(db), f"SELECT count(*) AS n FROM {view}") == [{"n": 0}]


def test_an_evicted_pod_and_its_next_incarnation_are_two_rows(
    tmp_path: Path, database: Database
) -> None:
    # n1 (group cpu) runs w, a ReplicaSet's pod of the starting cluster; n2 (no group) has
    # room. n1 is unneeded from the loop at 0s; the first loop strictly after 1m (70s) starts
    # its deletion: w is evicted, its controller makes w-e1, bound to n2 at once.
    with Store.open(database.target, name="tl") as store:
        run_timeline(
            tmp_path,
            [node("n1", "cpu", 4), node("n2", None, 4), pod("w", "1", "n1")],
            [group_entry("cpu", 4)],
            [],
            store=store,
            until="3m",
            scale_down_unneeded_time="1m",
        )
    rows = sql(
        database.target,
        "SELECT pod, incarnation_of, arrived, bound, wait, node, node_group, ended, fate "
        "FROM pod_waits ORDER BY pod",
    )
    assert rows == [
        {  # running since before the start (on n1): no arrival, no binding of the run's
            "pod": "default/w",
            "incarnation_of": None,
            "arrived": None,
            "bound": None,
            "wait": None,
            "node": "n1",
            "node_group": None,
            "ended": 70.0,
            "fate": "evicted",
        },
        {  # bound and running at the end: fate NULL; n2 belongs to no group
            "pod": "default/w-e1",
            "incarnation_of": "default/w",
            "arrived": 70.0,
            "bound": 70.0,
            "wait": 0.0,
            "node": "n2",
            "node_group": None,
            "ended": None,
            "fate": None,
        },
    ]
    # The loop counts before the scheduler's pass that follows it: w-e1 still pending.
    assert sql(database.target, "SELECT t, pending, nodes_deleting, deleted FROM timeline") == [
        {"t": 70.0, "pending": 1, "nodes_deleting": 1, "deleted": '["n1"]'}
    ]
