"""Probable duplicate people through the CLI against the sandbox: 200 applicants of whom 15 are live
people under other ids (typos, swapped names, e-mail case, accents, swapped day and month with an
equal e-mail) are 15 held and 0 false holds; `same` decisions then record those 15 on the live
records without overwriting a live name, and the next plan matches them with nothing to create.

Every person here is synthetic: names are made of syllables, never of real people."""

from __future__ import annotations

import asyncio
import json
import random
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from helpers.apply import client_for, loader_yaml_for
from helpers.review import decide_row

from loader.cli import main
from loader.errors import EXIT_OK
from loader.history.decisions import CREATE, Kind, decisions_path, read_decisions
from loader.plan.model import HELD
from loader.sandbox.server import SandboxOptions, serve_in_thread

HISTORY_KEY = "a test history key for duplicates, long enough"
_SYLLABLES = ("ka", "lo", "mi", "ren", "to", "sa", "vel", "dor", "an", "is", "mar", "tel", "co", "rin", "ba", "nu")
MAPPING = """version: 1
source: applicants.xlsx
entities:
  applicants:
    entity: applicant
    sheet: Applicants
    key: [external_id]
    duplicates: {match: [first_name, last_name, date_of_birth, email_address], threshold: 0.9}
    fields:
      external_id: Applicant ID
      first_name: {column: First Name, pii: true}
      last_name: {column: Last Name, pii: true}
      email_address: {column: Email, pii: true}
      date_of_birth: {column: Date of Birth, type: date, pii: true}
"""
COLUMNS = ("external_id", "first_name", "last_name", "email_address", "date_of_birth")


def _name(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(parts)).capitalize()


def _person(rng: random.Random, key: str) -> dict[str, Any]:
    first, last = _name(rng, 2), _name(rng, 3)
    born = date(1990, 1, 1) + timedelta(days=rng.randrange(3000))
    return {"external_id": key, "first_name": first, "last_name": last,
            "email_address": f"{first}.{last}.{key}@example.invalid".lower(), "date_of_birth": born.isoformat()}


def _swap_day_month(born: str) -> str:
    year, month, day = born.split("-")
    return f"{year}-{day}-{month}"


def _typo(text: str) -> str:
    return text[:3] + ("x" if text[3] != "x" else "y") + text[4:]


def seeded_people() -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, str]]:
    """(live applicants, the 200 rows of the sheet, row key -> live key of the 15 live people again)."""
    rng = random.Random(36)
    live = [_person(rng, f"L{i:03d}") for i in range(100)]
    for i in range(15):  # live day and month swappable (both <= 12), for the swapped-date cases
        live[i]["date_of_birth"] = f"199{i % 10}-0{1 + i % 9}-1{i % 3}"
    again: dict[str, str] = {}
    rows = []
    for i in range(15):
        person, kind = dict(live[i], external_id=f"N{i:03d}"), i % 5
        if kind == 0:  # a typo in the last name, another e-mail
            person.update(last_name=_typo(person["last_name"]), email_address=f"other{i}@example.invalid")
        elif kind == 1:  # first and last names swapped, another e-mail
            person.update(first_name=person["last_name"], last_name=person["first_name"],
                          email_address=f"other{i}@example.invalid")
        elif kind == 2:  # the e-mail in capitals, no date of birth
            person.update(email_address=person["email_address"].upper(), date_of_birth=None)
        elif kind == 3:  # day and month swapped with the same e-mail, the last name changed since
            person.update(date_of_birth=_swap_day_month(person["date_of_birth"]), last_name=_name(rng, 3))
        else:  # accents, a hyphen and case: the same person
            person.update(first_name=person["first_name"].upper().replace("A", "Á"),
                          last_name=f"{person['last_name'][:3]}-{person['last_name'][3:]}")
        again[person["external_id"]] = live[i]["external_id"]
        rows.append(person)
    for i in range(15, 200):
        person = _person(rng, f"N{i:03d}")
        other = live[20 + i % 80]
        if i % 4 == 0:  # a namesake: the same names, another date of birth and e-mail
            person.update(first_name=other["first_name"], last_name=other["last_name"])
        elif i % 4 == 1:  # born the same day as a live person, nothing else alike
            person["date_of_birth"] = other["date_of_birth"]
        elif i % 4 == 2 and i < 95 and "01" <= other["date_of_birth"][8:] <= "12" \
                and other["date_of_birth"][5:7] != other["date_of_birth"][8:]:  # swapped date, names, not the e-mail
            person.update(first_name=other["first_name"], last_name=other["last_name"],
                          date_of_birth=_swap_day_month(other["date_of_birth"]))
        rows.append(person)
    return live, rows, again


def _write_sheet(path: Path, rows: list[dict[str, Any]]) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Applicants"
    sheet.append(["Applicant ID", "First Name", "Last Name", "Email", "Date of Birth"])
    for row in rows:
        born = row["date_of_birth"]
        sheet.append([row["external_id"], row["first_name"], row["last_name"], row["email_address"],
                      date.fromisoformat(born) if born else None])
    book.save(path)


def _live(sandbox: Any) -> dict[str, dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        async with client_for(sandbox) as client:
            return await client.fetch_collection("applicant")

    return {a["external_id"]: a for a in asyncio.run(go())}


def _review_rows(path: Path) -> dict[str, dict[str, Any]]:
    """The review workbook's rows of held duplicates by record, as a reviewer reads them."""
    sheet = openpyxl.load_workbook(path)["Review"]
    header = [c.value for c in sheet[1]]
    rows = [dict(zip(header, (c.value for c in row), strict=False)) for row in sheet.iter_rows(min_row=2)]
    return {row["record"]: row for row in rows if row["change"] == "probable duplicate"}


def _held(plan_file: Path) -> dict[str, str]:
    """Row key -> the message of each row the plan holds as a probable duplicate."""
    plan = json.loads(plan_file.read_text(encoding="utf-8"))
    return {record["ref"].split("/", 1)[1]: finding["message"] for block in plan["blocks"]
            for record in block["records"] for finding in record["findings"] if finding["code"] == HELD}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    live, rows, again = seeded_people()
    seed = {"institution-a": {"applicants": [{k: v for k, v in p.items() if v is not None} for p in live]}}
    with serve_in_thread(SandboxOptions(seed=seed)) as sandbox:
        top = "history: {path: history, key: {env: DUPLICATES_TEST_KEY}}\n"
        (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, "DUPLICATES_TEST_SECRET", top=top),
                                              encoding="utf-8")
        monkeypatch.setenv("DUPLICATES_TEST_SECRET", sandbox.client_secret)
        monkeypatch.setenv("DUPLICATES_TEST_KEY", HISTORY_KEY)
        monkeypatch.chdir(tmp_path)
        (tmp_path / "applicants.yaml").write_text(MAPPING, encoding="utf-8")
        _write_sheet(tmp_path / "applicants.xlsx", rows)
        yield sandbox, tmp_path, again


def test_fifteen_live_people_under_other_ids_are_held_and_no_one_else(project: Any) -> None:
    _, root, again = project
    assert main(["plan", "applicants.yaml", "--env", "local", "--out", "plan.json", "--detailed-exitcode"]) == 2
    held = _held(root / "plan.json")
    assert sorted(held) == sorted(again)
    _, rows, _ = seeded_people()
    values = {str(row[k]).casefold() for row in rows for k in COLUMNS[1:] if row[k]}
    for key, message in held.items():
        assert f"live applicant {again[key]}" in message and "agreed" in message
        assert not any(value in message.casefold() for value in values)  # fields and a score, never a value


def test_same_decisions_record_the_fifteen_on_the_live_records_without_overwriting_a_name(project: Any) -> None:
    sandbox, root, again = project
    assert main(["apply", "applicants.yaml", "--env", "local", "--yes"]) == EXIT_OK  # the 185 others; 15 held
    before = _live(sandbox)
    assert len(before) == 100 + 185 and not set(again) & set(before)
    assert main(["plan", "applicants.yaml", "--env", "local", "--review", "review.xlsx"]) == EXIT_OK
    assert (root / "review.xlsx").stat().st_mode & 0o077 == 0  # both records side by side: private
    shown = _review_rows(root / "review.xlsx")
    assert sorted(shown) == sorted(again)
    for row, live_key in again.items():
        assert shown[row]["decision"] is None and f"live applicant {live_key}" in shown[row]["rule"]
        assert f"external_id: {live_key}" in shown[row]["current value"]
        assert f"external_id: {row}" in shown[row]["proposed value"]
        decide_row(root / "review.xlsx", row, CREATE, "same", "the same person")
    assert main(["decide", "review.xlsx", "--by", "Ana Reviewer"]) == EXIT_OK
    decided = read_decisions(decisions_path(root)).entries
    assert len(decided) == 15 and {d.decision for d in decided} == {Kind.SAME}
    assert main(["plan", "applicants.yaml", "--env", "local", "--out", "plan.json"]) == EXIT_OK
    assert _held(root / "plan.json") == {}
    assert main(["apply", "applicants.yaml", "--env", "local", "--yes"]) == EXIT_OK
    after = _live(sandbox)
    assert len(after) == len(before) and not set(again) & set(after)  # the 15 were not created
    for live_key in again.values():  # nothing of theirs written: the live names stand
        assert {k: after[live_key].get(k) for k in COLUMNS} == {k: before[live_key].get(k) for k in COLUMNS}
    assert main(["plan", "applicants.yaml", "--env", "local", "--out", "plan.json", "--detailed-exitcode"]) == EXIT_OK
    plan = json.loads((root / "plan.json").read_text(encoding="utf-8"))
    records = {r["ref"].split("/", 1)[1]: r for b in plan["blocks"] for r in b["records"]}
    for row, live_key in again.items():  # matched to the live record by its history line
        assert records[row]["action"] == "unchanged" and records[row]["live_id"] == before[live_key]["id"]


CREDENTIALS = """
  credentials:
    entity: credential
    sheet: Credentials
    key: [applicant_id, type, name]
    fields:
      applicant_id: {ref: applicant, column: Applicant ID}
      type: Type
      name: Name
"""


def test_a_held_row_holds_its_credentials_and_create_or_same_lets_them_through(project: Any) -> None:
    sandbox, root, again = project
    (root / "applicants.yaml").write_text(MAPPING + CREDENTIALS, encoding="utf-8")
    book = openpyxl.load_workbook(root / "applicants.xlsx")
    sheet = book.create_sheet("Credentials")
    sheet.append(["Applicant ID", "Type", "Name"])
    for key in ("N000", "N001", "N020"):
        sheet.append([key, "EMPLOYMENT", f"Work of {key}"])
    book.save(root / "applicants.xlsx")
    assert main(["apply", "applicants.yaml", "--env", "local", "--yes"]) == EXIT_OK
    credentials = _credentials(sandbox)
    assert [c["name"] for c in credentials] == ["Work of N020"]  # those of the held rows held with them
    assert main(["plan", "applicants.yaml", "--env", "local", "--review", "review.xlsx"]) == EXIT_OK
    decide_row(root / "review.xlsx", "N000", CREATE, "create", "another person of the same name")
    decide_row(root / "review.xlsx", "N001", CREATE, "same", "the same person")
    assert main(["decide", "review.xlsx", "--by", "Ana Reviewer"]) == EXIT_OK
    assert main(["apply", "applicants.yaml", "--env", "local", "--yes"]) == EXIT_OK
    live = _live(sandbox)
    assert "N000" in live and "N001" not in live
    by_name = {c["name"]: c["applicant_id"] for c in _credentials(sandbox)}
    assert by_name["Work of N000"] == live["N000"]["id"]
    assert by_name["Work of N001"] == live[again["N001"]]["id"]  # through the live record it is


def _credentials(sandbox: Any) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        async with client_for(sandbox) as client:
            return await client.fetch_collection("credential")

    return asyncio.run(go())
