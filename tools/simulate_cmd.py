"""``drasnap simulate``: run a scale-up, scale-down or autoscale scenario into a store,
crash-safe.

Each run is a named store of the database (:mod:`tools.runs`). Everything that can be checked
is checked before the database is opened (settings and their limits, manifests, how they fit
together), so a mistake in the input never leaves anything behind. Signals: the first SIGINT
(Ctrl-C) or SIGTERM lets the run finish its step, checkpoint and stop (exit 130 or 143) with the
command that continues it; a second one stops at once, keeping only the last checkpoint.
"""

from __future__ import annotations

import contextlib
import json as jsonlib
import math
import shlex
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import click

from snapshot import FeatureGateError, parse_feature_gates, resolve_feature_gates
from snapshot.cluster import ClusterSnapshot
from store import Store, StoreLockedError
from tools.errors import RunInterrupted, ScenarioError
from tools.options import DEFAULT_DB, database, json_option
from tools.progress import Progress
from tools.runs import find_run, fresh_name, newest_unfinished
from tools.scenarios.autoscale_config import files_digest
from tools.scenarios.base import DEVICES, LIMITS, Settings
from tools.scenarios.inputs import Cluster, source_digest
from tools.scenarios.runner import prepare
from tools.scenarios.runner import simulate as run_simulation

_NAME_ATTEMPTS = 50  # fresh names tried when other processes take them at the same moment
MAX_CHECKPOINT_EVERY = 86_400.0


class _Abort(BaseException):
    """A second signal: stop at once (only the last checkpoint is kept)."""

    def __init__(self, signal_number: int) -> None:
        super().__init__(signal_number)
        self.signal_number = signal_number


@contextlib.contextmanager
def _stop_on_signals(hint: Callable[[], str]) -> Iterator[Callable[[], int | None]]:
    """SIGINT and SIGTERM ask the run to stop at its next step boundary; a second one aborts.

    Yields the function the run asks at each step boundary.
    """
    requested: list[int] = []

    def handler(number: int, _frame: FrameType | None) -> None:
        if requested:
            raise _Abort(number)
        requested.append(number)
        click.echo(
            f"\n{signal.Signals(number).name}: stopping after the current step "
            "(send it again to stop at once)",
            err=True,
        )

    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {number: signal.getsignal(number) for number in signals}
    for number in signals:
        signal.signal(number, handler)
    try:
        yield lambda: requested[0] if requested else None
    finally:
        for number, old in previous.items():
            signal.signal(number, old)


class _NodeGroups(click.ParamType[int | Path, Any]):
    """A count of node groups (scale-up), or a node-group file (autoscale)."""

    name = "N|FILE"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> int | Path:
        if isinstance(value, int | Path):
            return value
        text = str(value)
        if text.lstrip("-").isdigit():
            return int(text)
        path = Path(text)
        if not path.is_file():
            self.fail(f"{text!r} is neither a number of node groups nor a file", param, ctx)
        return path


def _feature_gates(value: str | None) -> dict[str, bool]:
    try:
        return resolve_feature_gates(parse_feature_gates(value or ""), enforce_locks=True)
    except FeatureGateError as exc:
        raise click.BadParameter(str(exc)) from exc


def _checkpoint_every(_ctx: click.Context, _param: click.Parameter, value: float) -> float:
    if not math.isfinite(value) or not 0 <= value <= MAX_CHECKPOINT_EVERY:
        raise click.BadParameter(
            f"seconds between 0 and {MAX_CHECKPOINT_EVERY:,.0f} (0: at every step), got {value}"
        )
    return value


_LIMITS_HELP = ", ".join(
    f"--{name.replace('_', '-')} {low:,}..{high:,}"
    for name, (low, high) in LIMITS.items()
    if name != "seed"
)


@click.command(epilog=f"Limits: {_LIMITS_HELP}.")
@click.argument("scenario", metavar="SCENARIO")
@database
@click.option(
    "--name",
    metavar="NAME",
    help="The run's name in the database [default: a new one, <scenario>-<n>]; with --resume, "
    "the run to start, continue or report [default: the newest unfinished run].",
)
@click.option("--seed", default=0, show_default=True, help="Seed: the same seed, the same run.")
@click.option("--pods", default=4000, show_default=True, help="scale-up: pending pods.")
@click.option(
    "--gpus-per-node",
    type=int,
    default=None,
    help="GPUs per node: scale-up's largest node group [8], scale-down's nodes [10].",
)
@click.option(
    "--node-groups",
    type=_NodeGroups(),
    default=1,
    show_default=True,
    help="scale-up: node groups; each further one has half the GPUs per node. autoscale: a "
    "node-group FILE (YAML: name, minSize, maxSize, template node and slices) instead of the "
    "drasnap.io/node-group labels.",
)
@click.option(
    "--expander",
    default="least-waste",
    show_default=True,
    help="autoscale: how a node group is chosen: least-waste, most-pods, priority, random "
    "(the run's seed), or a comma-separated chain, as the cluster-autoscaler's --expander.",
)
@click.option(
    "--expander-priorities",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="autoscale, --expander priority: the priority expander's config (its ConfigMap, or "
    "the priorities YAML: priority to regular expressions of group names).",
)
@click.option(
    "--scale-down-utilization-threshold",
    type=float,
    default=0.5,
    show_default=True,
    help="autoscale: nodes whose utilization is under this are considered for removal.",
)
@click.option(
    "--devices",
    type=click.Choice(DEVICES),
    default="flat",
    show_default=True,
    help="scale-up: what template nodes offer: one device per GPU (flat), or each GPU whole "
    "and as 4 slices through shared counters, pods asking for a full GPU else two slices "
    "(partitionable).",
)
@click.option("--nodes", default=800, show_default=True, help="scale-down: nodes.")
@click.option("--pods-per-node", default=4, show_default=True, help="scale-down: pods per node.")
@click.option(
    "--from",
    "source",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Start from manifests in this folder (kubectl dumps) instead of generated objects.",
)
@click.option(
    "--feature-gates",
    metavar="GATE=BOOL,...",
    callback=lambda _ctx, _param, value: _feature_gates(value),
    help="Kubernetes feature gates, as kube-scheduler takes them (e.g. DRAPrioritizedList=false);"
    " unset gates take Kubernetes 1.36's defaults. A run records its gates.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="With --from: refuse manifests of kinds the simulation does not use (Namespace, "
    "Service, ...) instead of skipping each with a note.",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue the run (--name, else the newest unfinished one) from its last checkpoint; "
    "starts it if nothing of it was saved, prints its result if it has finished.",
)
@click.option(
    "--checkpoint-every",
    type=float,
    default=2.0,
    show_default=True,
    callback=_checkpoint_every,
    help="Seconds of work between checkpoints (taken only between steps; 0: every step).",
)
@json_option
@click.pass_context
def simulate(
    ctx: click.Context,
    scenario: str,
    db: str | None,
    name: str | None,
    seed: int,
    pods: int,
    gpus_per_node: int | None,
    node_groups: int | Path,
    expander: str,
    expander_priorities: Path | None,
    scale_down_utilization_threshold: float,
    devices: str,
    nodes: int,
    pods_per_node: int,
    source: Path | None,
    feature_gates: dict[str, bool],
    strict: bool,
    resume: bool,
    checkpoint_every: float,
    as_json: bool,
) -> None:
    """Simulate SCENARIO (scale-up, scale-down or autoscale) into a database, journal on.

    Sizes default to upstream's DRA RunOnce benchmarks: scale-up places 4,000 pending one-GPU
    pods on 8-GPU template nodes (500 nodes); scale-down tries to remove each of 800 nodes with
    10 GPUs and 4 pods (480 removed).

    Each run is stored under its own name, so the same command can be run again: it starts a
    new run. If the process dies, run it again with --resume (and --name): it continues from
    the last checkpoint and ends with the same result and state digest. `drasnap runs` lists
    the runs of a database; `drasnap drop` removes one.

    The result: nodes_added and node_group (scale-up: the chosen group and how many of its
    nodes it needs), estimates (each group's estimate; -1: the group's nodes fit none of the
    pending pods), nodes_removed (scale-down), pods_placed (pods put on a node: the pending pods
    placed on new nodes, or the pods moved off removed nodes), forks/commits/reverts, seconds
    (spent by this command), state_digest (equal states, equal digests).

    autoscale (needs --from) does what one cluster-autoscaler loop does on that cluster:
    pending pods go to existing nodes first, the binpacking estimator sizes each node group,
    the expander chooses one, and underutilized nodes whose pods fit elsewhere are removed.
    Its result: placed_on_existing, added (group: nodes), removed, kept (node: reason),
    unschedulable (pod: reason), warnings.

    Example:

        drasnap simulate scale-up sim.db --pods 400 --json
    """
    groups_file = node_groups if isinstance(node_groups, Path) else None
    if groups_file is not None and scenario != "autoscale":
        raise ScenarioError(f"--node-groups takes a number for {scenario}, got a file")
    if scenario == "autoscale" and isinstance(node_groups, int) and node_groups != 1:
        raise ScenarioError("--node-groups takes a node-group FILE for autoscale, not a number")
    digest = source_digest(source) if source else None
    if scenario == "autoscale" and digest is not None:
        digest = files_digest(
            digest,
            str(groups_file) if groups_file else None,
            str(expander_priorities) if expander_priorities else None,
        )
    extra: dict[str, Any] = {}
    if scenario == "autoscale":
        extra = {
            "expander": expander,
            "expander_priorities": str(expander_priorities.resolve())
            if expander_priorities
            else None,
            "node_groups_file": str(groups_file.resolve()) if groups_file else None,
            "scale_down_utilization_threshold": scale_down_utilization_threshold,
        }
    elif (expander, expander_priorities, scale_down_utilization_threshold) != (
        "least-waste",
        None,
        0.5,
    ):
        raise ScenarioError(
            "--expander, --expander-priorities and --scale-down-utilization-threshold apply "
            "to autoscale only"
        )
    settings = Settings(
        scenario=scenario,
        seed=seed,
        pods=pods,
        gpus_per_node=gpus_per_node,
        node_groups=node_groups if isinstance(node_groups, int) else 1,
        devices=devices,
        nodes=nodes,
        pods_per_node=pods_per_node,
        source=str(source.resolve()) if source else None,
        source_digest=digest,
        feature_gates=feature_gates,
        **extra,
    ).resolved()
    settings.check()
    given_db = db is not None
    db = db if db is not None else DEFAULT_DB
    built: list[Cluster] = []

    def start() -> Cluster:
        if not built:
            built.append(prepare(settings, strict=strict))  # every input error before the database
            for note in built[0].notes:
                click.echo(f"note: {note}", err=True)
        return built[0]

    fresh = name is None and not resume
    if name is None and resume:
        unfinished = newest_unfinished(db)
        if unfinished is None:
            raise ScenarioError(
                f"nothing to resume: {db} holds no unfinished run (give --name to start or "
                "continue a named run; drasnap runs lists them)"
            )
        name = unfinished.name
        click.echo(f"Resuming run {name!r}, the newest unfinished one", err=True)
    if fresh:
        start()
        name = fresh_name(db, scenario)
    else:
        assert name is not None
        existing = find_run(db, name)
        if existing is None or existing.status == "empty":
            start()
    if not given_db:  # (said once the input is known to be good: an error stays one line)
        click.echo(f"Using {Path(db).resolve()} (give DB to choose)", err=True)
    store = _open_run(db, name, settings, checkpoint_every, fresh=fresh)
    name = store_name = store.name
    where = f"run {store_name!r} in {db}"
    progress = Progress(store_name)
    cluster = ClusterSnapshot(store, features=settings.feature_gates)
    saved = False
    try:
        with _stop_on_signals(lambda: _resume_command(ctx, db, store_name)) as stop:
            outcome = run_simulation(
                cluster, settings, start, resume=resume, where=where, report=progress, stop=stop
            )
        saved = True
    except RunInterrupted as interrupted:
        saved = True
        progress.close()
        click.echo(
            f"Stopped after step {interrupted.step} of {interrupted.total}, saved. Continue with:"
            f"\n  {_resume_command(ctx, db, store_name)}",
            err=True,
        )
        ctx.exit(128 + interrupted.signal_number)
    except _Abort as abort:
        progress.close()
        click.echo(
            "Stopped at once; the run continues from its last checkpoint with:\n"
            f"  {_resume_command(ctx, db, store_name)}",
            err=True,
        )
        ctx.exit(128 + abort.signal_number)
    finally:
        progress.close()
        # Midway through a step the state is between two safe points: keep the last one.
        store.close(checkpoint=saved)
    data = outcome.as_json()
    data["name"] = store_name
    if not as_json and scenario == "autoscale":
        _autoscale_summary(data)
    _report(data, as_json)
    _hints(db, store_name)


def _open_run(db: str, name: str, settings: Settings, every: float, *, fresh: bool) -> Store:
    """Open the run's store for writing; a fresh name taken meanwhile moves on to the next."""
    for _ in range(_NAME_ATTEMPTS):
        try:
            # The journal and checkpoints are written by a process of their own on a SQLite
            # file (store.writer): the simulation does not wait for them.
            store = Store.open(
                db,
                name=name,
                auto_checkpoint=False,
                checkpoint_interval=every,
                write_behind="auto",
            )
        except StoreLockedError:
            if not fresh:
                raise
        else:
            if not fresh or store.count("Simulation") == 0:
                return store
            store.close()
        name = fresh_name(db, settings.scenario)
    raise ScenarioError(f"could not find a free run name in {db}; give --name")


def _resume_command(ctx: click.Context, db: str, name: str) -> str:
    """The command line that continues this run."""
    words = ["drasnap", "simulate", ctx.params["scenario"], db, "--name", name]
    for param in ctx.command.params:
        if param.name in ("scenario", "db", "db_option", "name", "resume", "as_json", "strict"):
            continue
        value = ctx.params.get(param.name or "")
        if param.name == "feature_gates":
            defaults = resolve_feature_gates()
            changed = [
                f"{k}={str(v).lower()}" for k, v in (value or {}).items() if defaults[k] != v
            ]
            if changed:
                words += [param.opts[0], ",".join(changed)]
            continue
        if value is None or value == param.default or isinstance(param, click.Argument):
            continue
        words += [param.opts[0], str(value)]
    words.append("--resume")
    return shlex.join(words)


def _report(data: dict[str, Any], as_json: bool) -> None:
    # What the filters did not check, one line each on stderr (the JSON keeps them too).
    for warning in data.get("warnings") or ():
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        click.echo(jsonlib.dumps(data))
        return
    unplaced = data.get("unschedulable") or {}
    if data.get("scenario") != "autoscale":  # (autoscale's summary said them already)
        for pod, reason in unplaced.items():
            click.echo(f"unschedulable {pod}: {reason}")
    # Counts in the table: the pods and warnings are each a line above (and in --json).
    data = {**data, "warnings": len(data.get("warnings") or ()), "unschedulable": len(unplaced)}
    width = max(len(k) for k in data)
    for key, value in data.items():
        shown = jsonlib.dumps(value) if isinstance(value, dict | list) else value
        click.echo(f"{key:<{width}}  {shown}")


def _autoscale_summary(data: dict[str, Any]) -> None:
    """What one cluster-autoscaler loop would do, per node group, in words."""
    for group, count in data["added"].items():
        click.echo(f"node group {group}: add {count} node(s)")
    for group, nodes in data["removed_by_group"].items():
        click.echo(f"node group {group}: remove {len(nodes)} node(s): {', '.join(nodes)}")
    if not data["added"] and not data["removed"]:
        click.echo("no node to add or remove")
    for node, reason in data["kept"].items():
        click.echo(f"kept {node}: {reason}")
    for pod, reason in data["unschedulable"].items():
        click.echo(f"unschedulable {pod}: {reason}")


def _hints(db: str, name: str) -> None:
    where = shlex.join([db, "--name", name])
    click.echo(
        f"Look at run {name!r}:\n"
        f"  drasnap inspect {where}\n"
        f"  drasnap history {where}\n"
        f"  drasnap replay {where} --verify\n"
        f"  drasnap runs {shlex.quote(db)}",
        err=True,
    )
