"""A mapping file renamed without `formerly` (handbook-2026.yaml to handbook-2027.yaml): the fields
its records hold are owned by a file the project no longer has, so the error names the `formerly:`
line to add, not `take_over` (which would hand the records to the new file without saying it is
the same one); with that line the plan goes ahead."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.fault_project import MAPPING, fault_project

from loader.plan.plan_file import read_plan_json


def test_a_renamed_mapping_file_is_named_with_the_formerly_line_to_add(tmp_path: Path) -> None:
    with fault_project(tmp_path) as project:
        project.sheet({"K0": ("School 0", "Arts"), "K1": ("School 1", "Arts")})
        assert project.apply()[0] == 0
        (tmp_path / "schools.yaml").rename(tmp_path / "schools-2027.yaml")
        project.sheet({"K0": ("School 0, renamed", "Arts"), "K1": ("School 1", "Arts")})
        code, err = project.run("plan", "schools-2027.yaml", "--out", "plan.json")
        assert code == 1, err
        text = (tmp_path / "plan.json").read_text(encoding="utf-8")
        assert "a mapping file this project no longer has" in text
        assert "add `formerly: {file: schools.yaml, block: schools}`" in text and "take_over" in text
        formerly = "    formerly: {file: schools.yaml, block: schools}\n"
        renamed = MAPPING.replace("    entity: school\n", "    entity: school\n" + formerly)
        (tmp_path / "schools-2027.yaml").write_text(renamed, encoding="utf-8")
        code, err = project.run("plan", "schools-2027.yaml", "--out", "plan.json")
        assert code == 0, err
        [block] = read_plan_json(tmp_path / "plan.json").blocks  # a renamed block's plan reads back
        assert block.formerly == ("schools.yaml", "schools")


def _renamed(tmp_path: Path, old: str, new: str) -> None:
    """The mapping file `old` renamed to `new`, its block saying it was `old`'s."""
    (tmp_path / old).unlink()
    formerly = f"    formerly: {{file: {old}, block: schools}}\n"
    (tmp_path / new).write_text(MAPPING.replace("    entity: school\n", "    entity: school\n" + formerly),
                                encoding="utf-8")


def test_ownership_follows_formerly_through_a_chain_of_renames(tmp_path: Path) -> None:
    """handbook-2026 -> 2027 (`formerly: 2026`) -> 2028 (`formerly: 2027`): the last file owns the
    records the first wrote that the middle one never wrote, and still lists the one it dropped."""
    with fault_project(tmp_path) as project:
        project.sheet({"K0": ("School 0", "Arts"), "K1": ("School 1", "Arts"), "K2": ("School 2", "Arts")})
        assert project.apply()[0] == 0
        _renamed(tmp_path, "schools.yaml", "schools-2027.yaml")
        project.sheet({"K0": ("School 0, renamed", "Arts"), "K1": ("School 1", "Arts"), "K2": ("School 2", "Arts")})
        code, err = project.run("apply", "schools-2027.yaml", "--yes")  # writes K0 only
        assert code == 0, err
        _renamed(tmp_path, "schools-2027.yaml", "schools-2028.yaml")
        project.sheet({"K0": ("School 0, renamed", "Arts"), "K1": ("School 1, renamed", "Arts")})
        code, err = project.run("plan", "schools-2028.yaml", "--out", "plan.json")
        assert code == 0, err
        plan = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
        [block] = plan["blocks"]
        assert [d["key"] for d in block["dropped"]] == [["K2"]]  # schools.yaml wrote it: still this block's
        code, err = project.run("apply", "schools-2028.yaml", "--yes")
        assert code == 0, err
        assert project.live()["K1"]["name"] == "School 1, renamed"


def test_records_of_a_file_gone_that_no_block_names_are_listed_with_the_formerly_line(tmp_path: Path) -> None:
    """A file renamed without `formerly` whose sheet also dropped a record: the dropped record does
    not vanish, one warning names it and the `formerly:` line to add; with the line it is dropped."""
    with fault_project(tmp_path) as project:
        project.sheet({"K0": ("School 0", "Arts"), "K2": ("School 2", "Arts")})
        assert project.apply()[0] == 0
        k2 = project.live()["K2"]["id"]
        (tmp_path / "schools.yaml").rename(tmp_path / "schools-2027.yaml")
        project.sheet({"K0": ("School 0", "Arts")})
        code, err = project.run("plan", "schools-2027.yaml", "--out", "plan.json")
        assert code == 0, err
        plan = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
        [gone] = [f for f in plan["findings"] if f["code"] == "owner-gone"]
        assert gone["severity"] == "warning" and "1 school record (K2) loaded by block 'schools'" in gone["message"]
        assert "add `formerly: {file: schools.yaml, block: schools}`" in gone["message"]
        (tmp_path / "schools.yaml").touch()  # so `_renamed` has a file to take the place of
        _renamed(tmp_path, "schools.yaml", "schools-2027.yaml")
        code, err = project.run("plan", "schools-2027.yaml", "--out", "plan.json")
        assert code == 0, err
        plan = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
        assert not [f for f in plan["findings"] if f["code"] == "owner-gone"]
        assert [d["id"] for d in plan["blocks"][0]["dropped"]] == [k2]


def test_a_mapping_file_left_out_of_a_plan_but_still_there_is_not_gone(tmp_path: Path) -> None:
    """Planning some of a project's files is no rename: records of a file still on disk are not named."""
    with fault_project(tmp_path) as project:
        project.sheet({"K0": ("School 0", "Arts")})
        assert project.apply()[0] == 0
        (tmp_path / "other.yaml").write_text(MAPPING.replace("  schools:\n", "  others:\n"),
                                             encoding="utf-8")
        code, err = project.run("plan", "other.yaml", "--out", "plan.json")
        assert code == 0, err
        plan = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
        assert not [f for f in plan["findings"] if f["code"] == "owner-gone"], err
