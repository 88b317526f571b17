"""A field-level diff of two JSON values: the leaves that were added, removed or changed.

Paths are written as in ``InvalidValueError.path``: ``$`` is the whole value, ``.name`` an
object member (``["name"]`` when the name is not a plain identifier), ``[3]`` a list item.
Objects are compared member by member; lists item by item, so an item inserted at the front of
a list shows as every later item changed plus one added at the end (JSON lists have no identity
to match items by).

>>> [str(c) for c in field_diff({"a": 1, "b": [1, 2]}, {"a": 2, "b": [1], "c": None})]
['$.a: 1 -> 2', '$.b[1]: removed 2', '$.c: added null']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from drasnap.store.codec import encode

__all__ = ["MISSING", "FieldChange", "field_diff"]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


#: the ``old`` of an added field, the ``new`` of a removed one
MISSING: Final[Any] = _Missing()

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One changed leaf (or a subtree added or removed whole, or of another JSON type)."""

    path: str
    old: Any  # MISSING when added
    new: Any  # MISSING when removed

    @property
    def op(self) -> str:
        """``added``, ``removed`` or ``changed``."""
        if self.old is MISSING:
            return "added"
        return "removed" if self.new is MISSING else "changed"

    def __str__(self) -> str:
        if self.old is MISSING:
            return f"{self.path}: added {encode(self.new)}"
        if self.new is MISSING:
            return f"{self.path}: removed {encode(self.old)}"
        return f"{self.path}: {encode(self.old)} -> {encode(self.new)}"


def field_diff(old: Any, new: Any, path: str = "$") -> list[FieldChange]:
    """The changes that turn ``old`` into ``new``, in document order (old's members first)."""
    out: list[FieldChange] = []
    _diff(old, new, path, out)
    return out


def _diff(old: Any, new: Any, path: str, out: list[FieldChange]) -> None:
    if type(old) is dict and type(new) is dict:
        for name, value in old.items():
            sub = _member(path, name)
            if name in new:
                _diff(value, new[name], sub, out)
            else:
                out.append(FieldChange(sub, value, MISSING))
        for name, value in new.items():
            if name not in old:
                out.append(FieldChange(_member(path, name), MISSING, value))
        return
    if type(old) is list and type(new) is list:
        for i, (a, b) in enumerate(zip(old, new, strict=False)):
            _diff(a, b, f"{path}[{i}]", out)
        for i in range(len(new), len(old)):
            out.append(FieldChange(f"{path}[{i}]", old[i], MISSING))
        for i in range(len(old), len(new)):
            out.append(FieldChange(f"{path}[{i}]", MISSING, new[i]))
        return
    # Leaves, or two values of different JSON types. bool is not int here: True != 1 in JSON.
    if type(old) is not type(new) or old != new:
        out.append(FieldChange(path, old, new))


def _member(path: str, name: str) -> str:
    return f"{path}.{name}" if _PLAIN.fullmatch(name) else f"{path}[{encode(name)}]"
