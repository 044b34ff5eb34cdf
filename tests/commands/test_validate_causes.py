"""`loader validate` on a large sheet with one mistake in a mapping: one finding per cause, in the
text, `--format json` and `--format github` alike (contract section 7)."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest

from loader.cli import main
from loader.errors import EXIT_ERROR

ROWS = 16_000
TEXT_ROWS = 1_473  # rows whose Credits cell holds text


@pytest.fixture(scope="module")
def sheet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """16,000 subjects; 100 program codes (a key that is not unique); Credits text on 1,473 rows."""
    folder = tmp_path_factory.mktemp("causes")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Subjects"
    sheet.append(["Subject Code", "Subject Name", "Program Code", "Credits"])
    for n in range(ROWS):
        sheet.append([f"S{n:05d}", f"Subject {n}", f"P{n % 100:03d}", "ten" if n < TEXT_ROWS else None])
    book.save(folder / "subjects.xlsx")
    return folder


MAPPING = """\
version: 1
source: subjects.xlsx
entities:
  subjects:
    entity: subject
    sheet: Subjects
    key: [code]
    fields:
      code: {{column: {code}}}
      name: {{column: Subject Name}}
      custom_attributes:
        Credits: {{column: Credits, type: integer, empty: skip}}
"""


@pytest.fixture
def workdir(sheet_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(sheet_dir)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    (sheet_dir / "key.yaml").write_text(MAPPING.format(code="Program Code").replace(
        "Credits: {column: Credits, type: integer, empty: skip}", "Credits: {column: Subject Name}"), encoding="utf-8")
    (sheet_dir / "type.yaml").write_text(MAPPING.format(code="Subject Code"), encoding="utf-8")
    return sheet_dir


def test_validate_on_16000_rows_with_a_non_unique_key_prints_under_60_lines_and_names_the_count(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "key.yaml"]) == EXIT_ERROR
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) < 60
    duplicates = [line for line in lines if "is not unique" in line]
    assert len(duplicates) == 1  # one cause, never the same pair from both ends
    assert duplicates[0].startswith("error: key.yaml:9:7: key code is not unique")
    assert "100 keys on 16,000 rows of subjects.xlsx › Subjects, first: B102 (P000); B103 (P001); B104 (P002)" \
        in duplicates[0]
    assert lines[-1] == "invalid: 15,900 errors (1 message), 0 warnings"


def test_a_type_that_does_not_fit_1473_rows_is_one_finding_with_its_count_and_three_cells(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "type.yaml"]) == EXIT_ERROR
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "error: type.yaml:12:9: custom_attributes.Credits: expected a whole number — 1,473 rows of "
        "subjects.xlsx › Subjects, first: D2 (S00000): 'ten'; D3 (S00001): 'ten'; D4 (S00002): 'ten'")
    assert lines[1:3] == [" 12 |         Credits: {column: Credits, type: integer, empty: skip}",
                          "    |         ^"]  # the mapping line, quoted with a caret under the column
    assert lines[3:] == ["", "type.yaml subjects (subject) from subjects.xlsx › Subjects: 16,000 rows read, "
                         "14,527 records built, 1,473 errors, 0 warnings",
                         "invalid: 1,473 errors (1 message), 0 warnings"]


def test_json_gives_one_finding_per_cause_with_its_count_and_cells(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "type.yaml", "--format", "json"]) == EXIT_ERROR
    document = json.loads(capsys.readouterr().out)
    assert document["counts"] == {"errors": TEXT_ROWS, "warnings": 0}
    [finding] = document["findings"]
    assert finding["count"] == TEXT_ROWS and finding["code"] == "bad-value"
    assert finding["cells"] == ["D2 (S00000): 'ten'", "D3 (S00001): 'ten'", "D4 (S00002): 'ten'"]
    assert finding["place"] == {"kind": "mapping", "file": "type.yaml", "line": 12, "col": 9}
    assert main(["validate", "key.yaml", "--format", "json"]) == EXIT_ERROR
    [finding] = json.loads(capsys.readouterr().out)["findings"]
    assert finding["count"] == ROWS - 100 and len(finding["cells"]) == 3


def test_github_annotates_each_cause_once_at_its_mapping_line(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "type.yaml", "--format", "github"]) == EXIT_ERROR
    annotations = [line for line in capsys.readouterr().out.splitlines() if line.startswith("::")]
    assert len(annotations) == 1
    assert annotations[0].startswith("::error file=type.yaml,line=12,col=9,title=subjects%3A bad-value::")
    assert "1,473 rows" in annotations[0] and "D4 (S00002): 'ten'" in annotations[0]
