"""The first hour, fourth pass (issue 39): bad input that said the wrong thing, or nothing, now
ends in one line naming it, exit 1 (2 for a usage error), and the folder as it was. Each runs
the real ``drasnap`` in a subprocess, as a user would.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.snapshot.simulation.test_scenarios import write_manifests
from tests.tools.test_first_hour import drasnap, error, files_of, ok, ok_json, usage_error


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


@pytest.mark.parametrize("duration", ["0", "0s", "0.0m"])
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
    [["simulate", "scale-down", "s.db", "--nodes", "4"], ["record", "s.db"]],
    ids=["simulate", "record"],
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
