"""``drasnap demo``: fork, commit and revert on a store file; reopen it to show it survived."""

from __future__ import annotations

from pathlib import Path

import click
from drasnap.tools.options import name_option_with, new_name
from drasnap.tools.output_paths import check_output, writing


@click.command(name="demo")
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("drasnap-demo.db"),
    show_default=True,
    help="SQLite file to create (or reuse).",
)
@name_option_with(
    "Named store inside the file.", default="demo", show_default=True, callback=new_name
)
def demo_cmd(db: Path, name: str) -> None:
    """A tour of the versioned store on a SQLite file.

    Example:

        drasnap demo --db /tmp/demo.db
    """

    with writing(check_output(db, "--db"), database=True):
        _tour(db, name)


def _tour(db: Path, name: str) -> None:
    from drasnap.store import Store

    with Store.open(db, name=name) as store:
        run = store.get("demo", "runs", 0) + 1
        store.put("demo", "runs", run)
        store.put("ResourceClaim", "default/gpu-claim", {"spec": {"devices": 1}})
        click.echo(f"run {run}: base has {store.count('ResourceClaim')} claim(s)")
        store.fork("try node-1")
        store.put("ResourceClaim", "default/gpu-claim", {"spec": {"devices": 1}, "node": "node-1"})
        click.echo(f"  forked to depth {store.depth}, claim now on node-1")
        store.revert()
        click.echo(
            f"  reverted to depth {store.depth}: {store.get('ResourceClaim', 'default/gpu-claim')}"
        )
        store.fork("try node-2")
        store.put("ResourceClaim", "default/gpu-claim", {"spec": {"devices": 1}, "node": "node-2"})
        store.commit()
        click.echo(f"  forked, placed on node-2 and committed: depth {store.depth}")
        store.fork("left open on purpose")
        store.put("demo", "open-layer-note", "this layer stays open across the reopen")
        digest = store.state_digest()
    with Store.open(db, name=name) as again:
        assert again.state_digest() == digest
        labels = [layer.label for layer in again.layers()[1:]]
        click.echo(
            f"reopened {db}: depth {again.depth} (open layers {labels}), state digest {digest}"
        )
        again.revert()
    click.echo(f"store {name!r} in {db} is durable; run again to see it grow, or delete the file")
