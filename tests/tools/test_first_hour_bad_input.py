"""The first hour, fourth pass (issue 39): bad input that said the wrong thing, or nothing, now
ends in one line naming it, exit 1 (2 for a usage error), and the folder as it was. Each runs
the real ``drasnap`` in a subprocess, as a user would.
"""

from __future__ import annotations

import itertools
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.snapshot.simulation.test_scenarios import write_manifests
from tests.tools.test_first_hour import (
    ROOT,
    _template_with,
    drasnap,
    error,
    files_of,
    ok,
    ok_json,
    usage_error,
)


@pytest.fixture(scope="module")
def ref(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``ref.db``, one finished scale-down run named ``scale-down-1``."""
    folder = tmp_path_factory.mktemp("ref")
    ok(drasnap("simulate", "scale-down", "ref.db", "--nodes", "4", cwd=folder))
    return folder


# -- item 8: the smaller ones -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("garbage", "'garbage' is not a PostgreSQL URL"),
        ("mysql://u:SeCrEt@h/db", "mysql://u:***@h/db: drasnap stores live in SQLite or"),
    ],
    ids=["path", "other-database"],
)
def test_bench_refuses_a_postgres_url_that_is_not_one(tmp_path: Path, url: str, shown: str) -> None:
    # Before, "garbage" was benchmarked as a SQLite file, labelled PostgreSQL, and left behind.
    line = usage_error(drasnap("bench", "store", "--postgres-url", url, cwd=tmp_path), shown)
    assert "--postgres-url" in line and "SeCrEt" not in line
    assert list(tmp_path.iterdir()) == []


def test_query_with_the_sql_forgotten_says_so(ref: Path) -> None:
    before = files_of(ref)
    usage_error(
        drasnap("query", "ref.db", cwd=ref),
        'the SQL statement is missing: give it after the database, as in drasnap query ref.db "',
    )
    assert files_of(ref) == before
    ok(drasnap("query", "--db", "ref.db", "SELECT 1", cwd=ref))  # a lone SQL still runs


def test_report_of_a_claim_the_run_never_held_says_so(ref: Path) -> None:
    before = files_of(ref)
    args = ["report", "ref.db", "--name", "scale-down-1", "-o", "r.html"]
    error(
        drasnap(*args, "--claim", "default/ghost", cwd=ref),
        "run 'scale-down-1' in ref.db never held a claim 'default/ghost'",
    )
    assert files_of(ref) == before  # no page written
    claim = ok_json(drasnap("history", "ref.db", "--json", cwd=ref))["events"][0]["claim"]
    ok(drasnap(*args, "--claim", claim, cwd=ref))
    assert claim in (ref / "r.html").read_text()
    (ref / "r.html").unlink()


@pytest.mark.parametrize("duration", ["0", "0s", "0.0m", "-5", "-1h"])
def test_record_duration_zero_asks_for_a_positive_number(tmp_path: Path, duration: str) -> None:
    usage_error(
        drasnap("record", "r.db", "--duration", duration, cwd=tmp_path),
        f"Invalid value for '--duration': '{duration}': give a positive number of seconds",
    )
    assert list(tmp_path.iterdir()) == []


def test_record_names_a_kubeconfig_that_is_not_there(tmp_path: Path) -> None:
    error(
        drasnap("record", "r.db", "--kubeconfig", tmp_path / "nope", cwd=tmp_path),
        f"the kubeconfig {tmp_path / 'nope'} does not exist",
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "command",
    [["simulate", "scale-down", "s.db", "--nodes", "4"], ["record", "s.db"], ["demo"]],
    ids=["simulate", "record", "demo"],
)
@pytest.mark.parametrize("name", ["a/b\n", "a b", "-x", ""], ids=["slash-nl", "space", "dash", ""])
def test_a_run_name_says_which_characters_it_may_hold(
    tmp_path: Path, command: list[str], name: str
) -> None:
    usage_error(
        drasnap(*command, "--name", name, cwd=tmp_path),
        "a name holds letters, digits, '.', '_' and '-'",
    )
    assert list(tmp_path.iterdir()) == []


def test_a_node_groups_file_of_several_documents_says_so(tmp_path: Path) -> None:
    dump = write_manifests(tmp_path / "dump")
    groups = tmp_path / "groups.yaml"
    groups.write_text("nodeGroups: []\n---\nnodeGroups: []\n")
    error(
        drasnap("simulate", "autoscale", "s.db", "--from", dump, "--node-groups", groups,
                cwd=tmp_path),
        f"{groups}: holds 2 YAML documents (the second begins at line 3",
    )  # fmt: skip
    assert not (tmp_path / "s.db").exists()


# -- item 6: an alias bomb, and files too large --------------------------------------------------


def alias_bomb(levels: int = 9) -> str:
    """The "billion laughs": each level nine aliases of the one before (9**levels values)."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for before, name in itertools.pairwise("abcdefghijklmnop"[:levels]):
        lines.append(f"{name}: &{name} [{','.join([f'*{before}'] * 9)}]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("where", ["from", "node-groups"])
def test_an_alias_bomb_is_refused_by_file_and_line_without_expanding_it(
    tmp_path: Path, where: str
) -> None:
    dump = write_manifests(tmp_path / "dump")
    bomb = (dump if where == "from" else tmp_path) / "bomb.yaml"
    bomb.write_text(alias_bomb())
    assert len(bomb.read_bytes()) < 500
    args: list[str | Path] = ["simulate", "autoscale", "s.db", "--from", dump]
    if where == "node-groups":
        args += ["--node-groups", bomb]
    started = time.monotonic()
    line = error(drasnap(*args, cwd=tmp_path), f"{bomb} line 6: YAML aliases here expand to")
    assert time.monotonic() - started < 30
    assert "more than the 100,000 drasnap allows" in line
    assert not (tmp_path / "s.db").exists()


def test_a_few_aliases_are_read_as_before(tmp_path: Path) -> None:
    dump = write_manifests(tmp_path / "dump")
    (dump / "small.yaml").write_text(alias_bomb(levels=3).replace("a:", "x:", 1))
    # (Not objects, so refused for what they are: a document that is not a Kubernetes object.)
    error(
        drasnap("simulate", "autoscale", "s.db", "--from", dump, cwd=tmp_path),
        f"{dump / 'small.yaml'} doc 1: kind: required field is missing",
    )


def test_an_input_file_is_read_up_to_a_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from drasnap.snapshot.ingest import limits
    from drasnap.tools.cli import cli

    dump = write_manifests(tmp_path / "dump")
    monkeypatch.setattr(limits, "MAX_INPUT_BYTES", 1024)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["simulate", "autoscale", "s.db", "--from", str(dump)])
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines() == [
        f"Error: {dump / '01-cluster.yaml'}: more than 1,024 bytes, the most drasnap reads "
        "from one input file (split it into several files in a folder)"
    ]
    assert not (tmp_path / "s.db").exists()


# -- item 4: outputs checked before the work, a failed write one line and nothing left ---------


def drasnap_on_a_full_disk(
    limit: int, *args: str | Path, cwd: Path
) -> subprocess.CompletedProcess[str]:
    """``drasnap`` as on a disk that is full past ``limit`` bytes a file (RLIMIT_FSIZE: a write
    beyond it fails with EFBIG, as ENOSPC would)."""

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "drasnap.tools", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=limited,
    )


@pytest.mark.parametrize(
    ("output", "fragment"),
    [
        ("nope/r.html", "-o nope/r.html: the folder nope does not exist"),
        ("ref.db/r.html", "-o ref.db/r.html: ref.db is not a folder"),
    ],
    ids=["missing-folder", "file-as-folder"],
)
def test_report_into_a_folder_it_cannot_write_is_one_line(
    ref: Path, output: str, fragment: str
) -> None:
    before = files_of(ref)
    error(drasnap("report", "ref.db", "--name", "scale-down-1", "-o", output, cwd=ref), fragment)
    assert files_of(ref) == before


def test_report_on_a_full_disk_is_one_line_and_leaves_no_page(ref: Path) -> None:
    before = files_of(ref)
    # (32 KiB and a little more: SQLite's shared-memory file fits, the page does not.)
    result = drasnap_on_a_full_disk(
        40_000, "report", "ref.db", "--name", "scale-down-1", "-o", "r.html", cwd=ref
    )
    error(result, "cannot write r.html: File too large")
    assert files_of(ref) == before
    assert sorted(p.name for p in ref.iterdir()) == sorted(before)  # no temporary file either


def test_export_into_proc_is_one_line(ref: Path) -> None:
    before = files_of(ref)
    error(
        drasnap("export", "ref.db", "--name", "scale-down-1", "-o", "/proc/x", cwd=ref),
        "cannot write /proc/x: No such file or directory",
    )
    error(
        drasnap("export", "ref.db", "--name", "scale-down-1", "-o", "nope/x", cwd=ref),
        "-o nope/x: the folder nope does not exist",
    )
    assert files_of(ref) == before


def test_export_on_a_full_disk_is_one_line_and_leaves_no_folder(tmp_path: Path) -> None:
    ok(drasnap("simulate", "scale-down", "big.db", "--nodes", "40", cwd=tmp_path))
    before = sorted(p.name for p in tmp_path.iterdir())
    result = drasnap_on_a_full_disk(40_000, "export", "big.db", "-o", "out", cwd=tmp_path)
    error(result, "cannot write out: File too large")
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no folder, no staging


def test_bench_plot_into_a_missing_folder_is_refused_before_the_benchmark(tmp_path: Path) -> None:
    started = time.monotonic()
    error(
        drasnap("bench", "store", "--size", "tiny", "--plot", "nope/x.png", cwd=tmp_path),
        "--plot nope/x.png: the folder nope does not exist",
    )
    assert time.monotonic() - started < 20  # (no benchmark ran)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("command", "limit"),
    [
        # (Reading ref.db needs its 32 KiB shared-memory file: the disk fills after it.)
        (["replay", "ref.db", "--name", "scale-down-1", "--into", "new.db"], 40_000),
        (["demo", "--db", "new.db"], 4_000),
        (["demo", "--db", "new.db"], 40_000),
        (["simulate", "scale-down", "new.db", "--nodes", "4"], 4_000),
        (["simulate", "scale-down", "new.db", "--nodes", "4"], 40_000),
    ],
    ids=[
        "replay-into",
        "demo-db-at-once",
        "demo-db-midway",
        "simulate-at-once",
        "simulate-midway",
    ],
)
def test_a_database_that_cannot_be_written_leaves_no_file(
    ref: Path, tmp_path: Path, command: list[str], limit: int
) -> None:
    shutil.copy(ref / "ref.db", tmp_path / "ref.db")
    before = files_of(tmp_path)
    error(drasnap_on_a_full_disk(limit, *command, cwd=tmp_path), "new.db")
    assert files_of(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ref.db"]


# -- item 7: a PostgreSQL password is never printed ---------------------------------------------


@pytest.mark.postgres
def test_a_postgres_password_is_never_printed(tmp_path: Path, fresh_postgres_url: str) -> None:
    from sqlalchemy.engine import make_url

    # (Trust auth on the test server: any password connects; it must only never be shown.)
    url = make_url(fresh_postgres_url).set(password="SeCrEtPw")
    db = url.render_as_string(hide_password=False)
    done = ok(drasnap("simulate", "scale-down", db, "--nodes", "4", cwd=tmp_path))
    assert "SeCrEtPw" not in done.stdout + done.stderr
    printed = done.stderr.split("Look at run 'scale-down-1' (with DRASNAP_DB set to ")[1]
    assert printed.startswith(url.render_as_string(hide_password=True))
    commands = [line.strip() for line in printed.splitlines()[1:]]
    assert len(commands) == 4 and all('"$DRASNAP_DB"' in line for line in commands), commands
    for line in commands:  # each runs, as printed, with the variable set
        again = subprocess.run(
            line, shell=True, cwd=tmp_path, capture_output=True, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT), "DRASNAP_DB": db},
        )  # fmt: skip
        assert again.returncode == 0, (line, again.stderr)
    # An error naming the run names the database without its password.
    dump = write_manifests(tmp_path / "dump")
    _template_with(
        dump,
        lambda r: r.update(
            selectors=[{"cel": {"expression": 'device.attributes["gpu.example.com"].nosuch'}}]
        ),
    )
    failed = drasnap("simulate", "scale-up", db, "--from", dump, cwd=tmp_path)
    assert failed.returncode == 1
    line = failed.stderr.strip().splitlines()[-1]
    assert line.startswith(f"Error: run 'scale-up-1' in {url.render_as_string(hide_password=True)}")
    assert "SeCrEtPw" not in failed.stdout + failed.stderr


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["runs", "postgresql+psycopg://u:SeCrEtPw@h/db", "--db", "o.db"], "two databases given"),
        (["bench", "--postgres-url", "postgresql://u:SeCrEtPw@h:99999/db"], "invalid port"),
    ],
    ids=["two-databases", "bench-port"],
)
def test_a_usage_error_shows_no_password(tmp_path: Path, args: list[str], fragment: str) -> None:
    line = usage_error(drasnap(*args, cwd=tmp_path), fragment)
    assert "SeCrEtPw" not in line and "u:***@h" in line
    assert list(tmp_path.iterdir()) == []
