"""``drasnap report`` at the command line: where the page goes, and mistakes refused in one line
(no browser needed; tests/snapshot/simulation/report/ opens the pages in one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from drasnap.store import Store
from drasnap.tools.cli import cli


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "sim.db"
    result = CliRunner().invoke(
        cli, ["simulate", "scale-down", str(path), "--nodes", "6", "--name", "down"]
    )
    assert result.exit_code == 0, result.output
    return path


def test_the_page_is_written_under_the_runs_name_by_default(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["report", str(db)])
    assert result.exit_code == 0, result.output
    page = tmp_path / "down.html"
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert "Run down: scale-down" in text
    # Offline: nothing the page would fetch.
    assert "src=" not in text and 'href="http' not in text and "@import" not in text
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report-")] == []


def test_mistakes_are_one_line_and_leave_nothing(db: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(cli, ["report", str(db), "-o", str(tmp_path / "page.txt")])
    assert bad.exit_code == 2 and "does not end in .html" in bad.output
    with Store.open(db, name="plain") as store:
        store.put("k", "a", 1)
    other = runner.invoke(
        cli, ["report", str(db), "--name", "plain", "-o", str(tmp_path / "p.html")]
    )
    assert other.exit_code == 1
    assert other.output.strip().splitlines()[-1] == (
        f"Error: store 'plain' of {db} holds no simulation run (see drasnap runs)"
    )
    missing = runner.invoke(cli, ["report", str(tmp_path / "none.db"), "--name", "x"])
    assert missing.exit_code == 1 and missing.output.startswith("Error: ")
    assert not (tmp_path / "p.html").exists() and not (tmp_path / "page.txt").exists()
