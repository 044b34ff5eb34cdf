"""Probable duplicates: CPU time of matching 20,000 new applicants against 100,000 live ones.

    python tests/benchmarks/bench_duplicates.py [--new 20000] [--live 100000] [--repeat 3]

The people are synthetic (names made of syllables, birth dates over 40 years, e-mails from the
names), built deterministically; one new row in 20 is a live person again under another key, with a
typo, swapped names, another e-mail case or swapped day and month. Measured: the process CPU time
of reading every record as the rule reads it (`person_of`) and of `find_duplicates`, the same calls
the plan makes; the best of `--repeat` runs is printed with the machine's load average. Target: <= 2 s.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from datetime import date, timedelta
from typing import Any

from loader.plan.duplicates import find_duplicates, person_of

_SYLLABLES = ("ka", "lo", "mi", "ren", "to", "sa", "vel", "dor", "an", "is", "mar", "tel", "co", "rin", "ba", "nu")
NAME_FIELDS = ("first_name", "last_name")


def synthetic_name(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(parts)).capitalize()


def synthetic_people(count: int, seed: int, prefix: str) -> list[dict[str, Any]]:
    """`count` synthetic applicants (never real people), deterministic for `seed`."""
    rng = random.Random(seed)
    start = date(1960, 1, 1)
    people = []
    for i in range(count):
        first, last = synthetic_name(rng, 2), synthetic_name(rng, 3)
        people.append({
            "external_id": f"{prefix}{i:06d}",
            "first_name": first,
            "last_name": last,
            "email_address": f"{first}.{last}{i}@example.invalid".lower(),
            "date_of_birth": (start + timedelta(days=rng.randrange(40 * 365))).isoformat(),
        })
    return people


def workload(new: int, live: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    live_people = synthetic_people(live, 1, "L")
    rows = synthetic_people(new, 2, "N")
    rng = random.Random(3)
    for i in range(0, new, 20):
        again = dict(rng.choice(live_people), external_id=f"N{i:06d}")
        if i % 40 == 0:
            again["first_name"], again["last_name"] = again["last_name"], again["first_name"]
        else:
            again["email_address"] = again["email_address"].upper()
        rows[i] = again
    return rows, live_people


def measure(rows: list[dict[str, Any]], live: list[dict[str, Any]]) -> tuple[float, int]:
    started = time.process_time()
    new_people = [person_of(r, NAME_FIELDS) for r in rows]
    live_people = [person_of(r, NAME_FIELDS) for r in live]
    found = find_duplicates(new_people, live_people, 0.9)
    return time.process_time() - started, sum(f is not None for f in found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--new", type=int, default=20_000)
    parser.add_argument("--live", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows, live = workload(args.new, args.live)
    runs = [measure(rows, live) for _ in range(args.repeat)]
    best = min(seconds for seconds, _ in runs)
    print(f"{args.new} new rows against {args.live} live: {best:.2f} s CPU (best of {args.repeat}), "
          f"{runs[0][1]} held; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
