"""The Python API (`loader.library`) over every kind of source a mapping names: a query (SQLite made
here, and a real PostgreSQL server), JSON, JSON Lines, XML and a paged URL feed, each planned,
applied and planned again to nothing; bad input said in the plan with the command line's message,
never raised raw; no records judged against the history as the command line judges them."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest
from helpers import postgres
from helpers.faulty import closed_port
from helpers.feeds import TOKEN, URL_MAPPING, serving

from loader import library
from loader.cli import main
from loader.errors import LoaderError
from loader.findings import Finding
from loader.plan.model import Action, Plan

XCRI = Path(__file__).parent / "source" / "readers" / "data" / "xcri-cap.xml"
MAPPING = """\
version: 1
sources:
  courses:
    {source}
entities:
  courses:
    entity: subject
    source: courses
    key: [code]
    fields: {fields}
"""
PLAIN = "{code: code, name: title}"
XCRI_SOURCE = """xml: xcri-cap.xml
    records: "//x:course"
    namespaces: {x: "http://xcri.org/profiles/1.2/catalog", dc: "http://purl.org/dc/elements/1.1/",
                 xsi: "http://www.w3.org/2001/XMLSchema-instance", cdp: "http://xcri.co.uk"}"""
XCRI_FIELDS = """{code: {column: "dc:identifier[@xsi:type='cdp:internalID']"}, name: {column: "dc:title"}}"""
COURSES = [{"code": "INFO101", "title": "Databases"}, {"code": "INFO202", "title": "Networks"}]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loader.yaml").write_text("{}\n", encoding="utf-8")  # a project of its own: the built-in sandbox
    return tmp_path


def _mapping(project: Path, source: str, fields: str = PLAIN) -> None:
    (project / "m.yaml").write_text(MAPPING.format(source=source, fields=fields), encoding="utf-8")


def _handbook(project: Path, year: int = 2027) -> None:
    with closing(sqlite3.connect(project / "handbook.db")) as db, db:
        db.execute("CREATE TABLE units (code TEXT, title TEXT, year INT, updated_at TEXT)")
        db.executemany("INSERT INTO units VALUES (?, ?, ?, '2027-01-01T09:00')",
                       [(c["code"], c["title"], year) for c in COURSES])


def _sqlite(project: Path) -> None:
    _handbook(project)
    _mapping(project, 'sql: "SELECT CODE, title FROM units WHERE year = :year"\n    url: sqlite:///handbook.db\n'
                      "    params: {year: 2027}")


def _json(project: Path) -> None:
    (project / "courses.json").write_text(json.dumps({"items": COURSES}), encoding="utf-8")
    _mapping(project, 'json: courses.json\n    records: "$.items[*]"')


def _json_lines(project: Path) -> None:
    (project / "courses.jsonl").write_text("".join(json.dumps(c) + "\n" for c in COURSES), encoding="utf-8")
    _mapping(project, "json: courses.jsonl")


def _xml(project: Path) -> None:
    (project / "xcri-cap.xml").write_bytes(XCRI.read_bytes())
    _mapping(project, XCRI_SOURCE, XCRI_FIELDS)


def _plans_applies_and_converges(keys: set[tuple[str, ...]]) -> Plan:
    """Plan, show (writing plan.json), apply plan.json checking its sources, plan again: nothing to do."""
    plan = library.plan(["m.yaml"])
    assert not plan.has_errors, library.show(plan)
    assert {r.key: r.action for r in plan.records()} == dict.fromkeys(keys, Action.CREATE)
    assert f"{len(keys)} to create" in library.show(plan, out="plan.json")
    results = library.apply("plan.json", check_sources=True)  # the source read again: unchanged
    assert results.ok and len(results.records) == len(keys)
    again = library.plan(["m.yaml"])
    assert not again.has_changes and not again.has_errors, library.show(again)
    return plan


@pytest.mark.parametrize(("kind", "write", "keys"), [
    ("sql", _sqlite, {("INFO101",), ("INFO202",)}), ("json", _json, {("INFO101",), ("INFO202",)}),
    ("json", _json_lines, {("INFO101",), ("INFO202",)}), ("xml", _xml, {("PG-DATA-01",), ("PG-HIST-02",)})],
    ids=["sqlite", "json", "json-lines", "xml"])
def test_each_kind_of_file_or_query_source_is_planned_applied_and_planned_again_to_nothing(
        project: Path, kind: str, write: Callable[[Path], None], keys: set[tuple[str, ...]]) -> None:
    write(project)
    plan = _plans_applies_and_converges(keys)
    assert f"{kind}:courses" in plan.fingerprints


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with postgres.required_cluster() as url:
        yield url


def test_a_postgresql_query_is_planned_applied_and_planned_again_to_nothing(
        project: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    postgres.run_sql(postgres_url, "DROP TABLE IF EXISTS courses",
                     "CREATE TABLE courses (code text, title text, credit numeric(5,2), starts timestamp)",
                     "INSERT INTO courses VALUES ('INFO101', 'Databases', 7.50, '2027-02-01 00:00'), "
                     "('INFO202', 'Networks', 5.00, '2027-03-01 00:00')")
    monkeypatch.setenv("CURRICULUM_DB_URL", postgres_url)
    _mapping(project, 'sql: "SELECT code, title, credit, starts FROM courses"\n    url: {env: CURRICULUM_DB_URL}',
             "{code: code, name: title, custom_attributes: {Credit: {column: credit, type: string}, "
             "Starts: {column: starts, type: date}}}")
    plan = _plans_applies_and_converges({("INFO101",), ("INFO202",)})
    assert {r.key: r.payload["custom_attributes"] for r in plan.records()} == {
        ("INFO101",): {"Credit": "7.5", "Starts": "2027-02-01"}, ("INFO202",): {"Credit": "5", "Starts": "2027-03-01"}}


def test_a_paged_url_feed_is_planned_applied_and_planned_again_to_nothing(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATALOGUE_TOKEN", TOKEN)
    with serving() as port:
        (project / "m.yaml").write_text(URL_MAPPING.format(port=port), encoding="utf-8")
        plan = library.plan(["m.yaml"])
        assert len(plan.records()) == 3 and not plan.has_errors
        assert library.apply(plan).ok
        assert not library.plan(["m.yaml"]).has_changes
    written = "".join(p.read_text("utf-8", errors="replace") for p in project.rglob("*") if p.is_file()
                      and p.suffix in (".json", ".yaml", ".log", ".md", ".txt", ".jsonl"))
    assert TOKEN.split()[1] not in written


def _errors(plan: Plan) -> list[Finding]:
    return [f for f in (*plan.findings, *(f for b in plan.blocks for f in b.findings)) if f.severity == "error"]


def _bad_json(project: Path, text: bytes) -> None:
    (project / "courses.json").write_bytes(text)
    _mapping(project, 'json: courses.json\n    records: "$.items[*]"')


def _bad_xml(project: Path, text: str) -> None:
    (project / "xcri-cap.xml").write_text(text, encoding="utf-8")
    _mapping(project, XCRI_SOURCE, XCRI_FIELDS)


BOMB = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
        "<catalog><course>&lol2;</course></catalog>")
EXTERNAL = '<!DOCTYPE catalog [<!ENTITY ext SYSTEM "file:///etc/passwd">]><catalog><course>&ext;</course></catalog>'
REFUSED = "the XML declares a document type (DTD) or entities, which the loader refuses"


def _query(project: Path, query: str) -> None:
    _handbook(project)
    _mapping(project, f'sql: "{query}"\n    url: sqlite:///handbook.db')


BAD_INPUT: dict[str, tuple[Callable[[Path], None], str]] = {
    "query-fails": (lambda p: _query(p, "SELECT nope FROM units"),
                    "courses (query): the query failed: no such column: nope"),
    "not-a-select": (lambda p: _query(p, "DELETE FROM units"),
                     "courses (query): the query is a DELETE statement, not a SELECT"),
    "unreachable-url": (lambda p: _mapping(p, f'json: http://127.0.0.1:{closed_port()}/courses\n    records: "$[*]"'),
                        "the connection was refused or the host is unknown"),
    "records-path-names-nothing": (lambda p: _bad_json(p, json.dumps({"itemz": COURSES}).encode()),
                                   "the records: path '$.items[*]' finds nothing: the document has no 'items'"),
    "invalid-xml": (lambda p: _bad_xml(p, "<catalog><course></catalog>"), "xcri-cap.xml: not well-formed XML: line 1"),
    "xml-bomb": (lambda p: _bad_xml(p, BOMB), REFUSED),
    "external-entity": (lambda p: _bad_xml(p, EXTERNAL), REFUSED),
    "not-utf-8": (lambda p: _bad_json(p, '{"items": [{"code": "Café"}]}'.encode("latin-1")),
                  "courses.json: not UTF-8 text: byte 0xE9 at line 1"),
    "wrong-columns": (lambda p: _mapping(p, "table: [{code: INFO101, name: Databases}]"), "'title'"),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_is_an_error_of_the_plan_with_the_command_lines_message_and_apply_refuses_it(
        project: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    write, expected = BAD_INPUT[case]
    write(project)
    assert main(["plan", "m.yaml"]) == 1
    said = "".join(capsys.readouterr())
    plan = library.plan(["m.yaml"])
    errors = _errors(plan)
    assert len(errors) == 1 and expected in errors[0].message, errors
    assert errors[0].message in said and "Traceback" not in said
    with pytest.raises(LoaderError, match="error"):
        library.apply(plan)


def test_a_table_given_with_the_wrong_columns_is_the_same_error_as_rows_in_the_mapping(project: Path) -> None:
    _mapping(project, "table: [{code: INFO101, title: Databases}]")
    written = _errors(library.plan(["m.yaml"], tables={"courses": [{"code": "INFO101", "name": "Databases"}]}))
    _mapping(project, "table: [{code: INFO101, name: Databases}]")
    assert [f.message for f in written] == [f.message for f in _errors(library.plan(["m.yaml"]))]
    assert "'title'" in written[0].message


def _warnings(plan: Plan) -> list[str]:
    return [f.message for b in plan.blocks for f in b.findings if f.severity == "warning"] + [
        f.message for f in plan.findings if f.severity == "warning"]


def test_a_query_reading_no_rows_warns_first_then_is_an_error_once_loaded_unless_allow_empty(project: Path) -> None:
    """A first load of 0 rows is said; once the block loaded records, `params` that read none
    must not look like a catalogue withdrawn; `allow_empty: true` plans them dropped."""
    _handbook(project)
    source = 'sql: "SELECT code, title FROM units WHERE year = :year"\n    url: sqlite:///handbook.db\n    params: '
    _mapping(project, source + "{year: 2026}")
    first = library.plan(["m.yaml"])
    assert not first.has_errors and not first.records()
    assert any("its source courses (query) read 0 records; check the query's params:" in w for w in _warnings(first))
    _mapping(project, source + "{year: 2027}")
    assert library.apply(library.plan(["m.yaml"])).ok
    _mapping(project, source + "{year: 2072}")
    emptied = _errors(library.plan(["m.yaml"]))
    assert [f.message for f in emptied] == [
        "block courses: its source courses (query) read 0 records, where the history records 2 this block loaded; "
        "check the query's params: or the records: path (if no records is right, set allow_empty: true on the source)"]
    _mapping(project, source + "{year: 2072}\n    allow_empty: true")
    allowed = library.plan(["m.yaml"])
    assert not allowed.has_errors
    assert sorted(d.key for d in allowed.blocks[0].dropped) == [("INFO101",), ("INFO202",)]


def test_a_records_path_to_an_empty_place_is_an_empty_source_where_one_naming_nothing_is_an_error(
        project: Path) -> None:
    _bad_json(project, b'{"items": []}')
    empty = library.plan(["m.yaml"])
    assert not empty.has_errors and any("read 0 records" in w for w in _warnings(empty))
    _bad_json(project, b'{"courses": []}')
    assert [f.message for f in _errors(library.plan(["m.yaml"]))] == [
        "courses.json: the records: path '$.items[*]' finds nothing: the document has no 'items' where the path "
        "looks for it (it holds courses) (point records: at where the records are; a list that is there but empty "
        "reads as 0 records)"]
    _bad_xml(project, '<catalog xmlns="http://xcri.org/profiles/1.2/catalog"/>')
    assert not library.plan(["m.yaml"]).has_errors
    _bad_xml(project, '<catalog xmlns="http://xcri.org/profiles/1.2/catalog"><provider><module/></provider></catalog>')
    assert [f.message for f in _errors(library.plan(["m.yaml"]))] == [
        "xcri-cap.xml: the records: path '//x:course' finds nothing: the document has no 'x:course' where the path "
        "looks for it (it holds x:catalog, x:provider, x:module) (point records: at where the records are; a list "
        "that is there but empty reads as 0 records)"]


def test_applying_a_plan_whose_written_record_changed_in_its_source_is_refused_when_checking_sources(
        project: Path) -> None:
    _json(project)
    library.show(library.plan(["m.yaml"]), out="plan.json")
    (project / "courses.json").write_text(json.dumps({"items": [COURSES[0], {**COURSES[1], "title": "Nets"}]}),
                                          encoding="utf-8")
    with pytest.raises(LoaderError, match=r"the sources changed since the plan was made: 1 record"):
        library.apply("plan.json", check_sources=True)
    assert {r.action for r in library.plan(["m.yaml"]).records()} == {Action.CREATE}  # nothing was written
