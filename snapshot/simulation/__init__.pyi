"""Public names (loaded lazily by __init__.py; mypy reads this)."""

from . import generated
from .autoscale import decisions_so_far
from .autoscale_config import files_digest
from .explain import explain_pod_devices
from .inputs import Cluster, source_digest
from .lifecycle import RunSession
from .plan import PLAN_KEY, RUN_KEY, SIM_KIND
from .record import Outcome
from .runner import prepare, simulate
from .runs import RunInfo, choose_store, find_run, fresh_name, list_runs, newest_unfinished
from .settings import (
    DEVICES,
    LIMITS,
    SCENARIOS,
    Report,
    Settings,
    StopRequest,
    refused_settings,
    settings_options,
)

__all__ = [
    "DEVICES",
    "LIMITS",
    "PLAN_KEY",
    "RUN_KEY",
    "SCENARIOS",
    "SIM_KIND",
    "Cluster",
    "Outcome",
    "Report",
    "RunInfo",
    "RunSession",
    "Settings",
    "StopRequest",
    "choose_store",
    "decisions_so_far",
    "explain_pod_devices",
    "files_digest",
    "find_run",
    "fresh_name",
    "generated",
    "list_runs",
    "newest_unfinished",
    "prepare",
    "refused_settings",
    "settings_options",
    "simulate",
    "source_digest",
]
