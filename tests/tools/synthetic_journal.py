"""A synthetic simulation journal of any size, and the latency of ``drasnap history`` on it.

The shape of a scale-up search: 5,000 claims in 20 namespaces at the base, then steps of
``fork("scale-up ng-N")``, 5-30 claim allocations (with their pods) on 500 nodes of 8 GPUs, a
nested try one time in ten (committed or reverted), and a commit one step in five (else a
revert), a checkpoint after each step. About 45% of the rows are claim puts.

    python -m tests.tools.synthetic_journal /tmp/journal.db --rows 1000000

builds the journal (about 40 s and 400 MB for a million rows) and prints the median latency of
``history --claim``, ``--device`` and ``--node`` over 7 runs each (a fresh ``Journal`` each
time, as the command does).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from drasnap.snapshot.history.allocations import allocation_history
from drasnap.store import Store
from drasnap.store.journal.reader import Journal

from tests.store.journal_session import claim

CLAIMS = 5000
NODES = 500


def key(i: int) -> str:
    return f"ns-{i % 20}/claim-{i}"


def build(path: Path, rows: int, *, seed: int = 1) -> int:
    """Write store ``sim`` in ``path`` until its journal has at least ``rows`` rows."""
    rnd = random.Random(seed)
    with Store.open(path, name="sim", sync="off", auto_checkpoint=False) as store:
        written = 0
        for i in range(CLAIMS):
            store.put("ResourceClaim", key(i), claim(f"ns-{i % 20}", f"claim-{i}"))
        written += CLAIMS
        step = 0
        while written < rows:
            step += 1
            store.fork(f"scale-up ng-{step % 13}")
            written += 1
            for _ in range(rnd.randint(5, 30)):
                i = rnd.randrange(CLAIMS)
                node = f"node-{rnd.randrange(NODES)}"
                device = f"gpu-{rnd.randrange(8)}"
                value = claim(f"ns-{i % 20}", f"claim-{i}", [(node, device)], node=node)
                store.put("ResourceClaim", key(i), value)
                store.put("Pod", f"ns-{i % 20}/pod-{i}", {"spec": {"nodeName": node}})
                written += 2
                if rnd.random() < 0.1:
                    store.fork("nested")
                    store.put("ResourceClaim", key(i), claim(f"ns-{i % 20}", f"claim-{i}"))
                    store.commit() if rnd.random() < 0.5 else store.revert()
                    written += 3
            store.commit() if rnd.random() < 0.2 else store.revert()
            store.checkpoint()
            written += 2
    return written


def median_seconds(run: Callable[[], Any], times: int = 7) -> tuple[float, int]:
    samples = []
    count = 0
    for _ in range(times):
        start = time.perf_counter()
        count = len(run())
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), count


def history(path: Path, **filters: Any) -> Callable[[], Any]:
    def run() -> Any:
        with Journal.open(path, name="sim") as journal:
            return allocation_history(journal, **filters)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    if not args.path.exists():
        started = time.perf_counter()
        rows = build(args.path, args.rows)
        print(f"built {rows:,} rows in {time.perf_counter() - started:.1f} s")
    cases: dict[str, dict[str, Any]] = {
        "history --claim ns-3/claim-123": {"claim": "ns-3/claim-123"},
        "history --device gpu.example.com/node-17/gpu-3": {
            "device": ("gpu.example.com", "node-17", "gpu-3")
        },
        "history --claim ns-3/claim-123 --fate reverted": {
            "claim": "ns-3/claim-123",
            "fate": "reverted",
        },
        "history --node node-17": {"node": "node-17"},
    }
    for name, filters in cases.items():
        seconds, events = median_seconds(history(args.path, **filters))
        print(f"{name}: median {seconds * 1000:.0f} ms ({events} events)")


if __name__ == "__main__":
    main()
