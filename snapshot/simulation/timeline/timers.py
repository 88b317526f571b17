"""A timeline's durations, in milliseconds, read once from the run's recorded settings."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from drasnap.snapshot.simulation.durations import parse_duration
from drasnap.snapshot.simulation.settings import TIMELINE_FLAGS


@dataclass(frozen=True)
class Timers:
    scan_interval: int
    scale_down_unneeded_time: int
    scale_down_delay_after_add: int
    scale_down_delay_after_delete: int
    scale_down_delay_after_failure: int
    max_node_provision_time: int
    new_pod_scale_up_delay: int
    unremovable_node_recheck_timeout: int
    node_delete_delay_after_taint: int
    initial_node_group_backoff_duration: int
    max_node_group_backoff_duration: int
    node_group_backoff_reset_timeout: int
    node_provision_time: int
    slice_publish_lag: int
    scale_down_unready_time: int

    @classmethod
    def of(cls, settings: dict[str, Any]) -> Timers:
        return cls(
            **{
                f.name: parse_duration(
                    str(settings.get(f.name, TIMELINE_FLAGS[f.name][0])),
                    f"--{f.name.replace('_', '-')}",
                )
                for f in fields(cls)
            }
        )


#: upstream: ``unschedulablePodTimeBuffer`` (core/static_autoscaler.go): when every pod to help
#: is younger than this, the loop waits one iteration for more (no scale-up, no scale-down).
POD_TIME_BUFFER_MS = 2_000
