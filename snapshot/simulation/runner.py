"""Start, continue or report a simulation run on a cluster snapshot, and summarise it.

What one run of ``drasnap simulate`` finds in its store decides what it does:

- nothing (or only an empty store: a start-up killed before its first checkpoint): start;
- a run with other settings: refuse, naming each difference;
- a failed run: refuse (it is a record of what happened; drop it or use another name);
- an unfinished run: continue it with ``resume``, else refuse;
- a finished run: with ``resume``, report its recorded result; else refuse.

So ``--resume`` is idempotent: the same command line starts, continues or reports, which is
what a supervisor that restarts a crashed run needs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from drasnap.snapshot import SnapshotError
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import RunFailedError, ScenarioError
from drasnap.snapshot.simulation import collector, scale_up
from drasnap.snapshot.simulation.failures import run_warnings, unschedulable
from drasnap.snapshot.simulation.inputs import StartingObjects, build
from drasnap.snapshot.simulation.plan import PLAN_KEY, RUN_KEY, SIM_KIND
from drasnap.snapshot.simulation.plans import plan_of
from drasnap.snapshot.simulation.record import Outcome, RunContext
from drasnap.snapshot.simulation.scenarios import STRATEGIES
from drasnap.snapshot.simulation.settings import ProgressCallback, Settings, StopRequest
from drasnap.store import MemoryStore


def prepare(settings: Settings, *, strict: bool = False) -> StartingObjects:
    """Check the settings and build the starting cluster, before any database is touched.

    ``strict`` refuses manifests of kinds the simulation does not use.

    Raises:
        ScenarioError: impossible settings or manifests without what the scenario needs.
        snapshot.ObjectValidationError: a manifest fails validation.
        snapshot.SnapshotError: the manifests do not fit together (e.g. a bound pod's claim
            is missing, or allocated on another node).
    """
    settings.check()
    start = STRATEGIES[settings.scenario].configure(build(settings, strict=strict), settings)
    if settings.source is not None:
        # Manifests can be valid one by one yet not fit together (a bound pod whose claim is
        # missing or allocated elsewhere): load them into a throw-away snapshot first, so that
        # such errors too come before the database is touched.
        _load(ClusterSnapshot(MemoryStore(), features=settings.feature_gates), start)
    return start


def simulate(
    cluster: ClusterSnapshot,
    settings: Settings,
    start: Callable[[], StartingObjects],
    *,
    resume: bool = False,
    where: str = "the store",
    report: ProgressCallback = lambda _done, _total, _detail: None,
    stop: StopRequest = lambda: None,
    options: dict[str, Any] | None = None,
) -> Outcome:
    """Run ``settings`` on ``cluster``'s store: start, continue or report (module docstring).

    ``start`` builds the starting cluster (:func:`prepare`); it is called only when the run
    starts here.

    Raises:
        ScenarioError: the store holds another run, other settings, a failed run, a finished
            or unfinished run when that is not what was asked, or data that is no run.
        RunFailedError: the run stopped on an error found while it ran (recorded as failed).
        RunInterrupted: ``stop`` asked the run to stop; it stopped, saved.
    """
    with collector.paced():
        sim = RunContext(cluster, stop, report, options)
        return _simulate(cluster, settings, start, resume, where, sim)


def _simulate(
    cluster: ClusterSnapshot,
    settings: Settings,
    start: Callable[[], StartingObjects],
    resume: bool,
    where: str,
    sim: RunContext,
) -> Outcome:
    store = sim.store
    plan = sim.plan()
    wanted = settings.record()
    resumed = False
    if plan is None:
        if any(store.count(kind) for kind in store.kinds()):
            raise ScenarioError(f"{where} already holds data that is not a drasnap simulation")
        plan = _start(sim, settings, start())
    else:
        if plan["settings"] != wanted:
            raise ScenarioError(
                f"{where} holds a {plan['settings']['scenario']} run with other settings "
                f"({_differences(plan['settings'], wanted)}); start a new run without --name"
            )
        run = sim.progress()
        if run.get("error") is not None:
            raise ScenarioError(
                f"{where} holds a {settings.scenario} run that failed ({run['error']}); it is "
                "kept as a record: start a new run without --name, or drop it with drasnap drop"
            )
        if run["done"]:
            if not resume:
                raise ScenarioError(
                    f"{where} holds a finished {settings.scenario} run; start a new run "
                    "without --name (or add --resume to print its result)"
                )
            sim.restore_counters(run)
            return _outcome(sim, settings, run["results"], time.monotonic(), resumed=True)
        if not resume:
            raise ScenarioError(
                f"{where} holds an unfinished {settings.scenario} run: add --resume to continue it"
            )
        while cluster.depth:  # a checkpoint is taken at depth 0; nothing above it survives
            cluster.revert()
        sim.restore_counters(run)
        resumed = True
    collector.settle()  # the starting cluster is in memory: it lives until the run ends
    started = time.monotonic()
    typed = plan_of(plan)
    sim.steps = typed.steps
    try:
        results = STRATEGIES[settings.scenario].run(sim, typed)
    except SnapshotError as exc:
        # An error only the run could find (a CEL expression failing on some device, say):
        # the run is recorded as failed, so it blocks nothing and shows in `drasnap runs`.
        sim.fail(exc)
        raise RunFailedError(f"{where} failed: {exc}") from exc
    return _outcome(sim, settings, results, started, resumed=resumed)


def _outcome(
    sim: RunContext, settings: Settings, results: dict[str, Any], started: float, *, resumed: bool
) -> Outcome:
    result = STRATEGIES[settings.scenario].result(sim, results)
    return Outcome(
        scenario=settings.scenario,
        result=result,
        counters=sim.counters,
        pods_placed=results["placed"],
        seconds=time.monotonic() - started,
        state_digest=sim.store.state_digest(),
        resumed=resumed,
        extra={
            # Autoscale's result has them with the cluster-autoscaler's NotTriggerScaleUp text.
            **({} if "unschedulable" in result else {"unschedulable": unschedulable(sim.store)}),
            # The scenario's own (autoscale: a NotReady node, nominated pods, a template's
            # DaemonSet pods), then what the filters did not check, each once.
            "warnings": list(
                dict.fromkeys(
                    [*result.get("warnings", ()), *run_warnings(sim.store, scale_up.PENDING_KIND)]
                )
            ),
        },
    )


def _load(cs: ClusterSnapshot, start: StartingObjects) -> None:
    """Write the starting cluster into ``cs``."""
    if start.classes:
        cs.dra.add_device_classes(start.classes)
    if start.taint_rules:
        cs.dra.add_device_taint_rules(start.taint_rules)
    if start.global_slices:
        cs.dra.add_global_resource_slices(start.global_slices)
    if start.claims:
        cs.dra.add_claims(start.claims)
    for node, slices, pods in start.nodes:
        cs.add_node(node, slices=slices, pods=pods)


def _start(sim: RunContext, settings: Settings, start: StartingObjects) -> dict[str, Any]:
    _load(sim.cluster, start)
    plan = STRATEGIES[settings.scenario].setup(sim, start, settings).record()
    sim.store.put(SIM_KIND, PLAN_KEY, plan)
    sim.store.put(
        SIM_KIND,
        RUN_KEY,
        {"step": 0, "done": False, "results": {}, "counters": asdict(sim.counters)},
    )
    # The first restart point: a crash before it is durable finds the store empty and starts
    # over, so with write-behind the run goes on while it is written.
    sim.store.checkpoint(wait=False)
    return plan


def _differences(have: dict[str, Any], want: dict[str, Any], prefix: str = "") -> str:
    parts = []
    for key in [*want, *(k for k in have if k not in want)]:  # a setting recorded only if set
        there, asked = have.get(key), want.get(key)
        if there == asked:
            continue
        if isinstance(there, dict) and isinstance(asked, dict):
            parts.append(_differences(there, asked, f"{prefix}{key}."))
        else:
            parts.append(f"{prefix}{key}: {there!r} there, {asked!r} asked")
    return "; ".join(parts)
