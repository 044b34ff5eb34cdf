"""`loader show plan.json`: a saved plan's reports again, with no configuration and no service."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from helpers.output_schema import output_document
from helpers.report import review_plan

from loader.cli import main
from loader.plan.plan_file import write_plan_json
from loader.report.html import render_html
from loader.report.markdown import render


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("loader show opened a connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_show_renders_the_same_reports_from_a_saved_plan_without_the_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], no_network: None
) -> None:
    plan = review_plan()
    write_plan_json(plan, tmp_path / "plan.json")
    monkeypatch.chdir(tmp_path)  # no loader.yaml here; show needs none
    code = main(["show", "plan.json", "--report", "again.md", "--html", "again.html"])
    assert code == 1  # the plan has errors, as `loader plan` says
    out = capsys.readouterr()
    assert "✗ blocked OLD  row 9  name: too long" in out.out and "? 1 not managed here" in out.out
    assert "wrote again.md" in out.err and "wrote again.html" in out.err
    assert (tmp_path / "again.md").read_text(encoding="utf-8") == render(plan)  # the digest recorded, unmasked
    assert (tmp_path / "again.html").read_text(encoding="utf-8") == render_html(plan)
    assert "secret" not in out.out and "secret" not in (tmp_path / "again.md").read_text(encoding="utf-8")


def test_show_json_is_the_plans_document_in_the_output_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], no_network: None
) -> None:
    plan = review_plan()
    write_plan_json(plan, tmp_path / "plan.json")
    monkeypatch.chdir(tmp_path)
    assert main(["show", "plan.json", "--format", "json"]) == 1
    document = output_document(capsys.readouterr().out)
    assert document["command"] == "show" and not document["ok"] and document["exit_code"] == 1
    assert document["totals"]["not_managed_here"] == 1 and "not_in_source" not in document["totals"]
    assert "secret" not in json.dumps(document)


def test_show_of_a_missing_or_broken_plan_is_an_error_saying_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", str(tmp_path / "nope.json")]) == 1
    assert "the plan file is not there" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text('{"format": 1}', encoding="utf-8")
    assert main(["show", str(tmp_path / "bad.json")]) == 1
    err = capsys.readouterr().err
    assert "not a valid plan" in err and "Traceback" not in err
