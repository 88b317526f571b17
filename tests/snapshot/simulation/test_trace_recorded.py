"""A recording (``drasnap record``) as a timeline's trace (``--trace-from-db``): the pods created
and deleted after its capture, at their recorded times, and a run that starts from the capture.

The recordings are written here as the Recorder writes them (snapshot.live.record: a capture
layer, then one committed layer per watch event), on a clock the test sets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from drasnap.snapshot import ScenarioError
from drasnap.snapshot.simulation import RECORDED, read_recorded, recorded_source, split_source
from drasnap.store import Store
from drasnap.tools.cli import cli

from tests.snapshot.simulation.test_autoscale import node, pod
from tests.snapshot.simulation.timeline.helpers import group_entry

CLASS_NAME = "gpu.example.com"
CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com"},
    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
}


def claim(name: str, **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"namespace": "default", "name": name, **metadata},
        "spec": {
            "devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": CLASS_NAME}}]}
        },
    }


def ns(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` in namespace default, as the API server returns it (and the Recorder keeps it)."""
    return {**obj, "metadata": {"namespace": "default", **obj["metadata"]}}


class Clock:
    """The store's wall clock (``store.durable._now``), set by the test."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock()
    monkeypatch.setattr("drasnap.store.durable._now", c)
    return c


def key(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if "namespace" in meta else meta["name"]


def event(
    store: Store, clock: Clock, at: float, kind: str, obj: Any, deleted: bool = False
) -> None:
    """One watch event as the Recorder writes it: a layer committed at depth 0."""
    clock.now = at
    name = key(obj) if isinstance(obj, dict) else obj
    store.fork(f"{'DELETED' if deleted else 'ADDED'} {kind} {name} rv=1")
    if deleted:
        store.delete(kind, name)
    else:
        store.put(kind, name, obj)
    store.commit()


A = ns(pod("a", "1", "n1"))  # bound at the capture
P1 = ns(pod("p1", "1"))
P2 = {**ns(pod("p2", "1", "n1")), "status": {"phase": "Running"}}  # bound when created
P3 = ns(pod("p3", "1", resourceClaims=[{"name": "gpu", "resourceClaimName": "c3"}]))
GENERATED = claim(
    "p4-gpu",
    ownerReferences=[
        {"apiVersion": "v1", "kind": "Pod", "name": "p4", "uid": "u", "controller": True}
    ],
)


def record(db: Path, clock: Clock, name: str = "record") -> None:
    """A capture at 100 s (seq 1-5), then: p1 created (100.5 s) and bound (101 s), p2 created
    bound (102.25 s), a pod put in a layer reverted, p3 created (103 s) before its claim c3
    (104 s), a claim made for a pod from its template (105 s), a deleted (106 s), p1 deleted
    (107 s), c3 allocated (108 s)."""
    with Store.open(db, name=name) as store:
        clock.now = 100.0
        store.fork("capture: 3 objects")  # seq 1
        store.put("DeviceClass", "gpu.example.com", CLASS)  # 2
        store.put("Node", "n1", node("n1", "cpu", 4))  # 3
        store.put("Pod", "default/a", A)  # 4
        store.commit()  # 5: the first state
        event(store, clock, 100.5, "Pod", P1)
        bound = {**P1, "spec": {**P1["spec"], "nodeName": "n1"}}
        clock.now = 101.0
        store.fork("MODIFIED Pod default/p1 rv=2")
        store.put("Pod", "default/p1", bound)
        store.commit()
        event(store, clock, 102.25, "Pod", P2)
        store.fork("never recorded")
        store.put("Pod", "default/ghost", ns(pod("ghost", "1")))
        store.revert()
        event(store, clock, 103.0, "Pod", P3)
        event(store, clock, 104.0, "ResourceClaim", claim("c3"))
        event(store, clock, 105.0, "ResourceClaim", GENERATED)
        event(store, clock, 106.0, "Pod", "default/a", deleted=True)
        event(store, clock, 107.0, "Pod", "default/p1", deleted=True)
        allocated = {**claim("c3"), "status": {"allocation": {}}}
        event(store, clock, 108.0, "ResourceClaim", allocated)


def test_pods_created_and_deleted_after_the_capture_are_the_trace(
    tmp_path: Path, clock: Clock
) -> None:
    db = tmp_path / "rec.db"
    record(db, clock)
    first, trace = read_recorded(str(db), "record")
    assert first == 5  # the capture's commit
    assert [(e.t_ms, e.op, e.kind, e.key) for e in trace.events] == [
        (500, "create", "Pod", "default/p1"),
        (2250, "create", "Pod", "default/p2"),
        (3000, "create", "ResourceClaim", "default/c3"),  # moved before the pod naming it
        (3000, "create", "Pod", "default/p3"),
        (6000, "delete", "Pod", "default/a"),  # in the capture
        (7000, "delete", "Pod", "default/p1"),
    ]
    p2 = trace.events[1].object
    assert "nodeName" not in p2["spec"] and "status" not in p2  # the simulated scheduler binds
    assert p2["spec"]["containers"] == P2["spec"]["containers"]
    assert "status" not in trace.events[2].object
    notes = "\n".join(trace.notes)
    assert "1 pod(s)" in notes and "default/p2" in notes  # bound when created
    assert "1 ResourceClaim(s)" in notes  # p4-gpu, made from a template
    assert "1 Pod modified" in notes and "1 ResourceClaim modified" in notes
    assert trace.path == recorded_source(str(db), "record")
    assert split_source(trace.path) == (str(db), "record")
    # The same recording read again: the same digest (a resumed run checks it).
    assert read_recorded(str(db), "record")[1].digest == trace.digest


def test_a_store_name_with_an_at_sign_round_trips() -> None:
    source = recorded_source("postgresql://host/db", "rec@1/x")
    assert source.startswith(RECORDED)
    assert split_source(source) == ("postgresql://host/db", "rec@1/x")


def test_no_recording_or_no_capture_is_one_line(tmp_path: Path, clock: Clock) -> None:
    db = tmp_path / "rec.db"
    record(db, clock)
    with pytest.raises(ScenarioError, match=r"no store named 'other'.*'record'"):
        read_recorded(str(db), "other")
    with Store.open(db, name="plain") as store:
        store.put("Pod", "default/p", ns(pod("p", "1")))
    with pytest.raises(ScenarioError, match=r"store 'plain' .* holds no capture") as caught:
        read_recorded(str(db), "plain")
    assert "\n" not in str(caught.value)
    with pytest.raises(ScenarioError, match="does not exist"):
        read_recorded(str(tmp_path / "none.db"), "record")


def test_a_timeline_runs_from_the_recording(tmp_path: Path, clock: Clock) -> None:
    db = tmp_path / "rec.db"
    record(db, clock)
    groups = tmp_path / "groups.yaml"
    groups.write_text(yaml.safe_dump({"nodeGroups": [group_entry("cpu", 4)]}))
    sim = tmp_path / "sim.db"
    args = ["simulate", "timeline", str(sim), "--trace-from-db", str(db), "--node-groups"]
    result = CliRunner().invoke(cli, [*args, str(groups), "--name", "run", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert "note: 1 pod(s) of the recording 'record'" in result.output  # p2, bound when created
    # The run started from the capture (the state --from-db --from-at 5 gives): n1 running a.
    assert (tmp_path / "sim.db.from" / "record-at-5").is_dir()
    # The last event at 7 s, plus an hour, rounded up to the 10 s scan interval.
    assert data["until_s"] == 3610.0
    # p1 and p2 (created pending, though recorded bound) fit on n1; p3's claim asks for a GPU
    # no node or group has.
    assert (data["pods_bound"], data["never_scheduled"], data["scale_ups"]) == (2, 1, 0)
    # a and p1 deleted: n1 (4 CPUs) ends running p2's one.
    assert data["utilization"]["final"]["cpu"] == 0.25
    # The same command with --resume: the run has finished, its result again.
    again = CliRunner().invoke(cli, [*args, str(groups), "--name", "run", "--resume", "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["state_digest"] == data["state_digest"]
    # A recording that went on since is not the trace the run read: resuming is refused.
    with Store.open(db, name="record") as store:
        event(store, clock, 109.0, "Pod", ns(pod("p9", "1")))
    changed = CliRunner().invoke(cli, [*args, str(groups), "--name", "run", "--resume"])
    assert changed.exit_code != 0 and "source_digest" in changed.output


def test_the_recorded_trace_as_a_resume_command_names_it(tmp_path: Path, clock: Clock) -> None:
    """A run's resume command (its settings as options) names the trace ``--trace
    recorded:NAME@DB`` and the start ``--from FOLDER``: that spelling continues the run."""
    db = tmp_path / "rec.db"
    record(db, clock)
    groups = tmp_path / "groups.yaml"
    groups.write_text(yaml.safe_dump({"nodeGroups": [group_entry("cpu", 4)]}))
    sim = str(tmp_path / "sim.db")
    first = ["simulate", "timeline", sim, "--trace-from-db", str(db), "--node-groups", str(groups)]
    result = CliRunner().invoke(cli, [*first, "--name", "run", "--json"])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "sim.db.from" / "record-at-5"
    trace = recorded_source(str(db.resolve()), "record")
    again = ["simulate", "timeline", sim, "--from", str(folder), "--trace", trace]
    resumed = CliRunner().invoke(
        cli, [*again, "--node-groups", str(groups), "--name", "run", "--resume", "--json"]
    )
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["state_digest"] == json.loads(result.stdout)["state_digest"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--trace-from-name", "x"], "--trace-from-name goes with --trace-from-db"),
        (["--trace-from-db", "REC", "--trace", "gen:rate=1/m"], "leave out --trace"),
        (["--trace-from-db", "REC", "--trace-from-name", "other"], "no store named 'other'"),
        (["--trace-from-db", "REC", "--from-db", "REC"], "leave out --trace, --from and --from-db"),
    ],
)
def test_refusals_are_one_line_and_leave_no_database(
    tmp_path: Path, clock: Clock, args: list[str], expected: str
) -> None:
    db = tmp_path / "rec.db"
    record(db, clock)
    sim = tmp_path / "sim.db"
    given = [str(db) if a == "REC" else a for a in args]
    result = CliRunner().invoke(cli, ["simulate", "timeline", str(sim), *given])
    assert result.exit_code != 0
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and expected in errors[0], result.output
    assert not sim.exists() and not (tmp_path / "sim.db.from").exists()


def test_another_scenario_does_not_take_a_recorded_trace(tmp_path: Path, clock: Clock) -> None:
    db = tmp_path / "rec.db"
    record(db, clock)
    result = CliRunner().invoke(
        cli, ["simulate", "autoscale", str(tmp_path / "sim.db"), "--trace-from-db", str(db)]
    )
    assert result.exit_code != 0
    assert "--trace-from-db does not apply to autoscale" in result.output


def test_a_wall_clock_stepped_back_never_moves_an_event_back(tmp_path: Path, clock: Clock) -> None:
    db = tmp_path / "rec.db"
    with Store.open(db, name="record") as store:
        store.fork("capture: 1 objects")
        store.put("Node", "n1", node("n1", "cpu", 4))
        store.commit()  # at 100 s
        event(store, clock, 102.0, "Pod", P1)
        event(store, clock, 101.0, "Pod", ns(pod("late", "1")))  # the clock stepped back 1 s
    _first, trace = read_recorded(str(db), "record")
    assert [(e.t_ms, e.key) for e in trace.events] == [(2000, "default/p1"), (2000, "default/late")]
