"""Progress of a long run: a line every few seconds when stderr is not a terminal, a bar with
what is done and the time left when it is; a capture's objects counted per kind; a bench's
milestones."""

from __future__ import annotations

import io

import pytest
from drasnap.tools.progress import ObjectCounts, Progress, milestone


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_plain_line_every_interval_with_the_time_left() -> None:
    out, clock = io.StringIO(), Clock()
    progress = Progress("scale-down-1", stream=out, interval=5.0, clock=clock)
    for step in range(0, 101):
        clock.now = 100.0 + step * 0.5  # two steps a second
        progress(step, 100, f"{step // 2} nodes removed")
    lines = out.getvalue().splitlines()
    # One line after each 5 s of work (t = 5, 10, ... 45), and the final one.
    assert len(lines) == 10
    assert lines[0] == ("scale-down-1: step 10/100 (10%), 5 nodes removed, 5s elapsed, ~45s left")
    assert lines[-1] == "scale-down-1: step 100/100 (100%), 50 nodes removed, 50s elapsed"


def test_a_resumed_run_counts_the_time_left_from_its_own_pace() -> None:
    out, clock = io.StringIO(), Clock()
    progress = Progress("r", stream=out, interval=1.0, clock=clock)
    progress(60, 100)  # resumed at step 60
    clock.now += 2.0
    progress(70, 100)
    assert out.getvalue().splitlines() == ["r: step 70/100 (70%), 2s elapsed, ~6s left"]


def test_a_terminal_gets_a_bar_redrawn_in_place() -> None:
    out, clock = Terminal(), Clock()
    progress = Progress("scale-up-1", stream=out, clock=clock)
    progress(0.0, 2, "group-0: 0 nodes, 0 pods")
    clock.now += 0.05
    progress(0.5, 2, "group-0: 250 nodes")  # too soon: not drawn
    clock.now += 0.2
    progress(1.0, 2, "group-0: 500 nodes")
    progress.close()
    frames = out.getvalue().split("\r\x1b[K")[1:]
    assert len(frames) == 2
    assert frames[1] == (
        "[############------------] scale-up-1: step 1/2 (50%), group-0: 500 nodes, 0s elapsed,"
        " ~0s left\n"
    )


def test_progress_on_a_terminal_counts_objects_per_kind(capsys: pytest.CaptureFixture[str]) -> None:
    progress = ObjectCounts()
    for kind, count in (("Node", 2), ("Node", 4), ("Pod", 2)):
        progress(kind, count)
    progress.close()
    assert capsys.readouterr().err == "\rNode: 2 objects\rNode: 4 objects\n\rPod: 2 objects\n"


def test_objects_are_counted_on_a_terminal_only_and_never_beside_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.stderr", Terminal())
    assert isinstance(ObjectCounts.on_terminal(as_json=False), ObjectCounts)
    assert ObjectCounts.on_terminal(as_json=True) is None
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert ObjectCounts.on_terminal(as_json=False) is None


def test_a_milestone_is_one_line_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    milestone("fork+revert at 1000 keys")
    assert capsys.readouterr() == ("", "... fork+revert at 1000 keys\n")
