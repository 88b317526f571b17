"""The errors of the command line and the simulations.

The ``drasnap`` group turns each of these, like every ``store.StoreError`` and
``snapshot.SnapshotError``, into one ``Error: ...`` line and exit status 1::

    CommandError            a command cannot do what was asked
    ├── ScenarioError       a simulation cannot start or go on (bad settings, sizes, manifests
    │                       without what the scenario needs, a run that cannot be resumed)
    └── RunFailedError      a run stopped on an error found while it ran; it is recorded as
                            failed (``drasnap runs`` shows it) and blocks no other run

``RunInterrupted`` is not an error: a signal asked the run to stop, and it stopped at a step
boundary with everything saved; the command exits 128 + the signal's number.
"""

from __future__ import annotations

__all__ = ["CommandError", "RunFailedError", "RunInterrupted", "ScenarioError"]


class CommandError(Exception):
    """A command cannot do what was asked; the message says why and, when there is one, the
    fix."""


class ScenarioError(CommandError):
    """A simulation cannot start or go on (bad settings, wrong database, nothing to resume)."""


class RunFailedError(CommandError):
    """A run stopped on an error found while it ran; it is recorded as failed."""


class RunInterrupted(Exception):
    """A signal asked the run to stop; it stopped at a step boundary, saved."""

    def __init__(self, signal_number: int, step: int, total: int) -> None:
        super().__init__(f"stopped by signal {signal_number} after step {step} of {total}")
        self.signal_number = signal_number
        self.step = step
        self.total = total
