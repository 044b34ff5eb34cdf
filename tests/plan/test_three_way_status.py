"""An arrangement's `status` is compared three-way like any other managed field: a person's move
back (READY -> DRAFT) or deactivation is a kept platform edit, or a held conflict when the sheet
asks another status; never reverted, never an "illegal move" error that blocks the record's other
changes. The status path itself stays the executor's business.

Through the command line against a sandbox as a real server; the person edits with `staff-client`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openpyxl
import pytest
from helpers.apply import loader_yaml_for
from helpers.sandbox import Caller, fetch_token

from loader.cli import main
from loader.plan.model import Action, RecordPlan
from loader.plan.plan_file import read_plan_json
from loader.sandbox.server import SandboxOptions, serve_in_thread

ARRANGEMENTS = "/institution/articulation-arrangements"


def _mapping(policy: str | None) -> str:
    status = f"{{column: Status, on_platform_edit: {policy}}}" if policy else "Status"
    return ("version: 1\nsource: arrangements.xlsx\nentities:\n  arrangements:\n    entity: arrangement\n"
            "    sheet: Arrangements\n    key: [code]\n    fields:\n      code: Code\n      name: Name\n"
            f"      status: {status}\n")


def _sheet(root: Path, rows: list[tuple[str, str, str]], policy: str | None = None) -> None:
    book = openpyxl.Workbook()
    book.active.title = "Arrangements"
    book.active.append(["Code", "Name", "Status"])
    for row in rows:
        book.active.append(list(row))
    book.save(root / "arrangements.xlsx")
    (root / "arrangements.yaml").write_text(_mapping(policy), encoding="utf-8")


@pytest.fixture
def staff(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Caller]:
    """A project in `tmp_path` (the working directory) against a fresh sandbox; the person's caller."""
    with serve_in_thread(SandboxOptions(seed={"institution-a": {"arrangements": []}})) as sandbox, \
            httpx.Client(base_url=sandbox.base_url, timeout=30) as http:
        (tmp_path / "loader.yaml").write_text(
            loader_yaml_for(sandbox, "STATUS_TEST_SECRET", top="default_environment: local\n"), encoding="utf-8")
        monkeypatch.setenv("STATUS_TEST_SECRET", sandbox.client_secret)
        monkeypatch.delenv("GITHUB_ACTOR", raising=False)
        monkeypatch.chdir(tmp_path)
        yield Caller(http, fetch_token(sandbox.base_url, sandbox.staff_client_id, sandbox.staff_client_secret))


def _live(staff: Caller) -> dict[str, dict[str, Any]]:
    return {a["code"]: a for a in staff.all_pages(ARRANGEMENTS)}


def _move(staff: Caller, code: str, status: str) -> None:
    reply = staff.patch(f"{ARRANGEMENTS}/{_live(staff)[code]['id']}", {"status": status})
    assert reply.status_code == 200, reply.text


def _plan(root: Path) -> dict[str, RecordPlan]:
    assert main(["plan", "arrangements.yaml", "--out", "plan.json"]) == 0
    return {r.key[0]: r for r in read_plan_json(root / "plan.json").records()}


def test_a_persons_status_moves_are_kept_edits_or_held_conflicts(tmp_path: Path, staff: Caller) -> None:
    _sheet(tmp_path, [("A1", "One", "READY"), ("A2", "Two", "ACTIVE"), ("A3", "Three", "READY")])
    assert main(["apply", "arrangements.yaml", "--yes"]) == 0
    _move(staff, "A1", "DRAFT")     # moved back by a person
    _move(staff, "A2", "INACTIVE")  # deactivated by a person: no legal move back to ACTIVE
    _move(staff, "A3", "DRAFT")
    _sheet(tmp_path, [("A1", "One", "READY"), ("A2", "Two renamed", "ACTIVE"), ("A3", "Three", "ACTIVE")])

    plan = _plan(tmp_path)
    assert (plan["A1"].action, plan["A1"].status_path, [k.field for k in plan["A1"].kept]) == \
        (Action.UNCHANGED, (), ["status"])
    a2 = plan["A2"]
    assert not a2.errors, a2.errors
    assert (a2.action, a2.payload, a2.status_path, [k.field for k in a2.kept]) == \
        (Action.UPDATE, {"name": "Two renamed"}, (), ["status"])
    a3 = plan["A3"]
    assert (a3.action, a3.status_path, [c.field for c in a3.conflicts]) == (Action.UNCHANGED, (), ["status"])

    assert main(["apply", "arrangements.yaml", "--yes"]) == 0
    live = _live(staff)
    assert [(live[c]["name"], live[c]["status"]) for c in ("A1", "A2", "A3")] == \
        [("One", "DRAFT"), ("Two renamed", "INACTIVE"), ("Three", "DRAFT")]


def test_a_status_the_sheet_changes_is_still_moved_along_its_path(tmp_path: Path, staff: Caller) -> None:
    _sheet(tmp_path, [("A1", "One", "DRAFT")])
    assert main(["apply", "arrangements.yaml", "--yes"]) == 0
    _sheet(tmp_path, [("A1", "One", "ACTIVE")])
    plan = _plan(tmp_path)
    assert (plan["A1"].action, plan["A1"].status_path) == (Action.UPDATE, ("READY", "ACTIVE"))
    assert main(["apply", "arrangements.yaml", "--yes"]) == 0
    assert _live(staff)["A1"]["status"] == "ACTIVE"
    assert _plan(tmp_path)["A1"].action is Action.UNCHANGED


def test_under_on_platform_edit_platform_a_persons_move_back_is_never_reverted(
        tmp_path: Path, staff: Caller) -> None:
    _sheet(tmp_path, [("A1", "One", "READY")], policy="platform")
    assert main(["apply", "arrangements.yaml", "--yes"]) == 0
    _move(staff, "A1", "DRAFT")
    _sheet(tmp_path, [("A1", "One", "ACTIVE")], policy="platform")
    plan = _plan(tmp_path)
    assert (plan["A1"].action, plan["A1"].status_path, [k.field for k in plan["A1"].kept]) == \
        (Action.UNCHANGED, (), ["status"])
