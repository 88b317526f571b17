"""Durations read as CA's flags read them (Go's ``time.ParseDuration``) and printed as Go's
``Duration.String``; the expected values are worked out by hand from Go's rules
(``src/time/format.go``), several of them the cases Go's own tests check."""

from __future__ import annotations

import pytest
from drasnap.snapshot.errors import ScenarioError
from drasnap.snapshot.simulation.durations import MAX_MS, format_duration, parse_duration

S = 1_000
M = 60 * S
H = 60 * M
UNITS = "the units are ns, us (or µs), ms, s, m, h"


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        # CA's defaults and the usual spellings
        ("10s", 10 * S),
        ("10m", 10 * M),
        ("1h30m", H + 30 * M),
        ("1.5h", H + 30 * M),
        ("300ms", 300),
        ("0", 0),
        # Go's own cases (time_test.go's table), those that are whole milliseconds
        ("-0", 0),
        ("+0", 0),
        ("5s", 5 * S),
        ("+5s", 5 * S),
        ("5.0s", 5 * S),
        ("5.6s", 5600),
        ("5.s", 5 * S),
        (".5s", 500),
        ("1.004s", 1004),
        ("1.0040s", 1004),
        ("100.00100s", 100_001),
        ("13ms", 13),
        ("15m", 15 * M),
        ("16h", 16 * H),
        ("3h30m", 3 * H + 30 * M),
        ("10.5s4m", 4 * M + 10_500),
        ("39h9m14.425s", 39 * H + 9 * M + 14_425),
        ("0.100000000000000000000h", 6 * M),
        # Go's float64 product: 0.333...h (19 threes) is 20m exactly, as CA reads it
        ("0.3333333333333333333h", 20 * M),
        # the other micro spellings and sub-millisecond parts adding up to whole ones
        ("1000us", 1),
        ("1000\u00b5s", 1),
        ("1000\u03bcs", 1),
        ("999999ns1ns", 1),
        ("1h0m0s", H),
        ("2562047h47m16.854s", MAX_MS),
    ],
)
def test_parse_duration_reads_go_syntax_as_milliseconds(text: str, ms: int) -> None:
    assert parse_duration(text, "--until") == ms


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("-5m", '--until: "-5m" is negative: give a duration such as 10m or 1h30m'),
        ("-2m3.4s", '--until: "-2m3.4s" is negative: give a duration such as 10m or 1h30m'),
        (
            "10q",
            '--until: "10q" has an unknown unit "q": ' + UNITS,
        ),
        ("1d", '--until: "1d" has an unknown unit "d": ' + UNITS),
        # Go reads "1 s" as the unit " s"
        ("1 s", '--until: "1 s" has an unknown unit " s": ' + UNITS),
        # Go has no exponent: "e" starts a unit
        ("1e3s", '--until: "1e3s" has an unknown unit "e": ' + UNITS),
        (
            "3",
            '--until: "3" has a number without a unit: give a duration such as 10m or 1h30m '
            "(units: ns, us, ms, s, m, h)",
        ),
        (
            "1h30",
            '--until: "1h30" has a number without a unit: give a duration such as 10m or 1h30m '
            "(units: ns, us, ms, s, m, h)",
        ),
        ("", '--until: "" is not a duration: give a duration such as 10m or 1h30m'),
        ("-", '--until: "-" is not a duration: give a duration such as 10m or 1h30m'),
        ("s", '--until: "s" is not a duration: give a duration such as 10m or 1h30m'),
        (".", '--until: "." is not a duration: give a duration such as 10m or 1h30m'),
        ("-.", '--until: "-." is not a duration: give a duration such as 10m or 1h30m'),
        (".s", '--until: ".s" is not a duration: give a duration such as 10m or 1h30m'),
        ("+.s", '--until: "+.s" is not a duration: give a duration such as 10m or 1h30m'),
        ("--1s", '--until: "--1s" is not a duration: give a duration such as 10m or 1h30m'),
        # a Unicode digit is no digit to Go
        ("\u0661s", '--until: "\u0661s" is not a duration: give a duration such as 10m or 1h30m'),
        (
            "1.5ms",
            '--until: "1.5ms" is not a whole number of milliseconds: drasnap\'s clock counts '
            "milliseconds",
        ),
        (
            "52763797000ns",
            '--until: "52763797000ns" is not a whole number of milliseconds: drasnap\'s clock '
            "counts milliseconds",
        ),
        (
            "2562047h47m16.855s",
            '--until: "2562047h47m16.855s" is too long: the longest duration is '
            "2562047h47m16.854s (Go's limit, about 292 years)",
        ),
        (
            "9223372036854775808ns",
            '--until: "9223372036854775808ns" is too long: the longest duration is '
            "2562047h47m16.854s (Go's limit, about 292 years)",
        ),
        # NEL (U+0085) is a line break to Python: escaped, the message stays one line
        ("\x85", '--until: "\\u0085" is not a duration: give a duration such as 10m or 1h30m'),
    ],
)
def test_parse_duration_refuses_with_one_line_naming_the_option(text: str, message: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_duration(text, "--until")
    assert str(caught.value) == message
    assert len(str(caught.value).splitlines()) == 1


def test_the_option_named_is_the_one_given() -> None:
    with pytest.raises(ScenarioError, match=r'^--scan-interval: "10q" has an unknown unit'):
        parse_duration("10q", "--scan-interval")


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (0, "0s"),
        (1, "1ms"),
        (300, "300ms"),
        (999, "999ms"),
        (1_000, "1s"),
        (1_500, "1.5s"),
        (1_050, "1.05s"),
        (1_001, "1.001s"),
        (10 * S, "10s"),
        (M, "1m0s"),
        (10 * M, "10m0s"),
        (H, "1h0m0s"),
        (H + 30 * M, "1h30m0s"),
        (25 * H + M + 1_001, "25h1m1.001s"),
        (MAX_MS, "2562047h47m16.854s"),
        (-90 * S, "-1m30s"),
        (-300, "-300ms"),
    ],
)
def test_format_duration_writes_go_duration_string(ms: int, text: str) -> None:
    assert format_duration(ms) == text


@pytest.mark.parametrize(
    "ms", [0, 1, 999, 1_000, 1_001, 59_999, M, H - 1, H, 5 * H + 7 * M + 3_020, MAX_MS]
)
def test_format_then_parse_round_trips(ms: int) -> None:
    assert parse_duration(format_duration(ms), "--x") == ms


@pytest.mark.parametrize("text", ["10s", "10m0s", "1h30m0s", "1.5s", "0s", "300ms", "2h0m0.001s"])
def test_parse_then_format_round_trips_go_string_forms(text: str) -> None:
    assert format_duration(parse_duration(text, "--x")) == text
