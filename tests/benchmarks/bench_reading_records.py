"""The records a reading child sends: pickled and unpickled as the child and the planner do it,
against records pickled by their dataclass state (the default for a slotted dataclass).

    python tests/benchmarks/bench_reading_records.py [--folder DIR] [--runs 3]

The records are those of bench_plan's workbooks and mappings in DIR (by default the 50,000 records
a `bench_plan.py --sizes 50000` run leaves under /tmp/bench_plan/50000), read once with the real
reader before the clock starts. Each run pickles every block's records in the child's chunks
(`reading._pickled`, or the default pickler writing only `Ref`s as calls) and unpickles them as the
planner does (`reading._SharingRefs`), the two forms in turn, with the cyclic collector off as in
`loader plan`; the CPU time of each step is printed per run, the records checked equal to those
read, with the machine's load average.
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from loader.config import load_config
from loader.plan.incremental.reading import CHUNK_RECORDS, _pickled, _SharingRefs
from loader.source.records import DesiredRecord, Ref
from loader.source.sources import read_sources


class _StatePickler(pickle.Pickler):
    """Each Ref as its call (as `_SharingRefs` reads them), records and places by their dataclass state."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is Ref:
            return Ref, (obj.entity, obj.values, obj.by, obj.cell)
        return NotImplemented


def _state_pickled(records: Sequence[DesiredRecord]) -> bytes:
    out = io.BytesIO()
    _StatePickler(out, pickle.HIGHEST_PROTOCOL).dump(records)
    return out.getvalue()


def _run(pickled: Callable[[Sequence[DesiredRecord]], bytes],
         blocks: list[tuple[DesiredRecord, ...]]) -> tuple[float, float, int, list[DesiredRecord]]:
    """(pickling CPU, unpickling CPU, bytes, the records unpickled) of every block in chunks."""
    start = time.process_time()
    messages = [b"r" + pickled(records[i : i + CHUNK_RECORDS])
                for records in blocks for i in range(0, len(records), CHUNK_RECORDS)]
    dumped = time.process_time()
    refs: dict[tuple[Any, ...], Ref] = {}
    received: list[DesiredRecord] = []
    for message in messages:
        received.extend(_SharingRefs(message, refs).load())
    return dumped - start, time.process_time() - dumped, sum(map(len, messages)), received


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--folder", type=Path, default=Path("/tmp/bench_plan/50000"))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    os.chdir(args.folder)
    sources = read_sources([Path("curriculum.yaml"), Path("applicants.yaml")], load_config(None).profile)
    blocks = [block.records for block in sources.blocks]
    every = [record for records in blocks for record in records]
    forms = {"dataclass state": _state_pickled, "constructor calls": _pickled}
    print(f"{len(every)} records in {len(blocks)} blocks, chunks of {CHUNK_RECORDS}")
    for run in range(1, args.runs + 1):
        for name, pickled in forms.items():  # in turn, so both meet the same load
            gc.collect()  # each form starts with only the records read alive
            gc.disable()  # as `loader plan` runs
            try:
                dumping, loading, size, received = _run(pickled, blocks)
            finally:
                gc.enable()
            if received != every:
                sys.exit(f"{name}: the records unpickled differ from those read")
            del received
            print(f"run {run} {name:17} pickling {dumping:5.2f} s CPU, unpickling {loading:5.2f} s CPU, "
                  f"{size / 1e6:5.1f} MB; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
