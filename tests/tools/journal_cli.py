"""Shared by the CLI tests of replay, inspect, diff, history and query."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.store.journal_session import Session, record_session
from tools.cli import cli


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    """The recorded session of tests/store/journal_session.py (read-only)."""
    return record_session(tmp_path_factory.mktemp("cli") / "session.db")


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def run_json(*args: str | Path) -> Any:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)
