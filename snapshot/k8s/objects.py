"""Kubernetes objects as wire-format dicts, and the small accessors everything else uses.

Objects are handled as plain dicts in wire format: camelCase keys, exactly what
``kubectl get -o json`` prints. The official client models (``kubernetes`` 37, pydantic v2)
are only used at the edge, to validate what enters from outside (:mod:`snapshot.validation`):
dicts are many times cheaper to copy than models, and smaller (BENCHMARKS.md, design notes).

Kinds, API versions and keys (``namespace/name``) live in :mod:`snapshot.k8s.kinds`. Field paths
in messages are wire paths with list indices and quoted map keys (:func:`format_field_path`),
e.g. ``spec.devices[0].capacity.memory.value`` or ``metadata.labels["kubernetes.io/hostname"]``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, TypeAlias, TypeVar

import orjson

__all__ = [
    "KubeObject",
    "deep_copy",
    "describe_value",
    "format_field_path",
    "format_label",
    "go_quote",
    "identity_of",
    "kind_of",
    "name_of",
    "object_label",
    "quote",
    "raw_name",
    "uid_of",
]

KubeObject: TypeAlias = dict[str, Any]
"""A Kubernetes object in wire format (camelCase keys, JSON values)."""

_PLAIN_KEY_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")

_J = TypeVar("_J")


# Small accessors for validated objects (hot path: no checks beyond the dict lookups).


def deep_copy(obj: _J) -> _J:
    """A deep copy of a JSON-like value (dicts, lists, strings, numbers), via orjson."""
    copied: _J = orjson.loads(orjson.dumps(obj))
    return copied


def kind_of(obj: KubeObject) -> str:
    """``kind`` of a validated object."""
    kind: str = obj["kind"]
    return kind


def name_of(obj: KubeObject) -> str:
    """``metadata.name`` of a validated object."""
    name: str = obj["metadata"]["name"]
    return name


def raw_name(obj: Mapping[str, Any]) -> str:
    """``metadata.name`` of an object not (yet) validated, ``""`` when it has none."""
    return str((obj.get("metadata") or {}).get("name", ""))


def uid_of(obj: KubeObject) -> str | None:
    """``metadata.uid``, or ``None`` when the object has none (hand-written manifests)."""
    uid: str | None = obj["metadata"].get("uid")
    return uid


def object_label(obj: object) -> str:
    """``"Kind namespace/name"`` for messages; tolerant of invalid objects.

    Missing parts are shown as ``<unknown kind>`` and ``<unnamed>``.
    """
    kind, namespace, name = identity_of(obj)
    return format_label(kind or "<unknown kind>", namespace, name)


def format_field_path(path: tuple[str | int, ...] | list[str | int]) -> str:
    """Wire field path text: ``("spec", "devices", 0, "name")`` -> ``spec.devices[0].name``.

    Map keys that are not plain identifiers are quoted: ``metadata.labels["a.b/c"]``.
    """
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _PLAIN_KEY_RE.fullmatch(part):
            out.append(f".{part}" if out else part)
        else:
            out.append(f"[{quote(part)}]")
    return "".join(out)


# Formatting helpers for messages.


def go_quote(text: str) -> str:
    """Go's ``%q`` for the strings we quote (printable text: JSON string syntax)."""
    return orjson.dumps(text).decode()


def quote(text: str) -> str:
    """`go_quote` of ``text`` cut after 80 characters, for messages."""
    return go_quote(text[:80] + ("..." if len(text) > 80 else ""))


def describe_value(value: object) -> str:
    """A value as messages show it.

    ``null``, ``boolean true``, ``number 1.1``, ``string "x"``, ``a list``, ``a mapping``.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {'true' if value else 'false'}"
    if isinstance(value, int | float):
        return f"number {value!r}"
    if isinstance(value, str):
        return f"string {quote(value)}"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


def identity_of(obj: object) -> tuple[str | None, str | None, str | None]:
    """``(kind, namespace, name)`` of a possibly invalid object, for messages (``None`` for
    what is missing or not a non-empty string)."""
    if not isinstance(obj, dict):
        return None, None, None
    kind = obj.get("kind")
    metadata = obj.get("metadata")
    namespace = name = None
    if isinstance(metadata, dict):
        namespace = metadata.get("namespace")
        name = metadata.get("name")
    return (
        kind if isinstance(kind, str) and kind else None,
        namespace if isinstance(namespace, str) and namespace else None,
        name if isinstance(name, str) and name else None,
    )


def format_label(kind: str, namespace: str | None, name: str | None) -> str:
    """``"Kind namespace/name"`` (``"Kind name"`` without a namespace) for messages."""
    shown = name or "<unnamed>"
    return f"{kind} {namespace}/{shown}" if namespace else f"{kind} {shown}"
