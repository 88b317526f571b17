"""Many simulation workers share one PostgreSQL database: four processes each write their own
named store at the same time (racing to migrate a fresh schema first), readers load the stores
while they are being written, and one reader checks all four against MemoryStore replays."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from drasnap.store import MemoryStore, Store, VersionedStore

from tests.conftest import Database
from tests.store.pg_worker import workload

ROOT = Path(__file__).resolve().parents[2]
WORKERS = 4
N_OPS = 3_000  # ~300 checkpoints each (a tenth of the operations are explicit checkpoints)


def snapshot(store: VersionedStore) -> tuple[Any, ...]:
    labels = tuple(layer.label for layer in store.layers()[1:])
    return (store.depth, labels, store.items("claims"), store.items("slices"))


@pytest.mark.postgres
def test_four_workers_write_their_own_stores_at_once(fresh_postgres_url: str) -> None:
    url = fresh_postgres_url
    jobs = [(f"worker-{i}", 7_000 + i) for i in range(WORKERS)]
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.store.pg_worker", url, name, str(seed), str(N_OPS)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        for name, seed in jobs
    ]
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()

        # While they write, readers load each store: always one consistent checkpoint (the
        # recorded digest matches the state read), never a mix of two.
        loads = 0
        while any(child.poll() is None for child in children):
            for name, _ in jobs:
                with Store.open(url, name=name, readonly=True) as reader:
                    assert reader._full_digest() == reader.state_digest(), name
                loads += 1
        outputs = [child.communicate(timeout=120)[0] for child in children]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.communicate()
    assert [child.returncode for child in children] == [0] * WORKERS, outputs
    assert loads > 0

    done = [out.split()[-4:] for out in outputs]
    assert all(d[0] == "done" for d in done), outputs
    starts, ends = [float(d[2]) for d in done], [float(d[3]) for d in done]
    assert max(starts) < min(ends), "the workers did not overlap in time"

    # One reader checks all four results against MemoryStore replays of the same workload.
    for (name, seed), (_, digest, _, _) in zip(jobs, done, strict=True):
        model = MemoryStore()
        workload(model, seed, N_OPS)
        with Store.open(url, name=name, readonly=True) as reader:
            assert snapshot(reader) == snapshot(model), name
            assert reader.state_digest() == model.state_digest() == digest
            assert reader.journal_complete

    # ... and SQL across them: every journal complete and in order, every store released.
    database = Database("postgres", url, url)
    rows = database.sql(
        "SELECT s.name, count(j.seq), min(j.seq), max(j.seq), s.next_seq, s.holder_pid "
        "FROM stores s JOIN journal j ON j.store_id = s.id GROUP BY s.id ORDER BY s.name"
    )
    assert [r[0] for r in rows] == [name for name, _ in jobs]
    for _, count, first, last, next_seq, holder in rows:
        assert (first, last, next_seq, holder) == (1, count, count + 1, None)


@pytest.mark.postgres
def test_four_simulations_into_one_database(fresh_postgres_url: str) -> None:
    """Four ``drasnap simulate`` processes at once, each into its own named store; one reader
    then checks each result against the same simulation run on a MemoryStore."""
    from drasnap.snapshot import ClusterSnapshot
    from drasnap.snapshot.simulation.runner import prepare, simulate
    from drasnap.snapshot.simulation.settings import Settings

    url = fresh_postgres_url
    jobs = [
        ("scale-down", ["--nodes", "30"], Settings("scale-down", seed=1, nodes=30)),
        ("scale-down", ["--nodes", "24", "--pods-per-node", "3"],
         Settings("scale-down", seed=2, nodes=24, pods_per_node=3)),
        ("scale-up", ["--pods", "60", "--node-groups", "2"],
         Settings("scale-up", seed=3, pods=60, node_groups=2)),
        ("scale-up", ["--pods", "45"], Settings("scale-up", seed=4, pods=45)),
    ]  # fmt: skip
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "drasnap.tools",
                "simulate",
                scenario,
                *sizes,
                "--seed",
                str(settings.seed),
                "--db",
                url,
                "--name",
                f"sim-{i}",
                "--json",
                "--checkpoint-every",
                "0.05",
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        for i, (scenario, sizes, settings) in enumerate(jobs)
    ]
    results = []
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        results.append(json.loads(out))
    for i, ((_, _, settings), result) in enumerate(zip(jobs, results, strict=True)):
        settings = settings.resolved()
        reference = simulate(ClusterSnapshot(MemoryStore()), settings, partial(prepare, settings))
        assert result["state_digest"] == reference.state_digest, i
        assert (result["forks"], result["commits"], result["reverts"]) == (
            reference.counters.forks,
            reference.counters.commits,
            reference.counters.reverts,
        )
        with Store.open(url, name=f"sim-{i}", readonly=True) as reader:
            assert reader.state_digest() == reference.state_digest
            assert reader.journal_complete
