"""Values: the strict JSON check on the way in, the canonical encoding, and the state digest.

A value is what ``json`` can round-trip exactly: ``dict`` with ``str`` keys, ``list``, ``str``,
``int`` (64-bit), finite ``float``, ``bool`` and ``None``. Tuples, sets, bytes, datetimes,
subclasses such as ``OrderedDict`` and NaN are refused at ``put`` time, so what a reopened store
returns equals what was put. The check is an orjson round trip compared with the value, in C;
int and str enums pass it and come back as their plain values (equal to them).

The canonical encoding is what the database stores and what the digest hashes: JSON as orjson
writes it with sorted keys (``OPT_SORT_KEYS``). That is, keys sorted, no spaces, strings as
themselves in UTF-8 (``\\"``, ``\\\\``, ``\\n``-style escapes and ``\\u00XX`` for the other control
characters), floats in their shortest round-trip form as ``repr`` writes them (``2.5``,
``1e+16``) except below 1e-4 in magnitude (``0.00001``, ``1.5e-7``, where ``repr`` writes
``1e-05``, ``1.5e-07``): ``json.dumps(value, sort_keys=True, separators=(",", ":"),
ensure_ascii=False)`` but for those small floats.

The digest of a state is the sum, modulo 2**128, of one hash per live ``(kind, key, value)``:
BLAKE2b with a 16-byte digest (RFC 7693) of ``kind NUL key NUL encoding`` (each in UTF-8, NUL a
zero byte), read as a big-endian integer; it is written as 32 lowercase hex digits (the empty
state: 32 zeros). It depends only on the effective state (not on layers or backend), and it
can be updated incrementally from the entries that changed. ``tests/store/test_known_answers.py``
recomputes it from these words with ``hashlib``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from hashlib import blake2b
from typing import Any, NoReturn

import orjson
from drasnap.store.errors import InvalidValueError

_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1
DIGEST_MOD = 2**128
EMPTY_DIGEST = "0" * 32


# Passthrough makes orjson refuse what it would otherwise turn into something else (datetimes,
# dataclasses, subclasses of str/int/dict/list such as OrderedDict), instead of encoding it.
_CHECKING = orjson.OPT_SORT_KEYS | (
    orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


class _BadValue(Exception):
    """Internal: carries the path segments up the recursion, outermost last."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        self.path: list[str] = []


def _check(value: Any) -> None:
    t = type(value)
    if t is str:
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise _BadValue("a string that is not valid UTF-8 (lone surrogate)") from exc
        return
    if t is dict:
        for k, v in value.items():
            if type(k) is not str:
                raise _BadValue(f"a dict key of type {type(k).__name__} (JSON keys are strings)")
            try:
                _check(v)
            except _BadValue as bad:
                bad.path.append(f".{k}")
                raise
        return
    if t is list:
        for i, v in enumerate(value):
            try:
                _check(v)
            except _BadValue as bad:
                bad.path.append(f"[{i}]")
                raise
        return
    if t is int:
        if not _INT_MIN <= value <= _INT_MAX:
            raise _BadValue("an integer outside the 64-bit range")
        return
    if value is None or t is bool:
        return
    if t is float:
        if not math.isfinite(value):
            raise _BadValue(f"the float {value!r} (JSON has no NaN or infinity)")
        return
    if t is tuple:
        raise _BadValue("a tuple (use a list: a tuple would come back as a list)")
    raise _BadValue(f"a value of type {t.__name__}")


# The last containers checked, by id, each kept alive by this map so its id cannot be reused:
# putting the same object again (values are never mutated: the stores' contract) costs a lookup.
_RECENT: dict[int, tuple[Any, str]] = {}
_RECENT_MAX = 1024


def checked_encoding(value: Any, *, kind: str, key: str) -> str:
    """The canonical encoding of ``value`` (as :func:`encode`), once it is known to come back
    from JSON equal to itself; else raise :class:`InvalidValueError` naming the first offending
    part ("at $.spec.devices[2]").

    The check is orjson's: an encoding of what it can encode, decoded and compared with the
    value (a tuple comes back a list, NaN comes back null: not equal), all in C. Only a refused
    value is walked in Python, to say where it went wrong.
    """
    hit = _RECENT.get(id(value))
    if hit is not None and hit[0] is value:  # the same (never mutated) object, put again
        text: str = hit[1]
        return text
    try:
        data = orjson.dumps(value, option=_CHECKING)
    except TypeError:
        data = None
    if data is None or orjson.loads(data) != value:
        _refuse(value, kind, key)
    text = data.decode()
    if type(value) is dict or type(value) is list:
        if len(_RECENT) >= _RECENT_MAX:
            _RECENT.clear()
        _RECENT[id(value)] = (value, text)
    return text


def _refuse(value: Any, kind: str, key: str) -> NoReturn:
    try:
        _check(value)
    except _BadValue as bad:
        path = "$" + "".join(reversed(bad.path))
        raise InvalidValueError(
            f"value for {kind}/{key} is not JSON: {bad.reason} at {path}", path=path
        ) from None
    raise InvalidValueError(  # a part whose type passes but does not come back equal
        f"value for {kind}/{key} is not JSON: it does not come back equal from its encoding",
        path="$",
    )


def check_value(value: Any, *, kind: str, key: str) -> None:
    """Raise :class:`InvalidValueError` unless ``value`` is exactly JSON-representable."""
    checked_encoding(value, kind=kind, key=key)


def check_name(kind: object, key: object) -> None:
    """Raise :class:`InvalidValueError` unless kind and key are non-empty strings a database
    can store (no NUL character, valid UTF-8)."""
    if type(kind) is not str or not kind:
        raise InvalidValueError(f"kind must be a non-empty string, got {kind!r}")
    if type(key) is not str or not key:
        raise InvalidValueError(f"key must be a non-empty string (kind {kind}), got {key!r}")
    if not (kind.isascii() and key.isascii()) or "\0" in kind or "\0" in key:
        check_text(kind, "kind")
        check_text(key, f"key (kind {kind!r})")


def check_text(text: str, what: str) -> None:
    """Raise :class:`InvalidValueError` if ``text`` cannot be stored as SQL text."""
    if "\0" in text:
        raise InvalidValueError(f"{what} {text!r} contains a NUL character, which SQL text cannot")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidValueError(f"{what} {text!r} is not valid UTF-8 (lone surrogate)") from None


def encode(value: Any) -> str:
    """The canonical JSON text of a checked value (sorted keys, no spaces)."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def decode(text: str) -> Any:
    return orjson.loads(text)


def entry_hash(kind: str, key: str, encoded: str) -> int:
    """128-bit hash of one live entry, from its canonical encoding."""
    h = blake2b(digest_size=16)
    h.update(kind.encode())
    h.update(b"\0")
    h.update(key.encode())
    h.update(b"\0")
    h.update(encoded.encode())
    return int.from_bytes(h.digest(), "big")


def digest_of(items: Iterable[tuple[str, str, Any]]) -> str:
    """The digest of a whole state given as ``(kind, key, value)`` triples."""
    total = 0
    for kind, key, value in items:
        total += entry_hash(kind, key, encode(value))
    return format_digest(total)


def digest_after(total: int, changes: Iterable[tuple[str, str, str | None, str | None]]) -> int:
    """The digest total (unreduced) once each entry went from one encoding to another.

    ``changes`` are ``(kind, key, old, new)`` with the canonical encodings (None: absent).
    This is the one incremental update of the digest: the store's ``state_digest``, the
    checkpoint's recorded digest and a replay's all move by it.
    """
    for kind, key, old, new in changes:
        if old == new:
            continue
        if old is not None:
            total -= entry_hash(kind, key, old)
        if new is not None:
            total += entry_hash(kind, key, new)
    return total


class Encoder:
    """:func:`encode`, remembering each value object it encoded (values are never mutated:
    the stores' contract), seeded with encodings already known."""

    __slots__ = ("_memo",)

    def __init__(self, known: Iterable[tuple[Any, str]] = ()) -> None:
        self._memo: dict[int, tuple[Any, str]] = {id(value): (value, text) for value, text in known}

    def __call__(self, value: Any) -> str:
        hit = self._memo.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        text = encode(value)
        self._memo[id(value)] = (value, text)
        return text


def format_digest(total: int) -> str:
    return format(total % DIGEST_MOD, "032x")


def parse_digest(text: str) -> int:
    return int(text, 16)
