"""``drasnap bench store``: each store operation on MemoryStore and the SQLite Store.

Every row is the median µs per operation over repeated runs in this process; the ratio is
SQLite Store / MemoryStore. Values are ~1 KB claim-like dicts. The SQLite store uses its
defaults (journal on, unbounded cache) unless the row says otherwise, on a file in a
temporary directory.

With ``postgres_url`` the same rows also run, in the same process, on a PostgreSQL Store (same
defaults), in a store of a unique name that is dropped afterwards; its ratio is PostgreSQL
Store / MemoryStore.
"""

from __future__ import annotations

import os
import secrets
import socket
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drasnap.store import MemoryStore, Store, VersionedStore
from drasnap.tools.bench.timing import each_us, per_op_us
from drasnap.tools.progress import Milestones


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
    postgres_us: float | None = None

    @property
    def ratio(self) -> float | None:
        return _ratio(self.sqlite_us, self.memory_us)

    @property
    def postgres_ratio(self) -> float | None:
        return _ratio(self.postgres_us, self.memory_us)


def _ratio(us: float | None, memory_us: float | None) -> float | None:
    if memory_us is None or us is None or memory_us == 0:
        return None
    return us / memory_us


@dataclass
class Stores:
    """The stores one group of rows runs on: PostgreSQL only with ``--postgres-url``."""

    memory: MemoryStore
    sqlite: Store
    postgres: Store | None

    def durable(self) -> list[Store | None]:
        return [self.sqlite, self.postgres]


@contextmanager
def stores(keys: int, postgres_url: str | None = None, **options: Any) -> Iterator[Stores]:
    """A MemoryStore and checkpointed SQLite (and PostgreSQL) Stores, holding ``keys`` claims.

    The PostgreSQL store has a name of its own (host, pid, random) and is dropped afterwards.
    """
    with tempfile.TemporaryDirectory() as tmp:
        opened = Stores(MemoryStore(), Store.open(Path(tmp) / "bench.db", **options), None)
        pg_name = f"bench-{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            if postgres_url is not None:
                opened.postgres = Store.open(postgres_url, name=pg_name, **options)
            values = [claim_like(i) for i in range(keys)]
            for s in (opened.memory, *opened.durable()):
                if s is None:
                    continue
                for i, v in enumerate(values):
                    s.put("claims", f"default/claim-{i}", v)
                s.checkpoint()
            yield opened
        finally:
            opened.sqlite.close()
            if opened.postgres is not None:
                opened.postgres.close()
                assert postgres_url is not None
                Store.drop(postgres_url, name=pg_name)


def _both(name: str, on: Stores, measure: Callable[[VersionedStore], float]) -> Row:
    pg = on.postgres
    return Row(name, measure(on.memory), measure(on.sqlite), None if pg is None else measure(pg))


def fork_revert(s: VersionedStore) -> float:
    def run(n: int) -> None:
        fork, revert = s.fork, s.revert
        for _ in range(n):
            fork()
            revert()

    return per_op_us(run, number=20_000)


def run(
    quick: bool = False,
    progress: Milestones = lambda _: None,
    postgres_url: str | None = None,
) -> tuple[list[Row], str]:
    """Measure every row; returns them and the database(s) the durable stores ran on."""
    rows: list[Row] = []
    sizes = [1_000, 10_000] if quick else [1_000, 10_000, 100_000]
    for size in sizes:
        progress(f"fork+revert at {size} keys")
        with stores(size, postgres_url) as on:
            rows.append(_both(f"fork+revert, empty layer, {size:,} keys", on, fork_revert))

    with stores(10_000, postgres_url) as on:
        memory = on.memory
        database = "; ".join(s.backend for s in on.durable() if s is not None)
        value = claim_like(0)
        keys = [f"default/claim-{i}" for i in range(10_000)]

        progress("put")

        def put(s: VersionedStore) -> float:
            s.fork()

            def go(n: int) -> None:
                p = s.put
                for i in range(n):
                    p("claims", keys[i % 10_000], value)

            result = per_op_us(go, number=10_000)
            s.revert()
            return result

        rows.append(_both("put (1 KB value, in a fork)", on, put))

        progress("get")

        def get_cached(s: VersionedStore) -> float:
            for k in keys:
                s.get("claims", k)

            def go(n: int) -> None:
                g = s.get
                for i in range(n):
                    g("claims", keys[i % 10_000])

            return per_op_us(go, number=100_000)

        rows.append(_both("get, cached", on, get_cached))

        def dict_get() -> float:
            d = {k: value for k in keys}

            def go(n: int) -> None:
                g = d.get
                for i in range(n):
                    g(keys[i % 10_000])

            return per_op_us(go, number=100_000)

        rows.append(Row("(reference: dict.get with the same loop)", dict_get(), None))

        progress("commit/revert of 1k keys")

        def changed_layer(s: VersionedStore) -> VersionedStore:
            s.fork()
            for k in keys[:1000]:
                s.put("claims", k, value)
            return s

        rows.append(
            _both(
                "commit, 1k changed keys (into depth 1)",
                on,
                lambda s: _outer(
                    s, lambda: each_us(lambda: changed_layer(s), lambda t: t.commit())
                ),
            )
        )
        rows.append(
            _both(
                "revert, 1k changed keys",
                on,
                lambda s: each_us(lambda: changed_layer(s), lambda t: t.revert()),
            )
        )
        progress("items")
        rows.append(
            _both(
                "items() of 10k keys",
                on,
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

        def checkpoint_us(t: Store | None) -> float | None:
            return None if t is None else each_us(lambda: writes(t), checkpoint_after_1k)

        rows.append(Row("checkpoint after 1k writes", None, *map(checkpoint_us, on.durable())))

    progress("uncached get")
    with stores(10_000, postgres_url, cache_size=1) as on:
        memory = on.memory

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

        def sql_get(bounded: Store) -> float:
            def go(n: int) -> None:
                g = bounded.get
                for i in range(n):
                    g("claims", keys[(i * 7919) % 10_000])

            return per_op_us(go, number=2_000)

        uncached = [None if t is None else sql_get(t) for t in on.durable()]
        rows.append(Row("get, uncached (Store: cache_size=1, read from SQL)", miss, *uncached))
    return rows, database


def _outer(s: VersionedStore, measure: Callable[[], float]) -> float:
    s.fork("outer")
    try:
        return measure()
    finally:
        while s.depth:
            s.revert()
