"""drasnap capture --redact: no original name left in the capture, the translation table
beside it, the same pseudonyms for the same input, and the same decisions up to the table."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from drasnap.snapshot import Redactor

from tests.snapshot.live.kube_api import FakeKubeApi
from tests.snapshot.live.test_capture import api, capture, decisions, demo_cluster

__all__ = ["api"]  # the fixture

_KEPT_LABELS = {"kubernetes.io/os", "kubernetes.io/arch"}


def original_names(objects: list[dict[str, Any]]) -> set[str]:
    """Every name a redacted capture must not show: of namespaces, objects (but classes),
    nodes and pools, templates and claims referred to, containers, label values."""
    names: set[str] = set()
    for obj in objects:
        meta = obj["metadata"]
        if obj["kind"] != "DeviceClass":
            names.add(meta["name"])
        names.update(v for k in ("namespace", "uid") if (v := meta.get(k)))
        names.update(v for k, v in (meta.get("labels") or {}).items() if k not in _KEPT_LABELS)
        spec = obj.get("spec") or {}
        names.update(v for k in ("nodeName",) if (v := spec.get(k)))
        if obj["kind"] == "ResourceSlice":
            names.add(spec["pool"]["name"])
        for claim in spec.get("resourceClaims") or ():
            names.update(v for k in ("resourceClaimName", "resourceClaimTemplateName")
                         if (v := claim.get(k)))  # fmt: skip
        names.update(c["name"] for c in spec.get("containers") or ())
    return names


def translate(value: Any, table: dict[str, str]) -> Any:
    pattern = re.compile("|".join(re.escape(p) for p in sorted(table, key=len, reverse=True)))

    def text(s: str) -> str:
        return pattern.sub(lambda m: table[m.group(0)], s)

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            return {text(k): walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return text(v) if isinstance(v, str) else v

    return walk(value)


@pytest.mark.slow
def test_redacted_capture_hides_every_name_and_decides_the_same(
    api: FakeKubeApi, tmp_path: Path
) -> None:
    demo_cluster(api)
    api.objects["Node"][("", "gpu-node-1")]["metadata"]["labels"]["team"] = "vision-research"
    result = capture(api, tmp_path, "red", "--redact", "--json")
    assert result.exit_code == 0, result.output
    table_path = tmp_path / "red.redaction.json"
    assert json.loads(result.stdout)["redaction_table"] == str(table_path)
    table = json.loads(table_path.read_text())
    assert not list((tmp_path / "red").glob("*redaction*"))  # beside the capture, not in it

    text = "\n".join(p.read_text() for p in (tmp_path / "red").iterdir())
    names = original_names(api.all_objects())
    assert {"gpu-node-0", "prioritized-alternatives", "pod3", "preferred-gpu", "ctr0",
            "vision-research", "gpu-2x"} <= names  # fmt: skip
    leaked = sorted(n for n in names if n in text)
    assert leaked == []
    # Kept: what the allocation depends on.
    for kept in ("gpu.example.com", "gpu-0", "LATEST-GPU-MODEL", "memory", "80Gi", "model"):
        assert kept in text
    assert set(table.values()) >= {"gpu-node-0", "prioritized-alternatives", "pod3"}

    plain = capture(api, tmp_path, "plain")
    assert plain.exit_code == 0, plain.output
    redacted = decisions(tmp_path / "a.db", tmp_path / "red")
    assert redacted["added"] != {"gpu-2x": 1}  # the group's name is a pseudonym too
    assert translate(redacted, table) == decisions(tmp_path / "b.db", tmp_path / "plain")


def test_pseudonyms_are_stable_and_table_maps_them_back() -> None:
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"namespace": "team-a", "name": "train-0", "labels": {"app": "train"}},
        "spec": {"nodeName": "node-7", "containers": [{"name": "main", "image": "corp/img:1"}]},
    }
    first, second = Redactor(), Redactor()
    a, b = first.redact("Pod", pod), second.redact("Pod", pod)
    assert a == b and a != pod
    assert a["metadata"]["namespace"].startswith("ns-") and a["spec"]["nodeName"].startswith(
        "node-"
    )
    table = first.table()
    assert table[a["metadata"]["name"]] == "train-0"
    assert table[a["spec"]["nodeName"]] == "node-7"
    assert pod["metadata"]["name"] == "train-0"  # the input is not mutated
    # Another key, other pseudonyms (so a table leaks nothing about another capture).
    assert Redactor(b"other").redact("Pod", pod)["metadata"]["name"] != a["metadata"]["name"]


def test_a_taint_rules_pool_takes_the_slices_pseudonym() -> None:
    redactor = Redactor()
    pool_spec = {"name": "n1", "generation": 1, "resourceSliceCount": 1}
    slice_ = {
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": pool_spec},
    }
    selector = {"driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}
    rule = {
        "kind": "DeviceTaintRule",
        "metadata": {"name": "r"},
        "spec": {"deviceSelector": selector, "taint": {"key": "k", "effect": "NoSchedule"}},
    }
    pool = redactor.redact("ResourceSlice", slice_)["spec"]["pool"]["name"]
    redacted = redactor.redact("DeviceTaintRule", rule)["spec"]["deviceSelector"]
    assert redacted == {"driver": "gpu.example.com", "pool": pool, "device": "gpu-0"}
    assert pool != "n1"


def test_the_table_is_written_as_indented_json(tmp_path: Path) -> None:
    redactor = Redactor()
    pseudonym = redactor.name("node", "node-7")
    redactor.write_table(tmp_path / "t.json")
    text = (tmp_path / "t.json").read_text()
    assert json.loads(text) == redactor.table() == {pseudonym: "node-7"}
    assert text == f'{{\n  "{pseudonym}": "node-7"\n}}'
