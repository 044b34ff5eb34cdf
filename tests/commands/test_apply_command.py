"""`loader apply --plan`: the checks before the first write, stale records, results files, exit codes."""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from helpers.apply import client_for, loader_yaml_for, make_plan, record

from loader.commands import apply as apply_command
from loader.config import load_config
from loader.errors import EXIT_ERROR, EXIT_OK, PlanError, UsageError
from loader.files.fingerprints import fingerprint_inputs
from loader.places import place_from_dict
from loader.plan.model import Action
from loader.plan.plan_dict import plan_to_dict
from loader.sandbox.server import SandboxOptions, serve_in_thread

SEED = {
    "institution-a": {
        "schools": [
            {"id": f"00000000-0000-4000-8000-00000000000{i}", "code": f"S{i}", "name": f"School {i}"}
            for i in range(3)
        ]
    }
}


@pytest.fixture
def sandbox() -> Iterator[Any]:
    with serve_in_thread(SandboxOptions(seed=SEED)) as running:
        yield running


@pytest.fixture
def project(tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with loader.yaml naming the sandbox as environment `local`, and a source."""
    (tmp_path / "loader.yaml").write_text(
        loader_yaml_for(
            sandbox, "APPLY_TEST_SECRET", settings="    retry: {attempts: 6, wait_initial: 0.01, wait_max: 0.2}\n"
        ),
        encoding="utf-8",
    )
    monkeypatch.setenv("APPLY_TEST_SECRET", sandbox.client_secret)
    monkeypatch.chdir(tmp_path)
    workbook = openpyxl.Workbook()
    workbook.active.title = "schools"
    workbook.active.append(["Code", "Name"])
    for i in range(3):
        workbook.active.append([f"S{i}", f"Renamed {i}"])
    workbook.active.append(["NEW", "New school"])
    workbook.save(tmp_path / "curriculum.xlsx")
    return tmp_path


def _live(sandbox: Any) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        async with client_for(sandbox) as client:
            return await client.fetch_collection("school")

    return asyncio.run(go())


def _write_plan(project: Path, sandbox: Any, **changes: Any) -> Path:
    live = {s["code"]: s for s in _live(sandbox)}
    records = [
        record("schools", "school", f"S{i}", {"name": f"Renamed {i}"}, action=Action.UPDATE, row=i + 2,
               live_id=live[f"S{i}"]["id"], live_updated_time=live[f"S{i}"]["metadata"]["updated"]["time"])
        for i in range(3)
    ]
    records.append(record("schools", "school", "NEW", {"code": "NEW", "name": "New school"}, row=5))
    plan = make_plan(("schools", "school", records))
    blocks = tuple(replace(b, source_file="curriculum.xlsx") for b in plan.blocks)
    fingerprints = fingerprint_inputs([project / "curriculum.xlsx"])
    plan = replace(plan, env_name="local", base_url=sandbox.base_url, fingerprints=fingerprints, blocks=blocks)
    plan = replace(plan, **changes)
    path = project / "plan.json"
    path.write_text(json.dumps(plan_to_dict(plan)), encoding="utf-8")
    return path


def _run(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-v", "--verbose", action="count", default=0)
    parser.add_argument("--config")
    apply_command.add_arguments(parser)
    args = parser.parse_args(argv)
    request = apply_command.request_from(args)
    return apply_command.run(request, load_config(Path(args.config) if args.config else None))


def _rename_through_the_api(sandbox: Any, code: str, name: str) -> None:
    async def go() -> None:
        async with client_for(sandbox) as client:
            found = await client.get("school", code)
            assert found is not None
            await client.update("school", found["id"], {"name": name})

    asyncio.run(go())


def test_a_plan_applies_and_writes_both_results_files(project: Path, sandbox: Any) -> None:
    plan = _write_plan(project, sandbox)
    code = _run("--plan", str(plan), "--env", "local", "--results", "out.xlsx", "--results", "out.json")
    assert code == EXIT_OK
    names = sorted((s["code"], s["name"]) for s in _live(sandbox))
    assert names == [("NEW", "New school"), ("S0", "Renamed 0"), ("S1", "Renamed 1"), ("S2", "Renamed 2")]
    data = json.loads((project / "out.json").read_text(encoding="utf-8"))
    assert data["totals"]["updated"] == 3 and data["totals"]["created"] == 1
    sheet = openpyxl.load_workbook(project / "out.xlsx")["schools"]
    assert [c.value for c in sheet[1]] == ["Code", "Name", "loader status", "loader id", "loader message",
                                           "loader block"]
    assert sheet["C5"].value == "created"


def test_a_record_changed_since_the_plan_is_skipped_as_stale_and_the_others_apply(
    project: Path, sandbox: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _write_plan(project, sandbox)
    _rename_through_the_api(sandbox, "S1", "Changed by someone else")
    code = _run("--plan", str(plan), "--env", "local", "--results", "out.json")
    assert code == EXIT_ERROR
    names = {s["code"]: s["name"] for s in _live(sandbox)}
    assert names == {"S0": "Renamed 0", "S1": "Changed by someone else", "S2": "Renamed 2", "NEW": "New school"}
    records = {r["ref"]: r for r in json.loads((project / "out.json").read_text(encoding="utf-8"))["records"]}
    assert records["schools/S1"]["outcome"] == "skipped"
    assert records["schools/S1"]["message"].startswith("stale: changed in the service since the plan was made")
    out = capsys.readouterr()
    assert "schools/S1: stale" in out.out


def test_a_changed_input_file_refuses_the_plan_naming_the_file(project: Path, sandbox: Any) -> None:
    plan = _write_plan(project, sandbox)
    (project / "curriculum.xlsx").write_bytes((project / "curriculum.xlsx").read_bytes() + b"\0")
    with pytest.raises(PlanError, match=r"input file curriculum\.xlsx changed since the plan was made"):
        _run("--plan", str(plan), "--env", "local")
    assert {s["name"] for s in _live(sandbox)} == {"School 0", "School 1", "School 2"}


def test_a_plan_naming_no_input_files_cannot_be_checked_and_is_refused(project: Path, sandbox: Any) -> None:
    plan = _write_plan(project, sandbox, fingerprints={})
    with pytest.raises(PlanError, match="names no input files"):
        _run("--plan", str(plan), "--env", "local")
    assert {s["name"] for s in _live(sandbox)} == {"School 0", "School 1", "School 2"}


def test_a_plan_made_for_another_environment_name_is_refused(project: Path, sandbox: Any) -> None:
    plan = _write_plan(project, sandbox, env_name="test")
    with pytest.raises(PlanError, match="made for environment 'test', not 'local'"):
        _run("--plan", str(plan), "--env", "local")


def test_a_plan_made_against_another_reported_environment_is_refused_before_any_write(
    project: Path, sandbox: Any
) -> None:
    plan = _write_plan(project, sandbox, environment="dev")
    sandbox.reset_stats()
    with pytest.raises(PlanError, match="reports environment 'sandbox' but the plan was made against 'dev'"):
        _run("--plan", str(plan), "--env", "local")
    assert {s["name"] for s in _live(sandbox)} == {"School 0", "School 1", "School 2"}


def test_a_plan_with_errors_is_refused_unless_partial(
    project: Path, sandbox: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    plan_path = _write_plan(project, sandbox)
    data = json.loads(plan_path.read_text(encoding="utf-8"))
    bad = data["blocks"][0]["records"][0]
    where = {"file": "curriculum.xlsx", "sheet": "schools", "cell": "B2", "row": 2}
    bad["findings"] = [{"severity": "error", "code": "x", "message": "bad name", "where": where}]
    bad["blocked"] = True
    plan_path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(PlanError, match="the plan has 1 error"):
        _run("--plan", str(plan_path), "--env", "local")
    capsys.readouterr()
    assert _run("--plan", str(plan_path), "--env", "local", "--partial") == EXIT_ERROR
    out = capsys.readouterr().out
    assert "skipped (1 blocked by errors)" in out
    shown_row, shown_cell = (str(place_from_dict(p)) for p in (bad["source"], where))
    assert f"Blocked by errors:\n  {shown_row}  {bad['ref']}: not applied: bad name at {shown_cell}" in out
    names = {s["code"]: s["name"] for s in _live(sandbox)}
    assert names["S0"] == "School 0" and names["S1"] == "Renamed 1"


@pytest.mark.parametrize(("limit", "refused"), [("3", True), ("4", False), ("75%", True), ("100%", False)])
def test_max_changes_refuses_before_any_write(project: Path, sandbox: Any, limit: str, refused: bool) -> None:
    plan = _write_plan(project, sandbox)  # 4 changes, 4 records in scope
    if refused:
        with pytest.raises(PlanError, match="--max-changes"):
            _run("--plan", str(plan), "--env", "local", "--max-changes", limit)
        assert len(_live(sandbox)) == 3
    else:
        assert _run("--plan", str(plan), "--env", "local", "--max-changes", limit) == EXIT_OK


@pytest.mark.parametrize(
    "argv",
    [
        ("--env", "local"),
        ("m.yaml", "--plan", "plan.json"),
        ("--plan", "plan.json", "--max-changes", "lots"),
        ("--plan", "plan.json", "--max-changes", ""),  # an unset CI variable: never "no limit"
        ("--plan", "plan.json", "--max-changes", "  "),
        ("--plan", "plan.json", "--max-changes", "1e3"),
        ("--plan", "plan.json", "--results", "no-such-folder/out.json"),
        ("--plan", "plan.json", "--results", "."),
        ("--plan", "plan.json", "--results", "out.txt"),
        ("--plan", "plan.json", "--concurrency", "0"),
    ],
)
def test_misuse_of_the_command_line_is_a_usage_error(project: Path, argv: tuple[str, ...]) -> None:
    with pytest.raises(UsageError):
        _run(*argv)


def test_an_unwritable_results_path_is_refused_before_the_first_write(project: Path, sandbox: Any) -> None:
    plan = _write_plan(project, sandbox)
    (project / "taken").write_text("a file, not a folder", encoding="utf-8")
    for results in ("missing/results.xlsx", "taken/results.json", "/proc/results.json"):
        with pytest.raises(UsageError, match="--results"):
            _run("--plan", str(plan), "--env", "local", "--results", results)
    assert {s["name"] for s in _live(sandbox)} == {"School 0", "School 1", "School 2"}
    assert len(_live(sandbox)) == 3


def test_without_env_a_plan_goes_to_the_environment_it_was_made_for(project: Path, sandbox: Any) -> None:
    # loader.yaml has no default_environment (so: the built-in sandbox); the plan names `local`.
    plan = _write_plan(project, sandbox)
    assert _run("--plan", str(plan)) == EXIT_OK
    assert {s["name"] for s in _live(sandbox)} >= {"Renamed 0", "New school"}


def test_an_env_that_is_not_the_plans_is_still_refused(project: Path, sandbox: Any) -> None:
    plan = _write_plan(project, sandbox)
    with pytest.raises(PlanError, match="made for environment 'local', not 'sandbox'"):
        _run("--plan", str(plan), "--env", "sandbox")


def test_a_plan_file_that_is_not_json_is_a_plan_error(project: Path) -> None:
    (project / "plan.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(PlanError, match="cannot be read"):
        _run("--plan", "plan.json", "--env", "local")
