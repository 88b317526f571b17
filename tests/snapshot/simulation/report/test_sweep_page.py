"""``drasnap report --sweep``: the page of a sweep's points, opened in headless Chromium: the
table ``drasnap compare --sweep`` prints (one row per point) and a chart per axis; no console
error, no request, nothing wider than a desktop window or a phone. And its usage errors.

Four points of ``tests/fixtures/sweep/gpu-shapes.yaml`` (every axis varies between them) are
run in this process, as ``tests/snapshot/simulation/test_sweep.py`` does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from drasnap.snapshot.simulation import load_sweep, run_point
from drasnap.tools.cli import cli

from tests.paths import FIXTURES
from tests.snapshot.simulation.report.browser import DESKTOP, PHONE, Browser

POINTS = (0, 7, 13, 18)  # base/none/least-waste/0.5 ... gpu8/none/most-pods/0.5
AXES = ("nodeGroups", "workloads", "expander", "scaleDownUtilizationThreshold")


@pytest.fixture(scope="module")
def sweep_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("sweep") / "sweep.db"
    sweep = load_sweep(FIXTURES / "sweep" / "gpu-shapes.yaml")
    for index in POINTS:
        run_point(str(db), sweep.point(index))
    return db


def test_the_sweep_page_has_a_row_per_point_and_a_chart_per_axis(
    browser: Browser, sweep_db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "gpu-shapes.html"
    result = CliRunner().invoke(
        cli, ["report", str(sweep_db), "--sweep", "gpu-shapes", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.stderr
    compare = CliRunner().invoke(cli, ["compare", str(sweep_db), "--sweep", "gpu-shapes", "--json"])
    assert compare.exit_code == 0, compare.output

    visit = browser.visit(out)
    p = visit.page
    assert p.get_by_role("heading", name="Sweep gpu-shapes").is_visible()
    rows = p.locator("table#points tbody tr")
    assert rows.count() == len(POINTS)
    names = [rows.nth(i).locator("td").nth(len(AXES)).inner_text() for i in range(len(POINTS))]
    assert names == [f"gpu-shapes-{i}" for i in POINTS]
    headers = p.locator("table#points thead th").all_inner_texts()
    assert headers[: len(AXES) + 1] == [*AXES, "name"]
    assert "cost_per_hour" in headers
    assert p.get_by_text(f"drasnap compare {sweep_db} --sweep gpu-shapes").is_visible()
    for axis in AXES:
        chart = f"{axis} chart: nodes added, pods pending and cost by variant"
        assert p.get_by_role("img", name=chart).is_visible(), axis
    # The filter by an axis's variant hides the other points.
    p.get_by_label("filter by nodeGroups").select_option("base")
    assert p.locator("table#points tbody tr:visible").count() == 2
    assert visit.errors == []
    assert visit.requests == []
    for size in (DESKTOP, PHONE):
        shot = tmp_path / f"sweep-{size['width']}.png"
        assert browser.screenshot(visit, shot, size) == 0, f"overflows at {size}"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--sweep", "gpu-shapes", "--name", "gpu-shapes-0"], 2, "give --sweep or --name"),
        (["--sweep", "nope"], 1, "Error: "),
        (["--sweep", "gpu-shapes", "-o", "page.txt"], 2, "does not end in .html"),
    ],
)
def test_sweep_page_errors(
    sweep_db: Path, tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    result = CliRunner().invoke(cli, ["report", str(sweep_db), *args])
    assert result.exit_code == code, result.output
    assert message in result.stderr
    if code == 1:
        (line,) = result.stderr.strip().splitlines()
        assert "no finished point of a sweep 'nope'" in line
    assert "Traceback" not in result.output
