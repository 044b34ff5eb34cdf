"""A mapping file renamed without `formerly` (handbook-2026.yaml to handbook-2027.yaml): the fields
its records hold are owned by a file the project no longer has, so the error names the `formerly:`
line to add, not `take_over` (which would hand the records to the new file without saying it is
the same one); with that line the plan goes ahead."""

from __future__ import annotations

from pathlib import Path

from helpers.fault_project import MAPPING, fault_project


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
