"""Plan wall time, requests and peak memory for 10,000 and 100,000 desired records.

    python tests/benchmarks/bench_plan.py [--sizes 10000 100000] [--latency-ms 20] [--out /tmp/bench_plan]
                                          [--baseline DIR] [--history [--reuse-history]]

Mixed entities (schools, courses, programs, subjects, applicants, credentials) in two workbooks,
planned against the sandbox running in a subprocess with injected latency, its live state holding
70% of the records (a tenth of those with another name). Each size is planned in a fresh child
process, so its peak RSS is the planner's alone. Prints reading / fetching / diffing / wall times
(reading and fetching overlap), the fetch floor (pages of the largest collection x latency) and the
plan's ratio to it, the CPU time of the planner and of its reading child (wall time on a shared
machine mostly measures the neighbours), list requests per collection (against ceil(n / 100)), peak
RSS of the planner and of the reading child, the largest sum of both sampled every 50 ms (what the
machine held at once: their peaks need not meet), and the load average while it ran. After the plans, a
bare aiohttp loop pages the largest collection against the same sandbox: the plan's ratio to it is
the loader's own share, the bare loop's to the floor the sandbox's and the machine's. `--baseline DIR`
plans with another source tree first (`git archive <commit> | tar -x -C DIR`, with
`ln -s DIR/schemas DIR/loader/schemas`), against the same sandbox, so both rows share one run.
The sandbox's database is seeded once per size (OUT/<n>/seeded.sqlite3) and copied for each run.
`--history` plans three-way: first (this tree) a `loader history baseline` of the live state, then
a person's edits through the sandbox's staff client to 1 in 100 live subjects (half of them records
the sheet also changes: conflicts; half kept platform edits); prints the share compared three-way.
`--reuse-history` takes the history and edited database an earlier `--history` run left in OUT/<n>
(making them at 1,000,000 records takes many minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import math
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

SHARES = {"school": 0.005, "course": 0.02, "program": 0.075, "subject": 0.5, "applicant": 0.25, "credential": 0.15}
LIVE_SHARE = 0.7
CURRICULUM = ("school", "course", "program", "subject")
HISTORY_KEY = b"bench_plan history key: not a secret"
MAPPINGS = ("curriculum.yaml", "applicants.yaml")


def _counts(n: int) -> dict[str, int]:
    return {entity: max(1, int(n * share)) for entity, share in SHARES.items()}


def _uid(kind: int, n: int) -> str:
    return f"00000000-0000-4000-{0x8000 + kind:04x}-{n:012d}"


def generate(n: int, out: Path) -> Path:
    """Workbooks, mappings and the seed for n desired records under out/<n>/ (reused when present)."""
    from openpyxl import Workbook

    root = out / str(n)
    if (root / "done").exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    c = _counts(n)
    codes = {
        "school": [f"SC{i:05d}" for i in range(c["school"])],
        "course": [f"CO{i:06d}" for i in range(c["course"])],
        "program": [f"PR{i:06d}" for i in range(c["program"])],
        "subject": [f"SU{i:07d}" for i in range(c["subject"])],
    }
    parent_of = {"course": "school", "program": "course", "subject": "program"}
    wb = Workbook(write_only=True)
    for entity in CURRICULUM:
        ws = wb.create_sheet(entity.title() + "s")
        ws.append(["Code", "Name", "Parent", "Level"])
        parents = codes.get(parent_of.get(entity, ""), [])
        for i, code in enumerate(codes[entity]):
            ws.append([code, f"{entity.title()} {i}", parents[i % len(parents)] if parents else None, str(i % 5)])
    wb.save(root / "curriculum.xlsx")
    wb = Workbook(write_only=True)
    ws = wb.create_sheet("Applicants")
    ws.append(["ID", "First", "Last", "Email", "Deliveries"])
    for i in range(c["applicant"]):
        ws.append([f"A{i:07d}", "Given", f"Family{i}", f"a{i}@example.com", "Online;On campus"])
    ws = wb.create_sheet("Credentials")
    ws.append(["Applicant", "Type", "Name", "Result"])
    for i in range(c["credential"]):
        ws.append([f"A{i % c['applicant']:07d}", "TERTIARY", f"Diploma {i}", str(i % 7)])
    wb.save(root / "applicants.xlsx")
    blocks = "\n".join(
        f"  {e}s:\n    entity: {e}\n    sheet: {e.title()}s\n    key: [code]\n    fields:\n      code: Code\n"
        f"      name: Name\n" + (f"      parent: {{ref: {parent_of[e]}, column: Parent}}\n" if e in parent_of else "")
        + "      custom_attributes:\n        Level: {column: Level, type: string}\n"
        for e in CURRICULUM
    )
    (root / "curriculum.yaml").write_text(f"version: 1\nsource: curriculum.xlsx\nentities:\n{blocks}", encoding="utf-8")
    (root / "applicants.yaml").write_text(
        "version: 1\nsource: applicants.xlsx\nentities:\n"
        "  applicants:\n    entity: applicant\n    sheet: Applicants\n    key: [external_id]\n    fields:\n"
        "      external_id: ID\n      first_name: {column: First, pii: true}\n"
        "      last_name: {column: Last, pii: true}\n"
        "      email_address: {column: Email, pii: true}\n      eligible_deliveries: {column: Deliveries, split: ';'}\n"
        "  credentials:\n    entity: credential\n    sheet: Credentials\n    key: [applicant_id, type, name]\n"
        "    fields:\n      applicant_id: {ref: applicant, column: Applicant}\n      type: Type\n      name: Name\n"
        "      result: {column: Result, type: string}\n",
        encoding="utf-8",
    )
    seed: dict[str, list[dict[str, Any]]] = {}
    for kind, entity in enumerate(CURRICULUM):
        live = []
        for i, code in enumerate(codes[entity][: int(len(codes[entity]) * LIVE_SHARE)]):
            rec: dict[str, Any] = {"id": _uid(kind, i), "code": code,
                                   "name": f"{entity.title()} {i}" + (" (old)" if i % 10 == 0 else ""),
                                   "custom_attributes": {"Level": str(i % 5)}}
            if entity in parent_of:
                parent = parent_of[entity]
                live_parents = int(len(codes[parent]) * LIVE_SHARE) or 1
                rec["parent"] = {"id": _uid(CURRICULUM.index(parent), i % len(codes[parent]) % live_parents)}
            live.append(rec)
        seed[entity + "s"] = live
    seed["applicants"] = [
        {"id": _uid(10, i), "external_id": f"A{i:07d}", "first_name": "Given", "last_name": f"Family{i}",
         "email_address": f"a{i}@example.com" if i % 10 else "old@example.com",
         "eligible_deliveries": ["On campus", "Online"]}
        for i in range(int(c["applicant"] * LIVE_SHARE))
    ]
    (root / "seed.json").write_text(json.dumps({"institution-a": seed}), encoding="utf-8")
    (root / "done").write_text("", encoding="utf-8")
    return root


def _run(main: Any) -> Any:
    """As the CLI runs it (a baseline tree older than loader.event_loop.run: asyncio.run)."""
    try:
        from loader.event_loop import run
    except ImportError:
        return asyncio.run(main)
    return run(main)


_TUNED: list[Any] = []


def _as_the_command_line() -> None:
    """What `loader`'s command line does around a command (`loader.cli.main`), for this whole child
    process: the collector off (`loader.cli.tuned_interpreter`); in a tree before it, that tree's
    allocator setting, if it has one."""
    import importlib

    cli = importlib.import_module("loader.cli")
    if hasattr(cli, "tuned_interpreter"):
        _TUNED.append(cli.tuned_interpreter())  # held, and left entered: the process ends with the plan
        _TUNED[-1].__enter__()
        return
    try:
        memory = importlib.import_module("loader.memory")
    except ImportError:
        return
    memory.return_freed_memory()


def _environment(base_url: str) -> Any:
    from loader.config import Environment, Secret

    return Environment(name="sandbox", base_url=base_url, auth_url=base_url, realm="sandbox",
                       expect_environment="sandbox", client_id="sandbox-client",
                       client_secret=Secret("sandbox-secret"), timeout=60.0)


def _opener(root: Path) -> Any:
    from loader.history.store import History

    return lambda personal: History.open(root / "history", history_key=HISTORY_KEY, personal=personal)


def child(root: Path, base_url: str, history: bool = False) -> None:
    """Plan in this process and print the figures as JSON (run by the parent, one size per process)."""
    import os

    os.chdir(root)
    from loader.api.client import ApiClient
    from loader.config import load_config
    from loader.plan.run import run_plan

    _as_the_command_line()
    config = load_config(None)
    env = _environment(base_url)
    options: dict[str, Any] = {"history_opener": _opener(root)} if history else {}
    parameters = inspect.signature(run_plan).parameters
    for name in ("keep_sources", "keep_records"):  # as `loader plan` plans (its name in the tree before: keep_records)
        if name in parameters:
            options[name] = False

    async def go() -> Any:
        async with ApiClient(env, config.profile) as client:
            return await run_plan([Path(m) for m in MAPPINGS], config=config, env=env,
                                  client=client, progress=False, **options)

    load = os.getloadavg()[0]
    started, cpu = time.perf_counter(), time.process_time()
    run = _run(go())
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    records = run.plan.records()
    print(json.dumps({
        "desired": len(records), "errors": sum(bool(r.errors) for r in records),
        "create": sum(r.action.value == "create" for r in records),
        "update": sum(r.action.value == "update" for r in records),
        "three_way": sum(r.history_line not in (None, "none") for r in records),
        "kept": sum(len(r.kept) for r in records), "conflicts": sum(len(r.conflicts) for r in records),
        "digest": run.plan.digest,
        "reading_s": run.reading_s, "fetching_s": run.fetching_s, "diffing_s": run.diffing_s,
        "digesting_s": getattr(run, "digesting_s", 0.0),
        "plan_s": run.total_s, "wall_s": wall, "live": dict(run.live_counts), "requests": dict(run.request_counts),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "cpu_s": cpu, "reader_child_cpu_s": children.ru_utime + children.ru_stime,
        "reader_child_rss_mb": children.ru_maxrss / 1024, "load": (load + os.getloadavg()[0]) / 2,
    }))


def child_history(root: Path, base_url: str) -> None:
    """Make the history the three-way plans compare against: a baseline of the live state (as `loader
    history baseline` records it), then a person's edits to 1 in 100 live subjects through the staff client."""
    import os
    import shutil

    import httpx

    os.chdir(root)
    from loader.api.client import ApiClient
    from loader.config import load_config
    from loader.history.baseline import record_baseline
    from loader.history.personal import personal_entities
    from loader.plan.baseline import baseline_of
    from loader.plan.run import run_plan
    from loader.sandbox.options import REALM
    from loader.source.sources import load_mappings

    shutil.rmtree(root / "history", ignore_errors=True)
    config = load_config(None)
    env = _environment(base_url)
    paths = [Path(m) for m in MAPPINGS]
    history = _opener(root)(personal_entities(load_mappings(paths, config.profile), config.profile))

    async def plan_and_fetch() -> Any:
        async with ApiClient(env, config.profile) as client:
            planned = await run_plan(paths, config=config, env=env, client=client, progress=False)
            return planned, await client.fetch_collections(sorted({b.entity for b in planned.plan.blocks}))

    planned, live = _run(plan_and_fetch())
    blocks = baseline_of(planned.plan, planned.sources, live, config.profile)
    recorded = record_baseline(history, blocks, "sandbox", by="bench")
    form = {"grant_type": "client_credentials", "client_id": "staff-client", "client_secret": "staff-secret"}
    token = httpx.post(f"{base_url}/realms/{REALM}/protocol/openid-connect/token", data=form).json()["access_token"]
    path = config.profile.entity("subject").path
    edits = [(r["id"], r["name"]) for r in live["subject"] if int(r["code"][2:]) % 200 in (0, 5)]

    async def edit() -> None:
        limit = asyncio.Semaphore(16)
        async with httpx.AsyncClient(base_url=base_url, headers={"Authorization": f"Bearer {token}"}) as http:
            async def one(live_id: str, name: str) -> None:
                async with limit:
                    (await http.patch(f"{path}/{live_id}", json={"name": name + " (edited)"})).raise_for_status()
            await asyncio.gather(*(one(i, n) for i, n in edits))

    asyncio.run(edit())
    print(json.dumps({"baseline_records": recorded, "platform_edits": len(edits)}))


def child_read(root: Path) -> None:
    """Only read the sources (no service), to tell the reader's share of the peak RSS."""
    import os

    os.chdir(root)
    from loader.config import load_config
    from loader.source.sources import read_sources

    started = time.perf_counter()
    read_sources([Path("curriculum.yaml"), Path("applicants.yaml")], load_config(None).profile)
    print(json.dumps({"read_alone_s": time.perf_counter() - started,
                      "read_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def child_bare(base_url: str, entity: str) -> None:
    """Page one collection with a bare aiohttp loop (orjson, no checks, no retries, nothing kept): what
    this sandbox and machine give any client for the chain of pages the plan waits for."""
    import aiohttp
    import httpx
    import orjson

    from loader.config import load_config
    from loader.sandbox.options import REALM

    path = load_config(None).profile.entity(entity).path
    form = {"grant_type": "client_credentials", "client_id": "sandbox-client", "client_secret": "sandbox-secret"}
    token = httpx.post(f"{base_url}/realms/{REALM}/protocol/openid-connect/token", data=form).json()["access_token"]

    async def pages() -> tuple[float, int]:
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as session:
            started, count, records = time.perf_counter(), 0, 0
            params: dict[str, str] = {}
            while True:
                async with session.get(base_url + path, params=params) as answer:
                    body = orjson.loads(await answer.read())
                count, records = count + 1, records + len(body["data"])
                if not body.get("page_token") or not body["data"] or records >= body["total"]:  # as the loader stops
                    return time.perf_counter() - started, count
                params = {"page_token": body["page_token"]}

    seconds, count = asyncio.run(pages())
    print(json.dumps({"bare_s": seconds, "bare_pages": count}))


class RssSampler:
    """The resident memory of a process and its descendants (the reading children), summed at each
    sample every `every` seconds from /proc: `peak_mb` is the largest sum, what the machine had to hold
    at one moment (not the sum of each process's own peak)."""

    def __init__(self, pid: int, every: float = 0.05):
        self._pid, self._every = pid, every
        self._stop = threading.Event()
        self.peak_mb = 0.0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak_mb

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_mb = max(self.peak_mb, sum(map(_rss_kb, _family(self._pid))) / 1024)
            self._stop.wait(self._every)


def _family(pid: int) -> list[int]:
    """pid and its descendants (each thread's children, from /proc/<pid>/task/<tid>/children)."""
    family, at = [pid], 0
    while at < len(family):
        try:
            for task in Path(f"/proc/{family[at]}/task").iterdir():
                family += map(int, (task / "children").read_text().split())
        except OSError:
            pass  # gone meanwhile
        at += 1
    return family


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _sampled(command: list[str], env: dict[str, str]) -> tuple[str, float]:
    """Run `command`, sampling its and its children's RSS together: its stdout and the peak sum (MB)."""
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as child:
        sampler = RssSampler(child.pid)
        out, err = child.communicate()
        peak = sampler.stop()
    if child.returncode:
        raise subprocess.CalledProcessError(child.returncode, command, out, err)
    return out, peak


def _seeded(root: Path) -> Path:
    """A database seeded with root/seed.json once, copied for each run (plans write nothing): seeding
    700,000 records takes minutes on a busy machine, more than the sandbox's startup allows."""
    from loader.sandbox import server

    seeded = root / "seeded.sqlite3"
    if not seeded.exists():
        making = root / "seeding.sqlite3"
        _copy_database(None, making)
        server.STARTUP_TIMEOUT_S = max(server.STARTUP_TIMEOUT_S, 3600.0)
        with server.serve_in_subprocess(server.SandboxOptions(data=str(making), seed=str(root / "seed.json"))):
            pass
        _copy_database(making, seeded)
        _copy_database(None, making)
    return seeded


def _copy_database(source: Path | None, target: Path) -> None:
    """SQLite database `source` (with its write-ahead log, if any) copied to `target`; None: `target` removed."""
    import shutil

    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
        if source is not None and Path(f"{source}{suffix}").exists():
            shutil.copyfile(f"{source}{suffix}", f"{target}{suffix}")


def measure(n: int, out: Path, latency_ms: int, baseline: Path | None = None,
            history: bool = False, reuse_history: bool = False) -> list[dict[str, Any]]:
    """The figures of one plan of size n; with `baseline` (a source tree), first the baseline's plan
    against the same sandbox, then this tree's, side by side in one run. `reuse_history`: the history
    and the edited database of an earlier `--history` run of this size (OUT/<n>/edited.sqlite3), if any."""
    import os

    from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_subprocess

    root = generate(n, out)
    db, edited = root / "sandbox.sqlite3", root / "edited.sqlite3"
    reused = history and reuse_history and edited.exists() and (root / "history").exists()
    _copy_database(edited if reused else _seeded(root), db)
    options = SandboxOptions(data=str(db), seed=str(root / "seed.json"), faults=FaultOptions(latency_ms=latency_ms))
    runs: list[dict[str, Any]] = []
    trees = [("baseline", {**os.environ, "PYTHONPATH": str(baseline)})] if baseline else []
    trees.append(("this tree", dict(os.environ)))
    with serve_in_subprocess(options) as sandbox:
        if history and not reused:
            done = subprocess.run([sys.executable, __file__, "--child-history", str(root), sandbox.base_url],
                                  capture_output=True, text=True, check=True)
            print(f"         history: {done.stdout.strip().splitlines()[-1]}", flush=True)
            _copy_database(db, edited)
        elif reused:
            print(f"         history: reused from an earlier run ({edited})", flush=True)
        for label, environ in trees:
            sandbox.reset_stats()
            printed, combined = _sampled([sys.executable, __file__, "--child", str(root), sandbox.base_url,
                                          *(["--history"] if history else [])], environ)
            figures = json.loads(printed.strip().splitlines()[-1])
            figures["combined_rss_mb"] = combined
            figures["sandbox_requests"] = sandbox.stats()["requests"]
            figures["label"] = label
            runs.append(figures)
        largest = max(runs[-1]["live"].items(), key=lambda item: item[1])[0]
        done = subprocess.run([sys.executable, __file__, "--child-bare", sandbox.base_url, largest],
                              capture_output=True, text=True, check=True)
        bare = json.loads(done.stdout.strip().splitlines()[-1])
    for figures in runs:
        figures.update(bare)
    done = subprocess.run([sys.executable, __file__, "--child-read", str(root)], capture_output=True, text=True,
                          check=True)
    for figures in runs:
        figures.update(json.loads(done.stdout.strip().splitlines()[-1]))
    return runs


def _print_three_way(f: dict[str, Any]) -> None:
    print(f"         {f['label']}: {f['three_way']} of {f['desired']} records compared three-way "
          f"({f['three_way'] / max(1, f['desired']):.0%}); {f['update']} updates, {f['kept']} kept "
          f"platform edits, {f['conflicts']} conflicts; digest {f['digest']}")


def _over(seconds: float, floor: float) -> str:
    """`seconds` as a multiple of the fetch floor (none without latency: `--latency-ms 0`)."""
    return f"{seconds / floor:>10.2f}" if floor else f"{'-':>10}"


def main() -> int:
    parser = argparse.ArgumentParser(description="plan benchmark")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench_plan"))
    parser.add_argument("--baseline", type=Path, help="a source tree (`git archive`) planned first, side by side")
    parser.add_argument("--history", action="store_true", help="plan three-way against a history (see above)")
    parser.add_argument("--reuse-history", action="store_true",
                        help="with --history: reuse the history and edited database an earlier run left in OUT/<n>")
    parser.add_argument("--child-history", nargs=2, metavar=("ROOT", "BASE_URL"), help=argparse.SUPPRESS)
    parser.add_argument("--child", nargs=2, metavar=("ROOT", "BASE_URL"), help=argparse.SUPPRESS)
    parser.add_argument("--child-read", metavar="ROOT", help=argparse.SUPPRESS)
    parser.add_argument("--child-bare", nargs=2, metavar=("BASE_URL", "ENTITY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), args.child[1], args.history)
        return 0
    if args.child_history:
        child_history(Path(args.child_history[0]), args.child_history[1])
        return 0
    if args.child_bare:
        child_bare(*args.child_bare)
        return 0
    if args.child_read:
        child_read(Path(args.child_read))
        return 0
    both = f"; baseline tree {args.baseline} first, then this tree, against the same sandbox" if args.baseline else ""
    print(f"sandbox in a subprocess, {args.latency_ms} ms latency per request; a fresh planner process per size{both}")
    print("floor = pages of the largest collection x latency (pages are chained by tokens); CPU = the planner "
          "process's, and its reading child's; load = 1-min load average while it ran")
    print("RSS MB = the planner's peak, reader RSS MB its reading child's; together MB = the largest sum of "
          "the planner's and its children's RSS sampled every 50 ms (what the machine held at once)")
    print("diff s = the parts' diffs, some while pages still arrive; after fetch s = the plan's time after the last "
          "page (the diff and digest not overlapped)")
    print("bare s = a bare aiohttp loop paging the largest collection against the same sandbox, after the plans "
          "(what any client gets from this sandbox and machine)")
    print(f"{'tree':>9} {'desired':>8} {'read s':>7} {'fetch s':>8} {'diff s':>7} {'digest s':>8} "
          f"{'after fetch s':>13} {'plan s':>7} "
          f"{'floor s':>7} "
          f"{'plan/floor':>10} {'bare s':>6} {'bare/floor':>10} {'plan/bare':>9} "
          f"{'CPU s':>6} {'reader CPU s':>12} {'GETs':>6} {'min GETs':>8} {'token':>5} "
          f"{'RSS MB':>6} {'reader RSS MB':>13} {'together MB':>11} {'load':>5}")
    for n in args.sizes:
        for f in measure(n, args.out, args.latency_ms, args.baseline, args.history, args.reuse_history):
            pages = {entity: max(1, math.ceil(count / 100)) for entity, count in f["live"].items()}
            floor = max(pages.values()) * args.latency_ms / 1000
            gets = sum(v for k, v in f["sandbox_requests"].items() if k.startswith("GET "))
            token = sum(v for k, v in f["sandbox_requests"].items() if "openid-connect/token" in k)
            print(f"{f['label']:>9} {f['desired']:>8} {f['reading_s']:>7.2f} {f['fetching_s']:>8.2f} "
                  f"{f['diffing_s']:>7.2f} {f['digesting_s']:>8.2f} {f['plan_s'] - f['fetching_s']:>13.2f} "
                  f"{f['plan_s']:>7.2f} {floor:>7.2f} "
                  f"{_over(f['plan_s'], floor)} {f['bare_s']:>6.2f} {_over(f['bare_s'], floor)} "
                  f"{f['plan_s'] / f['bare_s']:>9.2f} "
                  f"{f['cpu_s']:>6.1f} {f['reader_child_cpu_s']:>12.1f} {gets:>6} {sum(pages.values()):>8} "
                  f"{token:>5} {f['peak_rss_mb']:>6.0f} {f['reader_child_rss_mb']:>13.0f} "
                  f"{f['combined_rss_mb']:>11.0f} {f['load']:>5.2f}",
                  flush=True)
            if args.history:
                _print_three_way(f)
        per = {k.split(" ", 1)[1]: v for k, v in sorted(f["sandbox_requests"].items()) if k.startswith("GET ")}
        print(f"         list requests per collection: {per}; live records: {f['live']}; errors: {f['errors']}")
        print(f"         reading alone (no fetching beside it): {f['read_alone_s']:.2f} s, "
              f"peak RSS {f['read_peak_rss_mb']:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
