"""``drasnap simulate``: run a scale-up, scale-down, autoscale or timeline scenario into a store,
crash-safe.

Each run is a named store of the database, started, continued or reported by
:class:`snapshot.simulation.RunSession`, which checks everything that can be checked before the
database is opened (settings and their limits, manifests, how they fit together), so a mistake
in the input never leaves anything behind. Signals: the first SIGINT
(Ctrl-C) or SIGTERM lets the run finish its step, checkpoint and stop (exit 130 or 143) with the
command that continues it; a second one stops at once, keeping only the last checkpoint.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json as jsonlib
import math
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import click
from click.core import ParameterSource
from drasnap.snapshot import (
    FeatureGateError,
    RunInterrupted,
    ScenarioError,
    SnapshotError,
    parse_feature_gates,
    resolve_feature_gates,
)
from drasnap.snapshot.simulation import (
    ALIBABA,
    CA_FLAGS,
    DEVICES,
    EXPANDERS,
    LIMITS,
    NO_DRA_SIZES,
    ON_GIVEN_CLUSTER,
    RECORDED,
    SCORING,
    TIMELINE_CHOICES,
    TIMELINE_FLAGS,
    TIMELINE_LIMITS,
    UNMODELLED_CA_FLAGS,
    UNMODELLED_TIMELINE,
    Settings,
    refused_settings,
)
from drasnap.store import DatabaseError, StoreError
from drasnap.tools.errors import CommandError
from drasnap.tools.options import (
    DEFAULT_DB,
    database,
    json_option,
    name_option_with,
    new_name,
    seed_option,
)
from drasnap.tools.output import command_line, echo_json
from drasnap.tools.progress import Progress

DEFAULT_CHECKPOINT_EVERY = 2.0
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


class _Trace(click.ParamType[str, Any]):
    """A trace file (its absolute path), or ``gen:SPEC`` as given."""

    name = "FILE|gen:SPEC|alibaba-gpu-v2023:CSV"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if text.startswith(("gen:", RECORDED)):  # (recorded: as a resume command gives it)
            return text
        prefix = ALIBABA if text.startswith(ALIBABA) else ""
        path = Path(text[len(prefix) :])
        if not path.is_file():
            what = (
                f"{prefix}PODS.csv" if prefix else "a file, gen:SPEC or alibaba-gpu-v2023:PODS.csv"
            )
            self.fail(f"{text!r}: no such file (expected {what})", param, ctx)
        return prefix + str(path.resolve())


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


def _ca_flag_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """One option per cluster-autoscaler flag autoscale takes (CA_FLAGS: CA's names and
    defaults; a boolean is given as CA's are, ``--skip-nodes-with-system-pods=false``)."""
    for name, (default, what) in reversed(CA_FLAGS.items()):
        command = click.option(
            f"--{name.replace('_', '-')}",
            name,
            type=type(default),
            default=default,
            show_default=True,
            help=f"autoscale, the cluster-autoscaler's flag: {what}.",
        )(command)
    return command


def _timeline_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """One option per timeline flag (TIMELINE_FLAGS: the cluster-autoscaler's names and
    defaults, durations as Go writes them: 10s, 10m, 1h30m)."""
    for name, (default, what) in reversed(TIMELINE_FLAGS.items()):
        command = click.option(
            f"--{name.replace('_', '-')}",
            name,
            default=default,
            show_default=True,
            metavar="DURATION",
            help=f"timeline: {what}.",
        )(command)
    for name, (limit, what) in reversed(TIMELINE_LIMITS.items()):
        command = click.option(
            f"--{name.replace('_', '-')}",
            name,
            type=type(limit),
            default=limit,
            show_default=True,
            help=f"timeline, the cluster-autoscaler's flag: {what}.",
        )(command)
    return command


def _unmodelled_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The cluster-autoscaler flags drasnap does not model: accepted at CA's default (a
    command line copied from a deployment), refused by name otherwise."""

    def refuse(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
        if value is None or param.name is None:
            return
        default, why = {**UNMODELLED_CA_FLAGS, **UNMODELLED_TIMELINE}[param.name]
        if _same_flag_value(value, default):
            return
        raise click.UsageError(
            f"{param.opts[0]}={value}: not modelled by drasnap ({why}); leave it out or give "
            f"its default, {default}"
        )

    for name in [*UNMODELLED_CA_FLAGS, *UNMODELLED_TIMELINE]:
        command = click.option(
            f"--{name.replace('_', '-')}",
            name,
            is_flag=False,
            flag_value="true",
            default=None,
            hidden=True,
            expose_value=False,
            callback=refuse,
        )(command)
    return command


def _same_flag_value(value: str, default: str) -> bool:
    """Whether a flag's value is its default: the same word, number or duration."""
    if value.strip().lower() == default:
        return True
    from drasnap.snapshot.simulation import parse_duration

    try:
        return parse_duration(value, "") == parse_duration(default, "")
    except ScenarioError:  # not a duration: another value
        return False


@click.command(name="simulate", epilog=f"Limits: {_LIMITS_HELP}.")
@click.argument("scenario", metavar="SCENARIO")
@database
@name_option_with(
    "The run's name in the database [default: a new one, <scenario>-<n>]; with --resume, "
    "the run to start, continue or report [default: the newest unfinished run].",
    callback=new_name,
)
@seed_option("Seed: the same seed, the same run.")
@click.option(
    "--pods",
    type=int,
    default=None,
    help=f"scale-up: pending pods [4,000; --no-dra {NO_DRA_SIZES['scale-up']['pods']:,}].",
)
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
    help=f"autoscale: how a node group is chosen: {', '.join(EXPANDERS)}, or a comma-separated "
    "chain, as the cluster-autoscaler's --expander (random draws from the run's seed).",
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
@click.option(
    "--nodes",
    type=int,
    default=None,
    help=f"scale-down: nodes [800; --no-dra {NO_DRA_SIZES['scale-down']['nodes']:,}].",
)
@click.option(
    "--pods-per-node",
    type=int,
    default=None,
    help=f"scale-down: pods per node [4; --no-dra {NO_DRA_SIZES['scale-down']['pods_per_node']}].",
)
@click.option(
    "--dra/--no-dra",
    default=True,
    help="scale-up, scale-down: --no-dra generates upstream's RunOnce benchmarks without DRA "
    "(BenchmarkRunOnceScaleUp: 50,000 pods of a fiftieth of a node's CPU and memory, 1,000 "
    "nodes; BenchmarkRunOnceScaleDown: 2,000 nodes of 40 pods of a hundredth, 1,200 removed).",
)
@click.option(
    "--from",
    "source",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Start from manifests in this folder (kubectl dumps) instead of generated objects.",
)
@click.option(
    "--from-db",
    metavar="DB",
    help="Start from a recording's state (drasnap record) in this database instead of --from.",
)
@click.option(
    "--from-name",
    default="record",
    show_default=True,
    metavar="NAME",
    help="With --from-db: the recording (named store) to start from.",
)
@click.option(
    "--from-at",
    type=click.IntRange(min=1),
    metavar="SEQ",
    help="With --from-db: the recording's state as of this seq [default: its last].",
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
    default=DEFAULT_CHECKPOINT_EVERY,
    show_default=True,
    callback=_checkpoint_every,
    help="Seconds of work between checkpoints (taken only between steps; 0: every step).",
)
@click.option(
    "--trace",
    type=_Trace(),
    help='timeline: the workload, a JSON Lines FILE ({"t": seconds, "op": "create"|"delete", '
    '"object": {...}, "runs": seconds} a line), or gen:SPEC, Poisson arrivals from the seed '
    "(gen:rate=2/m,until=1h,shape=cpu:1/mem:2Gi/gpu:1,runs=20m: README, Timelines).",
)
@click.option(
    "--trace-from-db",
    metavar="REC",
    help="timeline: the workload and the starting cluster of a recording (drasnap record) in "
    "this database: the run starts from its first state, and the pods created and deleted "
    "after it are the trace (docs/traces.md).",
)
@click.option(
    "--trace-from-name",
    default="record",
    show_default=True,
    metavar="NAME",
    help="With --trace-from-db: the recording (named store).",
)
@click.option(
    "--trace-nodes",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="timeline, --trace alibaba-gpu-v2023:PODS.csv: the trace's node list (one node group "
    "per node shape, starting empty; docs/traces.md).",
)
@click.option(
    "--gpu-sharing",
    type=click.Choice(TIMELINE_CHOICES["gpu_sharing"]),
    default="consumable",
    show_default=True,
    help="timeline, Alibaba's trace: a share of a GPU through consumable capacity (KEP-5075) "
    "or partitionable devices (KEP-4815), or a whole GPU for each share (no sharing).",
)
@click.option(
    "--pending-rows",
    type=click.Choice(TIMELINE_CHOICES["pending_rows"]),
    default="withdraw",
    show_default=True,
    help="timeline, Alibaba's trace: rows never scheduled arrive and are withdrawn at their "
    "deletion_time, or are left out (counted).",
)
@click.option(
    "--arrivals",
    type=click.Choice(TIMELINE_CHOICES["arrivals"]),
    default="trace",
    show_default=True,
    help="timeline, Alibaba's trace: at creation_time, or every pod at the start (a list "
    "without times, such as multigpu50).",
)
@click.option(
    "--until",
    metavar="DURATION",
    help="timeline: the simulated time to run to [default: the trace's last event + 1h].",
)
@click.option(
    "--scheduler-scoring",
    type=click.Choice(SCORING),
    default="LeastAllocated",
    show_default=True,
    help="timeline: kube-scheduler's NodeResourcesFit scoring (MostAllocated: bin-packing).",
)
@click.option(
    "--no-skip",
    is_flag=True,
    help="timeline: run every loop, idle ones too (the same result, slower: a check).",
)
@_timeline_options
@_unmodelled_options
@_ca_flag_options
@json_option
@click.pass_context
def simulate_cmd(
    ctx: click.Context,
    /,
    scenario: str,
    db: str | None,
    name: str | None,
    seed: int,
    pods: int | None,
    gpus_per_node: int | None,
    node_groups: int | Path,
    expander: str,
    expander_priorities: Path | None,
    scale_down_utilization_threshold: float,
    devices: str,
    nodes: int | None,
    pods_per_node: int | None,
    dra: bool,
    source: Path | None,
    from_db: str | None,
    from_name: str,
    from_at: int | None,
    feature_gates: dict[str, bool],
    strict: bool,
    resume: bool,
    checkpoint_every: float,
    trace: str | None,
    trace_from_db: str | None,
    trace_from_name: str,
    trace_nodes: Path | None,
    gpu_sharing: str,
    pending_rows: str,
    arrivals: str,
    until: str | None,
    scheduler_scoring: str,
    no_skip: bool,
    as_json: bool,
    **flags: Any,
) -> None:
    """Simulate SCENARIO (scale-up, scale-down, autoscale or timeline) into a database.

    Sizes default to upstream's DRA RunOnce benchmarks: scale-up places 4,000 pending one-GPU
    pods on 8-GPU template nodes (500 nodes); scale-down tries to remove each of 800 nodes with
    10 GPUs and 4 pods (480 removed). With --no-dra, its benchmarks without DRA: scale-up
    places 50,000 pods sized by CPU and memory, 50 a node (1,000 nodes); scale-down tries each
    of 2,000 nodes of 40 pods, each a hundredth of its node (1,200 removed).

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
    unremovable (node: the cluster-autoscaler's UnremovableReason), unschedulable (pod: the
    scheduler's reason, then the cluster-autoscaler's NotTriggerScaleUp text), warnings.

    timeline (needs --from and --trace) runs the cluster-autoscaler every --scan-interval and
    kube-scheduler between its loops on a simulated clock, as the trace's pods arrive and end
    (README, "Timelines"): node-hours, cost, pod waits, scale-ups and scale-downs.

    --from-db DB starts from what `drasnap record` recorded (the recording --from-name, as of
    seq --from-at): its objects are written once, as List files, beside the simulation's
    database (SIMDB.from/NAME-at-SEQ/), and read as --from reads a folder.

    --trace-from-db REC (timeline, instead of --from and --trace) replays a recording: the run
    starts from its capture, and the pods created and deleted after it are the trace
    (docs/traces.md, "A recorded cluster").

    Example:

        drasnap simulate scale-up sim.db --pods 400 --json
    """
    groups_file = node_groups if isinstance(node_groups, Path) else None
    _refuse_what_the_scenario_does_not_take(ctx, scenario, groups_file is not None)
    if from_db is None and (from_at is not None or _given(ctx, "from_name")):
        raise click.UsageError("--from-name and --from-at go with --from-db")
    if trace_from_db is not None or _given(ctx, "trace_from_name"):
        source, trace = _recorded_trace(
            scenario, trace_from_db, trace_from_name, source or from_db, trace, db or DEFAULT_DB
        )
    elif from_db is not None:
        if source is not None:
            raise click.UsageError("give --from or --from-db, not both")
        source = _recorded_state(from_db, from_name, from_at, db or DEFAULT_DB)
    extra: dict[str, Any] = {}
    ca_flags = {name: flags[name] for name in CA_FLAGS}
    if scenario in ON_GIVEN_CLUSTER:
        extra = {
            "expander": expander,
            "expander_priorities": str(expander_priorities.resolve())
            if expander_priorities
            else None,
            "node_groups_file": str(groups_file.resolve()) if groups_file else None,
            "scale_down_utilization_threshold": scale_down_utilization_threshold,
            **ca_flags,
        }
    if scenario == "timeline":
        extra |= {
            "trace": trace,
            "trace_nodes": str(trace_nodes.resolve()) if trace_nodes else None,
            "gpu_sharing": gpu_sharing,
            "pending_rows": pending_rows,
            "arrivals": arrivals,
            "until": until,
            "scheduler_scoring": scheduler_scoring,
            **{name: flags[name] for name in (*TIMELINE_FLAGS, *TIMELINE_LIMITS)},
        }
    sizes = {"pods": pods, "nodes": nodes, "pods_per_node": pods_per_node}
    settings = Settings.preset(
        scenario,
        dra=dra,
        seed=seed,
        gpus_per_node=gpus_per_node,
        node_groups=node_groups if isinstance(node_groups, int) else 1,
        devices=devices,
        source=str(source.resolve()) if source else None,
        feature_gates=feature_gates,
        **{name: value for name, value in sizes.items() if value is not None},
        **extra,
    )
    try:
        settings.check()
    except ScenarioError as exc:  # a bad option value: a usage error, as click's own
        raise click.UsageError(str(exc)) from exc
    # The options are good: now the library (a usage error never waits for it).
    from drasnap.snapshot.simulation import RunSession, files_digest, source_digest

    if source is not None:
        digest = source_digest(source)
        if scenario in ON_GIVEN_CLUSTER:
            digest = files_digest(
                digest,
                str(groups_file) if groups_file else None,
                str(expander_priorities) if expander_priorities else None,
                trace if trace and not trace.startswith(("gen:", RECORDED)) else None,
            )
        if trace is not None and trace.startswith(RECORDED):  # its events, as a file's bytes
            digest = files_digest(f"{digest}/{_recorded_digest(trace)}")
        settings = dataclasses.replace(settings, source_digest=digest)
    elif settings.cluster_from_trace and trace is not None:  # the trace's files are the input
        digest = files_digest("", trace[len(ALIBABA) :], str(trace_nodes) if trace_nodes else None)
        settings = dataclasses.replace(settings, source_digest=digest)
    given_db = db is not None
    db = db if db is not None else DEFAULT_DB
    session = RunSession(
        db,
        settings,
        name=name,
        resume=resume,
        strict=strict,
        checkpoint_every=checkpoint_every,
        note=lambda text: click.echo(f"note: {text}", err=True),
    )
    if session.chose_unfinished:
        click.echo(f"Resuming run {session.name!r}, the newest unfinished one", err=True)
    if not given_db:  # (said once the input is known to be good: an error stays one line)
        click.echo(f"Using {Path(db).resolve()} (give DB to choose)", err=True)

    def resume_command() -> str:
        return _resume_command(settings, db, session.name, checkpoint_every)

    failed: DatabaseError | None = None
    with session:
        progress = Progress(session.name)
        try:
            with _stop_on_signals(resume_command) as stop:
                outcome = session.run(
                    report=progress, stop=stop, options={"no_skip": no_skip} if no_skip else None
                )
        except RunInterrupted as interrupted:
            progress.close()
            click.echo(
                f"Stopped after step {interrupted.step} of {interrupted.total}, saved. "
                f"Continue with:\n  {resume_command()}",
                err=True,
            )
            ctx.exit(128 + interrupted.signal_number)
        except _Abort as abort:
            progress.close()
            click.echo(
                "Stopped at once; the run continues from its last checkpoint with:\n"
                f"  {resume_command()}",
                err=True,
            )
            ctx.exit(128 + abort.signal_number)
        except DatabaseError as exc:
            # The store stopped at once (a disk fault, a lost writer process) and closes
            # without a checkpoint: the database keeps the last one, which --resume continues.
            failed = exc
        finally:
            progress.close()
    if failed is not None:  # said once the store is closed: its last checkpoint is read back
        raise CommandError(
            f"{failed}{_kept_step(db, session.name)}; once that is repaired, continue from the "
            f"last checkpoint with: {resume_command()}"
        ) from failed
    data = outcome.as_json()
    data["name"] = session.name
    if not as_json and scenario == "autoscale":
        _autoscale_summary(data)
    _report(data, as_json)
    _hints(db, session.name)


def _kept_step(db: str, name: str) -> str:
    """The step the run's last checkpoint holds, for the line of a run its store stopped ("" when
    the database cannot say: the failing disk may refuse the read too)."""
    from drasnap.snapshot.simulation import RunStatus, find_run

    try:
        run = find_run(db, name)
    except (StoreError, SnapshotError, OSError):
        return ""
    if run is None or run.status == RunStatus.OTHER:
        return ""
    if run.status == RunStatus.EMPTY:
        return "; the run had no checkpoint yet: it starts again"
    of = f" of {run.steps}" if run.steps else ""
    return f"; the run's last checkpoint holds step {run.step}{of}"


def _refuse_what_the_scenario_does_not_take(
    ctx: click.Context, scenario: str, groups_file: bool
) -> None:
    """An option given that the scenario does not take is a usage error naming it."""
    given = set()
    for param in ctx.command.params:
        name = param.name or ""
        if ctx.get_parameter_source(name) not in (
            ParameterSource.COMMANDLINE,
            ParameterSource.ENVIRONMENT,
        ):
            continue
        if name == "node_groups" and groups_file:
            name = "node_groups_file"
        given.add(name)
    for name, why in refused_settings(scenario, given):
        option = "--node-groups FILE" if name == "node_groups_file" else _option(ctx, name)
        raise click.UsageError(f"{option} does not apply to {scenario}: {why}")


def _option(ctx: click.Context, name: str) -> str:
    if name == "dra":  # (only ever refused when given: as --no-dra, or --dra saying the default)
        return "--dra/--no-dra"
    return next(p.opts[0] for p in ctx.command.params if p.name == name)


def _resume_command(settings: Settings, db: str, name: str, checkpoint_every: float) -> str:
    """The command line that continues this run."""
    words = ["simulate", settings.scenario, _DB_WORD if _has_password(db) else db, "--name", name]
    words += settings.as_options()
    if checkpoint_every != DEFAULT_CHECKPOINT_EVERY:
        words += ["--checkpoint-every", str(checkpoint_every)]
    words.append("--resume")
    return _with_db_variable(command_line(*words), db)


#: Where a command printed for the user names a database whose URL holds a password: the
#: shell variable DB_ENV, which the user sets (the password is never printed).
DB_ENV = "DRASNAP_DB"
_DB_WORD = "__drasnap_db__"


def _has_password(db: str) -> bool:
    from drasnap.store import hide_passwords

    return hide_passwords(db) != db


def _with_db_variable(line: str, db: str) -> str:
    if not _has_password(db):
        return line
    return line.replace(_DB_WORD, f'"${DB_ENV}"')


def _report(data: dict[str, Any], as_json: bool) -> None:
    # What the filters did not check, one line each on stderr (the JSON keeps them too).
    for warning in data.get("warnings") or ():
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        echo_json(data)
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
    names = data.get("unremovable") or {}
    for node, reason in data["kept"].items():
        ca = f" ({names[node]})" if names.get(node) else ""
        click.echo(f"kept {node}: {reason}{ca}")
    for pod, reason in data["unschedulable"].items():
        click.echo(f"unschedulable {pod}: {reason}")


def _hints(db: str, name: str) -> None:
    """The commands that look at the run, as they run in this shell (the database as given)."""
    word = _DB_WORD if _has_password(db) else db
    lines = [
        command_line("inspect", word, "--name", name),
        command_line("history", word, "--name", name),
        command_line("replay", word, "--name", name, "--verify"),
        command_line("runs", word),
    ]
    lines = [_with_db_variable(line, db) for line in lines]
    where = ""
    if word != db:
        from drasnap.store import hide_passwords

        where = f" (with {DB_ENV} set to {hide_passwords(db)}, its password included)"
    click.echo(
        f"Look at run {name!r}{where}:\n" + "\n".join(f"  {line}" for line in lines), err=True
    )


def _given(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)


def _recorded_trace(
    scenario: str,
    rec: str | None,
    name: str,
    source: Path | str | None,
    trace: str | None,
    sim_db: str,
) -> tuple[Path, str]:
    """``--trace-from-db``: the folder of the recording's first state (as ``--from-db REC
    --from-at SEQ`` writes it), and the ``--trace`` value naming the recording."""
    from drasnap.snapshot.simulation import read_recorded, recorded_source

    if rec is None:
        raise click.UsageError("--trace-from-name goes with --trace-from-db")
    if scenario != "timeline":
        raise click.UsageError(f"--trace-from-db does not apply to {scenario}: timeline takes it")
    if trace is not None or source is not None:
        raise click.UsageError(
            "--trace-from-db gives both the trace and the starting cluster: leave out --trace, "
            "--from and --from-db"
        )
    if _has_password(rec):
        # The run records where its trace came from, and prints it in its resume command.
        raise click.UsageError(
            "--trace-from-db: give a database whose URL holds no password (the run records it)"
        )
    if "://" not in rec:  # a file: named absolutely, so a resume from elsewhere finds it
        rec = str(Path(rec).resolve())
    try:
        first, _trace = read_recorded(rec, name)
    except ScenarioError as exc:
        raise CommandError(str(exc)) from exc
    return _recorded_state(rec, name, first, sim_db), recorded_source(rec, name)


def _recorded_digest(trace: str) -> str:
    """The digest of a recorded trace's events (a resumed run must read the same)."""
    from drasnap.snapshot.simulation import read_recorded, split_source

    try:
        return read_recorded(*split_source(trace))[1].digest
    except ScenarioError as exc:
        raise CommandError(str(exc)) from exc


def _recorded_state(from_db: str, name: str, at: int | None, sim_db: str) -> Path:
    """The folder holding recording ``name``'s state at seq ``at`` (its last when None), as
    List files beside the simulation's database; written the first time it is asked for."""
    from drasnap.snapshot.simulation import write_state
    from drasnap.store import list_stores

    stores = {s.name: s for s in list_stores(from_db)}
    if name not in stores:
        known = ", ".join(sorted(stores)) or "none"
        raise CommandError(f"{from_db} holds no recording {name!r} (its stores: {known})")
    seq = at if at is not None else stores[name].last_seq
    folder = Path(sim_db).resolve().parent / f"{Path(sim_db).name}.from" / f"{name}-at-{seq}"
    if not folder.is_dir() or not any(folder.iterdir()):
        folder.parent.mkdir(parents=True, exist_ok=True)
        write_state(from_db, name, at, folder)
    return folder
