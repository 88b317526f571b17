"""Progress of a long run on stderr: a bar on a terminal, a line every few seconds elsewhere.

On a terminal the bar is redrawn in place (at most ten times a second) with the steps done,
what the run has decided so far (nodes removed or added) and the time left. When stderr is not a
terminal (CI, ``nohup``, a Job's log) a plain line is written every ``interval`` seconds, so a
run that takes an hour shows it is alive without flooding the log.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

_REDRAW = 0.1  # seconds between redraws of the bar
_BAR = 24


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class Progress:
    """A ``snapshot.simulation.ProgressCallback`` drawn on ``stream``; ``close()`` ends the
    bar's line."""

    def __init__(
        self,
        label: str,
        *,
        stream: TextIO | None = None,
        interval: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = self.stream.isatty()
        self.interval = interval
        self.clock = clock
        self.began = clock()
        self.first: float | None = None  # steps already done when this process began
        self.shown_at: float | None = None
        self.drawn = False

    def __call__(self, done: float, total: int, detail: str = "") -> None:
        now = self.clock()
        if self.first is None:
            self.first = done
            self.began = now
        finished = done >= total
        wait = _REDRAW if self.terminal else self.interval
        if not finished and self.shown_at is not None and now - self.shown_at < wait:
            return
        if not self.terminal and self.shown_at is None and not finished:
            self.shown_at = now  # the first plain line comes after one interval
            return
        self.shown_at = now
        self._show(self.line(done, total, detail, now))

    def line(self, done: float, total: int, detail: str, now: float) -> str:
        fraction = done / total if total else 1.0
        elapsed = now - self.began
        progressed = done - (self.first or 0.0)
        parts = [f"{self.label}: step {int(done):,}/{total:,} ({fraction:.0%})"]
        if detail:
            parts.append(detail)
        parts.append(f"{_duration(elapsed)} elapsed")
        if progressed > 0 and done < total:
            parts.append(f"~{_duration(elapsed / progressed * (total - done))} left")
        text = ", ".join(parts)
        if self.terminal:
            filled = round(_BAR * fraction)
            text = f"[{'#' * filled}{'-' * (_BAR - filled)}] {text}"
        return text

    def _show(self, text: str) -> None:
        if self.terminal:
            self.stream.write(f"\r\x1b[K{text}")
            self.drawn = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False
