"""A history the previous release wrote (format 1) reads unchanged: a plan compares three-way
against it, `loader revert` restores from its journal, and the next apply writes the current format (3).

tests/fixtures/history-format-1/local was made by the previous release's `loader apply` of the
schools project (SCI renamed "School of Science") against a sandbox seeded as `SEED` below, with
`SCI` then "Science"; the sandbox here holds "Sciences" instead: a platform edit since.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.apply import loader_yaml_for
from helpers.project import SCHOOLS_MAPPING, write_schools

from loader.cli import main
from loader.errors import EXIT_OK
from loader.history.store import History
from loader.sandbox.server import SandboxOptions, serve_in_thread

FIXTURE = Path(__file__).parent.parent / "fixtures" / "history-format-1" / "local"
SEED = {"institution-a": {"schools": [
    {"id": "00000000-0000-4000-8000-000000000001", "code": "SCI", "name": "Sciences"},
    {"id": "00000000-0000-4000-8000-000000000002", "code": "ENG", "name": "Engineering"},
]}}


def _project(root: Path, sandbox: object, monkeypatch: pytest.MonkeyPatch) -> Path:
    (root / "loader.yaml").write_text(loader_yaml_for(sandbox, "FORMAT_1_SECRET"), encoding="utf-8")
    monkeypatch.setenv("FORMAT_1_SECRET", sandbox.client_secret)  # type: ignore[attr-defined]
    monkeypatch.chdir(root)
    (root / "schools.yaml").write_text(SCHOOLS_MAPPING, encoding="utf-8")
    write_schools(root / "schools.xlsx", [("SCI", "School of Science"), ("ENG", "Engineering")])
    shutil.copytree(FIXTURE, root / "history" / "local")
    return root / "history" / "local"


def test_a_format_1_history_is_read_as_it_was_written() -> None:
    history = History.open(FIXTURE, fold_leftovers=False)
    line = history.line("school", ("SCI",))
    assert line is not None and line.former_keys == () and set(line.fields) == {"name"}
    assert line.fields["name"].edited is None
    (journal,) = history.journals()
    field = journal.entries[0].fields["name"]
    assert (field.before, field.has_after) == ("Science", False)


def test_a_plan_compares_three_way_against_a_format_1_history_and_the_next_apply_writes_format_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with serve_in_thread(SandboxOptions(seed=SEED)) as sandbox:
        folder = _project(tmp_path, sandbox, monkeypatch)
        assert main(["plan", "schools.yaml", "--env", "local", "--format", "json", "--out", "plan.json"]) == EXIT_OK
        plan = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
        (sci,) = [r for b in plan["blocks"] for r in b["records"] if r["key"] == ["SCI"]]
        assert [kept["field"] for kept in sci["kept"]] == ["name"]  # "Sciences" is a platform edit: kept
        assert main(["revert", "--env", "local", "--out", "revert.json"]) == EXIT_OK
        revert = json.loads((tmp_path / "revert.json").read_text(encoding="utf-8"))
        assert "changed since" in json.dumps(revert)  # the journal's value before, kept as live moved on
        assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == EXIT_OK  # notes the platform edit
        head = json.loads((folder / "head.json").read_text(encoding="utf-8"))
        assert head["format"] == 3 and head["serial"] == 1  # nothing written: the head did not move
        snapshot = (folder / "snapshot" / "school.tsv").read_text(encoding="utf-8")
        assert snapshot.startswith("#loader-history-snapshot 2\tschool\n")
        line = History.open(folder).line("school", ("SCI",))
        assert line is not None and line.fields["name"].edited is not None
