"""`apply --plan` learns the environment the service reports from one page, not a whole collection."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from helpers.apply import loader_yaml_for, make_plan, record

from loader.cli import main
from loader.errors import EXIT_OK
from loader.files.fingerprints import fingerprint_inputs
from loader.plan.plan_dict import plan_to_dict
from loader.sandbox.server import SandboxOptions, serve_in_thread

TAGS = 250  # three pages of 100


@pytest.fixture
def sandbox() -> Iterator[Any]:
    seed = {"institution-a": {"tags": [{"name": f"Tag {n:03d}"} for n in range(TAGS)]}}
    with serve_in_thread(SandboxOptions(seed=seed)) as running:
        yield running


def test_a_plan_of_creates_only_probes_the_environment_with_one_get_of_tags(
    tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, "PROBE_TEST_SECRET"), encoding="utf-8")
    monkeypatch.setenv("PROBE_TEST_SECRET", sandbox.client_secret)
    monkeypatch.chdir(tmp_path)
    book = openpyxl.Workbook()
    book.active.append(["Code", "Name"])
    book.active.append(["NEW", "New school"])
    book.save(tmp_path / "curriculum.xlsx")
    # Only a create: no record to check for staleness, so no list request tells the environment first.
    plan = make_plan(("schools", "school", [record("schools", "school", "NEW", {"code": "NEW", "name": "New school"})]))
    data = plan_to_dict(plan)
    data.update(env_name="local", base_url=sandbox.base_url,
                fingerprints=fingerprint_inputs([tmp_path / "curriculum.xlsx"]))
    for block in data["blocks"]:
        block["source_file"] = "curriculum.xlsx"
    (tmp_path / "plan.json").write_text(json.dumps(data), encoding="utf-8")
    sandbox.reset_stats()
    assert main(["apply", "--plan", "plan.json", "--env", "local"]) == EXIT_OK
    requests = sandbox.stats()["requests"]
    assert requests["GET /institution/tags"] == 1, requests
    assert requests["POST /institution/catalogue/schools"] == 1, requests
