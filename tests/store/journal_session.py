"""A small recorded session with known answers, for the journal, replay and history tests.

``record_session(path)`` writes store ``default`` in ``path`` through the Store API (explicit
checkpoints only, so sequence numbers are predictable) and returns a :class:`Session`: the seq
of every named step, the state digest after every seq, and the layer instance of every label.
A second store, ``other``, is written to the same file so tests can check that nothing leaks
between stores.

The story (claims are ResourceClaim wire dicts; GPUs of driver gpu.example.com):

- base: slices for node-a and node-b, claims ml/train-0 and ml/train-1 (unallocated), and
  ml/done-0 allocated at the base (node-a/gpu-7) — fate committed.
- "scale-up ng-a" (committed): train-0 gets node-a/gpu-0; inside it "try node-b" gives train-1
  node-b/gpu-1 and is reverted; then train-1 gets node-a/gpu-1.
- "outer" > "inner": inner moves train-0 to node-b/gpu-0 and is committed into outer, which is
  reverted — so inner's events are reverted too.
- "scale-down" (committed): train-0 deallocated (from node-a/gpu-0, as the move was undone),
  its pod deleted.
- "pending" (left open): new claim ml/train-2 gets node-b/gpu-0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drasnap.store import Store

GPU = "gpu.example.com"


def claim(
    namespace: str,
    name: str,
    devices: list[tuple[str, str]] | None = None,
    *,
    node: str | None = None,
    pods: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A ResourceClaim wire dict; ``devices`` as (pool, device) pairs for request ``gpu``."""
    value: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {"deviceClassName": GPU, "count": len(devices or [1])},
                    }
                ]
            }
        },
    }
    status: dict[str, Any] = {}
    if devices:
        allocation: dict[str, Any] = {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": GPU, "pool": pool, "device": device}
                    for pool, device in devices
                ]
            }
        }
        if node is not None:
            allocation["nodeSelector"] = {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                ]
            }
        status["allocation"] = allocation
    if pods:
        status["reservedFor"] = [{"resource": "pods", "name": p, "uid": f"uid-{p}"} for p in pods]
    if status:
        value["status"] = status
    return value


def slice_for(node: str, gpus: int = 8) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{GPU}"},
        "spec": {
            "driver": GPU,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}"} for i in range(gpus)],
        },
    }


@dataclass
class Recorder:
    """Drives a fresh store and keeps what the journal will say: one seq per operation."""

    store: Store
    seq: int = 0
    forks: int = 0
    marks: dict[str, int] = field(default_factory=dict)
    digests: dict[int, str] = field(default_factory=dict)
    layers: dict[str, int] = field(default_factory=dict)

    def _done(self, mark: str | None) -> None:
        self.seq += 1
        if mark is not None:
            self.marks[mark] = self.seq
        self.digests[self.seq] = self.store.state_digest()

    def put(self, kind: str, key: str, value: Any, mark: str | None = None) -> None:
        self.store.put(kind, key, value)
        self._done(mark)

    def delete(self, kind: str, key: str, mark: str | None = None) -> None:
        self.store.delete(kind, key)
        self._done(mark)

    def fork(self, label: str) -> None:
        self.store.fork(label)
        self.forks += 1
        self.layers[label] = self.forks
        self._done(f"fork {label}")

    def commit(self, mark: str | None = None) -> None:
        self.store.commit()
        self._done(mark)

    def revert(self, mark: str | None = None) -> None:
        self.store.revert()
        self._done(mark)

    def checkpoint(self, mark: str | None = None) -> None:
        self.store.checkpoint()
        self._done(mark)


@dataclass
class Session:
    path: Path | str
    name: str
    marks: dict[str, int]
    digests: dict[int, str]
    layers: dict[str, int]
    last_seq: int
    final_digest: str


def record_session(path: Path | str, name: str = "default") -> Session:
    """Record the session in ``path`` (a file, or a URL) and return what it wrote."""
    with Store.open(path, name=name, auto_checkpoint=False) as store:
        r = Recorder(store)
        r.put("ResourceSlice", "node-a", slice_for("node-a"))
        r.put("ResourceSlice", "node-b", slice_for("node-b"))
        r.put("ResourceClaim", "ml/train-0", claim("ml", "train-0"))
        r.put("ResourceClaim", "ml/train-1", claim("ml", "train-1"))
        r.put(
            "ResourceClaim",
            "ml/done-0",
            claim("ml", "done-0", [("node-a", "gpu-7")], node="node-a", pods=("done-0",)),
            mark="base allocation",
        )
        r.checkpoint("base")

        r.fork("scale-up ng-a")
        r.put(
            "ResourceClaim",
            "ml/train-0",
            claim("ml", "train-0", [("node-a", "gpu-0")], node="node-a", pods=("train-0",)),
            mark="train-0 on node-a",
        )
        r.put("Pod", "ml/train-0", {"spec": {"nodeName": "node-a"}})
        r.fork("try node-b")
        r.put(
            "ResourceClaim",
            "ml/train-1",
            claim("ml", "train-1", [("node-b", "gpu-1")], node="node-b"),
            mark="train-1 on node-b",
        )
        r.revert("revert try node-b")
        r.put(
            "ResourceClaim",
            "ml/train-1",
            claim("ml", "train-1", [("node-a", "gpu-1")], node="node-a"),
            mark="train-1 on node-a",
        )
        r.commit("commit scale-up ng-a")
        r.checkpoint("committed")

        r.fork("outer")
        r.fork("inner")
        r.put(
            "ResourceClaim",
            "ml/train-0",
            claim("ml", "train-0", [("node-b", "gpu-0")], node="node-b", pods=("train-0",)),
            mark="train-0 moved",
        )
        r.commit("commit inner")
        r.revert("revert outer")

        r.fork("scale-down")
        r.put("ResourceClaim", "ml/train-0", claim("ml", "train-0"), mark="train-0 released")
        r.delete("Pod", "ml/train-0")
        r.commit("commit scale-down")

        r.fork("pending")
        r.put(
            "ResourceClaim",
            "ml/train-2",
            claim("ml", "train-2", [("node-b", "gpu-0")], node="node-b"),
            mark="train-2 on node-b",
        )
        r.checkpoint("end")
        final = store.state_digest()
    with Store.open(path, name="other") as other:
        other.put("ResourceClaim", "ml/train-0", claim("ml", "train-0", [("x", "y")], node="z"))
    return Session(path, name, r.marks, r.digests, r.layers, r.seq, final)
