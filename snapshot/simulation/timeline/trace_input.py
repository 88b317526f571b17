"""The trace a timeline reads (``--trace``), checked against the starting cluster before any
store is touched (docs/timelines.md 2.10)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from drasnap.snapshot.errors import ScenarioError
from drasnap.snapshot.k8s.kinds import key_of, object_key
from drasnap.snapshot.k8s.objects import name_of
from drasnap.snapshot.simulation.inputs import NodeGroup, StartingObjects
from drasnap.snapshot.simulation.settings import ALIBABA, Settings
from drasnap.snapshot.simulation.traces.alibaba import read_alibaba
from drasnap.snapshot.simulation.traces.events import DELETE, Trace
from drasnap.snapshot.simulation.traces.generator import generate
from drasnap.snapshot.simulation.traces.jsonl import read_jsonl
from drasnap.snapshot.simulation.traces.recorded import RECORDED, read_recorded, split_source

#: ``--trace gen:SPEC``: a generated trace (snapshot.simulation.traces.generator), from the
#: run's seed.
GENERATED = "gen:"


def read_trace(start: StartingObjects, settings: Settings) -> Any:
    """The trace of ``settings``, its objects checked against ``start`` (the classes they name,
    the objects they delete), and against what a timeline does with them.

    Raises:
        ScenarioError: one line naming the file, the line and what is wrong.
    """
    trace = _read(start, settings)
    for event in trace.events:
        if event.op == DELETE and event.kind not in _DELETABLE:
            raise ScenarioError(
                f"{trace.path} line {event.line}: deleting a {event.kind} ({event.key}) is not "
                "modelled (a claim taken away while pods may use it); delete its pods instead"
            )
    return trace


#: What a trace may delete: the engine ends a pod, forgets a template.
_DELETABLE = frozenset({"Pod", "ResourceClaimTemplate"})


def _read(start: StartingObjects, settings: Settings) -> Trace:
    assert settings.trace is not None  # Settings.check: a timeline has one
    existing: set[tuple[str, str]] = set()
    existing |= {("Pod", key_of(p)) for p in start.pending}
    existing |= {("Pod", key_of(p)) for _n, _s, pods in start.nodes for p in pods}
    existing |= {("ResourceClaim", object_key(c)) for c in start.claims}
    existing |= {("ResourceClaimTemplate", object_key(t)) for t in start.templates}
    if settings.cluster_from_trace:
        return _alibaba(start, settings)
    classes = {name_of(c) for c in start.classes}
    if settings.trace.startswith(GENERATED):
        spec = settings.trace[len(GENERATED) :]
        events = generate(spec, settings.seed, classes=classes)
        digest = hashlib.sha256(f"{settings.seed}/{spec}".encode()).hexdigest()
        return Trace(tuple(events), digest, settings.trace)
    if settings.trace.startswith(RECORDED):  # --trace-from-db: the start is its first state
        db, name = split_source(settings.trace)
        _first, trace = read_recorded(
            db, name, classes=classes, existing=existing, features=settings.feature_gates
        )
        start.notes.extend(trace.notes)  # (what it left out or changed: said before the run)
        return trace
    return read_jsonl(
        Path(settings.trace),
        classes=classes,
        existing=existing,
        features=settings.feature_gates,
    )


def _alibaba(start: StartingObjects, settings: Settings) -> Trace:
    """Alibaba's GPU trace: its DeviceClass and node groups join the (empty) start."""
    assert settings.trace is not None
    found = read_alibaba(
        Path(settings.trace[len(ALIBABA) :]),
        Path(settings.trace_nodes) if settings.trace_nodes else None,
        sharing=settings.gpu_sharing,
        pending=settings.pending_rows,
        arrivals=settings.arrivals,
        features=settings.feature_gates,
    )
    start.classes.extend(found.classes)
    start.groups.extend(
        NodeGroup(g.name, g.node, list(g.slices), g.min_size, g.max_size) for g in found.groups
    )
    start.notes.extend(found.notes)
    return found.trace()
