"""`loader pull ENTITY... --out FILE.xlsx [--format json]`: export live records to a workbook.

The text output (or with `--format json` the one JSON document, schemas/output.schema.json) says how
many records of each entity the workbook holds; the values are in the workbook only.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loader import event_loop
from loader.config import Config
from loader.environments import open_environment
from loader.errors import UsageError
from loader.files.outputs import check_output
from loader.profile import Profile
from loader.report.pull_table import records_to_table
from loader.report.pull_workbook import write_pull_workbook
from loader.words import plural


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("entities", nargs="+", metavar="ENTITY", help="entities to export (e.g. course subject)")
    parser.add_argument("--env", metavar="NAME", help="environment (default: default_environment, else sandbox)")
    parser.add_argument("--out", metavar="FILE.xlsx", required=True, help="workbook to write (one sheet per entity)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text (default); json: one JSON document on stdout (schemas/output.schema.json)")


def _check_entities(names: list[str], profile: Profile) -> list[str]:
    unknown = [n for n in names if n not in profile.entities]
    if unknown:
        raise UsageError(
            f"unknown entity {unknown[0]!r}", hint=f"use one of: {', '.join(sorted(profile.entities))}"
        )
    return list(dict.fromkeys(names))


@dataclass(frozen=True)
class PullRequest:
    entities: tuple[str, ...]
    env: str | None
    out: Path
    output: str = "text"  # --format


def request_from(args: argparse.Namespace) -> PullRequest:
    out = Path(args.out)
    if out.suffix.lower() not in {".xlsx", ".xlsm"}:
        raise UsageError(f"--out {out}: expected a .xlsx file")
    check_output(out, "--out")  # before fetching: the records would be lost at the end
    return PullRequest(tuple(args.entities), args.env, out, args.format)


def run(request: PullRequest, config: Config) -> int:
    entities = _check_entities(list(request.entities), config.profile)
    from loader.api.client import ApiClient

    async def fetch() -> dict[str, list[dict[str, Any]]]:
        with open_environment(config, request.env) as env:
            async with ApiClient(env, config.profile) as client:
                return await client.fetch_collections(entities)

    live = event_loop.run(fetch())
    tables = [records_to_table(name, live[name]) for name in entities]
    write_pull_workbook(request.out, tables)
    if request.output == "json":
        from loader.report.machine import dumps, pull_document

        print(dumps(pull_document(str(request.out), [(table.name, len(table.rows)) for table in tables])))
        return 0
    for table in tables:
        print(f"{table.name}: {plural(len(table.rows), 'record')}")
    print(f"wrote {request.out}")
    return 0
