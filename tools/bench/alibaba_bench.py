"""``drasnap bench alibaba --alibaba-dir DIR``: Alibaba's ``cluster-trace-gpu-v2023`` under the
timeline, as issue 36 sets its targets (the whole default pod list, durable, in at most 5
minutes and 2 GB for the run and its writer process together; growth exponent at most 1.1).

``DIR`` is a copy the user downloaded (alibaba/clusterdata, ``cluster-trace-gpu-v2023``): its
``openb_pod_list_default.csv`` and ``openb_node_list_all_node.csv``. The first 1/8, 1/4, 1/2
and all of the pod list's rows (its header kept; the list is in creation order, so a prefix is
the trace's beginning) are written to a temporary folder, and each is run as the user runs it::

    drasnap simulate timeline SIM.db --trace alibaba-gpu-v2023:PODS.csv \\
        --trace-nodes openb_node_list_all_node.csv --json

a process of its own on a fresh SQLite file (write-behind, as ``simulate`` opens its runs), its
wall time and the peak resident set of its process tree (the run and its writer together:
``against_ca.run_measured``) measured, ``repeat`` times; the growth exponent is fitted on the
medians against the rows run (``sizes.growth_exponent``). ``--size quick`` and ``tiny`` run the
same fractions of the first 1/8 and 1/64 of the rows (a look, not the target's figure).
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from drasnap.tools.bench.against_ca import run_drasnap
from drasnap.tools.bench.sizes import growth_exponent
from drasnap.tools.bench.suite import Row
from drasnap.tools.errors import CommandError
from drasnap.tools.progress import Milestones

WORKLOAD = "alibaba"
PODS = "openb_pod_list_default.csv"
NODES = "openb_node_list_all_node.csv"
FRACTIONS = (8, 4, 2, 1)  # the first 1/8, 1/4, 1/2 and all of the rows
#: The share of the pod list a size runs (its fractions are of that share).
SHARE = {"full": 1, "quick": 8, "tiny": 64}
TARGET_SECONDS = 300
TARGET_BYTES = 2_000_000_000
TARGET_EXPONENT = 1.1


def check_folder(folder: Path) -> tuple[Path, Path]:
    """The pod list and node list in ``folder``, or a one-line error naming what is missing."""
    missing = [name for name in (PODS, NODES) if not (folder / name).is_file()]
    if missing:
        raise CommandError(
            f"--alibaba-dir {folder}: no {' or '.join(missing)} there (download "
            "cluster-trace-gpu-v2023 from github.com/alibaba/clusterdata and give its folder)"
        )
    return folder / PODS, folder / NODES


def _prefix(lines: list[str], rows: int, path: Path) -> Path:
    path.write_text("".join([lines[0], *lines[1 : rows + 1]]))
    return path


def run_alibaba(folder: Path, *, size: str, repeat: int, progress: Milestones) -> list[Row]:
    """One row per fraction (median of ``repeat`` processes), then the exponent's row."""
    pods, nodes = check_folder(folder)
    lines = pods.read_text().splitlines(keepends=True)
    total = (len(lines) - 1) // SHARE[size]
    counts = [max(1, total // f) for f in FRACTIONS]
    rows: list[Row] = []
    medians: list[float] = []
    with tempfile.TemporaryDirectory(prefix="drasnap-bench-alibaba-") as tmp:
        for fraction, count in zip(FRACTIONS, counts, strict=True):
            part = _prefix(lines, count, Path(tmp) / f"pods-{count}.csv")
            share = f" (1/{fraction})" if fraction > 1 else " (all)"
            label = f"{WORKLOAD} @ {count:,} pod rows{share}"
            seconds: list[float] = []
            peaks: list[int] = []
            bound = 0
            digest = ""
            for r in range(repeat):
                progress(f"{label}: run {r + 1}/{repeat}")
                words = ["timeline", "--trace", f"alibaba-gpu-v2023:{part}"]
                measured, data = run_drasnap([*words, "--trace-nodes", str(nodes)])
                seconds.append(measured.wall_s)
                peaks.append(measured.peak_rss)
                bound = int(data.get("pods_bound") or 0)
                digest = str(data.get("state_digest") or "")
            median = statistics.median(seconds)
            medians.append(median)
            rows.append(
                Row(
                    label,
                    "sqlite-behind",
                    median,
                    seconds,
                    max(peaks),
                    state_digest=digest,
                    figures={"pod_rows": count, "bindings": bound},
                )
            )
    k = round(growth_exponent(counts, medians), 3)
    rows.append(
        Row(
            f"{WORKLOAD}: growth exponent {k:.2f} ({counts[0]:,}-{counts[-1]:,} pod rows)",
            "sqlite-behind",
            sum(medians),
            medians,
            growth_exponent=k,
        )
    )
    return rows


def table(rows: list[Row]) -> list[str]:
    """Time and peak RSS (process tree) per fraction, beside issue 36's targets."""
    width = max(len(r.workload) for r in rows)
    lines = [f"{'workload':<{width}}  {'median s':>9}  {'peak RSS MB':>11}  {'bindings':>8}"]
    for r in rows:
        if r.growth_exponent is not None:
            lines.append(f"{r.workload:<{width}}")
            continue
        peak = f"{(r.peak_bytes or 0) / 1e6:,.0f}"
        bound = int((r.figures or {}).get("bindings", 0))
        lines.append(f"{r.workload:<{width}}  {r.median_s:>9.1f}  {peak:>11}  {bound:>8,}")
    lines.append(
        f"issue 36's targets, the whole default list: <= {TARGET_SECONDS} s, "
        f"<= {TARGET_BYTES / 1e9:.0f} GB, exponent <= {TARGET_EXPONENT}"
    )
    return lines
