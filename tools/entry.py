"""The ``drasnap`` console script: signals first, then the command line, then a quick exit.

Importing the command line takes a moment (the kubernetes client models); a Ctrl-C or a
SIGTERM in that moment must end the command quietly, with the shell's status for a signal
(128 + its number), not with a traceback. ``drasnap simulate`` installs its own handlers while
a run goes, to stop it at a step boundary (see ``tools.simulate_cmd``).

When the command has returned, everything it wrote is closed (stores close their writer
process and database before a command returns): what is left is the interpreter tearing down
a heap of a few hundred thousand objects, which took longer than some whole commands
(BENCHMARKS.md, design notes). The script flushes its output and ends the process there
instead. A command that ends with an uncaught exception keeps the interpreter's usual exit
(traceback, finalizers).
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType


def _quit(number: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + number)


def exit_status(code: object) -> int:
    """The process status ``sys.exit(code)`` gives (a message is printed by the caller)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    return 1


def main() -> None:
    signal.signal(signal.SIGINT, _quit)
    signal.signal(signal.SIGTERM, _quit)
    from drasnap.tools.cli import main as cli_main

    try:
        cli_main()
        code: object = 0
    except SystemExit as done:
        code = done.code
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # `drasnap ... | head`: the reader is gone, nothing left to say
        pass
    os._exit(exit_status(code))
