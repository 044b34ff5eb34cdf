"""Live data through list requests only: exactly ceil(n / 100) list requests per collection + one token."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
from helpers.plan import plan_against, write_workbook

from loader.sandbox.server import SandboxOptions, serve_in_thread

SUBJECTS = 250
COURSES = 100


def _seed() -> dict:
    schools = [{"id": "00000000-0000-4000-8000-000000000001", "code": "SCI", "name": "Science"}]
    courses = [{"id": f"00000000-0000-4000-8001-{n:012d}", "code": f"C{n:04d}", "name": f"Course {n}",
                "parent": {"id": schools[0]["id"]}} for n in range(COURSES)]
    subjects = [{"code": f"S{n:04d}", "name": f"Subject {n}", "parent": {"id": courses[n % COURSES]["id"]}}
                for n in range(SUBJECTS)]
    return {"institution-a": {"schools": schools, "courses": courses, "subjects": subjects}}


@pytest.fixture
def subjects_mapping(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    rows = [["Code", "Name", "Course"]]
    rows += [[f"S{n:04d}", f"Subject {n}" + (" (renamed)" if n % 50 == 0 else ""), f"C{n % COURSES:04d}"]
             for n in range(SUBJECTS + 30)]
    write_workbook(tmp_path / "subjects.xlsx", {"Subjects": rows})
    mapping = tmp_path / "subjects.yaml"
    mapping.write_text(
        "version: 1\nsource: subjects.xlsx\nentities:\n  subjects:\n    entity: subject\n    sheet: Subjects\n"
        "    key: [code]\n    fields:\n      code: Code\n      name: Name\n"
        "      parent: {ref: course, column: Course}\n",
        encoding="utf-8",
    )
    return mapping


def test_a_plan_pages_each_collection_once_with_list_requests_only(subjects_mapping: Path) -> None:
    with serve_in_thread(SandboxOptions(seed=_seed())) as sandbox:
        sandbox.reset_stats()
        run = plan_against(sandbox, ["subjects.yaml"])
        requests = sandbox.stats()["requests"]
    assert run.plan.has_errors is False
    counts = Counter(rec.action.value for rec in run.plan.records())
    assert counts == {"create": 30, "update": SUBJECTS // 50, "unchanged": SUBJECTS - SUBJECTS // 50}
    # The subjects' own collection, the courses they refer to, and every curriculum type (codes are
    # unique across all four): each paged once, 100 a page; an empty collection costs one request.
    expected = {
        "GET /institution/catalogue/subjects": math.ceil(SUBJECTS / 100),
        "GET /institution/catalogue/courses": math.ceil(COURSES / 100),
        "GET /institution/catalogue/schools": 1,
        "GET /institution/catalogue/programs": 1,
    }
    token = [k for k in requests if k.startswith("POST /realms/")]
    assert {k: v for k, v in requests.items() if k not in token} == expected
    assert [requests[k] for k in token] == [1]
    assert run.request_counts["GET"] == sum(expected.values()) and run.request_counts["token"] == 1
    assert run.live_counts["subject"] == SUBJECTS and run.live_counts["program"] == 0
