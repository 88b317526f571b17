"""Followers: derived state that a store keeps in step with its layers.

A follower is told every change of the *effective* value of a key of the kinds it follows:
each put and delete (in whatever layer), and each key a revert restores, with the value the
key now has (:data:`ABSENT` when it no longer exists). Fork and commit change no effective
value, so a follower hears nothing of them. It therefore needs no undo log of its own: what it
derives from the values is right at every depth, whichever object forked, committed or
reverted the store — and a store reopened mid-fork restores exactly as one never closed.

Adding derived state means writing one follower and registering it; no fork, commit or revert
code changes. A follower builds its initial state from the store, then follows it:

>>> from drasnap.store import ABSENT, MemoryStore
>>> class LiveKeys:
...     '''The keys of the kinds it follows, kept in step.'''
...     def __init__(self, store, kind):
...         self.keys = set(store.keys(kind))
...         store.follow([kind], self)
...     def changed(self, kind, key, value):
...         if value is ABSENT:
...             self.keys.discard(key)
...         else:
...             self.keys.add(key)
>>> s = MemoryStore()
>>> s.put("claims", "a", {})
>>> live = LiveKeys(s, "claims")
>>> s.fork()
1
>>> s.put("claims", "b", {})
>>> s.delete("claims", "a")
>>> sorted(live.keys)
['b']
>>> s.revert()
0
>>> sorted(live.keys)
['a']

Rules: ``changed`` is called after the store applied the change (the store may be read
then); it must not write to the store, and must not raise (the store's change is done and
cannot be taken back). A revert reports its keys newest change first. Writes of kinds nobody
follows cost the store one dict lookup.
"""

from __future__ import annotations

from collections.abc import Iterable

from drasnap.store.interface import ABSENT, Follower

__all__ = ["ABSENT", "Followed", "Follower"]


class Followed:
    """The followers of a store, by kind: the ``follow``/``unfollow`` both stores inherit, and
    ``_followed``, the table their writes look a kind up in (empty: nobody follows)."""

    def __init__(self) -> None:
        self._followed: dict[str, tuple[Follower, ...]] = {}

    def follow(self, kinds: Iterable[str], follower: Follower) -> None:
        """Tell ``follower`` of every later change of the effective values of ``kinds`` (see
        :mod:`store.followers`); once per kind, however often it is added."""
        for kind in kinds:
            present = self._followed.get(kind, ())
            if not any(f is follower for f in present):
                self._followed[kind] = (*present, follower)

    def unfollow(self, follower: Follower) -> None:
        """Stop telling ``follower`` of changes (a no-op if it was not following)."""
        for kind, present in list(self._followed.items()):
            kept = tuple(f for f in present if f is not follower)
            if kept:
                self._followed[kind] = kept
            else:
                del self._followed[kind]
