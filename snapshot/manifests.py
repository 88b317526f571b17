"""Loading Kubernetes manifests (YAML and JSON files) into validated wire-format dicts.

Accepted input, per file:

- multi-document YAML (``---`` separated; empty documents are skipped);
- JSON (files ending in ``.json``);
- ``kind: List`` documents as ``kubectl get ... -o yaml/json`` writes them, with objects of
  any supported kind in ``items``;
- typed lists such as ``ResourceSliceList`` (what the API returns; their items usually carry
  no ``apiVersion``/``kind``, which are then taken from the list).

Every object goes through :func:`snapshot.validation.validate`; see there for what is checked
and normalised. YAML is read the way kubectl reads it as far as it matters here: unquoted
timestamps stay strings (PyYAML would build ``datetime`` objects), and a key repeated in one
mapping is an error (PyYAML would silently keep the last value). Other YAML 1.1 typing
(``1.10`` is the number 1.1, ``yes``/``on`` are booleans) is left as is, so those values are
reported by validation with the field path and a hint to quote them.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson
import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, ScalarNode

from snapshot.errors import ManifestError
from snapshot.kinds import KINDS, object_key
from snapshot.objects import KubeObject, describe_value, kind_of
from snapshot.validation import validate

try:
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

__all__ = ["MANIFEST_SUFFIXES", "Manifests", "load_manifests", "parse_manifests"]

MANIFEST_SUFFIXES: Final = (".yaml", ".yml", ".json")
"""File name endings picked up when a directory is walked."""

_KIND_FIELDS: Final[dict[str, str]] = {
    "DeviceClass": "classes",
    "ResourceSlice": "slices",
    "Node": "nodes",
    "ResourceClaimTemplate": "claim_templates",
    "ResourceClaim": "claims",
    "Pod": "pods",
}
_TIMESTAMP_TAG: Final = "tag:yaml.org,2002:timestamp"


@dataclass
class Manifests:
    """Validated objects grouped by kind; each list keeps file order.

    Iterating yields all objects in dependency order (classes, slices, nodes, claim
    templates, claims, pods). ``sources`` maps ``(kind, object_key)`` to where the object
    was read (``"path doc N"``, ``"path doc N items[i]"``).
    """

    classes: list[KubeObject] = field(default_factory=list)
    slices: list[KubeObject] = field(default_factory=list)
    nodes: list[KubeObject] = field(default_factory=list)
    claim_templates: list[KubeObject] = field(default_factory=list)
    claims: list[KubeObject] = field(default_factory=list)
    pods: list[KubeObject] = field(default_factory=list)
    sources: dict[tuple[str, str], str] = field(default_factory=dict)

    def add(self, obj: KubeObject, source: str | None = None) -> None:
        """Add one **validated** object. Two objects of the same kind and key are an error."""
        kind = kind_of(obj)
        key = (kind, object_key(obj))
        if key in self.sources:
            first = self.sources[key]
            where = f"{source}: " if source else ""
            raise ManifestError(
                f"{where}{kind} {key[1]} is defined twice (first in {first})",
                source=source,
                kind=kind,
                namespace=obj["metadata"].get("namespace"),
                name=obj["metadata"]["name"],
            )
        self.of_kind(kind).append(obj)
        self.sources[key] = source or "<unknown source>"

    def of_kind(self, kind: str) -> list[KubeObject]:
        """The list holding objects of ``kind`` (``KeyError`` for an unsupported kind)."""
        objects: list[KubeObject] = getattr(self, _KIND_FIELDS[kind])
        return objects

    def by_kind(self) -> dict[str, list[KubeObject]]:
        """``{kind: objects}`` for every supported kind, in dependency order."""
        return {kind: self.of_kind(kind) for kind in KINDS}

    def source_of(self, obj: KubeObject) -> str | None:
        """Where ``obj`` (or the object of the same kind and key) was read, if known."""
        return self.sources.get((kind_of(obj), object_key(obj)))

    def __iter__(self) -> Iterator[KubeObject]:
        for kind in KINDS:
            yield from self.of_kind(kind)

    def __len__(self) -> int:
        return sum(len(self.of_kind(kind)) for kind in KINDS)


def load_manifests(
    paths_or_dirs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    warnings: list[str] | None = None,
    skip_unknown_kinds: bool = False,
) -> Manifests:
    """Read and validate every object in the given files and directories.

    Directories are walked recursively in sorted path order, picking up files ending in
    ``.yaml``, ``.yml`` or ``.json``; hidden files and directories are skipped. A file named
    explicitly is read whatever its name: as JSON if it ends in ``.json``, else as YAML.

    Errors: a path that does not exist, an unreadable file, bad YAML/JSON (naming the file
    and line), or a document that is not a mapping raise :class:`ManifestError`; an invalid
    object raises :class:`ObjectValidationError` (``ManifestError`` is a subclass of it, so
    catching that one catches both), its message starting with the file and document
    (``"cluster.yaml doc 2: ResourceSlice node-a: spec.driver: required field is missing"``).
    Documents are counted from 1, list items from 0 (``"doc 1 items[3]"``).

    An object of an unknown kind (a ConfigMap, a Deployment, ...) is an error naming the
    file, document and kind, because a snapshot silently missing something the user meant
    to load is worse than one that refuses it. When loading a mixed dump on purpose
    (``kubectl get all,resourceslices,... -o yaml``), pass ``skip_unknown_kinds=True``: those
    objects are then skipped with a warning. The same kind and namespace/name twice is an
    error. Normalisations (see :func:`snapshot.validation.validate`) are appended to
    ``warnings`` as lines starting with the file and document.
    """
    manifests = Manifests()
    for path in _manifest_files(paths_or_dirs, warnings):
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ManifestError(
                f"{path}: cannot read: {exc.strerror or exc}", source=str(path)
            ) from exc
        _parse_into(
            manifests,
            data,
            source=str(path),
            as_json=path.suffix.lower() == ".json",
            warnings=warnings,
            skip_unknown_kinds=skip_unknown_kinds,
        )
    return manifests


def parse_manifests(
    text: str | bytes,
    *,
    source: str = "<string>",
    warnings: list[str] | None = None,
    skip_unknown_kinds: bool = False,
) -> Manifests:
    """Like :func:`load_manifests` for manifest text (YAML, or JSON which YAML also reads).

    Text starting with ``{`` is tried as JSON first (much faster than YAML for big dumps).
    ``source`` names the text in messages.
    """
    data = text.encode() if isinstance(text, str) else text
    manifests = Manifests()
    as_json = data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")
    if as_json:
        try:
            orjson.loads(data.removeprefix(b"\xef\xbb\xbf"))
        except orjson.JSONDecodeError:
            as_json = False  # e.g. a YAML flow mapping
    _parse_into(
        manifests,
        data,
        source=source,
        as_json=as_json,
        warnings=warnings,
        skip_unknown_kinds=skip_unknown_kinds,
    )
    return manifests


# --------------------------------------------------------------------------------------------


def _manifest_files(
    paths_or_dirs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    warnings: list[str] | None,
) -> Iterator[Path]:
    if isinstance(paths_or_dirs, str | os.PathLike):
        paths_or_dirs = [paths_or_dirs]
    for entry in paths_or_dirs:
        path = Path(entry)
        if path.is_dir():
            found = sorted(
                (
                    p
                    for p in path.rglob("*")
                    if p.suffix.lower() in MANIFEST_SUFFIXES
                    and not any(part.startswith(".") for part in p.relative_to(path).parts)
                    and p.is_file()
                ),
                key=lambda p: p.relative_to(path).parts,
            )
            if not found and warnings is not None:
                warnings.append(f"{path}: no {'/'.join(MANIFEST_SUFFIXES)} files in directory")
            yield from found
        elif path.exists():
            yield path
        else:
            raise ManifestError(f"{path}: no such file or directory", source=str(path))


def _parse_into(
    manifests: Manifests,
    data: bytes,
    *,
    source: str,
    as_json: bool,
    warnings: list[str] | None,
    skip_unknown_kinds: bool,
) -> None:
    if as_json:
        documents: Iterable[tuple[str, Any]] = [(source, _load_json(data, source))]
    else:
        documents = _load_yaml(data, source)
    for where, document in documents:
        if document is None:
            continue
        if not isinstance(document, dict):
            raise ManifestError(
                f"{where}: expected a Kubernetes object or List (a mapping), "
                f"got {describe_value(document)}",
                source=where,
            )
        for item_where, obj in _objects_of(document, where):
            if skip_unknown_kinds and not _is_supported(obj):
                if warnings is not None:
                    warnings.append(
                        f"{item_where}: skipped {obj.get('kind')} "
                        f"{_name_for_message(obj)} ({obj.get('apiVersion')}): not a supported kind"
                    )
                continue
            manifests.add(validate(obj, source=item_where, warnings=warnings), item_where)


def _objects_of(document: dict[str, Any], where: str) -> Iterator[tuple[str, Any]]:
    """The objects of one document: itself, or the items of a List."""
    kind = document.get("kind")
    if not (isinstance(kind, str) and kind.endswith("List") and "items" in document):
        yield where, document
        return
    items = document["items"]
    if items is None:
        return
    if not isinstance(items, list):
        raise ManifestError(
            f"{where}: items: expected a list of objects, got {describe_value(items)}",
            source=where,
            kind=kind,
            field="items",
        )
    item_kind = kind.removesuffix("List") if kind != "List" else None
    api_version = document.get("apiVersion")
    for index, item in enumerate(items):
        item_where = f"{where} items[{index}]"
        if item_kind is not None and isinstance(item, dict):
            # The API server leaves apiVersion/kind out of the items of a typed list.
            if "kind" not in item or "apiVersion" not in item:
                item = {"apiVersion": api_version, "kind": item_kind, **item}
            if item["kind"] != item_kind:
                raise ManifestError(
                    f"{item_where}: a {kind} holds {item_kind} objects, got kind {item['kind']!r}",
                    source=item_where,
                    kind=str(item["kind"]),
                    field="kind",
                )
        yield item_where, item


def _is_supported(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return True  # let validate() report it
    kind = obj.get("kind")
    return not isinstance(kind, str) or kind in _KIND_FIELDS


def _name_for_message(obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("name"), str):
        namespace = metadata.get("namespace")
        name: str = metadata["name"]
        return f"{namespace}/{name}" if isinstance(namespace, str) and namespace else name
    return "<unnamed>"


# --------------------------------------------------------------------------------------------
# YAML and JSON.


class _ManifestLoader(_BaseLoader):
    """Safe loader (libyaml when available) reading YAML the way kubectl does.

    Unquoted timestamps stay strings, and a repeated key in one mapping is an error.
    """

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        if isinstance(node, MappingNode):
            keys = [key.value for key, _ in node.value if isinstance(key, ScalarNode)]
            if len(set(keys)) != len(keys) and "<<" not in keys:  # no merge keys: they may repeat
                seen: set[str] = set()
                for key_node, _ in node.value:
                    if isinstance(key_node, ScalarNode) and key_node.value in seen:
                        raise ConstructorError(
                            "while constructing a mapping",
                            node.start_mark,
                            f"found duplicate key {key_node.value!r}",
                            key_node.start_mark,
                        )
                    seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


def _timestamp_as_text(loader: _ManifestLoader, node: ScalarNode) -> str:
    """An unquoted timestamp stays the string it was written as (kubectl does the same)."""
    return loader.construct_scalar(node)


_ManifestLoader.add_constructor(_TIMESTAMP_TAG, _timestamp_as_text)


def _load_yaml(data: bytes, source: str) -> Iterator[tuple[str, Any]]:
    index = 0
    try:
        for document in yaml.load_all(data, Loader=_ManifestLoader):
            index += 1
            yield f"{source} doc {index}", document
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source} line {mark.line + 1} column {mark.column + 1}" if mark else source
        problem = exc.problem or exc.context or "invalid YAML"
        context = f" ({exc.context})" if exc.context and exc.problem else ""
        raise ManifestError(
            f"{where}: invalid YAML in document {index + 1}: {problem}{context}",
            source=source,
        ) from exc
    except yaml.YAMLError as exc:
        raise ManifestError(f"{source}: invalid YAML: {exc}", source=source) from exc


def _load_json(data: bytes, source: str) -> Any:
    try:
        return orjson.loads(data.removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError as exc:
        raise ManifestError(
            f"{source} line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}",
            source=source,
        ) from exc
