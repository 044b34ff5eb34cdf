"""`loader plan` end to end: the embedded sandbox, artifacts, exit codes."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.plan import SAMPLE_MAPPINGS, copy_samples

from loader.cli import main
from loader.plan.model import Action
from loader.plan.plan_file import read_plan_json, validation_errors


@pytest.fixture
def fresh_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding the sample mappings and workbooks, with no loader.yaml."""
    copy_samples(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_on_a_fresh_machine_the_readme_command_prints_a_real_diff(fresh_checkout: Path) -> None:
    loader = shutil.which("loader") or f"{sys.executable} -m loader"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOADER_")}
    done = subprocess.run(
        [*loader.split(), "plan", "mappings/curriculum.yaml"], cwd=fresh_checkout, env=env,
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "+ create HLT" in out and '~ update ENG' in out
    assert 'name: "Faculty of Engineering" → "School of Engineering"' in out
    assert "Warnings (6)" in out and "will create 'STAT1001'; a live subject has code 'stat1001'" in out
    # no history yet: each block's matched records were last changed by someone else (a baseline's place)
    assert "4 of block schools's live records were last changed by someone other than the loader" in out
    assert "to create" in out and "unchanged" in out and "\x1b[" not in out  # no colour on a pipe
    assert (fresh_checkout / ".loader" / "sandbox.sqlite3").is_file()


def test_plan_writes_every_artifact_and_detailed_exitcode_says_there_are_changes(
    fresh_checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["plan", *SAMPLE_MAPPINGS, "--out", "plan.json", "--report", "plan.md", "--html", "plan.html",
                 "--detailed-exitcode"])
    assert code == 2
    assert stat.S_IMODE((fresh_checkout / "plan.json").stat().st_mode) == 0o600
    data = json.loads((fresh_checkout / "plan.json").read_text(encoding="utf-8"))
    assert validation_errors(data) == []
    plan = read_plan_json(fresh_checkout / "plan.json")
    assert {r.action for r in plan.records()} == {Action.CREATE, Action.UPDATE, Action.UNCHANGED}
    assert (fresh_checkout / "plan.md").read_text(encoding="utf-8").startswith("# Plan for `sandbox`")
    assert '<section class="block" id="block-0">' in (fresh_checkout / "plan.html").read_text(encoding="utf-8")
    assert "wrote plan.json" in capsys.readouterr().err


def test_a_plan_with_errors_exits_1_and_names_the_cell(
    fresh_checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Planned alone, the arrangements refer to subjects the curriculum would create.
    assert main(["plan", "mappings/arrangements.yaml", "--detailed-exitcode"]) == 1
    out = capsys.readouterr().out
    assert ("samples/intake-2027/arrangements.xlsx › Arrangements › D4 (ART-DIP-SCI): no subject with code "
            "'STAT1001' in the source or live; did you mean 'stat1001'?") in out  # the record's key beside its cell
    assert "The plan has errors" in out


def test_against_live_data_equal_to_the_source_there_are_no_changes_and_no_warnings(
    fresh_checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed = json.loads((fresh_checkout / "samples" / "sandbox-seed.json").read_text(encoding="utf-8"))
    only_tags = {"institution-a": {"tags": seed["institution-a"]["tags"]}}
    (fresh_checkout / "samples" / "sandbox-seed.json").write_text(json.dumps(only_tags), encoding="utf-8")
    assert main(["apply", *SAMPLE_MAPPINGS, "--yes"]) == 0
    capsys.readouterr()
    assert main(["plan", *SAMPLE_MAPPINGS, "--detailed-exitcode", "--report", "again.md"]) == 0
    out = capsys.readouterr().out
    assert "No changes: 55 unchanged.\n" in out
    assert "No changes" in (fresh_checkout / "again.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("concurrency", ["0", "257"])
def test_a_bad_concurrency_is_a_usage_error_with_the_bounds_apply_has(
    fresh_checkout: Path, capsys: pytest.CaptureFixture[str], concurrency: str
) -> None:
    assert main(["plan", "mappings/curriculum.yaml", "--concurrency", concurrency]) == 64
    assert f"--concurrency {concurrency}: use a number from 1 to 256" in capsys.readouterr().err


def test_a_missing_mapping_file_is_an_error_not_a_crash(
    fresh_checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", "mappings/nope.yaml", "mappings/curriculum.yaml"]) == 1
    err = capsys.readouterr().err
    assert "mappings/nope.yaml: file not found" in err and "Traceback" not in err
