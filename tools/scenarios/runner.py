"""Start, resume or refuse a simulation run on a cluster snapshot, and summarise it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from snapshot.cluster import ClusterSnapshot
from store import MemoryStore
from tools.scenarios import scale_down, scale_up
from tools.scenarios.base import PLAN_KEY, RUN_KEY, SIM_KIND, Outcome, ScenarioError, Settings, Sim
from tools.scenarios.inputs import Cluster, build

Tick = Callable[[int, int], None]


def prepare(settings: Settings) -> Cluster:
    """Check the settings and build the starting cluster, before any database is touched.

    Raises:
        ScenarioError: impossible settings or manifests without what the scenario needs.
        snapshot.ObjectValidationError: a manifest fails validation.
        snapshot.SnapshotError: the manifests do not fit together (e.g. a bound pod's claim
            is missing, or allocated on another node).
    """
    settings.check()
    start = build(settings)
    if settings.source is not None:
        # Manifests can be valid one by one yet not fit together (a bound pod whose claim is
        # missing or allocated elsewhere): load them into a throw-away snapshot first, so that
        # such errors too come before the database is touched.
        _load(ClusterSnapshot(MemoryStore()), start)
    return start


def simulate(
    cluster: ClusterSnapshot,
    settings: Settings,
    start: Cluster | None,
    *,
    resume: bool = False,
    where: str = "the store",
    tick: Tick = lambda _step, _total: None,
) -> Outcome:
    """Run ``settings`` on ``cluster``'s store: start a new run, or resume one (``resume``).

    ``start`` is the starting cluster (from :func:`prepare`); a resumed run reads everything
    from the store instead.

    Raises:
        ScenarioError: the store holds a finished run, another scenario or other settings, an
            unfinished run without ``resume``, other data, or nothing to resume.
    """
    sim = Sim(cluster)
    store = sim.store
    plan = sim.plan()
    wanted = settings.record()
    if plan is None:
        if resume:
            raise ScenarioError(f"nothing to resume: {where} holds no simulation run")
        if any(store.count(kind) for kind in store.kinds()):
            raise ScenarioError(f"{where} already holds data that is not a drasnap simulation")
        assert start is not None
        plan = _start(sim, settings, start)
    else:
        if plan["settings"] != wanted:
            raise ScenarioError(
                f"{where} holds a {plan['settings']['scenario']} run with other settings "
                f"({_differences(plan['settings'], wanted)}); use another --db or --name"
            )
        run = sim.progress()
        if run["done"]:
            raise ScenarioError(
                f"{where} holds a finished {settings.scenario} run; use another --db or --name"
            )
        if not resume:
            raise ScenarioError(
                f"{where} holds an unfinished {settings.scenario} run: add --resume to continue it"
            )
        while cluster.depth:  # a checkpoint is taken at depth 0; nothing above it survives
            cluster.revert()
        sim.restore_counters(run)
    started = time.monotonic()
    if settings.scenario == "scale-up":
        results = scale_up.run(sim, plan, tick)
        result = {
            "nodes_added": results["nodes_added"],
            "node_group": results["node_group"],
            "estimates": results["estimates"],
        }
    else:
        results = scale_down.run(sim, plan, tick)
        result = {"nodes_removed": results["nodes_removed"]}
    return Outcome(
        scenario=settings.scenario,
        result=result,
        counters=sim.counters,
        pods_placed=results["placed"],
        seconds=time.monotonic() - started,
        state_digest=store.state_digest(),
        resumed=resume,
    )


def _load(cs: ClusterSnapshot, start: Cluster) -> None:
    """Write the starting cluster into ``cs``."""
    if start.classes:
        cs.dra.add_device_classes(start.classes)
    if start.global_slices:
        cs.dra.add_global_resource_slices(start.global_slices)
    if start.claims:
        cs.dra.add_claims(start.claims)
    for node, slices, pods in start.nodes:
        cs.add_node(node, slices=slices, pods=pods)


def _start(sim: Sim, settings: Settings, start: Cluster) -> dict[str, Any]:
    _load(sim.cluster, start)
    plan = scale_up.setup(sim, start) if settings.scenario == "scale-up" else scale_down.setup(sim)
    plan = {"settings": settings.record(), **plan}
    sim.store.put(SIM_KIND, PLAN_KEY, plan)
    sim.store.put(
        SIM_KIND,
        RUN_KEY,
        {"step": 0, "done": False, "results": {}, "counters": asdict(sim.counters)},
    )
    sim.store.checkpoint()
    return plan


def _differences(have: dict[str, Any], want: dict[str, Any]) -> str:
    parts = [
        f"{k}: {have.get(k)!r} there, {want.get(k)!r} asked"
        for k in want
        if have.get(k) != want.get(k)
    ]
    return "; ".join(parts)
