"""The command line's own error: what a command cannot do, said as one ``Error: ...`` line.

The ``drasnap`` group turns it, like every ``store.StoreError`` and ``snapshot.SnapshotError``
(the simulations' ``ScenarioError`` and ``RunFailedError`` among them), into one line on stderr
and exit status 1.
"""

from __future__ import annotations

__all__ = ["CommandError", "one_line"]


class CommandError(Exception):
    """A command cannot do what was asked; the message says why and, when there is one, the
    fix."""


def one_line(text: object) -> str:
    """``text`` (an exception, say) as one line: every run of whitespace, newlines included,
    becomes one space, and the ends are trimmed."""
    return " ".join(str(text).split())
