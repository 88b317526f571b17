"""A run's settings: what it simulates, its sizes and their limits, checked before anything is
built or written. Light on purpose: the command line reads its choices and limits from here
while it parses, before any heavy module is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from drasnap.snapshot.autoscaler.expander_names import EXPANDERS
from drasnap.snapshot.errors import ScenarioError
from drasnap.snapshot.k8s.features import resolve_feature_gates
from drasnap.snapshot.simulation.plans import PLANS

__all__ = [
    "ALIBABA",
    "CA_FLAGS",
    "DEVICES",
    "EXPANDERS",
    "LIMITS",
    "NO_DRA_SIZES",
    "ON_GIVEN_CLUSTER",
    "SCENARIOS",
    "SCORING",
    "TIMELINE_CHOICES",
    "TIMELINE_FLAGS",
    "TIMELINE_LIMITS",
    "TIMELINE_SETTINGS",
    "UNMODELLED_CA_FLAGS",
    "UNMODELLED_TIMELINE",
    "ProgressCallback",
    "Settings",
    "StopRequest",
    "refused_settings",
    "settings_options",
]

ProgressCallback = Callable[[float, int, str], None]
"""``report(done, total, detail)``: ``done`` steps of ``total`` (fractions within a step)."""

StopRequest = Callable[[], int | None]
"""Asked at every step boundary: the number of a signal that asked the run to stop, or None."""


#: The scenarios' names: those with a plan type.
SCENARIOS = tuple(PLANS)
#: The settings only ``autoscale`` has: left out of the other scenarios' records, so their
#: runs (and state digests) stay what they were.
#: The cluster-autoscaler flags ``autoscale`` takes besides ``--expander`` and
#: ``--scale-down-utilization-threshold``, by CA's own names and with CA's defaults
#: (``cluster-autoscaler/config/flags/flags.go``): setting -> (default, what it decides).
CA_FLAGS: dict[str, tuple[int | bool, str]] = {
    "max_nodes_per_scaleup": (1000, "at most this many nodes added in one scale-up"),
    "max_scale_down_parallelism": (
        10,
        "at most this many nodes deleted in one loop (empty and drained together)",
    ),
    "max_drain_parallelism": (1, "at most this many of a loop's deletions drain pods"),
    "expendable_pods_priority_cutoff": (
        -10,
        "pods of a priority under this are ignored: they trigger no scale-up and keep no node",
    ),
    "skip_nodes_with_system_pods": (
        True,
        "a kube-system pod (not a DaemonSet's, not mirrored) blocks its node's removal",
    ),
    "skip_nodes_with_local_storage": (
        True,
        "a pod with local storage (emptyDir, hostPath) blocks its node's removal",
    ),
    "skip_nodes_with_custom_controller_pods": (
        True,
        "a pod whose controller is of a kind CA does not know blocks its node's removal (CA "
        "also looks the controller up; drasnap takes it to exist)",
    ),
}
#: The timeline's flags (``drasnap simulate timeline``, docs/timelines.md 2.1): durations as Go
#: writes them (``10m0s``), by the cluster-autoscaler's names with its defaults
#: (``config/flags/flags.go``), then drasnap's own. Recorded only for a timeline, so no other
#: run's record changes: setting -> (default, what it decides).
TIMELINE_FLAGS: dict[str, tuple[str, str]] = {
    "scan_interval": ("10s", "how often the cluster-autoscaler's loop runs"),
    "scale_down_unneeded_time": (
        "10m0s",
        "how long a node must be unneeded before it is deleted (strictly longer)",
    ),
    "scale_down_delay_after_add": ("10m0s", "no scale-down this long after a scale-up"),
    "scale_down_delay_after_delete": ("0s", "no scale-down this long after a deletion"),
    "scale_down_delay_after_failure": ("3m0s", "no scale-down this long after a failed one"),
    "max_node_provision_time": (
        "15m0s",
        "a scale-up whose nodes are not all registered after this is timed out and its node "
        "group backed off",
    ),
    "new_pod_scale_up_delay": ("0s", "pods younger than this trigger no scale-up"),
    "unremovable_node_recheck_timeout": (
        "5m0s",
        "a node whose removal failed in simulation is not tried again before this",
    ),
    "node_delete_delay_after_taint": ("5s", "a node is deleted this long after its taint"),
    "initial_node_group_backoff_duration": ("5m0s", "a node group's first backoff"),
    "max_node_group_backoff_duration": ("30m0s", "the longest backoff (each doubles)"),
    "node_group_backoff_reset_timeout": (
        "3h0m0s",
        "a node group's backoff is forgotten this long after its last failure",
    ),
    "node_provision_time": ("2m0s", "drasnap: how long a new node takes to become Ready"),
    "slice_publish_lag": (
        "0s",
        "drasnap: how long after Ready a new node's ResourceSlices are published (under "
        "--max-node-startup-time)",
    ),
    "scale_down_unready_time": (
        "20m0s",
        "how long an unready node (a new one whose slices are not published yet) must be "
        "unneeded before it is deleted",
    ),
}
#: The cluster-autoscaler's limits on the whole cluster, by its names and defaults (a timeline's:
#: docs/timelines.md 1.4): setting -> (default, what it decides).
TIMELINE_LIMITS: dict[str, tuple[int | str, str]] = {
    "max_nodes_total": (0, "no scale-up past this many nodes in all (0: no limit)"),
    "cores_total": ("0:320000", "MIN:MAX cores of all nodes: scale-up and scale-down keep within"),
    "memory_total": ("0:6400000", "MIN:MAX GiB of all nodes: scale-up and scale-down keep within"),
}
#: Cluster-autoscaler flags drasnap does not model (yet): given a value other than CA's
#: default, ``simulate`` refuses them by name rather than ignore them: flag -> (CA's default,
#: why). Durations are compared as Go writes them.
UNMODELLED_CA_FLAGS: dict[str, tuple[str, str]] = {
    "balance_similar_node_groups": ("false", "similar node groups are not balanced"),
    "scale_down_delay_type_local": ("false", "scale-down delays are cluster-wide"),
    "enforce_node_group_min_size": ("false", "groups are not scaled up to their minimum"),
    "max_node_startup_time": (
        "15m0s",
        "a node is never unready longer than that (--slice-publish-lag stays under it)",
    ),
    "ok_total_unready_count": ("3", "no node is ever unready"),
    "max_total_unready_percentage": ("45", "no node is ever unready"),
    "scale_down_enabled": ("true", "scale-down always runs"),
    "max_graceful_termination_sec": ("600", "evicted pods go at once"),
    "max_pod_eviction_time": ("2m0s", "evicted pods go at once"),
}
#: drasnap's own timeline settings of the design not modelled yet (docs/timelines.md).
UNMODELLED_TIMELINE: dict[str, tuple[str, str]] = {}
#: The timeline's settings: its flags, the trace, the end and the scheduler's scoring.
TIMELINE_SETTINGS = (
    "trace",
    "trace_nodes",
    "gpu_sharing",
    "pending_rows",
    "arrivals",
    "until",
    "scheduler_scoring",
    *TIMELINE_FLAGS,
    *TIMELINE_LIMITS,
)
#: The scheduler's scoring strategies (NodeResourcesFit's, kube-scheduler's names).
SCORING = ("LeastAllocated", "MostAllocated")
#: The timeline settings that take one of a few words (``simulate``'s choices; a sweep file's
#: values are checked against them too): setting -> the words, the default first.
TIMELINE_CHOICES: dict[str, tuple[str, ...]] = {
    "gpu_sharing": ("consumable", "partitionable", "whole"),
    "pending_rows": ("withdraw", "skip"),
    "arrivals": ("trace", "at-start"),
    "scheduler_scoring": SCORING,
}
AUTOSCALE_SETTINGS = (
    "expander",
    "expander_priorities",
    "node_groups_file",
    "scale_down_utilization_threshold",
    *CA_FLAGS,
)
#: What scale-up's template nodes offer (snapshot.simulation.generated): one device per GPU, or each
#: GPU whole and as slices through shared counters, asked for as "a full GPU, else two slices".
DEVICES = ("flat", "partitionable")
#: The settings that generate a cluster; ``autoscale`` reads one (``--from``) and takes none.
SIZES = ("pods", "gpus_per_node", "node_groups", "nodes", "pods_per_node", "devices", "dra")
#: The sizes of ``--no-dra`` runs when not given: upstream's two RunOnce benchmarks without DRA
#: (``BenchmarkRunOnceScaleUp``: 1,000 nodes' worth of pending pods, 50 a node;
#: ``BenchmarkRunOnceScaleDown``: 2,000 nodes of 40 pods).
NO_DRA_SIZES: dict[str, dict[str, int]] = {
    "scale-up": {"pods": 50_000},
    "scale-down": {"nodes": 2_000, "pods_per_node": 40},
}

#: The settings each scenario takes (as command-line options: ``--pods`` is ``pods``).
TAKES: dict[str, frozenset[str]] = {
    "scale-up": frozenset(
        {
            "seed",
            "pods",
            "gpus_per_node",
            "node_groups",
            "devices",
            "dra",
            "source",
            "feature_gates",
        }
    ),
    "scale-down": frozenset(
        {"seed", "gpus_per_node", "nodes", "pods_per_node", "dra", "source", "feature_gates"}
    ),
    "autoscale": frozenset(
        {
            "seed",
            "source",
            "node_groups_file",
            "expander",
            "expander_priorities",
            "scale_down_utilization_threshold",
            "feature_gates",
            *CA_FLAGS,
        }
    ),
}
# (--no-skip: how a timeline runs, not recorded)
TAKES["timeline"] = TAKES["autoscale"] | set(TIMELINE_SETTINGS) | {"no_skip"}
#: The settings a scenario records beyond the common ones; every other scenario's are left
#: out of its record (Settings.record), so adding a scenario changes no earlier run's digest.
OWN_SETTINGS: dict[str, tuple[str, ...]] = {
    "autoscale": AUTOSCALE_SETTINGS,
    "timeline": (*AUTOSCALE_SETTINGS, *TIMELINE_SETTINGS),
}
#: The scenarios that run the cluster-autoscaler on a cluster read from files (--from), with
#: node groups and CA's flags, rather than on a generated preset.
ON_GIVEN_CLUSTER = frozenset(OWN_SETTINGS)
#: The sizes of a generated cluster: a run from manifests (``--from``) takes none of them.
GENERATED = frozenset(SIZES)


def refused_settings(scenario: str, given: set[str]) -> list[tuple[str, str]]:
    """The settings among ``given`` (names of settings or of anything else the caller was
    given) that ``scenario`` does not take, each with why: the scenarios that take it, or that
    the manifests give the cluster."""
    takes = TAKES.get(scenario)
    if takes is None:
        return []
    every = frozenset().union(*TAKES.values())
    refused = []
    for name in sorted(given & every):
        if name not in takes:
            others = [s for s, names in TAKES.items() if name in names]
            refused.append((name, f"it is taken by {' and '.join(others)}"))
        elif name in GENERATED and "source" in given:
            refused.append((name, "with --from the manifests give the cluster"))
    return refused


#: The sizes a run may have, checked before anything is built: (smallest, largest). The
#: largest keep a run within this machine's memory (a scale-up holds every pending pod and its
#: claim, ~20 KB each) and within Kubernetes' own limits: a ResourceSlice lists at most 128
#: devices (``resource.k8s.io/v1`` ResourceSliceMaxDevices) and a node runs at most 110 pods
#: by default (the kubelet's ``--max-pods``).
LIMITS: dict[str, tuple[int, int]] = {
    "seed": (0, 2**63 - 1),
    "pods": (1, 200_000),
    "gpus_per_node": (1, 128),
    "node_groups": (1, 8),
    "nodes": (1, 100_000),
    "pods_per_node": (0, 110),
}


@dataclass(frozen=True)
class Settings:
    """Scenario sizes; the defaults are upstream's DRA RunOnce benchmarks
    (``cluster-autoscaler/core/bench/benchmark_runonce_test.go``)."""

    scenario: str
    seed: int = 0
    pods: int = 4000  # scale-up: pending pods
    gpus_per_node: int | None = None  # None: the scenario's (8 for scale-up, 10 for scale-down)
    node_groups: int = 1  # scale-up
    nodes: int = 800  # scale-down
    pods_per_node: int = 4  # scale-down
    source: str | None = None  # --from DIR: manifests instead of generated objects
    source_digest: str | None = None
    devices: str = "flat"  # scale-up: one of DEVICES
    # False: upstream's RunOnce benchmarks without DRA (generated.plain_node): no device, pods
    # sized by CPU and memory (NO_DRA_SIZES their sizes; Settings.preset fills them in).
    dra: bool = True
    # Kubernetes feature gates, every one the simulation knows, resolved (1.36's defaults
    # plus --feature-gates): a resumed run must run under the same ones.
    feature_gates: dict[str, bool] = field(default_factory=resolve_feature_gates)
    # autoscale only (AUTOSCALE_SETTINGS): the expander chain (--expander), the priority
    # expander's file, the node-group file (--node-groups FILE), the scale-down threshold.
    expander: str = "least-waste"
    expander_priorities: str | None = None
    node_groups_file: str | None = None
    scale_down_utilization_threshold: float = 0.5
    # A point of a what-if sweep (snapshot.simulation.sweep) only: manifest files added to
    # --from's, and the point (its sweep, index, variants, node-group changes and costs).
    # Left out of the record when unset, so other runs keep their records.
    extra_manifests: tuple[str, ...] = ()
    sweep: dict[str, Any] | None = None
    # The cluster-autoscaler's other flags (CA_FLAGS: these defaults are CA's).
    max_nodes_per_scaleup: int = 1000
    max_scale_down_parallelism: int = 10
    max_drain_parallelism: int = 1
    expendable_pods_priority_cutoff: int = -10
    skip_nodes_with_system_pods: bool = True
    skip_nodes_with_local_storage: bool = True
    skip_nodes_with_custom_controller_pods: bool = True
    # timeline only (TIMELINE_SETTINGS): the trace file (its digest is in source_digest), the
    # end (None: the trace's last event + 1h), the scheduler's scoring, then TIMELINE_FLAGS.
    trace: str | None = None
    # --trace alibaba-gpu-v2023:PODS.csv: its node list and how its rows become objects
    # (snapshot.simulation.traces.alibaba, docs/traces.md)
    trace_nodes: str | None = None
    gpu_sharing: str = "consumable"
    pending_rows: str = "withdraw"
    arrivals: str = "trace"
    until: str | None = None
    scheduler_scoring: str = "LeastAllocated"
    scan_interval: str = "10s"
    scale_down_unneeded_time: str = "10m0s"
    scale_down_delay_after_add: str = "10m0s"
    scale_down_delay_after_delete: str = "0s"
    scale_down_delay_after_failure: str = "3m0s"
    max_node_provision_time: str = "15m0s"
    new_pod_scale_up_delay: str = "0s"
    unremovable_node_recheck_timeout: str = "5m0s"
    node_delete_delay_after_taint: str = "5s"
    initial_node_group_backoff_duration: str = "5m0s"
    max_node_group_backoff_duration: str = "30m0s"
    node_group_backoff_reset_timeout: str = "3h0m0s"
    node_provision_time: str = "2m0s"
    slice_publish_lag: str = "0s"
    scale_down_unready_time: str = "20m0s"
    max_nodes_total: int = 0
    cores_total: str = "0:320000"
    memory_total: str = "0:6400000"

    @classmethod
    def preset(cls, scenario: str, *, dra: bool = True, **given: Any) -> Settings:
        """The settings of ``scenario`` with ``given`` and, for the others, the defaults of
        the preset (``--no-dra`` has its own sizes: NO_DRA_SIZES), resolved."""
        defaults = {} if dra else NO_DRA_SIZES.get(scenario, {})
        return cls(scenario=scenario, dra=dra, **{**defaults, **given}).resolved()

    @property
    def gpus(self) -> int:
        """GPUs per node, resolved (see :meth:`resolved`)."""
        resolved = self.resolved().gpus_per_node
        assert resolved is not None
        return resolved

    def resolved(self) -> Settings:
        """These settings with the scenario's defaults filled in."""
        if self.gpus_per_node is not None or self.scenario in ON_GIVEN_CLUSTER or not self.dra:
            return self
        gpus = 8 if self.scenario == "scale-up" else 10
        return Settings(**{**asdict(self), "gpus_per_node": gpus})

    def check(self) -> None:
        """Raise ScenarioError for settings no run can have (call on resolved settings)."""
        if self.scenario not in SCENARIOS:
            raise ScenarioError(
                f"unknown scenario {self.scenario!r}: choose {', '.join(SCENARIOS[:-1])} or "
                f"{SCENARIOS[-1]}"
            )
        if self.scenario in ON_GIVEN_CLUSTER:
            self._check_autoscale()
            if self.scenario == "timeline":
                self._check_timeline()
            return
        if not self.dra:
            self._check_no_dra()
        for name, (low, high) in LIMITS.items():
            if name == "gpus_per_node" and not self.dra:
                continue
            value = getattr(self, name)
            option = f"--{name.replace('_', '-')}"
            if value is None or value < low:
                got = "" if value is None else f", got {value}"
                raise ScenarioError(f"{option} must be at least {low}{got}")
            if value > high:
                raise ScenarioError(f"{option} must be at most {high:,}, got {value:,}")
        if self.scenario == "scale-down" and self.dra and self.pods_per_node > self.gpus:
            raise ScenarioError(
                f"--pods-per-node {self.pods_per_node} cannot exceed --gpus-per-node "
                f"{self.gpus_per_node}: each pod holds one GPU"
            )
        if self.devices not in DEVICES:
            raise ScenarioError(
                f"unknown --devices {self.devices!r}: choose {' or '.join(DEVICES)}"
            )
        if self.devices != "flat" and (self.scenario != "scale-up" or self.source is not None):
            raise ScenarioError(
                f"--devices {self.devices} is for generated scale-up runs (not scale-down, "
                "not --from, whose manifests say what the nodes offer)"
            )
        if self.scenario == "scale-up" and self.dra and self.gpus >> (self.node_groups - 1) < 1:
            raise ScenarioError(
                f"--node-groups {self.node_groups} halves --gpus-per-node {self.gpus_per_node} "
                "below one GPU for the last group"
            )

    def _check_no_dra(self) -> None:
        from drasnap.snapshot.simulation.generated import PLAIN_NODE_PODS

        if self.source is not None:
            raise ScenarioError(
                "--no-dra is for generated runs (with --from the manifests give the cluster)"
            )
        if self.gpus_per_node is not None:
            raise ScenarioError("--gpus-per-node does not apply with --no-dra: no node has GPUs")
        if self.devices != "flat":
            raise ScenarioError(f"--devices {self.devices} does not apply with --no-dra")
        if self.scenario == "scale-down" and self.pods_per_node > PLAIN_NODE_PODS:
            raise ScenarioError(
                f"--pods-per-node {self.pods_per_node} cannot exceed {PLAIN_NODE_PODS} with "
                "--no-dra: its nodes hold at most that many pods, as upstream's"
            )

    def _check_autoscale(self) -> None:
        scenario = self.scenario
        if self.source is None and not self.cluster_from_trace:
            raise ScenarioError(f"{scenario} needs a cluster: give --from DIR (kubectl dumps)")
        defaults = Settings(scenario=scenario)
        for name in SIZES:
            if getattr(self, name) != getattr(defaults, name):
                option = "--no-dra" if name == "dra" else f"--{name.replace('_', '-')}"
                raise ScenarioError(
                    f"{option} does not apply to {scenario} (its cluster is --from)"
                )
        low, high = LIMITS["seed"]
        if not low <= self.seed <= high:
            raise ScenarioError(f"--seed must be between {low} and {high:,}, got {self.seed}")
        names = self.expander.split(",")
        for name in names:
            if name not in EXPANDERS:
                raise ScenarioError(
                    f"unknown expander {name!r} in --expander: choose from {', '.join(EXPANDERS)}"
                    " (a comma-separated chain, as the cluster-autoscaler's --expander)"
                )
        if "priority" in names and self.expander_priorities is None:
            raise ScenarioError("--expander priority needs --expander-priorities FILE")
        if self.expander_priorities is not None and "priority" not in names:
            raise ScenarioError("--expander-priorities is used only with --expander priority")
        for name in ("max_nodes_per_scaleup", "max_scale_down_parallelism"):
            if getattr(self, name) < 1:
                raise ScenarioError(f"--{name.replace('_', '-')} must be at least 1")
        if self.max_drain_parallelism < 0:
            raise ScenarioError("--max-drain-parallelism must be at least 0")
        threshold = self.scale_down_utilization_threshold
        if not 0.0 <= threshold <= 1.0:
            raise ScenarioError(
                f"--scale-down-utilization-threshold must be between 0 and 1, got {threshold}"
            )

    @property
    def cluster_from_trace(self) -> bool:
        """Whether the trace brings the cluster (its node list), so no --from is needed."""
        return self.scenario == "timeline" and str(self.trace or "").startswith(ALIBABA)

    def _check_timeline(self) -> None:
        from drasnap.snapshot.simulation.durations import parse_duration

        if self.trace is None:
            raise ScenarioError("timeline needs a workload: give --trace FILE or gen:SPEC")
        alibaba = {"trace_nodes": None, "gpu_sharing": "consumable", "pending_rows": "withdraw"}
        if not self.cluster_from_trace:
            for name, default in {**alibaba, "arrivals": "trace"}.items():
                if getattr(self, name) != default:
                    raise ScenarioError(
                        f"--{name.replace('_', '-')} goes with --trace {ALIBABA}PODS.csv"
                    )
        elif self.node_groups_file is not None:
            raise ScenarioError(
                f"--node-groups does not go with --trace {ALIBABA}: the node list gives the "
                "groups (one per node shape)"
            )
        for name in TIMELINE_FLAGS:
            parse_duration(getattr(self, name), f"--{name.replace('_', '-')}")
        if parse_duration(self.slice_publish_lag, "--slice-publish-lag") >= _STARTUP_MS:
            raise ScenarioError(
                f"--slice-publish-lag {self.slice_publish_lag} reaches CA's "
                "--max-node-startup-time (15m): such a node turns Unready, which drasnap does "
                "not model"
            )
        if parse_duration(self.scan_interval, "--scan-interval") <= 0:
            raise ScenarioError(f"--scan-interval must be more than 0, got {self.scan_interval}")
        if self.until is not None:
            parse_duration(self.until, "--until")
        if self.max_nodes_total < 0:
            raise ScenarioError(f"--max-nodes-total must be at least 0, got {self.max_nodes_total}")
        for name in ("cores_total", "memory_total"):
            limit_range(getattr(self, name), f"--{name.replace('_', '-')}")
        for name, words in TIMELINE_CHOICES.items():
            if getattr(self, name) not in words:
                raise ScenarioError(
                    f"unknown --{name.replace('_', '-')} {getattr(self, name)!r}: choose "
                    f"{' or '.join(words)}"
                )

    def as_options(self) -> list[str]:
        """The command-line words that give these settings (:func:`settings_options`)."""
        return settings_options(self.record())

    def record(self) -> dict[str, Any]:
        """The settings as the run's plan records them. Settings newer than a scenario's
        first runs are left out when they have their default, so those runs keep their records
        and state digests: the autoscale ones outside autoscale, ``devices`` when "flat"."""
        record = asdict(self)
        own = OWN_SETTINGS.get(self.scenario, ())
        for name in {n for names in OWN_SETTINGS.values() for n in names} - set(own):
            del record[name]
        if record["devices"] == "flat":
            del record["devices"]
        if record["dra"]:
            del record["dra"]
        for name in _SWEEP_SETTINGS:
            if not record[name]:
                del record[name]
        if record.get("extra_manifests"):
            record["extra_manifests"] = list(record["extra_manifests"])
        return record


#: The settings of a sweep's points (recorded only when set; no ``simulate`` option gives them).
_SWEEP_SETTINGS = ("extra_manifests", "sweep")


#: ``--trace alibaba-gpu-v2023:PODS.csv``: Alibaba's GPU trace (docs/traces.md).
ALIBABA = "alibaba-gpu-v2023:"
#: ``--trace recorded:NAME@DB``: a recording's pods (``--trace-from-db``;
#: snapshot.simulation.traces.recorded).
RECORDED = "recorded:"
_STARTUP_MS = 15 * 60_000  # CA's --max-node-startup-time (not settable: UNMODELLED_CA_FLAGS)


def limit_range(text: str, option: str) -> tuple[int, int]:
    """``MIN:MAX`` as CA's --cores-total and --memory-total take it (whole numbers)."""
    low, sep, high = str(text).partition(":")
    if not sep or not low.strip().isdigit() or not high.strip().isdigit():
        raise ScenarioError(f"{option}: expected MIN:MAX in whole numbers, got {text!r}")
    if int(low) > int(high):
        raise ScenarioError(f"{option}: MIN {low} is more than MAX {high}")
    return int(low), int(high)


#: Settings whose option is not named after them.
_OPTIONS = {"source": "from", "node_groups_file": "node-groups"}
#: Settings no option gives (derived from the files).
_DERIVED = ("source_digest",)


def settings_options(record: dict[str, Any]) -> list[str]:
    """The ``drasnap simulate`` options (words, in order) that give the settings a run recorded
    (:meth:`Settings.record`), leaving out those at their defaults and the scenario itself.
    Feature gates are the ones changed from Kubernetes 1.36's defaults."""
    dra = record.get("dra", True)
    defaults = Settings.preset(str(record["scenario"]), dra=dra).record()
    words: list[str] = []
    for key, value in record.items():
        if key == "dra":  # (recorded only when False; its preset's defaults have it too)
            words.append("--no-dra")
            continue
        if key in ("scenario", *_DERIVED, *_SWEEP_SETTINGS) or value == defaults.get(key):
            continue
        if key == "feature_gates":
            changed = [
                f"{gate}={str(on).lower()}"
                for gate, on in sorted(value.items())
                if defaults[key].get(gate) != on
            ]
            words += ["--feature-gates", ",".join(changed)]
            continue
        words += [f"--{_OPTIONS.get(key, key.replace('_', '-'))}", str(value)]
    return words
