"""``drasnap replay`` through click's CliRunner, on a recorded session and on simulation runs."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from drasnap.store import Store
from drasnap.store.codec import encode

from tests.store.journal_session import Session, claim
from tests.tools.journal_cli import run, run_json
from tests.tools.journal_cli import session as session  # the fixture


def test_replay_json_reports_the_recorded_digest(session: Session) -> None:
    data = run_json("replay", session.path, "--verify")
    assert data["state_digest"] == data["recorded_digest"] == session.final_digest
    assert data["matches"] is True and data["divergence"] is None
    assert (data["records"], data["last_seq"], data["depth"]) == (27, 27, 1)
    assert data["checkpoints_verified"] == 3
    assert data["into"] is None


@pytest.mark.parametrize("seq", [1, 8, 11, 12, 18, 20, 26], ids=lambda s: f"seq-{s}")
def test_replay_to_mid_run_gives_the_digest_recorded_then(session: Session, seq: int) -> None:
    data = run_json("replay", session.path, "--to", str(seq))
    assert data["state_digest"] == session.digests[seq]
    assert data["last_seq"] == seq


def test_replay_table_output(session: Session) -> None:
    result = run("replay", session.path, "--verify")
    assert result.exit_code == 0, result.output
    assert "replayed 27 records of store 'default' (seq 1..27) into memory" in result.stdout
    assert f"recorded digest {session.final_digest}: identical" in result.stdout


def test_replay_into_a_file(session: Session, tmp_path: Path) -> None:
    out = tmp_path / "out.db"
    data = run_json("replay", session.path, "--into", out)
    assert data["into"] == str(out) and data["matches"]
    with Store.open(out, readonly=True) as copy:
        assert copy.state_digest() == session.final_digest
    again = run("replay", session.path, "--into", out)
    assert again.exit_code == 1
    assert again.stderr.startswith("Error: ") and "already holds a store" in again.stderr


def test_a_divergence_exits_1_and_names_seq_kind_and_key(session: Session, tmp_path: Path) -> None:
    path = tmp_path / "tampered.db"
    shutil.copy(session.path, path)
    seq = session.marks["train-2 on node-b"]
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE journal SET value = ? WHERE seq = ? AND store_id = 1",
            (encode(claim("ml", "train-2")), seq),
        )
    result = run("replay", path, "--verify", "--json")
    assert result.exit_code == 1
    divergence = json.loads(result.stdout)["divergence"]
    assert (divergence["seq"], divergence["kind"], divergence["key"]) == (
        session.last_seq,
        "ResourceClaim",
        "ml/train-2",
    )
    assert divergence["last_write_seq"] == seq
    assert "Error: replay diverged at seq 27: ResourceClaim ml/train-2" in result.stderr
    plain = run("replay", path)
    assert plain.exit_code == 1 and "run with --verify" in plain.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--to", "0"], "seq 0 is not in the journal"),
        (["--name", "nope"], "no store named 'nope'"),
    ],
    ids=["seq", "store"],
)
def test_replay_errors(session: Session, args: list[str], message: str) -> None:
    result = run("replay", session.path, *args)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("Error: ") and message in result.stderr


def test_replay_of_a_missing_file(tmp_path: Path) -> None:
    result = run("replay", tmp_path / "none.db")
    assert result.exit_code == 1 and "does not exist" in result.stderr
    assert not (tmp_path / "none.db").exists()


# -- simulation runs: replay knows nothing of them, and replays them unchanged -------------------

SIMULATIONS = [
    ["scale-up", "--pods", "24", "--node-groups", "2"],
    ["scale-down", "--nodes", "6"],
]


@pytest.mark.parametrize("args", SIMULATIONS, ids=["scale-up", "scale-down"])
def test_a_simulation_run_replays_to_its_digest(tmp_path: Path, args: list[str]) -> None:
    db = tmp_path / "sim.db"
    summary = run_json("simulate", *args, "--db", db)
    name = summary["name"]
    data = run_json("replay", db, "--verify", "--name", name)
    assert data["matches"] is True and data["divergence"] is None
    assert data["state_digest"] == summary["state_digest"]
    inspected = run_json("inspect", db, "--name", name)
    assert inspected["state_digest"] == summary["state_digest"]
    history = run_json("history", db, "--name", name)
    assert history["journal_complete"] is True
    assert all(e["fate"] in ("committed", "reverted") for e in history["events"])


def test_verify_catches_an_edited_write_of_a_reverted_layer(
    session: Session, tmp_path: Path
) -> None:
    path = tmp_path / "edited.db"
    shutil.copy(session.path, path)
    seq = session.marks["train-1 on node-b"]  # in layer "try node-b", reverted
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE journal SET value = ? WHERE seq = ? AND store_id = 1",
            (encode(claim("ml", "train-1")), seq),
        )
    assert run("replay", path).exit_code == 0  # the state at the end is as recorded
    result = run("replay", path, "--verify", "--json")
    assert result.exit_code == 1
    divergence = json.loads(result.stdout)["divergence"]
    committed = session.marks["committed"]
    assert (divergence["seq"], divergence["journal_from"]) == (committed, session.marks["base"] + 1)
    assert divergence["journal_from"] <= seq < divergence["seq"]
    assert f"the journal rows from seq {session.marks['base'] + 1} to {committed}" in result.stderr
