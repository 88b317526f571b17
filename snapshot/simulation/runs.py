"""Runs: the simulations a database holds, one named store each.

One database holds many runs. ``drasnap simulate`` without ``--name`` starts a new run under a
fresh name (``<scenario>-<n>``, one more than the highest ``n`` of that scenario), so the same
command can be run again and again; ``--resume`` without ``--name`` continues the newest
unfinished run. A run's own record (``Simulation/plan`` and ``Simulation/run``, see
``snapshot.simulation.record``) says what it is and how far it got; the ``stores`` row says when it
started and was last checkpointed. Reading them opens each store read-only with a one-entry
cache, so listing the runs of a database never loads a run's objects. A run's status is a
``RunStatus``, read from that record.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from drasnap.snapshot.errors import ScenarioError
from drasnap.snapshot.simulation.plan import PLAN_KEY, RUN_KEY, SIM_KIND, steps
from drasnap.snapshot.simulation.settings import settings_options
from drasnap.store import Store, StoreInfo, list_stores

__all__ = [
    "RunInfo",
    "RunStatus",
    "choose_store",
    "fresh_name",
    "list_runs",
    "newest_unfinished",
    "read_run",
]


class RunStatus(StrEnum):
    """How far a run got, as of its last checkpoint; equal to its lowercase name."""

    # its last step is done (its result is final)
    FINISHED = "finished"
    # started, not finished (crashed or interrupted): --resume continues it
    UNFINISHED = "unfinished"
    # it stopped on an error found while it ran (the error is recorded); it blocks no other
    # run: drop it, or leave it as a record
    FAILED = "failed"
    # created, but killed before its first checkpoint: --resume starts it
    EMPTY = "empty"
    # a store that holds something else than a simulation
    OTHER = "other"


@dataclass(frozen=True)
class RunInfo:
    """One run (named store) of a database, as of its last checkpoint."""

    name: str
    status: RunStatus
    started: float  # when the store was created (seconds since the epoch)
    checkpointed: float | None
    state_digest: str
    scenario: str | None = None
    settings: dict[str, Any] | None = None
    step: int = 0
    steps: int | None = None  # how many steps the run has, when the plan says
    results: dict[str, Any] | None = None
    counters: dict[str, int] | None = None
    error: str | None = None

    def settings_text(self) -> str:
        """The settings that differ from the defaults, as ``--option value`` words."""
        if self.settings is None:
            return ""
        words = shlex.join(settings_options(self.settings))
        point = self.settings.get("sweep")
        if point:  # a sweep's point: its variants say what the options do not
            variants = ", ".join(f"{a}={v}" for a, v in point["variants"].items())
            return f"sweep {point['sweep']} point {point['index']} ({variants}) {words}"
        return words

    def result_text(self) -> str:
        """The result so far in a few words (e.g. ``nodes_added 500``)."""
        if self.error is not None:
            return self.error
        results = self.results or {}
        shown = [
            f"{key} {results[key]}"
            for key in ("nodes_added", "node_group", "nodes_removed")
            if results.get(key) is not None
        ]
        if isinstance(results.get("added"), dict):  # autoscale
            added = ", ".join(f"{g} +{n}" for g, n in results["added"].items())
            shown.append(f"added {added or 'none'}")
            shown.append(f"removed {results.get('removed', 0)}")
            shown.append(f"unschedulable {results.get('unschedulable', 0)}")
        if "placed" in results:
            shown.append(f"pods_placed {results['placed']}")
        return ", ".join(shown)


def read_run(db: str, info: StoreInfo) -> RunInfo:
    """The run held by the store ``info`` describes."""
    with Store.open(db, name=info.name, readonly=True, cache_size=1) as store:
        plan: dict[str, Any] | None = store.get(SIM_KIND, PLAN_KEY)
        run: dict[str, Any] | None = store.get(SIM_KIND, RUN_KEY)
        empty = plan is None and not any(store.count(kind) for kind in store.kinds())
    if plan is None or run is None:
        return RunInfo(
            name=info.name,
            status=RunStatus.EMPTY if empty else RunStatus.OTHER,
            started=info.created_at,
            checkpointed=info.checkpointed_at,
            state_digest=info.state_digest,
        )
    settings = plan.get("settings") or {}
    if run.get("error") is not None:
        status = RunStatus.FAILED
    else:
        status = RunStatus.FINISHED if run.get("done") else RunStatus.UNFINISHED
    return RunInfo(
        name=info.name,
        status=status,
        started=info.created_at,
        checkpointed=info.checkpointed_at,
        state_digest=info.state_digest,
        scenario=settings.get("scenario"),
        settings=settings,
        step=int(run.get("step", 0)),
        steps=steps(plan),
        results=run.get("results"),
        counters=run.get("counters"),
        error=run.get("error"),
    )


def list_runs(db: str) -> list[RunInfo]:
    """Every run of ``db``, oldest first.

    Raises:
        store.NotADatabaseError: ``db`` does not exist or is not a drasnap database.
    """
    return [read_run(db, info) for info in list_stores(db)]


def find_run(db: str, name: str) -> RunInfo | None:
    """The run ``name`` of ``db``, or None when the database or the run does not exist."""
    for info in list_stores(db, missing_ok=True):
        if info.name == name:
            return read_run(db, info)
    return None


def fresh_name(db: str, scenario: str) -> str:
    """``<scenario>-<n>`` with ``n`` one more than the highest of that scenario in ``db``."""
    pattern = re.compile(rf"{re.escape(scenario)}-([0-9]+)")
    highest = 0
    for info in list_stores(db, missing_ok=True):
        match = pattern.fullmatch(info.name)
        if match:
            highest = max(highest, int(match.group(1)))
    return f"{scenario}-{highest + 1}"


def newest_unfinished(db: str) -> RunInfo | None:
    """The most recently started unfinished run of ``db`` (None: there is none)."""
    infos = list_stores(db, missing_ok=True)
    unfinished = [
        run for run in (read_run(db, i) for i in infos) if run.status == RunStatus.UNFINISHED
    ]
    return unfinished[-1] if unfinished else None


def choose_store(db: str, name: str | None) -> tuple[str, str | None]:
    """The store a read command reads: ``name``, or the database's newest run.

    Returns the name and, when it was chosen here, a note saying so (for stderr).

    Raises:
        ScenarioError: no name was given and the database holds no store.
        store.NotADatabaseError: the database does not exist or is not a drasnap database.
    """
    if name is not None:
        return name, None
    stores = list_stores(db)
    if not stores:
        raise ScenarioError(f"{db} holds no runs: run drasnap simulate first")
    newest = stores[-1].name
    if len(stores) == 1:
        return newest, None
    return newest, f"reading run {newest!r}, the newest of {len(stores)} (give --name to choose)"
