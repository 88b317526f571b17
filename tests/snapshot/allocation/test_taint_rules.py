"""DeviceTaintRules: their taints land on the devices they select, as the scheduler's slice
tracker applies them, and the allocator then honours them."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

import pytest
from drasnap.snapshot.allocation.allocator import allocate
from drasnap.snapshot.allocation.taint_rules import apply_device_taint_rules
from drasnap.snapshot.errors import AllocationError

Obj = dict[str, Any]
RULES_ON = {"DRADeviceTaintRules": True}


def slice_(driver: str, pool: str, *names: str) -> Obj:
    return {
        "metadata": {"name": f"{driver}-{pool}"},
        "spec": {
            "driver": driver,
            "nodeName": "n1",
            "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": n} for n in names],
        },
    }


def rule(name: str, selector: Obj | None, key: str = "k", effect: str = "NoSchedule") -> Obj:
    spec: Obj = {"taint": {"key": key, "value": "v", "effect": effect}}
    if selector is not None:
        spec["deviceSelector"] = selector
    return {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": spec,
    }


def tainted(slices: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    return {
        f"{s['spec']['driver']}/{s['spec']['pool']['name']}/{d['name']}": [
            t["key"] for t in d.get("taints") or ()
        ]
        for s in slices
        for d in s["spec"]["devices"]
    }


SLICES = [slice_("gpu", "p1", "a", "b"), slice_("gpu", "p2", "a"), slice_("nic", "p1", "a")]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (None, ["gpu/p1/a", "gpu/p1/b", "gpu/p2/a", "nic/p1/a"]),
        ({"driver": "gpu"}, ["gpu/p1/a", "gpu/p1/b", "gpu/p2/a"]),
        ({"pool": "p1"}, ["gpu/p1/a", "gpu/p1/b", "nic/p1/a"]),
        ({"driver": "gpu", "device": "a"}, ["gpu/p1/a", "gpu/p2/a"]),
        ({"driver": "gpu", "pool": "p1", "device": "b"}, ["gpu/p1/b"]),
        ({"device": "zzz"}, []),
    ],
    ids=["all", "driver", "pool", "driver-device", "one-device", "none"],
)
def test_a_rule_taints_the_devices_its_selector_names(
    selector: Obj | None, expected: list[str]
) -> None:
    before = copy.deepcopy(SLICES)
    out = apply_device_taint_rules(SLICES, [rule("r", selector)])
    assert [d for d, keys in tainted(out).items() if keys] == expected
    assert before == SLICES  # inputs untouched
    for original, result in zip(SLICES, out, strict=True):
        touched = any(
            d.startswith(f"{original['spec']['driver']}/{original['spec']['pool']['name']}/")
            for d in expected
        )
        assert (result is original) == (not touched)


def test_rules_add_to_the_driver_taints_in_name_order() -> None:
    slices = [slice_("gpu", "p1", "a")]
    slices[0]["spec"]["devices"][0]["taints"] = [{"key": "driver", "effect": "NoExecute"}]
    out = apply_device_taint_rules(
        slices, [rule("b", None, key="second"), rule("a", None, key="first")]
    )
    assert tainted(out) == {"gpu/p1/a": ["driver", "first", "second"]}


def test_the_same_slices_and_rules_give_the_same_objects() -> None:
    """The allocator caches per slice object: patched slices must be stable across calls."""
    rules = [rule("r", {"driver": "gpu"})]
    assert all(
        a is b
        for a, b in zip(
            apply_device_taint_rules(SLICES, rules),
            apply_device_taint_rules(SLICES, rules),
            strict=True,
        )
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda r: r["spec"]["deviceSelector"].update({"deviceClassName": "gpu"}),
            "DeviceTaintRule r: spec.deviceSelector.deviceClassName: not supported: Kubernetes "
            "1.36 selects devices by driver, pool and device only",
        ),
        (
            lambda r: r["spec"]["taint"].update({"effect": "PreferNoSchedule"}),
            "DeviceTaintRule r: spec.taint.effect: expected NoSchedule, NoExecute or None, not "
            "'PreferNoSchedule'",
        ),
        (
            lambda r: r["spec"]["taint"].pop("key"),
            "DeviceTaintRule r: spec.taint.key: a taint needs a key",
        ),
        (
            lambda r: r.update({"apiVersion": "resource.k8s.io/v2"}),
            "DeviceTaintRule r: apiVersion: expected one of resource.k8s.io/v1beta2",
        ),
    ],
    ids=["cel-era-selector", "effect", "no-key", "api-version"],
)
def test_rules_drasnap_cannot_apply_are_refused_by_name(change: Any, message: str) -> None:
    bad = rule("r", {"driver": "gpu"})
    change(bad)
    with pytest.raises(AllocationError) as info:
        apply_device_taint_rules(SLICES, [bad])
    assert str(info.value).startswith(message)
    assert info.value.kind == "DeviceTaintRule"


# --- through the allocator -------------------------------------------------------------------

GPU_CLASS = {
    "metadata": {"name": "gpu"},
    "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu'"}}]},
}
NODE = {"metadata": {"name": "n1"}}


def claim(**exactly: Any) -> Obj:
    return {
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {
            "devices": {
                "requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", **exactly}}]
            }
        },
    }


def picked(result: list[Obj] | None) -> list[str]:
    assert result is not None
    return [f"{d['pool']}/{d['device']}" for d in result[0]["devices"]["results"]]


def test_the_allocator_avoids_devices_a_rule_taints() -> None:
    rules = [rule("broken", {"driver": "gpu", "pool": "p1", "device": "a"})]
    kwargs: Any = {"classes": [GPU_CLASS], "slices": SLICES}
    assert picked(allocate(NODE, [claim()], **kwargs)) == ["p1/a"]
    assert picked(
        allocate(NODE, [claim()], **kwargs, device_taint_rules=rules, features=RULES_ON)
    ) == ["p1/b"]
    tolerating = claim(tolerations=[{"key": "k", "operator": "Exists"}])
    assert picked(
        allocate(NODE, [tolerating], **kwargs, device_taint_rules=rules, features=RULES_ON)
    ) == ["p1/a"]
    # Taints off: rules still apply, but taints no longer matter (upstream's gate-off).
    off = {**RULES_ON, "DRADeviceTaints": False}
    assert picked(allocate(NODE, [claim()], **kwargs, device_taint_rules=rules, features=off)) == [
        "p1/a"
    ]
    # NoExecute taints block too; effect None never does.
    for effect, expected in (("NoExecute", "p1/b"), ("None", "p1/a")):
        one = [rule("r", {"device": "a", "pool": "p1"}, effect=effect)]
        assert picked(
            allocate(NODE, [claim()], **kwargs, device_taint_rules=one, features=RULES_ON)
        ) == [expected]


def test_rules_with_their_gate_off_are_an_error_not_silence() -> None:
    """DRADeviceTaintRules is off in 1.36: the scheduler would ignore the rule."""
    with pytest.raises(AllocationError) as info:
        allocate(
            NODE,
            [claim()],
            classes=[GPU_CLASS],
            slices=SLICES,
            device_taint_rules=[rule("broken", None)],
        )
    assert str(info.value).startswith(
        "DeviceTaintRule broken: the DRADeviceTaintRules feature gate is disabled"
    )
