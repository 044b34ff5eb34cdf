"""Reading a 200,000-row x 12-column workbook: rows/s and peak memory per engine, and end to end.

    python tests/benchmarks/bench_sheets.py [--rows N] [--skip-slow]

Each engine runs in its own child process; peak memory is that child's maximum resident set
size, read by a wrapper process with getrusage(RUSAGE_CHILDREN) (tracemalloc cannot see Rust
allocations). The workbook is generated once into /tmp with openpyxl's write_only mode.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HEADER = ["Code", "Name", "School", "Points", "Fee", "Start", "Status", "Faculty", "Email", "Deliveries",
          "Notes", "Active"]

MAPPING = """\
version: 1
source: {source}
entities:
  applicants:
    entity: applicant
    sheet: Data
    where: {{column: Status, not_in: [Withdrawn]}}
    key: [external_id]
    fields:
      external_id: {{column: Code, transform: [strip]}}
      first_name: {{column: Name, transform: [strip, collapse_spaces]}}
      last_name: School
      email_address: {{column: Email, pii: true}}
      date_of_birth: Start
      eligible_deliveries: {{column: Deliveries, split: ";"}}
      custom_attributes:
        Points: Points
        Fee: Fee
        Faculty: Faculty
        Notes: Notes
        Active: {{column: Active, map: {{"TRUE": "yes", "FALSE": "no"}}}}
        Status: Status
"""


# The same rows read with `repeat` (two records a row: Name and School as two "groups") and with
# `collect` (on unique keys: the gathering path for every record; on 40 keys: 5,000 rows each).
MAPPING_REPEAT = """\
version: 1
source: {source}
entities:
  applicants:
    entity: applicant
    sheet: Data
    repeat: {{part: [Name, School]}}
    where: {{column: Status, not_in: [Withdrawn]}}
    key: [external_id]
    fields:
      external_id: {{template: "{{Code}}-{{part}}"}}
      first_name: {{column: "{{part}}", transform: [strip, collapse_spaces]}}
      last_name: School
      email_address: {{column: Email, pii: true}}
      date_of_birth: Start
      eligible_deliveries: {{column: Deliveries, split: ";"}}
      custom_attributes:
        Points: Points
        Fee: Fee
        Faculty: Faculty
        Notes: Notes
        Active: {{column: Active, map: {{"TRUE": "yes", "FALSE": "no"}}}}
        Status: Status
"""

MAPPING_COLLECT = MAPPING.replace("        Faculty: Faculty\n", "        Faculty: {{column: Faculty, collect: join}}\n")

MAPPING_COLLECT_40 = """\
version: 1
source: {source}
entities:
  schools:
    entity: school
    sheet: Data
    key: [code]
    fields:
      code: School
      custom_attributes:
        Faculties: {{column: Faculty, collect: join}}
        Codes: {{column: Code, collect: join}}
"""

MAPPINGS = {"end to end (read_sources)": MAPPING, "end to end, repeat x2": MAPPING_REPEAT,
            "end to end, collect (unique keys)": MAPPING_COLLECT, "end to end, collect (40 keys)": MAPPING_COLLECT_40}


def workbook_path(rows: int) -> Path:
    return Path(f"/tmp/loader-bench-{rows}.xlsx")


def generate(rows: int) -> Path:
    path = workbook_path(rows)
    if path.exists():
        return path
    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("Data")
    sheet.append(HEADER)
    start = dt.date(1990, 1, 1)
    for n in range(rows):
        sheet.append([
            f"{n:07d}", f"Applicant  {n} ", f"SCH{n % 40}", n % 480, round(n * 1.25, 2),
            start + dt.timedelta(days=n % 9000), "Withdrawn" if n % 50 == 0 else "Live", f"Faculty {n % 7}",
            f"a{n}@example.edu", "ONLINE;CAMPUS" if n % 3 else "ONLINE", "x" * (n % 20), n % 2 == 0,
        ])
    tmp = path.with_suffix(".tmp.xlsx")
    book.save(tmp)
    tmp.rename(path)
    return path


def _digest(rows: list[tuple[object, ...]]) -> str:
    return hashlib.sha256(repr(rows).encode()).hexdigest()[:12]


def work(engine: str, path: Path) -> dict[str, object]:
    """Runs in a child process: read the workbook with one engine, return counts and time."""
    started = time.perf_counter()
    digest = ""
    if engine == "calamine":
        import python_calamine

        sheet = python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_name("Data")
        count = sum(1 for _ in sheet.iter_rows()) - 1
    elif engine == "pandas+calamine":
        import pandas as pd

        count = len(pd.read_excel(path, sheet_name="Data", engine="calamine", dtype=str, keep_default_na=False))
    elif engine == "pandas+openpyxl":
        import pandas as pd

        count = len(pd.read_excel(path, sheet_name="Data", engine="openpyxl", dtype=str, keep_default_na=False))
    elif engine == "openpyxl read_only":
        import openpyxl

        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
        count = sum(1 for _ in book["Data"].iter_rows(values_only=True)) - 1
        book.close()
    elif engine in ("loader.sheets (calamine)", "loader.sheets (openpyxl)"):
        from loader.source.readers import read_sheet

        data = read_sheet(path, path.name, "Data", engine="openpyxl" if "openpyxl" in engine else "calamine")
        count = len(data.rows) - 1
        digest = _digest([r.values for r in data.rows])
    elif engine in MAPPINGS:
        from loader.profile import load_profile
        from loader.source.sources import read_sources

        mapping = Path(f"/tmp/loader-bench-{path.stem}-{len(engine)}.yaml")
        mapping.write_text(MAPPINGS[engine].format(source=path), encoding="utf-8")
        sources = read_sources([mapping], load_profile())
        block = sources.blocks[0]
        count = block.rows_read
        errors = sum(1 for f in block.findings if f.severity == "error")
        digest = f"{len(block.records)} records, {errors} errors"
    else:
        raise SystemExit(f"unknown engine {engine}")
    return {"rows": count, "seconds": time.perf_counter() - started, "digest": digest}


def measure(engine: str, path: Path) -> dict[str, object]:
    """Runs in a wrapper process: one child does the work; its peak RSS is all RUSAGE_CHILDREN holds."""
    done = subprocess.run(
        [sys.executable, __file__, "--work", engine, "--path", str(path)],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or ["failed"]}
    result = json.loads(done.stdout)
    result["peak_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--skip-slow", action="store_true", help="leave out the openpyxl-based engines")
    parser.add_argument("--only", help="run only the engines whose name contains this text")
    parser.add_argument("--work")
    parser.add_argument("--measure")
    parser.add_argument("--path")
    args = parser.parse_args()
    if args.work:
        print(json.dumps(work(args.work, Path(args.path))))
        return
    if args.measure:
        print(json.dumps(measure(args.measure, Path(args.path))))
        return
    path = generate(args.rows)
    engines = ["calamine", "pandas+calamine", "loader.sheets (calamine)", *MAPPINGS]
    if not args.skip_slow:
        engines[2:2] = ["pandas+openpyxl", "openpyxl read_only", "loader.sheets (openpyxl)"]
    if args.only:
        engines = [e for e in engines if args.only in e]
    baseline = _wrapped("--measure", "idle", path)  # a child that imports nothing: the interpreter's floor
    print(f"workbook: {path} ({path.stat().st_size / 1e6:.1f} MB, {args.rows} rows x {len(HEADER)} columns)")
    print(f"{'engine':34} {'rows':>8} {'seconds':>8} {'rows/s':>9} {'peak MB':>8}  check")
    for engine in engines:
        result = _wrapped("--measure", engine, path)
        if "error" in result:
            print(f"{engine:34} failed: {result['error']}")
            continue
        rate = float(result["rows"]) / float(result["seconds"])
        print(f"{engine:34} {result['rows']:>8} {result['seconds']:>8.2f} {rate:>9.0f} {result['peak_mb']:>8.0f}  "
              f"{result['digest']}")
    if "peak_mb" in baseline:
        print(f"(an idle interpreter child: {baseline['peak_mb']:.0f} MB)")


def _wrapped(flag: str, engine: str, path: Path) -> dict[str, Any]:
    if engine == "idle":
        idle = subprocess.run([sys.executable, "-c", "pass"], check=False)
        return {"peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024} if not idle.returncode else {}
    done = subprocess.run([sys.executable, __file__, flag, engine, "--path", str(path)],
                          capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout)


if __name__ == "__main__":
    main()
