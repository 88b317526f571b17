"""The collector's pacing during a run: what it changes, and that it gives everything back."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.simulation import collector, lifecycle
from drasnap.snapshot.simulation.inputs import StartingObjects
from drasnap.snapshot.simulation.runner import prepare, simulate
from drasnap.snapshot.simulation.settings import Settings
from drasnap.store import MemoryStore


def test_paced_raises_the_threshold_and_restores_it_even_on_error() -> None:
    before = gc.get_threshold()
    try:
        with collector.paced():
            assert gc.get_threshold() == collector.PACED_THRESHOLD
            with collector.paced():  # a run inside a run leaves the pacing to the outer one
                assert gc.get_threshold() == collector.PACED_THRESHOLD
            assert gc.get_threshold() == collector.PACED_THRESHOLD
            raise KeyError("boom")
    except KeyError:
        pass
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_settle_freezes_only_inside_paced_and_a_cycle_is_collected_afterwards() -> None:
    collector.settle()
    assert gc.get_freeze_count() == 0  # outside a run: nothing is hidden from the collector

    class Node:
        other: Node

    with collector.paced():
        a, b = Node(), Node()
        a.other, b.other = b, a
        collector.settle()
        assert gc.get_freeze_count() > 0
        del a, b  # a cycle made garbage while frozen: not collected yet...
    # ...but given back when the run ends, and collected as usual.
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert not [o for o in gc.get_objects() if type(o) is Node]


def test_a_run_ends_with_the_collector_as_it_found_it() -> None:
    before = gc.get_threshold()
    settings = Settings("scale-down", nodes=12).resolved()
    cs = ClusterSnapshot(MemoryStore(), features=settings.feature_gates)
    outcome = simulate(cs, settings, lambda: prepare(settings))
    assert outcome.result["nodes_removed"] > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_session_lets_the_starting_cluster_go_once_the_run_has_loaded_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The objects of the built cluster the loaded snapshot does not share (the pods before
    # binding, removed nodes' slices) would otherwise live as long as the session.
    built: list[weakref.ref[StartingObjects]] = []

    def prepare_and_watch(settings: Settings, *, strict: bool = False) -> StartingObjects:
        cluster = prepare(settings, strict=strict)
        built.append(weakref.ref(cluster))
        return cluster

    monkeypatch.setattr(lifecycle, "prepare", prepare_and_watch)
    settings = Settings("scale-down", nodes=12).resolved()
    with lifecycle.RunSession(str(tmp_path / "run.db"), settings, write_behind=False) as session:
        outcome = session.run()
        gc.collect()
        assert len(built) == 1 and built[0]() is None  # the session is still open
    assert outcome.result["nodes_removed"] > 0
