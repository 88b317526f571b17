"""``drasnap inspect``, ``diff`` and ``history`` through click's CliRunner, on a recorded
session with known answers (tests/store/journal_session.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from drasnap.store import Store

from tests.store.journal_session import Session
from tests.tools.journal_cli import run, run_json
from tests.tools.journal_cli import session as session  # the fixture

# -- inspect ------------------------------------------------------------------------------------


def test_inspect_the_stored_state(session: Session) -> None:
    data = run_json("inspect", session.path)
    assert data["state_digest"] == session.final_digest
    assert data["seq"] == session.last_seq
    assert [(ly["depth"], ly["instance"], ly["label"], ly["entries"]) for ly in data["layers"]] == [
        (1, session.layers["pending"], "pending", 1)
    ]
    assert data["counts"] == {"ResourceClaim": 4, "ResourceSlice": 2}
    claims = {c["claim"]: c for c in data["claims"]}
    assert claims["ml/done-0"] == {
        "claim": "ml/done-0",
        "allocated": True,
        "node": "node-a",
        "devices": [
            {"request": "gpu", "driver": "gpu.example.com", "pool": "node-a", "device": "gpu-7"}
        ],
        "reserved_for": ["pods/done-0"],
    }
    assert claims["ml/train-0"]["allocated"] is False
    assert claims["ml/train-2"]["node"] == "node-b"
    assert data["objects"] == []


def test_inspect_at_a_seq_in_a_branch_that_was_reverted_later(session: Session) -> None:
    seq = session.marks["train-1 on node-b"]
    data = run_json("inspect", session.path, "--at", str(seq))
    assert data["state_digest"] == session.digests[seq]
    assert [ly["label"] for ly in data["layers"]] == ["scale-up ng-a", "try node-b"]
    assert data["counts"] == {"Pod": 1, "ResourceClaim": 3, "ResourceSlice": 2}
    claims = {c["claim"]: c for c in data["claims"]}
    assert claims["ml/train-1"]["node"] == "node-b"
    assert claims["ml/train-0"]["reserved_for"] == ["pods/train-0"]


def test_inspect_narrowed_to_a_kind_and_a_key(session: Session) -> None:
    data = run_json("inspect", session.path, "--at", "9", "--kind", "Pod", "--key", "ml/train-0")
    assert data["counts"] == {"Pod": 1}
    assert data["claims"] == []
    assert data["objects"] == [
        {"kind": "Pod", "key": "ml/train-0", "value": {"spec": {"nodeName": "node-a"}}}
    ]
    one_claim = run_json("inspect", session.path, "--key", "ml/train-1")
    assert [c["claim"] for c in one_claim["claims"]] == ["ml/train-1"]


def test_inspect_table_output(session: Session) -> None:
    result = run("inspect", session.path)
    assert result.exit_code == 0, result.output
    assert f"state digest {session.final_digest}" in result.stdout
    assert "ml/done-0" in result.stdout and "gpu.example.com/node-a/gpu-7" in result.stdout


def test_inspect_at_a_seq_past_the_end(session: Session) -> None:
    result = run("inspect", session.path, "--at", "1000")
    assert result.exit_code == 1
    assert "Error: seq 1000 is not in the journal" in result.stderr


# -- diff ---------------------------------------------------------------------------------------


def test_diff_between_two_seqs(session: Session) -> None:
    data = run_json("diff", session.path, "--from", "6", "--to", "15")
    assert (data["from"], data["to"]) == (6, 15)
    assert [(a["kind"], a["key"]) for a in data["added"]] == [("Pod", "ml/train-0")]
    assert data["removed"] == []
    changed = {c["key"]: c["fields"] for c in data["changed"]}
    assert set(changed) == {"ml/train-0", "ml/train-1"}
    paths = {f["path"]: f for f in changed["ml/train-1"]}
    assert paths["$.status"] == {
        "path": "$.status",
        "op": "added",
        "new": {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "device": "gpu-1",
                            "driver": "gpu.example.com",
                            "pool": "node-a",
                            "request": "gpu",
                        }
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["node-a"]}
                            ]
                        }
                    ]
                },
            }
        },
    }


def test_diff_of_a_reverted_layer_shows_what_it_had_done(session: Session) -> None:
    data = run_json("diff", session.path, "--from-layer", "try node-b", "--to-layer", "try node-b")
    assert (data["from"], data["to"]) == (
        session.marks["fork try node-b"],
        session.marks["train-1 on node-b"],
    )
    [change] = data["changed"]
    assert change["key"] == "ml/train-1"
    assert [f["path"] for f in change["fields"]] == ["$.status"]


def test_diff_by_layer_instance_and_table_output(session: Session) -> None:
    instance = str(session.layers["inner"])
    result = run("diff", session.path, "--from-layer", instance, "--to-layer", instance)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1:] == [
        "~ ResourceClaim ml/train-0",
        '    $.status.allocation.devices.results[0].pool: "node-a" -> "node-b"',
        "    $.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values[0]: "
        '"node-a" -> "node-b"',
    ]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        ([], 2, "--from SEQ or --from-layer"),
        (["--from", "1", "--from-layer", "inner"], 2, "--from SEQ or --from-layer"),
        (["--from", "1", "--to", "2", "--to-layer", "inner"], 2, "not both"),
        (["--from-layer", "nope"], 1, "no layer labelled 'nope'"),
        (["--from", "1", "--to", "99"], 1, "end seq 99 is not in the journal"),
        (["--from", "9", "--to", "3"], 2, "--from 9 is after --to 3"),
    ],
    ids=["no-start", "two-starts", "two-ends", "unknown-layer", "seq-past-end", "backwards"],
)
def test_diff_errors(session: Session, args: list[str], code: int, message: str) -> None:
    result = run("diff", session.path, *args)
    assert result.exit_code == code, result.output
    assert message in result.stderr


# -- history ------------------------------------------------------------------------------------

EXPECTED: list[tuple[Any, ...]] = [
    # seq, event, claim, devices, node, layer label, depth, fate
    (5, "allocate", "ml/done-0", ["node-a/gpu-7"], "node-a", None, 0, "committed"),
    (8, "allocate", "ml/train-0", ["node-a/gpu-0"], "node-a", "scale-up ng-a", 1, "committed"),
    (11, "allocate", "ml/train-1", ["node-b/gpu-1"], "node-b", "try node-b", 2, "reverted"),
    (13, "allocate", "ml/train-1", ["node-a/gpu-1"], "node-a", "scale-up ng-a", 1, "committed"),
    (18, "deallocate", "ml/train-0", ["node-a/gpu-0"], "node-a", "inner", 2, "reverted"),
    (18, "allocate", "ml/train-0", ["node-b/gpu-0"], "node-b", "inner", 2, "reverted"),
    (22, "deallocate", "ml/train-0", ["node-a/gpu-0"], "node-a", "scale-down", 1, "committed"),
    (26, "allocate", "ml/train-2", ["node-b/gpu-0"], "node-b", "pending", 1, "open"),
]


def events(*args: str) -> list[tuple[Any, ...]]:
    data = run_json("history", *args)
    assert data["journal_complete"] is True
    return [
        (
            e["seq"],
            e["event"],
            e["claim"],
            [f"{d['pool']}/{d['device']}" for d in e["devices"]],
            e["node"],
            e["label"],
            e["depth"],
            e["fate"],
        )
        for e in data["events"]
    ]


FILTERS = [
    ([], lambda e: True),
    (["--claim", "ml/train-0"], lambda e: e[2] == "ml/train-0"),
    (["--node", "node-b"], lambda e: e[4] == "node-b"),
    (["--device", "gpu.example.com/node-a/gpu-0"], lambda e: "node-a/gpu-0" in e[3]),
    (["--fate", "reverted"], lambda e: e[7] == "reverted"),
    (["--fate", "open"], lambda e: e[7] == "open"),
    (
        ["--claim", "ml/train-0", "--fate", "committed"],
        lambda e: e[2] == "ml/train-0" and e[7] == "committed",
    ),
    (["--device", "gpu.example.com/node-b/gpu-0", "--node", "node-a"], lambda e: False),
]


@pytest.mark.parametrize(
    ("args", "keep"),
    FILTERS,
    ids=[
        "all",
        "claim",
        "node",
        "device",
        "reverted",
        "open",
        "claim-committed",
        "device-and-other-node",
    ],
)
def test_history(session: Session, args: list[str], keep: Any) -> None:
    assert events(str(session.path), *args) == [e for e in EXPECTED if keep(e)]


def test_history_of_a_claim_that_never_existed_is_an_error(session: Session) -> None:
    result = run("history", session.path, "--claim", "ml/nobody")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.strip() == (
        "Error: run 'default' never held a claim 'ml/nobody' (give it as namespace/name)"
    )


def test_history_table_output(session: Session) -> None:
    result = run("history", session.path, "--claim", "ml/train-1")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == [
        "seq",
        "time",
        "event",
        "claim",
        "devices",
        "node",
        "layer",
        "[depth]",
        "fate",
    ]
    assert "try node-b [2]" in lines[2] and lines[2].rstrip().endswith("reverted")
    assert result.stderr.strip().startswith("(2 events, times UTC on ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--device", "gpu-0"], "a device is DRIVER/POOL/DEVICE"),
        (["--fate", "lost"], "'lost' is not one of"),
    ],
    ids=["device", "fate"],
)
def test_history_bad_arguments_are_usage_errors(
    session: Session, args: list[str], message: str
) -> None:
    result = run("history", session.path, *args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_history_warns_about_an_incomplete_journal(tmp_path: Path) -> None:
    path = tmp_path / "partial.db"
    with Store.open(path, journal=False) as store:
        store.put("k", "a", 1)
    data = run_json("history", path)
    assert data["journal_complete"] is False and data["events"] == []
    assert "incomplete" in run("history", path).stderr
