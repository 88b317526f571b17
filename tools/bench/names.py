"""The names ``drasnap bench`` takes (workloads, backends), apart from the workloads
themselves: the command reads them while it parses, before any workload is imported."""

from __future__ import annotations

BACKENDS = ("deepcopy", "memory", "sqlite", "sqlite-behind", "sqlite-nojournal", "postgres")
SCENARIO_WORKLOADS = ("schedule-revert", "scale-up", "scale-up-partitionable", "scale-down")
SIZES_WORKLOAD = "scale-down-sizes"
#: Upstream's RunOnce benchmarks ``--against-ca`` runs (``BenchmarkRunOnce<name>``), in order.
CA_CASES = ("ScaleUp", "ScaleUpDRA", "ScaleDown", "ScaleDownDRA")
#: Workloads in the shape of upstream benchmarks the compiled binary does not hold
#: (tools/bench/upstream_workloads.py): run only when named.
UPSTREAM_WORKLOADS = ("schedule-revert-configs", "binpacking-dra-1000", "binpacking-dra-5000")
#: The timeline's workloads (tools/bench/timeline_bench.py, alibaba_bench.py): run only when
#: named (a simulated day of 1,000 nodes; a production trace the user downloads).
TIMELINE_WORKLOADS = ("timeline", "timeline-sizes", "alibaba")
#: Their backend unless --backends is given: the store ``drasnap simulate`` opens a run on.
TIMELINE_BACKEND = "sqlite-behind"
