"""Reading the sources in a child process gives exactly what reading them in this process gives."""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from helpers.plan import SAMPLE_MAPPINGS, copy_samples

from loader.config import load_config
from loader.errors import MappingError
from loader.places import CellRef
from loader.plan.incremental.reading import (
    _FAILED,
    _child,
    _pickled,
    _sent,
    _SharingRefs,
    _unpickled,
    read_off_loop,
    source_bytes,
    split_for_children,
)
from loader.source.records import DesiredRecord, Ref
from loader.source.sources import BlockRecords, load_mappings, read_sources


@pytest.fixture
def samples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    monkeypatch.chdir(copy_samples(tmp_path))
    return [Path(m) for m in SAMPLE_MAPPINGS]


@pytest.mark.slow  # a spawned process imports the loader afresh: seconds on a loaded machine
def test_sources_read_in_a_child_process_equal_those_read_here(samples: list[Path]) -> None:
    profile = load_config(None).profile
    here = read_sources(samples, profile)
    there = asyncio.run(read_off_loop(load_mappings(samples, profile), profile, in_child=True))
    assert there.fingerprints == here.fingerprints
    assert there.findings == here.findings
    assert [b.block for b in there.blocks] == [b.block for b in here.blocks]
    for ours, theirs in zip(here.blocks, there.blocks, strict=True):
        assert theirs.records == ours.records  # fields, keys, cells (provenance) and pii alike
        assert theirs.findings == ours.findings
        assert (theirs.rows_read, theirs.rows_filtered) == (ours.rows_read, ours.rows_filtered)
        assert theirs.place == ours.place
    assert sum(len(b.records) for b in there.blocks) > 0


def test_a_mapping_file_that_cannot_be_read_fails_before_any_reading_as_reading_here_fails(
    samples: list[Path],
) -> None:
    profile = load_config(None).profile
    missing = [*samples, Path("mappings/nowhere.yaml")]
    with pytest.raises(MappingError) as here:
        read_sources(missing, profile)
    with pytest.raises(MappingError) as loading:
        load_mappings(missing, profile)  # what run_plan does first, before the child or any request
    assert str(loading.value) == str(here.value)


def test_the_choice_of_a_child_process_counts_the_source_files_bytes(samples: list[Path]) -> None:
    profile = load_config(None).profile
    sizes = {Path(p).stat().st_size for p in Path("samples/intake-2027").iterdir()}
    assert source_bytes(load_mappings(samples, profile)) >= max(sizes) > 0
    assert source_bytes([]) == 0


def test_mapping_files_are_split_between_child_processes_only_where_no_file_is_read_on_both_sides(
    samples: list[Path],
) -> None:
    profile = load_config(None).profile
    loaded = load_mappings(samples, profile)
    names = [[m.path.name for m in part] for part in split_for_children(loaded, 2)]
    assert names == [["curriculum.yaml"], ["applicants.yaml", "arrangements.yaml"]]  # runs in order, bytes even
    assert len(split_for_children(loaded, 1)) == 1
    assert [m for part in split_for_children(loaded, 3) for m in part] == loaded
    # a second mapping over the curriculum workbook cannot be read apart from the first
    again = Path("mappings/curriculum-again.yaml")
    again.write_text(Path(samples[0]).read_text(encoding="utf-8"), encoding="utf-8")
    shared = load_mappings([samples[0], samples[1], again], profile)
    assert [[m.path.name for m in part] for part in split_for_children(shared, 2)] == [
        ["curriculum.yaml", "applicants.yaml", "curriculum-again.yaml"],
    ]


def test_each_block_is_handed_on_as_soon_as_it_is_read_and_what_comes_back_is_kept(samples: list[Path]) -> None:
    profile = load_config(None).profile
    whole = read_sources(samples, profile)
    handed: list[tuple[str, int]] = []

    def without_records(block: BlockRecords) -> BlockRecords:
        handed.append((block.block, len(block.records)))
        return replace(block, records=())

    shells = read_sources(samples, profile, each_block=without_records)
    assert handed == [(b.block, len(b.records)) for b in whole.blocks]
    assert [b.records for b in shells.blocks] == [()] * len(whole.blocks)
    assert [replace(b, records=()) for b in whole.blocks] == list(shells.blocks)
    assert (shells.findings, shells.fingerprints) == (whole.findings, whole.fingerprints)


def test_records_sent_by_a_reading_child_come_back_equal_every_field_in_its_place(samples: list[Path]) -> None:
    """The child writes records, places and Refs as their constructors' calls: each value must come
    back in the field it left (every field here holds a value of its own, none its default)."""
    place = CellRef("handbook.json", "Units", "credit_points", 7, "n=2", "MATH1001")
    cell = CellRef("a.xlsx", "Subjects", "C3", 3)
    ref = Ref("course", ("C1", "2027"), ("code", "year"), cell)
    record = DesiredRecord("subjects", "subject", (ref, "S1"), {"course": ref, "tags": (Ref("tag", ("t",)),), "n": 2},
                           place, {"course": cell, "n": place}, frozenset({"n"}), (("more", cell),))
    read = [r for block in read_sources(samples, load_config(None).profile).blocks for r in block.records]
    sent = [record, *read]
    received = _SharingRefs(b"r" + _pickled(sent), {}).load()
    assert received == sent
    assert received[0].fields["course"].cell == cell  # a Ref's cell is not compared: checked here
    assert [(r.row, dict(r.cells)) for r in received] == [(r.row, dict(r.cells)) for r in sent]


def test_a_child_that_fails_after_sending_some_blocks_gives_nothing_and_the_sources_are_read_here(
    samples: list[Path],
) -> None:
    profile = load_config(None).profile
    first = read_sources(samples, profile).blocks[0]
    receiving, sending = multiprocessing.Pipe(duplex=False)
    with receiving, sending:
        assert _sent(first, sending) == replace(first, records=())  # what the child keeps of it
        sending.send_bytes(_FAILED)
        assert _unpickled(receiving) is None


@pytest.mark.slow  # a spawned process imports the loader afresh: seconds on a loaded machine
def test_a_child_gives_one_object_for_each_repeated_reference(samples: list[Path]) -> None:
    profile = load_config(None).profile
    there = asyncio.run(read_off_loop(load_mappings(samples, profile), profile, in_child=True))
    values = [(block.block, name, value) for block in there.blocks for r in block.records
              for name, value in r.fields.items()]
    refs = [value for _, _, value in values if isinstance(value, Ref)]
    assert len({id(ref) for ref in refs}) == len(set(refs)) < len(refs)


def test_the_records_received_leave_nothing_for_the_cyclic_collector(samples: list[Path]) -> None:
    """Receiving leaves nothing in a cycle (an unpickler and the message it read) for the
    collector to find."""
    profile = load_config(None).profile
    mappings = load_mappings(samples, profile)
    receiving, sending = multiprocessing.Pipe(duplex=False)
    with receiving, sending:
        child = threading.Thread(target=_child, args=(mappings, profile, sending))
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            child.start()
            received = _unpickled(receiving)
            child.join()
            gc.collect()
            left = len(gc.garbage)
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
    assert received is not None and sum(len(b.records) for b in received.blocks) > 0
    assert left == 0
