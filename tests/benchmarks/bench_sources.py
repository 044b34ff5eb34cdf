"""Reading the same records from CSV, a SQLite query and JSON Lines, and a large XML feed.

    python tests/benchmarks/bench_sources.py [--records N] [--xml-mb M] [--rounds R]

The same N records (8 columns: code, title, points, fee, start, faculty, email, notes) are
written once into /tmp as a CSV file, a SQLite table and a JSON Lines file; each is read by its
reader in a child process of its own, which reports its CPU time (user and system, so a machine
shared with other work slows the figures less than wall time) and its peak resident memory
beyond what it held after the imports (getrusage's maximum less the resident size before
reading; SQLAlchemy is imported before, once per process as for any program). An XML feed of
about M megabytes (XCRI-CAP-shaped courses) is read the same way, and its peak is compared with
the memory its rows take once read (resident size after reading, the rows still held): the
difference is what streaming costs beyond the records it yields. The sources are read in turn R
times (a busy machine slows them alike) and each one's round of least CPU time is shown.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import resource
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = Path("/tmp/loader-bench-sources")
COLUMNS = ["code", "title", "points", "fee", "start", "faculty", "email", "notes"]
FACULTIES = ["Arts", "Science", "Law", "Medicine", "Engineering"]
XCRI = "http://xcri.org/profiles/1.2/catalog"


def record(i: int, rng: random.Random) -> list[object]:
    return [f"U{i:07d}", f"Unit {i} of {rng.choice(FACULTIES)}", rng.choice([6, 12, 24]),
            round(rng.uniform(100, 9999), 2), f"2027-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            rng.choice(FACULTIES), f"unit{i}@example.edu", "x" * rng.randint(0, 40)]


def make_inputs(count: int) -> None:
    WORK.mkdir(exist_ok=True)
    stamp = WORK / f"inputs-{count}"
    if stamp.exists():
        return
    rng = random.Random(7)
    rows = [record(i, rng) for i in range(count)]
    with (WORK / "units.csv").open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(COLUMNS)
        writer.writerows(rows)
    (WORK / "units.db").unlink(missing_ok=True)
    with sqlite3.connect(WORK / "units.db") as db:
        db.execute("CREATE TABLE units (code TEXT, title TEXT, points INTEGER, fee NUMERIC, start TEXT, "
                   "faculty TEXT, email TEXT, notes TEXT)")
        db.executemany("INSERT INTO units VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    with (WORK / "units.jsonl").open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(dict(zip(COLUMNS, row, strict=True))) + "\n")
    stamp.touch()


def make_xml(megabytes: int) -> Path:
    path = WORK / f"courses-{megabytes}mb.xml"
    if path.exists():
        return path
    rng = random.Random(11)
    with path.open("w", encoding="utf-8") as out:
        out.write(f'<catalog xmlns="{XCRI}" xmlns:dc="http://purl.org/dc/elements/1.1/" '
                  'xmlns:mlo="http://purl.org/net/mlo"><provider><dc:title>University of Example</dc:title>')
        i = 0
        while out.tell() < megabytes * 1024 * 1024:
            out.write(f"<course><dc:identifier>C{i:07d}</dc:identifier><dc:title>Course {i}</dc:title>"
                      f"<dc:description>{'Lorem ipsum dolor sit amet. ' * rng.randint(1, 12)}</dc:description>"
                      f'<presentation><mlo:start dtf="2027-09-{rng.randint(1, 28):02d}">September</mlo:start>'
                      f'<studyMode identifier="FT">Full time</studyMode></presentation></course>\n')
            i += 1
        out.write("</provider></catalog>\n")
    return path


def read_one(kind: str, xml_path: str | None) -> dict[str, float]:
    """Runs in the child: read one source, report rows, seconds and memory."""
    from loader.source.readers import csv as csv_reader
    from loader.source.readers.json_feed import JsonSource
    from loader.source.readers.json_feed import read as read_json
    from loader.source.readers.record_rows import FieldPaths
    from loader.source.readers.sql import SqlSource
    from loader.source.readers.sql import read as read_sql
    from loader.source.readers.xml_feed import XmlSource
    from loader.source.readers.xml_feed import read as read_xml

    if kind == "sqlite":
        import sqlalchemy  # noqa: F401  (imported once per process; not part of the read's rate)

    before = _resident_kib()
    start, cpu = time.perf_counter(), time.process_time()
    if kind == "csv":
        data = csv_reader.read(WORK / "units.csv", "units.csv", delimiter=",", encoding=None)
    elif kind == "sqlite":
        data = read_sql(SqlSource("units", "SELECT * FROM units", "sqlite:///units.db", WORK))
    elif kind == "jsonl":
        data = read_json(JsonSource("units", "units.jsonl", WORK), [FieldPaths(c, (c,)) for c in COLUMNS])
    else:
        assert xml_path is not None
        fields = [FieldPaths("code", ("dc:identifier",)), FieldPaths("title", ("dc:title",)),
                  FieldPaths("start", ("x:presentation/mlo:start/@dtf",)), FieldPaths("provider", ("../dc:title",))]
        data = read_xml(XmlSource("feed", xml_path, WORK, "//x:course",
                                  {"x": XCRI, "dc": "http://purl.org/dc/elements/1.1/", "mlo": "http://purl.org/net/mlo"}),
                        fields)
    seconds, wall = time.process_time() - cpu, time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"rows": len(data.rows) - 1, "seconds": seconds, "wall": wall,  # every reader gives the header as row 1
            "before_mib": before / 1024, "peak_mib": peak / 1024, "after_mib": _resident_kib() / 1024}


def _resident_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def child(kind: str, xml_path: str | None = None) -> dict[str, float]:
    command = [sys.executable, __file__, "--child", kind] + (["--xml", xml_path] if xml_path else [])
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=250_000)
    parser.add_argument("--xml-mb", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child")
    parser.add_argument("--xml")
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(read_one(args.child, args.xml)))
        return 0
    make_inputs(args.records)
    print(f"{args.records:,} records, each read in a child process of its own")
    print(f"{'source':<8} {'rows':>9} {'CPU s':>8} {'rows/s':>9} {'x CSV':>6} {'peak-before MiB':>16} {'x CSV':>6}")
    xml = make_xml(args.xml_mb)
    rounds = [{kind: child(kind, str(xml) if kind == "xml" else None) for kind in ("csv", "sqlite", "jsonl", "xml")}
              for _ in range(args.rounds)]
    results = {kind: min((r[kind] for r in rounds), key=lambda one: one["seconds"]) for kind in rounds[0]}
    r = results.pop("xml")
    base = results["csv"]
    for kind, r in results.items():
        rate = r["rows"] / r["seconds"]
        grown = r["peak_mib"] - r["before_mib"]
        print(f"{kind:<8} {int(r['rows']):>9,} {r['seconds']:>8.2f} {rate:>9,.0f} "
              f"{rate / (base['rows'] / base['seconds']):>6.2f} {grown:>16.1f} "
              f"{grown / (base['peak_mib'] - base['before_mib']):>6.2f}")
    print(f"\nXML feed {xml.stat().st_size / 2**20:.0f} MiB: {int(r['rows']):,} records in {r['seconds']:.1f} CPU s; "
          f"resident {r['before_mib']:.0f} MiB before, {r['after_mib']:.0f} after (rows held), peak "
          f"{r['peak_mib']:.0f}: {r['peak_mib'] - r['after_mib']:.0f} MiB beyond the records it yields")
    return 0


if __name__ == "__main__":
    sys.exit(main())
