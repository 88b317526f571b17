"""Shared by the CLI tests of replay, inspect, diff, history and query."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from drasnap.tools.cli import cli

from tests.store.journal_session import Session, record_session


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    """The recorded session of tests/store/journal_session.py (read-only)."""
    return record_session(tmp_path_factory.mktemp("cli") / "session.db")


# The session database holds two stores, "default" (the recording) and "other" (newer); a read
# command given no --name reads the newest, so these tests name the recording.
_READ_COMMANDS = {"inspect", "history", "diff", "replay"}


def run(*args: str | Path) -> Result:
    words = [str(a) for a in args]
    if words and words[0] in _READ_COMMANDS and "--name" not in words:
        words += ["--name", "default"]
    return CliRunner().invoke(cli, words)


def run_json(*args: str | Path) -> Any:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)
