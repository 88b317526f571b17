"""Where an object came from and what it is: the prefix of every message about it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.k8s.objects import format_field_path, format_label

FieldPath = tuple[str | int, ...]
PathView = Callable[[FieldPath], FieldPath]
"""Maps a path in the object being checked to the path the user wrote (a converted object's
fields are reported where they are in the original version)."""


def _as_written(path: FieldPath) -> FieldPath:
    return path


@dataclass(slots=True)
class Context:
    """Where an object came from and what it is, for messages.

    ``view`` turns a path of the checked object into the path shown (identity unless the
    object was converted from another version).
    """

    source: str | None
    kind: str | None
    namespace: str | None
    name: str | None
    view: PathView = _as_written

    def prefix(self) -> str:
        parts = [self.source] if self.source else []
        if self.kind:
            parts.append(format_label(self.kind, self.namespace, self.name))
        return ": ".join(parts)

    def shown_path(self, path: FieldPath) -> str:
        """The shown wire path of ``path`` (``""`` for the object itself)."""
        return format_field_path(self.view(path)) if path else ""

    def error(self, what: str, path: FieldPath | None = None) -> ObjectValidationError:
        field_text = self.shown_path(path) if path else None
        parts = [p for p in (self.prefix(), field_text) if p]
        parts.append(what)
        return ObjectValidationError(
            ": ".join(parts),
            source=self.source,
            kind=self.kind,
            namespace=self.namespace,
            name=self.name,
            field=field_text,
        )

    def note(self, path: FieldPath, what: str) -> str:
        parts = [p for p in (self.prefix(), self.shown_path(path)) if p]
        parts.append(what)
        return ": ".join(parts)
