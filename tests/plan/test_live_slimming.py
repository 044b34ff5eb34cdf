"""Live records made lean as they come in (`loader.live_records.LiveSlimmer`): the same values, read
the same way, and the same plan and digest as the records the service gave."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from loader.config import load_config
from loader.live_records import LiveSlimmer, UpdatedStamp, updated_stamp, updated_time, updated_user
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.digest import plan_digest
from loader.plan.plan_dict import plan_to_dict
from loader.source.sources import load_mappings, read_sources

REPO = Path(__file__).resolve().parents[2]
USER = "43c4dbe6-f3f0-5e35-a941-487e033492ed"


def fetched(i: int, parent: str, level: str = "1", **more: Any) -> dict[str, Any]:
    """A record as a list request gives it (fresh objects, as each page's JSON makes them)."""
    return json.loads(json.dumps({
        "id": f"s-{i}", "type": "SUBJECT", "code": f"SU{i}", "name": f"Subject {i}", "parent": {"id": parent},
        "custom_attributes": {"Level": level}, "eligible_deliveries": ["Online", "On campus"],
        "metadata": {"created": {"time": 1, "user": {"id": "u-0", "name": "Creator"}},
                     "updated": {"time": 1_700_000_000_000 + i, "user": {"id": USER, "name": "Updater"}}},
        **more,
    }))


def test_a_slimmed_record_keeps_its_values_and_only_the_update_of_its_metadata() -> None:
    record = fetched(1, "p-1")
    slim = LiveSlimmer().slim(copy.deepcopy(record))
    expected = {**record, "metadata": {"updated": {"time": 1_700_000_000_001, "user": {"id": USER}}}}
    assert slim == expected and dict(slim["metadata"]) == expected["metadata"]
    assert type(slim["metadata"]) is UpdatedStamp
    assert (updated_time(slim), updated_user(slim), updated_stamp(slim)) == (
        1_700_000_000_001, USER, (1_700_000_000_001, USER))


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"updated": {"time": 5, "user": "u-9"}}, {"updated": {"time": 5}}),  # a user not named by id: left out
        ({"updated": {"time": 5}}, {"updated": {"time": 5}}),
        ({"updated": None}, {"updated": {"time": None}}),
        ({"created": {"time": 1}}, {"updated": {"time": None}}),
    ],
)
def test_metadata_without_an_updater_id_keeps_what_it_has(metadata: dict[str, Any], expected: dict[str, Any]) -> None:
    assert LiveSlimmer().slim({"id": "x", "metadata": metadata})["metadata"] == expected


def test_metadata_that_is_not_an_object_is_left_as_it_is() -> None:
    assert LiveSlimmer().slim({"id": "x", "metadata": "2026-01-01"}) == {"id": "x", "metadata": "2026-01-01"}


def test_references_repeated_across_records_are_held_once() -> None:
    slimmer = LiveSlimmer()
    a, b, c = (slimmer.slim(fetched(i, "p-1" if i < 2 else "p-2")) for i in range(3))
    assert a["parent"] is b["parent"] and a["parent"] is not c["parent"] and c["parent"] == {"id": "p-2"}


def test_numbers_are_never_shared_as_equal_values_of_another_type() -> None:
    slimmer = LiveSlimmer()
    one, true, other = (slimmer.slim({"id": str(i), "flags": [v]}) for i, v in enumerate((1, True, 1.0)))
    assert [type(r["flags"][0]) for r in (one, true, other)] == [int, bool, float]
    texts = slimmer.slim({"id": "t", "attributes": {"a": "1"}}), slimmer.slim({"id": "u", "attributes": {"a": 1}})
    assert [type(r["attributes"]["a"]) for r in texts] == [str, int]


def test_the_samples_plan_the_same_against_slimmed_live_records(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    profile = load_config(None).profile
    mappings = load_mappings([Path("mappings/curriculum.yaml"), Path("mappings/applicants.yaml"),
                              Path("mappings/arrangements.yaml")], profile)
    sources = read_sources(mappings, profile)
    seed = json.loads((REPO / "samples" / "sandbox-seed.json").read_text(encoding="utf-8"))["institution-a"]
    raw = {name.removesuffix("s"): records for name, records in seed.items() if isinstance(records, list)}
    slimmer = LiveSlimmer()
    slimmed = {entity: [slimmer.slim(r) for r in copy.deepcopy(records)] for entity, records in raw.items()}
    header = PlanHeader("sandbox", "5.1.0", "http://127.0.0.1", created_at="2026-01-01T00:00:00+00:00")
    before = plan_changes(sources.blocks, raw, profile, header=header)
    after = plan_changes(sources.blocks, slimmed, profile, header=header)
    assert sum(r.action.value == "update" for r in before.records()) > 0  # the samples change some records
    assert plan_to_dict(after) == plan_to_dict(before)
    assert plan_digest(after) == plan_digest(before)
