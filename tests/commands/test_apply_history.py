"""`loader apply` writes the environment's history as it goes: one journal per apply that wrote
something, each write as its answer arrived, the head moved once; no personal value in any file.

Against a sandbox as a real server, with the repository's mappings, samples and seed, through the
command line."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from helpers.api import writes_answered
from helpers.apply import client_for, loader_yaml_for

from loader.apply.results import ANSWER_LOST_ADOPTED
from loader.cli import main
from loader.history.digests import expand_id
from loader.history.journal import Journal, JournalEntry
from loader.history.store import History
from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_thread

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "samples" / "sandbox-seed.json"
HISTORY_KEY = "a test history key, long and random enough"
CURRICULUM = ("mappings/curriculum.yaml", "mappings/arrangements.yaml")
# Writes one at a time, so the sandbox's seeded fault draws meet the same writes on every run.
LOST = FaultOptions(lost_rate=0.3, seed=11)


@pytest.fixture
def sandbox() -> Iterator[Any]:
    with serve_in_thread(SandboxOptions(seed=SEED, faults=LOST)) as running:
        yield running


@pytest.fixture
def calm_sandbox() -> Iterator[Any]:
    with serve_in_thread(SandboxOptions(seed=SEED)) as running:
        yield running


@pytest.fixture
def project(tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _project(tmp_path, sandbox, monkeypatch)


@pytest.fixture
def calm_project(tmp_path: Path, calm_sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _project(tmp_path, calm_sandbox, monkeypatch)


def _project(tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The repository's mappings and samples, and loader.yaml naming the sandbox as `local` with a
    history keyed by the variable HISTORY_TEST_KEY."""
    shutil.copytree(REPO / "mappings", tmp_path / "mappings")
    shutil.copytree(REPO / "samples" / "intake-2027", tmp_path / "samples" / "intake-2027")
    top = "history: {path: history, key: {env: HISTORY_TEST_KEY}}\n"
    settings = "    retry: {attempts: 8, wait_initial: 0.01, wait_max: 0.2}\n"
    (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, "HISTORY_TEST_SECRET", top=top,
                                                          settings=settings), encoding="utf-8")
    monkeypatch.setenv("HISTORY_TEST_SECRET", sandbox.client_secret)
    monkeypatch.setenv("HISTORY_TEST_KEY", HISTORY_KEY)
    monkeypatch.delenv("GITHUB_ACTOR", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _apply(*argv: str) -> int:
    return main(["apply", *argv, "--env", "local", "--yes", "--concurrency", "1"])


def _history(project: Path, personal: tuple[str, ...] = ()) -> History:
    return History.open(project / "history" / "local", history_key=HISTORY_KEY.encode(), personal=personal,
                        fold_leftovers=False)


def _live(sandbox: Any, entities: tuple[str, ...]) -> dict[str, dict[str, dict[str, Any]]]:
    async def go() -> dict[str, list[dict[str, Any]]]:
        async with client_for(sandbox) as client:
            return await client.fetch_collections(list(entities))

    return {entity: {r["id"]: r for r in records} for entity, records in asyncio.run(go()).items()}


def _kinds(journal: Journal) -> dict[str, int]:
    counts: dict[str, int] = {}
    for entry in journal.entries:
        counts[entry.kind] = counts.get(entry.kind, 0) + 1
    return counts


def _check_entry_against_live(history: History, entry: JournalEntry, live: dict[str, dict[str, Any]]) -> None:
    """A journaled write happened: the record is live under the id journaled, and each plain field
    written last holds what W says was sent."""
    record = live[expand_id(entry.live_id or "")]
    key = tuple(json.loads(entry.key))
    for name in ("code", "name"):
        if name in entry.fields:
            assert entry.fields[name].written == history.digester.value(entry.entity, key, name, record[name])


def test_a_real_apply_journals_each_write_moves_the_head_once_and_a_no_op_leaves_no_trace(
    project: Path, sandbox: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _apply(*CURRICULUM, "--by", "Release Bot", "--results", "results.json", "--results", "results.xlsx") == 0
    results = json.loads((project / "results.json").read_text(encoding="utf-8"))
    assert re.search(rf"\d+ creates? {ANSWER_LOST_ADOPTED}: found under their key", capsys.readouterr().out)
    messages = [c.value for sheet in openpyxl.load_workbook(project / "results.xlsx") for row in sheet.iter_rows()
                for c in row]
    assert ANSWER_LOST_ADOPTED in messages
    history = _history(project)
    (journal,) = history.journals()
    assert history.leftovers() == []
    assert journal.info.by == "Release Bot" and journal.info.environment == "sandbox"
    assert journal.info.plan_digest is not None and journal.info.plan_digest.startswith("sha256:")

    kinds = _kinds(journal)
    created = [r for r in results["records"] if r["outcome"] == "created"]
    lost_and_adopted = [r for r in created if r["message"] == ANSWER_LOST_ADOPTED]
    assert lost_and_adopted, "the sandbox's lost answers must have met a create"
    assert kinds["create"] + kinds["adopt"] == len(created)
    assert kinds["adopt"] == len(lost_and_adopted) and kinds["lost"] >= len(lost_and_adopted)
    status_steps = [e for e in journal.entries if e.entity == "arrangement" and set(e.fields) == {"status"}]
    assert status_steps and all(e.kind == "update" for e in status_steps)
    assert journal.counts is not None
    assert journal.counts["created"] == results["totals"]["created"]
    assert journal.counts["updated"] == results["totals"]["updated"]
    assert journal.counts["adopted"] == len([r for r in results["records"] if r["adopted"]])

    live = _live(sandbox, ("school", "course", "program", "subject", "arrangement"))
    for entry in journal.entries:
        if entry.kind in ("create", "update", "adopt"):
            _check_entry_against_live(history, entry, live[entry.entity])
            assert entry.updated is not None
            assert all(field.owner.block for field in entry.fields.values())
    sandbox_user = next(iter(live["school"].values()))  # any record the apply wrote names the loader's user
    written_ids = {expand_id(e.live_id or "") for e in journal.entries if e.entity == "school" and e.live_id}
    users = {live["school"][i]["metadata"]["updated"]["user"]["id"] for i in written_ids}
    assert sandbox_user and history.head.service_user_ids == tuple(sorted(users))
    assert history.head.serial == 1 and history.head.last_apply == journal.info.apply_id

    head_before = (project / "history" / "local" / "head.json").read_bytes()
    # The first apply after the creates confirms, once, the fields its plan could not digest yet (those
    # referring to records it created): W moves, the head does not (nothing was written).
    assert _apply(*CURRICULUM) == 0
    assert (project / "history" / "local" / "head.json").read_bytes() == head_before
    after = _history(project).journals()
    journals = len(after)
    assert journals in (1, 2)
    assert journals == 1 or all(e.kind == "confirm" for e in after[-1].entries)  # the one found by time
    snapshot_before = {p.name: p.read_bytes() for p in (project / "history" / "local" / "snapshot").iterdir()}
    assert _apply(*CURRICULUM) == 0  # nothing left to do
    assert len(_history(project).journals()) == journals
    assert list((project / "history" / "local" / "journal").glob("*.open.jsonl")) == []
    assert (project / "history" / "local" / "head.json").read_bytes() == head_before
    assert {p.name: p.read_bytes() for p in (project / "history" / "local" / "snapshot").iterdir()} == (
        snapshot_before
    )


def _personal_values(project: Path) -> set[str]:
    """Every name, e-mail, birth date (as the sheet, the service and common forms write it) and
    external id of the applicants, from the sheet and from the service's seed."""
    values: set[str] = set()
    sheet = openpyxl.load_workbook(project / "samples" / "intake-2027" / "applicants.xlsx")["Applicants"]
    for external_id, first, last, email, born, *_ in sheet.iter_rows(min_row=2, values_only=True):
        values |= {str(external_id), str(first), str(last), str(email)}
        values |= _date_forms(born)
    for applicant in json.loads(SEED.read_text(encoding="utf-8"))["institution-a"]["applicants"]:
        values |= {applicant["external_id"], applicant["first_name"], applicant["last_name"],
                   applicant["email_address"]}
        values |= _date_forms(date.fromisoformat(applicant["date_of_birth"]))
    return {v for v in values if v and v != "None"}


def _date_forms(born: Any) -> set[str]:
    day = born.date() if isinstance(born, datetime) else born
    return {day.isoformat(), day.strftime("%Y%m%d"), day.strftime("%d/%m/%Y"), str(born)}


def test_the_history_holds_no_personal_value(calm_project: Path) -> None:
    project = calm_project
    assert _apply("mappings/applicants.yaml", "--results", "results.json") == 0
    results = json.loads((project / "results.json").read_text(encoding="utf-8"))
    assert results["totals"]["created"] and results["totals"]["updated"]
    folder = project / "history" / "local"
    files = [p for p in folder.rglob("*") if p.is_file()]
    journal = _history(project, ("applicant", "credential")).journals()[0]
    assert {"create", "update"} <= set(_kinds(journal))
    assert any(e.entity == "applicant" and e.kind == "update" for e in journal.entries)
    values = _personal_values(project)
    assert len(values) > 40
    # A value is looked for as the files would hold it, delimited (a JSON string, a tab-separated
    # column, part of a phrase or an e-mail), not inside a digest's run of base64url characters,
    # where a short name like "Mia" turns up by chance, case aside, once in a few dozen histories.
    for path in files:
        data = path.read_bytes().lower()
        for value in values:
            found = re.search(rb"(?<![a-z0-9_-])" + re.escape(value.lower().encode()) + rb"(?![a-z0-9_-])", data)
            assert found is None, f"{value!r} is in {path.relative_to(project)}"



def _rename_schools(project: Path, suffix: str) -> None:
    path = project / "samples" / "intake-2027" / "curriculum.xlsx"
    workbook = openpyxl.load_workbook(path)
    sheet = workbook[next(name for name in workbook.sheetnames if "chool" in name)]
    for row in range(2, sheet.max_row + 1):
        if sheet.cell(row=row, column=2).value:
            sheet.cell(row=row, column=2).value = f"{sheet.cell(row=row, column=2).value} {suffix}"
    workbook.save(path)


def _plan_out(name: str) -> int:
    return main(["plan", "mappings/curriculum.yaml", "--env", "local", "--out", name])


def test_a_saved_plan_is_refused_once_another_apply_touched_its_records(
    calm_project: Path, calm_sandbox: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _apply("mappings/curriculum.yaml") == 0
    _rename_schools(calm_project, "(reviewed)")
    assert _plan_out("reviewed.json") == 0
    assert _plan_out("control.json") == 0
    # Another apply of the same sheet touches the plan's records: their history lines move.
    assert _apply("mappings/curriculum.yaml") == 0
    capsys.readouterr()
    calm_sandbox.reset_stats()
    assert main(["apply", "--plan", "reviewed.json", "--env", "local"]) == 1
    err = capsys.readouterr().err
    assert "another apply touched" in err and "plan again" in err
    assert writes_answered(calm_sandbox) == 0

    # The control: a plan applied with no apply in between goes ahead.
    _rename_schools(calm_project, "(again)")
    assert _plan_out("fresh.json") == 0
    assert main(["apply", "--plan", "fresh.json", "--env", "local"]) == 0
    assert writes_answered(calm_sandbox) > 0
