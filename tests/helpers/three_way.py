"""A small world for the three-way plan's tests: a running sandbox with two clients (the loader's,
and `staff-client` for a person editing in the platform), schools loaded by "an apply" whose history
is written through the history's own API, and plans of a schools mapping against that history."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openpyxl

from helpers.plan import environment_for
from helpers.sandbox import Caller, fetch_token
from loader import event_loop
from loader.api.client import ApiClient
from loader.config import load_config
from loader.history.journal import FieldWrite
from loader.history.lines import Owner
from loader.history.store import History
from loader.plan.model import Plan, RecordPlan
from loader.plan.run import run_plan
from loader.sandbox.options import SandboxOptions
from loader.sandbox.server import RunningSandbox, serve_in_thread

SCHOOLS = "/institution/catalogue/schools"
SCHOOLS_OWNER = Owner("schools.yaml", "schools")


def schools_mapping(block: str = "schools", *, sheet: str = "Schools", extra: str = "",
                    name_policy: str | None = None, labels: bool = False) -> str:
    name = f"{{column: Name, on_platform_edit: {name_policy}}}" if name_policy else "Name"
    faculty = "\n      custom_attributes:\n        Faculty: Faculty" if labels else ""
    return (f"version: 1\nsource: schools.xlsx\nentities:\n  {block}:\n    entity: school\n    sheet: {sheet}\n"
            f"{extra}    key: [code]\n    fields:\n      code: Code\n      name: {name}{faculty}\n")


@dataclass
class World:
    sandbox: RunningSandbox
    folder: Path  # the project directory (the working directory)
    loader: Caller
    staff: Caller

    def history(self) -> History:
        return History.open(self.folder / "history")

    def load(self, rows: Iterable[Mapping[str, Any]], owner: Owner = SCHOOLS_OWNER,
             *, journal: bool = True) -> dict[str, str]:
        """Create or update schools as the loader, as an apply would, journaling each write (unless
        `journal` is false: an apply whose history was lost). Code -> live id."""
        ids = {}
        history = self.history()
        writer = history.begin_apply("sandbox", plan_digest=None, by="test")
        live = {s["code"]: s for s in self.loader.all_pages(SCHOOLS)}
        for row in rows:
            body = dict(row)
            found = live.get(body["code"])
            if found is None:
                answer, kind = self.loader.create(SCHOOLS, body), "create"
            else:
                reply = self.loader.patch(f"{SCHOOLS}/{found['id']}", body)
                assert reply.status_code == 200, reply.text
                answer, kind = reply.json()["data"], "update"
            updated = answer["metadata"]["updated"]
            writes = [FieldWrite(name, owner, after=value) for name, value in body.items()
                      if name != "custom_attributes"]
            writes += [FieldWrite(f"custom_attributes.{label}", owner, after=value)
                       for label, value in (body.get("custom_attributes") or {}).items()]
            writer.record(kind, "school", (body["code"],), answer["id"], writes,
                          updated=(updated["time"], updated["user"]["id"]))
            ids[body["code"]] = answer["id"]
        if journal:
            history.finish_apply(writer)
        else:
            writer.close()
            writer.path.unlink()
        return ids

    def edit(self, live_id: str, body: Mapping[str, Any]) -> None:
        """A person changes a school in the platform's own interface."""
        reply = self.staff.patch(f"{SCHOOLS}/{live_id}", dict(body))
        assert reply.status_code == 200, reply.text

    def sheet(self, rows: Sequence[Sequence[Any]], *, mapping: str | None = None, name: str = "schools.yaml",
              sheet: str = "Schools", faculty: bool = False) -> Path:
        book = openpyxl.Workbook()
        book.active.title = sheet
        book.active.append(["Code", "Name", *(["Faculty"] if faculty else [])])
        for row in rows:
            book.active.append(list(row))
        book.save(self.folder / "schools.xlsx")
        path = self.folder / name
        path.write_text(mapping or schools_mapping(labels=faculty), encoding="utf-8")
        return path

    def plan(self, *mappings: str, history: History | None = None, service_user_ids: Sequence[str] = ()) -> Plan:
        config = load_config(None)
        env = environment_for(self.sandbox)
        opened = history if history is not None else self.history()

        async def go() -> Plan:
            async with ApiClient(env, config.profile) as client:
                run = await run_plan([Path(m) for m in mappings or ("schools.yaml",)], config=config, env=env,
                                     client=client, progress=False, history=opened,
                                     service_user_ids=service_user_ids)
                return run.plan

        return event_loop.run(go())


@contextmanager
def world(tmp_path: Path, seed: Mapping[str, Any] | None = None) -> Iterator[World]:
    with serve_in_thread(SandboxOptions(seed=dict(seed or {"institution-a": {"schools": []}}))) as sandbox, \
            httpx.Client(base_url=sandbox.base_url, timeout=30) as http:
        loader = Caller(http, fetch_token(sandbox.base_url, sandbox.client_id, sandbox.client_secret))
        staff = Caller(http, fetch_token(sandbox.base_url, sandbox.staff_client_id, sandbox.staff_client_secret))
        yield World(sandbox, tmp_path, loader, staff)


def record_of(plan: Plan, code: str) -> RecordPlan:
    return next(r for r in plan.records() if r.key == (code,))
