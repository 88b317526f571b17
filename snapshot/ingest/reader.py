"""Reading manifest files: YAML and JSON documents, directories, and the items of Lists.

YAML is read the way kubectl reads it as far as it matters here: unquoted timestamps stay
strings (PyYAML would build ``datetime`` objects), and a key repeated in one mapping is an error
(PyYAML would silently keep the last value). Other YAML 1.1 typing (``1.10`` is the number 1.1,
``yes``/``on`` are booleans) is left as is, so those values are reported by validation with the
field path and a hint to quote them.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable, Iterator
from pathlib import Path
from typing import Any, Final

import orjson
import yaml
from drasnap.snapshot.errors import ManifestError
from drasnap.snapshot.ingest.limits import AliasBudget
from drasnap.snapshot.k8s.objects import describe_value
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, ScalarNode

try:
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

__all__ = ["MANIFEST_SUFFIXES", "manifest_files", "objects_in", "read_documents"]

MANIFEST_SUFFIXES: Final = (".yaml", ".yml", ".json")
"""File name endings picked up when a directory is walked."""

_TIMESTAMP_TAG: Final = "tag:yaml.org,2002:timestamp"


def read_documents(data: bytes, source: str, *, as_json: bool) -> Iterator[tuple[str, Any]]:
    """``(where, object)`` for every object of a file: documents, and the items of Lists.

    ``where`` is ``"<source> doc N"`` (from 1), ``"<source> doc N items[i]"`` (from 0), or
    ``"<source> items[i]"`` for a JSON file. Empty documents are skipped.

    Raises:
        ManifestError: bad YAML/JSON (naming the line), a document that is not a mapping, or
            a List whose items are not objects of its kind.
    """
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
        yield from objects_in(document, where)


def manifest_files(
    paths_or_dirs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    notes: list[str] | None,
) -> Iterator[Path]:
    """Every manifest file of the given files and directories, in sorted path order.

    Directories are walked recursively, picking up files ending in ``.yaml``, ``.yml`` or
    ``.json`` and skipping hidden files and directories; a file named explicitly is taken
    whatever its name. A directory without manifests adds a line to ``notes``.

    Raises:
        ManifestError: a path that does not exist.
    """
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
            if not found and notes is not None:
                notes.append(f"{path}: no {'/'.join(MANIFEST_SUFFIXES)} files in directory")
            yield from found
        elif path.exists():
            yield path
        else:
            raise ManifestError(f"{path}: no such file or directory", source=str(path))


def objects_in(document: dict[str, Any], where: str) -> Iterator[tuple[str, Any]]:
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


# -- YAML and JSON ----------------------------------------------------------------------------


class _ManifestLoader(AliasBudget, _BaseLoader):
    """Safe loader (libyaml when available) reading YAML the way kubectl does.

    Unquoted timestamps stay strings, and a repeated key in one mapping is an error. Aliases
    are held to :data:`limits.ALIAS_BUDGET`.
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
    loader: Any = _ManifestLoader(data)  # (PyYAML is untyped)
    loader.source, loader.measure = source, b"&" in data  # (no anchor, no alias)
    try:
        while loader.check_data():
            document = loader.get_data()
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
    finally:
        loader.dispose()


def _load_json(data: bytes, source: str) -> Any:
    try:
        return orjson.loads(data.removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError as exc:
        raise ManifestError(
            f"{source} line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}",
            source=source,
        ) from exc
