"""The ``drasnap`` console script: signals first, then the command line.

Importing the command line takes a moment (the kubernetes client models); a Ctrl-C or a
SIGTERM in that moment must end the command quietly, with the shell's status for a signal
(128 + its number), not with a traceback. ``drasnap simulate`` installs its own handlers while
a run goes, to stop it at a step boundary (see ``tools.simulate_cmd``).
"""

from __future__ import annotations

import signal
from types import FrameType


def _quit(number: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + number)


def main() -> None:
    signal.signal(signal.SIGINT, _quit)
    signal.signal(signal.SIGTERM, _quit)
    from drasnap.tools.cli import main as cli_main

    cli_main()
