"""What drasnap reads from one input file, bounded: its size, and how far its YAML aliases expand.

A YAML alias (``*a``) repeats the node its anchor (``&a``) names, and the loaders build one
object for it, shared; but whatever walks the result afterwards (validation, JSON, the store)
walks every repetition. A few hundred bytes of nested aliases (the "billion laughs") then
expand to billions of values. So before a document is built, its node graph is measured once
(each node counted once, its expansion from its children's): past :data:`ALIAS_BUDGET` values
more than the document writes out, it is refused, naming the file and the line of the node
that expands too far. A document without an anchor has no alias, and is not measured.

Every input file is read through :func:`read_input`, which stops at :data:`MAX_INPUT_BYTES`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from drasnap.snapshot.errors import ManifestError

if TYPE_CHECKING:  # (PyYAML is imported when a YAML file is read, not with this module)
    from yaml.nodes import Node

__all__ = [
    "ALIAS_BUDGET",
    "MAX_INPUT_BYTES",
    "AliasBudget",
    "load_yaml",
    "load_yaml_text",
    "read_input",
]

MAX_INPUT_BYTES: Final = 512 * 2**20
"""The most drasnap reads from one input file (manifests, node groups, priorities, sweeps)."""

ALIAS_BUDGET: Final = 100_000
"""How many values YAML aliases may add to one document, beyond those written out."""


def read_input(path: Path, limit: int | None = None) -> bytes:
    """The bytes of ``path``, refused past ``limit`` (:data:`MAX_INPUT_BYTES`) without reading
    the rest.

    Raises:
        ManifestError: the file cannot be read, or is larger than the limit.
    """
    limit = MAX_INPUT_BYTES if limit is None else limit
    try:
        with path.open("rb") as file:
            data = file.read(limit + 1)
    except OSError as exc:
        raise ManifestError(
            f"{path}: cannot read: {exc.strerror or exc}", source=str(path)
        ) from exc
    if len(data) > limit:
        raise ManifestError(
            f"{path}: more than {limit:,} bytes, the most drasnap reads from one input file "
            "(split it into several files in a folder)",
            source=str(path),
        )
    return data


def load_yaml(path: Path) -> Any:
    """The one YAML document of a settings file (node groups, priorities, a sweep), read as
    ``yaml.safe_load`` reads it, within :func:`read_input`'s size and the alias budget.

    Raises:
        ManifestError: unreadable, too large, aliases past the budget, or several documents.
        yaml.YAMLError: not YAML (the caller says what the file was for).
    """
    return load_yaml_text(read_input(path), str(path))


def load_yaml_text(data: bytes | str, source: str) -> Any:
    """:func:`load_yaml` for text already read (``source`` names it in messages)."""
    import yaml

    try:
        base: Any = yaml.CSafeLoader
    except AttributeError:  # pragma: no cover - PyYAML built without libyaml
        base = yaml.SafeLoader
    loader = type("_SettingsLoader", (AliasBudget, base), {})(data)
    loader.source = source
    loader.measure = (b"&" in data) if isinstance(data, bytes) else ("&" in data)
    try:
        nodes = []
        while loader.check_node():
            nodes.append(loader.get_node())
        if len(nodes) > 1:
            raise ManifestError(
                f"{source}: holds {len(nodes)} YAML documents (the second begins at line "
                f"{nodes[1].start_mark.line + 1}, after a ---): give one",
                source=source,
            )
        return loader.construct_document(nodes[0]) if nodes else None
    finally:
        loader.dispose()


class AliasBudget:
    """A mixin for a PyYAML loader (libyaml's or Python's): each document is measured before it
    is built (module docstring). Set ``source`` (the file's name, for messages) and, when the
    text holds no ``&``, ``measure = False``."""

    source: str = "<string>"
    measure: bool = True

    def construct_document(self, node: Node) -> Any:
        if self.measure:
            check_expansion(node, self.source)
        return super().construct_document(node)  # type: ignore[misc]


def _children(node: Node) -> list[Node]:
    # (A scalar's value is its text; a sequence's, its nodes; a mapping's, (key, value) pairs.)
    if isinstance(node.value, str):
        return []
    if getattr(node, "id", "") == "mapping":  # (a class attribute of MappingNode)
        return [part for pair in node.value for part in pair]
    return list(node.value)


def check_expansion(root: Node, source: str, budget: int = ALIAS_BUDGET) -> None:
    """Refuse a document whose aliases expand past ``budget`` values more than it writes out,
    or that holds itself. Each node is visited once (depth first, without recursion).

    Raises:
        ManifestError: naming ``source`` and the line of the first node that expands too far.
    """
    expanded: dict[int, int] = {}  # id(node) -> values it stands for, itself included
    ancestors: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            ancestors.discard(key)
            total = 1 + sum(expanded[id(child)] for child in _children(node))
            expanded[key] = total
            # (Values counted so far, each once: at least those this node writes out.)
            if total - len(expanded) > budget:
                raise ManifestError(
                    f"{source} line {node.start_mark.line + 1}: YAML aliases here expand to "
                    f"{total:,} values, more than the {budget:,} drasnap allows beyond what "
                    "the file writes out (nothing was expanded)",
                    source=source,
                )
            continue
        if key in expanded:
            continue
        if key in ancestors:
            raise ManifestError(
                f"{source} line {node.start_mark.line + 1}: a YAML alias here refers to a "
                "node that holds it (Kubernetes objects are not recursive)",
                source=source,
            )
        ancestors.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in expanded)
