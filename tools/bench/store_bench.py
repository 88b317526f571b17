"""``drasnap bench store``: each store operation on MemoryStore and the SQLite Store.

Every row is the median µs per operation over repeated runs in this process; the ratio is
SQLite Store / MemoryStore. Values are ~1 KB claim-like dicts. The SQLite store uses its
defaults (journal on, unbounded cache) unless the row says otherwise, on a file in a
temporary directory.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store import MemoryStore, Store
from tools.bench.timing import each_us, per_op_us

AnyStore = Store | MemoryStore


def claim_like(i: int) -> dict[str, Any]:
    """A ~1 KB value shaped like a ResourceClaim."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"claim-{i}", "namespace": "default", "uid": f"uid-{i:08d}"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu.example.com",
                            "allocationMode": "ExactCount",
                            "count": 1,
                        },
                    }
                ]
            }
        },
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "request": "gpu",
                            "driver": "gpu.example.com",
                            "pool": f"node-{i // 8}",
                            "device": f"gpu-{i % 8}",
                        }
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [f"n{i}"]}
                            ]
                        }
                    ]
                },
            },
            "reservedFor": [{"resource": "pods", "name": f"pod-{i}", "uid": f"pod-uid-{i}"}],
        },
        "padding": "x" * 300,
    }


@dataclass
class Row:
    operation: str
    memory_us: float | None
    sqlite_us: float | None

    @property
    def ratio(self) -> float | None:
        if self.memory_us is None or self.sqlite_us is None or self.memory_us == 0:
            return None
        return self.sqlite_us / self.memory_us


@contextmanager
def stores(keys: int, **options: Any) -> Iterator[tuple[MemoryStore, Store]]:
    """A MemoryStore and a checkpointed SQLite Store, both holding ``keys`` claims."""
    with tempfile.TemporaryDirectory() as tmp:
        memory = MemoryStore()
        sqlite = Store.open(Path(tmp) / "bench.db", **options)
        values = [claim_like(i) for i in range(keys)]
        for s in (memory, sqlite):
            for i, v in enumerate(values):
                s.put("claims", f"default/claim-{i}", v)
            s.checkpoint()
        try:
            yield memory, sqlite
        finally:
            sqlite.close()


def _both(
    name: str, memory: MemoryStore, sqlite: Store, measure: Callable[[AnyStore], float]
) -> Row:
    return Row(name, measure(memory), measure(sqlite))


def fork_revert(s: AnyStore) -> float:
    def run(n: int) -> None:
        fork, revert = s.fork, s.revert
        for _ in range(n):
            fork()
            revert()

    return per_op_us(run, number=20_000)


def run(
    quick: bool = False, progress: Callable[[str], None] = lambda _: None
) -> tuple[list[Row], str]:
    """Measure every row; returns them and the database the SQLite store ran on."""
    rows: list[Row] = []
    sizes = [1_000, 10_000] if quick else [1_000, 10_000, 100_000]
    for size in sizes:
        progress(f"fork+revert at {size} keys")
        with stores(size) as (memory, sqlite):
            rows.append(
                _both(f"fork+revert, empty layer, {size:,} keys", memory, sqlite, fork_revert)
            )

    with stores(10_000) as (memory, sqlite):
        database = sqlite.backend
        value = claim_like(0)
        keys = [f"default/claim-{i}" for i in range(10_000)]

        progress("put")

        def put(s: AnyStore) -> float:
            s.fork()

            def go(n: int) -> None:
                p = s.put
                for i in range(n):
                    p("claims", keys[i % 10_000], value)

            result = per_op_us(go, number=10_000)
            s.revert()
            return result

        rows.append(_both("put (1 KB value, in a fork)", memory, sqlite, put))

        progress("get")

        def get_cached(s: AnyStore) -> float:
            for k in keys:
                s.get("claims", k)

            def go(n: int) -> None:
                g = s.get
                for i in range(n):
                    g("claims", keys[i % 10_000])

            return per_op_us(go, number=100_000)

        rows.append(_both("get, cached", memory, sqlite, get_cached))

        def dict_get() -> float:
            d = {k: value for k in keys}

            def go(n: int) -> None:
                g = d.get
                for i in range(n):
                    g(keys[i % 10_000])

            return per_op_us(go, number=100_000)

        rows.append(Row("(reference: dict.get with the same loop)", dict_get(), None))

        progress("commit/revert of 1k keys")

        def changed_layer(s: AnyStore) -> AnyStore:
            s.fork()
            for k in keys[:1000]:
                s.put("claims", k, value)
            return s

        rows.append(
            _both(
                "commit, 1k changed keys (into depth 1)",
                memory,
                sqlite,
                lambda s: _outer(
                    s, lambda: each_us(lambda: changed_layer(s), lambda t: t.commit())
                ),
            )
        )
        rows.append(
            _both(
                "revert, 1k changed keys",
                memory,
                sqlite,
                lambda s: each_us(lambda: changed_layer(s), lambda t: t.revert()),
            )
        )
        progress("items")
        rows.append(
            _both(
                "items() of 10k keys",
                memory,
                sqlite,
                lambda s: each_us(lambda: s, lambda t: t.items("claims")),
            )
        )
        progress("checkpoint")

        def checkpoint_after_1k(t: Store) -> None:
            t.checkpoint()

        def writes(t: Store) -> Store:
            for k in keys[:1000]:
                t.put("claims", k, claim_like(len(k)))
            return t

        rows.append(
            Row(
                "checkpoint after 1k writes",
                None,
                each_us(lambda: writes(sqlite), checkpoint_after_1k),
            )
        )

    progress("uncached get")
    with stores(10_000, cache_size=1) as (memory, bounded):

        def memory_uncached(n: int) -> None:
            # A revert evicts the keys of the dropped layer: the next get walks the layers.
            for i in range(n):
                k = keys[i % 10_000]
                memory.fork()
                memory.put("claims", k, value)
                memory.revert()
                memory.get("claims", k)

        def memory_fork_put_revert(n: int) -> None:
            for i in range(n):
                k = keys[i % 10_000]
                memory.fork()
                memory.put("claims", k, value)
                memory.revert()

        miss = per_op_us(memory_uncached, number=5_000) - per_op_us(
            memory_fork_put_revert, number=5_000
        )

        def sql_get(n: int) -> None:
            g = bounded.get
            for i in range(n):
                g("claims", keys[(i * 7919) % 10_000])

        rows.append(
            Row(
                "get, uncached (Store: cache_size=1, read from SQL)",
                miss,
                per_op_us(sql_get, number=2_000),
            )
        )
    return rows, database


def _outer(s: AnyStore, measure: Callable[[], float]) -> float:
    s.fork("outer")
    try:
        return measure()
    finally:
        while s.depth:
            s.revert()
