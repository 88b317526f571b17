"""The journal reader, layer fates, replay, the state at a seq, and diffs (store.journal.reader,
store.journal.playback, store.journal.jsondiff) on a recorded session with known answers."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from drasnap.snapshot.history.allocations import allocation_history
from drasnap.store import (
    InvalidValueError,
    MemoryStore,
    NotADatabaseError,
    Store,
    StoreNotFoundError,
)
from drasnap.store.codec import encode
from drasnap.store.journal.jsondiff import MISSING, FieldChange, field_diff
from drasnap.store.journal.playback import diff, open_state, replay
from drasnap.store.journal.reader import Fate, Journal, JournalError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Database
from tests.store.journal_session import Session, claim, record_session


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    """The recorded session of tests/store/journal_session.py (read-only: copy to change it)."""
    return record_session(tmp_path_factory.mktemp("session") / "session.db")


@pytest.fixture
def session_copy(session: Session, tmp_path: Path) -> Path:
    path = tmp_path / "copy.db"
    shutil.copy(session.path, path)
    return path


# -- reading the journal --------------------------------------------------------------------


def test_records_follow_the_operations_in_order(session: Session) -> None:
    with Journal.open(session.path) as journal:
        records = list(journal.records())
        info = journal.info
    assert [r.seq for r in records] == list(range(1, session.last_seq + 1))
    assert info.last_seq == session.last_seq
    assert info.complete and info.depth == 1
    assert info.state_digest == session.final_digest
    put = records[session.marks["train-0 on node-a"] - 1]
    assert (put.op, put.kind, put.key, put.depth, put.layer) == (
        "put",
        "ResourceClaim",
        "ml/train-0",
        1,
        session.layers["scale-up ng-a"],
    )
    assert put.value["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"
    last = records[-1]
    assert (last.op, last.digest) == ("checkpoint", session.final_digest)


def test_records_stream_a_range(session: Session) -> None:
    with Journal.open(session.path) as journal:
        assert [r.seq for r in journal.records(start=5, stop=8)] == [5, 6, 7, 8]


def test_key_writes_are_that_key_only_in_seq_order(session: Session) -> None:
    with Journal.open(session.path) as journal:
        writes = journal.key_writes("ResourceClaim", ["ml/train-1"])
        pods = journal.kind_writes("Pod")
    assert [w.seq for w in writes] == [
        4,
        session.marks["train-1 on node-b"],
        session.marks["train-1 on node-a"],
    ]
    assert [(w.op, w.key) for w in pods] == [("put", "ml/train-0"), ("delete", "ml/train-0")]


@pytest.mark.parametrize(
    ("members", "keys"),
    [
        ({"pool": "node-b", "device": "gpu-0"}, {"ml/train-0", "ml/train-2"}),
        ({"values": ["node-a"]}, {"ml/done-0", "ml/train-0", "ml/train-1"}),
        ({"device": "gpu-9"}, set()),
    ],
    ids=["device", "node", "nothing"],
)
def test_keys_containing_finds_the_writes_that_mention_it(
    session: Session, members: dict[str, object], keys: set[str]
) -> None:
    with Journal.open(session.path) as journal:
        assert journal.keys_containing("ResourceClaim", members) == keys


def test_each_store_has_its_own_journal(session: Session) -> None:
    with Journal.open(session.path, name="other") as journal:
        assert [r.op for r in journal.records()] == ["put", "checkpoint"]


def test_opening_names_what_is_missing(session: Session, tmp_path: Path) -> None:
    with pytest.raises(StoreNotFoundError, match=r"no store named 'nope' .*'default', 'other'"):
        Journal.open(session.path, name="nope")
    with pytest.raises(NotADatabaseError, match="does not exist"):
        Journal.open(tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()


# -- layers and fates -------------------------------------------------------------------------

FATES = [
    ("scale-up ng-a", Fate.COMMITTED, False),
    ("try node-b", Fate.REVERTED, True),
    ("outer", Fate.REVERTED, True),
    ("inner", Fate.REVERTED, True),  # committed into "outer", which was reverted
    ("scale-down", Fate.COMMITTED, False),
    ("pending", Fate.OPEN, False),
]


@pytest.mark.parametrize(("label", "fate", "dropped"), FATES, ids=[f[0] for f in FATES])
def test_layer_fates(session: Session, label: str, fate: str, dropped: bool) -> None:
    instance = session.layers[label]
    with Journal.open(session.path) as journal:
        everything = journal.layers()
        asked = journal.layers([instance])
        drops = journal.dropped_at([instance])
    assert everything[instance] == asked[instance]
    layer = asked[instance]
    assert (layer.label, layer.fate) == (label, fate)
    assert layer.opened_seq == session.marks[f"fork {label}"]
    assert (drops[instance] is not None) == dropped == (layer.dropped_seq is not None)
    assert drops[instance] == layer.dropped_seq


def test_a_layer_committed_into_a_reverted_one_is_dropped_with_it(session: Session) -> None:
    with Journal.open(session.path) as journal:
        layers = journal.layers()
    inner, outer = layers[session.layers["inner"]], layers[session.layers["outer"]]
    assert (inner.closed_by, inner.parent) == ("commit", outer.layer)
    assert inner.dropped_seq == outer.dropped_seq == session.marks["revert outer"]


def test_find_layer_by_instance_or_unique_label(session: Session) -> None:
    with Journal.open(session.path) as journal:
        assert journal.find_layer("inner").layer == session.layers["inner"]
        assert journal.find_layer(str(session.layers["inner"])).label == "inner"
        first, last = journal.layer_span("try node-b")
        assert (first, last) == (
            session.marks["fork try node-b"],
            session.marks["train-1 on node-b"],
        )
        assert journal.layer_span("pending")[1] == session.last_seq  # still open
        with pytest.raises(InvalidValueError, match="no layer labelled 'nope'"):
            journal.find_layer("nope")
        with pytest.raises(InvalidValueError, match="instance 99 is not in the journal"):
            journal.find_layer(99)


def test_a_shared_label_asks_for_the_instance(tmp_path: Path) -> None:
    with Store.open(tmp_path / "db.db") as store:
        for _ in range(2):
            store.fork("try")
            store.revert()
    with (
        Journal.open(tmp_path / "db.db") as journal,
        pytest.raises(InvalidValueError, match=r"2 layers are labelled 'try' .*instances 1, 2"),
    ):
        journal.find_layer("try")


# -- replay -------------------------------------------------------------------------------------


def test_replay_gives_the_recorded_digest(session: Session) -> None:
    report = replay(session.path, verify=True)
    assert report.state_digest == session.final_digest == report.recorded_digest
    assert report.matches and report.divergence is None
    assert (report.records, report.last_seq, report.depth) == (
        session.last_seq,
        session.last_seq,
        1,
    )
    assert report.checkpoints_verified == 3


def test_replay_to_each_seq_gives_the_state_the_run_had_then(session: Session) -> None:
    for seq, digest in session.digests.items():
        assert replay(session.path, to=seq).state_digest == digest, f"seq {seq}"


def test_replay_into_a_new_database_keeps_the_sequence_numbers(
    session: Session, tmp_path: Path
) -> None:
    out = tmp_path / "out.db"
    report = replay(session.path, into=out, verify=True)
    assert report.into == str(out) and report.matches
    with Store.open(out, readonly=True) as copy:
        assert copy.state_digest() == session.final_digest
        assert [ly.label for ly in copy.layers()[1:]] == ["pending"]
    with Journal.open(out) as a, Journal.open(session.path) as b:
        left = [(r.seq, r.op, r.layer, r.key, r.value_json, r.digest) for r in a.records()]
        right = [(r.seq, r.op, r.layer, r.key, r.value_json, r.digest) for r in b.records()]
    assert left == right


def test_replay_refuses_to_overwrite_a_store(session: Session) -> None:
    with pytest.raises(InvalidValueError, match="already holds a store named 'default'"):
        replay(session.path, into=session.path)


def test_replay_to_a_seq_outside_the_journal(session: Session) -> None:
    with pytest.raises(InvalidValueError, match=r"seq 999 is not in the journal .*1 to 27"):
        replay(session.path, to=999)


def test_verify_names_the_entry_that_diverges(session_copy: Path, session: Session) -> None:
    seq = session.marks["train-1 on node-a"]
    wrong = claim("ml", "train-1", [("node-a", "gpu-5")], node="node-a")
    with sqlite3.connect(session_copy) as conn:
        conn.execute(
            "UPDATE journal SET value = ? WHERE seq = ? AND store_id = 1", (encode(wrong), seq)
        )
    report = replay(session_copy, verify=True)
    d = report.divergence
    assert d is not None and not report.matches
    assert (d.seq, d.kind, d.key, d.last_write_seq) == (
        session.marks["committed"],  # the first checkpoint after the tampered write
        "ResourceClaim",
        "ml/train-1",
        seq,
    )
    assert report.checkpoints_verified == 1
    assert "replay diverged at seq 15: ResourceClaim ml/train-1" in d.describe()
    plain = replay(session_copy)  # without --verify: only the final digest says so
    assert plain.divergence is None and plain.matches is False


def test_replay_stops_at_a_gap(session_copy: Path) -> None:
    with sqlite3.connect(session_copy) as conn:
        conn.execute("DELETE FROM journal WHERE seq = 9 AND store_id = 1")
    with pytest.raises(JournalError, match=r"no record for seq 9 .*incomplete"):
        replay(session_copy)


def test_replay_refuses_an_inconsistent_journal(session_copy: Path) -> None:
    with sqlite3.connect(session_copy) as conn:
        conn.execute("UPDATE journal SET layer = 42 WHERE seq = 12 AND store_id = 1")
    with pytest.raises(JournalError, match=r"inconsistent at seq 12 \(revert\): closes layer 42"):
        replay(session_copy)


def test_a_journal_with_a_gap_in_time_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "gap.db"
    with Store.open(path) as store:
        store.put("k", "a", 1)
    with Store.open(path, journal=False) as store:
        store.put("k", "b", 2)
    with pytest.raises(JournalError, match=r"incomplete .*journal=False"):
        replay(path)
    with pytest.raises(JournalError, match="incomplete"):
        open_state(path, at=1)
    with open_state(path) as state:  # the stored state needs no journal
        assert state.items("k") == {"a": 1, "b": 2}


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("put"), st.sampled_from("abc"), st.integers(0, 3)),
            st.tuples(st.just("delete"), st.sampled_from("abc")),
            st.tuples(st.sampled_from(["fork", "commit", "revert", "checkpoint"])),
        ),
        max_size=30,
    )
)
def test_replay_verifies_any_run_checkpointed_after_every_operation(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[object, ...]]
) -> None:
    path = tmp_path_factory.mktemp("run") / "run.db"
    model = MemoryStore()
    with Store.open(path, auto_checkpoint=False) as store:
        for op in ops:
            for s in (store, model):
                if op[0] == "put":
                    s.put("k", str(op[1]), op[2])
                elif op[0] == "delete":
                    s.delete("k", str(op[1]))
                elif op[0] != "checkpoint":
                    getattr(s, str(op[0]))()
            store.checkpoint()
        digest = store.state_digest()
    assert digest == model.state_digest()
    report = replay(path, verify=True)
    assert report.matches and report.state_digest == digest


# -- the state at a point ---------------------------------------------------------------------


def test_open_state_at_a_seq_inside_two_layers(session: Session) -> None:
    seq = session.marks["train-1 on node-b"]
    with open_state(session.path, at=seq) as state:
        assert state.seq == seq and state.state_digest() == session.digests[seq]
        assert [(ly.depth, ly.instance, ly.label) for ly in state.layers] == [
            (1, session.layers["scale-up ng-a"], "scale-up ng-a"),
            (2, session.layers["try node-b"], "try node-b"),
        ]
        assert [ly.entries for ly in state.layers] == [2, 1]
        assert state.count("Pod") == 1
        claim_now = state.get("ResourceClaim", "ml/train-1")
        assert claim_now["status"]["allocation"]["devices"]["results"][0]["pool"] == "node-b"


def test_open_state_without_a_seq_reads_the_stored_state(session: Session) -> None:
    with open_state(session.path) as state:
        assert state.seq == session.last_seq
        assert state.state_digest() == session.final_digest
        assert [(ly.instance, ly.label, ly.entries) for ly in state.layers] == [
            (session.layers["pending"], "pending", 1)
        ]
        assert state.kinds() == ["ResourceClaim", "ResourceSlice"]


# -- diffs ------------------------------------------------------------------------------------


def test_diff_of_a_layer_shows_what_it_changed(session: Session) -> None:
    result = diff(session.path, start_layer="inner", stop_layer="inner")
    assert (result.start, result.stop) == (
        session.marks["fork inner"],
        session.marks["train-0 moved"],
    )
    [change] = result.changes
    assert (change.kind, change.key, change.change) == ("ResourceClaim", "ml/train-0", "changed")
    assert [(f.path, f.old, f.new) for f in change.fields] == [
        ("$.status.allocation.devices.results[0].pool", "node-a", "node-b"),
        (
            "$.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values[0]",
            "node-a",
            "node-b",
        ),
    ]


def test_diff_between_seqs_adds_removes_and_changes(session: Session) -> None:
    start, stop = session.marks["base"], session.last_seq
    result = diff(session.path, start=start, stop=stop)
    summary = {(c.kind, c.key): c.change for c in result.changes}
    assert summary == {
        ("ResourceClaim", "ml/train-1"): "changed",  # allocated on node-a
        ("ResourceClaim", "ml/train-2"): "added",  # in the open layer
    }  # train-0 was allocated, moved (reverted) and released: back where it was; its pod too
    back = diff(session.path, start=stop, stop=start)
    assert {(c.kind, c.key): c.change for c in back.changes} == {
        ("ResourceClaim", "ml/train-1"): "changed",
        ("ResourceClaim", "ml/train-2"): "removed",
    }
    only_pods = diff(session.path, start=session.marks["base"], stop=10, kinds=["Pod"])
    assert [(c.kind, c.change) for c in only_pods.changes] == [("Pod", "added")]


def test_diff_needs_exactly_one_start(session: Session) -> None:
    with pytest.raises(InvalidValueError, match="start point"):
        diff(session.path)
    with pytest.raises(InvalidValueError, match="start point"):
        diff(session.path, start=1, start_layer="inner")


# -- field-level diffs ------------------------------------------------------------------------

FIELD_CASES = [
    ({"a": 1}, {"a": 1}, []),
    ({"a": 1}, {"a": 2}, [("$.a", 1, 2)]),
    ({"a": 1}, {}, [("$.a", 1, MISSING)]),
    ({}, {"a": {"b": 1}}, [("$.a", MISSING, {"b": 1})]),
    ([1, 2, 3], [1, 5], [("$[1]", 2, 5), ("$[2]", 3, MISSING)]),
    ({"x": [1]}, {"x": {"y": 1}}, [("$.x", [1], {"y": 1})]),
    ({"a": 1}, {"a": True}, [("$.a", 1, True)]),
    ({"a.b/c": 1}, {"a.b/c": 2}, [('$["a.b/c"]', 1, 2)]),
]


@pytest.mark.parametrize(
    ("old", "new", "changes"),
    FIELD_CASES,
    ids=["same", "leaf", "removed", "added", "list", "type", "bool-is-not-int", "quoted-name"],
)
def test_field_diff(old: object, new: object, changes: list[tuple[str, object, object]]) -> None:
    got = field_diff(old, new)
    assert [(c.path, c.old, c.new) for c in got] == changes


def test_field_change_reads_as_an_operation() -> None:
    assert FieldChange("$.a", MISSING, 1).op == "added"
    assert FieldChange("$.a", 1, MISSING).op == "removed"
    assert str(FieldChange("$.a", "x", "y")) == '$.a: "x" -> "y"'


# -- every backend --------------------------------------------------------------------------


def test_journal_replay_diff_and_history_on_each_backend(database: Database) -> None:
    recorded = record_session(database.target)
    report = replay(database.target, verify=True)
    assert report.matches and report.state_digest == recorded.final_digest
    assert replay(database.target, to=11).state_digest == recorded.digests[11]
    with Journal.open(database.target) as journal:
        assert journal.layers()[recorded.layers["inner"]].fate == Fate.REVERTED
        assert journal.keys_containing("ResourceClaim", {"device": "gpu-7"}) == {"ml/done-0"}
        reverted = allocation_history(journal, fate="reverted")
        on_device = allocation_history(journal, device=("gpu.example.com", "node-a", "gpu-0"))
    assert [(e.seq, e.event) for e in reverted] == [
        (11, "allocate"),
        (18, "deallocate"),
        (18, "allocate"),
    ]
    assert [(e.seq, e.event) for e in on_device] == [
        (8, "allocate"),
        (18, "deallocate"),
        (22, "deallocate"),
    ]
    changed = diff(database.target, start_layer="inner", stop_layer="inner").changes
    assert [(c.key, c.change) for c in changed] == [("ml/train-0", "changed")]
    with open_state(database.target, at=11) as state:
        assert state.state_digest() == recorded.digests[11]
