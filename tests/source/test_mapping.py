"""Mapping files: the schema, every mistake reported with file:line:col, safe YAML, templates."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loader.profile import load_profile
from loader.source.mapping import Mapping
from loader.source.mapping_file import load_mapping, mapping_schema
from loader.source.templates import parse_template


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _load(workdir: Path, text: str) -> tuple[Mapping | None, list[str]]:
    path = workdir / "m.yaml"
    path.write_text(text, encoding="utf-8")
    mapping, findings = load_mapping(path, load_profile())
    return mapping, [f"{f.where}: {f.message}" for f in findings]


SEVERAL_MISTAKES = """\
version: 1
source: curriculum.xlsx
entities:
  courses:
    entity: course
    sheet: Courses
    header_row: 0
    key: [code]
    fields:
      code: {column: Course Code, transform: [strip, shout]}
      name: {colum: Title}
      parent: {ref: school, column: School, value: SCI}
  subjects:
    entity: subjekt
    key: [code]
    fields:
      code: Code
  arrangements:
    entity: arrangement
    key: [code, name]
    fields:
      code: Code
      exemption: Exemption
      id: Id
      colour: Colour
      subjects_awarded: {ref: course, column: Subjects}
      status: {column: Status, pattern: "([A-Z"}
"""


def test_a_mapping_with_several_mistakes_reports_all_of_them_with_file_line_col(workdir: Path) -> None:
    mapping, problems = _load(workdir, SEVERAL_MISTAKES)
    assert mapping is not None and mapping.blocks == ()
    assert problems == [
        "m.yaml:7:17: expected a row number such as 3, or auto, got a number (0)",
        "m.yaml:10:54: expected one of: strip, upper, lower, title, collapse_spaces; got text ('shout')",
        "m.yaml:11:13: expected exactly one of `column`, `value` or `template` (a `ref` needs `column` or `template`)",
        "m.yaml:11:14: unknown key 'colum'; expected one of: column, value, template, ref, by, transform, type, "
        "split, map, default, pattern, replace, pad, format, when, collect, separator, lookup, "
        "max_length, empty, pii, on_platform_edit, "
        "description (did you mean 'column'?)",
        "m.yaml:12:15: expected exactly one of `column`, `value` or `template` (a `ref` needs `column` or `template`)",
        "m.yaml:14:13: unknown entity 'subjekt'; expected one of: applicant, arrangement, course, credential, "
        "program, school, subject (did you mean 'subject'?)",
        "m.yaml:20:17: key field 'name' is not in `fields`; every key field must be mapped",
        "m.yaml:23:7: arrangement field 'exemption' cannot be sent: the service refuses it",
        "m.yaml:24:7: arrangement field 'id' is read-only (set by the service)",
        "m.yaml:25:7: unknown field 'colour' for arrangement; expected one of: code, name, status, "
        "subjects_awarded, mapping",
        "m.yaml:26:31: arrangement field 'subjects_awarded' refers to subject, not 'course'",
        "m.yaml:27:41: bad regular expression: unterminated character set at position 1",
    ]


def test_yaml_syntax_errors_name_their_place(workdir: Path) -> None:
    mapping, problems = _load(workdir, "version: 1\nentities:\n  a: [b\n")
    assert mapping is None
    assert len(problems) == 1 and problems[0].startswith("m.yaml:4:1: invalid YAML")


def test_python_tags_are_refused_not_executed(workdir: Path) -> None:
    mapping, problems = _load(workdir, "version: 1\nentities: !!python/object/apply:os.system ['true']\n")
    assert mapping is None
    assert problems[0].startswith("m.yaml:2:11: invalid YAML value")


def test_duplicate_keys_are_reported(workdir: Path) -> None:
    _, problems = _load(workdir, """\
version: 1
source: x.xlsx
entities:
  s:
    entity: school
    key: [code]
    fields:
      code: A
      code: B
""")
    assert problems == ["m.yaml:9:7: duplicate key 'code'"]


def test_map_keys_and_where_values_keep_the_text_written(workdir: Path) -> None:
    mapping, problems = _load(workdir, """\
version: 1
source: x.xlsx
entities:
  s:
    entity: school
    where: [{column: Active, in: [Yes, 00851, 1.50]}, {column: Name, not_empty: true}]
    key: [code]
    fields:
      code: {column: A, map: {Yes: Y, 007: Bond, null: nothing}}
""")
    assert problems == []
    assert mapping is not None
    block = mapping.blocks[0]
    assert block.where[0].values == ("Yes", "00851", "1.50")
    assert block.where[1].op == "not_empty"
    assert block.fields[0].steps.map is not None
    assert dict(block.fields[0].steps.map) == {"Yes": "Y", "007": "Bond", "null": "nothing"}


def test_field_types_default_from_the_entity_schema(workdir: Path) -> None:
    mapping, problems = _load(workdir, """\
version: 1
source: x.xlsx
entities:
  a:
    entity: applicant
    key: [external_id]
    fields:
      external_id: Id
      date_of_birth: Born
      eligible_deliveries: Deliveries
      custom_attributes:
        Score: {column: Score, type: number}
""")
    assert problems == []
    assert mapping is not None
    kinds = {f.name: f.steps.type for f in mapping.blocks[0].fields}
    assert kinds == {"external_id": "string", "date_of_birth": "date", "eligible_deliveries": "list",
                     "custom_attributes.Score": "number"}


def test_a_reference_to_an_entity_with_a_composite_key_needs_by(workdir: Path) -> None:
    _, problems = _load(workdir, """\
version: 1
source: x.xlsx
entities:
  c:
    entity: credential
    key: [name]
    fields:
      name: Name
      parent: {ref: credential, column: Parent}
""")
    assert problems == ["m.yaml:9:21: a credential is identified by 3 fields (applicant_id, type, name); "
                        "name the one field this column holds with `by:`"]


def test_template_parsing_handles_escaped_braces_and_refuses_unbalanced_ones() -> None:
    assert parse_template("{{x}} {First Name}-{Last}") == (
        ("{x} ", False), ("First Name", True), ("-", False), ("Last", True),
    )
    for bad in ("{First", "First}", "plain text", "{}"):
        with pytest.raises(ValueError):
            parse_template(bad)


def test_the_mapping_schema_is_valid_2020_12_and_shipped_as_package_data() -> None:
    shipped = json.loads(resources.files("loader.schemas").joinpath("mapping.schema.json").read_text("utf-8"))
    assert shipped == mapping_schema()
    jsonschema.Draft202012Validator.check_schema(shipped)
    assert shipped["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_the_contract_example_mapping_is_valid(workdir: Path) -> None:
    mapping, problems = _load(workdir, """\
# yaml-language-server: $schema=../schemas/mapping.schema.json
version: 1
source: ../samples/intake-2027/curriculum.xlsx
entities:
  courses:
    entity: course
    sheet: Courses
    header_row: 1
    where: {column: Status, not_in: [Withdrawn]}
    key: [code]
    fields:
      code: {column: Course Code, transform: [strip]}
      name: Course Title
      parent: {ref: school, column: School Code}
      custom_attributes:
        Faculty: {column: Faculty}
        CRICOS: {column: CRICOS Code, empty: skip}
  arrangements:
    entity: arrangement
    sheet: Arrangements
    key: [code]
    fields:
      code: Arrangement Code
      name: Title
      status: {column: Status, map: {Live: ACTIVE, Ready: READY, Draft: DRAFT, Retired: INACTIVE}}
      subjects_awarded: {ref: subject, column: Subjects Awarded, split: ";"}
""")
    assert problems == []
    assert mapping is not None
    assert [b.name for b in mapping.blocks] == ["courses", "arrangements"]
    assert mapping.blocks[0].source.path.name == "curriculum.xlsx"
    assert str(mapping.blocks[1].place) == "m.yaml:18:3"


_words = st.sampled_from(["version", "source", "entities", "entity", "sheet", "key", "fields", "column", "ref",
                          "value", "template", "where", "map", "split", "type", "empty", "code", "name", "course",
                          "custom_attributes", "parent", "school", "in", "equals", "header_row", "by", "pattern"])
_leaves = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), _words, st.text(max_size=6))
_docs = st.recursive(_leaves, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_words, inner, max_size=4),
                     max_leaves=25)


_field_specs = st.one_of(_words, st.dictionaries(_words, _leaves | st.dictionaries(_words, _leaves, max_size=2),
                                                max_size=4))
_blocks = st.fixed_dictionaries({
    "entity": st.sampled_from(["course", "school", "credential", "arrangement", "applicant", "nope"]),
    "key": st.lists(_words, min_size=1, max_size=2, unique=True),
    "fields": st.dictionaries(_words, _field_specs, min_size=1, max_size=4),
}, optional={"where": st.dictionaries(_words, _leaves, max_size=2), "sheet": _words})
_skeletons = st.fixed_dictionaries({"source": st.just("x.xlsx"), "entities": st.dictionaries(_words, _blocks,
                                                                                             min_size=1, max_size=2)})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=_docs | _skeletons)
def test_any_yaml_document_gives_findings_with_places_never_a_crash(workdir: Path, doc: object) -> None:
    if isinstance(doc, dict):
        doc = {"version": 1, **doc}
    mapping, problems = _load(workdir, yaml.safe_dump(doc))
    assert mapping is not None or problems
    for problem in problems:
        assert re.match(r"m\.yaml:\d+:\d+: \S", problem), problem
