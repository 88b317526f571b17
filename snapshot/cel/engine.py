"""CEL for DRA device selectors: the Kubernetes environment on top of cel-expr-python.

The engine is ``cel-expr-python`` (Google's C++ CEL with a type checker; see ``docs/cel.md`` for
the measured comparison). This module adds what Kubernetes' ``dynamic-resource-allocation/cel``
package declares:

- the variable ``device`` with ``driver``, ``allowMultipleAllocations`` (only with the
  DRAConsumableCapacity gate: without it the field does not exist),
  ``attributes[domain][id]`` and ``capacity[domain][id]``; unqualified attribute and capacity
  names belong to the driver's domain; ``version`` attributes are semantic versions and
  capacities are quantities; list-typed attributes (``ints``, ``bools``, ``strings``,
  ``versions``) are CEL lists, as upstream converts them whatever the gates say;
- with the DRAListTypeAttributes gate, the member function ``includes()``: ``list.includes(x)``
  is membership (lists of at most 48 values), ``scalar.includes(x)`` is equality;
- the Kubernetes extras ``quantity()``, ``isQuantity()``, ``semver()``, ``isSemver()`` and the
  methods ``compareTo``, ``isGreaterThan``, ``isLessThan``, ``add``, ``sub``, ``asInteger``,
  ``asApproximateFloat``, ``isInteger``, ``sign``, ``major``, ``minor``, ``patch``, plus the
  cel-go ``strings``, optional (``.?``/``orValue``) and ``cel.bind`` extensions (the
  functions themselves live in `snapshot.cel.library`).

How the gaps of the engine are closed, and what is left:

- Python objects cannot be CEL values here, so a quantity or semver travels as a one-entry map
  (``{"kubernetes.Quantity": "num/den"}``) holding its canonical value: ``==`` on those maps is
  therefore equality by value, as in Kubernetes.
- Looking up an unknown domain yields an empty map in Kubernetes. The engine cannot default a
  map lookup, so each activation pre-fills an empty map for the driver's domain and for every
  string literal of the expression that looks like a domain. Residual difference:
  ``"some.domain" in device.attributes`` is true for such a pre-filled domain.
- ``device`` is a ``map(string, dyn)``: ``device.nosuch`` is a runtime error ("no such key")
  where Kubernetes reports a compile error. Either way it is an error, never a silent mismatch.
- No CEL cost limit is enforced; the Kubernetes list/regex/URL/IP libraries are not provided
  (an expression using them fails to compile).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from cel_expr_python import cel as _cel  # type: ignore[import-untyped]
from cel_expr_python.ext import (  # type: ignore[import-untyped]
    ext_bindings,
    ext_optional,
    ext_strings,
)
from drasnap.snapshot.cel.library import function_decls, quantity_value, semver_value
from drasnap.snapshot.errors import AllocationError, ObjectValidationError
from drasnap.snapshot.k8s.quantity import Quantity
from drasnap.snapshot.k8s.semver import Semver

__all__ = ["DeviceActivation", "Program", "compile", "device_activation", "evaluate"]

_T = _cel.Type
_BOOL, _DYN, _ERROR = _T.BOOL, _T.DYN, _T.ERROR

_LITERAL_RE = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'')
_DOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DRIVER_EQ_RE = re.compile(
    r"\s*device\s*\.\s*driver\s*==\s*(?:\"([^\"\\\n]*)\"|'([^'\\\n]*)')\s*"
    r"|\s*(?:\"([^\"\\\n]*)\"|'([^'\\\n]*)')\s*==\s*device\s*\.\s*driver\s*"
)
_MISSING_KEY_RE = re.compile(r'Key not found in map : "(.*)"', re.DOTALL)
_STATUS_PREFIX_RE = re.compile(r"^[A-Z_]+: ")


def _env(list_type_attributes: bool) -> Any:
    return _cel.NewEnv(
        variables={"device": _T.Map(_T.STRING, _T.DYN)},
        functions=function_decls(list_type_attributes),
        extensions=[
            ext_bindings.ExtBindings(),
            ext_optional.ExtOptional(),
            ext_strings.ExtStrings(),
        ],
    )


_ENV = _env(False)
_ENV_LISTS: Any = None  # DRAListTypeAttributes adds includes(): built on first use


# --- programs -------------------------------------------------------------------------------


class Program:
    """A compiled selector expression (immutable; shared through the compile cache)."""

    __slots__ = ("_compiled", "domains", "driver", "expression")

    def __init__(
        self, expression: str, compiled: Any, domains: frozenset[str], driver: str | None
    ) -> None:
        self.expression = expression
        self._compiled = compiled
        # Literals that may name a domain: the activation pre-fills them as empty maps.
        self.domains = domains
        # Set for the plain ``device.driver == "X"`` selector, which is answered in Python.
        self.driver = driver

    def __repr__(self) -> str:
        return f"Program({self.expression!r})"


_PROGRAM_CACHE_LIMIT = 10_000
_programs: dict[str, Program | AllocationError] = {}
_programs_lists: dict[str, Program | AllocationError] = {}


def compile(expression: str, *, list_type_attributes: bool = False) -> Program:
    """Compile a selector once; later calls with the same text return the cached result.

    ``list_type_attributes`` is the DRAListTypeAttributes gate: it declares ``includes()``.

    >>> compile('device.driver == "gpu.example.com"').driver
    'gpu.example.com'

    Raises:
        AllocationError: the expression does not compile, or its type is neither bool nor dyn
            (message like cel-go's: ``compilation failed: ERROR: <input>:1:1: ...``).
    """
    programs = _programs_lists if list_type_attributes else _programs
    cached = programs.get(expression)
    if cached is None:
        cached = _compile(expression, _lists_env() if list_type_attributes else _ENV)
        if len(programs) >= _PROGRAM_CACHE_LIMIT:
            programs.clear()  # distinct selector texts are few in practice; this is a backstop
        programs[expression] = cached
    if isinstance(cached, AllocationError):
        raise AllocationError(str(cached))
    return cached


def _lists_env() -> Any:
    global _ENV_LISTS
    if _ENV_LISTS is None:
        _ENV_LISTS = _env(True)
    return _ENV_LISTS


def _compile(expression: str, env: Any) -> Program | AllocationError:
    fast = _DRIVER_EQ_RE.fullmatch(expression)
    try:
        compiled = env.compile(expression)
    except RuntimeError as exc:
        text = _STATUS_PREFIX_RE.sub("", str(exc), count=1).removesuffix(" [INVALID_ARGUMENT]")
        return AllocationError(f"compilation failed: {text}")
    result = compiled.return_type()
    if result != _BOOL and result != _DYN:
        kind = result.name().lower()
        return AllocationError(
            f"compilation failed: must evaluate to bool or the unknown type, not {kind}"
        )
    domains = frozenset(
        text
        for pair in _LITERAL_RE.findall(expression)
        for text in pair
        if len(text) <= 63 and _DOMAIN_RE.fullmatch(text)
    )
    driver = next((g for g in fast.groups() if g is not None), None) if fast else None
    return Program(expression, compiled, domains, driver)


# --- activations ----------------------------------------------------------------------------

_SCALAR_KEYS = ("int", "bool", "string", "version")  # upstream's order
_LIST_KEYS = ("ints", "bools", "strings", "versions")
_ALL_KEYS = frozenset(_SCALAR_KEYS + _LIST_KEYS)


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


class DeviceActivation:
    """The ``device`` variable of one device, converted once and reused for every selector.

    Conversion problems (an invalid version, an attribute without a value) do not raise here:
    like upstream, they surface as a runtime error of every selector evaluated on the device.
    """

    __slots__ = ("_activations", "_attributes", "_capacity", "_device", "driver", "error")

    def __init__(
        self,
        driver: str,
        attributes: Mapping[str, Mapping[str, Any]],
        capacity: Mapping[str, Mapping[str, Any]],
        allow_multiple_allocations: bool = False,
    ) -> None:
        self.driver = driver
        self.error: str | None = None
        self._activations: dict[tuple[frozenset[str], bool], Any] = {}
        self._attributes: dict[str, dict[str, Any]] = {}
        self._capacity: dict[str, dict[str, Any]] = {}
        try:
            for name, attribute in attributes.items():
                domain, ident = _split(name, driver)
                self._attributes.setdefault(domain, {})[ident] = _attribute_value(name, attribute)
            for name, entry in capacity.items():
                domain, ident = _split(name, driver)
                value = quantity_value(Quantity.parse(str(entry.get("value", ""))))
                self._capacity.setdefault(domain, {})[ident] = value
        except ObjectValidationError as exc:
            self.error = str(exc)
        self._device = {
            "driver": driver,
            "allowMultipleAllocations": allow_multiple_allocations,
            "attributes": self._attributes,
            "capacity": self._capacity,
        }

    def _activation(self, domains: frozenset[str], multi_field: bool) -> Any:
        activation = self._activations.get((domains, multi_field))
        if activation is None:
            extra = domains | {self.driver}
            device = dict(self._device)
            if not multi_field:
                del device["allowMultipleAllocations"]
            device["attributes"] = {**{d: {} for d in extra}, **self._attributes}
            device["capacity"] = {**{d: {} for d in extra}, **self._capacity}
            activation = _ENV.Activation({"device": device})
            self._activations[(domains, multi_field)] = activation
        return activation


def _semver_carrier(name: str, value: object) -> dict[str, str]:
    try:
        return semver_value(Semver.parse(str(value)))
    except ObjectValidationError as exc:
        raise ObjectValidationError(f"attribute {name}: parse semantic version: {exc}") from exc


def _attribute_value(name: str, attribute: Mapping[str, Any]) -> Any:
    if len(attribute) == 1:  # the valid case: exactly one of the eight fields
        for key, value in attribute.items():
            if value is not None and key in _ALL_KEYS:
                if key == "version":
                    return _semver_carrier(name, value)
                if key == "versions":
                    return [_semver_carrier(name, v) for v in value]
                return list(value) if key in _LIST_KEYS else value
    # Upstream's order (cel/compile.go getAttributeValue): lists first, then scalars.
    for key in _LIST_KEYS:
        values = attribute.get(key)
        if values is not None:
            if key == "versions":
                return [_semver_carrier(name, v) for v in values]
            return list(values)
    for key in _SCALAR_KEYS:
        value = attribute.get(key)
        if value is not None:
            return _semver_carrier(name, value) if key == "version" else value
    raise ObjectValidationError(f"attribute {name}: unsupported attribute value")


def device_activation(
    driver: str,
    attributes: Mapping[str, Mapping[str, Any]] | None = None,
    capacity: Mapping[str, Mapping[str, Any]] | None = None,
    allow_multiple_allocations: bool = False,
) -> DeviceActivation:
    """Build the ``device`` variable from a ResourceSlice device's wire-format fields.

    >>> act = device_activation("gpu.example.com", {"model": {"string": "A100"}})
    >>> evaluate(compile('device.attributes["gpu.example.com"].model == "A100"'), act)
    True
    """
    return DeviceActivation(driver, attributes or {}, capacity or {}, allow_multiple_allocations)


def evaluate(
    program: Program, activation: DeviceActivation, *, consumable_capacity: bool = True
) -> bool:
    """Evaluate a compiled selector against one device.

    ``consumable_capacity`` is the DRAConsumableCapacity gate: without it the device has no
    ``allowMultipleAllocations`` field.

    Raises:
        AllocationError: a runtime error (unknown key, bad argument, a device attribute that
            cannot be converted) or a result that is not a bool.
    """
    if activation.error is not None:
        raise AllocationError(activation.error)
    if program.driver is not None:
        return activation.driver == program.driver
    result = program._compiled.eval(activation._activation(program.domains, consumable_capacity))
    kind = result.type()
    if kind == _BOOL:
        return bool(result.value())
    if kind == _ERROR:
        raise AllocationError(_runtime_message(str(result.value())))
    raise AllocationError(
        f"CEL result of type {kind.name().lower()} could not be converted to bool"
    )


def _runtime_message(text: str) -> str:
    text = _STATUS_PREFIX_RE.sub("", text, count=1)
    missing = _MISSING_KEY_RE.fullmatch(text)
    if missing:
        # cel-go's wording, plus the hint upstream's cel.EnhanceRuntimeError appends.
        return (
            f"no such key: {missing.group(1)}. consider using CEL optional chaining "
            "(.? followed by orValue()) or guarding the check with has() for optional fields"
        )
    return text.replace("No matching overloads found", "no such overload")
