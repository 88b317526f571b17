"""``drasnap simulate``: run a scale-up or scale-down scenario into a store, crash-safe."""

from __future__ import annotations

import json as jsonlib
import sys
from pathlib import Path
from typing import Any

import click

from snapshot.cluster import ClusterSnapshot
from store import Store
from tools.scenarios.base import Outcome, ScenarioError, Settings
from tools.scenarios.inputs import source_digest
from tools.scenarios.runner import prepare
from tools.scenarios.runner import simulate as run_simulation

DEFAULT_DB = "drasnap-sim.db"


class _Progress:
    """A progress bar on stderr, only when it is a terminal."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar: Any = None
        self.shown = 0

    def __call__(self, step: int, total: int) -> None:
        if not sys.stderr.isatty():
            return
        if self.bar is None:
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(step - self.shown)
        self.shown = step

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


@click.command()
@click.argument("scenario", metavar="SCENARIO")
@click.option("--db", help=f"Database file or URL [default: ./{DEFAULT_DB}].")
@click.option("--name", default="default", show_default=True, help="Named store in the database.")
@click.option("--seed", default=0, show_default=True, help="Seed: the same seed, the same run.")
@click.option("--pods", default=4000, show_default=True, help="scale-up: pending pods.")
@click.option(
    "--gpus-per-node",
    default=0,
    help="GPUs per node: scale-up's largest node group (8), scale-down's nodes (10).",
)
@click.option(
    "--node-groups",
    default=1,
    show_default=True,
    help="scale-up: node groups; each further one has half the GPUs per node.",
)
@click.option("--nodes", default=800, show_default=True, help="scale-down: nodes.")
@click.option("--pods-per-node", default=4, show_default=True, help="scale-down: pods per node.")
@click.option(
    "--from",
    "source",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Start from manifests in this folder (kubectl dumps) instead of generated objects.",
)
@click.option("--resume", is_flag=True, help="Continue an interrupted run from its checkpoint.")
@click.option(
    "--checkpoint-every",
    default=2.0,
    show_default=True,
    help="Seconds of work between checkpoints (taken only between steps).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def simulate(
    scenario: str,
    db: str | None,
    name: str,
    seed: int,
    pods: int,
    gpus_per_node: int,
    node_groups: int,
    nodes: int,
    pods_per_node: int,
    source: Path | None,
    resume: bool,
    checkpoint_every: float,
    as_json: bool,
) -> None:
    """Simulate SCENARIO (scale-up or scale-down) into a store, with the journal on.

    Sizes default to upstream's DRA RunOnce benchmarks: scale-up places 4,000 pending one-GPU
    pods on 8-GPU template nodes (500 nodes); scale-down tries to remove each of 800 nodes with
    10 GPUs and 4 pods (480 removed). If the process dies, run the same command with --resume:
    it continues from the last checkpoint and ends with the same result and state digest.

    Example:

        drasnap simulate scale-up --db sim.db --pods 400 --json
    """
    settings = Settings(
        scenario=scenario,
        seed=seed,
        pods=pods,
        gpus_per_node=gpus_per_node,
        node_groups=node_groups,
        nodes=nodes,
        pods_per_node=pods_per_node,
        source=str(source.resolve()) if source else None,
        source_digest=source_digest(source) if source else None,
    ).resolved()
    start = None if resume else prepare(settings)  # every input error before the database
    if resume:
        settings.check()
    if db is None:
        db = DEFAULT_DB
        click.echo(f"Using {Path(db).resolve()} (give --db to choose)", err=True)
    where = f"store {name!r} in {db}"
    if resume and "://" not in db and not Path(db).exists():
        raise ScenarioError(f"nothing to resume: {db} does not exist")
    progress = _Progress(f"{scenario}")
    store = Store.open(db, name=name, auto_checkpoint=False, checkpoint_interval=checkpoint_every)
    with ClusterSnapshot(store) as cluster:
        try:
            outcome = run_simulation(
                cluster, settings, start, resume=resume, where=where, tick=progress
            )
        finally:
            progress.close()
    _report(outcome, as_json)


def _report(outcome: Outcome, as_json: bool) -> None:
    data = outcome.as_json()
    if as_json:
        click.echo(jsonlib.dumps(data))
        return
    width = max(len(k) for k in data)
    for key, value in data.items():
        shown = jsonlib.dumps(value) if isinstance(value, dict | list) else value
        click.echo(f"{key:<{width}}  {shown}")
