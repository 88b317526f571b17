"""The scale-up's expansion writes the best estimate's placements again (recorded with
``ClusterSnapshot.recording``, written with ``place``) instead of searching for them twice: it
must end exactly where a second search ends, and ``place`` must refuse a placement whose state
is gone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import SchedulingError
from drasnap.snapshot.k8s.kinds import key_of
from drasnap.snapshot.simulation import scale_up
from drasnap.snapshot.simulation.inputs import instantiate
from drasnap.snapshot.simulation.runner import prepare, simulate
from drasnap.snapshot.simulation.settings import Settings
from drasnap.store import MemoryStore, Store, VersionedStore

from tests.snapshot.simulation.test_scenarios import comparable, interrupted_run, never_start


def _everything(store: VersionedStore) -> dict[str, dict[str, Any]]:
    return {kind: dict(store.items(kind)) for kind in store.kinds()}


def _run(settings: Settings) -> tuple[Any, ClusterSnapshot]:
    resolved = settings.resolved()
    cs = ClusterSnapshot(MemoryStore(), features=resolved.feature_gates)
    return simulate(cs, resolved, lambda: prepare(resolved)), cs


@pytest.mark.parametrize(
    "settings",
    [
        Settings("scale-up", pods=41),  # one group: the last estimate is the best
        Settings("scale-up", pods=40, node_groups=3),  # the first of three is the best
        Settings("scale-up", pods=24, devices="partitionable"),
    ],
    ids=["one-group", "three-groups", "partitionable"],
)
def test_the_expansion_written_again_ends_where_a_second_search_ends(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    places: list[str] = []
    real_place = ClusterSnapshot.place

    def counting_place(self: ClusterSnapshot, pod: Any, placed: Any) -> None:
        places.append(key_of(pod))
        real_place(self, pod, placed)

    monkeypatch.setattr(ClusterSnapshot, "place", counting_place)
    replayed, replayed_cs = _run(settings)
    assert len(places) == replayed.pods_placed > 0  # every placement of the expansion replayed

    searching = scale_up.binpack

    def search_again(*args: Any, again: Any = None, **kwargs: Any) -> Any:
        return searching(*args, **kwargs)  # the expansion searches as the estimate did

    monkeypatch.setattr(scale_up, "binpack", search_again)
    places.clear()
    searched, searched_cs = _run(settings)
    assert places == []
    assert comparable(replayed) == comparable(searched)
    assert _everything(replayed_cs.store) == _everything(searched_cs.store)


def test_a_run_resumed_before_its_expansion_searches_and_ends_alike(tmp_path: Path) -> None:
    # The estimates' decisions live in the process that made them: a run resumed at the
    # expansion step finds them gone and searches again, to the same end.
    settings = Settings("scale-up", pods=40, node_groups=2).resolved()
    reference, _ = _run(settings)
    db = tmp_path / "sim.db"
    interrupted_run(db, settings, at_step=2)  # both estimates saved, the expansion not begun
    with ClusterSnapshot(Store.open(db)) as cs:
        resumed = simulate(cs, settings, never_start, resume=True)
    assert resumed.resumed is True
    assert comparable(resumed) == comparable(reference)


def test_place_refuses_a_placement_whose_state_is_gone() -> None:
    settings = Settings("scale-up", pods=2).resolved()
    start = prepare(settings)
    cs = ClusterSnapshot(MemoryStore(), features=settings.feature_gates)
    cs.dra.add_device_classes(start.classes)
    cs.dra.add_claims(start.claims)  # the pending pods' claims
    group = start.groups[0]
    first, second = start.pending
    node, slices = instantiate(group, "n1")

    cs.fork("try")
    cs.add_node(node, slices=slices)
    with cs.recording() as log:
        assert cs.schedule_pod_anywhere(first, ["n1"]) == "n1"
    cs.revert()
    (placed,) = log
    assert placed.pod == key_of(first) and placed.node == "n1"

    with pytest.raises(SchedulingError, match="stale"):
        cs.place(first, placed)  # the node is gone with the revert
    cs.add_node(node, slices=slices)
    with pytest.raises(SchedulingError, match="stale"):
        cs.place(second, placed)  # another pod's decision
    # The device the recorded allocation names is taken by another pod meanwhile.
    assert cs.schedule_pod_anywhere(second, ["n1"]) == "n1"
    with pytest.raises(SchedulingError, match="stale"):
        cs.place(first, placed)
    cs.unschedule_pod(second["metadata"].get("namespace", "default"), second["metadata"]["name"])
    cs.place(first, placed)  # the state it was made on again: written as recorded
    assert cs.pod(first["metadata"].get("namespace", "default"), first["metadata"]["name"])
    with pytest.raises(SchedulingError, match="stale"):
        cs.place(first, placed)  # already on a node
