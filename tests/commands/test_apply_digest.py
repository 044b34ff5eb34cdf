"""`loader apply MAPPING... --expect-digest`: apply exactly the reviewed plan, or write nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.api import writes_answered
from helpers.project import SCHOOLS_SEED, schools_project, write_schools

from loader.cli import main
from loader.errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from loader.sandbox.server import SandboxOptions, serve_in_thread


@pytest.fixture
def sandbox() -> Iterator[Any]:
    with serve_in_thread(SandboxOptions(seed=SCHOOLS_SEED)) as running:
        yield running


@pytest.fixture
def project(tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    return schools_project(tmp_path, sandbox, monkeypatch)


def _reviewed_digest(project: Path) -> str:
    assert main(["plan", "schools.yaml", "--env", "local", "--report", "plan.md"]) == EXIT_OK
    found = re.search(r"Plan digest: `(sha256:[0-9a-f]{64})`", (project / "plan.md").read_text(encoding="utf-8"))
    assert found
    return found[1]



def test_apply_with_the_reviewed_digest_applies_that_plan(project: Path, sandbox: Any) -> None:
    digest = _reviewed_digest(project)
    sandbox.reset_stats()
    assert main(["apply", "schools.yaml", "--env", "local", "--yes", "--expect-digest", digest]) == EXIT_OK
    assert writes_answered(sandbox) == 2  # one create, one update


def test_a_stale_digest_writes_nothing_when_the_source_changed_after_review(
    project: Path, sandbox: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    digest = _reviewed_digest(project)
    write_schools(project / "schools.xlsx", [("SCI", "School of Science"), ("ENG", "Engineering"), ("LAW", "Laws")])
    sandbox.reset_stats()
    code = main(["apply", "schools.yaml", "--env", "local", "--yes", "--expect-digest", digest])
    assert code == EXIT_ERROR
    assert writes_answered(sandbox) == 0
    assert sandbox.stats()["total"] > 0  # it did plan afresh (token, list requests)
    err = capsys.readouterr().err
    assert f"not the expected {digest}" in err and "nothing was applied" in err


def test_a_stale_digest_writes_nothing_when_the_service_changed_after_review(project: Path, sandbox: Any) -> None:
    digest = _reviewed_digest(project)
    assert main(["apply", "schools.yaml", "--env", "local", "--yes"]) == EXIT_OK  # someone applied meanwhile
    sandbox.reset_stats()
    assert main(["apply", "schools.yaml", "--env", "local", "--yes", "--expect-digest", digest]) == EXIT_ERROR
    assert writes_answered(sandbox) == 0


def test_a_malformed_digest_or_one_with_a_saved_plan_is_a_usage_error(project: Path, sandbox: Any) -> None:
    sandbox.reset_stats()
    assert main(["apply", "schools.yaml", "--env", "local", "--expect-digest", "sha256:abc"]) == EXIT_USAGE
    assert main(["apply", "--plan", "plan.json", "--expect-digest", "sha256:" + "0" * 64]) == EXIT_USAGE
    assert sandbox.stats()["total"] == 0
