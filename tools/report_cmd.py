"""``drasnap report``: one self-contained HTML page of a run (``snapshot.simulation.report``)."""

from __future__ import annotations

import click
from drasnap.tools.errors import CommandError
from drasnap.tools.options import database, name_option, store_to_read


@click.command(name="report")
@database
@name_option
@click.option(
    "-o",
    "--output",
    metavar="FILE.html",
    help="Where to write the page [default: RUN.html in the current folder].",
)
@click.option("--claim", metavar="NS/NAME", help="The claim whose allocation history is shown.")
@click.option("--open", "open_page", is_flag=True, help="Open the page in a browser.")
def report_cmd(
    db: str | None, name: str | None, output: str | None, claim: str | None, open_page: bool
) -> None:
    """Write one HTML page of a run that works offline (every style, script and chart inside
    it): summary, node groups, pending pods, nodes removed and kept with their utilization,
    the run's forks over time, device allocation. A run still being written shows its last
    checkpoint, and says so. Each table names the command that prints its rows.

    Example:

        drasnap report sim.db --name scale-down-1 -o scale-down-1.html --open
    """
    try:
        from drasnap.snapshot.simulation.report import gather, write_report
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
    db, name = store_to_read(db, name)
    path = output if output is not None else f"{name}.html"
    if not path.endswith((".html", ".htm")):
        raise click.BadParameter(f"{path!r} does not end in .html", param_hint="-o")
    size = write_report(gather(db, name, claim=claim), path)
    click.echo(f"wrote {path} ({size / 1e6:.2f} MB)", err=True)
    if open_page:
        import pathlib
        import webbrowser

        webbrowser.open(pathlib.Path(path).resolve().as_uri())
