"""Warnings that name each pod field the filters do not check, and the package's public names."""

from __future__ import annotations

import doctest
import importlib
import inspect
from typing import Any

import pytest
from drasnap import snapshot

from tests.snapshot.scheduling.builders import pod

WARN_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("scheduling-gates", {"schedulingGates": [{"name": "wait"}]}, "spec.schedulingGates"),
    (
        "pvc-volume",
        {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "d"}}]},
        "spec.volumes[0].persistentVolumeClaim",
    ),
    ("csi-volume", {"volumes": [{"name": "c", "csi": {"driver": "x"}}]}, "spec.volumes[0].csi"),
    ("runtime-class", {"runtimeClassName": "gvisor"}, "spec.runtimeClassName"),
    ("scheduler-name", {"schedulerName": "volcano"}, "spec.schedulerName"),
    (
        "comparison-toleration",
        {"tolerations": [{"key": "n", "operator": "Lt", "value": "3"}]},
        "spec.tolerations[0].operator",
    ),
    (
        "restart-policy-rules",
        {"containers": [{"name": "c", "restartPolicyRules": [{"action": "RestartAllContainers"}]}]},
        "spec.containers[0].restartPolicyRules",
    ),
    ("host-users", {"hostNetwork": True, "hostUsers": False}, "spec.hostUsers"),
    (
        "unchecked-resource",
        {"containers": [{"name": "c", "resources": {"limits": {"gpu": "1"}}}]},
        "spec.containers[0].resources.limits.gpu",
    ),
    (
        "malformed-node-affinity-term",
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "a", "operator": "Near"}]}
                        ]
                    }
                }
            }
        },
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0]",
    ),
    (
        "namespace-selector-on-unknown-labels",
        {
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"topologyKey": "zone", "namespaceSelector": {"matchLabels": {"team": "a"}}}
                    ]
                }
            }
        },
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector",
    ),
]


@pytest.mark.parametrize(
    ("spec", "field"), [c[1:] for c in WARN_CASES], ids=[c[0] for c in WARN_CASES]
)
def test_each_unchecked_constraint_is_named(spec: dict[str, Any], field: str) -> None:
    warnings = snapshot.scheduling.pod_warnings(pod("web-1", namespace="shop", **spec))
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"pod shop/web-1: {field}")


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"volumes": [{"name": "cfg", "configMap": {"name": "x"}}, {"name": "tmp", "emptyDir": {}}]},
        {"runtimeClassName": "kata", "overhead": {"cpu": "100m"}},
        {"schedulerName": "default-scheduler"},
        {
            "containers": [
                {
                    "name": "c",
                    "resources": {"requests": {"nvidia.com/gpu": "1", "hugepages-1Gi": "1Gi"}},
                }
            ]
        },
        {
            "affinity": {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "topologyKey": "zone",
                            "namespaceSelector": {
                                "matchLabels": {"kubernetes.io/metadata.name": "a"}
                            },
                        }
                    ]
                }
            }
        },
    ],
    ids=[
        "plain",
        "local-volumes",
        "runtime-class-admitted",
        "default-scheduler",
        "known-resources",
        "ns-name",
    ],
)
def test_what_the_filters_check_is_not_warned_about(spec: dict[str, Any]) -> None:
    assert snapshot.scheduling.pod_warnings(pod(**spec)) == []


def test_namespace_selectors_are_not_warned_about_when_namespace_labels_are_known() -> None:
    spec = WARN_CASES[-1][1]
    assert snapshot.scheduling.pod_warnings(pod(**spec), namespace_labels_known=True) == []


def test_every_exported_name_exists_and_is_documented() -> None:
    names = snapshot.scheduling.__all__
    assert len(names) == len(set(names))
    for name in names:
        obj = getattr(snapshot.scheduling, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__doc__, f"snapshot.scheduling.{name} has no docstring"


@pytest.mark.parametrize(
    "module",
    ["resources", "pod_requests", "fit_error", "view", "unsupported", "matchers"],
)
def test_docstring_examples_hold(module: str) -> None:
    mod = importlib.import_module(f"drasnap.snapshot.scheduling.{module}")
    failed, _ = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert failed == 0


def test_run_warnings_name_every_pod_of_a_shared_spec() -> None:
    """Pods of one spec share the findings (found once), but each pod is named in its own."""
    from drasnap.snapshot.simulation.failures import run_warnings
    from drasnap.store import MemoryStore

    gated: dict[str, Any] = {"schedulingGates": [{"name": "g"}]}
    store = MemoryStore()
    for name in ("a", "b"):
        store.put("PendingPod", f"default/{name}", pod(name, **gated))
    store.put("Pod", "default/c", pod("c", node_name="n1", **gated))
    store.put("Pod", "default/d", pod("d", node_name="n1"))
    warnings = run_warnings(store, "PendingPod")
    named = [w.split(":")[0] for w in warnings]
    assert named == ["pod default/a", "pod default/b", "pod default/c"]
    assert all("spec.schedulingGates" in w for w in warnings)
