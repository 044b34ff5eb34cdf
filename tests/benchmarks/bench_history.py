"""The history's snapshot at scale: bytes a record, write time, load time and peak memory.

    python tests/benchmarks/bench_history.py [--records 250000] [--fields 6] [--set-elements 0] [--out DIR]

Records of one entity with six managed fields each (with `--set-elements N` the last is a set-like
list of N elements), UUID live ids, `metadata.updated` time and user, two owners: as a real
programs snapshot would be. Each step runs in a fresh child process so its peak memory (ru_maxrss)
is its own: `write` writes the lines (made before the clock starts), `load` reads the files (lines
kept as text), `index` reads them and looks up every record by key and by live id (parsing each
line), `fold` reads them, folds in 1,000 records as an apply's journal would and writes the files
that changed. The
machine's load average is printed beside the figures.

Measured at 250,000 records (2 shared cores, load average 1.1), six plain fields / the last a set of 3:
145.0 / 160.0 bytes a record (36 / 40 MB, one file); write 1.8 / 2.5 s; load 0.34 / 0.40 s at a peak
of 131 / 135 MB (20 MB of it Python with the loader); every record looked up by key and by live id
7.1 / 8.1 s (28 / 32 µs a record, parsing its line). Six plain fields at a load average of 12:
1,000 records folded in as an apply finishes, the snapshot read and its file written, 4.5 s (reading
2.2 s of it; the write step took 16.4 s at that load).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import uuid
from pathlib import Path


def _lines(records: int, fields: int, set_elements: int) -> list[object]:
    from loader.history.digests import Digester
    from loader.history.lines import FieldMark, HistoryLine, Owner

    d = Digester()
    owners = (Owner("mappings/programs.yaml", "programs"), Owner("mappings/extra.yaml", "extra"))
    names = [f"field_{n}" for n in range(fields - (1 if set_elements else 0))]
    lines: list[object] = []
    for i in range(records):
        key = (f"PROG-{i:06d}",)
        record = d.record("programs", key)
        marks = {name: FieldMark(owners[n % 2], record.value(name, f"value {i} {n}")) for n, name in enumerate(names)}
        if set_elements:
            tags = [f"tag {i % 7} {n}" for n in range(set_elements)]
            marks["tags"] = FieldMark(owners[0], record.elements("tags", tags))
        live_id = str(uuid.UUID(int=i * 7919 + 1))
        lines.append(HistoryLine(d.key_token("programs", key), d.id_token("programs", live_id),
                                 1_717_000_000_000 + i, f"user-{i % 3}", marks))
    return lines


def _step(step: str, folder: Path, records: int, fields: int, set_elements: int) -> dict[str, float]:
    from loader.history.digests import Digester
    from loader.history.snapshot import Snapshot
    from loader.history.snapshot_files import read_snapshot, write_snapshot

    result: dict[str, float] = {}
    if step == "write":
        lines = _lines(records, fields, set_elements)
        start = time.perf_counter()
        snapshot = Snapshot().with_lines("programs", lines)  # type: ignore[arg-type]
        paths = write_snapshot(folder, snapshot)
        result["seconds"] = time.perf_counter() - start
        result["bytes"] = sum(p.stat().st_size for p in paths)
        result["files"] = len(paths)
    elif step == "load":
        start = time.perf_counter()
        snapshot = read_snapshot(folder)
        result["seconds"] = time.perf_counter() - start
        result["records"] = snapshot.count("programs")
    elif step == "fold":  # as an apply finishes: its journal's records merged in, the changed files written
        from loader.history.merging import folded, write_entities
        from loader.history.overlay import Overlay

        changed = _lines(1000, fields, set_elements)
        start = time.perf_counter()
        overlay = Overlay(read_snapshot(folder))
        for line in changed:
            overlay.add("programs", line.key, line.live_id, (line.updated_time, line.updated_user),  # type: ignore[attr-defined]
                        {name: (mark.owner, mark.written, None, None) for name, mark in line.fields.items()})  # type: ignore[attr-defined]
        snapshot, entities = folded(overlay)
        write_entities(folder, snapshot, entities)
        result["seconds"] = time.perf_counter() - start
    else:
        d = Digester()
        start = time.perf_counter()
        snapshot = read_snapshot(folder)
        loaded = time.perf_counter()
        for i in range(records):
            key = d.key_token("programs", (f"PROG-{i:06d}",))
            line = snapshot.get("programs", key)
            assert line is not None
            assert snapshot.key_for_id("programs", d.id_token("programs", str(uuid.UUID(int=i * 7919 + 1)))) == key
        result["seconds"] = time.perf_counter() - start
        result["lookups_seconds"] = time.perf_counter() - loaded
    result["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=250_000)
    parser.add_argument("--fields", type=int, default=6)
    parser.add_argument("--set-elements", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench_history"))
    parser.add_argument("--step", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        print(json.dumps(_step(args.step, args.out, args.records, args.fields, args.set_elements)))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    for old in args.out.glob("*.tsv"):
        old.unlink()
    baseline = _child("baseline", args)
    shape = f", the last a set of {args.set_elements}" if args.set_elements else ""
    print(f"load average {os.getloadavg()[0]:.1f}; {args.records:,} records, {args.fields} fields each{shape}")
    print(f"python with the loader imported: {baseline['peak_mb']:.0f} MB")
    for step in ("write", "load", "index", "fold"):
        figures = _child(step, args)
        text = ", ".join(f"{k} {v:,.3f}" if isinstance(v, float) else f"{k} {v:,}" for k, v in figures.items())
        print(f"{step:6} {text}")
        if step == "write":
            print(f"       {figures['bytes'] / args.records:.1f} bytes a record")


def _child(step: str, args: argparse.Namespace) -> dict[str, float]:
    if step == "baseline":
        code = "import resource, loader.history.store; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        return {"peak_mb": int(out) / 1024}
    command = [sys.executable, __file__, "--step", step, "--records", str(args.records), "--fields", str(args.fields),
               "--set-elements", str(args.set_elements), "--out", str(args.out)]
    return dict(json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout))


if __name__ == "__main__":
    main()
