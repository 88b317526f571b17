"""Every command has help with an example; the group lists them without importing one."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner
from drasnap.tools.cli import COMMANDS, cli


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_has_help_with_an_example(name: str) -> None:
    command = cli.get_command(None, name)  # type: ignore[arg-type]
    assert command is not None
    result = CliRunner().invoke(cli, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example" in result.output, f"drasnap {name} --help shows no example"


def test_the_listing_imports_no_command_module() -> None:
    code = (
        "import sys\n"
        "from drasnap.tools.cli import main\n"
        "sys.argv = ['drasnap', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in sys.modules if m.endswith('_cmd') or m.startswith(('sqlalchemy', "
        "'kubernetes', 'drasnap.snapshot.simulation.runner'))]\n"
        "print(repr(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_simulates_options_name_the_expanders_without_loading_them() -> None:
    # The --expander help lists the expanders' names from a module of their own: loading the
    # expanders would load the scheduler before the command line is even parsed.
    code = (
        "import sys\n"
        "from drasnap.tools.cli import main\n"
        "sys.argv = ['drasnap', 'simulate', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in sys.modules if m.startswith(("
        "'drasnap.snapshot.autoscaler.expanders', 'drasnap.snapshot.scheduling'))]\n"
        "print(repr(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "least-waste, most-pods, least-nodes, priority, random" in " ".join(out.stdout.split())
    assert out.stdout.strip().splitlines()[-1] == "[]"
