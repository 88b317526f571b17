"""Durations as the cluster-autoscaler's flags take them, on drasnap's millisecond clock.

CA's duration flags (``--scan-interval``, ``--scale-down-unneeded-time``, ...) are Go
``time.Duration`` values parsed by ``time.ParseDuration`` (Go's ``src/time/format.go``), so
drasnap reads the same text the same way, and prints durations as Go's ``Duration.String``
does (the form CA's logs and ``--help`` show): a timeline's settings look like CA's.

The grammar (Go's): an optional sign, then one or more ``<number><unit>`` parts, a number being
digits with an optional fraction (``1.5``, ``.5``, ``1.``) and a unit one of ``ns``, ``us``,
``µs`` (U+00B5), ``μs`` (U+03BC), ``ms``, ``s``, ``m``, ``h``. A bare ``0`` (optionally signed)
is zero; any other number without a unit is refused, as Go refuses it. A fraction is computed
as Go computes it, in float64 and truncated to whole nanoseconds (so ``0.3333333333333333333h``
is exactly 20m, as CA would take it), and the sum must not pass Go's limit (2^63 - 1 ns, about
292 years).

Where drasnap departs from Go, and why:

- negative durations are refused: no timeline setting means anything below zero;
- the result must be a whole number of milliseconds (the simulated clock counts integer
  milliseconds): ``1.5ms`` is refused by name rather than rounded;
"""

from __future__ import annotations

from typing import Final

from drasnap.snapshot.errors import ScenarioError

__all__ = ["MAX_MS", "format_duration", "parse_duration"]

_NS_PER_MS: Final = 1_000_000
_UNIT_NS: Final[dict[str, int]] = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # micro sign
    "\u03bcs": 1_000,  # Greek small letter mu
    "ms": _NS_PER_MS,
    "s": 1_000 * _NS_PER_MS,
    "m": 60_000 * _NS_PER_MS,
    "h": 3_600_000 * _NS_PER_MS,
}
_MAX_NS: Final = 2**63 - 1  # Go's time.Duration is an int64 of nanoseconds
MAX_MS: Final = _MAX_NS // _NS_PER_MS
"""The longest duration drasnap takes, in milliseconds (Go's limit, whole milliseconds)."""

_HINT: Final = "give a duration such as 10m or 1h30m"
_UNITS: Final = "the units are ns, us (or µs), ms, s, m, h"


def parse_duration(text: str, option: str) -> int:
    """``text`` in Go's duration syntax, as milliseconds (module docstring).

    >>> parse_duration("1h30m", "--until"), parse_duration("1.5s", "--until")
    (5400000, 1500)

    Raises:
        ScenarioError: one line naming ``option``: malformed text, a number without a unit, an
            unknown unit, a negative duration, one past Go's limit, or one that is not whole
            milliseconds.
    """
    shown = _quoted(text)

    def refuse(what: str) -> ScenarioError:
        return ScenarioError(f"{option}: {shown} {what}")

    rest = text
    negative = rest[:1] == "-"
    if rest[:1] in ("-", "+"):
        rest = rest[1:]
    if rest == "0":
        return 0
    if not rest:
        raise refuse(f"is not a duration: {_HINT}")
    total_ns = 0
    while rest:
        number, rest = _leading_number(rest)
        if number is None:
            raise refuse(f"is not a duration: {_HINT}")
        whole, fraction, scale = number
        end = 0
        while end < len(rest) and not (rest[end] == "." or "0" <= rest[end] <= "9"):
            end += 1  # (Go's unit: everything up to the next number)
        unit, rest = rest[:end], rest[end:]
        if not unit:
            raise refuse(f"has a number without a unit: {_HINT} (units: ns, us, ms, s, m, h)")
        if unit not in _UNIT_NS:
            raise refuse(f"has an unknown unit {_quoted(unit)}: {_UNITS}")
        unit_ns = _UNIT_NS[unit]
        part_ns = int(whole or "0") * unit_ns
        if fraction:
            # Go's float64 product, truncated: Python's floats are the same IEEE doubles.
            part_ns += int(float(fraction) * (float(unit_ns) / scale))
        total_ns += part_ns
        if total_ns > _MAX_NS + 1:  # (stop early on absurd input; Go's check is the same)
            break
    if negative and total_ns:
        raise refuse(f"is negative: {_HINT}")
    if total_ns > _MAX_NS:
        raise refuse(
            f"is too long: the longest duration is {format_duration(MAX_MS)} (Go's limit, about "
            "292 years)"
        )
    ms, remainder = divmod(total_ns, _NS_PER_MS)
    if remainder:
        raise refuse("is not a whole number of milliseconds: drasnap's clock counts milliseconds")
    return ms


def _quoted(text: str) -> str:
    """``text`` in double quotes, cut after 80 characters, every character that is not
    printable escaped as Go's ``%q`` escapes it (``\\u0085``, a line break to Python): the
    message stays one line whatever was typed."""
    cut = text[:80] + ("..." if len(text) > 80 else "")
    escaped = (
        "\\" + c if c in '"\\' else c if c.isprintable() else f"\\u{ord(c):04x}" for c in cut
    )
    return '"' + "".join(escaped) + '"'


def _leading_number(text: str) -> tuple[tuple[str, int, float] | None, str]:
    """The ``[0-9]*(\\.[0-9]*)?`` at the start of ``text`` and what follows.

    The number is (whole digits, fraction as an integer, its scale): ``"1.25"`` is
    ``("1", 25, 100.0)``. Fraction digits past what an int64 holds are dropped, as Go's
    ``leadingFraction`` drops them. None when no digit stands on either side of the point
    (Go's rule: ``.s`` is no number)."""
    end = _digits_end(text, 0)
    whole = text[:end]
    has_fraction = False
    fraction, scale = 0, 1.0
    if end < len(text) and text[end] == ".":
        fraction_end = _digits_end(text, end + 1)
        has_fraction = fraction_end > end + 1
        for digit in text[end + 1 : fraction_end]:
            if fraction > (2**63 - 1) // 10 or fraction * 10 + int(digit) > 2**63:
                break  # (every later digit would overflow too: Go skips them all)
            fraction = fraction * 10 + int(digit)
            scale *= 10
        end = fraction_end
    if not whole and not has_fraction:
        return None, text
    return (whole, fraction, scale), text[end:]


def _digits_end(text: str, start: int) -> int:
    # ASCII digits only: str.isdigit() alone takes "²" and other Unicode digits, Go does not.
    end = start
    while end < len(text) and "0" <= text[end] <= "9":
        end += 1
    return end


def format_duration(ms: int) -> str:
    """``ms`` milliseconds as Go's ``Duration.String`` writes them.

    Hours, minutes and seconds with the fraction of a second (trailing zeros dropped); below a
    second, milliseconds; zero is ``0s``.

    >>> [format_duration(ms) for ms in (0, 300, 1500, 600_000, 5_400_000, -90_000)]
    ['0s', '300ms', '1.5s', '10m0s', '1h30m0s', '-1m30s']
    """
    if ms == 0:
        return "0s"
    sign = "-" if ms < 0 else ""
    magnitude = abs(ms)
    if magnitude < 1_000:
        return f"{sign}{magnitude}ms"
    seconds, milliseconds = divmod(magnitude, 1_000)
    fraction = f".{milliseconds:03d}".rstrip("0") if milliseconds else ""
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    text = f"{second}{fraction}s"
    if minutes:
        text = f"{minute}m{text}"
    if hours:
        text = f"{hours}h{text}"
    return sign + text
