"""Validating records and plans, and reading plan.json with the collector on and off (CPU seconds).

    PYTHONPATH=<tree> python tests/benchmarks/bench_validation.py [--records 250000] [--plan-records 250000]

Records: 250,000 valid records' fields (six subjects in ten, with a reference and a label; the rest
applicants, with a pattern, a list and a label), checked field by field as the column path does
(`fields_checker`) and whole as the row path does (`check_fields`), best of three. Plans: a
first-load plan of `--plan-records` records (tests/helpers/large_plans.py) written to /tmp once,
then `read_plan_json` of it in a fresh process with the collector as it is and turned off, and the
whole document checked by the tree's plan validator and by the Python jsonschema (a tenth of the
records, scaled). Run it with PYTHONPATH set to each tree to compare, one after the other.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for helpers


def _best_of_three(work: Callable[[], int]) -> float:
    times = []
    for _ in range(3):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return min(times)


def records(n: int) -> None:
    from loader.profile import load_profile
    from loader.source.entity_schemas import check_fields, fields_checker, value_checks
    from loader.source.records import Ref

    profile = load_profile()
    subject, applicant = profile.entity("subject"), profile.entity("applicant")
    data: list[tuple[Any, dict[str, Any]]] = []
    for i in range(n):
        if i % 10 < 6:
            data.append((subject, {"code": f"SU{i:07d}", "name": f"Subject {i}", "custom_attributes": {"Level": "1"},
                                   "parent": Ref("program", (f"PR{i % 1000:06d}",))}))
        else:
            data.append((applicant, {"external_id": f"A{i}", "first_name": "Jo", "last_name": f"Doe{i}",
                                     "email_address": f"a{i}@example.org", "date_of_birth": "2001-02-03",
                                     "eligible_deliveries": [f"D{i % 7}", "D9"], "custom_attributes": {"L": "x"}}))
    checkers = {e.name: fields_checker(e, value_checks(e)) for e in (subject, applicant)}
    by_field = _best_of_three(lambda: sum(not checkers[e.name](f) for e, f in data))
    whole = _best_of_three(lambda: sum(bool(check_fields(e, f)) for e, f in data))
    print(f"{n} records: field by field {by_field:.2f} s CPU, check_fields {whole:.2f} s CPU", flush=True)


def read_plan(path: Path, collector: bool) -> None:
    from loader.plan.plan_file import read_plan_json

    if not collector:
        gc.disable()
    started = time.process_time()
    plan = read_plan_json(path)
    print(f"read_plan_json, collector {'on' if collector else 'off'}: {time.process_time() - started:.2f} s CPU, "
          f"{len(plan.records())} records, peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB",
          flush=True)


def validate_plan(path: Path) -> None:
    import jsonschema

    from loader.plan.plan_file import plan_schema, validation_errors

    data = json.loads(path.read_bytes())
    started = time.process_time()
    problems = validation_errors(data)
    tree = time.process_time() - started
    for block in data["blocks"]:
        block["records"] = block["records"][: len(block["records"]) // 10]
    started = time.process_time()
    valid = jsonschema.Draft202012Validator(plan_schema()).is_valid(data)
    python = (time.process_time() - started) * 10
    print(f"whole plan checked: this tree's validator {tree:.2f} s CPU ({len(problems)} problems); "
          f"Python jsonschema {python:.1f} s CPU (a tenth, scaled; valid: {valid})", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description="validation benchmark")
    parser.add_argument("--records", type=int, default=250_000)
    parser.add_argument("--plan-records", type=int, default=250_000)
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, path = args.child[0], Path(args.child[1])
        if mode == "validate":
            validate_plan(path)
        else:
            read_plan(path, collector=mode == "on")
        return 0
    print(f"load average {open('/proc/loadavg').read().split()[0]}")
    records(args.records)
    path = Path(f"/tmp/bench_validation/plan-{args.plan_records}.json")
    if not path.exists():
        from helpers.large_plans import first_load

        from loader.plan.plan_file import write_plan_json

        path.parent.mkdir(parents=True, exist_ok=True)
        write_plan_json(first_load(args.plan_records), path)
    for mode in ("on", "off", "validate"):
        subprocess.run([sys.executable, __file__, "--child", mode, str(path)], check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
