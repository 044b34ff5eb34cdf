"""A project the fault tests of the history run: schools (code, name and a `Faculty` label) loaded
by the command line against a sandbox serving in a thread, whose faults (lost answers, 5xx, 429s)
are set between runs; a person editing in the platform through the sandbox's `staff-client`;
applies killed with SIGKILL at a chosen write (`python -m loader` in a child process of its own)."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openpyxl

from helpers.apply import loader_yaml_for
from helpers.project import SCHOOLS_MAPPING
from helpers.sandbox import Caller, fetch_token
from loader.cli import main
from loader.history.store import History
from loader.sandbox.server import FaultOptions, RunningSandbox, SandboxOptions, serve_in_thread

SCHOOLS = "/institution/catalogue/schools"
SECRET_VARIABLE = "FAULT_TEST_SECRET"
MAPPING = SCHOOLS_MAPPING + "      custom_attributes:\n        Faculty: Faculty\n"  # the schools' with a label
BEHIND = "the history is behind"
# Retries that outlast a burst of lost answers, with waits long enough to kill an apply between
# a write that landed and the look-up that would have journaled it.
RETRY = "    retry: {attempts: %d, wait_initial: 0.05, wait_max: 0.4}\n"
Row = tuple[str, str]  # (name, faculty)


@dataclass
class FaultProject:
    root: Path
    sandbox: RunningSandbox
    loader: Caller
    staff: Caller

    def sheet(self, rows: Mapping[str, Row]) -> None:
        """The workbook the mapping reads: one row per school code."""
        book = openpyxl.Workbook()
        book.active.title = "Schools"
        book.active.append(["Code", "Name", "Faculty"])
        for code, (name, faculty) in sorted(rows.items()):
            book.active.append([code, name, faculty])
        book.save(self.root / "schools.xlsx")

    def start(self, *argv: str) -> subprocess.Popen[str]:
        """`python -m loader ARGV` in the project, in a child process of its own."""
        env = {**os.environ, SECRET_VARIABLE: self.sandbox.client_secret}
        env.pop("GITHUB_ACTOR", None)
        return subprocess.Popen([sys.executable, "-m", "loader", *argv], cwd=self.root, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)

    def run(self, *argv: str) -> tuple[int, str]:
        """`loader ARGV` run to its end in this process (the command line's `main`, in the project,
        its secret set; a child process only where it is killed): (exit code, what it printed on
        stderr)."""
        err, out = io.StringIO(), io.StringIO()
        before = os.environ.get(SECRET_VARIABLE)
        os.environ[SECRET_VARIABLE] = self.sandbox.client_secret
        try:
            with contextlib.chdir(self.root), contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                code = main(list(argv))
        finally:
            if before is None:
                del os.environ[SECRET_VARIABLE]
            else:
                os.environ[SECRET_VARIABLE] = before
        return code, err.getvalue()

    def apply(self) -> tuple[int, str]:
        return self.run("apply", "schools.yaml", "--yes")

    def plan(self) -> tuple[int, str]:
        """`loader plan` writing plan.json."""
        return self.run("plan", "schools.yaml", "--out", "plan.json")

    def apply_killed(self, at_write: int, *, settle_s: float = 0.0, limit_s: float = 60.0) -> bool:
        """An apply killed with SIGKILL once the sandbox was sent `at_write` writes since it began
        (after `settle_s` more): whether it was killed (False: it ended first)."""
        start = self.writes()
        child = self.start("apply", "schools.yaml", "--yes")
        deadline = time.monotonic() + limit_s
        while child.poll() is None and self.writes() < start + at_write and time.monotonic() < deadline:
            time.sleep(0.002)
        if settle_s:
            time.sleep(settle_s)
        killed = child.poll() is None
        if killed:
            child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)
        return killed

    def writes(self) -> int:
        """The creates and updates the sandbox was sent."""
        requests = self.sandbox.stats()["requests"]
        return sum(n for route, n in requests.items() if route.startswith(("POST /institution", "PATCH /institution")))

    def faults(self, faults: FaultOptions | None = None) -> None:
        self.sandbox.set_faults(faults or FaultOptions())

    def live(self) -> dict[str, dict[str, Any]]:
        """The live schools by code (read again while the sandbox's faults fail a read)."""
        for _ in range(100):
            try:
                return {s["code"]: s for s in self.loader.all_pages(SCHOOLS)}
            except KeyError:  # a 5xx or a 429 answered instead of a page
                time.sleep(0.2)
        raise AssertionError("the live schools could not be read")

    def edit(self, code: str, body: Mapping[str, Any]) -> None:
        """A person changes a school in the platform's own interface (labels: merged over live's)."""
        found = self.live()[code]
        sent = dict(body)
        if "custom_attributes" in sent:
            sent["custom_attributes"] = {**(found.get("custom_attributes") or {}), **sent["custom_attributes"]}
        reply = self.staff.patch(f"{SCHOOLS}/{found['id']}", sent)
        assert reply.status_code == 200, reply.text

    def history(self) -> History:
        return History.open(self.root / "history" / "local", fold_leftovers=False)


def row_of(live: Mapping[str, Any]) -> Row:
    """A live school as the sheet's (name, faculty)."""
    return live["name"], (live.get("custom_attributes") or {}).get("Faculty", "")


@contextmanager
def fault_project(root: Path, *, concurrency: int = 4, attempts: int = 6) -> Iterator[FaultProject]:
    """A project in `root` against a fresh sandbox, with no fault set; `attempts` per request."""
    with serve_in_thread(SandboxOptions(seed={"institution-a": {"schools": []}})) as sandbox, \
            httpx.Client(base_url=sandbox.base_url, timeout=30) as http:
        (root / "schools.yaml").write_text(MAPPING, encoding="utf-8")
        (root / "loader.yaml").write_text(
            loader_yaml_for(sandbox, SECRET_VARIABLE, top=f"default_environment: local\nconcurrency: {concurrency}\n",
                            settings=RETRY % attempts), encoding="utf-8")
        loader = Caller(http, fetch_token(sandbox.base_url, sandbox.client_id, sandbox.client_secret))
        staff = Caller(http, fetch_token(sandbox.base_url, sandbox.staff_client_id, sandbox.staff_client_secret))
        yield FaultProject(root, sandbox, loader, staff)


FIELDS = ("name", "faculty")


@dataclass
class Expected:
    """What the project should converge to: the sheet, with every field a person edited last
    holding the person's value (under `on_platform_edit: keep` a platform edit is never
    overwritten: kept, or a held conflict when the sheet changes the field). Values are unique per
    change, so the sheet never catches up with a person by chance."""

    sheet: dict[str, Row]
    edits: dict[tuple[str, str], str]

    def edit(self, project: FaultProject, code: str, field: str, value: str) -> None:
        project.edit(code, {"name": value} if field == "name" else {"custom_attributes": {"Faculty": value}})
        self.edits[code, field] = value

    def change(self, project: FaultProject, code: str, field: str, value: str) -> None:
        name, faculty = self.sheet[code]
        self.add(project, code, (value, faculty) if field == "name" else (name, value))

    def add(self, project: FaultProject, code: str, row: Row) -> None:
        """A row of the sheet set (a new one: a school to create, every field set: a field the loader
        never wrote has no W, and is compared two-way)."""
        self.sheet[code] = row
        project.sheet(self.sheet)

    def wanted(self) -> dict[str, Row]:
        return {code: (self.edits.get((code, "name"), name), self.edits.get((code, "faculty"), faculty))
                for code, (name, faculty) in self.sheet.items()}

    def lost_edits(self, live: Mapping[str, Mapping[str, Any]]) -> list[str]:
        """The persons' edits not live."""
        return [f"{code}.{field}: {value!r}" for (code, field), value in sorted(self.edits.items())
                if row_of(live[code])[FIELDS.index(field)] != value]

    def converged(self, live: Mapping[str, Mapping[str, Any]]) -> bool:
        return {code: row_of(rec) for code, rec in live.items()} == self.wanted()


def converge(project: FaultProject, expected: Expected, *, tries: int = 4) -> list[str]:
    """Re-run `loader apply` (faults as they are) until live is what `expected` wants; the stderr
    of each run. Fails on a "the history is behind" refusal, or on no convergence."""
    runs = []
    for _ in range(tries):
        code, err = project.apply()
        runs.append(err)
        assert BEHIND not in err, err
        if code == 0 and expected.converged(project.live()):
            return runs
    live = {code: row_of(rec) for code, rec in project.live().items()}
    raise AssertionError(f"no convergence after {tries} applies: live {live}, wanted {expected.wanted()}\n"
                         + "\n".join(runs[-1:]))
