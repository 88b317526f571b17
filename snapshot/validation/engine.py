"""The validation engine: one object through its client model, normalised, names checked.

Validating with a pydantic model is strict about types and unknown fields but knows nothing
of the wire form: the engine copies the object (orjson), drops explicit nulls, refuses python
attribute spellings, turns bare numbers in quantity fields into quantity strings, then lets
the model judge and translates its first error into one sentence with the wire path
(:mod:`snapshot.validation.messages`). What the model cannot see (a missing name, namespaces,
names the API server would refuse) is checked on the copy afterwards.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

import orjson
import pydantic
from drasnap.snapshot.k8s.kinds import DEFAULT_NAMESPACE, DRA_API_VERSION, is_namespaced
from drasnap.snapshot.k8s.objects import KubeObject, describe_value, identity_of, quote
from drasnap.snapshot.validation.api import check_api
from drasnap.snapshot.validation.claims import apply_defaults
from drasnap.snapshot.validation.context import Context, FieldPath, PathView
from drasnap.snapshot.validation.messages import translate
from drasnap.snapshot.validation.models import RELABELED_VERSIONS, model_for
from drasnap.snapshot.validation.quantities import CHECKERS, fix_quantities, root_checker
from drasnap.snapshot.validation.schema import FieldType, ListOf, MapOf, ModelRef, model_info

# Cheap pre-checks on the serialised object: a key with an underscore (a python attribute
# name such as "resource_slice_count", which the models accept but the API does not) or an
# explicit null in a field. Only when one matches is the full walk over the object needed.
_SNAKE_KEY_RE: Final = re.compile(rb'_[A-Za-z0-9_]*":')
_NULL_VALUE: Final = b":null"
_ORJSON_OPTS: Final = orjson.OPT_UTC_Z | orjson.OPT_NAIVE_UTC


@dataclass(slots=True)
class Checked:
    """A validated object (a new dict) and, when asked for, its client model."""

    obj: KubeObject
    model: Any


def check(
    obj: object,
    source: str | None,
    warnings: list[str] | None,
    *,
    build_model: bool,
    model: type[pydantic.BaseModel] | None = None,
    names: bool = True,
    view: PathView | None = None,
) -> Checked:
    """Validate ``obj`` with ``model`` (by default the one for its apiVersion and kind).

    ``names`` also applies the API server's defaults and refuses what it would (names and
    structure: :mod:`snapshot.validation.api`; only for objects in v1 shape). ``view`` maps
    paths in ``obj`` to the paths shown.
    Normalisations are appended to ``warnings`` when validation succeeds.
    """
    kind, namespace, name = identity_of(obj)
    ctx = Context(source, kind, namespace, name)
    if view is not None:
        ctx.view = view
    if not isinstance(obj, dict):
        raise ctx.error(f"expected a Kubernetes object (a mapping), got {describe_value(obj)}")
    api_version = obj.get("apiVersion")
    if "kind" not in obj:
        raise ctx.error("required field is missing", ("kind",))
    if not isinstance(obj["kind"], str) or not obj["kind"]:
        raise ctx.error(f"expected a kind name, got {describe_value(obj['kind'])}", ("kind",))
    if api_version is None:
        raise ctx.error("required field is missing", ("apiVersion",))
    if not isinstance(api_version, str):
        raise ctx.error(f"expected a string, got {describe_value(api_version)}", ("apiVersion",))
    cls = model if model is not None else model_for(api_version, obj["kind"], ctx)
    checker = CHECKERS.get(cls)
    if checker is None:
        checker = root_checker(cls)

    notes: list[str] = []
    data, dumped = _copy(obj, ctx)
    if _NULL_VALUE in dumped or _SNAKE_KEY_RE.search(dumped):
        _scrub(data, ModelRef(cls), (), ctx)
    if checker(data):
        fix_quantities(data, ModelRef(cls), (), ctx, notes)
    try:
        built: Any = cls.model_validate(data)
    except pydantic.ValidationError as exc:
        raise translate(exc, cls, ctx) from exc

    metadata = data.get("metadata")
    if not isinstance(metadata, dict) or not metadata.get("name"):
        raise ctx.error("required field is missing (every object needs a name)", _NAME_PATH)
    namespaced = is_namespaced(ctx.kind)
    if namespaced and not metadata.get("namespace"):
        metadata["namespace"] = ctx.namespace = DEFAULT_NAMESPACE
        notes.append(ctx.note(_NAMESPACE_PATH, 'no namespace given, taken as "default"'))
        if build_model:
            built.metadata.namespace = DEFAULT_NAMESPACE
    elif not namespaced and "namespace" in metadata:
        dropped = metadata.pop("namespace")
        ctx.namespace = None
        if build_model:
            built.metadata.namespace = None
        if dropped:
            notes.append(
                ctx.note(_NAMESPACE_PATH, f"{ctx.kind} is cluster-scoped; namespace dropped")
            )
    if names:
        defaulted = apply_defaults(data)
        for path in defaulted:
            notes.append(ctx.note(path, "count 0 taken as 1 (the API server's default)"))
        if defaulted and build_model:
            built = cls.model_validate(data)
        check_api(data, ctx)
    if api_version in RELABELED_VERSIONS and model is None:
        data["apiVersion"] = DRA_API_VERSION
        notes.append(ctx.note((), f"{api_version} converted to {DRA_API_VERSION}"))
    if warnings is not None:
        warnings.extend(notes)
    return Checked(data, built)


_NAME_PATH: Final = ("metadata", "name")
_NAMESPACE_PATH: Final = ("metadata", "namespace")


def _copy(obj: KubeObject, ctx: Context) -> tuple[KubeObject, bytes]:
    try:
        dumped = orjson.dumps(obj, option=_ORJSON_OPTS)
    except TypeError as exc:
        path, what = _find_unserialisable(obj, ())
        raise ctx.error(what, path) from exc
    data: KubeObject = orjson.loads(dumped)
    return data, dumped


def _find_unserialisable(
    value: Any, path: tuple[str | int, ...]
) -> tuple[tuple[str | int, ...], str]:
    """Locate what orjson cannot serialise (only called on that error path)."""
    children: list[tuple[str | int, Any]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return path, f"key {key!r} is not a string (quote it in YAML)"
            children.append((key, item))
    elif isinstance(value, list | tuple):
        children = list(enumerate(value))
    for key, item in children:
        try:
            orjson.dumps(item, option=_ORJSON_OPTS)
        except TypeError:
            return _find_unserialisable(item, (*path, key))
    try:
        orjson.dumps(value, option=_ORJSON_OPTS)
    except TypeError as exc:
        return path, f"cannot be represented as JSON: {exc} ({type(value).__name__})"
    return path, "cannot be represented as JSON"  # pragma: no cover - orjson failed above


def _scrub(data: Any, t: FieldType, path: FieldPath, ctx: Context) -> None:
    """Drop null fields; reject python attribute names (``resource_slice_count``)."""
    if isinstance(t, ModelRef):
        if not isinstance(data, dict):
            return
        info = model_info(t.cls)
        for key in list(data):
            field_type = info.fields.get(key)
            if field_type is None:
                wire = info.aliases.get(key)
                if wire is not None:
                    raise ctx.error(
                        f"unknown field {quote(key)} (the API spells it {quote(wire)})",
                        (*path, key),
                    )
                continue  # an unknown field: the model reports it
            value = data[key]
            if value is None:
                del data[key]
            else:
                _scrub(value, field_type, (*path, key), ctx)
    elif isinstance(t, ListOf):
        if isinstance(data, list):
            for index, item in enumerate(data):
                _scrub(item, t.item, (*path, index), ctx)
    elif isinstance(t, MapOf) and isinstance(data, dict):
        for key, item in data.items():
            _scrub(item, t.value, (*path, key), ctx)
