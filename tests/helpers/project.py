"""A small project directory for command tests: loader.yaml naming a running sandbox as `local`,
a schools workbook and its mapping."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openpyxl
import pytest

from helpers.apply import loader_yaml_for

SCHOOLS_SEED = {"institution-a": {"schools": [
    {"id": "00000000-0000-4000-8000-000000000001", "code": "SCI", "name": "Science"},
    {"id": "00000000-0000-4000-8000-000000000002", "code": "ENG", "name": "Engineering"},
]}}
SCHOOLS_MAPPING = """version: 1
source: schools.xlsx
entities:
  schools:
    entity: school
    sheet: Schools
    key: [code]
    fields:
      code: Code
      name: Name
"""


def campus_mapping(policy: str = "keep") -> str:
    """SCHOOLS_MAPPING with a `Campus` custom attribute, both fields under `on_platform_edit: policy`."""
    return SCHOOLS_MAPPING.replace("      name: Name\n", f"""      name: {{column: Name, on_platform_edit: {policy}}}
      custom_attributes:
        Campus: {{column: Campus, on_platform_edit: {policy}}}
""")


def write_schools(path: Path, rows: list[tuple[str, str]]) -> None:
    book = openpyxl.Workbook()
    book.active.title = "Schools"
    book.active.append(["Code", "Name"])
    for row in rows:
        book.active.append(list(row))
    book.save(path)


def schools_project(tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`tmp_path` as the working directory: one update (SCI), one unchanged (ENG), one create (LAW)."""
    (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, "PROJECT_TEST_SECRET"), encoding="utf-8")
    monkeypatch.setenv("PROJECT_TEST_SECRET", sandbox.client_secret)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "schools.yaml").write_text(SCHOOLS_MAPPING, encoding="utf-8")
    write_schools(tmp_path / "schools.xlsx", [("SCI", "School of Science"), ("ENG", "Engineering"), ("LAW", "Law")])
    return tmp_path
