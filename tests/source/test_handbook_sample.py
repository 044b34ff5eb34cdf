"""The handbook sample: a curriculum export lacking what the service needs, mapped with invented codes.

Faculties and departments come by name only; `lookup` gives each the code kept in
samples/real-world/invented-codes.csv. Credit points, requisites and level, which the service has no
field for, become custom attributes (text). The mapping validates, plans beside the main samples
against last cycle's data, and a name the table lacks is an error at its cell.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.plan import REPO, SAMPLE_SEED, plan_against

from loader.plan.model import Action
from loader.profile import load_profile
from loader.sandbox.server import SandboxOptions, serve_in_thread
from loader.source.sources import read_sources

HANDBOOK = "mappings/real-world/handbook.yaml"


def test_the_handbook_mapping_invents_codes_and_keeps_the_rest_as_custom_attributes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(REPO)
    sources = read_sources([Path(HANDBOOK)], load_profile())
    assert sources.findings == () and all(b.findings == () for b in sources.blocks)
    records = {b.block: {r.key[0]: r.fields for r in b.records} for b in sources.blocks}
    assert records["faculties"] == {"F-SCI": {"code": "F-SCI", "name": "Faculty of Science"},
                                    "F-HLTH": {"code": "F-HLTH", "name": "Faculty of Health"}}
    assert records["departments"]["D-STATS"]["parent"].values == ("F-SCI",)
    subjects = records["handbook_subjects"]
    assert subjects["MATH2102"]["custom_attributes"] == {
        "Credit Points": "6", "Prerequisites": "MATH1001; MATH2101", "Level": "2"}
    assert subjects["STAT2101"]["custom_attributes"]["Credit Points"] == "7.5"
    assert subjects["STAT2101"]["custom_attributes"]["Prerequisites"] == "STAT1001; MATH1001"
    assert "Prerequisites" not in subjects["NUTR3101"]["custom_attributes"]  # empty: skip
    assert subjects["NUTR2101"]["parent"].values == ("D-NUTR",)


def test_the_handbook_plans_beside_the_main_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    with serve_in_thread(SandboxOptions(seed=SAMPLE_SEED)) as sandbox:
        plan = plan_against(sandbox, ["mappings/curriculum.yaml", HANDBOOK]).plan
    assert not plan.has_errors
    handbook = [r for r in plan.records() if r.block in ("faculties", "departments", "handbook_subjects")]
    assert len(handbook) == 10 and {r.action for r in handbook} == {Action.CREATE}
    assert next(r for r in handbook if r.ref == "handbook_subjects/NUTR2101").depends_on == ("departments/D-NUTR",)


def test_a_name_the_code_table_lacks_is_an_error_at_its_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for folder in ("mappings/real-world", "samples/real-world"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    table = tmp_path / "samples" / "real-world" / "invented-codes.csv"
    table.write_text(table.read_text(encoding="utf-8").replace("Statistics,D-STATS\n", ""), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    sources = read_sources([Path(HANDBOOK)], load_profile())
    problems = [(str(f.where), f.message) for b in sources.blocks for f in b.findings]
    assert ("samples/real-world/handbook-export.xlsx › Handbook 2027 › B4",
            "code: expected a Name listed in samples/real-world/invented-codes.csv, got 'Statistics'") in problems, \
        problems
