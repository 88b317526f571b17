"""``drasnap record``: a live cluster's DRA history in a named store (capture, then watch)."""

from __future__ import annotations

import re
import shlex
import signal
import sys
import threading
from typing import Any

import click
from drasnap.tools.errors import CommandError
from drasnap.tools.options import cluster_options, json_option, page_size_option
from drasnap.tools.output import echo_json, program
from drasnap.tools.progress import ObjectCounts

_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: str) -> float:
    """``90``, ``90s``, ``5m``, ``1h`` -> seconds (a usage error otherwise)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", value)
    if not match or float(match.group(1)) <= 0:
        raise click.BadParameter(f"{value!r}: give seconds, or a number with s, m or h (5m)")
    return float(match.group(1)) * _UNITS[match.group(2)]


@click.command(name="record")
@click.argument("db", metavar="DB")
@click.option(
    "--name",
    default="record",
    show_default=True,
    metavar="NAME",
    help="The named store the recording is written to.",
)
@cluster_options("Record")
@click.option(
    "--duration", metavar="D", help="Stop after D (90s, 5m, 1h) [default: until Ctrl-C or SIGTERM]."
)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue the recording NAME from the last "
    "resourceVersion it holds (start it when there is none).",
)
@page_size_option("Objects per list request.")
@click.option(
    "--checkpoint-every",
    type=click.FloatRange(0, 86400),
    default=2.0,
    show_default=True,
    help="Seconds between checkpoints.",
)
@json_option
def record_cmd(
    db: str,
    name: str,
    kubeconfig: str | None,
    context: str | None,
    namespaces: tuple[str, ...],
    duration: str | None,
    resume: bool,
    page_size: int,
    checkpoint_every: float,
    as_json: bool,
) -> None:
    """Record a live cluster into the store NAME of DB: a capture as one layer, then every
    watch event as one commit at depth 0 labelled with its type, kind, key and
    resourceVersion, so history, explain, query and the allocation_events view read the
    cluster's past. A watch that expires (410) re-lists its kind and records the difference
    as one layer. Checkpointed every --checkpoint-every seconds; killed, --resume continues
    from the last recorded resourceVersions, losing no event and recording none twice.

    Example:

        drasnap record rec.db --context prod --name prod --duration 1h --resume
    """
    seconds = parse_duration(duration) if duration is not None else None
    from drasnap.snapshot import ForbiddenError, connect
    from drasnap.store import list_stores

    exists = any(s.name == name for s in list_stores(db, missing_ok=True))
    if exists and not resume:
        raise CommandError(
            f"a store named {name!r} exists in {db}: give --resume to continue it, or another "
            "--name"
        )
    client, _ = connect(kubeconfig, context)
    stop = threading.Event()
    received: list[int] = []

    def handler(number: int, frame: Any) -> None:
        if received:
            raise SystemExit(128 + number)  # a second signal: at once (the last checkpoint kept)
        received.append(number)
        stop.set()

    previous = {n: signal.signal(n, handler) for n in (signal.SIGINT, signal.SIGTERM)}
    try:
        summary, resumed, captured = _record(
            db,
            name,
            client,
            namespaces,
            page_size,
            checkpoint_every,
            resume,
            seconds,
            stop,
            as_json,
            exists,
        )
    except ForbiddenError as exc:
        click.echo(exc.cluster_role, err=True, nl=False)
        raise CommandError(str(exc)) from None
    finally:
        for number, old in previous.items():
            signal.signal(number, old)
    result = {
        "name": name,
        "resumed": resumed,
        "captured": captured,
        "events": summary.events,
        "skipped": summary.skipped,
        "relists": summary.relists,
        "resource_versions": summary.resource_versions,
    }
    if as_json:
        echo_json(result)
    else:
        click.echo(
            f"{name}: {summary.events} events recorded, {summary.relists} re-lists"
            + (f", {summary.skipped} seen before skipped" if summary.skipped else "")
        )
    if received:
        again = [*program(), *sys.argv[1:]]
        if "--resume" not in again:
            again.append("--resume")
        click.echo(f"stopped; continue with: {shlex.join(again)}", err=True)
        sys.exit(128 + received[0])


def _record(
    db: str,
    name: str,
    client: Any,
    namespaces: tuple[str, ...],
    page_size: int,
    checkpoint_every: float,
    resume: bool,
    seconds: float | None,
    stop: threading.Event,
    as_json: bool,
    exists: bool,
) -> tuple[Any, bool, int]:
    """Start or resume the recording, then watch: (its summary, resumed, objects captured)."""
    from drasnap.snapshot import Recorder
    from drasnap.store import Store

    def recorder(store: Any) -> Recorder:
        return Recorder(
            client,
            store,
            namespaces=namespaces,
            page_size=page_size,
            checkpoint_every=checkpoint_every,
        )

    first = None
    if not (resume and exists):  # the capture first: a refusal leaves no store behind
        progress = ObjectCounts.on_terminal(as_json)
        first = recorder(None).capture(progress)
        if progress:
            progress.close()
    with Store.open(db, name=name) as store:
        live = recorder(store)
        resumed = resume and live.has_recording()
        captured = 0
        if resumed:
            live.resume()
        else:
            captured = live.start(first)
            if not as_json:
                click.echo(f"{name}: captured {captured} objects", err=True)
        return live.run(duration=seconds, stop=stop), resumed, captured
