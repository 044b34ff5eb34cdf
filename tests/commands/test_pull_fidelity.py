"""Every string the service can hold survives `loader pull`, the results workbook's cells and a
re-read, byte for byte; and a pulled workbook, drafted with `loader init`, plans nothing."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loader.cli import main
from loader.errors import EXIT_OK
from loader.safe_cells import set_safe_cell
from loader.source.readers import xlsx
from loader.source.readers.rows import WHITESPACE

# The service's alphabet: any character but NUL and lone surrogates (JSON over UTF-8), and not the
# two non-characters U+FFFE/U+FFFF (XML cannot hold them and calamine does not decode their escape).
_CHARACTERS = st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00\ufffe\uffff")
_TRICKY = st.sampled_from(["\r", "\n\r", "\t", "_x000D_", "_x005F_", "=", "'=", "+", "-", "@", "\x01", "😀", " "])
# A cell of only whitespace reads as empty (the reader's documented rule), so values hold more.
SERVICE_TEXT = st.lists(_TRICKY | st.text(_CHARACTERS, min_size=1, max_size=4), min_size=1, max_size=6).map(
    "".join).filter(lambda t: bool(t.strip(WHITESPACE)))


def _read(path: Path, sheet: str, engine: str) -> list[tuple[object, ...]]:
    return [row.values for row in xlsx.read(path, path.name, sheet, engine=engine).rows]


def test_a_value_ending_in_a_carriage_return_and_a_literal_escape_survive_pull(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    names = ["Ms Bourne\n\r", "_x000D_", "=1+1", "'=1+1", "a\x01b"]
    _seed(tmp_path, names)
    assert main(["pull", "school", "--out", "live.xlsx"]) == EXIT_OK
    for engine in ("calamine", "openpyxl"):
        rows = _read(tmp_path / "live.xlsx", "school", engine)
        at = rows[0].index("name")
        assert [r[at] for r in rows[1:]] == names


def _seed(root: Path, names: list[str]) -> None:
    (root / "samples").mkdir(exist_ok=True)
    schools = [{"id": f"s-{n}", "code": f"S{n}", "name": name, "custom_attributes": {"Note": name}}
               for n, name in enumerate(names)]
    (root / "samples" / "sandbox-seed.json").write_text(json.dumps({"institution-a": {"schools": schools}}),
                                                         encoding="utf-8")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(SERVICE_TEXT, min_size=1, max_size=8))
def test_any_service_string_survives_pull_and_a_pulled_workbook_plans_nothing(
    names: list[str], tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = tmp_path_factory.mktemp("pull")
    monkeypatch.chdir(root)
    _seed(root, names)
    assert main(["pull", "school", "--out", "live.xlsx"]) == EXIT_OK
    for engine in ("calamine", "openpyxl"):
        rows = _read(root / "live.xlsx", "school", engine)
        name, note = rows[0].index("name"), rows[0].index("custom_attributes.Note")
        assert [(r[name], r[note]) for r in rows[1:]] == [(n, n) for n in names]
    assert main(["init", "live.xlsx", "--out", "m.yaml"]) == EXIT_OK
    capsys.readouterr()
    assert main(["plan", "m.yaml", "--format", "json"]) == EXIT_OK
    plan = json.loads(capsys.readouterr().out)
    assert plan["has_changes"] is False and plan["totals"]["unchanged"] == len(names), plan["totals"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(SERVICE_TEXT, min_size=1, max_size=10))
def test_any_service_string_survives_the_results_workbooks_cells(values: list[str],
                                                                 tmp_path_factory: pytest.TempPathFactory) -> None:
    path = tmp_path_factory.mktemp("results") / "results.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "S"
    set_safe_cell(sheet, 1, 1, "value")
    for row, value in enumerate(values, start=2):
        set_safe_cell(sheet, row, 1, value)
    book.save(path)
    for engine in ("calamine", "openpyxl"):
        assert [r[0] for r in _read(path, "S", engine)[1:]] == values


def test_the_results_workbook_copies_source_rows_holding_carriage_returns_and_escapes_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    titles = ["Ms Bourne\n\r", "_x000D_ literal", "'=1+1", "tab\tinside\x01"]
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Units"
    set_safe_cell(sheet, 1, 1, "Unit Code")
    set_safe_cell(sheet, 1, 2, "Unit Title")
    for row, title in enumerate(titles, start=2):
        set_safe_cell(sheet, row, 1, f"U{row}")
        set_safe_cell(sheet, row, 2, title)
    book.save(tmp_path / "units.xlsx")
    Path("m.yaml").write_text(
        "version: 1\nsource: units.xlsx\nentities:\n  units:\n    entity: subject\n    sheet: Units\n"
        "    key: [code]\n    fields:\n      code: {column: Unit Code}\n      name: {column: Unit Title}\n",
        encoding="utf-8")
    assert main(["apply", "m.yaml", "--results", "results.xlsx", "--yes"]) == EXIT_OK
    for engine in ("calamine", "openpyxl"):
        assert [r[1] for r in _read(tmp_path / "results.xlsx", "Units", engine)[1:]] == titles
