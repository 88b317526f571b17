"""Semantic versions as the CEL selectors see them (``semver()`` and version attributes).

`Semver` mirrors ``github.com/blang/semver/v4`` (strict semver 2.0.0 parsing; ordering that
ignores build metadata), plus the ``normalize`` option of Kubernetes' CEL ``semver()``.
"""

from __future__ import annotations

from functools import lru_cache, total_ordering

from drasnap.snapshot.errors import ObjectValidationError

__all__ = ["Semver"]

_DIGITS = frozenset("0123456789")
_IDENT_CHARS = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")


def _semver_error(text: str, reason: str) -> ObjectValidationError:
    return ObjectValidationError(f"invalid semantic version {text!r}: {reason}")


def _number(text: str, part: str, what: str) -> int:
    if not part or not set(part) <= _DIGITS:
        raise _semver_error(text, f"invalid character(s) found in {what} number {part!r}")
    if len(part) > 1 and part[0] == "0":
        raise _semver_error(text, f"{what} number must not contain leading zeroes {part!r}")
    return int(part)


def _prerelease(text: str, part: str) -> int | str:
    if not part:
        raise _semver_error(text, "prerelease is empty")
    if set(part) <= _DIGITS:
        if len(part) > 1 and part[0] == "0":
            raise _semver_error(text, f"prerelease number must not contain leading zeroes {part!r}")
        return int(part)
    if not set(part) <= _IDENT_CHARS:
        raise _semver_error(text, f"invalid character(s) found in prerelease {part!r}")
    return part


def _normalize(text: str) -> str:
    """Kubernetes' ``semver(s, true)``: drop a ``v``, pad to x.y.z, strip leading zeroes."""
    text = text.removeprefix("v")
    cut = min((i for i in (text.find("-"), text.find("+")) if i >= 0), default=len(text))
    parts = text[:cut].split(".")
    parts += ["0"] * (3 - len(parts))
    parts = [(p.lstrip("0") or "0") if len(p) > 1 else p for p in parts]
    return ".".join(parts) + text[cut:]


@total_ordering
class Semver:
    """A semantic version (blang/semver); equality and order ignore build metadata."""

    __slots__ = ("major", "minor", "patch", "pre")

    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...]

    def __init__(self, major: int, minor: int, patch: int, pre: tuple[int | str, ...] = ()) -> None:
        self.major, self.minor, self.patch, self.pre = major, minor, patch, pre

    @classmethod
    def parse(cls, text: str, *, normalize: bool = False) -> Semver:
        """Parse a strict semver 2.0.0 string (``normalize`` as in CEL ``semver(s, true)``).

        >>> Semver.parse("1.2.3-rc.1") < Semver.parse("1.2.3")
        True

        Raises:
            ObjectValidationError: ``text`` is not a semantic version.
        """
        return _parse_semver(_normalize(text) if normalize else text)

    @staticmethod
    def is_valid(text: str, *, normalize: bool = False) -> bool:
        try:
            Semver.parse(text, normalize=normalize)
        except ObjectValidationError:
            return False
        return True

    def _key(self) -> tuple[int, int, int, int, tuple[tuple[int, int | str], ...]]:
        # A release sorts after all of its prereleases; numeric identifiers before alphanumeric.
        pre = tuple((0, p) if isinstance(p, int) else (1, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)

    def compare(self, other: Semver) -> int:
        a, b = self._key(), other._key()
        return (a > b) - (a < b)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other: Semver) -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(("Semver", self._key()))

    def __str__(self) -> str:
        core = f"{self.major}.{self.minor}.{self.patch}"
        return core + ("-" + ".".join(str(p) for p in self.pre) if self.pre else "")

    def __repr__(self) -> str:
        return f"Semver({str(self)!r})"


@lru_cache(maxsize=4096)
def _parse_semver(text: str) -> Semver:
    if not text:
        raise _semver_error(text, "version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise _semver_error(text, "no Major.Minor.Patch elements found")
    major = _number(text, parts[0], "major")
    minor = _number(text, parts[1], "minor")
    rest = parts[2]
    pre_at, build_at = rest.find("-"), rest.find("+")
    cut = min((i for i in (pre_at, build_at) if i >= 0), default=len(rest))
    patch = _number(text, rest[:cut], "patch")
    pre: tuple[int | str, ...] = ()
    if build_at >= 0:
        for ident in rest[build_at + 1 :].split("."):
            if not ident or not set(ident) <= _IDENT_CHARS:
                raise _semver_error(text, f"invalid build metadata {ident!r}")
    if pre_at >= 0 and (build_at < 0 or pre_at < build_at):
        end = build_at if build_at >= 0 else len(rest)
        pre = tuple(_prerelease(text, p) for p in rest[pre_at + 1 : end].split("."))
    return Semver(major, minor, patch, pre)
