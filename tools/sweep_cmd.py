"""``drasnap sweep``: run a what-if sweep's points (``snapshot.simulation.sweep``) in local
worker processes, one point (``--index``, the container command of a Kubernetes Job), or print
that Job (``--emit-job``)."""

from __future__ import annotations

import os
from typing import Any

import click
from drasnap.tools.errors import CommandError
from drasnap.tools.output import echo_json

INDEX_ENV = "JOB_COMPLETION_INDEX"


def _positive(_ctx: click.Context, _param: click.Parameter, value: int | None) -> int | None:
    if value is not None and not 1 <= value <= 256:
        raise click.BadParameter(f"between 1 and 256, got {value}")
    return value


@click.command(name="sweep")
@click.argument("file", metavar="FILE", type=click.Path(dir_okay=False))
@click.argument("db", metavar="DB", required=False)
@click.option(
    "--workers",
    type=int,
    callback=_positive,
    help="Worker processes on this machine [default: the number of cores].",
)
@click.option(
    "--index",
    type=click.IntRange(min=0),
    envvar=INDEX_ENV,
    help=f"Run point I only (also read from ${INDEX_ENV}, as a Kubernetes Indexed Job sets it).",
)
@click.option("--emit-job", is_flag=True, help="Print a ConfigMap and an Indexed Job (YAML).")
@click.option("--image", default="drasnap:latest", show_default=True, help="--emit-job: image.")
@click.option(
    "--parallelism",
    type=int,
    default=4,
    show_default=True,
    callback=_positive,
    help="--emit-job: pods at once.",
)
@click.option(
    "--secret",
    default="drasnap-db",
    show_default=True,
    help="--emit-job: the Secret whose key 'url' holds the database URL.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the points' summaries as JSON.")
@click.pass_context
def sweep_cmd(
    ctx: click.Context,
    file: str,
    db: str | None,
    workers: int | None,
    index: int | None,
    emit_job: bool,
    image: str,
    parallelism: int,
    secret: str,
    as_json: bool,
) -> None:
    """Run the what-if sweep FILE into DB: one autoscale run per point (a timeline with
    `scenario: timeline`), named <sweep>-<index>.

    Each point is crash-resumable: run the same command again after a crash or Ctrl-C and it
    continues, skipping finished points; no point is run twice to its end. `drasnap compare DB
    --sweep NAME` prints the comparison table. With --emit-job, print a Kubernetes Indexed Job
    (and the ConfigMap holding FILE and what it reads) that runs one point per index against
    the database URL of a Secret.

    Example:

        drasnap sweep gpu-shapes.yaml sweep.db --workers 2
    """
    from drasnap.snapshot.simulation import SweepFileError, load_sweep

    try:
        sweep = load_sweep(file)
    except SweepFileError as exc:  # the FILE argument is wrong: a usage error (exit 2)
        raise click.BadParameter(str(exc), param_hint="FILE") from exc
    if emit_job:
        if db is not None or index is not None or workers is not None:
            raise click.UsageError("--emit-job takes no DB, --index or --workers")
        _emit_job(sweep, image, parallelism, secret)
        return
    if db is None:
        raise click.UsageError("Missing argument 'DB' (a file or a URL; every point lands there)")
    given = ctx.get_parameter_source("image") != click.core.ParameterSource.DEFAULT
    if given or ctx.get_parameter_source("parallelism") != click.core.ParameterSource.DEFAULT:
        raise click.UsageError("--image and --parallelism go with --emit-job")
    if index is not None:
        if workers is not None:
            raise click.UsageError("--index runs one point: it takes no --workers")
        _one(db, sweep, index, as_json)
        return
    _all(db, sweep, workers or os.cpu_count() or 1, as_json)


def _emit_job(sweep: Any, image: str, parallelism: int, secret: str) -> None:
    import yaml
    from drasnap.snapshot.simulation import job_manifests

    docs = job_manifests(sweep, image=image, parallelism=parallelism, secret=secret)
    click.echo(yaml.safe_dump_all(docs, sort_keys=False), nl=False)


def _one(db: str, sweep: Any, index: int, as_json: bool) -> None:
    from drasnap.snapshot import ArgumentError
    from drasnap.snapshot.simulation import run_point, with_index

    try:
        point = with_index(sweep, index)
    except ArgumentError as exc:
        raise click.BadParameter(str(exc), param_hint="--index") from exc
    click.echo(f"point {point.name}: {_variants(point.variants)}", err=True)
    result = run_point(db, point)
    _print([result], as_json, sweep.scenario)


def _all(db: str, sweep: Any, workers: int, as_json: bool) -> None:
    from concurrent.futures.process import BrokenProcessPool

    from drasnap.snapshot.simulation import SweepFileError, run_sweep
    from drasnap.store import hide_passwords

    shown = hide_passwords(db)
    click.echo(
        f"sweep {sweep.name}: {len(sweep)} points, {workers} worker(s), into {shown}", err=True
    )

    def skipped(count: int) -> None:
        click.echo(f"  {count} point(s) already finished: skipped", err=True)

    def started(point: Any) -> None:
        click.echo(f"  start {point.name}: {_variants(point.variants)}", err=True)

    def report(result: Any, done: int, total: int) -> None:
        words = {"ran": "done", "resumed": "done (resumed)", "finished": "already finished"}
        what = words.get(result.status, "being run by another process: skipped")
        click.echo(
            f"[{done}/{total}] {result.name} {what} in {result.seconds:.1f} s"
            + (f": {_RESULT_TEXT[sweep.scenario](result.summary)}" if result.summary else ""),
            err=True,
        )

    try:
        results = run_sweep(
            db, sweep, workers=workers, report=report, started=started, skipped=skipped
        )
    except SystemExit as stop:  # SIGINT or SIGTERM (tools.entry): each worker stops too
        click.echo(
            "\nStopped: run the same command again to continue (finished points are "
            "skipped, the others continue from their last checkpoint)",
            err=True,
        )
        raise stop
    except SweepFileError as exc:
        raise click.BadParameter(str(exc), param_hint="FILE") from exc
    except BrokenProcessPool as exc:
        raise CommandError(
            "a worker process died (killed?): run the same command again to continue; "
            "finished points are skipped, the others continue from their last checkpoint"
        ) from exc
    busy = [r.name for r in results if r.status == "busy"]
    if busy:
        raise CommandError(
            f"{len(busy)} point(s) are being run by another process ({', '.join(busy[:5])}): "
            "run the same command again once it ends"
        )
    click.echo(
        f"sweep {sweep.name}: {len(results)} points finished; compare them with:\n"
        f"  drasnap compare {shown} --sweep {sweep.name}",
        err=True,
    )
    if as_json:
        _print(results, as_json, sweep.scenario)


def _variants(variants: dict[str, str]) -> str:
    return ", ".join(f"{axis}={label}" for axis, label in variants.items())


def _autoscale_text(summary: dict[str, Any]) -> str:
    added = ", ".join(f"{g} +{n}" for g, n in summary["added"].items()) or "none"
    return f"added {added}, pending {summary['pods_pending']}, removed {summary['nodes_removed']}"


def _timeline_text(summary: dict[str, Any]) -> str:
    cost = summary.get("cluster_cost")
    waits = summary.get("pod_wait_s") or {}
    return (
        f"cost {'-' if cost is None else f'{cost:.2f}'}, node-hours "
        f"{sum((summary.get('node_hours') or {}).values()):.2f}, wait p99 {waits.get('p99')} s, "
        f"never scheduled {summary.get('never_scheduled')}"
    )


#: A finished point's result in a few words, by the sweep's scenario.
_RESULT_TEXT = {"autoscale": _autoscale_text, "timeline": _timeline_text}


def _print(results: list[Any], as_json: bool, scenario: str) -> None:
    if as_json:
        echo_json(
            [
                {"name": r.name, "index": r.index, "status": r.status, **(r.summary or {})}
                for r in results
            ]
        )
        return
    for result in results:
        if result.summary is not None:
            click.echo(f"{result.name}: {_RESULT_TEXT[scenario](result.summary)}")
