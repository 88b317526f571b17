"""The stored state against the journal's replay: ``replay(verify=True)`` checks the journal (its
digests and chain at every checkpoint), and, replayed to the end, the state the store holds now
too, since damage confined to the state's own rows (the ``entries`` table) leaves the journal
whole and would pass as identical (issue 40).

Why compare entries and not only digests: the digest recorded at the last checkpoint is in the
journal, which such damage does not touch, and a digest that differs names no entry. The
comparison reads the stored state as a reader would (:meth:`Store.open` read-only: what a
resume loads) and the replayed one, kind by kind, and names every (kind, key) whose visible
value differs. It holds both states' values of one kind at a time.
"""

from __future__ import annotations

import os

from drasnap.store.durable import Store
from drasnap.store.interface import VersionedStore

__all__ = ["stored_differences"]

Key = tuple[str, str]
_ABSENT = object()


def stored_differences(
    source: str | os.PathLike[str], name: str, replayed: VersionedStore
) -> tuple[Key, ...]:
    """Every (kind, key) whose value in store ``name`` of ``source``, as stored, differs from
    its value in ``replayed`` (the journal replayed to its end), sorted."""
    differing: list[Key] = []
    with Store.open(source, name=name, readonly=True) as stored:
        for kind in sorted(set(stored.kinds()) | set(replayed.kinds())):
            have = stored.items(kind)
            want = replayed.items(kind)
            for key in sorted(have.keys() | want.keys()):
                if have.get(key, _ABSENT) != want.get(key, _ABSENT):
                    differing.append((kind, key))
    return tuple(differing)
