"""``drasnap bench``: the seed's claim measured side by side, printed as tables or JSON."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from drasnap.tools.bench.names import (
    BACKENDS,
    CA_CASES,
    SCENARIO_WORKLOADS,
    SIZES_WORKLOAD,
    TIMELINE_BACKEND,
    TIMELINE_WORKLOADS,
    UPSTREAM_WORKLOADS,
)
from drasnap.tools.errors import CommandError
from drasnap.tools.options import json_option, seed_option
from drasnap.tools.output import echo_json
from drasnap.tools.output_paths import check_output, writing
from drasnap.tools.progress import milestone

if TYPE_CHECKING:
    from drasnap.tools.bench.suite import Row

WORKLOADS = (
    "store",
    "snapshot",
    *SCENARIO_WORKLOADS,
    "scaling",
    SIZES_WORKLOAD,
    *UPSTREAM_WORKLOADS,
    *TIMELINE_WORKLOADS,
)
# Run only when named: at full size scale-down-sizes simulates clusters of up to 12,800 nodes
# per backend, and the upstream shapes build fleets of up to 5,000.
DEFAULT_WORKLOADS = ("store", "snapshot", *SCENARIO_WORKLOADS, "scaling")
DEFAULT_BACKENDS = "deepcopy,memory,sqlite,sqlite-behind,sqlite-nojournal"


@click.command(name="bench")
@click.argument("workloads", nargs=-1)
@click.option(
    "--backends",
    default=None,
    help="Comma-separated: deepcopy, memory, sqlite, sqlite-behind, sqlite-nojournal, postgres "
    f"[default: {DEFAULT_BACKENDS}; for timeline and timeline-sizes: {TIMELINE_BACKEND}].",
)
@click.option("--quick", is_flag=True, help="Smaller sizes, for a fast look (--size quick).")
@click.option(
    "--size",
    type=click.Choice(["full", "quick", "tiny"]),
    default=None,
    help="Workload sizes: full (upstream's), quick, or tiny (a smoke test) [default: full].",
)
@click.option(
    "--repeat",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Timed runs per backend.",
)
@seed_option("Seed of the generated workloads.")
@click.option("--memory/--no-memory", default=True, help="Also measure peak memory (tracemalloc).")
@json_option
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), help="Write a PNG chart.")
@click.option(
    "--postgres-url",
    metavar="URL",
    help="Also run on PostgreSQL (postgresql+psycopg://...) in a store that is dropped after.",
)
@click.option(
    "--against-ca",
    "against_ca",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    metavar="PATH",
    help="Also run upstream's RunOnce benchmarks with this compiled cluster-autoscaler core/bench "
    "test binary, alternated with the drasnap simulate preset of each (--repeat times each), "
    "and compare time, peak RSS and outcome. No workload named: only this comparison.",
)
@click.option(
    "--alibaba-dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="alibaba: the downloaded cluster-trace-gpu-v2023 folder (openb_pod_list_default.csv, "
    "openb_node_list_all_node.csv).",
)
@click.option(
    "--ca-bench",
    metavar="NAMES",
    help=f"With --against-ca: the upstream benchmarks, comma-separated [{','.join(CA_CASES)}].",
)
def bench_cmd(
    workloads: tuple[str, ...],
    backends: str | None,
    quick: bool,
    size: str | None,
    repeat: int,
    seed: int,
    memory: bool,
    as_json: bool,
    plot: Path | None,
    postgres_url: str | None,
    against_ca: Path | None,
    alibaba_dir: Path | None,
    ca_bench: str | None,
) -> None:
    """Measure drasnap against the deep-copy snapshot it replaces, and against MemoryStore.

    Workloads (no workload: all of them): store and snapshot (per-operation µs, MemoryStore
    vs the SQLite store); schedule-revert, scale-up, scale-up-partitionable (scale-up on
    GPUs offered whole and as slices through shared counters), scale-down (the same workload
    on every backend, interleaved, median of --repeat runs, ratios to deepcopy and memory); scaling
    (fork+revert as the store grows, commit/revert as the changed keys grow, peak memory).
    scale-down-sizes runs only when named: the scale-down at 800 to 12,800 nodes (--size quick:
    200 to 1,600) and the fitted exponent of its growth (1 = linear). Also only when named,
    upstream benchmarks the compiled cluster-autoscaler binary does not hold, in their shapes,
    each checked for upstream's outcome: schedule-revert-configs (the 60 configurations of
    BenchmarkScheduleRevert, kubernetes/autoscaler PR #8090), binpacking-dra-1000 and
    binpacking-dra-5000 (BenchmarkBinpackingEstimateDRA's 1,000 nodes / 4,000 claims / 200
    pending pods and 5,000 / 20,000 / 500).

    The timeline's (issues 35, 36), only when named, on sqlite-behind unless --backends is
    given: timeline (a simulated day of 1,000 nodes in CPU and GPU node groups under a
    generated trace, --size quick: an hour of arrivals: wall time, per simulated day, loops
    run, per loop, bindings per second); timeline-sizes (that day at 250 to 2,000 nodes with
    the load per node kept, and at x1, x2, x4 the arrivals, each with its growth exponent);
    alibaba (--alibaba-dir DIR: the first 1/8, 1/4, 1/2 and all of Alibaba's
    cluster-trace-gpu-v2023 default pod list, each a drasnap simulate timeline process on a
    SQLite file: time, peak RSS of the run and its writer, growth exponent).

    --against-ca PATH runs upstream's BenchmarkRunOnceScaleUp, ScaleUpDRA, ScaleDown and
    ScaleDownDRA (the compiled cluster-autoscaler core/bench package) and the matching
    drasnap simulate command (scale-up --no-dra, scale-up, scale-down --no-dra, scale-down; a
    process each, on a fresh SQLite file), alternately, and reports for each CA's ns/op in
    seconds, drasnap's wall time, both peak RSS, their ratio, and whether drasnap's outcome
    (nodes added or removed) is upstream's: a different one fails the command.

    Examples:

        drasnap bench schedule-revert scale-down --quick

        drasnap bench --against-ca ./ca-runonce-bench --ca-bench ScaleUpDRA,ScaleDownDRA

        drasnap bench --json --plot bench.png
    """
    unknown = [w for w in workloads if w not in WORKLOADS]
    if unknown:
        raise click.BadParameter(
            f"unknown workload {unknown[0]!r}: choose from {', '.join(WORKLOADS)}",
            param_hint="'WORKLOADS'",
        )
    if ca_bench is not None and against_ca is None:
        raise click.UsageError("--ca-bench goes with --against-ca")
    ca_cases = None
    if against_ca is not None:
        from drasnap.tools.bench.against_ca import choose as choose_ca_cases

        try:
            ca_cases = choose_ca_cases(ca_bench or ",".join(CA_CASES))
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--ca-bench'") from exc
        if not os.access(against_ca, os.X_OK):
            raise click.BadParameter(f"{against_ca} is not executable", param_hint="'--against-ca'")
    chosen = list(workloads or ([] if against_ca else DEFAULT_WORKLOADS))
    if "alibaba" in chosen and alibaba_dir is None:
        raise click.UsageError("the alibaba workload needs --alibaba-dir DIR")
    if alibaba_dir is not None and "alibaba" not in chosen:
        raise click.UsageError("--alibaba-dir goes with the alibaba workload")
    if alibaba_dir is not None:
        from drasnap.tools.bench.alibaba_bench import check_folder

        check_folder(alibaba_dir)  # (before anything runs)
    if backends is None:
        only_timeline = chosen and all(w in TIMELINE_WORKLOADS for w in chosen)
        backends = TIMELINE_BACKEND if only_timeline else DEFAULT_BACKENDS
    names = [b.strip() for b in backends.split(",") if b.strip()]
    if postgres_url and "postgres" not in names:
        names.append("postgres")
    bad = [b for b in names if b not in BACKENDS]
    if bad:
        raise click.BadParameter(
            f"unknown backend {bad[0]!r}: choose from {', '.join(BACKENDS)}",
            param_hint="'--backends'",
        )
    if "postgres" in names and not postgres_url:
        raise click.UsageError("the postgres backend needs --postgres-url")
    if postgres_url:
        _check_postgres_url(postgres_url)
    if plot is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError as exc:
            raise CommandError("--plot needs matplotlib: pip install 'drasnap[bench]'") from exc
        check_output(plot, "--plot")  # (before the benchmark, which takes minutes)
    from drasnap.tools.bench import report, snapshot_bench, store_bench
    from drasnap.tools.bench.sizes import run_sizes
    from drasnap.tools.bench.suite import run_scaling, run_scenarios
    from drasnap.tools.bench.timing import machine, set_scale

    size = size or ("quick" if quick else "full")
    set_scale(0.01 if size == "tiny" else 1.0)

    results: list[dict[str, Any]] = []
    tables: list[str] = []
    info: dict[str, str] = {}
    if "store" in chosen:
        rows, info["database"] = store_bench.run(
            quick=size != "full", progress=milestone, postgres_url=postgres_url
        )
        results += report.micro_json("store", rows)
        tables += ["store operations", *report.micro_table(rows, postgres_url is not None), ""]
    if "snapshot" in chosen:
        rows = snapshot_bench.run(quick=size != "full", progress=milestone)
        results += report.micro_json("snapshot", rows)
        tables += ["DRA snapshot operations", *report.micro_table(rows, False), ""]

    def scenario_table(workloads: list[str]) -> list[Row]:
        return run_scenarios(
            workloads,
            names,
            size=size,
            repeat=repeat,
            seed=seed,
            memory=memory,
            postgres_url=postgres_url,
            progress=milestone,
        )

    scenario_rows: list[Row] = []
    scenarios = [w for w in chosen if w in SCENARIO_WORKLOADS]
    if scenarios:
        scenario_rows = scenario_table(scenarios)
        results += [r.as_json() for r in scenario_rows]
        tables += ["workloads", *report.suite_table(scenario_rows), ""]
    upstream = [w for w in chosen if w in UPSTREAM_WORKLOADS]
    if upstream:
        from drasnap.tools.bench.upstream_workloads import NOTE

        upstream_rows = scenario_table(upstream)
        results += [r.as_json() for r in upstream_rows]
        tables += ["upstream shapes", *report.suite_table(upstream_rows), NOTE, ""]
    scaling_rows: list[Row] = []
    if "scaling" in chosen:
        scaling_rows = run_scaling(
            names, size=size, memory=memory, postgres_url=postgres_url, progress=milestone
        )
        results += [r.as_json() for r in scaling_rows]
        tables += ["scaling", *report.suite_table(scaling_rows), ""]
    if SIZES_WORKLOAD in chosen:
        sizes_rows = run_sizes(
            names,
            size=size,
            repeat=repeat,
            seed=seed,
            postgres_url=postgres_url,
            progress=milestone,
        )
        results += [r.as_json() for r in sizes_rows]
        tables += [SIZES_WORKLOAD, *report.suite_table(sizes_rows), ""]
    timeline_rows: list[Row] = []
    if "timeline" in chosen or "timeline-sizes" in chosen:
        from drasnap.tools.bench import timeline_bench

        if "timeline" in chosen:
            timeline_rows += timeline_bench.run_timeline(
                names,
                size=size,
                repeat=repeat,
                seed=seed,
                memory=memory,
                postgres_url=postgres_url,
                progress=milestone,
            )
        if "timeline-sizes" in chosen:
            timeline_rows += timeline_bench.run_timeline_sizes(
                names,
                size=size,
                repeat=repeat,
                seed=seed,
                postgres_url=postgres_url,
                progress=milestone,
            )
        results += [r.as_json() for r in timeline_rows]
        tables += ["timelines", *timeline_bench.table(timeline_rows), ""]
    if alibaba_dir is not None:
        from drasnap.tools.bench import alibaba_bench

        alibaba_rows = alibaba_bench.run_alibaba(
            alibaba_dir, size=size, repeat=repeat, progress=milestone
        )
        results += [r.as_json() for r in alibaba_rows]
        tables += ["alibaba cluster-trace-gpu-v2023", *alibaba_bench.table(alibaba_rows), ""]
    comparisons: list[Any] = []
    if against_ca is not None and ca_cases:
        from drasnap.tools.bench import against_ca as ca

        comparisons = ca.compare(
            str(against_ca), ca_cases, size=size, repeat=repeat, progress=milestone
        )
        tables += [*ca.table(comparisons, binary=str(against_ca), size=size, repeat=repeat), ""]
    m = machine(**info)
    if plot is not None:
        with writing(plot):
            report.plot(plot, scenario_rows, scaling_rows)
        milestone(f"chart written to {plot}")
    if as_json:
        settings = {"size": size, "repeat": repeat, "seed": seed, "backends": names}
        report_json: dict[str, Any] = {"machine": m, "settings": settings, "results": results}
        if against_ca is not None:
            report_json["against_ca"] = [c.as_json() for c in comparisons]
        echo_json(report_json)
        _fail_on_mismatch(comparisons)
        return
    for line in tables:
        click.echo(line)
    click.echo(
        f"machine: {m['cpu']}, {m['cores']} cores, {m['system']}, Python {m['python']}"
        + (f", {m['database']}" if m.get("database") else "")
        + f"; size {size}, {repeat} run(s) per backend"
    )
    _fail_on_mismatch(comparisons)


def _check_postgres_url(url: str) -> None:
    """A URL that is not PostgreSQL's is refused before anything runs (a file path would be
    taken as a SQLite file: benchmarked, labelled PostgreSQL, and left behind)."""
    from drasnap.store import StoreError, shown_target, target_dialect

    try:
        dialect = target_dialect(url)
    except StoreError as exc:
        raise click.BadParameter(str(exc), param_hint="'--postgres-url'") from exc
    if dialect != "postgresql":
        raise click.BadParameter(
            f"{shown_target(url)!r} is not a PostgreSQL URL: give "
            "postgresql+psycopg://USER[:PASSWORD]@HOST[:PORT]/DATABASE",
            param_hint="'--postgres-url'",
        )


def _fail_on_mismatch(comparisons: list[Any]) -> None:
    failed = [c.case.benchmark for c in comparisons if c.failures]
    if failed:
        raise CommandError(f"runs failed for {', '.join(failed)} (the table says which)")
    wrong = [c.case.benchmark for c in comparisons if not c.matches]
    if wrong:
        raise CommandError(f"drasnap's outcome is not upstream's for {', '.join(wrong)}")
