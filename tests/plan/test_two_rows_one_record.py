"""Two sheet rows resolving to one live record (staff re-coded K3 to K7 in the platform; the sheet
keeps K3 and adds K7): the history finds the record for K3 by its id, the key finds it for K7. The
plan is an error naming both rows, never an update of the wrong record."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.fault_project import fault_project


def test_two_rows_resolving_to_one_live_record_are_an_error_naming_both(tmp_path: Path) -> None:
    with fault_project(tmp_path) as project:
        project.sheet({"K3": ("Three", "Arts"), "K4": ("Four", "Arts")})
        assert project.apply()[0] == 0
        project.edit("K3", {"code": "K7"})  # re-coded in the platform
        project.sheet({"K3": ("Three", "Arts"), "K4": ("Four", "Arts"), "K7": ("Seven", "Law")})
        code, err = project.plan()
        assert code == 1, err
        plan = json.loads((tmp_path / "plan.json").read_text())
        records = {r["ref"]: r for b in plan["blocks"] for r in b["records"]}
        (k7,) = records["schools/K7"]["findings"]
        assert "this row (key K7) and schools.xlsx › Schools › row 2 (key K3) resolve to one live" in k7["message"]
        assert "row 4 (key K7)" in records["schools/K3"]["findings"][0]["message"]
        code, err = project.apply()
        assert code == 1, err
        live = project.live()
        assert live["K7"]["name"] == "Three" and set(live) == {"K4", "K7"}  # nothing written over it
