"""The `sql:`, `json:` and `xml:` kinds through the command line against the sandbox: a mapping's
`sources:` planned, applied and planned again to nothing; a query's fingerprint of the values
read; bad input said once, naming the source, with no traceback."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from helpers import postgres
from helpers.feeds import TOKEN, URL_MAPPING, serving

from loader.cli import main
from loader.plan.incremental.reading import read_off_loop
from loader.plan.model import Action
from loader.plan.plan_file import read_plan_json
from loader.profile import load_profile
from loader.source.readers import KINDS, named_kinds
from loader.source.sources import load_mappings, readable_in_child

XCRI_XML = Path(__file__).with_name("readers") / "data" / "xcri-cap.xml"

SQL_MAPPING = """\
version: 1
sources:
  handbook:
    sql: "{query}"
    url: sqlite:///handbook.db
    params: {{year: 2027}}
entities:
  units:
    entity: subject
    source: handbook
    key: [code]
    fields:
      code: UNIT_CODE
      name: title
      custom_attributes:
        Credit Points: {{column: credit_points, type: string}}
"""
SELECT = "SELECT unit_code, title, credit_points, updated_at FROM units WHERE year = :year"

JSON_MAPPING = """\
version: 1
sources:
  catalogue:
    json: exports/courses.json
    records: "{records}"
entities:
  subjects:
    entity: subject
    source: catalogue
    key: [code]
    fields:
      code: primaryCode.code
      name: name[0].value
      custom_attributes:
        Study Load: {column: studyLoad.value, type: string}
"""

XML_MAPPING = """\
version: 1
sources:
  feed:
    xml: xcri-cap.xml
    records: "//x:course"
    namespaces: {x: "http://xcri.org/profiles/1.2/catalog", dc: "http://purl.org/dc/elements/1.1/",
                 xsi: "http://www.w3.org/2001/XMLSchema-instance", cdp: "http://xcri.co.uk"}
entities:
  courses:
    entity: subject
    source: feed
    key: [code]
    fields:
      code: {column: "dc:identifier[@xsi:type='cdp:internalID']"}
      name: {column: "dc:title"}
      custom_attributes:
        Provider: {column: "../dc:title"}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _handbook(path: Path, rows: list[tuple[str, str, int, str]]) -> None:
    path.unlink(missing_ok=True)
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE units (unit_code TEXT, title TEXT, credit_points NUMERIC, year INT, updated_at TEXT)")
        db.executemany("INSERT INTO units VALUES (?, ?, ?, 2027, ?)", rows)


UNITS = [("MATH1001", "Calculus", 6, "2027-01-01T09:00"), ("PHYS1001", "Mechanics", 12, "2027-01-01T09:00")]


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> dict[tuple[str, ...], Action]:
    assert main(["plan", "m.yaml", "--out", "plan.json", *args]) == 0, capsys.readouterr()
    return {record.key: record.action for record in read_plan_json(Path("plan.json")).records()}


def _converges(capsys: pytest.CaptureFixture[str]) -> None:
    """Apply the plan written, then plan again: nothing left to do."""
    assert main(["apply", "--plan", "plan.json", "--yes"]) == 0, capsys.readouterr()
    capsys.readouterr()
    assert main(["plan", "m.yaml", "--detailed-exitcode"]) == 0, capsys.readouterr()


def test_a_sqlite_query_source_is_planned_applied_and_planned_again_to_nothing(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _handbook(project / "handbook.db", UNITS)
    (project / "m.yaml").write_text(SQL_MAPPING.format(query=SELECT), encoding="utf-8")
    assert _plan(capsys) == {("MATH1001",): Action.CREATE, ("PHYS1001",): Action.CREATE}
    plan = read_plan_json(project / "plan.json")
    created = {r.key: r for r in plan.records()}
    assert created[("PHYS1001",)].payload["name"] == "Mechanics"
    assert created[("PHYS1001",)].payload["custom_attributes"] == {"Credit Points": "12"}
    assert plan.blocks[0].source_file == "handbook (query)"
    assert "sql:handbook" in plan.fingerprints
    _converges(capsys)


def test_a_postgresql_query_source_is_planned_applied_and_planned_again_to_nothing(
        project: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    postgres.run_sql(postgres_url, "DROP TABLE IF EXISTS units",
                     "CREATE TABLE units (unit_code text, title text, credit_points numeric(6,2), year int, "
                     "updated_at timestamp)",
                     "INSERT INTO units VALUES ('MATH1001', 'Calculus', 6.00, 2027, '2027-01-01 09:00'), "
                     "('PHYS1001', 'Mechanics', 12.50, 2027, '2027-01-01 09:00'), ('OLD1', 'Old', 1, 2020, NULL)")
    monkeypatch.setenv("CURRICULUM_DB_URL", postgres_url)
    (project / "m.yaml").write_text(SQL_MAPPING.format(query=SELECT).replace(
        "url: sqlite:///handbook.db", "url: {env: CURRICULUM_DB_URL}"), encoding="utf-8")
    assert _plan(capsys) == {("MATH1001",): Action.CREATE, ("PHYS1001",): Action.CREATE}
    payloads = {r.key: r.payload for r in read_plan_json(project / "plan.json").records()}
    assert payloads[("PHYS1001",)]["custom_attributes"] == {"Credit Points": "12.5"}
    assert payloads[("MATH1001",)]["custom_attributes"] == {"Credit Points": "6"}
    _converges(capsys)


def test_a_json_lines_file_source_is_planned_applied_and_planned_again_to_nothing(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "exports").mkdir()
    lines = [{"primaryCode": {"code": code}, "name": [{"value": title}], "studyLoad": {"value": 5}}
             for code, title in (("INFO101", "Databases"), ("INFO202", "Networks"))]
    (project / "exports" / "courses.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines),
                                                        encoding="utf-8")
    (project / "m.yaml").write_text(JSON_MAPPING.replace("courses.json", "courses.jsonl").replace(
        '    records: "{records}"\n', ""), encoding="utf-8")
    assert _plan(capsys) == {("INFO101",): Action.CREATE, ("INFO202",): Action.CREATE}
    assert str(read_plan_json(project / "plan.json").blocks[0].records[0].source).startswith(
        "exports/courses.jsonl › INFO101")
    _converges(capsys)


def test_a_query_changed_only_in_an_unmapped_column_or_row_order_keeps_its_fingerprint(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "m.yaml").write_text(SQL_MAPPING.format(query=SELECT), encoding="utf-8")

    def fingerprint(rows: list[tuple[str, str, int, str]]) -> str:
        _handbook(project / "handbook.db", rows)
        _plan(capsys)
        return str(read_plan_json(project / "plan.json").fingerprints["sql:handbook"])

    first = fingerprint(UNITS)
    assert fingerprint(UNITS[::-1]) == first
    assert fingerprint([(code, title, points, "2027-06-30T17:45") for code, title, points, _ in UNITS]) == first
    assert fingerprint([UNITS[0], ("PHYS1001", "Mechanics", 24, "2027-01-01T09:00")]) != first


def test_a_json_file_source_is_planned_applied_and_planned_again_to_nothing(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "exports").mkdir()
    items = [{"courseId": str(n), "primaryCode": {"codeType": "courseCode", "code": code},
              "name": [{"language": "en-GB", "value": title}], "studyLoad": {"value": load}}
             for n, (code, title, load) in enumerate([("INFO101", "Databases", 5), ("INFO202", "Networks", 7.5)])]
    (project / "exports" / "courses.json").write_text(json.dumps({"pageNumber": 1, "items": items}),
                                                       encoding="utf-8")
    (project / "m.yaml").write_text(JSON_MAPPING.replace("{records}", "$.items[*]"), encoding="utf-8")
    assert _plan(capsys) == {("INFO101",): Action.CREATE, ("INFO202",): Action.CREATE}
    plan = read_plan_json(project / "plan.json")
    payloads = {r.key: r.payload for r in plan.records()}
    assert payloads[("INFO202",)] == {"code": "INFO202", "name": "Networks",
                                       "custom_attributes": {"Study Load": "7.5"}}
    assert plan.blocks[0].source_file == "exports/courses.json"
    _converges(capsys)


def test_an_xml_file_source_is_planned_applied_and_planned_again_to_nothing(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "xcri-cap.xml").write_bytes(XCRI_XML.read_bytes())
    (project / "m.yaml").write_text(XML_MAPPING, encoding="utf-8")
    assert _plan(capsys) == {("PG-DATA-01",): Action.CREATE, ("PG-HIST-02",): Action.CREATE}
    payloads = {r.key: r.payload for r in read_plan_json(project / "plan.json").records()}
    assert payloads[("PG-HIST-02",)] == {"code": "PG-HIST-02", "name": "MA History",
                                          "custom_attributes": {"Provider": "University of Example"}}
    _converges(capsys)


def _refused(capsys: pytest.CaptureFixture[str]) -> str:
    """What `loader plan` says of a source it cannot read: exit 1, one error, no traceback."""
    assert main(["plan", "m.yaml"]) == 1
    captured = capsys.readouterr()
    said = captured.out + captured.err
    assert "Traceback" not in said and said.count("✗") == 1
    return said


def test_a_query_that_is_not_a_select_is_refused_naming_the_source(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _handbook(project / "handbook.db", UNITS)
    (project / "m.yaml").write_text(SQL_MAPPING.format(query="DELETE FROM units WHERE year = :year"),
                                    encoding="utf-8")
    said = _refused(capsys)
    assert "handbook (query): the query is a DELETE statement, not a SELECT" in said
    with closing(sqlite3.connect(project / "handbook.db")) as db:
        assert db.execute("SELECT count(*) FROM units").fetchone() == (2,)


def _courses(project: Path, items: str) -> None:
    (project / "exports").mkdir(exist_ok=True)
    (project / "exports" / "courses.json").write_text(f'{{"pageNumber": 1, "items": {items}}}', encoding="utf-8")


def test_a_records_path_naming_what_the_document_lacks_is_an_error_at_the_source_not_an_empty_plan(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _courses(project, '[{"primaryCode": {"code": "A"}, "name": [{"value": "Art"}]}]')
    (project / "m.yaml").write_text(JSON_MAPPING.replace("{records}", "$.itemz[*]"), encoding="utf-8")
    said = _refused(capsys)
    assert "m.yaml:9:13: exports/courses.json: the records: path '$.itemz[*]' finds nothing: the document has " \
           "no 'itemz' where the path looks for it (it holds pageNumber, items) (did you mean 'items'?)" in said


def test_a_records_path_to_an_empty_list_warns_on_a_first_load_and_is_an_error_once_the_block_loaded_records(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _courses(project, "[]")
    (project / "m.yaml").write_text(JSON_MAPPING.replace("{records}", "$.items[*]"), encoding="utf-8")
    assert _plan(capsys) == {}
    said = capsys.readouterr()
    assert "its source exports/courses.json read 0 records; check the query's params: or the records: path" \
        in said.out + said.err
    _courses(project, '[{"primaryCode": {"code": "A"}, "name": [{"value": "Art"}]}]')
    assert _plan(capsys) == {("A",): Action.CREATE}
    _converges(capsys)
    _courses(project, "[]")
    said_now = _refused(capsys)
    assert "subjects: its source exports/courses.json read 0 records, where the history records 1 this block " \
           "loaded" in said_now and "set allow_empty: true" in said_now
    (project / "m.yaml").write_text(JSON_MAPPING.replace("{records}", "$.items[*]").replace(
        "    records:", "    allow_empty: true\n    records:"), encoding="utf-8")
    assert _plan(capsys) == {}
    assert [d.key for d in read_plan_json(project / "plan.json").blocks[0].dropped] == [("A",)]


def test_an_xml_records_path_naming_no_element_is_an_error_and_an_empty_provider_reads_no_records(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "xcri-cap.xml").write_bytes(XCRI_XML.read_bytes())
    (project / "m.yaml").write_text(XML_MAPPING.replace("//x:course", "//x:courses"), encoding="utf-8")
    said = _refused(capsys)
    assert "xcri-cap.xml: the records: path '//x:courses' finds nothing: the document has no 'x:courses' where the " \
           "path looks for it (it holds x:catalog, x:provider, dc:identifier, dc:title, x:course," in said
    assert "(did you mean 'x:course'?)" in said
    (project / "xcri-cap.xml").write_text('<catalog xmlns="http://xcri.org/profiles/1.2/catalog"><provider/></catalog>',
                                          encoding="utf-8")
    (project / "m.yaml").write_text(XML_MAPPING.replace("//x:course", "/x:catalog/x:provider/x:course"),
                                    encoding="utf-8")
    assert _plan(capsys) == {}
    assert "its source xcri-cap.xml read 0 records" in "".join(capsys.readouterr())


def test_params_that_read_no_rows_are_an_error_once_the_block_loaded_records_unless_allow_empty(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _handbook(project / "handbook.db", UNITS)
    typo = SQL_MAPPING.format(query=SELECT).replace("year: 2027", "year: 2072")
    (project / "m.yaml").write_text(typo, encoding="utf-8")
    assert _plan(capsys) == {}  # a first load of nothing: said, no error
    first = "".join(capsys.readouterr())
    assert "its source handbook (query) read 0 records; check the query's params: or the records: path (if " \
           "no records is right, set allow_empty: true on the source)" in first
    (project / "m.yaml").write_text(SQL_MAPPING.format(query=SELECT), encoding="utf-8")
    _plan(capsys)
    _converges(capsys)
    (project / "m.yaml").write_text(typo, encoding="utf-8")
    said = _refused(capsys)
    assert "units: its source handbook (query) read 0 records, where the history records 2 this block loaded" in said
    assert "set allow_empty: true" in said
    (project / "m.yaml").write_text(typo.replace("    params:", "    allow_empty: true\n    params:"), encoding="utf-8")
    assert _plan(capsys) == {}
    dropped = read_plan_json(project / "plan.json").blocks[0].dropped
    assert sorted(d.key for d in dropped) == [("MATH1001",), ("PHYS1001",)]
    assert "read 0 records" not in "".join(capsys.readouterr())


def test_invalid_xml_is_an_error_naming_the_file_and_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "xcri-cap.xml").write_text("<catalog><course></catalog>", encoding="utf-8")
    (project / "m.yaml").write_text(XML_MAPPING, encoding="utf-8")
    said = _refused(capsys)
    assert "xcri-cap.xml: not well-formed XML: line 1" in said


@pytest.fixture
def ooapi() -> Iterator[int]:
    with serving() as port:
        yield port


def test_a_paged_json_url_is_read_by_plan_with_its_token_and_left_unread_by_validate(
        project: Path, ooapi: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CATALOGUE_TOKEN", TOKEN)
    (project / "m.yaml").write_text(URL_MAPPING.format(port=ooapi), encoding="utf-8")
    assert main(["validate", "m.yaml"]) == 0
    said = capsys.readouterr().out
    assert "1 block reads a source that needs a network or credentials (catalogue (json, http://127.0.0.1:" in said
    planned = _plan(capsys)
    assert len(planned) == 3 and set(planned.values()) == {Action.CREATE}
    assert ("INFOMQNM",) in planned
    assert main(["validate", "m.yaml", "--read-sources"]) == 0
    said += capsys.readouterr().out
    _converges(capsys)
    written = "".join(p.read_text("utf-8", errors="replace") for p in project.rglob("*") if p.is_file()
                      and p.suffix in (".json", ".yaml", ".log", ".md", ".txt", ".jsonl"))
    assert "tok-7Hq2xZ9pLw" not in said + written


def test_a_url_source_without_its_token_is_an_error_naming_the_variable(
        project: Path, ooapi: int, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "m.yaml").write_text(URL_MAPPING.format(port=ooapi), encoding="utf-8")
    assert main(["plan", "m.yaml"]) == 1
    said = "".join(capsys.readouterr())
    assert "CATALOGUE_TOKEN" in said and "Traceback" not in said


def test_the_mapping_schema_describes_every_kind_and_its_options() -> None:
    schema = json.loads((Path(__file__).parents[2] / "schemas" / "mapping.schema.json").read_text("utf-8"))
    described = schema["properties"]["sources"]["additionalProperties"]["properties"]
    for name in named_kinds():
        assert name in described and described[name]["description"]
        assert KINDS[name].options <= set(described), name


def test_a_sql_source_without_its_url_is_refused_at_its_place(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "m.yaml").write_text(SQL_MAPPING.format(query=SELECT).replace("    url: sqlite:///handbook.db\n", ""),
                                    encoding="utf-8")
    assert main(["validate", "m.yaml"]) == 1
    assert "m.yaml:3:3: source 'handbook' needs url: (add url: to the source's entry)" in capsys.readouterr().out


DOCS = Path(__file__).parents[2] / "docs" / "mappings.md"
DATA_FILES = {"json": "courses.json", "xml": "catalogue.xml"}


def _examples() -> list[tuple[str, dict[str, str]]]:
    """Each example of the docs' "Sources" section: its title and its code blocks by language."""
    text = DOCS.read_text("utf-8")
    section = text[text.index("\n## Sources\n"):]
    section = section[:section.index("\n## ", 1)]
    examples = []
    for part in section.split("\n### ")[1:]:
        blocks = re.findall(r"```(\w+)\n(.*?)```", part, re.S)
        examples.append((part.splitlines()[0], dict(blocks)))
    return examples


@pytest.mark.parametrize(("title", "blocks"), _examples(), ids=[title for title, _ in _examples()])
def test_each_example_of_the_docs_sources_section_plans_applies_and_converges(
        project: Path, capsys: pytest.CaptureFixture[str], title: str, blocks: dict[str, str]) -> None:
    if "sql" in blocks:
        with closing(sqlite3.connect(project / "handbook.db")) as db:
            db.executescript(blocks["sql"])
    for language, name in DATA_FILES.items():
        if language in blocks:
            (project / name).write_text(blocks[language], encoding="utf-8")
    (project / "m.yaml").write_text(blocks["yaml"], encoding="utf-8")
    planned = _plan(capsys)
    assert len(planned) == 2 and set(planned.values()) == {Action.CREATE}
    _converges(capsys)


def test_json_and_xml_files_read_in_a_reading_child_give_what_the_planning_process_reads(project: Path) -> None:
    (project / "xcri-cap.xml").write_bytes(XCRI_XML.read_bytes())
    (project / "x.yaml").write_text(XML_MAPPING, encoding="utf-8")
    (project / "exports").mkdir()
    (project / "exports" / "courses.json").write_text('[{"primaryCode": {"code": "A1"}, "name": [{"value": "A"}]}]',
                                                       encoding="utf-8")
    (project / "j.yaml").write_text(JSON_MAPPING.replace('    records: "{records}"\n', ""), encoding="utf-8")
    profile = load_profile()
    mappings = load_mappings([project / "x.yaml", project / "j.yaml"], profile)
    assert readable_in_child(mappings)
    there = asyncio.run(read_off_loop(mappings, profile, in_child=True))
    here = asyncio.run(read_off_loop(mappings, profile, in_child=False))
    assert [[r.key for r in b.records] for b in there.blocks] == [[("PG-DATA-01",), ("PG-HIST-02",)], [("A1",)]]
    assert [b.records for b in there.blocks] == [b.records for b in here.blocks]
    assert there.fingerprints == here.fingerprints


def test_a_database_password_from_the_environment_is_never_shown(
        project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CURRICULUM_DB_URL", "postgresql://reader:Pw-9vQ3mZt7K@127.0.0.1:1/curriculum")
    (project / "m.yaml").write_text(SQL_MAPPING.format(query=SELECT).replace(
        "url: sqlite:///handbook.db", "url: {env: CURRICULUM_DB_URL}"), encoding="utf-8")
    assert main(["validate", "m.yaml"]) == 0  # no query run, no variable read
    said = _refused(capsys)  # nothing listens on port 1
    assert "handbook (query): the query failed" in said
    written = "".join(p.read_text("utf-8", errors="replace") for p in project.rglob("*") if p.is_file()
                      and p.suffix in (".json", ".yaml", ".log", ".md", ".txt", ".jsonl"))
    assert "Pw-9vQ3mZt7K" not in said + written


def test_a_query_without_sqlalchemy_installed_says_which_extra_to_install(
        project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _handbook(project / "handbook.db", UNITS)
    (project / "m.yaml").write_text(SQL_MAPPING.format(query=SELECT), encoding="utf-8")
    monkeypatch.setitem(sys.modules, "sqlalchemy", None)  # as if the `sql` extra were not installed
    said = _refused(capsys)
    assert "handbook (query): reading a query needs SQLAlchemy, which is not installed" in said
    assert "pip install 'loader[sql]'" in said


def test_a_field_may_list_paths_and_the_first_that_finds_a_value_gives_it(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "xcri-cap.xml").write_text(
        '<catalog xmlns="http://xcri.org/profiles/1.2/catalog" xmlns:dc="http://purl.org/dc/elements/1.1/"><provider>'
        '<course><dc:identifier>C1</dc:identifier><dc:title xml:lang="de">Geschichte</dc:title>'
        '<dc:title xml:lang="en">History</dc:title></course>'
        '<course><dc:identifier>C2</dc:identifier><dc:title xml:lang="de">Physik</dc:title></course>'
        '</provider></catalog>', encoding="utf-8")
    (project / "m.yaml").write_text(XML_MAPPING.replace(
        """      code: {column: "dc:identifier[@xsi:type='cdp:internalID']"}
      name: {column: "dc:title"}""",
        """      code: {column: "dc:identifier"}
      name: {column: ["dc:title[@xml:lang='en']", "dc:title[1]"]}"""), encoding="utf-8")
    _plan(capsys)
    names = {r.key: r.payload["name"] for r in read_plan_json(project / "plan.json").records()}
    assert names == {("C1",): "History", ("C2",): "Physik"}
