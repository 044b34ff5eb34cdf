"""`--format json|github` of validate, plan and apply: one schema-valid JSON document on stdout, or
workflow annotations and a job summary."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers.project import SCHOOLS_SEED, schools_project

from loader.cli import main
from loader.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK
from loader.files.package_data import schema
from loader.findings import Finding
from loader.places import CellRef, FilePlace, MappingPlace
from loader.report.github import annotation
from loader.report.machine import place_of
from loader.sandbox.server import SandboxOptions, serve_in_thread

VALIDATOR = jsonschema.Draft202012Validator(schema("output.schema.json"))


@pytest.fixture
def sandbox() -> Iterator[Any]:
    with serve_in_thread(SandboxOptions(seed=SCHOOLS_SEED)) as running:
        yield running


@pytest.fixture
def project(tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    return schools_project(tmp_path, sandbox, monkeypatch)


def _document(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    out = capsys.readouterr().out
    document = json.loads(out)  # the whole of stdout is one JSON document
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in VALIDATOR.iter_errors(document)]
    assert errors == []
    return document


def test_the_output_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(schema("output.schema.json"))


def test_validate_json_counts_blocks_and_gives_places_as_structures(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "schools.yaml", "--format", "json"]) == EXIT_OK
    document = _document(capsys)
    assert document["ok"] is True and document["blocks"][0]["records"] == 3
    (project / "broken.yaml").write_text(
        "version: 1\nsource: schools.xlsx\nentities:\n  schools:\n    entity: school\n    sheet: Schools\n"
        "    key: [code]\n    fields:\n      code: Code\n      name: Title\n      colour: Name\n",
        encoding="utf-8",
    )
    assert main(["validate", "broken.yaml", "--format", "json"]) == EXIT_ERROR
    document = _document(capsys)
    assert document["ok"] is False and document["exit_code"] == EXIT_ERROR
    places = [f["place"] for f in document["findings"]]
    assert any(p and p["kind"] == "mapping" and p["file"] == "broken.yaml" and p["line"] > 1 for p in places)


def test_plan_json_has_the_digest_counts_and_no_values(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", "schools.yaml", "--env", "local", "--format", "json", "--detailed-exitcode",
                 "--report", "plan.md"])
    assert code == EXIT_CHANGES
    document = _document(capsys)
    assert document["exit_code"] == EXIT_CHANGES
    # one warning: no history yet, the block's live records were last changed by someone else (a baseline's place)
    assert document["totals"] | {} == {"create": 1, "update": 1, "unchanged": 1, "not_managed_here": 0, "dropped": 0,
                                       "warnings": 1, "errors": 0}
    assert f"`{document['digest']}`" in (project / "plan.md").read_text(encoding="utf-8")
    records = {r["ref"]: r for r in document["blocks"][0]["records"]}
    assert records["schools/SCI"] == {"ref": "schools/SCI", "action": "update", "fields": ["name"],
                                      "status_path": [], "blocked": False, "source": records["schools/SCI"]["source"]}
    assert "School of Science" not in json.dumps(document)


def test_apply_json_reports_outcomes_and_a_refusal_is_an_error_document(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = "sha256:" + "0" * 64
    assert main(["apply", "schools.yaml", "--env", "local", "--yes", "--format", "json",
                 "--expect-digest", stale]) == EXIT_ERROR
    refused = _document(capsys)
    assert refused["error"]["message"].startswith("the plan's digest is sha256:")
    assert main(["apply", "schools.yaml", "--env", "local", "--yes", "--format", "json"]) == EXIT_OK
    applied = _document(capsys)
    assert applied["totals"]["created"] == 1 and applied["totals"]["updated"] == 1 and applied["ok"] is True
    assert main(["apply", "schools.yaml", "--env", "local", "--yes", "--format", "json"]) == EXIT_OK
    assert _document(capsys)["nothing_to_apply"] is True


def test_github_format_annotates_mapping_errors_at_their_line_and_writes_the_job_summary(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = project / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    (project / "broken.yaml").write_text(
        "version: 1\nsource: schools.xlsx\nentities:\n  schools:\n    entity: school\n    sheet: Schools\n"
        "    key: [code]\n    fields:\n      code: Code\n      name: Title\n",
        encoding="utf-8",
    )
    assert main(["validate", "broken.yaml", "--format", "github"]) == EXIT_ERROR
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("::error ")]
    assert lines and lines[0].startswith("::error file=broken.yaml,line=")
    assert "## loader validate: invalid" in summary.read_text(encoding="utf-8")
    assert main(["plan", "schools.yaml", "--env", "local", "--format", "github"]) == EXIT_OK
    assert "- Plan digest: `sha256:" in summary.read_text(encoding="utf-8")


def test_places_become_their_parts() -> None:
    assert place_of(MappingPlace("mappings/a.yaml", 14, 7)) == {"kind": "mapping", "file": "mappings/a.yaml",
                                                                "line": 14, "col": 7}
    assert place_of(CellRef("in.xlsx", "Subjects", "D17", 17)) == {"kind": "cell", "file": "in.xlsx",
                                                                   "sheet": "Subjects", "cell": "D17", "row": 17}
    assert place_of(CellRef("in.xlsx", "Subjects", row=4)) == {"kind": "cell", "file": "in.xlsx", "sheet": "Subjects",
                                                               "cell": None, "row": 4}
    assert place_of(CellRef("in.csv", None, "B2", 2)) == {"kind": "cell", "file": "in.csv", "sheet": None,
                                                          "cell": "B2", "row": 2}
    assert place_of(FilePlace("codes.xlsx")) == {"kind": "file", "file": "codes.xlsx"}
    assert place_of("somewhere in words") is None  # text has no structure to give
    assert place_of(None) is None


def test_annotations_escape_newlines_percent_and_property_separators() -> None:
    finding = Finding("warning", "x", "50% done\nnext", MappingPlace("a,b.yaml", 3, 4))
    assert annotation(finding) == "::warning file=a%2Cb.yaml,line=3,col=4,title=x::50%25 done%0Anext"
