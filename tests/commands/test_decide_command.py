"""`loader decide review.xlsx`: a reviewer's skips and defers from a review workbook into decisions.yaml;
rows sorted, filtered or deleted, saved by openpyxl or by LibreOffice; bad rows refused by name, with
nothing recorded."""

from __future__ import annotations

import shutil
import socket
import subprocess
from datetime import date, datetime
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from helpers.project import SCHOOLS_SEED, schools_project
from helpers.report import review_plan, small_plan
from helpers.review import plan_with_conflict

from loader.cli import main
from loader.commands.decide import DecideRequest, default_by, run
from loader.history.decisions import CREATE, Kind, read_decisions
from loader.history.digests import Digester
from loader.report.review_rows import HEADER, review_rows
from loader.report.review_workbook import write_review_workbook
from loader.sandbox.server import SandboxOptions, serve_in_thread

TODAY = date(2026, 11, 25)
DECISION, ROW_ID = HEADER.index("decision"), HEADER.index("row id")  # 0-based, as in a row's values


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("loader decide opened a connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def decide_rows(path: Path, decisions: dict[str, tuple[str, str, Any]], out: Path | None = None) -> None:
    """Set (decision, reason, until) on the rows of the given row ids, as a reviewer would."""
    book = openpyxl.load_workbook(path)
    sheet = book["Review"]
    header = [c.value for c in sheet[1]]
    at = {name: header.index(name) + 1 for name in ("decision", "reason", "until", "row id")}
    for row in range(2, sheet.max_row + 1):
        chosen = decisions.get(sheet.cell(row, at["row id"]).value)
        if chosen is not None:
            for name, value in zip(("decision", "reason", "until"), chosen, strict=True):
                sheet.cell(row, at[name]).value = value
    book.save(out or path)


def row_ids(plan: Any) -> dict[tuple[str, str], str]:
    return {(r.record, r.field): r.row_id for r in review_rows(plan)}


def test_a_skip_and_a_defer_from_loader_plan_review_are_recorded_with_who_and_no_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve_in_thread(SandboxOptions(seed=SCHOOLS_SEED)) as sandbox:
        schools_project(tmp_path, sandbox, monkeypatch)
        assert main(["plan", "schools.yaml", "--env", "local", "--review", "review.xlsx"]) == 0
    assert "wrote review.xlsx (2 rows to review)" in capsys.readouterr().err
    book = openpyxl.load_workbook("review.xlsx")
    rows = list(book["Review"].iter_rows(min_row=2, values_only=True))
    assert [(r[1], r[3], r[4], r[5]) for r in rows] == [("SCI", "name", "Science", "School of Science"),
                                                        ("LAW", "(all fields)", None, "code: LAW\nname: Law")]
    sci, law = rows[0][ROW_ID], rows[1][ROW_ID]
    decide_rows(Path("review.xlsx"), {sci: ("Skip", "the school renames in March", None),
                                      law: ("defer", "after the board meets", datetime(2027, 2, 1))})
    monkeypatch.setenv("GITHUB_ACTOR", "ci-bot")
    assert main(["decide", "review.xlsx", "--by", "Ana Reviewer"]) == 0
    assert "2 decisions (skip: 1, defer: 1) recorded in" in capsys.readouterr().err
    decided = read_decisions(tmp_path / "decisions.yaml").entries
    assert [(d.entity, d.key, d.field, d.decision, d.by, d.until) for d in decided] == [
        ("school", '["LAW"]', CREATE, Kind.DEFER, "Ana Reviewer", date(2027, 2, 1)),
        ("school", '["SCI"]', "name", Kind.SKIP, "Ana Reviewer", None)]
    skip = decided[1]
    assert skip.refused == Digester().value("school", ("SCI",), "name", "School of Science")
    assert skip.reason == "the school renames in March" and skip.environment == "local"
    assert skip.decided_on == date.today()
    assert "School of Science" not in (tmp_path / "decisions.yaml").read_text(encoding="utf-8")


@pytest.fixture
def reviewed(tmp_path: Path) -> Path:
    """A review workbook of `review_plan` (the history key given: personal rows can be decided)."""
    write_review_workbook(review_plan(), tmp_path / "review.xlsx", Digester(frozenset({"applicant"}), b"k" * 32))
    return tmp_path / "review.xlsx"


def decide(workbook: Path, project: Path, by: str = "ana") -> int:
    return run(DecideRequest(workbook, by, project), today=TODAY)


def test_a_skip_recorded_from_a_workbook_edited_by_openpyxl_rows_sorted_filtered_and_deleted(
    reviewed: Path, tmp_path: Path, no_network: None
) -> None:
    ids = row_ids(review_plan())
    decide_rows(reviewed, {ids[("ENG", "name")]: ("skip", "keep the old name", None),
                           ids[("A1", "email_address")]: ("skip", "bounced", None),
                           ids[("LAW", CREATE)]: ("apply", "", None),
                           ids[("EVIL", CREATE)]: ("skip", "-5 points: not now", None)})
    book = openpyxl.load_workbook(reviewed)
    sheet = book["Review"]
    values = [list(r) for r in sheet.iter_rows(min_row=2, values_only=True)]
    values.sort(key=lambda r: str(r[1]), reverse=True)  # sorted by record, descending
    values = [r for r in values if r[1] not in ("GOODC", "ART2")]  # some rows deleted
    sheet.delete_rows(2, sheet.max_row)
    for row in values:
        sheet.append(row)
    sheet.row_dimensions[3].hidden = True  # filtered out of view: still read
    book.save(reviewed)
    assert decide(reviewed, tmp_path) == 0
    decided = {(d.entity, d.field): d for d in read_decisions(tmp_path / "decisions.yaml").entries}
    assert set(decided) == {("school", "name"), ("applicant", "email_address"), ("school", CREATE)}
    assert decided[("school", CREATE)].reason == "-5 points: not now"
    personal = decided[("applicant", "email_address")]
    text = (tmp_path / "decisions.yaml").read_text(encoding="utf-8")
    assert "A1" not in personal.key and "secret" not in text and "example.com" not in text


@pytest.mark.skipif(shutil.which("soffice") is None, reason="needs LibreOffice (libreoffice-calc-nogui)")
def test_a_skip_recorded_from_a_workbook_saved_by_libreoffice_rows_sorted_and_some_deleted(
    reviewed: Path, tmp_path: Path
) -> None:
    ids = row_ids(review_plan())
    decide_rows(reviewed, {ids[("ENG", "name")]: ("skip", "keep the old name", None),
                           ids[("ART1", "status")]: ("defer", "next term", date(2027, 2, 1)),
                           ids[("LAW", CREATE)]: ("skip", "the law school is not ready", None)})
    book = openpyxl.load_workbook(reviewed)
    sheet = book["Review"]
    values = [list(r) for r in sheet.iter_rows(min_row=2, values_only=True)]
    values = sorted((r for r in values if r[1] not in ("EVIL", "GOODC")), key=lambda r: str(r[0]))
    sheet.delete_rows(2, sheet.max_row)
    for row in values:
        sheet.append(row)
    book.save(tmp_path / "edited.xlsx")
    saved = tmp_path / "libreoffice"
    converted = subprocess.run(
        ["soffice", "--headless", f"-env:UserInstallation=file://{tmp_path / 'profile'}", "--convert-to",
         "xlsx:Calc MS Excel 2007 XML", "--outdir", str(saved), str(tmp_path / "edited.xlsx")],
        capture_output=True, text=True, timeout=180, check=False)
    assert (saved / "edited.xlsx").exists(), converted.stderr
    assert decide(saved / "edited.xlsx", tmp_path) == 0
    decided = {(d.key, d.field): d for d in read_decisions(tmp_path / "decisions.yaml").entries}
    assert set(decided) == {('["ENG"]', "name"), ('["ART1"]', "status"), ('["LAW"]', CREATE)}
    assert decided[('["ART1"]', "status")].until == date(2027, 2, 1)
    assert decided[('["ENG"]', "name")].refused == review_rows(review_plan())[0].digest


SYSTEM_PYTHON = "/usr/bin/python3"


def _libreoffice_uno() -> bool:
    if shutil.which("soffice") is None or not Path(SYSTEM_PYTHON).exists():
        return False
    return subprocess.run([SYSTEM_PYTHON, "-c", "import uno"], capture_output=True, check=False).returncode == 0


@pytest.mark.skipif(not _libreoffice_uno(), reason="needs LibreOffice and its Python bridge (python3-uno)")
def test_a_skip_recorded_from_a_workbook_libreoffice_itself_sorted_cut_and_saved(
    reviewed: Path, tmp_path: Path
) -> None:
    ids = row_ids(review_plan())
    decide_rows(reviewed, {ids[("ENG", "name")]: ("skip", "keep the old name", None),
                           ids[("GOODC", CREATE)]: ("skip", "deleted in LibreOffice: no decision", None),
                           ids[("A1", "email_address")]: ("defer", "after the census", datetime(2027, 3, 1))})
    script = Path(__file__).parent.parent / "helpers" / "libreoffice_edit.py"
    edited = subprocess.run([SYSTEM_PYTHON, str(script), str(reviewed), str(tmp_path / "saved.xlsx"),
                             str(tmp_path / "profile")], capture_output=True, text=True, timeout=180, check=False)
    assert edited.returncode == 0, edited.stderr
    records = [r[1] for r in openpyxl.load_workbook(tmp_path / "saved.xlsx")["Review"].iter_rows(
        min_row=2, values_only=True)]
    assert records[:3] == ["LAW", "EVIL", "ENG"] and "GOODC" not in records  # sorted by LibreOffice, rows cut
    assert decide(tmp_path / "saved.xlsx", tmp_path) == 0
    decided = {(d.entity, d.field): d for d in read_decisions(tmp_path / "decisions.yaml").entries}
    assert set(decided) == {("school", "name"), ("applicant", "email_address")}
    assert decided[("school", "name")].reason == "keep the old name"
    assert decided[("applicant", "email_address")].until == date(2027, 3, 1)


def _row_problem(tmp_path: Path, reviewed: Path, capsys: pytest.CaptureFixture[str]) -> str:
    before = b"# earlier decisions\nversion: 1\ndecisions: []\n"
    (tmp_path / "decisions.yaml").write_bytes(before)
    assert main(["decide", str(reviewed), "--by", "ana", "--config", str(tmp_path / "loader.yaml")]) == 1
    assert (tmp_path / "decisions.yaml").read_bytes() == before  # nothing recorded
    return capsys.readouterr().err


def test_a_row_from_another_plans_workbook_is_refused_by_name_and_nothing_is_recorded(
    reviewed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_review_workbook(small_plan(), tmp_path / "other.xlsx")
    other = list(openpyxl.load_workbook(tmp_path / "other.xlsx")["Review"].iter_rows(min_row=2, values_only=True))
    ids = row_ids(review_plan())
    decide_rows(reviewed, {ids[("ENG", "name")]: ("skip", "fine", None)})
    book = openpyxl.load_workbook(reviewed)
    pasted = list(other[0])
    pasted[DECISION] = "skip"
    book["Review"].append(pasted)  # a row pasted from another plan's workbook
    book.save(reviewed)
    err = _row_problem(tmp_path, reviewed, capsys)
    pasted_row = len(review_rows(review_plan())) + 2
    assert f"review.xlsx › Review › row {pasted_row}: row id '{pasted[ROW_ID]}' is from another plan's review" in err
    assert "nothing was recorded" in err


def test_a_row_id_that_does_not_exist_and_a_misspelled_decision_are_named_together(
    reviewed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = row_ids(review_plan())
    decide_rows(reviewed, {ids[("ENG", "name")]: ("skp", "", None), ids[("LAW", CREATE)]: ("defer", "", None)})
    book = openpyxl.load_workbook(reviewed)
    sheet = book["Review"]
    made_up = ids[("ENG", "name")].rsplit("-", 1)[0] + "-99999"
    sheet.cell(3, ROW_ID + 1).value = made_up
    sheet.cell(3, DECISION + 1).value = "skip"
    book.save(reviewed)
    err = _row_problem(tmp_path, reviewed, capsys)
    assert "3 rows cannot be recorded; nothing was recorded" in err
    assert ("Review › row 2: decision 'skp' is not one of apply, skip, defer (empty is apply) "
            "(did you mean 'skip'?)") in err
    assert f"Review › row 3: row id '{made_up}' does not exist in this workbook's plan" in err
    assert "a defer needs a date in `until`" in err


def test_an_edited_digest_is_refused_by_name(
    reviewed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    book = openpyxl.load_workbook(reviewed)
    book["Review"].cell(2, DECISION + 1).value = "skip"
    book["Review"].cell(2, HEADER.index("change digest") + 1).value = "AAAAAAAAAAAA"
    book.save(reviewed)
    err = _row_problem(tmp_path, reviewed, capsys)
    assert "review.xlsx › Review › row 2: its change digest does not match the change row id" in err


@pytest.mark.parametrize("kind", ["plain", "text", "missing"])
def test_a_file_that_is_not_a_review_workbook_is_a_clear_error(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "review.xlsx"
    if kind == "plain":
        openpyxl.Workbook().save(path)
    elif kind == "text":
        path.write_text("decision,reason\n", encoding="utf-8")
    assert main(["decide", str(path)]) == 1
    err = capsys.readouterr().err
    assert ("no such file" if kind == "missing" else "not a review workbook") in err
    assert "Traceback" not in err and not (tmp_path / "decisions.yaml").exists()


def test_conflicts_decided_for_the_platform_are_skips_and_for_the_sheet_are_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = plan_with_conflict()
    write_review_workbook(plan, tmp_path / "review.xlsx")
    ids = row_ids(plan)
    decide_rows(tmp_path / "review.xlsx", {ids[("SCI", "name")]: ("platform", "they fixed it", None)})
    assert decide(tmp_path / "review.xlsx", tmp_path) == 0
    assert [d.decision for d in read_decisions(tmp_path / "decisions.yaml").entries] == [Kind.SKIP]
    decide_rows(tmp_path / "review.xlsx", {ids[("SCI", "name")]: ("sheet", "ours is right", None)})
    assert decide(tmp_path / "review.xlsx", tmp_path) == 0
    assert [d.decision for d in read_decisions(tmp_path / "decisions.yaml").entries] == [Kind.SHEET]  # replaced
    personal = next(r for r in review_rows(plan) if r.kind == "conflict" and r.record == "A1")
    decide_rows(tmp_path / "review.xlsx", {personal.row_id: ("platform", "", None)})
    assert main(["decide", str(tmp_path / "review.xlsx"), "--by", "ana"]) == 1
    err = capsys.readouterr().err
    assert "Review › row 3: this change has no digest (a personal value the plan does not hold" in err


def test_apply_rows_record_nothing_and_a_skipped_status_step_keeps_the_first_step(
    reviewed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [r for r in review_rows(review_plan()) if r.record == "ART1"]
    decide_rows(reviewed, {rows[0].row_id: ("apply", "", None)})
    assert decide(reviewed, tmp_path) == 0
    assert "no decision: nothing recorded" in capsys.readouterr().err
    assert not (tmp_path / "decisions.yaml").exists()
    decide_rows(reviewed, {rows[1].row_id: ("skip", "not active yet", None), rows[0].row_id: ("skip", "", None)})
    assert decide(reviewed, tmp_path) == 0
    (only,) = read_decisions(tmp_path / "decisions.yaml").entries
    assert only.refused == rows[0].digest  # READY, the first step: the steps after it are held with it


def test_who_decided_defaults_to_the_ci_actor_then_git_then_the_os_user() -> None:
    assert default_by({"GITHUB_ACTOR": "octocat"}) == "octocat"
    assert default_by({"GITLAB_USER_LOGIN": "tanuki"}) == "tanuki"
    assert default_by({}) != ""


def test_show_writes_the_review_workbook_of_a_saved_plan_with_the_rows_and_digests_plan_gave(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], no_network: None
) -> None:
    from loader.plan.plan_file import write_plan_json

    plan = review_plan()
    write_plan_json(plan, tmp_path / "plan.json")
    monkeypatch.chdir(tmp_path)
    assert main(["show", "plan.json", "--review", "again.xlsx"]) == 1  # the plan has errors, as plan says
    assert "wrote again.xlsx (12 rows to review)" in capsys.readouterr().err
    write_review_workbook(plan, tmp_path / "first.xlsx")
    first = list(openpyxl.load_workbook(tmp_path / "first.xlsx")["Review"].iter_rows(values_only=True))
    again = list(openpyxl.load_workbook(tmp_path / "again.xlsx")["Review"].iter_rows(values_only=True))
    assert again == first


def test_a_symlink_planted_beside_decisions_yaml_is_never_written_through(reviewed: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("precious", encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / ".decisions.yaml.tmp").symlink_to(outside)  # as a pull request can bring it
    ids = row_ids(review_plan())
    decide_rows(reviewed, {ids[("ENG", "name")]: ("skip", "keep the old name", None)})
    assert decide(reviewed, project) == 0
    assert outside.read_text(encoding="utf-8") == "precious"
    assert [d.field for d in read_decisions(project / "decisions.yaml").entries] == ["name"]
