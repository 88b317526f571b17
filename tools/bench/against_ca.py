"""``drasnap bench --against-ca PATH``: upstream's RunOnce benchmarks, run by the compiled
cluster-autoscaler ``core/bench`` test binary, against the ``drasnap simulate`` preset of the
same shape, each as a process of its own, alternately, in one run.

Why both are processes, and the whole ``drasnap simulate`` command: it is what a user runs
(start-up, building the cluster, the durable SQLite store with its write-behind process, the
run), so it is what the comparison is about. Upstream's figure is its ``ns/op``: the timed
``RunOnce`` only (set-up excluded, Go's GC switched off during it), parsed from the binary's
output; its process's wall time is reported beside it. A process's peak RSS is the larger of
``os.wait4``'s ``ru_maxrss`` (the largest single process of its tree) and the largest sum of
its tree's resident sets sampled every 50 ms, so drasnap's includes its writer process, which
runs beside it. Alternating (CA then drasnap, then drasnap then CA, ...) spreads a shared
machine's changing load over both.

A passing upstream benchmark is upstream's outcome (its ``verify`` fails the benchmark
otherwise); drasnap's result (nodes added or removed) is checked equal to it. Upstream's
binary has one size; ``--size quick`` and ``tiny`` shrink drasnap's side only (a smoke test:
the ratio is then not like for like, and the table says so).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drasnap.tools.errors import CommandError
from drasnap.tools.progress import Milestones

_SAMPLE_EVERY = 0.05  # seconds between samples of a process tree's resident set
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True)
class Case:
    """One upstream benchmark and the drasnap preset of its shape (``simulate`` words)."""

    name: str  # upstream's, without "BenchmarkRunOnce"
    simulate: tuple[str, ...]
    result: str  # the key of drasnap's JSON result compared
    expected: int  # upstream's ``verify``: its target size, or the nodes marked for deletion
    # Smaller sizes of drasnap's side (--size quick, tiny): extra words and the outcome then.
    smaller: dict[str, tuple[tuple[str, ...], int]] = field(default_factory=dict)

    @property
    def benchmark(self) -> str:
        return f"BenchmarkRunOnce{self.name}"

    def words(self, size: str) -> tuple[tuple[str, ...], int]:
        """drasnap's ``simulate`` words and the outcome expected at ``size``."""
        if size == "full":
            return self.simulate, self.expected
        extra, expected = self.smaller[size]
        return (*self.simulate, *extra), expected


# cluster-autoscaler core/bench/benchmark_runonce_test.go (kubernetes/autoscaler a16f0ae8).
CASES: dict[str, Case] = {
    case.name: case
    for case in (
        Case(
            "ScaleUp",
            ("scale-up", "--no-dra"),
            "nodes_added",
            1000,
            {"quick": (("--pods", "5000"), 100), "tiny": (("--pods", "150"), 3)},
        ),
        Case(
            "ScaleUpDRA",
            ("scale-up",),
            "nodes_added",
            500,
            {"quick": (("--pods", "400"), 50), "tiny": (("--pods", "24"), 3)},
        ),
        Case(
            "ScaleDown",
            ("scale-down", "--no-dra"),
            "nodes_removed",
            1200,
            {"quick": (("--nodes", "200"), 120), "tiny": (("--nodes", "10"), 6)},
        ),
        Case(
            "ScaleDownDRA",
            ("scale-down",),
            "nodes_removed",
            480,
            {"quick": (("--nodes", "80"), 48), "tiny": (("--nodes", "10"), 6)},
        ),
    )
}
_WHAT = {"nodes_added": "nodes added", "nodes_removed": "nodes removed"}


def choose(names: str) -> list[Case]:
    """The cases named, comma-separated (``ScaleUpDRA`` or ``BenchmarkRunOnceScaleUpDRA``)."""
    chosen = []
    for word in (w.strip() for w in names.split(",")):
        if not word:
            continue
        name = word.removeprefix("BenchmarkRunOnce")
        if name not in CASES:
            raise ValueError(f"unknown upstream benchmark {word!r}: choose from {', '.join(CASES)}")
        if CASES[name] not in chosen:
            chosen.append(CASES[name])
    if not chosen:
        raise ValueError(f"no upstream benchmark named: choose from {', '.join(CASES)}")
    return chosen


# -- go test -bench output --------------------------------------------------------------------


@dataclass(frozen=True)
class GoResult:
    name: str
    iterations: int
    ns_per_op: float
    metrics: dict[str, float]  # by unit: "B/op", "allocs/op", ...


_BENCH_LINE = re.compile(
    r"^(?P<name>Benchmark[^\s-]+)(?:-\d+)?\s+(?P<n>\d+)\s+(?P<ns>[0-9.e+]+) ns/op(?P<rest>.*)$"
)
_METRIC = re.compile(r"([0-9.e+]+) (\S+)")


def parse_go_bench(text: str) -> dict[str, GoResult]:
    """The result lines of ``go test -bench`` output, by benchmark name (the ``-N`` of
    GOMAXPROCS dropped)."""
    found = {}
    for line in text.splitlines():
        match = _BENCH_LINE.match(line.strip())
        if match is None:
            continue
        metrics = {unit: float(value) for value, unit in _METRIC.findall(match["rest"])}
        name = match["name"]
        found[name] = GoResult(name, int(match["n"]), float(match["ns"]), metrics)
    return found


# -- running a process ------------------------------------------------------------------------


@dataclass
class Measured:
    wall_s: float
    peak_rss: int  # bytes
    returncode: int
    stdout: str
    stderr: str


def _tree(root: int) -> list[int]:
    """``root`` and its descendants, as /proc lists them now (Linux)."""
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            continue  # gone meanwhile
    return pids


def _resident(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


class _TreeSampler:
    """The largest sum of a process tree's resident sets, sampled on a thread."""

    def __init__(self, root: int) -> None:
        self.peak = 0
        self._root = root
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rss-sampler", daemon=True)
        if os.path.isdir("/proc"):
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(_resident(p) for p in _tree(self._root)))
            self._stop.wait(_SAMPLE_EVERY)

    def stop(self) -> int:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        return self.peak


def run_measured(argv: Sequence[str], *, cwd: str | None = None) -> Measured:
    """Run ``argv`` to its end; its wall time, peak RSS (module docstring) and output."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        began = time.perf_counter()
        proc = subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd
        )
        sampler = _TreeSampler(proc.pid)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            proc.kill()
            proc.wait()
            sampler.stop()
            raise
        wall = time.perf_counter() - began
        sampled = sampler.stop()
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        # ru_maxrss is in kilobytes on Linux (bytes on macOS).
        maxrss = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
        out.seek(0)
        err.seek(0)
        return Measured(
            wall,
            max(maxrss, sampled),
            proc.returncode,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
        )


def _reason(text: str) -> str:
    """The telling line of a failed run's message (not go test's closing ``FAIL``)."""
    lines = [line.strip() for line in text.strip().splitlines()]
    told = [x for x in lines if x and x != "FAIL" and not x.startswith(("FAIL\t", "exit status"))]
    return told[-1] if told else "failed"


def _tail(text: str, lines: int = 8) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def ca_command(binary: str, case: Case) -> list[str]:
    return [
        binary,
        "-test.run",
        "XXX",
        "-test.bench",
        f"^{case.benchmark}$",
        "-test.benchtime",
        "1x",
        "-test.benchmem",
    ]


def drasnap_command() -> list[str]:
    """The ``drasnap`` command of this installation (its script, else ``python -m``)."""
    script = Path(sys.executable).with_name("drasnap")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "drasnap.tools"]


def run_ca(binary: str, case: Case) -> tuple[Measured, GoResult]:
    measured = run_measured(ca_command(binary, case))
    result = parse_go_bench(measured.stdout).get(case.benchmark)
    if measured.returncode != 0 or result is None:
        raise CommandError(
            f"{binary} {case.benchmark} failed (exit {measured.returncode}):\n"
            + _tail(measured.stdout + measured.stderr)
        )
    return measured, result


def run_drasnap(words: Sequence[str]) -> tuple[Measured, dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="drasnap-against-ca-") as folder:
        db = str(Path(folder) / "sim.db")
        argv = [*drasnap_command(), "simulate", *words, db, "--json"]
        measured = run_measured(argv, cwd=folder)
    if measured.returncode != 0:
        raise CommandError(
            f"drasnap simulate {' '.join(words)} failed (exit {measured.returncode}):\n"
            + _tail(measured.stderr)
        )
    data: dict[str, Any] = json.loads(measured.stdout)
    return measured, data


# -- the comparison ---------------------------------------------------------------------------


@dataclass
class Comparison:
    case: Case
    words: tuple[str, ...]
    expected: int
    ca_s: list[float] = field(default_factory=list)  # ns/op, in seconds
    ca_wall_s: list[float] = field(default_factory=list)
    ca_peak: list[int] = field(default_factory=list)
    ca_metrics: dict[str, float] = field(default_factory=dict)
    drasnap_wall_s: list[float] = field(default_factory=list)
    drasnap_run_s: list[float] = field(default_factory=list)  # its result's "seconds"
    drasnap_peak: list[int] = field(default_factory=list)
    outcomes: list[int] = field(default_factory=list)
    digests: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # a run that failed, either side

    @property
    def matches(self) -> bool:
        return not self.failures and all(o == self.expected for o in self.outcomes)

    @property
    def ratio(self) -> float | None:
        """CA's s/op over drasnap's wall time (medians): above 1, drasnap took less."""
        if not self.ca_s or not self.drasnap_wall_s:
            return None
        return statistics.median(self.ca_s) / statistics.median(self.drasnap_wall_s)

    def as_json(self) -> dict[str, Any]:
        return {
            "benchmark": self.case.benchmark,
            "drasnap_command": ["simulate", *self.words],
            "ca_s_per_op": _median(self.ca_s),
            "ca_samples_s": self.ca_s,
            "ca_wall_s": _median(self.ca_wall_s),
            "ca_peak_rss_bytes": max(self.ca_peak, default=None),
            "ca_metrics": self.ca_metrics,
            "drasnap_wall_s": _median(self.drasnap_wall_s),
            "drasnap_samples_s": self.drasnap_wall_s,
            "drasnap_run_s": _median(self.drasnap_run_s),
            "drasnap_peak_rss_bytes": max(self.drasnap_peak, default=None),
            "ratio_ca_over_drasnap": self.ratio,
            "result": self.case.result,
            "expected": self.expected,
            "outcomes": self.outcomes,
            "matches": self.matches,
            "failures": self.failures,
            "state_digests": sorted(set(self.digests)),
        }


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def compare(
    binary: str, cases: list[Case], *, size: str, repeat: int, progress: Milestones
) -> list[Comparison]:
    """Each case's upstream benchmark and drasnap preset, ``repeat`` times each, alternated."""
    rows = []
    for case in cases:
        words, expected = case.words(size)
        rows.append(Comparison(case, words, expected))
    for r in range(repeat):
        for row in rows:
            order = ("ca", "drasnap") if r % 2 == 0 else ("drasnap", "ca")
            for side in order:
                progress(f"{row.case.benchmark}: run {r + 1}/{repeat}, {side}")
                try:
                    _run_side(binary, row, side)
                except CommandError as exc:
                    # Kept, and the next runs go on: one failure (upstream's binpacking hits
                    # its 60 s limit on a loaded machine) need not lose a long comparison.
                    progress(str(exc))
                    row.failures.append(f"{side}: {_reason(str(exc))}")
    return rows


def _run_side(binary: str, row: Comparison, side: str) -> None:
    if side == "ca":
        measured, result = run_ca(binary, row.case)
        row.ca_s.append(result.ns_per_op / 1e9)
        row.ca_wall_s.append(measured.wall_s)
        row.ca_peak.append(measured.peak_rss)
        row.ca_metrics = result.metrics
    else:
        measured, data = run_drasnap(row.words)
        row.drasnap_wall_s.append(measured.wall_s)
        row.drasnap_run_s.append(float(data["seconds"]))
        row.drasnap_peak.append(measured.peak_rss)
        row.outcomes.append(int(data[row.case.result]))
        row.digests.append(str(data["state_digest"]))


def _gb(values: list[int]) -> str:
    return f"{max(values) / 1e9:.2f} GB" if values else "—"


def _s(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s" if values else "—"


def table(rows: list[Comparison], *, binary: str, size: str, repeat: int) -> list[str]:
    """The comparison as text lines."""
    header = (
        "upstream",
        "drasnap command",
        "CA s/op",
        "CA wall",
        "CA peak RSS",
        "drasnap wall",
        "(its run)",
        "drasnap peak RSS",
        "CA/drasnap",
        "outcome",
    )
    body = []
    for row in rows:
        what = _WHAT[row.case.result]
        got = ", ".join(str(o) for o in sorted(set(row.outcomes)))
        if row.failures:
            outcome = "FAILED: " + "; ".join(row.failures)
        elif row.matches:
            outcome = f"{row.expected} {what}, as upstream"
        else:
            outcome = f"MISMATCH: {got} {what}, upstream {row.expected}"
        ratio = row.ratio
        body.append(
            (
                row.case.benchmark,
                " ".join(("simulate", *row.words)),
                _s(row.ca_s),
                _s(row.ca_wall_s),
                _gb(row.ca_peak),
                _s(row.drasnap_wall_s),
                _s(row.drasnap_run_s),
                _gb(row.drasnap_peak),
                "—" if ratio is None else f"{ratio:.2f}x",
                outcome,
            )
        )
    widths = [max(len(r[i]) for r in (header, *body)) for i in range(len(header))]
    lines = [f"upstream RunOnce benchmarks ({binary}) against drasnap simulate"]
    for r in (header, *body):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())
    lines += [
        f"medians of {repeat} run(s) each, CA and drasnap alternated; CA s/op: upstream's ns/op "
        "(its timed RunOnce only: set-up excluded, Go's GC off); CA wall: its whole process; "
        "drasnap wall: the whole command (start-up, cluster, durable SQLite store and its writer "
        "process), (its run): the result's seconds; peak RSS: the process tree's, summed "
        "(drasnap's writer included), the largest of the runs; CA/drasnap: CA s/op over "
        "drasnap wall (above 1: drasnap took less)",
    ]
    if size != "full":
        lines.append(
            f"size {size}: drasnap's side is smaller than upstream's (the binary has one size): "
            "the ratios are not like for like"
        )
    return lines
