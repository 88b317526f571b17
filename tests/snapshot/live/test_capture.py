"""drasnap capture against an API server on 127.0.0.1 (tests/snapshot/live/kube_api.py),
through the real kubernetes client: pages, 410 restarts, discovery, 403, the manifest, and the
same decisions as the same objects given as files."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from drasnap.tools.cli import cli

from tests.paths import FIXTURES
from tests.snapshot.live.kube_api import FakeKubeApi

DEMO = FIXTURES / "demos" / "prioritized-alternatives"
NVIDIA = FIXTURES / "manifests" / "nvidia-quickstart-v1beta1"
PAGE = 2  # every kind with objects spans several pages


def demo_cluster(api: FakeKubeApi) -> None:
    """The DRA example driver's prioritized-alternatives demo, two nodes and six pending pods
    (two more than the nodes' GPUs: a scale-up), as a cluster serves them."""
    stored = api.load(DEMO / "node-dump.yaml", DEMO / "prioritized-alternatives.yaml")
    node = next(o for o in stored if o["kind"] == "Node")
    slice_ = next(o for o in stored if o["kind"] == "ResourceSlice")
    second = copy.deepcopy(node)
    second["metadata"] = {"name": "gpu-node-1", "labels": {**node["metadata"]["labels"]}}
    second["metadata"]["labels"]["kubernetes.io/hostname"] = "gpu-node-1"
    api.apply("ADDED", second)
    other = copy.deepcopy(slice_)
    other["metadata"] = {"name": "gpu-node-1-gpu.example.com-x7k2p"}
    other["spec"]["nodeName"] = "gpu-node-1"
    other["spec"]["pool"]["name"] = "gpu-node-1"
    for i, device in enumerate(other["spec"]["devices"]):
        device["attributes"]["uuid"] = {"string": f"gpu-00000000-0000-4000-8000-00000000000{i}"}
    api.apply("ADDED", other)
    pod = next(o for o in stored if o["kind"] == "Pod" and o["metadata"]["name"] == "pod1")
    for i in range(2, 6):
        extra = copy.deepcopy(pod)
        extra["metadata"] = {"namespace": pod["metadata"]["namespace"], "name": f"pod{i}"}
        api.apply("ADDED", extra)


@pytest.fixture
def api() -> Iterator[FakeKubeApi]:
    server = FakeKubeApi(max_limit=1000)
    yield server
    server.stop()


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def capture(api: FakeKubeApi, tmp_path: Path, out: str = "cap", *extra: str) -> Any:
    url = api.start() if api.server is None else f"http://127.0.0.1:{api.server.server_address[1]}"
    config = api.kubeconfig(tmp_path / "kubeconfig", url)
    return run("capture", "--kubeconfig", str(config), "-o", str(tmp_path / out),
               "--page-size", str(PAGE), *extra)  # fmt: skip


def decisions(db: Path, source: Path) -> dict[str, Any]:
    result = run("simulate", "autoscale", str(db), "--from", str(source), "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    # The digest covers the run's record, which names its --from folder.
    for key in ("name", "seconds", "state_digest"):
        data.pop(key)
    return data


def write_files(objects: list[dict[str, Any]], directory: Path) -> Path:
    directory.mkdir()
    (directory / "cluster.yaml").write_text(yaml.safe_dump_all(objects))
    return directory


@pytest.mark.slow
def test_capture_gives_the_decisions_of_the_same_objects_as_files(
    api: FakeKubeApi, tmp_path: Path
) -> None:
    demo_cluster(api)
    result = capture(api, tmp_path, "cap", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    kinds = summary["kinds"]
    # Every kind with objects came in several pages of PAGE objects, nothing lost or doubled.
    assert kinds["Pod"]["objects"] == 6 and kinds["Pod"]["pages"] == 3
    assert all(k["pages"] == max(1, -(-k["objects"] // PAGE)) for k in kinds.values())
    assert kinds["Node"]["objects"] == 2
    assert kinds["ResourceSlice"]["objects"] == 2
    assert kinds["ResourceClaimTemplate"]["objects"] == 2
    assert all(k["resourceVersion"] for k in kinds.values())
    limits = {q["limit"][0] for m, p, q in api.requests if "limit" in q}
    assert limits == {str(PAGE)}
    assert {m for m, _, _ in api.requests} == {"GET"}  # a capture never writes to the cluster
    manifest = json.loads((tmp_path / "cap" / ".drasnap-capture.json").read_text())
    assert manifest["atomic"] is False and "not one atomic snapshot" in manifest["note"]
    assert manifest["kinds"]["Pod"]["resourceVersion"] == kinds["Pod"]["resourceVersion"]
    assert manifest["changedDuringCapture"] == []

    files = write_files(api.all_objects(), tmp_path / "files")
    captured = decisions(tmp_path / "a.db", tmp_path / "cap")
    given = decisions(tmp_path / "b.db", files)
    assert captured == given
    assert captured["added"] == {"gpu-2x": 1}  # the demo's six pods need a third node


def test_an_expired_continue_token_restarts_that_kinds_list(
    api: FakeKubeApi, tmp_path: Path
) -> None:
    demo_cluster(api)
    api.expire_continue["pods"] = 1
    result = capture(api, tmp_path, "cap", "--json")
    assert result.exit_code == 0, result.output
    pods = json.loads(result.stdout)["kinds"]["Pod"]
    assert pods["restarts"] == 1
    assert pods["objects"] == 6  # the restarted list, not the first page twice
    listed = json.loads((tmp_path / "cap" / "pods.json").read_text())["items"]
    assert sorted(p["metadata"]["name"] for p in listed) == [f"pod{i}" for i in range(6)]
    firsts = [q for _, p, q in api.requests if p == "/api/v1/pods" and "continue" not in q
              and "watch" not in q]  # fmt: skip
    assert len(firsts) == 2


@pytest.mark.slow
def test_older_dra_versions_are_discovered_and_converted(api: FakeKubeApi, tmp_path: Path) -> None:
    # A cluster serving resource.k8s.io v1beta1 only (NVIDIA's quickstart shapes): listed in
    # v1beta1, written as v1, the decisions of --from on the v1beta1 files themselves.
    api.dra_versions = ("v1beta1",)
    api.load(NVIDIA / "node-slices.yaml", NVIDIA / "one-gpu-two-pods.yaml")
    dump = yaml.safe_load_all((DEMO / "node-dump.yaml").read_text())
    node: dict[str, Any] = next(d for d in dump if d and d["kind"] == "Node")
    node["metadata"] = {"name": "gpu-node-1", "labels": {"drasnap.io/node-group": "gpu"}}
    api.apply("ADDED", node)
    result = capture(api, tmp_path, "cap", "--json")
    assert result.exit_code == 0, result.output
    kinds = json.loads(result.stdout)["kinds"]
    assert kinds["ResourceSlice"]["apiVersion"] == "resource.k8s.io/v1beta1"
    assert kinds["ResourceSlice"]["converted"] == kinds["ResourceSlice"]["objects"] > 0
    slices = json.loads((tmp_path / "cap" / "resourceslices.json").read_text())["items"]
    assert {s["apiVersion"] for s in slices} == {"resource.k8s.io/v1"}
    assert all("basic" not in d for s in slices for d in s["spec"]["devices"])
    assert any(p.startswith("/apis/resource.k8s.io/v1beta1/") for _, p, _ in api.requests)
    files = write_files(api.all_objects(), tmp_path / "files")
    assert decisions(tmp_path / "a.db", tmp_path / "cap") == decisions(tmp_path / "b.db", files)


def test_a_cluster_without_dra_is_said_so_and_captured(api: FakeKubeApi, tmp_path: Path) -> None:
    api.dra_versions = ()
    api.load(DEMO / "node-dump.yaml")
    result = capture(api, tmp_path, "cap", "--json")
    assert result.exit_code == 0, result.output
    assert "serves no resource.k8s.io API (DRA)" in result.stderr
    kinds = json.loads(result.stdout)["kinds"]
    assert "ResourceSlice" not in kinds and kinds["Node"]["objects"] == 1


def test_403_names_the_verb_and_resource_and_prints_the_cluster_role(
    api: FakeKubeApi, tmp_path: Path
) -> None:
    demo_cluster(api)
    api.forbidden.add(("list", "resourceclaims"))
    result = capture(api, tmp_path)
    assert result.exit_code == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: the API server forbids list resourceclaims.resource.k8s.io")
    role = yaml.safe_load(result.stderr.split("Error:")[0])
    assert role["kind"] == "ClusterRole"
    dra = next(r for r in role["rules"] if r["apiGroups"] == ["resource.k8s.io"])
    assert "resourceclaims" in dra["resources"] and dra["verbs"] == ["get", "list", "watch"]
    assert not (tmp_path / "cap").exists()  # nothing half-written
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".cap")] == []


def test_kinds_changed_while_the_capture_ran_are_named(api: FakeKubeApi, tmp_path: Path) -> None:
    demo_cluster(api)
    node = copy.deepcopy(api.objects["Node"][("", "gpu-node-1")])

    def change(kind: str) -> None:  # a node label changes once the nodes are listed
        if kind == "Pod" and api.after_list is not None:
            api.after_list = None
            node["metadata"]["labels"]["team"] = "b"
            api.apply("MODIFIED", node)

    api.after_list = change
    result = capture(api, tmp_path, "cap", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["changed_during_capture"] == ["Node"]
    assert "changed while the capture ran: Node" in result.stderr
    manifest = json.loads((tmp_path / "cap" / ".drasnap-capture.json").read_text())
    assert manifest["changedDuringCapture"] == ["Node"]


def test_namespaces_limit_the_namespaced_kinds(api: FakeKubeApi, tmp_path: Path) -> None:
    demo_cluster(api)
    result = capture(api, tmp_path, "cap", "--json", "--namespace", "elsewhere")
    assert result.exit_code == 0, result.output
    kinds = json.loads(result.stdout)["kinds"]
    assert kinds["Pod"]["objects"] == 0 and kinds["Node"]["objects"] == 2
    assert any(p == "/api/v1/namespaces/elsewhere/pods" for _, p, _ in api.requests)


def test_an_existing_output_and_a_missing_kubeconfig_are_one_line_errors(
    api: FakeKubeApi, tmp_path: Path
) -> None:
    (tmp_path / "cap").mkdir()
    (tmp_path / "cap" / "x").write_text("")
    result = capture(api, tmp_path)
    assert result.exit_code == 1 and "exists and is not an empty folder" in result.stderr
    result = run("capture", "--kubeconfig", str(tmp_path / "nope"), "-o", str(tmp_path / "o"))
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ") and len(result.stderr.strip().splitlines()) == 1


def test_the_readme_shows_the_cluster_role_capture_prints() -> None:
    from drasnap.snapshot import cluster_role

    readme = (FIXTURES.parents[1] / "README.md").read_text()
    assert f"```yaml\n{cluster_role()}```" in readme


@pytest.mark.slow
def test_the_priority_expanders_configmap_is_captured_for_expander_priorities(
    api: FakeKubeApi, tmp_path: Path
) -> None:
    demo_cluster(api)
    for name in ("cluster-autoscaler-priority-expander", "unrelated"):
        api.apply("ADDED", {"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"namespace": "kube-system", "name": name},
                            "data": {"priorities": "10:\n- gpu-.*\n"}})  # fmt: skip
    result = capture(api, tmp_path, "cap", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["kinds"]["ConfigMap"]["objects"] == 1  # by name only
    priorities = tmp_path / "cap" / "priority-expander.json"
    assert f"--expander-priorities {priorities}" in result.stderr
    chosen = ["--expander", "priority", "--expander-priorities", str(priorities)]
    ran = run("simulate", "autoscale", str(tmp_path / "s.db"), "--from", str(tmp_path / "cap"),
              *chosen, "--json")  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.stdout)["added"] == {"gpu-2x": 1}
