"""The collector paused around work that makes many objects, and what is kept moved out of its reach."""

from __future__ import annotations

import gc

from loader.collector import collector_paused


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
