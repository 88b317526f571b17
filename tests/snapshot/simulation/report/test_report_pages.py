"""``drasnap report``'s page of each scenario, opened in headless Chromium: a user finds the
summary, the node-group table, a pending pod's message and each chart; the page logs no
console error, makes no request, and fits the width of a desktop window and of a phone.

The 10,000-node scale-down's page is measured: its size and the time the browser takes to
load it, against the limits the README gives (20 MB, 5 s; its table and charts aggregate).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from drasnap.snapshot.simulation import Settings
from drasnap.snapshot.simulation.report import gather, write_report
from drasnap.store import Store
from drasnap.tools.cli import cli

from tests.paths import ROOT
from tests.snapshot.simulation.report.browser import DESKTOP, PHONE, Browser, Visit
from tests.snapshot.simulation.test_autoscale import node, pod, write
from tests.snapshot.simulation.test_scenarios import interrupted_run, write_manifests

#: The README's screenshot, rewritten by the scale-down test when DRASNAP_WRITE_SCREENSHOT=1.
SCREENSHOT = ROOT / "docs" / "report.png"
SCREENSHOT_WANTED = os.environ.get("DRASNAP_WRITE_SCREENSHOT") == "1"


def simulate(db: Path, *args: str) -> None:
    result = CliRunner().invoke(cli, ["simulate", *args[:1], str(db), *args[1:], "--json"])
    assert result.exit_code == 0, result.output


def report(db: Path, name: str, tmp_path: Path) -> Path:
    out = tmp_path / f"{name}.html"
    result = CliRunner().invoke(cli, ["report", str(db), "--name", name, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.stderr
    return out


def check_page(browser: Browser, page: Path, tmp_path: Path, charts: list[str]) -> Visit:
    """What every page must give: the summary, each chart named, no error, no request, and
    nothing wider than the window at 1280x800 and 390x844 (screenshots of both)."""
    visit = browser.visit(page)
    p = visit.page
    assert p.get_by_role("heading", name="Summary").is_visible()
    for chart in charts:
        assert p.get_by_role("img", name=chart).is_visible(), chart
    # Every table names the command that prints its rows.
    tables = p.locator("table").count()
    assert tables >= 2
    assert p.get_by_text("The same rows in a terminal:").count() == tables
    assert visit.errors == []
    assert visit.requests == []
    for size in (DESKTOP, PHONE):
        shot = tmp_path / f"{page.stem}-{size['width']}.png"
        assert browser.screenshot(visit, shot, size) == 0, f"overflows at {size}"
        assert shot.stat().st_size > 1000
    visit.page.set_viewport_size(DESKTOP)
    return visit


def test_scale_up_page(browser: Browser, tmp_path: Path) -> None:
    db = tmp_path / "sim.db"
    simulate(db, "scale-up", "--from", str(write_manifests(tmp_path / "dump")), "--name", "up")
    visit = check_page(
        browser,
        report(db, "up", tmp_path),
        tmp_path,
        [
            "Node group estimates chart",
            "Run shape chart: fork depth, commits and reverts",
            "Device allocation heat map",
        ],
    )
    p = visit.page
    groups = p.get_by_role("table", name="Node groups: estimates and the choice")
    assert groups.get_by_role("row").filter(has_text="gpu-a").count() == 1
    pending = p.get_by_role("table", name="Pending pods and the scheduler's message")
    row = pending.get_by_role("row").filter(has_text="default/pending-big")
    assert "0/5 nodes are available: 5 cannot allocate all claims." in row.inner_text()
    # The claim history names its command, which prints the same events.
    assert p.get_by_text(re.compile(r"drasnap history .* --claim ")).count() == 1


def test_autoscale_page_filters_pending_pods_by_reason_and_namespace(
    browser: Browser, tmp_path: Path
) -> None:
    directory = write(
        tmp_path / "dump",
        node("a-0", "a", 4),
        node("b-0", "b", 2),
        pod("running", "1", "a-0"),
        pod("running-b", "1", "b-0"),
        pod("p1", "2"),
        pod("p2", "2"),
        pod("huge", "16"),
        {**pod("other", "16"), "metadata": {"name": "other", "namespace": "team"}},
    )
    db = tmp_path / "sim.db"
    simulate(db, "autoscale", "--from", str(directory), "--name", "auto")
    visit = check_page(
        browser,
        report(db, "auto", tmp_path),
        tmp_path,
        [
            "Node group estimates chart",
            "Node utilization before and after chart",
            "Run shape chart: fork depth, commits and reverts",
        ],
    )
    p = visit.page
    groups = p.get_by_role("table", name="Node groups: estimates and the expander's choice")
    assert groups.get_by_role("row").filter(has_text="chosen by the expander").count() == 1
    pending = p.get_by_role("table", name="Pending pods and the scheduler's message")
    rows = pending.locator("tbody tr")
    assert rows.count() == 2
    assert "Insufficient cpu" in rows.first.inner_text()
    p.get_by_label("filter by namespace").select_option("team")
    assert [r.is_visible() for r in rows.all()] == [False, True]
    nodes = p.get_by_role("table", name=re.compile("Nodes removed and kept"))
    assert nodes.get_by_role("row").filter(has_text="b-0").count() == 1


def test_scale_down_page(browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the page names the database as given: sim.db
    db = Path("sim.db")
    simulate(db, "scale-down", "--nodes", "24", "--name", "down")
    visit = check_page(
        browser,
        report(db, "down", tmp_path),
        tmp_path,
        [
            "Node utilization before and after chart",
            "Run shape chart: fork depth, commits and reverts",
            "Device allocation heat map",
        ],
    )
    p = visit.page
    nodes = p.get_by_role("table", name=re.compile("Nodes removed and kept"))
    removed = nodes.get_by_role("row").filter(has_text="removed")
    kept = nodes.get_by_role("row").filter(has_text="kept")
    assert removed.count() > 0 and kept.count() > 0
    assert "0% / 0% / 100%" in kept.first.inner_text()  # its GPUs, full after the run
    p.get_by_label("filter by verdict").select_option("kept")
    assert not removed.first.is_visible()
    if SCREENSHOT_WANTED:  # the README's, by the code that takes the test's screenshots
        p.get_by_label("filter by verdict").select_option("")
        title = p.get_by_role("heading", name=re.compile("Nodes removed and kept"))
        title.evaluate("element => element.scrollIntoView()")
        browser.screenshot(visit, SCREENSHOT, DESKTOP)


def test_a_run_in_progress_shows_its_last_checkpoint(browser: Browser, tmp_path: Path) -> None:
    db = tmp_path / "sim.db"
    interrupted_run(db, Settings("scale-down", nodes=12), at_step=5)
    # Another process writes it meanwhile: the page is read from the last checkpoint.
    with Store.open(db, name="default"):
        out = tmp_path / "default.html"
        write_report(gather(str(db), "default"), out)
    visit = browser.visit(out)
    banner = visit.page.get_by_role("status")
    assert "This run is not finished (step 5 of 12)" in banner.inner_text()
    assert "last checkpoint" in banner.inner_text()
    assert visit.errors == [] and visit.requests == []


@pytest.mark.slow
def test_a_10000_node_scale_down_page_is_small_and_lays_out_few_rows(
    browser: Browser, tmp_path: Path
) -> None:
    db = tmp_path / "sim.db"
    # One pod of two GPUs' room per node: half the nodes empty onto the others (45 s here).
    simulate(
        db,
        "scale-down",
        "--nodes",
        "10000",
        "--pods-per-node",
        "1",
        "--gpus-per-node",
        "2",
        "--name",
        "big",
    )
    start = time.perf_counter()
    page = report(db, "big", tmp_path)
    built = time.perf_counter() - start
    size = page.stat().st_size
    visit = browser.visit(page)
    print(
        f"10,000 nodes: page {size / 1e6:.2f} MB, built in {built:.1f} s, "
        f"loaded in {visit.load_seconds:.2f} s"
    )
    # Its time to open is the bench's to measure; what keeps it small is bounded here: the
    # bytes, and the rows the browser lays out (300 a table, whatever the cluster's size).
    assert size < 20e6
    p = visit.page
    assert p.locator("tr").count() < 1_000
    assert p.get_by_role("heading", name="Aggregated").is_visible()
    # The nodes and the top-level forks: 10,000 rows each, 300 shown.
    assert p.get_by_text(re.compile(r"The first 300 of 10000 rows are shown")).count() == 2
    assert p.get_by_role("img", name="Device allocation heat map").is_visible()
    assert visit.errors == [] and visit.requests == []
    assert browser.screenshot(visit, tmp_path / "big-phone.png", PHONE) == 0
