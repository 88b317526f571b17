"""What both scenarios share: settings, the run record kept in the store, counters, errors.

The store holds, besides the cluster itself:

- ``Simulation/plan``: written once at the start: the settings, and what the run iterates
  over (the pending pods in order, the node groups, or the scale-down candidates);
- ``Simulation/run``: the progress, rewritten at every step boundary: the next step, the
  results so far and the fork/commit/revert counters;
- ``PendingPod/<ns>/<name>`` and ``NodeGroup/<name>`` (scale-up): the pods to place and each
  node group's template node and slices.

Steps end at depth 0, where the run record is written and a checkpoint may be taken, so a
checkpoint always holds a state the run can continue from.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from snapshot.cluster import ClusterSnapshot
from store import VersionedStore

SIM_KIND = "Simulation"
PLAN_KEY = "plan"
RUN_KEY = "run"
SCENARIOS = ("scale-up", "scale-down")


class ScenarioError(Exception):
    """A simulation cannot start or go on (bad settings, wrong database, nothing to resume)."""


@dataclass(frozen=True)
class Settings:
    """Scenario sizes; the defaults are upstream's RunOnce DRA benchmarks
    (``cluster-autoscaler/core/bench/benchmark_runonce_test.go``)."""

    scenario: str
    seed: int = 0
    pods: int = 4000  # scale-up: pending pods
    gpus_per_node: int = 0  # 0: the scenario's default (8 for scale-up, 10 for scale-down)
    node_groups: int = 1  # scale-up
    nodes: int = 800  # scale-down
    pods_per_node: int = 4  # scale-down
    source: str | None = None  # --from DIR: manifests instead of generated objects
    source_digest: str | None = None

    def resolved(self) -> Settings:
        """These settings with the scenario's defaults filled in."""
        if self.gpus_per_node:
            return self
        gpus = 8 if self.scenario == "scale-up" else 10
        return Settings(**{**asdict(self), "gpus_per_node": gpus})

    def check(self) -> None:
        """Raise ScenarioError for settings no run can have (call on resolved settings)."""
        if self.scenario not in SCENARIOS:
            raise ScenarioError(
                f"unknown scenario {self.scenario!r}: choose {' or '.join(SCENARIOS)}"
            )
        for name in ("pods", "gpus_per_node", "node_groups", "nodes"):
            if getattr(self, name) < 1:
                raise ScenarioError(f"--{name.replace('_', '-')} must be at least 1")
        if self.pods_per_node < 0:
            raise ScenarioError("--pods-per-node must be 0 or more")
        if self.scenario == "scale-down" and self.pods_per_node > self.gpus_per_node:
            raise ScenarioError(
                f"--pods-per-node {self.pods_per_node} cannot exceed --gpus-per-node "
                f"{self.gpus_per_node}: each pod holds one GPU"
            )
        if self.scenario == "scale-up" and self.gpus_per_node >> (self.node_groups - 1) < 1:
            raise ScenarioError(
                f"--node-groups {self.node_groups} halves --gpus-per-node {self.gpus_per_node} "
                "below one GPU for the last group"
            )

    def record(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Counters:
    forks: int = 0
    commits: int = 0
    reverts: int = 0


@dataclass
class Outcome:
    """The summary of a finished run (what ``--json`` prints)."""

    scenario: str
    result: dict[str, Any]
    counters: Counters
    pods_placed: int
    seconds: float
    state_digest: str
    resumed: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            **self.result,
            "pods_placed": self.pods_placed,
            "forks": self.counters.forks,
            "commits": self.counters.commits,
            "reverts": self.counters.reverts,
            "seconds": round(self.seconds, 3),
            "state_digest": self.state_digest,
            "resumed": self.resumed,
            **self.extra,
        }


class Sim:
    """A cluster snapshot plus the run record: counts every fork, commit and revert."""

    def __init__(self, cluster: ClusterSnapshot) -> None:
        self.cluster = cluster
        self.store: VersionedStore = cluster.store
        self.counters = Counters()
        self.started = time.monotonic()

    def fork(self, label: str) -> None:
        self.cluster.fork(label)
        self.counters.forks += 1

    def commit(self) -> None:
        self.cluster.commit()
        self.counters.commits += 1

    def revert(self) -> None:
        self.cluster.revert()
        self.counters.reverts += 1

    def plan(self) -> dict[str, Any] | None:
        plan: dict[str, Any] | None = self.store.get(SIM_KIND, PLAN_KEY)
        return plan

    def progress(self) -> dict[str, Any]:
        run: dict[str, Any] = self.store.get(SIM_KIND, RUN_KEY)
        return run

    def save(self, step: int, results: dict[str, Any], *, done: bool = False) -> None:
        """Record a step boundary (at depth 0) and checkpoint if the policy says it is due."""
        assert self.cluster.depth == 0, "steps end at depth 0"
        self.store.put(
            SIM_KIND,
            RUN_KEY,
            {"step": step, "done": done, "results": results, "counters": asdict(self.counters)},
        )
        if done:
            self.store.checkpoint()
        else:
            self.store.maybe_checkpoint()

    def restore_counters(self, run: dict[str, Any]) -> None:
        self.counters = Counters(**run["counters"])
