"""``drasnap report``: one self-contained HTML page of a run, or of a sweep's points
(``snapshot.simulation.report``)."""

from __future__ import annotations

import click
from drasnap.tools.errors import CommandError
from drasnap.tools.options import DEFAULT_DB, database, name_option, store_to_read
from drasnap.tools.output_paths import check_output, writing


@click.command(name="report")
@database
@name_option
@click.option("--sweep", metavar="S", help="A page of sweep S's points instead of one run.")
@click.option(
    "-o",
    "--output",
    metavar="FILE.html",
    help="Where to write the page [default: RUN.html, or S.html, in the current folder].",
)
@click.option("--claim", metavar="NS/NAME", help="The claim whose allocation history is shown.")
@click.option("--open", "open_page", is_flag=True, help="Open the page in a browser.")
def report_cmd(
    db: str | None,
    name: str | None,
    sweep: str | None,
    output: str | None,
    claim: str | None,
    open_page: bool,
) -> None:
    """Write one HTML page of a run that works offline (every style, script and chart inside
    it): summary, node groups, pending pods, nodes removed and kept with their utilization,
    the run's forks over time, device allocation. A run still being written shows its last
    checkpoint, and says so. Each table names the command that prints its rows.

    With --sweep S: one page of the sweep's finished points, the table drasnap compare
    --sweep S prints and, for each axis that differs, nodes added, pods pending and cost by
    the axis's variant.

    Example:

        drasnap report sim.db --name scale-down-1 -o scale-down-1.html --open

        drasnap report sweep.db --sweep gpu-shapes -o gpu-shapes.html
    """
    if sweep is not None and name is not None:
        raise click.UsageError("give --sweep or --name, not both")
    if sweep is not None and claim is not None:
        raise click.UsageError("--claim is for a run's page, not a sweep's")
    try:
        from drasnap.snapshot.simulation.report import (
            gather,
            gather_sweep,
            write_report,
            write_sweep_report,
        )
    except ImportError as exc:  # matplotlib draws the charts
        raise CommandError(
            f"drasnap report needs the report extra ({exc.name} is missing): "
            "pip install 'drasnap[report]'"
        ) from None
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise CommandError(
            "drasnap report needs the report extra (matplotlib is missing): "
            "pip install 'drasnap[report]'"
        )
    if output is not None:  # (before the run is read; the default is checked when known)
        check_output(_path(output, ""), "-o")
    if sweep is not None:
        db = db if db is not None else DEFAULT_DB
        path = _path(output, sweep)
        sweep_report = gather_sweep(db, sweep)
        with writing(check_output(path, "-o")):
            size = write_sweep_report(sweep_report, path)
    else:
        db, name = store_to_read(db, name)
        path = _path(output, name)
        report = gather(db, name, claim=claim)
        with writing(check_output(path, "-o")):
            size = write_report(report, path)
    click.echo(f"wrote {path} ({size / 1e6:.2f} MB)", err=True)
    if open_page:
        import pathlib
        import webbrowser

        webbrowser.open(pathlib.Path(path).resolve().as_uri())


def _path(output: str | None, default: str) -> str:
    path = output if output is not None else f"{default}.html"
    if not path.endswith((".html", ".htm")):
        raise click.BadParameter(f"{path!r} does not end in .html", param_hint="-o")
    return path
