"""``drasnap report`` of a timeline: each node group's nodes and the pending pods over
simulated time, node-hours and cost per group, the wait distribution and the loops, derived by
hand on a small run; and the page as a user opens it in Chromium."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from click.testing import CliRunner
from drasnap.snapshot.simulation.report import gather
from drasnap.snapshot.simulation.report.timeline import histogram
from drasnap.store import Store
from drasnap.tools.cli import cli

from tests.snapshot.simulation.report.browser import Browser
from tests.snapshot.simulation.report.test_report_pages import check_page, report
from tests.snapshot.simulation.timeline.helpers import create, delete, group_entry, node, owned, pod
from tests.snapshot.simulation.timeline.helpers import run_timeline as run


def small_run(tmp: Path) -> Path:
    """The run of ``test_timeline_views.run_small`` (read its story there), with a price on
    group big: 2 per node-hour."""
    db = tmp / "sim.db"
    trace = [
        create(5, pod("p0", "1", priority=5), runs=100),
        create(6, pod("p1", "3")),
        create(8, pod("p3", "16")),
        delete(200, "p1"),
    ]
    with Store.open(db, name="tl") as store:
        run(
            tmp,
            [node("n1", "cpu", 2)],
            [group_entry("cpu", 2, min_size=1), {**group_entry("big", 4), "cost": 2}],
            trace,
            store=store,
            until="10m",
            scale_down_delay_after_add="0s",
            scale_down_unneeded_time="1m",
        )
    return db


def test_the_series_change_where_the_run_did(tmp_path: Path) -> None:
    section = gather(str(small_run(tmp_path)), "tl").timeline
    assert section is not None
    # 5s p0 arrives and binds; 6s, 8s p1, p3 pending; 10s big-0 scaled up; 130s ready, p1
    # binds; 270s deletion starts; 275s deleted; 600s the end. (p0's end at 105s and p1's
    # deletion at 200s change no count drawn.)
    assert section.times == [0, 5, 6, 8, 10, 130, 270, 275, 600]
    assert section.pending == [0, 0, 1, 2, 2, 1, 1, 1, 1]
    assert section.nodes["big"] == {
        "ready": [0, 0, 0, 0, 0, 1, 0, 0, 0],
        "provisioning": [0, 0, 0, 0, 1, 0, 0, 0, 0],
        "deleting": [0, 0, 0, 0, 0, 0, 1, 0, 0],
    }
    assert section.nodes["cpu"]["ready"] == [1] * 9
    assert section.peak == {"cpu": 1, "big": 1}
    assert section.waits == [0.0, 124.0]
    assert section.notes == []


def test_the_tables_give_node_hours_cost_and_waits(tmp_path: Path) -> None:
    r = gather(str(small_run(tmp_path)), "tl")
    # big-0: billed from 10s to 275s (265s), ready from 130s (145s); n1 the whole 600s.
    assert r.tables["timeline-groups"].rows == [
        ["cpu", 1, 1, "0.167", "0.167", "-", "-"],
        ["big", 1, 0, "0.074", "0.040", "2", "0.15"],
    ]
    assert ("cluster cost", "0.147222 (big priced)") in r.summary
    # Two pods bound, waits 0 and 124s (nearest rank: p50 the first); p3 never scheduled.
    assert r.tables["waits"].rows == [[2, "0", "124", "124", "124", 1, 0]]
    assert r.tables["loops"].rows == [
        ["10", "big +1", "-", "-", 2, 1, 1, 0],
        ["270", "-", "big-0", "-", 1, 1, 0, 1],
    ]
    assert "1 pod(s) pending at the end" in r.tables["pending"].note
    assert r.wait_bins[0] == (0.0, 6.2, 1) and r.wait_bins[-1][2] == 1
    assert sum(n for _, _, n in r.wait_bins) == 2


def test_the_commands_the_tables_name_print_their_numbers(tmp_path: Path) -> None:
    r = gather(str(small_run(tmp_path)), "tl")

    def rows(table: str) -> list[dict[str, object]]:
        command = shlex.split(r.tables[table].source)
        assert command[:2] == ["drasnap", "query"]
        result = CliRunner().invoke(cli, [*command[1:], "--json"])
        assert result.exit_code == 0, result.output
        found: list[dict[str, object]] = json.loads(result.stdout)
        return found

    hours = {
        row["node_group"]: round(float(str(row["node_hours"])), 3)
        for row in rows("timeline-groups")
    }
    assert hours == {"cpu": 0.167, "big": 0.074}
    assert [row["t"] for row in rows("loops")] == [10.0, 270.0]
    assert [(row["pod"], row["wait"]) for row in rows("waits")][:2] == [
        ("default/p1", 124.0),
        ("default/p0", 0.0),
    ]


def test_the_series_agree_with_every_loop_record(tmp_path: Path) -> None:
    # 60 ReplicaSet pods over 5 minutes, a third of 8 CPUs: big scales up, then down, evicting
    # pods that come back. At each loop the rebuilt counts are the loop record's (pending too,
    # where the loop evicted nothing: evicted pods are bound again right after the loop).
    db = tmp_path / "sim.db"
    trace = [
        create(5 * i + 1, owned(pod(f"p{i}", "8" if i % 3 == 0 else "1")), runs=600 + 37 * i)
        for i in range(60)
    ]
    with Store.open(db, name="busy") as store:
        run(
            tmp_path,
            [node("n1", "cpu", 4), node("n2", "cpu", 4)],
            [group_entry("cpu", 4), group_entry("big", 8)],
            trace,
            store=store,
        )
    section = gather(str(db), "busy").timeline
    assert section is not None and section.binned == 1
    at = {t: i for i, t in enumerate(section.times)}
    assert len(section.loops) > 10
    for loop in section.loops:
        i = at[loop["t"] / 1000]
        for group, counts in loop["groups"].items():
            assert {s: section.nodes[group][s][i] for s in counts} == counts, loop
        if not loop["deleted"]:
            assert section.pending[i] == loop["pending"], loop
    assert any(loop["deleted"] for loop in section.loops)
    assert section.notes == []


def test_an_instance_cancelled_after_a_timed_out_scale_up_leaves_the_count(tmp_path: Path) -> None:
    # Group bad never delivers: its scale-up at 10s times out at the first loop strictly after
    # 10s + 1m (80s), which lowers its target and cancels bad-0, which never registered.
    db = tmp_path / "sim.db"
    with Store.open(db, name="tl") as store:
        run(
            tmp_path,
            [node("n1", "cpu", 2)],
            [group_entry("cpu", 2, min_size=1), {**group_entry("bad", 4), "provisioning": "fail"}],
            [create(5, pod("p", "3"))],
            store=store,
            until="5m",
            max_node_provision_time="1m",
        )
    r = gather(str(db), "tl")
    section = r.timeline
    assert section is not None
    assert section.times == [0, 5, 10, 80, 300]
    assert section.nodes["bad"]["provisioning"] == [0, 0, 1, 0, 0]
    with Store.open(db, name="tl", readonly=True) as store:
        assert store.get("TimelineNode", "bad-0")["deleted"] == 80_000  # closed when cancelled
    assert r.tables["loops"].rows[1][:4] == ["80", "-", "-", "bad"]


def test_a_run_without_a_timeline_has_no_timeline_section(tmp_path: Path) -> None:
    from tests.snapshot.simulation.report.test_report_pages import simulate

    db = tmp_path / "sim.db"
    simulate(db, "scale-down", "--nodes", "4", "--name", "down")
    r = gather(str(db), "down")
    assert r.timeline is None and "waits" not in r.tables


def test_histogram_bins() -> None:
    assert histogram([]) == []
    assert histogram([0.0, 0.0]) == [(0.0, 0.0, 2)]
    assert histogram([0.0, 1.0, 4.0], bins=4) == [
        (0.0, 1.0, 1),
        (1.0, 2.0, 1),
        (2.0, 3.0, 0),
        (3.0, 4.0, 1),  # the last bin holds the largest
    ]


def test_timeline_page(browser: Browser, tmp_path: Path) -> None:
    db = small_run(tmp_path)
    visit = check_page(
        browser,
        report(db, "tl", tmp_path),
        tmp_path,
        [
            "Timeline chart: nodes per group and pending pods over time",
            "Pod wait distribution chart",
            "Run shape chart: fork depth, commits and reverts",
        ],
    )
    p = visit.page
    groups = p.get_by_role("table", name="Node groups over the run (600s of simulated time)")
    assert "0.074" in groups.get_by_role("row").filter(has_text="big").inner_text()
    waits = p.get_by_role("table", name="Pod waits: from arrival to binding")
    assert "124" in waits.locator("tbody tr").inner_text()
    loops = p.get_by_role("table", name="Loops that decided something")
    assert loops.locator("tbody tr").count() == 2
    assert p.get_by_text("FROM pod_waits WHERE store = 'tl'").count() >= 1


def test_a_long_series_is_drawn_binned_and_keeps_its_peaks() -> None:
    from drasnap.snapshot.simulation.report.timeline import POINTS, TimelineSection, _bin

    count = 2 * POINTS + 2  # three instants per point: 1001 points, and the last instant
    pending = [0] * count
    pending[4] = 7  # a peak inside the second bin
    section = TimelineSection(
        groups=["g"],
        end=float(count),
        times=[float(t) for t in range(count)],
        nodes={
            "g": {"ready": list(range(count)), "provisioning": [0] * count, "deleting": [0] * count}
        },
        pending=pending,
        waits=[],
        totals={},
        costs={},
        loops=[],
    )
    _bin(section)
    assert section.binned == 3
    assert len(section.times) == 1001 + 1
    assert section.times[-2:] == [3000.0, 3001.0]  # the last bin's start, then the end
    assert section.nodes["g"]["ready"][-2:] == [3001, 3001]
    assert section.times[:3] == [0.0, 3.0, 6.0]
    assert section.pending[:3] == [0, 7, 0]
    assert section.nodes["g"]["ready"][:3] == [2, 5, 8]  # each bin's most
