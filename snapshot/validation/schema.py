"""What each kubernetes client model looks like on the wire, derived once from the models.

The models name fields by python attribute and type quantities as plain strings; the engine
needs the wire names, the other spellings a model accepts, and which fields lead to a
``resource.Quantity`` (:data:`QUANTITY_FIELDS`), to walk an object without building a model.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

import pydantic

# Fields holding a resource.Quantity, by model class stem (the class name without its
# version prefix, shared by v1, v1beta2 and v1beta1) and python attribute name. The models
# type them as plain strict strings; the API server also accepts bare JSON numbers there.
QUANTITY_FIELDS: Final[dict[str, frozenset[str]]] = {
    # resource.k8s.io
    "DeviceCapacity": frozenset({"value"}),
    "CapacityRequestPolicy": frozenset({"default", "valid_values"}),
    "CapacityRequestPolicyRange": frozenset({"min", "max", "step"}),
    "CapacityRequirements": frozenset({"requests"}),
    "Counter": frozenset({"value"}),
    "DeviceRequestAllocationResult": frozenset({"consumed_capacity"}),
    "NodeAllocatableMapping": frozenset({"capacity_multiplier", "device_multiplier"}),
    "NodeAllocatableOverhead": frozenset({"per_container", "per_pod"}),
    "NodeAllocatableOverheadResources": frozenset({"per_container", "per_pod"}),
    "NodeAllocatableMappedResources": frozenset({"quantity"}),
    # core/v1
    "ResourceRequirements": frozenset({"limits", "requests"}),
    "VolumeResourceRequirements": frozenset({"limits", "requests"}),
    "NodeStatus": frozenset({"capacity", "allocatable"}),
    "PodSpec": frozenset({"overhead"}),
    "PodStatus": frozenset({"allocated_resources"}),
    "ContainerStatus": frozenset({"allocated_resources"}),
    "EmptyDirVolumeSource": frozenset({"size_limit"}),
    "ResourceFieldSelector": frozenset({"divisor"}),
}


CLASS_PREFIX_RE: Final = re.compile(r"^(?:Resource|Core)?V[0-9]+(?:(?:alpha|beta)[0-9]+)?")
"""The version prefix of a model class name (``V1beta2``, ``ResourceV1``, ...)."""


@dataclass(frozen=True, slots=True)
class Scalar:
    py_type: Any
    quantity: bool = False
    union: bool = False  # IntOrString: pydantic adds a type tag ("int"/"str") to error paths


@dataclass(frozen=True, slots=True)
class ModelRef:
    cls: type[pydantic.BaseModel]


@dataclass(frozen=True, slots=True)
class ListOf:
    item: FieldType


@dataclass(frozen=True, slots=True)
class MapOf:
    value: FieldType


@dataclass(frozen=True, slots=True)
class Free:
    """Free-form JSON (opaque driver parameters, managedFields' fieldsV1)."""


FieldType: TypeAlias = Scalar | ModelRef | ListOf | MapOf | Free


@dataclass(slots=True)
class ModelInfo:
    cls: type[pydantic.BaseModel]
    fields: dict[str, FieldType]  # wire name -> type
    aliases: dict[str, str]  # other key the model accepts (python name) -> wire name
    quantity_fields: dict[str, FieldType] | None = None  # wire fields that lead to quantities


_INFOS: dict[type[pydantic.BaseModel], ModelInfo] = {}


def model_info(cls: type[pydantic.BaseModel]) -> ModelInfo:
    """What ``cls`` looks like on the wire (built once per class)."""
    info = _INFOS.get(cls)
    if info is None:
        info = _build_info(cls)
        _INFOS[cls] = info
    return info


def _build_info(cls: type[pydantic.BaseModel]) -> ModelInfo:
    quantity_names = QUANTITY_FIELDS.get(CLASS_PREFIX_RE.sub("", cls.__name__), frozenset())
    fields: dict[str, FieldType] = {}
    aliases: dict[str, str] = {}
    for py_name, field in cls.model_fields.items():
        wire = field.serialization_alias or field.alias or py_name
        fields[wire] = _parse_annotation(field.annotation, py_name in quantity_names)
        accepted = {py_name}
        if field.alias:
            accepted.add(field.alias)
        if isinstance(field.validation_alias, pydantic.AliasChoices):
            accepted.update(c for c in field.validation_alias.choices if isinstance(c, str))
        elif isinstance(field.validation_alias, str):
            accepted.add(field.validation_alias)
        for key in accepted - {wire}:
            aliases[key] = wire
    return ModelInfo(cls, fields, aliases)


def _parse_annotation(tp: Any, quantity: bool) -> FieldType:
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _parse_annotation(typing.get_args(tp)[0], quantity)
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return _parse_annotation(args[0], quantity)
        return Scalar(tp, quantity=quantity, union=True)
    if origin is list:
        return ListOf(_parse_annotation(typing.get_args(tp)[0], quantity))
    if origin is dict:
        return MapOf(_parse_annotation(typing.get_args(tp)[1], quantity))
    if tp is Any or tp is object:
        return Free()
    if isinstance(tp, type) and issubclass(tp, pydantic.BaseModel):
        return ModelRef(tp)
    return Scalar(tp, quantity=quantity)


def models_in(t: FieldType) -> Iterator[type[pydantic.BaseModel]]:
    while isinstance(t, ListOf | MapOf):
        t = t.item if isinstance(t, ListOf) else t.value
    if isinstance(t, ModelRef):
        yield t.cls


def has_quantity(t: FieldType) -> bool:
    while isinstance(t, ListOf | MapOf):
        t = t.item if isinstance(t, ListOf) else t.value
    return isinstance(t, Scalar) and t.quantity


def prepare_quantity_fields(root: type[pydantic.BaseModel]) -> None:
    """Compute ``quantity_fields`` for every class reachable from ``root`` (a fixpoint)."""
    if model_info(root).quantity_fields is not None:
        return
    reachable: list[ModelInfo] = []
    seen: set[type[pydantic.BaseModel]] = set()
    stack = [root]
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        info = model_info(cls)
        reachable.append(info)
        for t in info.fields.values():
            stack.extend(models_in(t))
    leads: set[type[pydantic.BaseModel]] = set()
    changed = True
    while changed:
        changed = False
        for info in reachable:
            if info.cls in leads:
                continue
            for t in info.fields.values():
                if has_quantity(t) or any(m in leads for m in models_in(t)):
                    leads.add(info.cls)
                    changed = True
                    break
    for info in reachable:
        if info.quantity_fields is None:
            info.quantity_fields = {
                wire: t
                for wire, t in info.fields.items()
                if has_quantity(t) or any(m in leads for m in models_in(t))
            }
