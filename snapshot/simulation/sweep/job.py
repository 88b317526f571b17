"""A sweep as a Kubernetes Indexed Job: a ConfigMap with the sweep's files and a Job running
one point per completion index (``drasnap sweep FILE DB --index``, or ``JOB_COMPLETION_INDEX``).
"""

from __future__ import annotations

import re
from typing import Any

from drasnap.snapshot.errors import ArgumentError, SweepFileError
from drasnap.snapshot.simulation.sweep.file import Point, Sweep

__all__ = ["CONFIGMAP_LIMIT", "MOUNT", "USAGE_ERROR", "job_manifests", "with_index"]

USAGE_ERROR = 2
MOUNT = "/etc/drasnap-sweep"
CONFIGMAP_LIMIT = 1_000_000  # bytes: a ConfigMap holds at most 1 MiB


def job_manifests(
    sweep: Sweep,
    *,
    image: str,
    parallelism: int,
    secret: str = "drasnap-db",
    secret_key: str = "url",
    backoff_limit_per_index: int = 2,
) -> list[dict[str, Any]]:
    """A ConfigMap with the sweep file and every file it reads, and an Indexed Job running one
    point per index (``drasnap sweep FILE DB`` with ``JOB_COMPLETION_INDEX`` set), the
    database URL from ``secret``.

    Raises:
        SweepFileError: the files do not fit in a ConfigMap, or lie outside the sweep's folder.
    """
    root = sweep.path.parent
    data: dict[str, str] = {}
    items = []
    for number, file in enumerate([sweep.path, *sweep.files]):
        try:
            relative = file.relative_to(root)
        except ValueError as exc:
            raise SweepFileError(
                f"{sweep.path}: {file} is outside the sweep file's folder: a Job's ConfigMap "
                "holds the files under it only"
            ) from exc
        # A ConfigMap key: letters, digits, '-', '_' and '.', at most 253 characters.
        key = re.sub(r"[^-._a-zA-Z0-9]", "_", f"f{number:04d}-{file.name}")[:253]
        data[key] = file.read_text()
        items.append({"key": key, "path": str(relative)})
    size = sum(len(v.encode()) for v in data.values())
    if size > CONFIGMAP_LIMIT:
        raise SweepFileError(
            f"{sweep.path}: the sweep's files are {size:,} bytes: a ConfigMap holds at most 1 MiB"
        )
    name = f"drasnap-sweep-{sweep.name}"[:52].rstrip("-.")
    labels = {"app.kubernetes.io/name": "drasnap", "drasnap.io/sweep": sweep.name}
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": data,
    }
    points = len(sweep)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "completionMode": "Indexed",
            "completions": points,
            "parallelism": max(1, min(parallelism, points)),
            "backoffLimitPerIndex": backoff_limit_per_index,
            "podFailurePolicy": {
                "rules": [
                    {
                        "action": "FailIndex",
                        "onExitCodes": {
                            "containerName": "drasnap",
                            "operator": "In",
                            "values": [USAGE_ERROR],
                        },
                    },
                    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
                ]
            },
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "drasnap",
                            "image": image,
                            "command": [
                                "drasnap",
                                "sweep",
                                f"{MOUNT}/{sweep.path.name}",
                                "$(DRASNAP_DB)",
                            ],
                            "env": [
                                {
                                    "name": "DRASNAP_DB",
                                    "valueFrom": {
                                        "secretKeyRef": {"name": secret, "key": secret_key}
                                    },
                                }
                            ],
                            "volumeMounts": [
                                {"name": "sweep", "mountPath": MOUNT, "readOnly": True}
                            ],
                        }
                    ],
                    "volumes": [{"name": "sweep", "configMap": {"name": name, "items": items}}],
                },
            },
        },
    }
    return [configmap, job]


def with_index(sweep: Sweep, index: int) -> Point:
    """Point ``index`` of ``sweep``.

    Raises:
        ArgumentError: ``index`` is outside the sweep's points (the message names the range).
    """
    if not 0 <= index < len(sweep):
        raise ArgumentError(f"index {index} is outside the sweep's points 0..{len(sweep) - 1}")
    return sweep.point(index)
