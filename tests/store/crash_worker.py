"""Child process of the crash test: runs a seeded random operation sequence on a Store.

``python -m tests.store.crash_worker DB SEED N [NAME]`` (DB: a file or a URL; NAME: the store,
"default" if not given) prints ``ready`` once the store is open, then
``ckpt I`` each time an explicit checkpoint after operation I has returned. The parent kills it
with SIGKILL at a random moment. ``operations(seed, n)`` is shared with the parent, which replays
the same sequence on a MemoryStore to know every state the child passed through.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from typing import Any

from drasnap.store import Store, VersionedStore


def operations(seed: int, n: int) -> Iterator[tuple[Any, ...]]:
    """The ``n`` operations for ``seed``, generated lazily (the same on both sides)."""
    rng = random.Random(seed)
    depth = 0
    for i in range(n):
        r = rng.random()
        if r < 0.40:
            key = f"k{rng.randrange(40)}"
            value = {"i": i, "pad": "x" * rng.randrange(200), "tags": [rng.randrange(9)] * 3}
            yield ("put", rng.choice(["claims", "slices"]), key, value)
        elif r < 0.50:
            yield ("delete", rng.choice(["claims", "slices"]), f"k{rng.randrange(40)}")
        elif r < 0.65 and depth < 6:
            yield ("fork", f"step-{i}")
            depth += 1
        elif r < 0.75:
            yield ("commit",)
            depth = max(0, depth - 1)
        elif r < 0.90:
            yield ("revert",)
            depth = max(0, depth - 1)
        else:
            yield ("checkpoint",)


def apply(store: VersionedStore, op: tuple[Any, ...]) -> None:
    name = op[0]
    if name == "put":
        store.put(op[1], op[2], op[3])
    elif name == "delete":
        store.delete(op[1], op[2])
    elif name == "fork":
        store.fork(op[1])
    else:
        getattr(store, name)()


def main() -> None:
    db, seed, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    name = sys.argv[4] if len(sys.argv) > 4 else "default"
    behind = len(sys.argv) > 5 and sys.argv[5] == "write-behind"
    store = Store.open(db, name=name, checkpoint_interval=0.05, write_behind=behind)
    print("ready", flush=True)
    for i, op in enumerate(operations(seed, n)):
        apply(store, op)
        if op[0] == "checkpoint":
            print(f"ckpt {i}", flush=True)
    print("done", flush=True)
    store.close()


if __name__ == "__main__":
    main()
