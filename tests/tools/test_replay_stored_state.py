"""``replay --verify`` checks the state the store holds, not only its journal (issue 40 item 1):
damage confined to the ``entries`` table (a value changed, a row removed, a row added) leaves
the journal whole, and is reported with each kind and key that differs, never as identical."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import string
from collections.abc import Callable
from pathlib import Path

import pytest
from drasnap.store import replay

from tests.store.journal_session import Session
from tests.tools.journal_cli import run
from tests.tools.journal_cli import session as session  # the fixture

Damage = Callable[[sqlite3.Connection], tuple[str, str]]


def _single_row(conn: sqlite3.Connection) -> tuple[int, str, str]:
    """An entry row of the recording that is its key's only row, with a value."""
    row = conn.execute(
        "SELECT id, kind, key FROM entries e WHERE store_id = 1 AND NOT tombstone AND "
        "(SELECT count(*) FROM entries o WHERE o.store_id = 1 AND o.kind = e.kind "
        "AND o.key = e.key) = 1 ORDER BY id LIMIT 1"
    ).fetchone()
    assert row is not None
    return int(row[0]), str(row[1]), str(row[2])


def _changed(conn: sqlite3.Connection) -> tuple[str, str]:
    rowid, kind, key = _single_row(conn)
    conn.execute("UPDATE entries SET value = ? WHERE id = ?", ('{"forged": true}', rowid))
    return kind, key


def _removed(conn: sqlite3.Connection) -> tuple[str, str]:
    rowid, kind, key = _single_row(conn)
    conn.execute("DELETE FROM entries WHERE id = ?", (rowid,))
    return kind, key


def _added(conn: sqlite3.Connection) -> tuple[str, str]:
    conn.execute(
        "INSERT INTO entries (store_id, kind, key, depth, tombstone, value) "
        "VALUES (1, 'ResourceClaim', 'ml/forged', 0, 0, '{}')"
    )
    return "ResourceClaim", "ml/forged"


@pytest.mark.parametrize(
    "damage", [_changed, _removed, _added], ids=["changed", "removed", "added"]
)
def test_a_damaged_stored_state_is_reported_with_its_kind_and_key(
    session: Session, tmp_path: Path, damage: Damage
) -> None:
    path = tmp_path / "damaged.db"
    shutil.copy(session.path, path)
    clean = replay(path, name="default", verify=True)
    assert clean.stored_differs == () and clean.matches is True
    with sqlite3.connect(path) as conn:
        kind, key = damage(conn)
    report = replay(path, name="default", verify=True)
    assert report.divergence is None  # the journal is whole ...
    assert report.stored_differs == ((kind, key),)  # ... the state is not
    assert report.matches is False
    result = run("replay", path, "--verify", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["stored_differs"] == [{"kind": kind, "key": key}]
    assert result.stderr.startswith(
        f"Error: the stored state of store 'default' differs from its journal's replay in 1 "
        f"entry: {kind} {key}; "
    )
    assert "--into NEW.db" in result.stderr and result.stderr.count("\n") == 1
    table = run("replay", path, "--verify")
    assert table.exit_code == 1 and "stored state: DIFFERENT in 1 entry" in table.stdout


def test_an_intact_store_says_its_stored_state_is_identical(session: Session) -> None:
    result = run("replay", session.path, "--verify")
    assert result.exit_code == 0, result.output
    assert "stored state: identical" in result.stdout


def test_random_byte_damage_to_visible_values_is_always_named(
    session: Session, tmp_path: Path
) -> None:
    """25 seeded trials: one byte of a stored value the state shows (not one an open layer
    hides: the comparison is of the visible state) becomes another printable character; the
    damage is named, whether the text still parses or not."""
    rng = random.Random(40)
    source = tmp_path / "source.db"
    shutil.copy(session.path, source)
    with sqlite3.connect(source) as conn:
        rows = conn.execute(
            "SELECT id, kind, key, value FROM entries e WHERE store_id = 1 AND NOT tombstone "
            "AND depth = (SELECT max(depth) FROM entries o WHERE o.store_id = 1 "
            "AND o.kind = e.kind AND o.key = e.key)"
        ).fetchall()
    assert len(rows) >= 3
    named = 0
    for trial in range(25):
        rowid, kind, key, text = rng.choice(rows)
        at = rng.randrange(len(text))
        damaged = text[:at] + rng.choice(string.printable.replace(text[at], "")) + text[at + 1 :]
        path = tmp_path / f"damaged-{trial}.db"
        shutil.copy(source, path)
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE entries SET value = ? WHERE id = ?", (damaged, rowid))
        report = replay(path, name="default", verify=True)
        if _decodes_to_the_same(damaged, text):
            continue  # (an equal value written otherwise: no damage to the state)
        assert report.matches is False, (trial, kind, key, damaged)
        assert (kind, key) in report.stored_differs
        named += 1
    assert named >= 20


def _decodes_to_the_same(damaged: str, text: str) -> bool:
    try:
        return bool(json.loads(damaged) == json.loads(text))
    except ValueError:
        return False
