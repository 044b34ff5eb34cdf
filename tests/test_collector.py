"""The collector paused around work that makes many objects, and what is kept moved out of its reach."""

from __future__ import annotations

import gc

from loader.collector import collector_paused, collector_spaced


def test_the_collector_is_off_inside_and_back_as_it_was_after() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner one restores "off"
    assert gc.isenabled()


def test_kept_survivors_are_out_of_every_generation_the_collector_walks() -> None:
    try:
        with collector_paused(keep_survivors=True):
            kept = [{"n": [n]} for n in range(10_000)]
        assert gc.isenabled()
        walked = {id(o) for generation in range(3) for o in gc.get_objects(generation)}
        assert not any(id(o) in walked for o in (kept[0], kept[-1], kept[0]["n"]))
        assert gc.get_freeze_count() >= 2 * len(kept)
    finally:
        gc.unfreeze()


def test_without_keep_survivors_they_stay_in_reach() -> None:
    with collector_paused():
        kept = [{"n": [n]} for n in range(1_000)]
    walked = {id(o) for generation in range(3) for o in gc.get_objects(generation)}
    assert id(kept[0]) in walked and id(kept[-1]["n"]) in walked


def test_spaced_the_youngest_generation_waits_longer_and_the_thresholds_come_back() -> None:
    before = gc.get_threshold()
    with collector_spaced(12_345):
        assert gc.get_threshold() == (12_345, *before[1:])
        with collector_spaced(1):  # never closer than it was
            assert gc.get_threshold()[0] == 12_345
        assert gc.isenabled()
    assert gc.get_threshold() == before


def test_spaced_cycles_are_still_collected() -> None:
    collected: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            collected.append(info["collected"])

    gc.collect()
    gc.callbacks.append(seen)
    try:
        with collector_spaced(1_000):
            for _ in range(3_000):  # cycles only the collector can free
                node: dict[str, object] = {}
                node["self"] = node
    finally:
        gc.callbacks.remove(seen)
    assert sum(collected) >= 1_000
