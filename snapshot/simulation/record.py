"""What the scenarios share: the run record kept in the store, counters, the outcome.

The store holds, besides the cluster itself:

- ``Simulation/plan``: written once at the start: the settings, and what the run iterates
  over (the pending pods in order, the node groups, or the scale-down candidates);
- ``Simulation/run``: the progress, rewritten at every step boundary: the next step, the
  results so far and the fork/commit/revert counters, whether the run is ``done``, and the
  ``error`` of a run that failed (absent otherwise);
- ``PendingPod/<ns>/<name>`` and ``NodeGroup/<name>`` (scale-up, autoscale): the pods to
  place and each node group's template node and slices;
- ``AutoscaleDecision/...`` (autoscale): each decision, written once
  (``snapshot.simulation.autoscale``).

Steps end at depth 0, where the run record is written and a checkpoint may be taken, so a
checkpoint always holds a state the run can continue from. A signal asking the run to stop is
honoured there too: the run checkpoints and stops (:class:`snapshot.errors.RunInterrupted`).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import RunInterrupted, one_line
from drasnap.snapshot.simulation.plan import PLAN_KEY, RUN_KEY, SIM_KIND
from drasnap.snapshot.simulation.settings import ProgressCallback, StopRequest
from drasnap.store import VersionedStore

__all__ = ["Counters", "Outcome", "RunContext"]


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


class RunContext:
    """A cluster snapshot plus the run record: counts every fork, commit and revert."""

    def __init__(
        self,
        cluster: ClusterSnapshot,
        stop: StopRequest = lambda: None,
        report: ProgressCallback = lambda _done, _total, _detail: None,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.cluster = cluster
        # How the run executes, not what it computes (not recorded: a run resumed without them
        # ends on the same state): a timeline's --no-skip.
        self.options: dict[str, Any] = dict(options or {})
        self.store: VersionedStore = cluster.store
        self.counters = Counters()
        self.started = time.monotonic()
        self.steps = 0  # how many steps the run has (set once the plan is known)
        self._stop = stop
        self._report = report

    def advance(self, done: float, detail: str = "") -> None:
        """Report progress: ``done`` steps of the run (fractions within a step)."""
        self._report(done, self.steps, detail)

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
            return
        signal_number = self._stop()
        if signal_number is not None:
            self.store.checkpoint()
            raise RunInterrupted(signal_number, step, self.steps)
        self.store.maybe_checkpoint()

    def fail(self, error: BaseException) -> None:
        """Record that the run stopped on ``error``, at its last step boundary, durably.

        The layers of the step in progress are dropped: what is kept is the state the run
        record describes. A failed run is not resumed; it stays as a record of what happened.
        """
        while self.cluster.depth:
            self.cluster.revert()
        run = dict(self.progress())
        run["error"] = one_line(error) or type(error).__name__
        self.store.put(SIM_KIND, RUN_KEY, run)
        self.store.checkpoint()

    def restore_counters(self, run: dict[str, Any]) -> None:
        self.counters = Counters(**run["counters"])
