"""What a run's report shows, gathered from the store's public readers as plain values.

Everything is read as of the run's last checkpoint (a reader never waits for a writer): a run
still in progress shows that checkpoint and says so. What a person cannot read node by node is
aggregated past :data:`LIMITS` (tables keep their first rows and count the rest; charts bin the
nodes) and each place that does so says it (:attr:`Table.note`, :attr:`RunReport.aggregated`).
"""

from __future__ import annotations

import shlex
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from drasnap.snapshot.autoscaler.utilization import node_utilization
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import UtilizationError
from drasnap.snapshot.history.allocations import allocation_history, summarize_claims
from drasnap.snapshot.history.pod_failures import POD_FAILURE_KIND, PodFailure
from drasnap.snapshot.k8s.kinds import CLAIM_KIND, SLICE_KIND
from drasnap.snapshot.scheduling import NodeResult
from drasnap.snapshot.simulation.autoscale.records import decisions_so_far
from drasnap.snapshot.simulation.plan import PLAN_KEY, SIM_KIND
from drasnap.snapshot.simulation.report.timeline import (
    STATES,
    TimelineSection,
    gather_timeline,
    histogram,
)
from drasnap.snapshot.simulation.runs import RunInfo, RunStatus, find_run
from drasnap.store import Fate, Journal, MemoryStore, Store, open_state

__all__ = ["LIMITS", "RunReport", "Table", "gather"]

#: Past these sizes the page aggregates: ``rows`` rows per table, ``nodes`` nodes drawn one by
#: one in a chart (more are binned), ``points`` points of the journal's depth line, ``before``
#: nodes whose utilization before the run is rebuilt by replaying the journal.
LIMITS = {"rows": 300, "nodes": 120, "points": 1500, "before": 10_000, "claims": 20}


@dataclass
class Table:
    """A table of the page and the command that prints the same rows in a terminal."""

    id: str
    title: str
    headers: list[str]
    rows: list[list[Any]]
    source: str  # a drasnap command line, or one drasnap query
    total: int = -1  # rows before the cut (-1: all are shown)
    note: str = ""
    filters: dict[str, int] = field(default_factory=dict)  # header -> column to filter by

    def cut(self, limit: int) -> Table:
        self.total = len(self.rows)
        if len(self.rows) > limit:
            self.note = (
                f"{self.note} The first {limit} of {self.total} rows are shown (aggregated "
                "above); the command gives them all."
            ).strip()
            self.rows = self.rows[:limit]
        return self


@dataclass
class RunReport:
    """One run, as its page shows it."""

    db: str
    name: str
    info: RunInfo
    generated: float
    summary: list[tuple[str, str]]
    warnings: list[str]
    in_progress: str  # "" for a run that ended; else what the page shows of it
    tables: dict[str, Table] = field(default_factory=dict)
    # node -> (cpu, memory, dra) before and after; None where it did not exist
    utilization: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    depth: list[tuple[int, int]] = field(default_factory=list)  # (seq, depth) at forks/closes
    steps: list[tuple[int, int, int]] = field(default_factory=list)  # (bin, commits, reverts)
    step_bin: int = 1
    checkpoints: list[int] = field(default_factory=list)
    heat: list[tuple[str, list[float]]] = field(default_factory=list)  # row, cells 0/1/2
    heat_binned: bool = False
    estimates: dict[str, tuple[int, int]] = field(default_factory=dict)  # group -> nodes, pods
    chosen_claim: str | None = None
    aggregated: list[str] = field(default_factory=list)
    timeline: TimelineSection | None = None  # a run whose store holds a timeline
    wait_bins: list[tuple[float, float, int]] = field(default_factory=list)  # (low, high, pods)


def _q(db: str) -> str:
    return shlex.quote(db)


def _sql(db: str, text: str) -> str:
    """``drasnap query DB "SQL"`` as a shell takes it (SQL's 'quotes' inside "...")."""
    quoted = f'"{text}"' if not any(c in text for c in '"$`\\!') else shlex.quote(text)
    return f"drasnap query {_q(db)} {quoted}"


def _refusal(result: NodeResult | None) -> str:
    if result is None:
        return "fits"
    return (f"{result.plugin}: " if result.plugin else "") + result.message


def _reasons(failure: PodFailure) -> list[tuple[str, int]]:
    error = failure.fit_error
    if error.prefilter is not None:
        return [(_refusal(error.prefilter), error.num_all_nodes)]
    counts: Counter[str] = Counter(_refusal(r) for r in error.nodes.values())
    missing = error.num_all_nodes - len(error.nodes)
    if error.absent is not None and missing > 0:
        counts[_refusal(error.absent)] += missing
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def _when(ts: float | None) -> str:
    return "-" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


def _usage(cs: ClusterSnapshot, node: str) -> tuple[float, float, float, str] | None:
    """cpu, memory, DRA (its most used pool or counter, named last), or None where upstream
    cannot compute it."""
    try:
        u = node_utilization(cs, node)
    except UtilizationError:
        return None
    return (u.cpu, u.memory, u.dra, u.resource if u.dra else "")


def gather(db: str, name: str, *, claim: str | None = None) -> RunReport:
    """Read run ``name`` of ``db`` (its last checkpoint) into a :class:`RunReport`.

    Raises:
        ScenarioError: the store holds no simulation run.
        store errors: as ``Store.open`` and ``Journal.open``.
    """
    from drasnap.snapshot.errors import ScenarioError

    info = find_run(db, name)
    if info is None or info.scenario is None:
        raise ScenarioError(f"store {name!r} of {db} holds no simulation run (see drasnap runs)")
    progress = ""
    if info.status in (RunStatus.UNFINISHED, RunStatus.EMPTY):
        steps = f"step {info.step} of {info.steps}" if info.steps else f"step {info.step}"
        progress = (
            f"This run is not finished ({steps}): the page shows its last checkpoint, "
            f"{_when(info.checkpointed)}. A process may still be writing it; run drasnap "
            "report again to see later steps."
        )
    results = dict(info.results or {})
    summary = [
        ("scenario", info.scenario),
        ("run", name),
        ("status", info.status),
        ("settings", info.settings_text() or "(defaults)"),
        ("result", info.result_text() or "-"),
        ("state digest", info.state_digest),
        ("started", _when(info.started)),
        ("last checkpoint", _when(info.checkpointed)),
        ("step", f"{info.step} of {info.steps}" if info.steps else str(info.step)),
    ]
    for key, value in (info.counters or {}).items():
        summary.append((key, str(value)))
    if info.error:
        summary.append(("error", info.error))
    report = RunReport(db, name, info, time.time(), summary, [], progress)
    with Store.open(db, name=name, readonly=True) as store:
        cs = ClusterSnapshot(store, features=(info.settings or {}).get("feature_gates"))
        _decisions(report, store, results)
        _timeline(report, store)
        _pending(report, store)
        _devices(report, cs, store)
        after = {n: _usage(cs, n) for n in cs.node_names()}
        # The claim shown by default: of the first claims by name, the one with most events.
        candidates = [claim] if claim is not None else sorted(store.keys(CLAIM_KIND))
        plan = store.get(SIM_KIND, PLAN_KEY) or {}
    with Journal.open(db, name=name) as journal:
        if claim is not None and not journal.key_writes(CLAIM_KIND, [claim]):
            # (An empty history would read as a claim never allocated: say it is not there.)
            raise ScenarioError(
                f"run {name!r} in {db} never held a claim {claim!r} (give it as "
                "namespace/name; drasnap history lists the claims)"
            )
        _shape(report, journal)
        before = _before(report, db, journal, len(plan.get("candidates") or ()))
        _claim_history(report, journal, candidates[: LIMITS["claims"]])
    if info.scenario in ("scale-down", "autoscale"):
        _nodes(report, before, after)
    return report


def _decisions(report: RunReport, store: Store, results: dict[str, Any]) -> None:
    db, name, scenario = report.db, report.name, report.info.scenario
    auto = decisions_so_far(store) if scenario == "autoscale" else None
    if auto is not None:
        report.warnings = list(auto.get("warnings") or [])
        chosen = auto.get("node_group")
        expander = (report.info.settings or {}).get("expander") or "least-waste"
        rows = []
        for group, est in sorted(auto["estimates"].items()):
            report.estimates[group] = (est["nodes"], est["pods"])
            added = auto["added"].get(group, 0)
            why = (
                f"chosen by the expander ({expander})"
                if group == chosen
                else f"places pods, but the expander ({expander}) chose {chosen}"
            )
            if est["pods"] == 0:
                why = "its new nodes take none of the pending pods"
            rows.append([group, est["nodes"], est["pods"], added, why])
        report.tables["groups"] = Table(
            "groups",
            "Node groups: estimates and the expander's choice",
            ["node group", "nodes needed", "pods placed", "nodes added", "why"],
            rows,
            _sql(
                db,
                f"SELECT key, value FROM current_objects WHERE store = '{name}' "
                "AND kind = 'AutoscaleDecision' AND key LIKE 'estimate/%'",
            ),
            note=f"Expander: {expander}. Chosen group: {chosen or 'none'}. New nodes: "
            + (", ".join(auto["new_nodes"][:20]) or "none")
            + (f" and {len(auto['new_nodes']) - 20} more" if len(auto["new_nodes"]) > 20 else ""),
        )
    elif scenario == "scale-up":
        chosen = results.get("node_group")
        rows = []
        for group, nodes in sorted((results.get("estimates") or {}).items()):
            report.estimates[group] = (nodes, 0)
            if nodes == -1:
                why = "its nodes fit none of the pending pods"
            elif group == chosen:
                why = "fewest nodes: applied"
            else:
                why = "needs more nodes than the chosen group"
            rows.append(
                [group, nodes, results.get("nodes_added", 0) if group == chosen else 0, why]
            )
        report.tables["groups"] = Table(
            "groups",
            "Node groups: estimates and the choice",
            ["node group", "nodes needed", "nodes added", "why"],
            rows,
            f"drasnap runs {_q(db)} --json",
            note="The group needing the fewest nodes is applied. "
            f"Chosen group: {chosen or 'none'}.",
        )


def _timeline(report: RunReport, store: Store) -> None:
    """A timeline's tables: per group its node-hours and cost, the waits, the loops."""
    section = gather_timeline(store)
    if section is None:
        return
    report.timeline = section
    db, name = report.db, report.name
    result = section.totals
    end = round(section.end * 1000)
    report.warnings += [n for n in section.notes if n not in report.warnings]
    cost = result.get("cluster_cost")
    report.summary.append(
        (
            "cluster cost",
            "no group has a cost (cost: per node-hour in the node-groups file)"
            if cost is None
            else f"{cost:g} ({', '.join(sorted(section.costs))} priced)",
        )
    )
    rows = []
    for group in section.groups:
        hours = result["node_hours"].get(group, 0.0)
        price = section.costs.get(group)
        rows.append(
            [
                group,
                section.peak.get(group, 0),
                result["nodes_final"].get(group, 0),
                f"{hours:.3f}",
                f"{result['ready_node_hours'].get(group, 0.0):.3f}",
                "-" if price is None else f"{price:g}",
                "-" if price is None else f"{hours * price:.2f}",
            ]
        )
    report.tables["timeline-groups"] = Table(
        "timeline-groups",
        f"Node groups over the run ({section.end:g}s of simulated time)",
        [
            "node group",
            "most nodes",
            "nodes at the end",
            "node-hours",
            "ready node-hours",
            "cost per node-hour",
            "cost",
        ],
        rows,
        # (SQLite's JSON functions: the node records, up to the time the run reached)
        _sql(
            db,
            "SELECT json_extract(value, '$.group') AS node_group, count(*) AS nodes, "
            f"sum((min(COALESCE(json_extract(value, '$.deleted'), {end}), {end}) - "
            "json_extract(value, '$.requested')) / 3600000.0) AS node_hours FROM current_objects "
            f"WHERE store = '{name}' AND kind = 'TimelineNode' GROUP BY 1",
        ),
        note="Node-hours run from the scale-up to the deletion (the cloud bills booting "
        "instances); ready node-hours from registration.",
    )
    waits = result["pod_wait_s"]
    never = result["never_scheduled"]
    report.tables["waits"] = Table(
        "waits",
        "Pod waits: from arrival to binding",
        ["pods bound", "p50 (s)", "p90 (s)", "p99 (s)", "max (s)", "never scheduled", "lost"],
        [
            [
                result["pods_bound"],
                *(
                    "-" if waits[k] is None else f"{waits[k]:g}"
                    for k in ("p50", "p90", "p99", "max")
                ),
                never,
                result["lost"],
            ]
        ],
        _sql(
            db,
            f"SELECT pod, arrived, bound, wait, node, fate, reason FROM pod_waits "
            f"WHERE store = '{name}' ORDER BY wait DESC",
        ),
        note="Percentiles by nearest rank over the bound pods; a pod pending at the start "
        "waits from 0. Never scheduled: pending at the end.",
    )
    loop_rows = [
        [
            f"{int(loop['t']) / 1000:g}",
            ", ".join(f"{g} +{n}" for g, n in sorted((loop.get("scaled_up") or {}).items())) or "-",
            ", ".join(loop.get("deleted") or ()) or "-",
            ", ".join(loop.get("timed_out") or ()) or "-",
            loop.get("pending"),
            *(sum(int(c.get(s, 0)) for c in (loop.get("groups") or {}).values()) for s in STATES),
        ]
        for loop in section.loops
    ]
    report.tables["loops"] = Table(
        "loops",
        "Loops that decided something",
        ["t (s)", "scaled up", "deletion started", "timed out", "pending", *STATES],
        loop_rows,
        _sql(
            db,
            "SELECT t, scaled_up, deleted, timed_out, pending, nodes_ready, "
            f"nodes_provisioning, nodes_deleting FROM timeline WHERE store = '{name}' ORDER BY t",
        ),
    ).cut(LIMITS["rows"])
    if section.binned > 1:
        report.aggregated.append(
            f"nodes and pending pods over time: {section.binned} instants per point "
            "(the most of each)"
        )
    report.wait_bins = histogram(section.waits)


def _pending(report: RunReport, store: Store) -> None:
    rows = []
    reason_count: Counter[str] = Counter()
    for key, value in sorted(store.items(POD_FAILURE_KIND).items()):
        failure = PodFailure.from_json(key, value)
        reasons = _reasons(failure)
        main = reasons[0][0] if reasons else ""
        reason_count[main] += 1
        groups = "; ".join(f"{g}: {_refusal(r)}" for g, r in sorted(failure.node_groups.items()))
        rows.append(
            [
                key,
                key.partition("/")[0],
                failure.message,
                "; ".join(f"{n} node(s): {r}" for r, n in reasons),
                groups or "-",
                main,
            ]
        )
    table = Table(
        "pending",
        "Pending pods and the scheduler's message",
        [
            "pod",
            "namespace",
            "message",
            "reasons (node count)",
            "a new node of each group",
            "first reason",
        ],
        rows,
        _sql(
            report.db,
            f"SELECT pod, pod_namespace, message FROM pod_failures WHERE store = '{report.name}'",
        ),
        note="drasnap explain DB --name RUN --pod NS/NAME says more for one pod.",
        filters={"first reason": 5, "namespace": 1},
    )
    if report.timeline is not None:
        # (A timeline keeps its pods' waits in PodLife, not PodFailure: say where they are.)
        left = report.timeline.totals["never_scheduled"]
        table.note = (
            f"A timeline records its pods in pod_waits: {left} pod(s) pending at the end "
            f"(SELECT pod, reason FROM pod_waits WHERE store = '{report.name}' AND fate = "
            f"'pending'). {table.note}"
        )
    if len(rows) > LIMITS["rows"]:
        counts = ", ".join(f"{n} x {r}" for r, n in reason_count.most_common(5))
        report.aggregated.append(f"pending pods: {len(rows)}, by first reason: {counts}")
    report.tables["pending"] = table.cut(LIMITS["rows"])


def _devices(report: RunReport, cs: ClusterSnapshot, store: Store) -> None:
    """Each node's devices: 0 free, 1 allocated, 2 shared (allocated to several claims)."""
    users: Counter[tuple[str, str, str]] = Counter()
    claims = store.items(CLAIM_KIND)
    for summary in summarize_claims(claims):
        for d in {(d.driver, d.pool, d.device) for d in summary.devices}:
            users[d] += 1
    rows: list[tuple[str, list[float]]] = []
    totals = Counter[str]()
    for node, slices in sorted(store.items(SLICE_KIND).items()):
        if not isinstance(slices, list):
            continue
        cells: list[float] = []
        for s in slices:
            spec = s.get("spec") or {}
            pool = (spec.get("pool") or {}).get("name", "")
            driver = spec.get("driver", "")
            for device in spec.get("devices") or []:
                n = users[(driver, pool, device.get("name", ""))]
                cells.append(0.0 if n == 0 else 1.0 if n == 1 else 2.0)
        totals["devices"] += len(cells)
        totals["allocated"] += sum(1 for c in cells if c >= 1)
        totals["shared"] += sum(1 for c in cells if c == 2)
        rows.append((node, cells))
    if len(rows) > LIMITS["nodes"]:
        per = -(-len(rows) // LIMITS["nodes"])
        binned = []
        for i in range(0, len(rows), per):
            chunk = rows[i : i + per]
            width = max(len(c) for _, c in chunk)
            cells = [
                sum(min(c[j], 1.0) if j < len(c) else 0.0 for _, c in chunk) / len(chunk)
                for j in range(width)
            ]
            binned.append((f"{chunk[0][0]} … ({len(chunk)})", cells))
        report.aggregated.append(
            f"device heat map: {len(rows)} nodes in {len(binned)} rows of {per} nodes each "
            "(each cell: the share of those nodes whose device is allocated)"
        )
        rows, report.heat_binned = binned, True
    report.heat = rows
    report.summary.append(
        (
            "devices",
            f"{totals['devices']} on nodes, {totals['allocated']} allocated, "
            f"{totals['shared']} shared by several claims",
        )
    )


def _shape(report: RunReport, journal: Journal) -> None:
    layers = sorted(journal.layers().values(), key=lambda layer: layer.opened_seq)
    events: list[tuple[int, int]] = []
    for layer in layers:
        events.append((layer.opened_seq, +1))
        if layer.closed_seq is not None:
            events.append((layer.closed_seq, -1))
    events.sort()
    depth, series = 0, [(0, 0)]
    for seq, change in events:
        depth += change
        series.append((seq, depth))
    if len(series) > LIMITS["points"]:
        per = -(-len(series) // LIMITS["points"])
        series = [max(series[i : i + per], key=lambda p: p[1]) for i in range(0, len(series), per)]
        report.aggregated.append(
            f"fork depth: {len(events)} forks and closes drawn as {len(series)} points "
            f"(the deepest of each {per})"
        )
    report.depth = series
    top = [layer for layer in layers if layer.depth == 1]
    per = max(1, -(-len(top) // LIMITS["nodes"]))
    report.step_bin = per
    for i in range(0, len(top), per):
        chunk = top[i : i + per]
        commits = sum(1 for layer in chunk if layer.fate is Fate.COMMITTED)
        reverts = sum(1 for layer in chunk if layer.fate is Fate.REVERTED)
        report.steps.append((i // per, commits, reverts))
    if per > 1:
        report.aggregated.append(f"commits and reverts: {len(top)} steps in bins of {per}")
    report.tables["layers"] = Table(
        "layers",
        "Top-level forks (one per step) and their fate",
        ["layer", "label", "opened at seq", "closed at seq", "fate"],
        [[t.layer, t.label or "", t.opened_seq, t.closed_seq, t.fate.value] for t in top],
        _sql(
            report.db,
            f"SELECT * FROM layer_history WHERE store = '{report.name}' AND depth = 1",
        ),
    ).cut(LIMITS["rows"])
    info = journal.info
    report.checkpoints = [info.checkpoint_seq] if info.checkpoint_seq else []


def _before(report: RunReport, db: str, journal: Journal, nodes: int) -> dict[str, Any]:
    """Each node's utilization before the run's first fork (the journal replayed to it), for
    at most ``LIMITS["before"]`` ``nodes`` (the run's candidates)."""
    if report.info.scenario not in ("scale-down", "autoscale"):
        return {}
    if nodes > LIMITS["before"]:
        report.aggregated.append(
            f"utilization before the run: not rebuilt for {nodes} nodes (over "
            f"{LIMITS['before']}, the journal would be replayed); only after"
        )
        return {}
    layers = journal.layers()
    if not layers:
        return {}
    first = min(layer.opened_seq for layer in layers.values()) - 1
    if first < 1 or not journal.info.complete:
        return {}
    mem = MemoryStore()
    with open_state(db, name=report.name, at=first) as state:
        for kind in state.kinds():
            for key, value in state.items(kind).items():
                mem.put(kind, key, value)
    cs = ClusterSnapshot(mem, features=(report.info.settings or {}).get("feature_gates"))
    return {n: _usage(cs, n) for n in cs.node_names()}


def _nodes(report: RunReport, before: dict[str, Any], after: dict[str, Any]) -> None:
    db, name = report.db, report.name
    kept_reason: dict[str, str] = {}
    auto = None
    if report.info.scenario == "autoscale":
        with Store.open(db, name=name, readonly=True, cache_size=1) as store:
            auto = decisions_so_far(store)
        assert auto is not None
        kept_reason = dict(auto["kept"])
        removed = set(auto["removed"])
        decided = removed | set(kept_reason)
    else:
        removed = set(before) - set(after) if before else set()
        decided = set(before) if before else set(after)
    names = sorted(set(before) | set(after))
    rows = []
    for node in names:
        if node in removed:
            verdict, reason = "removed", "its pods all moved to other nodes"
        elif node in kept_reason:
            verdict, reason = "kept", kept_reason[node]
        elif node in decided or report.info.scenario == "scale-down":
            verdict, reason = "kept", "a pod of it fits no other node (the fork was reverted)"
        else:
            verdict, reason = "new", "added by the scale-up"
        rows.append([node, verdict, reason, _pct(before.get(node)), _pct(after.get(node))])
    if auto is not None:
        source = _sql(
            db,
            f"SELECT key, value FROM current_objects WHERE store = '{name}' "
            "AND kind = 'AutoscaleDecision' AND key LIKE 'node/%'",
        )
    else:
        source = _sql(
            db,
            f"SELECT label, fate FROM layer_history WHERE store = '{name}' AND depth = 1 "
            "AND label LIKE 'remove node %'",
        )
    if not before:
        report.aggregated.append("nodes removed and kept: from the final state only")
    table = Table(
        "nodes",
        "Nodes removed and kept, with the reason and utilization (cpu / memory / DRA)",
        ["node", "verdict", "reason", "before", "after"],
        rows,
        source,
        filters={"verdict": 1},
    )
    if len(rows) > LIMITS["rows"]:
        counts = Counter(r[1] for r in rows)
        report.aggregated.append(
            "nodes: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        )
    report.tables["nodes"] = table.cut(LIMITS["rows"])
    report.utilization = {n: (before.get(n), after.get(n)) for n in names}


def _pct(u: tuple[float, float, float, str] | None) -> str:
    if u is None:
        return "-"
    text = " / ".join(f"{round(v * 100)}%" for v in u[:3])
    return f"{text} ({u[3]})" if u[3] else text


def _claim_history(report: RunReport, journal: Journal, candidates: list[str]) -> None:
    best: tuple[int, str, list[Any]] | None = None
    for key in candidates:
        found = allocation_history(journal, claim=key)
        if best is None or len(found) > best[0]:
            best = (len(found), key, found)
    if best is None:
        return
    _, claim, events = best
    report.chosen_claim = claim
    rows = [
        [
            e.seq,
            e.event,
            ", ".join(d.id for d in e.devices),
            e.node or "",
            f"{e.label} [{e.depth}]" if e.layer else "(base)",
            e.fate.value if isinstance(e.fate, Fate) else str(e.fate),
        ]
        for e in events
    ]
    report.tables["claim"] = Table(
        "claim",
        f"Allocation history of claim {claim}, with the fate of each branch",
        ["seq", "event", "devices", "node", "layer [depth]", "fate"],
        rows,
        f"drasnap history {_q(report.db)} --name {shlex.quote(report.name)} "
        f"--claim {shlex.quote(claim)}",
        note="drasnap report --claim NS/NAME chooses another claim.",
    ).cut(LIMITS["rows"])
