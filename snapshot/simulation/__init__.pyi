"""Public names (loaded lazily by __init__.py; mypy reads this)."""

from . import generated
from .autoscale.records import decisions_so_far
from .autoscale_config import files_digest
from .comparison import COMPARE_COLUMNS, SCENARIO_COLUMNS, compare_cell, compare_values
from .durations import format_duration, parse_duration
from .explain import explain_pod_devices
from .export import write_state
from .inputs import StartingObjects, source_digest
from .lifecycle import RunSession
from .plan import PLAN_KEY, RUN_KEY, SIM_KIND
from .record import Outcome
from .runner import prepare, simulate
from .runs import (
    RunInfo,
    RunStatus,
    choose_store,
    find_run,
    fresh_name,
    list_runs,
    newest_unfinished,
)
from .settings import (
    ALIBABA,
    CA_FLAGS,
    DEVICES,
    EXPANDERS,
    LIMITS,
    NO_DRA_SIZES,
    ON_GIVEN_CLUSTER,
    RECORDED,
    SCENARIOS,
    SCORING,
    TIMELINE_CHOICES,
    TIMELINE_FLAGS,
    TIMELINE_LIMITS,
    UNMODELLED_CA_FLAGS,
    UNMODELLED_TIMELINE,
    ProgressCallback,
    Settings,
    StopRequest,
    refused_settings,
    settings_options,
)
from .sweep import (
    Point,
    PointResult,
    Sweep,
    SweepFileError,
    compare_rows,
    differing,
    job_manifests,
    load_sweep,
    run_point,
    run_sweep,
    with_index,
)
from .timeline.records import pod_story
from .traces.recorded import read_recorded, recorded_source, split_source

__all__ = [
    "ALIBABA",
    "CA_FLAGS",
    "COMPARE_COLUMNS",
    "DEVICES",
    "EXPANDERS",
    "LIMITS",
    "NO_DRA_SIZES",
    "ON_GIVEN_CLUSTER",
    "PLAN_KEY",
    "RECORDED",
    "RUN_KEY",
    "SCENARIOS",
    "SCENARIO_COLUMNS",
    "SCORING",
    "SIM_KIND",
    "TIMELINE_CHOICES",
    "TIMELINE_FLAGS",
    "TIMELINE_LIMITS",
    "UNMODELLED_CA_FLAGS",
    "UNMODELLED_TIMELINE",
    "Outcome",
    "Point",
    "PointResult",
    "ProgressCallback",
    "RunInfo",
    "RunSession",
    "RunStatus",
    "Settings",
    "StartingObjects",
    "StopRequest",
    "Sweep",
    "SweepFileError",
    "choose_store",
    "compare_cell",
    "compare_rows",
    "compare_values",
    "decisions_so_far",
    "differing",
    "explain_pod_devices",
    "files_digest",
    "find_run",
    "format_duration",
    "fresh_name",
    "generated",
    "job_manifests",
    "list_runs",
    "load_sweep",
    "newest_unfinished",
    "parse_duration",
    "pod_story",
    "prepare",
    "read_recorded",
    "recorded_source",
    "refused_settings",
    "run_point",
    "run_sweep",
    "settings_options",
    "simulate",
    "source_digest",
    "split_source",
    "with_index",
    "write_state",
]
