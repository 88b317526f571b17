"""The patch and patch-set case tables of upstream's ``simulator/common/patch_test.go`` and
``patchset_test.go``, on every backend.

A spec "patch" is one layer of ours: cases about a single patch are built in a forked layer
(depth 1), so tombstones are real entries there. Layers are given base first; a value of DEL
is a Delete (⊘). Checks go through the public API only (get, items, in_current_layer,
layers() entry counts), after the store is reopened for the sqlite-reopen and postgres-reopen
backends.
"""

from __future__ import annotations

from typing import Any

import pytest
from drasnap.store.interface import MISS

DEL = object()


def build(backend: Any, layers: list[dict[str, Any]]) -> Any:
    store = backend.open()
    for depth, layer in enumerate(layers):
        if depth:
            store.fork(f"layer-{depth}")
        for key, value in layer.items():
            if value is DEL:
                store.delete("k", key)
            else:
                store.put("k", key, value)
    return backend.reopen(store)


def check_layer(store: Any, modified: dict[str, Any], deleted: set[str]) -> None:
    """The top layer holds exactly ``modified`` and the tombstones ``deleted``."""
    for key, value in modified.items():
        assert store.in_current_layer("k", key), key
        assert store.get("k", key) == value
    for key in deleted:
        assert not store.in_current_layer("k", key), key
        assert store.get("k", key, MISS) is MISS
    assert store.layers()[-1].entries == len(modified) + len(deleted)


# -- Patch (patch_test.go) -------------------------------------------------------------------------


def test_patch_operations(backend: Any) -> None:
    store = backend.open()
    store.fork()
    assert store.get("k", "a", MISS) is MISS
    assert not store.in_current_layer("k", "a")
    store.put("k", "a", 1)
    assert store.get("k", "a") == 1
    store.put("k", "a", 2)
    assert store.get("k", "a") == 2
    store.delete("k", "a")
    assert store.get("k", "a", MISS) is MISS
    assert not store.in_current_layer("k", "a")
    store.put("k", "a", 3)
    assert store.get("k", "a") == 3
    assert store.in_current_layer("k", "a")
    store.delete("k", "c")
    store = backend.reopen(store)
    assert store.get("k", "c", MISS) is MISS
    check_layer(store, {"a": 3}, {"c"})


CREATE_PATCH = [
    ("SourceMapOnlyNoModifications", {"k1": 1, "k2": 2}, {}, [], {"k1": 1, "k2": 2}, set()),
    ("NilSourceMapAddAndDelete", None, {"a": 1, "b": 2}, ["b"], {"a": 1}, {"b"}),
    ("EmptySourceMapAddAndDelete", {}, {"x": 10}, ["y"], {"x": 10}, {"y"}),
    (
        "NonEmptySourceMapAddOverwriteDelete",
        {"orig1": 100, "orig2": 200},
        {"new1": 300, "orig1": 101},
        ["orig2", "new1"],
        {"orig1": 101},
        {"orig2", "new1"},
    ),
    (
        "DeleteKeyFromSourceMap",
        {"key_to_delete": 70, "key_to_keep": 80},
        {},
        ["key_to_delete"],
        {"key_to_keep": 80},
        {"key_to_delete"},
    ),
    ("AddOnlyNoSourceMap", None, {"add1": 10, "add2": 20}, [], {"add1": 10, "add2": 20}, set()),
    ("DeleteOnlyNoSourceMap", None, {}, ["del1", "del2"], {}, {"del1", "del2"}),
    ("DeleteKeyNotPresentInSourceOrAdded", {"a": 1}, {"b": 2}, ["c"], {"a": 1, "b": 2}, {"c"}),
    ("AddKeyThenDeleteIt", {"base": 100}, {"temp": 50}, ["temp"], {"base": 100}, {"temp"}),
    (
        "AllOperations",
        {"s1": 1, "s2": 2, "s3": 3},
        {"a1": 10, "s2": 22, "a2": 20},
        ["s1", "a1", "nonexistent"],
        {"s2": 22, "s3": 3, "a2": 20},
        {"s1", "a1", "nonexistent"},
    ),
    ("NoOperationsEmptySource", {}, {}, [], {}, set()),
]


@pytest.mark.parametrize(
    ("source", "add", "delete", "want_mod", "want_del"),
    [c[1:] for c in CREATE_PATCH],
    ids=[c[0] for c in CREATE_PATCH],
)
def test_create_patch(
    backend: Any,
    source: dict[str, int] | None,
    add: dict[str, int],
    delete: list[str],
    want_mod: dict[str, int],
    want_del: set[str],
) -> None:
    store = backend.open()
    store.fork("patch")
    for key, value in (source or {}).items():
        store.put("k", key, value)
    for key, value in add.items():
        store.put("k", key, value)
    for key in delete:
        store.delete("k", key)
    store = backend.reopen(store)
    check_layer(store, want_mod, want_del)
    assert store.items("k") == want_mod


MERGE = [
    ("PatchBOverwritesValueInPatchA", {"a": 1, "b": 2}, set(), {"b": 22, "c": 3}, set(),
     {"a": 1, "b": 22, "c": 3}, set()),
    ("PatchBDeletesValuePresentInPatchA", {"a": 1, "b": 2}, set(), {}, {"a"}, {"b": 2}, {"a"}),
    ("PatchBDeletesValueAlreadyDeletedInPatchA", {}, {"x"}, {}, {"x", "y"}, {}, {"x", "y"}),
    ("PatchBAddsValuePreviouslyDeletedInPatchA", {}, {"x"}, {"x": 10}, set(), {"x": 10}, set()),
    ("MergeEmptyPatchBIntoNonEmptyPatchA", {"a": 1}, {"b"}, {}, set(), {"a": 1}, {"b"}),
    ("MergeNonEmptyPatchBIntoEmptyPatchA", {}, set(), {"a": 1}, {"b"}, {"a": 1}, {"b"}),
    ("MergeTwoEmptyPatches", {}, set(), {}, set(), {}, set()),
    ("NoOverlapBetweenPatchAAndPatchBModifications", {"a1": 1, "a2": 2}, set(),
     {"b1": 10, "b2": 20}, set(), {"a1": 1, "a2": 2, "b1": 10, "b2": 20}, set()),
    ("NoOverlapBetweenPatchAAndPatchBDeletions", {}, {"a1", "a2"}, {}, {"b1", "b2"}, {},
     {"a1", "a2", "b1", "b2"}),
    ("PatchBOnlyAddsNewKeysPatchAUnchanged", {"orig": 5}, set(), {"new1": 100, "new2": 200},
     set(), {"orig": 5, "new1": 100, "new2": 200}, set()),
    ("PatchBOnlyDeletesNewKeysPatchAUnchanged", {"orig": 5}, set(), {}, {"del1", "del2"},
     {"orig": 5}, {"del1", "del2"}),
    ("AllInOne", {"k1": 1, "k2": 2, "k3": 3}, {"d1", "d2"}, {"k2": 22, "k4": 4, "d1": 11},
     {"k3", "d2", "d3"}, {"k1": 1, "k2": 22, "k4": 4, "d1": 11}, {"k3", "d2", "d3"}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("a_mod", "a_del", "b_mod", "b_del", "want_mod", "want_del"),
    [c[1:] for c in MERGE],
    ids=[c[0] for c in MERGE],
)
def test_merge_patches(
    backend: Any,
    a_mod: dict[str, int],
    a_del: set[str],
    b_mod: dict[str, int],
    b_del: set[str],
    want_mod: dict[str, int],
    want_del: set[str],
) -> None:
    store = backend.open()
    for layer_mod, layer_del in ((a_mod, a_del), (b_mod, b_del)):
        store.fork()
        for key, value in layer_mod.items():
            store.put("k", key, value)
        for key in sorted(layer_del):
            store.delete("k", key)
    store = backend.reopen(store)
    assert store.commit() == 1
    store = backend.reopen(store)
    check_layer(store, want_mod, want_del)


# -- PatchSet (patchset_test.go) -------------------------------------------------------------------

AS_MAP = [
    ("EmptyPatchSet", [], {}),
    ("SingleLayerNoDeletions", [{"a": 1, "b": 2}], {"a": 1, "b": 2}),
    ("SingleLayerOnlyDeletions", [{"a": DEL, "b": DEL}], {}),
    ("SingleLayerModificationsAndDeletions", [{"a": 1, "b": DEL, "c": 3}], {"a": 1, "c": 3}),
    ("MultipleLayersNoDeletionsOverwrite", [{"a": 1, "b": 2}, {"b": 22, "c": 3}],
     {"a": 1, "b": 22, "c": 3}),
    ("MultipleLayersWithDeletions", [{"a": 1, "b": DEL, "x": 100}, {"c": 3, "x": 101, "a": DEL}],
     {"c": 3, "x": 101}),
    ("MultipleLayersDeletionInLowerLayer", [{"a": DEL, "b": 2}, {"c": 3}], {"b": 2, "c": 3}),
    ("MultipleLayersAddAfterDelete", [{"a": DEL}, {"a": 11, "b": 2}], {"a": 11, "b": 2}),
    ("MultipleLayersDeletePreviouslyAdded", [{"a": 1, "b": 2}, {"c": 3, "b": DEL}],
     {"a": 1, "c": 3}),
    ("AllInOne", [{"k1": 1, "k2": 2}, {"k2": 22, "k3": 3, "k1": DEL},
                  {"k1": 111, "k3": 33, "k4": 4, "deleted": DEL}],
     {"k2": 22, "k3": 33, "k4": 4, "k1": 111}),
]  # fmt: skip


@pytest.mark.parametrize(("layers", "want"), [c[1:] for c in AS_MAP], ids=[c[0] for c in AS_MAP])
def test_as_map(backend: Any, layers: list[dict[str, Any]], want: dict[str, int]) -> None:
    store = build(backend, layers)
    assert store.items("k") == want
    assert sorted(store.keys("k")) == sorted(want)
    assert store.count("k") == len(want)
    for key, value in want.items():
        assert store.get("k", key) == value


COMMIT = [
    ("CommitEmptyPatchSet", [], {}),
    ("CommitSingleLayer", [{"a": 1}], {"a": 1}),
    ("CommitTwoLayersNoOverlap", [{"a": 1}, {"b": 2}], {"a": 1, "b": 2}),
    ("CommitTwoLayersWithOverwrite", [{"a": 1}, {"a": 2}], {"a": 2}),
    ("CommitTwoLayersWithDeleteInTopLayer", [{"a": 1, "b": 5}, {"c": 3, "a": DEL}],
     {"b": 5, "c": 3}),
    ("CommitTwoLayersWithDeleteInBottomLayer", [{"a": 1, "b": DEL}, {"a": 11, "c": 3}],
     {"a": 11, "c": 3}),
    ("CommitThreeLayers", [{"a": 1, "b": 2, "z": 100}, {"b": 22, "c": 3, "a": DEL},
                           {"c": 33, "d": 4, "a": 111, "b": DEL, "deleted": DEL}],
     {"z": 100, "c": 33, "d": 4, "a": 111}),
    ("CommitMultipleLayersDeleteAndAddBack", [{"x": 10}, {"x": DEL}, {"x": 30},
                                              {"y": 40, "x": DEL}], {"y": 40}),
    ("CommitEmptyLayersBetweenDataLayers", [{"a": 1}, {}, {"b": 2}, {}, {"c": 3}],
     {"a": 1, "b": 2, "c": 3}),
]  # fmt: skip


@pytest.mark.parametrize(("layers", "want"), [c[1:] for c in COMMIT], ids=[c[0] for c in COMMIT])
def test_commit(backend: Any, layers: list[dict[str, Any]], want: dict[str, int]) -> None:
    store = build(backend, layers)
    assert store.items("k") == want
    depth = store.depth
    for _ in range(depth):
        assert store.commit() == depth - 1
        depth -= 1
        store = backend.reopen(store)
        assert store.depth == depth
        assert store.items("k") == want
    assert store.commit() == 0  # a no-op at the base
    assert store.items("k") == want


REVERT = [
    ("RevertEmptyPatchSet", [], {}, [{}]),
    ("RevertSingleLayer", [{"a": 1}], {"a": 1}, [{"a": 1}]),
    ("RevertTwoLayersNoOverlap", [{"a": 1}, {"b": 2}], {"a": 1, "b": 2}, [{"a": 1}, {"a": 1}]),
    ("RevertTwoLayersWithOverwrite", [{"a": 1}, {"a": 2}], {"a": 2}, [{"a": 1}, {"a": 1}]),
    ("RevertTwoLayersWithDeleteInTopLayer", [{"a": 1, "b": 5}, {"c": 3, "a": DEL}],
     {"b": 5, "c": 3}, [{"a": 1, "b": 5}, {"a": 1, "b": 5}]),
    ("RevertThreeLayers", [{"a": 1, "b": 2, "z": 100}, {"b": 22, "c": 3, "a": DEL},
                           {"c": 33, "d": 4, "a": 111, "b": DEL, "deleted": DEL}],
     {"z": 100, "c": 33, "d": 4, "a": 111},
     [{"a": 1, "b": 2, "z": 100}, {"a": 1, "b": 2, "z": 100}, {"z": 100, "b": 22, "c": 3}]),
    ("RevertMultipleLayersDeleteAndAddBack", [{"x": 10}, {"x": DEL}, {"x": 30},
                                              {"y": 40, "x": DEL}], {"y": 40},
     [{"x": 10}, {"x": 10}, {}, {"x": 30}]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("layers", "initial", "after"), [c[1:] for c in REVERT], ids=[c[0] for c in REVERT]
)
def test_revert(
    backend: Any,
    layers: list[dict[str, Any]],
    initial: dict[str, int],
    after: list[dict[str, int]],
) -> None:
    store = build(backend, layers)
    assert store.items("k") == initial
    n = len(layers)
    for i in range(n + 1):  # one more than there are layers: the last must be a no-op
        store.revert()
        store = backend.reopen(store)
        assert store.items("k") == after[max(0, n - i - 1)]
    assert store.depth == 0


def test_fork_revert(backend: Any) -> None:
    store = backend.open()
    assert store.items("k") == {}
    assert store.fork() == 1
    store.put("k", "a", 1)
    store.put("k", "b", 2)
    store.delete("k", "a")
    store = backend.reopen(store)
    assert store.revert() == 0
    store = backend.reopen(store)
    assert store.items("k") == {}


def test_fork_commit(backend: Any) -> None:
    # Upstream asserts this inverted (patchset_test.go); the true final state is {}.
    store = backend.open()
    store.fork()
    assert store.fork() == 2
    store.put("k", "a", 1)
    store.put("k", "b", 2)
    store.delete("k", "a")
    assert store.commit() == 1
    store = backend.reopen(store)
    assert store.revert() == 0
    store = backend.reopen(store)
    assert store.items("k") == {}


FIND = [
    ("EmptyPatchSet_KeyNotFound", [], "a", MISS),
    ("SingleLayer_KeyFound", [{"a": 1, "b": 2}], "a", 1),
    ("SingleLayer_KeyNotFound", [{"a": 1}], "x", MISS),
    ("SingleLayer_KeyDeleted", [{"a": DEL, "b": 2}], "a", MISS),
    ("MultiLayer_KeyInTopLayer", [{"a": 1}, {"a": 10, "b": 2}], "a", 10),
    ("MultiLayer_KeyInBottomLayer", [{"a": 1, "b": 2}, {"b": 22}], "a", 1),
    ("MultiLayer_KeyOverwrittenThenDeleted", [{"a": 1}, {"a": 10}, {"a": DEL, "b": 2}], "a", MISS),
    ("MultiLayer_KeyDeletedThenAddedBack", [{"a": 1}, {"a": DEL}, {"a": 100, "b": 2}], "a", 100),
    ("MultiLayer_KeyNotFoundInAnyLayer", [{"a": 1}, {"b": 2}], "x", MISS),
    ("MultiLayer_KeyDeletedInMiddleLayer_NotFound", [{"a": 1}, {"a": DEL, "b": 2}, {"c": 3}], "a",
     MISS),
    ("MultiLayer_KeyPresentInBase_DeletedInOverlay_ReAddedInTop", [{"k1": 1}, {"k1": DEL},
                                                                   {"k1": 111}], "k1", 111),
]  # fmt: skip


@pytest.mark.parametrize(("layers", "key", "want"), [c[1:] for c in FIND], ids=[c[0] for c in FIND])
def test_find_value(backend: Any, layers: list[dict[str, Any]], key: str, want: Any) -> None:
    store = build(backend, layers)
    for _ in range(2):  # uncached, then cached
        found = store.get("k", key, MISS)
        assert found is MISS if want is MISS else found == want


OPERATIONS = [
    ("SetCurrent_NewKey_InitiallyEmptyPatchSet", [], ["set a 1"], "a", True),
    ("SetCurrent_NewKey_OnExistingEmptyLayer", [{}], ["set a 1"], "a", True),
    ("SetCurrent_OverwriteKey_InCurrentPatch", [{"a": 10}], ["set a 1"], "a", True),
    ("SetCurrent_OverwriteKey_InLowerPatch_AfterFork", [{"a": 10}], ["fork", "set a 1"], "a",
     True),
    ("DeleteCurrent_ExistingKey_InCurrentPatch", [{"a": 1}], ["del a"], "a", False),
    ("DeleteCurrent_ExistingKey_InLowerPatch_AfterFork", [{"a": 1}], ["fork", "del a"], "a",
     False),
    ("DeleteCurrent_NonExistentKey_OnExistingEmptyLayer", [{}], ["del x"], "x", False),
    ("DeleteCurrent_NonExistentKey_InitiallyEmptyPatchSet", [], ["del x"], "x", False),
    ("InCurrentPatch_KeySetInCurrent", [{"a": 1}], [], "a", True),
    ("InCurrentPatch_KeySetInLower_NotInCurrent_AfterFork", [{"a": 1}], ["fork"], "a", False),
    ("InCurrentPatch_KeyDeletedInCurrent", [{"a": 1}], ["del a"], "a", False),
    ("InCurrentPatch_NonExistentKey_InitiallyEmptyPatchSet", [], [], "a", False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("layers", "steps", "key", "want"), [c[1:] for c in OPERATIONS], ids=[c[0] for c in OPERATIONS]
)
def test_in_current_layer(
    backend: Any, layers: list[dict[str, Any]], steps: list[str], key: str, want: bool
) -> None:
    store = build(backend, layers)
    for step in steps:
        op, *args = step.split()
        if op == "fork":
            store.fork()
        elif op == "set":
            store.put("k", args[0], int(args[1]))
        else:
            store.delete("k", args[0])
    store = backend.reopen(store)
    assert store.in_current_layer("k", key) is want


CACHE = [
    ("Initial_EmptyPatchSet", [], [], {}, False, {}),
    ("Initial_WithData_NoCacheAccess", [{"a": 1}], [], {}, False, {"a": 1}),
    ("FindValue_PopulatesCacheForKey", [{"a": 1, "b": 2}], ["find a"], {"a": 1}, False,
     {"a": 1, "b": 2}),
    ("FindValue_DeletedKey_PopulatesCacheWithNil", [{"a": DEL, "b": 2}], ["find a"],
     {"a": None}, False, {"b": 2}),
    ("AsMap_PopulatesAndSyncsCache", [{"a": 1, "b": DEL, "c": 3}], ["items"], {"a": 1, "c": 3},
     True, {"a": 1, "c": 3}),
    ("SetCurrent_UpdatesCache_NewKey", [{}], ["set x 10"], {"x": 10}, False, {"x": 10}),
    ("SetCurrent_UpdatesCache_OverwriteKey", [{"x": 5}], ["find x", "set x 10"], {"x": 10},
     False, {"x": 10}),
    ("DeleteCurrent_UpdatesCache", [{"x": 5}], ["find x", "del x"], {"x": None}, False, {}),
    ("Revert_ClearsAffectedCacheEntries_And_SetsCacheNotInSync", [{"a": 1}, {"b": 2, "a": 11}],
     ["find a", "find b", "revert"], {}, False, {"a": 1}),
    ("Revert_OnSyncedCache_SetsCacheNotInSync", [{"a": 1}, {"b": 2}], ["items", "revert"],
     {"a": 1}, False, {"a": 1}),
    ("Commit_DoesNotInvalidateCache_IfValuesConsistent", [{"a": 1}, {"b": 2}],
     ["find a", "find b", "commit"], {"a": 1, "b": 2}, False, {"a": 1, "b": 2}),
    ("Commit_OnSyncedCache_KeepsCacheInSync", [{"a": 1}, {"b": 2}], ["items", "commit"],
     {"a": 1, "b": 2}, True, {"a": 1, "b": 2}),
    ("Fork_DoesNotInvalidateCache", [{"a": 1}], ["find a", "fork"], {"a": 1}, False, {"a": 1}),
    ("Fork_OnSyncedCache_KeepsCacheInSync", [{"a": 1}], ["items", "fork"], {"a": 1}, True,
     {"a": 1}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("layers", "steps", "want_cache", "want_sync", "want_items"),
    [c[1:] for c in CACHE],
    ids=[c[0] for c in CACHE],
)
def test_cache(
    backend: Any,
    layers: list[dict[str, Any]],
    steps: list[str],
    want_cache: dict[str, Any],
    want_sync: bool,
    want_items: dict[str, int],
) -> None:
    store = build(backend, layers)
    if backend.name == "memory":
        store._drop_cache()  # upstream builds the patches directly, bypassing the cache
    for step in steps:
        op, *args = step.split()
        if op == "find":
            store.get("k", args[0])
        elif op == "items":
            store.items("k")
        elif op == "set":
            store.put("k", args[0], int(args[1]))
        elif op == "del":
            store.delete("k", args[0])
        else:
            getattr(store, op)()
    if backend.name == "memory":
        # White box: the patch set's cache holds exactly what the upstream test asserts.
        assert store._cache_view("k") == (want_cache, want_sync)
    # Whatever the cache holds, reads agree with the effective state.
    store = backend.reopen(store)
    assert store.items("k") == want_items
    for key, value in want_cache.items():
        assert store.get("k", key) == (want_items.get(key) if value is None else value)
