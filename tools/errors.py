"""The command line's own error: what a command cannot do, said as one ``Error: ...`` line.

The ``drasnap`` group turns it, like every ``store.StoreError`` and ``snapshot.SnapshotError``
(the simulations' ``ScenarioError`` and ``RunFailedError`` among them), into one line on stderr
and exit status 1.
"""

from __future__ import annotations

__all__ = ["CommandError"]


class CommandError(Exception):
    """A command cannot do what was asked; the message says why and, when there is one, the
    fix."""
