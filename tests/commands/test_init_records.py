"""`loader init FILE --records PATH`: a draft mapping from a JSON or XML file's records, whose
columns are the paths found in its first records, validated as written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from loader.cli import main
from loader.errors import EXIT_OK, EXIT_USAGE

DATA = Path(__file__).parents[1] / "source" / "readers" / "data"
XCRI = Path(__file__).parents[2] / "loader" / "packs" / "xcri-cap-1.2" / "samples" / "xcri-cap" / \
    "PG_Generic_XCRI-CAP-1.2.xml"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loader.yaml").write_text("", encoding="utf-8")
    return tmp_path


def _draft(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return loaded


def test_an_ooapi_json_file_drafts_a_mapping_of_its_records_paths_that_validates(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "exports").mkdir()
    (project / "exports" / "courses.json").write_bytes((DATA / "ooapi-courses-page1.json").read_bytes())
    assert main(["init", "exports/courses.json", "--records", "$.items[*]", "--entity", "subject"]) == EXIT_OK
    assert "It validates." in capsys.readouterr().out
    draft = _draft(project / "mappings" / "courses.yaml")
    assert draft["sources"] == {"courses": {"json": "../exports/courses.json", "records": "$.items[*]"}}
    block = draft["entities"]["subject"]
    assert block["source"] == "courses" and block["key"] == ["code"]
    assert block["fields"]["code"]["column"] == "primaryCode.code"
    assert block["fields"]["name"]["column"] == "name[0].value"
    text = (project / "mappings" / "courses.yaml").read_text(encoding="utf-8")
    assert '#   "studyLoad.value": {column: "studyLoad.value", type: string}' in text


def test_the_xcri_sample_drafts_a_mapping_with_the_documents_namespaces_that_validates(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "xcri.xml").write_bytes(XCRI.read_bytes())
    assert main(["init", "xcri.xml", "--records", "/x:catalog/x:provider/x:course", "--entity", "course"]) == EXIT_OK
    assert "It validates." in capsys.readouterr().out
    draft = _draft(project / "mappings" / "xcri.yaml")
    source = draft["sources"]["xcri"]
    assert source["xml"] == "../xcri.xml" and source["records"] == "/x:catalog/x:provider/x:course"
    assert source["namespaces"]["x"] == "http://xcri.org/profiles/1.2/catalog"  # the default namespace, as x
    assert source["namespaces"]["dc"] == "http://purl.org/dc/elements/1.1/"
    block = draft["entities"]["course"]
    assert block["source"] == "xcri" and block["fields"]["name"]["column"] == "dc:title"
    text = (project / "mappings" / "xcri.yaml").read_text(encoding="utf-8")
    assert '#   "dc:identifier[2]": {column: "dc:identifier[2]"}' in text  # repeated siblings: by position
    assert '#   "x:presentation/mlo:start/@dtf": {column: "x:presentation/mlo:start/@dtf"}' in text
    assert "xhtml:p" not in text  # XHTML inside a description is the description's text


def test_a_records_path_that_finds_nothing_or_a_file_that_is_no_tree_is_a_usage_error(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "xcri.xml").write_bytes(XCRI.read_bytes())
    assert main(["init", "xcri.xml", "--records", "//x:module"]) == EXIT_USAGE
    assert "xcri.xml: the records path '//x:module' finds no record holding a value" in capsys.readouterr().err
    (project / "units.csv").write_text("code,name\nA,Art\n", encoding="utf-8")
    assert main(["init", "units.csv", "--records", "$[*]"]) == EXIT_USAGE
    assert "--records reads a JSON (.json, .jsonl, .ndjson) or XML (.xml) file" in capsys.readouterr().err
    assert not (project / "mappings").exists()
