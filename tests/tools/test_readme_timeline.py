"""README's timeline example runs as written and prints what README shows (the seed is 0: the
generated trace, and so the run, are the same on every machine)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from drasnap.tools.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def readme_example() -> tuple[list[str], dict[str, str]]:
    """The example's command (its words after ``drasnap``) and the result lines README shows."""
    text = (ROOT / "README.md").read_text()
    section = text.split("### Timelines", 1)[1].split("\n### ", 1)[0]
    command = re.search(r"\n    (drasnap simulate timeline .*?)\n\n", section, re.S)
    assert command is not None
    words = shlex.split(command.group(1).replace("\\\n", " "))[1:]
    shown = re.search(r"prints .*?:\n\n((?:    .*\n)+)", section)
    assert shown is not None
    lines = {}
    for line in shown.group(1).splitlines():
        key, value = line.strip().split(None, 1)
        lines[key] = value
    return words, lines


@pytest.mark.slow
def test_the_readme_timeline_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    words, shown = readme_example()
    monkeypatch.chdir(ROOT)
    words[words.index("ex.db")] = str(tmp_path / "ex.db")
    result = CliRunner().invoke(cli, [*words, "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    for key, value in shown.items():
        assert found[key] == json.loads(value), key
