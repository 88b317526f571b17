"""Known answers: the state digest and the journal chain of a small store, computed here from
their documented definitions (``store/codec.py`` and ``store/chain.py``'s docstrings) with
``hashlib`` and ``json`` only — never with drasnap's own code — and compared with what the
store records. Every other digest test compares drasnap with itself; these would catch a
wrong ``entry_hash`` or chain formula that all of those pass.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from drasnap.store import Store

# --- the definitions, as the docstrings write them ---------------------------------------------


def canonical(value: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, non-ASCII as itself (UTF-8), floats as Python's
    repr writes them (the values here stay in the range where the docstring says the two agree)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def state_digest(state: dict[tuple[str, str], Any]) -> str:
    """Sum mod 2**128 of BLAKE2b-128(kind NUL key NUL canonical(value)), big-endian, 32 hex."""
    total = 0
    for (kind, key), value in state.items():
        data = b"\0".join(s.encode("utf-8") for s in (kind, key, canonical(value)))
        total += int.from_bytes(hashlib.blake2b(data, digest_size=16).digest(), "big")
    return format(total % 2**128, "032x")


def chain(previous: str | None, rows: list[list[Any]]) -> str:
    """SHA-256(previous as 16 bytes (zeros if none) ‖ JSON(rows)), its first 16 bytes in hex."""
    start = bytes(16) if previous is None else bytes.fromhex(previous)
    text = json.dumps(rows, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(start + text.encode("utf-8")).hexdigest()[:32]


# --- answers worked out by hand ----------------------------------------------------------------


def test_the_empty_state_digests_to_zero() -> None:
    assert state_digest({}) == "0" * 32


def test_one_entry_is_its_blake2b() -> None:
    # BLAKE2b-128 of b"Node\x00n1\x00{\"a\":1}" (RFC 7693 with a 16-byte output)
    expected = hashlib.blake2b(b'Node\x00n1\x00{"a":1}', digest_size=16).hexdigest()
    assert state_digest({("Node", "n1"): {"a": 1}}) == expected


def test_canonical_json_sorts_keys_and_writes_utf8() -> None:
    assert canonical({"b": [1, 2.5, None, True], "a": "é"}) == '{"a":"é","b":[1,2.5,null,true]}'


def test_the_first_chain_starts_from_sixteen_zero_bytes() -> None:
    rows: list[list[Any]] = [
        [1, 1, 0.5, "checkpoint", 0, 0, None, None, None, None, None, "0" * 32, None]
    ]
    text = b'[[1,1,0.5,"checkpoint",0,0,null,null,null,null,null,"' + b"0" * 32 + b'",null]]'
    assert chain(None, rows) == hashlib.sha256(bytes(16) + text).hexdigest()[:32]


# --- a store, read back with sqlite3 -----------------------------------------------------------


def _session(store: Store, model: dict[tuple[str, str], Any]) -> None:
    """Two checkpoints' worth of every operation: puts, a reverted layer, a committed one."""

    def put(kind: str, key: str, value: Any) -> None:
        store.put(kind, key, value)
        model[(kind, key)] = value

    put("Node", "n1", {"name": "n1", "cpu": 4, "labels": {"zone": "b", "arch": "x86"}})
    put("Node", "n2", {"name": "n2", "cpu": 2.5, "taints": []})
    put("Pod", "default/p", {"node": None, "ok": True, "note": "é ü"})
    store.checkpoint()
    store.fork("try")
    store.put("Pod", "default/p", {"node": "n1"})  # reverted: in the chain, not the state
    store.revert()
    store.fork("keep")
    put("Pod", "default/q", [1, "two", {"z": 0, "a": -3}])
    store.delete("Node", "n2")
    del model[("Node", "n2")]
    store.commit()
    store.checkpoint()


@pytest.mark.parametrize("write_behind", [False, True], ids=["inline", "write-behind"])
def test_a_store_records_the_digest_and_chain_computed_here(
    tmp_path: Path, write_behind: bool
) -> None:
    path = tmp_path / "known.db"
    model: dict[tuple[str, str], Any] = {}
    with Store.open(path, name="known", write_behind=write_behind) as store:
        _session(store, model)
        assert store.state_digest() == state_digest(model)

    with sqlite3.connect(path) as conn:
        (store_id, recorded) = conn.execute(
            "SELECT id, state_digest FROM stores WHERE name = 'known'"
        ).fetchone()
        rows = [list(r) for r in conn.execute(
            "SELECT store_id, seq, ts, op, depth, layer, parent, label, kind, key, value, digest,"
            " chain FROM journal WHERE store_id = ? ORDER BY seq",
            (store_id,),
        )]  # fmt: skip
        base = {
            (kind, key): value
            for kind, key, value in conn.execute(
                "SELECT kind, key, value FROM entries WHERE store_id = ? AND depth = 0"
                " AND NOT tombstone",
                (store_id,),
            )
        }
    assert recorded == state_digest(model)
    assert base == {ck: canonical(v) for ck, v in model.items()}
    puts = [r for r in rows if r[3] == "put"]
    assert puts[0][10] == canonical(
        {"name": "n1", "cpu": 4, "labels": {"zone": "b", "arch": "x86"}}
    )

    previous: str | None = None
    since: list[list[Any]] = []
    checkpoints = 0
    for row in rows:
        if row[3] != "checkpoint":
            since.append(row)
            continue
        recorded_chain = row[12]
        since.append([*row[:12], None])
        assert recorded_chain == chain(previous, since), f"checkpoint at seq {row[1]}"
        previous, since = recorded_chain, []
        checkpoints += 1
    # the two of the session (closing adds none: nothing changed since the last one)
    assert checkpoints >= 2
    last = [r for r in rows if r[3] == "checkpoint"][-1]
    assert last[11] == state_digest(model)


def test_small_floats_are_written_as_the_docstring_says(tmp_path: Path) -> None:
    # The one place the canonical encoding is not json.dumps's (store/codec.py's docstring).
    path = tmp_path / "floats.db"
    with Store.open(path, name="f") as store:
        store.put("K", "k", [1e-5, 1.5e-7, 1e-4, 1e16, 2.5])
    with sqlite3.connect(path) as conn:
        (text,) = conn.execute("SELECT value FROM entries WHERE key = 'k'").fetchone()
    assert text == "[0.00001,1.5e-7,0.0001,1e+16,2.5]"
