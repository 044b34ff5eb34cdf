"""A newcomer's year with a university handbook, end to end through the command line against the
sandbox as a real server: the first contact of issue 40 (items 1-7), each step asserting its fix.

A handbook export of 300 units (Unit code, Unit title, Faculty, Credit points, Level, a Synopsis
with line breaks and curly quotes, Offerings), titles ending in a carriage return as Excel keeps
them, units under their faculties (schools, live). The cycle: `init` proposes the natural key and
validates (1), a copy with one code typed twice is an error naming the code and both rows (1),
`loader plan` of the workbook points to `init` (2), the titles' control characters are cleaned by
their own steps, so nothing warns (4); plan and apply; a person edits a unit in the platform with
the documented script (7); next year's workbook renames two units and drops one: the plan keeps the
edit, names the dropped unit and counts what it lists (6); apply; the mapping file renamed with
`formerly` plans clean; pull → init → plan proposes nothing, the units' parents drafted as the
schools they are (5); a Windows-1252 CSV through `init` is read as cp1252 with its curly quotes (3).
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml
from helpers.apply import loader_yaml_for
from helpers.plan import REPO

from loader.cli import main
from loader.errors import EXIT_ERROR, EXIT_OK
from loader.plan.plan_file import read_plan_json
from loader.safe_cells import escape_xlsx_text
from loader.sandbox.server import SandboxOptions, serve_in_thread

pytestmark = pytest.mark.slow

HEADER = ["Unit code", "Unit title", "Faculty", "Credit points", "Level", "Synopsis", "Offerings"]
FACULTIES = [("ART", "Faculty of Arts"), ("SCI", "Faculty of Science"), ("LAW", "Faculty of Law")]
UNITS = 300
PARENT = "      parent: {column: Faculty, ref: school, by: name}\n"
STAFF_NAME = "Unit 0: Studies, as the faculty named it"

Row = list[Any]


def _units() -> list[Row]:
    return [[f"{'ABC'[n % 3]}{'XYZ'[n % 3]}{1000 + n}", f"Unit {n}: “Studies” in things\r\n", FACULTIES[n % 3][1], 6,
             n % 3 + 1, f"This unit’s aims:\nfirst “{n}”\r\nsecond", "S1-01-CLAYTON-ON-CAMPUS\nS2-01-CLAYTON-ON-CAMPUS"]
            for n in range(UNITS)]


def _book(path: Path, rows: list[Row]) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Units"
    sheet.append(HEADER)
    for row in rows:  # as Excel saves text: a carriage return as _x000D_
        sheet.append([escape_xlsx_text(v) if isinstance(v, str) else v for v in row])
    book.save(path)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Any]]:
    seed = {"institution-a": {"schools": [{"id": f"s-{code}", "code": code, "name": name}
                                          for code, name in FACULTIES]}}
    with serve_in_thread(SandboxOptions(seed=seed)) as sandbox:
        text = loader_yaml_for(sandbox, "HANDBOOK_TEST_SECRET", top="history: {path: history}\n"
                                                                    "default_environment: local\n")
        (tmp_path / "loader.yaml").write_text(text, encoding="utf-8")
        monkeypatch.setenv("HANDBOOK_TEST_SECRET", sandbox.client_secret)
        monkeypatch.delenv("GITHUB_ACTOR", raising=False)
        monkeypatch.chdir(tmp_path)
        yield tmp_path, sandbox


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """The command's exit code and all it printed (stdout and stderr)."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _first_contact(folder: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """Items 1, 2 and 4: the natural key, the duplicate named, the workbook pointed to `init`."""
    _book(folder / "handbook-2026.xlsx", _units())
    code, out = _run(capsys, "init", "handbook-2026.xlsx")
    assert code == EXIT_OK and "It validates." in out, out
    mapping = folder / "mappings" / "handbook-2026.yaml"
    block = yaml.safe_load(mapping.read_text(encoding="utf-8"))["entities"]["units"]
    assert block["entity"] == "subject" and block["key"] == ["code"]
    assert block["fields"]["code"]["column"] == "Unit code" and "template" not in block["fields"]["code"]
    # The units hang under their faculties, named as the schools are.
    text = mapping.read_text(encoding="utf-8")
    mapping.write_text(text.replace("      name: {column:", PARENT + "      name: {column:"), encoding="utf-8")
    code, out = _run(capsys, "validate", str(mapping))
    assert code == EXIT_OK and "control characters" not in out, out  # the title's own steps clean it

    twice = _units()
    twice[200][0] = twice[7][0]  # one code typed twice: sheet rows 9 and 202
    _book(folder / "typo.xlsx", twice)
    code, out = _run(capsys, "init", "typo.xlsx", "--out", "typo.yaml")
    assert code == EXIT_ERROR and "It validates" not in out
    assert "repeats 'BY1007' on rows 9 and 202" in out and "natural key" in out, out
    typo = yaml.safe_load((folder / "typo.yaml").read_text(encoding="utf-8"))["entities"]["units"]
    assert typo["key"] == ["code"] and "template" not in typo["fields"]["code"]

    code, out = _run(capsys, "plan", "handbook-2026.xlsx")
    assert code == EXIT_ERROR and "is a workbook" in out and "loader init handbook-2026.xlsx" in out, out
    assert "UTF-8" not in out
    return mapping


def _staff_edit(sandbox: Any, code: str, field: str, value: str) -> None:
    """Item 7: the platform edit made with the script docs/sandbox.md shows."""
    spec = importlib.util.spec_from_file_location("staff_edit", REPO / "examples" / "staff_edit.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main(sandbox.base_url, "subjects", code, field, value) == 0


def _next_year(folder: Path, mapping: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Item 6: two units renamed, one dropped, the staff's edit kept; the reports count what they list."""
    rows = _units()
    rows[1][1], rows[2][1] = "Unit 1: “Studies” renamed", "Unit 2: “Studies” renamed"
    dropped = rows.pop(5)[0]
    _book(folder / "handbook-2026.xlsx", rows)
    code, out = _run(capsys, "plan", str(mapping), "--report", "plan.md", "--html", "plan.html")
    assert code == EXIT_OK, out
    assert f"dropped {dropped}" in out and "1 platform edit kept" in out
    assert re.search(r"block +entity +create +update +unchanged +dropped +kept edits\n", out), out  # per block
    assert re.search(r"units +subject +0 +2 +297 +1 +1\n", out), out
    report = (folder / "plan.md").read_text(encoding="utf-8")
    assert "| units | subject | 0 | 2 | 297 | 1 | 1 |" in report  # ... dropped, kept edits
    assert "#### Updates: 3 records, 2 fields (1 with kept platform edits or conflicts only)" in report
    assert f"`{dropped}`" in report and STAFF_NAME in report
    assert "kept edits" in (folder / "plan.html").read_text(encoding="utf-8")
    code, out = _run(capsys, "apply", str(mapping), "--yes", "--by", "Test")
    assert code == EXIT_OK and "2 updated, 297 unchanged" in out, out


def _renamed(folder: Path, mapping: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The mapping file renamed for the next year, its block saying whose it was: nothing blocked."""
    renamed = mapping.with_name("handbook-2027.yaml")
    formerly = "    formerly: {file: mappings/handbook-2026.yaml, block: units}\n"
    text = mapping.read_text(encoding="utf-8")
    renamed.write_text(text.replace("    entity: subject", formerly + "    entity: subject"), encoding="utf-8")
    mapping.unlink()
    code, out = _run(capsys, "plan", str(renamed), "--out", "renamed.json")
    assert code == EXIT_OK, out
    plan = read_plan_json(folder / "renamed.json")
    assert not plan.has_changes and not plan.has_errors
    assert not any(r.blocked for r in plan.records()) and not any(b.blocked_rows for b in plan.blocks)


def _round_trip(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Item 5: pull → init → plan proposes nothing; the units' parents are schools."""
    code, out = _run(capsys, "pull", "school", "subject", "--out", "live.xlsx")
    assert code == EXIT_OK, out
    code, out = _run(capsys, "init", "live.xlsx", "--out", "live.yaml")
    assert code == EXIT_OK and "It validates." in out, out
    drafted = yaml.safe_load((folder / "live.yaml").read_text(encoding="utf-8"))["entities"]
    assert drafted["subject"]["fields"]["parent"] == {"column": "parent.id", "ref": "school", "by": "id"}
    code, out = _run(capsys, "plan", "live.yaml", "--format", "json")
    document = json.loads(out[out.index("{"):])
    totals = document["totals"]
    assert code == EXIT_OK and document["has_changes"] is False
    assert (totals["create"], totals["update"], totals["errors"], totals["unchanged"]) == (0, 0, 0, UNITS + 3)


def _windows_csv(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Item 3: a Windows-1252 CSV: detected, `encoding: cp1252` proposed, its curly quotes read right."""
    lines = ["Unit code,Unit title,Faculty"] + [f"DX{2000 + n},Unit {n}: “Studies” – in things,Faculty of Arts"
                                                for n in range(20)]
    (folder / "units-2027.csv").write_bytes("\r\n".join(lines).encode("cp1252"))
    code, out = _run(capsys, "init", "units-2027.csv", "--out", "csv.yaml")
    assert code == EXIT_OK and "read as cp1252" in out and "It validates." in out, out
    assert yaml.safe_load((folder / "csv.yaml").read_text(encoding="utf-8"))["encoding"] == "cp1252"
    code, out = _run(capsys, "plan", "csv.yaml", "--out", "csv.json")
    assert code == EXIT_OK, out
    names = {r.payload.get("name") for r in read_plan_json(folder / "csv.json").records()}
    assert "Unit 7: “Studies” – in things" in names


def test_a_handbook_through_a_year_of_loads_meets_none_of_the_first_contact_frictions(
    project: tuple[Path, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, sandbox = project
    mapping = _first_contact(folder, capsys)
    code, out = _run(capsys, "apply", str(mapping), "--yes", "--by", "Test")
    assert code == EXIT_OK and f"{UNITS} created" in out, out
    _staff_edit(sandbox, "AX1000", "name", STAFF_NAME)
    _next_year(folder, mapping, capsys)
    _renamed(folder, mapping, capsys)
    _round_trip(folder, capsys)
    _windows_csv(folder, capsys)
