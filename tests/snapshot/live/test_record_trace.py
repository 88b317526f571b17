"""A recording the Recorder made against the test API server, read back as a timeline's trace
(``--trace-from-db``): its labels, keys and objects are the ones the trace reader expects."""

from __future__ import annotations

import copy
import time
from pathlib import Path

from drasnap.snapshot import Recorder, connect
from drasnap.snapshot.simulation import read_recorded
from drasnap.store import Journal, Store

from tests.snapshot.live.kube_api import FakeKubeApi
from tests.snapshot.live.test_capture import api, demo_cluster

__all__ = ["api"]  # the fixture

NS = "prioritized-alternatives"


def test_a_recorders_pods_created_and_deleted_are_the_trace(
    api: FakeKubeApi, tmp_path: Path
) -> None:
    demo_cluster(api)
    url = api.start()
    api.watch_hold = 0.2
    client, _ = connect(str(api.kubeconfig(tmp_path / "kc", url)))
    db = tmp_path / "rec.db"
    with Store.open(db, name="live") as store:
        recorder = Recorder(client, store, page_size=2)
        recorder.start()
        started = time.time()
        pod1 = api.objects["Pod"][(NS, "pod1")]
        added = copy.deepcopy(pod1)
        added["metadata"] = {"namespace": NS, "name": "pod6"}
        added["spec"]["nodeName"] = "gpu-node-0"  # created bound
        api.apply("ADDED", added)
        time.sleep(0.3)
        api.apply("DELETED", copy.deepcopy(api.objects["Pod"][(NS, "pod2")]))
        recorder.run(duration=1.5)
        took_ms = (time.time() - started) * 1000
    first, trace = read_recorded(str(db), "live")
    assert [(e.op, e.kind, e.key) for e in trace.events] == [
        ("create", "Pod", f"{NS}/pod6"),
        ("delete", "Pod", f"{NS}/pod2"),  # pending in the capture
    ]
    created, deleted = trace.events
    # (the delete came 0.3 s after the create, on the recorder's clock: watch delays aside)
    assert 0 <= created.t_ms <= deleted.t_ms <= took_ms
    assert "nodeName" not in created.object["spec"]
    assert created.object["spec"]["resourceClaims"] == pod1["spec"]["resourceClaims"]
    assert any("bound when created" in note for note in trace.notes)
    with Journal.open(db, name="live") as journal:  # the start: the capture's commit
        labels = {layer.label: layer.closed_seq for layer in journal.layers().values()}
    assert [seq for label, seq in labels.items() if str(label).startswith("capture:")] == [first]
