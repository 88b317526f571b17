"""The installed package: one name, `drasnap`, holding every folder of the four."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("store", "snapshot", "tools", "migrations")


def test_every_package_folder_is_listed_for_the_wheel() -> None:
    """setuptools cannot find packages under a mapped name: a new folder must be listed."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {
        "drasnap." + ".".join(init.parent.relative_to(ROOT).parts)
        for folder in FOLDERS
        for init in (ROOT / folder).rglob("__init__.py")
    }
    assert set(config["packages"]) == found
    assert config["package-dir"] == {f"drasnap.{folder}": folder for folder in FOLDERS}


def test_the_type_checkers_view_of_the_package_is_the_four_folders() -> None:
    tree = ROOT / ".typecheck" / "drasnap"
    assert sorted(p.name for p in tree.iterdir()) == sorted(FOLDERS)
    for folder in FOLDERS:
        assert (tree / folder).resolve() == ROOT / folder
