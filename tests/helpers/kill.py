"""A project whose apply the kill tests interrupt: schools and courses (each course refers to its
school) in one workbook, `python -m loader` in a child process, and the sandbox's write counter to
kill it at a chosen point."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import openpyxl

from helpers.apply import loader_yaml_for

MAPPING = """\
version: 1
source: source.xlsx
entities:
  schools:
    entity: school
    sheet: Schools
    key: [code]
    fields:
      code: School Code
      name: School Name
  courses:
    entity: course
    sheet: Courses
    key: [code]
    fields:
      code: Course Code
      name: Course Title
      parent: {ref: school, column: School Code}
"""
SECRET_VARIABLE = "KILL_TEST_SECRET"


def write_project(root: Path, sandbox: Any, schools: int, courses: int) -> None:
    """`root`'s workbook (schools K0…, courses KC0… spread over them), mapping and loader.yaml."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Schools"
    sheet.append(["School Code", "School Name"])
    for i in range(schools):
        sheet.append([f"K{i}", f"School {i}"])
    course_sheet = workbook.create_sheet("Courses")
    course_sheet.append(["Course Code", "Course Title", "School Code"])
    for i in range(courses):
        course_sheet.append([f"KC{i}", f"Course {i}", f"K{i % schools}"])
    workbook.save(root / "source.xlsx")
    (root / "curriculum.yaml").write_text(MAPPING, encoding="utf-8")
    (root / "loader.yaml").write_text(
        loader_yaml_for(sandbox, SECRET_VARIABLE, top="default_environment: local\nconcurrency: 8\n"),
        encoding="utf-8",
    )


def start_loader(root: Path, sandbox: Any, *argv: str) -> subprocess.Popen[str]:
    """`python -m loader ARGV` in `root`, in a child process of its own."""
    env = {**os.environ, SECRET_VARIABLE: sandbox.client_secret}
    env.pop("GITHUB_ACTOR", None)
    return subprocess.Popen(
        [sys.executable, "-m", "loader", *argv], cwd=root, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )


def wait_for_writes(sandbox: Any, at_least: int, limit_s: float = 60.0) -> None:
    """Until the sandbox has been sent `at_least` creates."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        posts = sum(n for route, n in sandbox.stats()["requests"].items() if route.startswith("POST /institution"))
        if posts >= at_least:
            return
        time.sleep(0.005)
    raise AssertionError("the apply never started writing")
