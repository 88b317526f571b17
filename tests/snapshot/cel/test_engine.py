"""Kubernetes CEL for DRA selectors: quantities, semvers, the extras, and error reporting."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from drasnap.snapshot import cel
from drasnap.snapshot.errors import AllocationError, ObjectValidationError
from drasnap.snapshot.k8s.quantity import Quantity
from drasnap.snapshot.k8s.semver import Semver

GPU = "gpu.example.com"


@pytest.fixture
def gpu0() -> cel.DeviceActivation:
    """gpu-0 of the dra-example fixture (unqualified names + one resource.kubernetes.io attr)."""
    return cel.device_activation(
        GPU,
        {
            "index": {"int": 0},
            "uuid": {"string": "gpu-5a0b3c1e"},
            "model": {"string": "LATEST-GPU-MODEL"},
            "driverVersion": {"version": "1.0.0"},
            "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"},
        },
        {"memory": {"value": "80Gi"}, "compute": {"value": "100"}},
    )


def run(expression: str, device: cel.DeviceActivation) -> bool:
    return cel.evaluate(cel.compile(expression), device)


# --- quantity -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("80Gi", 80 * 2**30),
        ("81920Mi", 80 * 2**30),
        ("1.5", Fraction(3, 2)),
        ("100m", Fraction(1, 10)),
        ("1k", 1000),
        ("1e3", 1000),
        ("1E", 10**18),
        ("-1.5Ki", -1536),
        (".5", Fraction(1, 2)),
        ("0", 0),
        ("0.9n", Fraction(1, 10**9)),  # finer than nano: rounded away from zero
        ("-0.1n", Fraction(-1, 10**9)),
        ("8Ei", 2**63 - 1),  # binary SI is capped at int64
        ("18446744073709551616", 2**64),  # decimal is not
    ],
)
def test_quantity_parses_exactly(text: str, value: Fraction | int) -> None:
    assert Quantity.parse(text).value == value


@pytest.mark.parametrize("text", ["", "x", "1GB", "1Kii", "1 ", "1e", "1.2.3", "--1"])
def test_quantity_rejects_malformed(text: str) -> None:
    assert not Quantity.is_valid(text)
    with pytest.raises(ObjectValidationError, match="invalid quantity"):
        Quantity.parse(text)


def test_quantity_compares_by_value() -> None:
    assert Quantity.parse("80Gi") == Quantity.parse("81920Mi")
    assert hash(Quantity.parse("1k")) == hash(Quantity.parse("1000"))
    assert Quantity.parse("999m") < Quantity.parse("1")
    assert Quantity.parse("1Gi").compare(Quantity.parse("1G")) == 1
    assert not Quantity.parse("1.5").is_integer()
    assert Quantity.parse("1Ki").as_integer() == 1024
    with pytest.raises(ObjectValidationError, match="cannot convert value to integer"):
        Quantity.parse("1.5").as_integer()


# --- semver ---------------------------------------------------------------------------------


def test_semver_orders_like_semver_2() -> None:
    ordered = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta.2", "1.0.0-beta.11"]
    ordered += ["1.0.0-rc.1", "1.0.0", "1.0.1", "1.10.0", "2.0.0"]
    versions = [Semver.parse(v) for v in ordered]
    assert versions == sorted(versions)
    assert len(set(versions)) == len(versions)
    assert Semver.parse("1.0.0+build.1") == Semver.parse("1.0.0+other")  # build ignored


@pytest.mark.parametrize(
    "text", ["1.0", "v1.0.0", "01.0.0", "1.0.0-", "1.0.0-01", "1.0.0+", "a.b.c"]
)
def test_semver_is_strict(text: str) -> None:
    assert not Semver.is_valid(text)


def test_semver_normalize_option() -> None:
    assert Semver.parse("v1.2", normalize=True) == Semver.parse("1.2.0")
    assert str(Semver.parse("01.002.3-rc.1", normalize=True)) == "1.2.3-rc.1"


# --- the CEL environment ----------------------------------------------------------------------

G = f'device.attributes["{GPU}"]'
C = f'device.capacity["{GPU}"]'


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # dra-example claim template and the upstream corpus' selectors
        (
            f"device.attributes['{GPU}'].model == 'LATEST-GPU-MODEL' && "
            f"device.capacity['{GPU}'].memory.compareTo(quantity('40Gi')) >= 0",
            True,
        ),
        (f"device.driver == '{GPU}'", True),
        ('device.driver == "driver-b"', False),
        (f'{C}.memory.compareTo(quantity("81Gi")) >= 0', False),
        # quantities: value equality and the extras
        (f'{C}.memory == quantity("81920Mi")', True),
        ('quantity("80Gi") == quantity("81920Mi")', True),
        (
            f'{C}.memory.isGreaterThan(quantity("79Gi")) && {C}.memory.isLessThan(quantity("1Ti"))',
            True,
        ),
        ('isQuantity("1Gi") && !isQuantity("1GB")', True),
        ('quantity("1").add(quantity("500m")) == quantity("1.5")', True),
        ('quantity("1").add(2) == quantity("3") && quantity("1").sub(1).sign() == 0', True),
        (
            'quantity("-2").sign() == -1 && quantity("1k").sub(quantity("1")) == quantity("999")',
            True,
        ),
        (f"{C}.compute.asInteger() == 100 && {C}.compute.isInteger()", True),
        ('quantity("1.5").asApproximateFloat() == 1.5 && !quantity("1.5").isInteger()', True),
        # semantic versions (version attributes are semvers)
        (f'{G}.driverVersion.isGreaterThan(semver("0.9.0"))', True),
        (f'{G}.driverVersion == semver("1.0.0")', True),
        ('semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2', True),
        ('semver("1.2.3").patch() == 3 && semver("1.0.0").compareTo(semver("1.0.1")) == -1', True),
        ('semver("1.10.0").isGreaterThan(semver("1.9.0"))', True),
        ('isSemver("1.0.0") && !isSemver("1.0") && isSemver("v1.0", true)', True),
        ('semver("v1", true) == semver("1.0.0")', True),
        # qualified / unqualified names
        (f'{G}.model == "LATEST-GPU-MODEL"', True),
        ('device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:00"', True),
        (f'"pcieRoot" in {G}', False),  # a qualified name stays in its own domain
        # unknown domains are empty maps
        ('"model" in device.attributes["other.example.com"]', False),
        ('size(device.capacity["other.example.com"]) == 0', True),
        ('has(device.attributes["other.example.com"].model)', False),
        (f"has({G}.nosuch)", False),
        (f'{G}.?nosuch.orValue("none") == "none"', True),
        ('device.attributes[device.driver].?model.orValue("") == "LATEST-GPU-MODEL"', True),
        # cel-go behaviour Kubernetes relies on
        (f'{G}.index == "0"', False),  # heterogeneous equality is false, not an error
        (f"{G}.index == 0u", True),
        (f'false && {G}.nosuch == "x"', False),
        (f'{G}.nosuch == "x" && false', False),
        (f'cel.bind(g, {G}, g.model == "LATEST-GPU-MODEL" && g.index == 0)', True),
        (f'{G}.model.lowerAscii().startsWith("latest") && {G}.uuid.matches("^gpu-")', True),
        (f'{G}.model in ["A100", "LATEST-GPU-MODEL"]', True),
        ("device.allowMultipleAllocations == false", True),
    ],
)
def test_selector_evaluates_like_kubernetes(
    expression: str, expected: bool, gpu0: cel.DeviceActivation
) -> None:
    assert run(expression, gpu0) is expected


def test_driver_fast_path_agrees_with_cel(gpu0: cel.DeviceActivation) -> None:
    other = cel.device_activation("other.example.com")
    for text in (f'device.driver == "{GPU}"', f"'{GPU}' == device.driver"):
        program = cel.compile(text)
        assert program.driver == GPU
        full = cel.compile(f"({text})")  # not recognised by the fast path: real CEL
        assert full.driver is None
        for device in (gpu0, other):
            assert cel.evaluate(program, device) is cel.evaluate(full, device)


def test_compile_is_cached() -> None:
    assert cel.compile("device.driver == 'a'") is cel.compile("device.driver == 'a'")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (
            "noSuchVar",
            "compilation failed: ERROR: <input>:1:1: undeclared reference to 'noSuchVar' "
            "(in container '')",
        ),
        ("device.driver ==", "compilation failed: ERROR: <input>:1:17: Syntax error"),
        ("1 + 1", "compilation failed: must evaluate to bool or the unknown type, not int"),
        ('device.driver == "a" && noSuchFn()', "undeclared reference to 'noSuchFn'"),
        ('1 == "0"', "found no matching overload for '_==_' applied to '(int, string)'"),
    ],
)
def test_compile_errors_raise(expression: str, message: str) -> None:
    with pytest.raises(AllocationError) as info:
        cel.compile(expression)
    assert str(info.value).startswith("compilation failed: ")
    assert message in str(info.value)
    with pytest.raises(AllocationError):  # the cached failure raises again
        cel.compile(expression)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (f'{G}.nosuch == "x"', "no such key: nosuch. consider using CEL optional chaining"),
        (f"{G}.index", "CEL result of type int could not be converted to bool"),
        ('quantity("bogus").sign() == 0', "invalid quantity 'bogus'"),
        (f'{G}.driverVersion.compareTo(quantity("1")) == 0', "no such overload"),
        (f"{C}.memory.major() == 1", "no such overload: expected a semver"),
        ('quantity("1.5").asInteger() == 1', "cannot convert value to integer"),
    ],
)
def test_runtime_errors_raise(expression: str, message: str, gpu0: cel.DeviceActivation) -> None:
    with pytest.raises(AllocationError) as info:
        run(expression, gpu0)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ({"v": {"version": "1.0"}}, "attribute v: parse semantic version"),
        ({"l": {"versions": ["1.0.0", "2"]}}, "attribute l: parse semantic version"),
        ({"e": {}}, "attribute e: unsupported attribute value"),
    ],
    ids=["version", "version-in-list", "no-value"],
)
def test_unconvertible_attribute_fails_every_selector(
    attributes: dict[str, dict[str, object]], message: str
) -> None:
    device = cel.device_activation(GPU, attributes)
    for expression in (f'device.driver == "{GPU}"', "true"):
        with pytest.raises(AllocationError, match=message):
            run(expression, device)


LISTS: dict[str, dict[str, Any]] = {
    "ints": {"ints": [1, 2]},
    "strings": {"strings": ["a", "b"]},
    "versions": {"versions": ["1.0.0", "2.1.0"]},
    "bools": {"bools": [True]},
    "scalar": {"int": 3},
}


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (f"{G}.ints.includes(2)", True),
        (f"{G}.ints.includes(3)", False),
        (f'{G}.strings.includes("b")', True),
        (f'{G}.versions.includes(semver("2.1.0"))', True),
        (f"{G}.bools.includes(1)", False),  # a bool is never a number
        (f"{G}.scalar.includes(3)", True),  # a scalar includes itself
        (f"size({G}.ints) == 2 && {G}.ints[0] == 1", True),
        (f'{G}.strings.exists(s, s == "a")', True),
    ],
)
def test_list_attributes_are_lists_and_includes_needs_the_gate(
    expression: str, expected: bool
) -> None:
    """List-typed attributes are CEL lists whatever the gates (upstream converts them always);
    ``includes()`` exists only with DRAListTypeAttributes."""
    device = cel.device_activation(GPU, LISTS)
    program = cel.compile(expression, list_type_attributes=True)
    assert cel.evaluate(program, device) is expected
    if "includes" in expression:
        with pytest.raises(AllocationError, match="undeclared reference to 'includes'"):
            cel.compile(expression)


def test_allow_multiple_allocations_exists_only_with_consumable_capacity() -> None:
    device = cel.device_activation(GPU, {}, {}, True)
    program = cel.compile("device.allowMultipleAllocations")
    assert cel.evaluate(program, device) is True
    with pytest.raises(AllocationError, match="no such key: allowMultipleAllocations"):
        cel.evaluate(program, device, consumable_capacity=False)
