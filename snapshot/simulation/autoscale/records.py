"""What an autoscale run writes as it decides, and reads back: one record per decision under
``AutoscaleDecision`` (the package docstring lists the keys), written once at depth 0."""

from __future__ import annotations

from typing import Any, Protocol

from drasnap.snapshot.simulation.plan import PLAN_KEY, RUN_KEY, SIM_KIND
from drasnap.snapshot.simulation.plans import AutoscalePlan, plan_of
from drasnap.snapshot.simulation.record import RunContext
from drasnap.snapshot.simulation.scale_up import PENDING_KIND

DECISION_KIND = "AutoscaleDecision"  # keys: pod/<ns>/<name>, estimate/<group>, node/<name>
SCALE_UP_KEY = "scale-up"
SCALE_DOWN_KEY = "scale-down"  # the unneeded nodes, where their pods go, the nodes deleted
IGNORED_KEY = "ignored"  # pending pods CA leaves out: expendable, nominated
CURSOR_KEY = "cursor"  # the last node a pod went to (CA's lastIndexOrderMapping)
WARNINGS_KEY = "warnings"


class _Reader(Protocol):
    """A store, or a store's state as of a seq (``drasnap inspect --at``)."""

    def get(self, kind: str, key: str, default: Any = None) -> Any: ...

    def items(self, kind: str) -> dict[str, Any]: ...


def decisions(store: _Reader, plan: AutoscalePlan) -> dict[str, Any]:
    """What the run decided so far, as ``--json`` reports it (README)."""
    pods = [(key, store.get(DECISION_KIND, f"pod/{key}")) for key in plan.pending]
    nodes = [(name, store.get(DECISION_KIND, f"node/{name}")) for name in plan.candidates]
    scale_up = store.get(DECISION_KIND, SCALE_UP_KEY) or {}
    removed = [name for name, d in nodes if d is not None and d["removed"]]
    removed_by_group: dict[str, list[str]] = {}
    for name in removed:
        removed_by_group.setdefault(plan.members.get(name) or "", []).append(name)
    estimates = {}
    for group in plan.groups:
        found = store.get(DECISION_KIND, f"estimate/{group}")
        if found is not None:
            estimates[group] = {"nodes": found["nodes"], "pods": len(found["pods"])}
    return {
        "placed_on_existing": {k: d["existing"] for k, d in pods if d and d.get("existing")},
        "node_group": scale_up.get("node_group"),
        "added": scale_up.get("added", {}),
        "new_nodes": scale_up.get("new_nodes", []),
        "placed_on_new": {k: d["new"] for k, d in pods if d and d.get("new")},
        "estimates": estimates,
        "removed": removed,
        "removed_by_group": removed_by_group,
        "kept": {n: d["reason"] for n, d in nodes if d is not None and not d["removed"]},
        # None also for a record written before kept nodes had CA's name
        "unremovable": {
            n: d.get("unremovable") for n, d in nodes if d is not None and not d["removed"]
        },
        "unschedulable": {k: d["unschedulable"] for k, d in pods if d and d.get("unschedulable")},
        "ignored": dict(store.get(DECISION_KIND, IGNORED_KEY) or {}),
        "unneeded": [
            u["node"] for u in (store.get(DECISION_KIND, SCALE_DOWN_KEY) or {}).get("unneeded", ())
        ],
        "warnings": list(store.get(DECISION_KIND, WARNINGS_KEY) or ()),
        "pending": sorted(store.items(PENDING_KIND)),
    }


def decisions_so_far(store: _Reader) -> dict[str, Any] | None:
    """An autoscale run's step and decisions so far, read from its store (or a state of it at a
    seq), or None for a store that holds no autoscale run."""
    record = store.get(SIM_KIND, PLAN_KEY)
    run = store.get(SIM_KIND, RUN_KEY)
    if not record or not run:
        return None
    plan = plan_of(record)
    if not isinstance(plan, AutoscalePlan):
        return None
    return {"step": run.get("step"), "steps": plan.steps, **decisions(store, plan)}


def warn(sim: RunContext, text: str) -> None:
    warnings = sim.store.get(DECISION_KIND, WARNINGS_KEY) or []
    sim.store.put(DECISION_KIND, WARNINGS_KEY, [*warnings, text])
