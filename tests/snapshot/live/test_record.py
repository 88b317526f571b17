"""drasnap record against the test API server: watch events become commits, allocation_events
answers for the cluster's past, 410 re-lists are one layer, and SIGKILL + --resume lose and
duplicate nothing."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from drasnap.snapshot import Recorder, connect
from drasnap.store import Store, list_stores
from drasnap.tools.cli import cli

from tests.snapshot.live.kube_api import FakeKubeApi
from tests.snapshot.live.test_capture import api, demo_cluster

__all__ = ["api"]  # the fixture

NS = "prioritized-alternatives"


def claim(allocated: bool) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"namespace": NS, "name": "shared"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu.example.com"}}]}},
    }  # fmt: skip
    if allocated:
        obj["status"] = {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "request": "gpu",
                            "driver": "gpu.example.com",
                            "pool": "gpu-node-0",
                            "device": "gpu-1",
                        }
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["gpu-node-0"]}
                            ]
                        }
                    ]
                },
            }
        }
    return obj


def query(db: Path, sql: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(cli, ["query", str(db), sql, "--json"])
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.stdout)
    return rows


@pytest.mark.slow
def test_recorded_events_give_allocation_events_with_times_and_fates(
    api: FakeKubeApi, tmp_path: Path
) -> None:
    demo_cluster(api)
    api.apply("ADDED", claim(False))
    url = api.start()
    api.watch_hold = 0.2
    client, _ = connect(str(api.kubeconfig(tmp_path / "kc", url)))
    db = tmp_path / "rec.db"
    with Store.open(db, name="live") as store:
        recorder = Recorder(client, store, page_size=2)
        assert recorder.start() == len(api.all_objects())
        before = time.time()
        allocated_rv = api.apply("MODIFIED", claim(True))  # a claim allocated
        slice_ = copy.deepcopy(
            api.objects["ResourceSlice"][("", "gpu-node-0-gpu.example.com-h8q4z")]
        )
        slice_["spec"]["pool"]["generation"] = 2
        api.apply("MODIFIED", slice_)  # the slice republished
        node = copy.deepcopy(api.objects["Node"][("", "gpu-node-1")])
        node["metadata"] = {"name": "gpu-node-2", "labels": node["metadata"]["labels"]}
        api.apply("ADDED", node)  # a node added
        time.sleep(0.3)
        released_rv = api.apply("MODIFIED", claim(False))  # the claim released
        summary = recorder.run(duration=1.5)
        after = time.time()
    assert summary.events == 4 and summary.skipped == 0
    rows = query(db, "SELECT seq, time_epoch, label, fate, event, claim, device, node "
                     "FROM allocation_events ORDER BY seq")  # fmt: skip
    assert [(r["event"], r["claim"], r["device"], r["node"], r["fate"]) for r in rows] == [
        ("allocate", f"{NS}/shared", "gpu-1", "gpu-node-0", "committed"),
        ("deallocate", f"{NS}/shared", "gpu-1", "gpu-node-0", "committed"),
    ]
    assert rows[0]["label"] == f"MODIFIED ResourceClaim {NS}/shared rv={allocated_rv}"
    assert rows[1]["label"] == f"MODIFIED ResourceClaim {NS}/shared rv={released_rv}"
    assert before <= rows[0]["time_epoch"] <= rows[1]["time_epoch"] <= after
    labels = [
        r["label"]
        for r in query(db, "SELECT label FROM layer_history WHERE label IS NOT NULL ORDER BY layer")
    ]
    assert labels[0].startswith("capture: ")
    # Kinds are watched apart: each kind's events in its order, kinds as they arrived.
    assert sorted(lb.split(" rv=")[0] for lb in labels[1:]) == [
        "ADDED Node gpu-node-2",
        f"MODIFIED ResourceClaim {NS}/shared",
        f"MODIFIED ResourceClaim {NS}/shared",
        "MODIFIED ResourceSlice gpu-node-0-gpu.example.com-h8q4z",
    ]
    # The recorded state, at any seq, is a cluster the simulations start from.
    last = next(s.last_seq for s in list_stores(db) if s.name == "live")
    sim = tmp_path / "sim.db"
    for at, allocated in ((rows[0]["seq"], True), (None, False)):
        at_args = ["--from-at", str(at)] if at else []
        ran = CliRunner().invoke(cli, ["simulate", "autoscale", str(sim), "--from-db", str(db),
                                       "--from-name", "live", *at_args, "--json"])  # fmt: skip
        assert ran.exit_code == 0, ran.output
        folder = tmp_path / "sim.db.from" / f"live-at-{at or last}"
        claims = json.loads((folder / "resourceclaims.json").read_text())["items"]
        shared = next(c for c in claims if c["metadata"]["name"] == "shared")
        assert ("allocation" in shared.get("status", {})) == allocated
    refused = CliRunner().invoke(cli, ["simulate", "autoscale", str(sim), "--from-at", "3"])
    assert (
        refused.exit_code == 2 and "--from-name and --from-at go with --from-db" in refused.stderr
    )


def test_an_expired_watch_is_relisted_as_one_layer(api: FakeKubeApi, tmp_path: Path) -> None:
    demo_cluster(api)
    url = api.start()
    api.watch_hold = 0.2
    client, _ = connect(str(api.kubeconfig(tmp_path / "kc", url)))
    with Store.open(tmp_path / "rec.db", name="live") as store:
        recorder = Recorder(client, store, page_size=2)
        recorder.start()
        node = copy.deepcopy(api.objects["Node"][("", "gpu-node-1")])
        node["metadata"]["labels"]["team"] = "b"
        api.apply("MODIFIED", node)
        api.compacted = api.rv  # the history the watches would need is gone
        summary = recorder.run(duration=1.5)
        assert store.get("Node", "gpu-node-1")["metadata"]["labels"]["team"] == "b"
    assert summary.relists == 12 and summary.events == 0  # every kind, once
    rows = query(tmp_path / "rec.db", "SELECT label FROM layer_history WHERE label LIKE 're-list%'")
    relisted = {r["label"].split(" after")[0]: r["label"] for r in rows}
    assert relisted["re-list Node"].startswith("re-list Node after 410 Gone rv=")
    assert relisted["re-list Node"].endswith(": +0 ~1 -0")
    assert relisted["re-list Pod"].endswith(": +0 ~0 -0")


@pytest.mark.slow
def test_sigkill_then_resume_loses_and_duplicates_no_event(
    api: FakeKubeApi, tmp_path: Path
) -> None:
    demo_cluster(api)
    url = api.start()
    api.watch_hold = 0.3
    config = api.kubeconfig(tmp_path / "kc", url)
    db = tmp_path / "rec.db"
    pod = copy.deepcopy(api.objects["Pod"][(NS, "pod2")])
    written: list[int] = []
    done = threading.Event()

    def churn() -> None:  # a pod relabelled every 50 ms
        i = 0
        while not done.is_set():
            pod["metadata"].setdefault("labels", {})["step"] = str(i)
            written.append(api.apply("MODIFIED", copy.deepcopy(pod)))
            i += 1
            time.sleep(0.05)

    command = [sys.executable, "-m", "drasnap.tools", "record", str(db), "--name", "live",
               "--kubeconfig", str(config), "--checkpoint-every", "0.2"]  # fmt: skip
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not any(s.name == "live" and s.checkpointed_at for s in list_stores(db, missing_ok=True)):
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.1)  # until the capture is checkpointed
    worker = threading.Thread(target=churn, daemon=True)
    worker.start()
    time.sleep(1.5)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    time.sleep(0.3)
    done.set()
    worker.join()
    resumed = subprocess.run([*command, "--resume", "--duration", "2", "--json"],
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["resumed"] is True
    labels = [
        r["label"]
        for r in query(db, "SELECT label FROM layer_history WHERE label IS NOT NULL ORDER BY layer")
    ]
    recorded = [int(lb.rsplit("rv=", 1)[1]) for lb in labels if lb.startswith("MODIFIED Pod")]
    assert recorded == written  # every event once, in order
    assert sum(1 for lb in labels if lb.startswith("capture")) == 1


def test_a_refused_record_names_the_role_and_leaves_no_store(
    api: FakeKubeApi, tmp_path: Path
) -> None:
    demo_cluster(api)
    api.forbidden.add(("list", "nodes"))
    config = api.kubeconfig(tmp_path / "kc", api.start())
    db = tmp_path / "rec.db"
    result = CliRunner().invoke(cli, ["record", str(db), "--kubeconfig", str(config)])
    assert result.exit_code == 1
    assert "Error: the API server forbids list nodes" in result.stderr
    assert "kind: ClusterRole" in result.stderr
    assert list_stores(db, missing_ok=True) == []
    bad = CliRunner().invoke(cli, ["record", str(db), "--duration", "soon"])
    assert bad.exit_code == 2 and "give seconds, or a number with s, m or h" in bad.stderr
