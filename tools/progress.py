"""Progress of a long command on stderr, drawn here for every command, in three shapes (each
library function reports its own way, and each shape draws one):

- :class:`Progress`, a run of counted steps (``simulate``, a
  ``snapshot.simulation.ProgressCallback``): on a terminal a bar redrawn in place (at most ten
  times a second) with the steps done, what the run has decided so far (nodes removed or
  added) and the time left. When stderr is not a terminal (CI, ``nohup``, a Job's log) a plain
  line is written every ``interval`` seconds, so a run that takes an hour shows it is alive
  without flooding the log.
- :class:`ObjectCounts`, a live cluster listed kind by kind (``capture``, and ``record``'s
  first capture): the objects of each kind so far, redrawn in place, on a terminal only.
- :func:`milestone`, a long command that counts no steps (``bench``'s workloads, ``replay``'s
  records every 100,000): one ``... what`` line at each.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

import click

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


class ObjectCounts:
    """Per kind, the objects listed so far (``capture``'s ``progress(kind, count)``), redrawn in
    place: a line per kind."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.kind = ""

    @classmethod
    def on_terminal(cls, as_json: bool) -> ObjectCounts | None:
        """Counts when stderr is a terminal and the command prints no JSON, else None (drawn
        in place, they would only clutter a log)."""
        return cls() if sys.stderr.isatty() and not as_json else None

    def __call__(self, kind: str, count: int) -> None:
        if kind != self.kind and self.kind:
            self.stream.write("\n")
        self.kind = kind
        self.stream.write(f"\r{kind}: {count} objects")
        self.stream.flush()

    def close(self) -> None:
        if self.kind:
            self.stream.write("\n")
            self.stream.flush()


#: What :func:`milestone` draws: the progress of a command told in words (``bench``'s parts).
Milestones = Callable[[str], None]


def milestone(message: str) -> None:
    """``... message`` on stderr: where a long command has got to."""
    click.echo(f"... {message}", err=True)
