"""A simulation worker: one process writing its own named store in a shared database.

``python -m tests.store.pg_worker URL NAME SEED N`` opens the store ``NAME`` at ``URL`` for
writing, prints ``ready``, waits for a line on stdin (so that all workers start writing at the
same moment), runs ``workload(store, SEED, N)``, closes the store (a last checkpoint) and prints
``done DIGEST START END`` (the state digest, and when the workload started and ended, in
seconds since the epoch).

``workload`` is the seeded random fork/put/delete/commit/revert/checkpoint mix of the crash
test: it hammers the store with checkpoints, which a simulation does not. The four real
``drasnap simulate`` runs into one database are ``test_four_simulations_into_one_database``.
"""

from __future__ import annotations

import sys
import time

from drasnap.store import Store, VersionedStore

from tests.store.crash_worker import apply, operations


def workload(store: VersionedStore, seed: int, n: int) -> None:
    """The work of one worker: deterministic in ``seed`` and ``n``, on any store."""
    for op in operations(seed, n):
        apply(store, op)


def main() -> None:
    url, name, seed, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    store = Store.open(url, name=name)
    print("ready", flush=True)
    sys.stdin.readline()
    start = time.time()
    workload(store, seed, n)
    end = time.time()
    digest = store.state_digest()
    store.close()
    print(f"done {digest} {start} {end}", flush=True)


if __name__ == "__main__":
    main()
