"""The Kubernetes CEL library for DRA selectors, as functions cel-expr-python can call.

Quantities and semantic versions travel as one-entry maps holding their canonical value (the
engine cannot carry Python objects; see `snapshot.cel`). This module holds those carriers and
the functions Kubernetes declares on them (``quantity()``, ``semver()``, ``compareTo``, ...),
plus ``includes()`` of the DRAListTypeAttributes gate (``k8s.io/dynamic-resource-allocation/
cel/compile.go``).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

from cel_expr_python import cel as _cel  # type: ignore[import-untyped]
from drasnap.snapshot.errors import AllocationError
from drasnap.snapshot.k8s.quantity import Quantity
from drasnap.snapshot.k8s.semver import Semver

__all__ = ["CARRIER", "function_decls", "quantity_value", "semver_value"]

_QUANTITY = "kubernetes.Quantity"
_SEMVER = "kubernetes.Semver"
_T = _cel.Type
_BOOL, _DYN = _T.BOOL, _T.DYN
#: The carrier type of quantities and semvers.
CARRIER = _T.Map(_T.STRING, _T.DYN)
_K = CARRIER


# --- carriers -------------------------------------------------------------------------------


def quantity_value(q: Quantity) -> dict[str, str]:
    return {_QUANTITY: f"{q.value.numerator}/{q.value.denominator}"}


def semver_value(v: Semver) -> dict[str, str]:
    return {_SEMVER: str(v)}


@lru_cache(maxsize=4096)
def _quantity_from(text: str) -> Quantity:
    num, _, den = text.partition("/")
    return Quantity(Fraction(int(num), int(den)))


def _unwrap(value: Any) -> Quantity | Semver:
    if isinstance(value, dict) and len(value) == 1:
        if _QUANTITY in value:
            return _quantity_from(value[_QUANTITY])
        if _SEMVER in value:
            return Semver.parse(value[_SEMVER])
    raise AllocationError("no such overload: expected a quantity or a semver")


def _same_kind(a: Any, b: Any) -> tuple[Any, Any]:
    x, y = _unwrap(a), _unwrap(b)
    if type(x) is not type(y):
        raise AllocationError(f"no such overload: {type(x).__name__} and {type(y).__name__}")
    return x, y


def _quantity(value: Any) -> Quantity:
    q = _unwrap(value)
    if not isinstance(q, Quantity):
        raise AllocationError("no such overload: expected a quantity")
    return q


def _semver(value: Any) -> Semver:
    v = _unwrap(value)
    if not isinstance(v, Semver):
        raise AllocationError("no such overload: expected a semver")
    return v


# --- the Kubernetes extras (named functions: the engine calls them by reference) -------------


def _fn_quantity(text: str) -> dict[str, str]:
    return quantity_value(Quantity.parse(text))


def _fn_is_quantity(text: str) -> bool:
    return Quantity.is_valid(text)


def _fn_semver(text: str, normalize: bool = False) -> dict[str, str]:
    return semver_value(Semver.parse(text, normalize=normalize))


def _fn_is_semver(text: str, normalize: bool = False) -> bool:
    return Semver.is_valid(text, normalize=normalize)


def _fn_compare_to(a: Any, b: Any) -> int:
    x, y = _same_kind(a, b)
    return int(x.compare(y))


def _fn_is_greater_than(a: Any, b: Any) -> bool:
    return _fn_compare_to(a, b) > 0


def _fn_is_less_than(a: Any, b: Any) -> bool:
    return _fn_compare_to(a, b) < 0


def _fn_add(a: Any, b: Any) -> dict[str, str]:
    return quantity_value(_quantity(a).add(b if isinstance(b, int) else _quantity(b)))


def _fn_sub(a: Any, b: Any) -> dict[str, str]:
    return quantity_value(_quantity(a).sub(b if isinstance(b, int) else _quantity(b)))


def _fn_sign(a: Any) -> int:
    return _quantity(a).sign()


def _fn_is_integer(a: Any) -> bool:
    return _quantity(a).is_integer()


def _fn_as_integer(a: Any) -> int:
    return _quantity(a).as_integer()


def _fn_as_approximate_float(a: Any) -> float:
    return _quantity(a).as_approximate_float()


def _fn_major(a: Any) -> int:
    return _semver(a).major


def _fn_minor(a: Any) -> int:
    return _semver(a).minor


def _fn_patch(a: Any) -> int:
    return _semver(a).patch


def _function_decls() -> list[Any]:
    o, f = _cel.Overload, _cel.FunctionDecl
    s, b, i = _T.STRING, _T.BOOL, _T.INT

    def member(name: str, result: Any, impl: Any, *params: Any, suffix: str = "") -> Any:
        return o(f"kubernetes_{name}{suffix}", result, [_K, *params], is_member=True, impl=impl)

    return [
        f("quantity", [o("kubernetes_quantity_string", _K, [s], impl=_fn_quantity)]),
        f("isQuantity", [o("kubernetes_isQuantity_string", b, [s], impl=_fn_is_quantity)]),
        f(
            "semver",
            [
                o("kubernetes_semver_string", _K, [s], impl=_fn_semver),
                o("kubernetes_semver_string_bool", _K, [s, b], impl=_fn_semver),
            ],
        ),
        f(
            "isSemver",
            [
                o("kubernetes_isSemver_string", b, [s], impl=_fn_is_semver),
                o("kubernetes_isSemver_string_bool", b, [s, b], impl=_fn_is_semver),
            ],
        ),
        f("compareTo", [member("compareTo", i, _fn_compare_to, _K)]),
        f("isGreaterThan", [member("isGreaterThan", b, _fn_is_greater_than, _K)]),
        f("isLessThan", [member("isLessThan", b, _fn_is_less_than, _K)]),
        f("add", [member("add", _K, _fn_add, _K), member("add", _K, _fn_add, i, suffix="_int")]),
        f("sub", [member("sub", _K, _fn_sub, _K), member("sub", _K, _fn_sub, i, suffix="_int")]),
        f("sign", [member("sign", i, _fn_sign)]),
        f("isInteger", [member("isInteger", b, _fn_is_integer)]),
        f("asInteger", [member("asInteger", i, _fn_as_integer)]),
        f(
            "asApproximateFloat",
            [member("asApproximateFloat", _T.DOUBLE, _fn_as_approximate_float)],
        ),
        f("major", [member("major", i, _fn_major)]),
        f("minor", [member("minor", i, _fn_minor)]),
        f("patch", [member("patch", i, _fn_patch)]),
    ]


#: ``resourceapi.ResourceSliceMaxAttributeValuesPerDevice``: ``includes`` refuses longer lists.
_MAX_LIST_VALUES = 48


def _same_value(a: Any, b: Any) -> bool:
    # CEL equality: numbers compare across int/uint/double, but a bool is never a number.
    return (type(a) is bool) == (type(b) is bool) and bool(a == b)


def _fn_includes(target: Any, arg: Any) -> bool:
    if isinstance(target, list):
        if len(target) > _MAX_LIST_VALUES:
            raise AllocationError(
                f"'includes' function cannot be applied to lists longer than {_MAX_LIST_VALUES} "
                "values"
            )
        return any(_same_value(item, arg) for item in target)
    return _same_value(target, arg)


def _includes_decl() -> Any:
    # The engine dispatches member overloads on concrete types only (a dyn receiver never
    # matches at run time), so every receiver/argument pair an attribute can produce is listed.
    o = _cel.Overload
    kinds = {
        "int": _T.INT,
        "uint": _T.UINT,
        "double": _T.DOUBLE,
        "bool": _T.BOOL,
        "string": _T.STRING,
        "map": _K,
    }
    overloads = []
    for arg_name, arg in kinds.items():
        overloads.append(
            o(
                f"dra_includes_list_{arg_name}",
                _BOOL,
                [_T.List(_DYN), arg],
                is_member=True,
                impl=_fn_includes,
            )
        )
        for target_name, target in kinds.items():
            overloads.append(
                o(
                    f"dra_includes_{target_name}_{arg_name}",
                    _BOOL,
                    [target, arg],
                    is_member=True,
                    impl=_fn_includes,
                )
            )
    return _cel.FunctionDecl("includes", overloads)


def function_decls(list_type_attributes: bool) -> list[Any]:
    """The Kubernetes functions to declare (``includes()`` only with the list gate)."""
    decls = _function_decls()
    if list_type_attributes:
        decls.append(_includes_decl())
    return decls
