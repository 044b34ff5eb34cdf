"""Helpers of the planner's tests: plan real mapping files against a running sandbox."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openpyxl import Workbook

from loader import event_loop
from loader.api.client import ApiClient
from loader.config import Environment, load_config
from loader.environments import sandbox_environment
from loader.findings import Finding
from loader.plan.run import PlanRun, run_plan
from loader.source.block_rows import LeftOut
from loader.source.records import DesiredRecord

REPO = Path(__file__).resolve().parents[2]
SAMPLE_MAPPINGS = ("mappings/curriculum.yaml", "mappings/applicants.yaml", "mappings/arrangements.yaml")
SAMPLE_SEED = REPO / "samples" / "sandbox-seed.json"


@dataclass(frozen=True)
class Block:
    """The attributes of loader.records.BlockRecords the pure planner reads, for tests that build records."""

    block: str
    entity: str
    key_fields: tuple[str, ...]
    records: tuple[DesiredRecord, ...]
    source_file: str = "intake.xlsx"
    sheet: str | None = None
    findings: tuple[Finding, ...] = ()
    header_row: int = 1
    encoding: str | None = None
    delimiter: str | None = None
    left_out: tuple[LeftOut, ...] = ()


def environment_for(sandbox: Any) -> Environment:
    return sandbox_environment(sandbox, timeout=30.0)


def plan_against(sandbox: Any, mappings: Sequence[str | Path]) -> PlanRun:
    """Plan `mappings` (paths as the user gives them, relative to the working directory)."""
    config = load_config(None)
    env = environment_for(sandbox)

    async def go() -> PlanRun:
        async with ApiClient(env, config.profile) as client:
            return await run_plan([Path(m) for m in mappings], config=config, env=env, client=client, progress=False)

    return event_loop.run(go())  # as the plan command runs it


def copy_samples(dest: Path) -> Path:
    """The sample mappings and workbooks (and seed) under `dest`, as on a fresh checkout."""
    shutil.copytree(REPO / "mappings", dest / "mappings")
    shutil.copytree(REPO / "samples", dest / "samples", ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def write_workbook(path: Path, sheets: Mapping[str, Sequence[Sequence[Any]]]) -> Path:
    wb = Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(list(row))
    wb.save(path)
    return path
