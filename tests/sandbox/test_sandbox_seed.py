"""Seeding: applied to an empty database only, ids and metadata kept, errors name the record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.sandbox import Caller, fetch_token

from loader.sandbox.seed import SeedError
from loader.sandbox.server import RunningSandbox, SandboxOptions, open_app, serve_in_thread

SCHOOL_ID = "11111111-1111-4111-8111-111111111111"
SEED: dict[str, Any] = {
    "institution-a": {
        "schools": [{"id": SCHOOL_ID, "code": "SCI", "name": "Science", "custom_attributes": {"Faculty": "F"}}],
        "courses": [{"code": "BSC", "name": "Bachelor of Science", "parent": {"id": SCHOOL_ID}}],
        "subjects": [{"code": "MATH1", "name": "Calculus", "access": "Open"}],
        "tags": [{"id": "tag-intl", "name": "International"}],
        "applicants": [{"id": "app-1", "external_id": "A1"}],
        "credentials": [{"applicant_id": "app-1", "type": "TERTIARY", "tags": ["tag-intl"]}],
        "arrangements": [
            {
                "code": "ART1",
                "name": "Live one",
                "status": "ACTIVE",
                "metadata": {"created": {"time": 1}, "updated": {"time": 2}},
            }
        ],
    },
    "institution-b": {"schools": [{"code": "SCI", "name": "B's science"}]},
}


def _caller(sb: RunningSandbox, http: httpx.Client, other: bool = False) -> Caller:
    if other:
        return Caller(http, fetch_token(sb.base_url, sb.other_client_id, sb.other_client_secret))
    return Caller(http, fetch_token(sb.base_url, sb.client_id, sb.client_secret))


def test_a_seed_loads_with_its_ids_metadata_and_arrangement_status(tmp_path: Path) -> None:
    seed_file = tmp_path / "seed.json"
    seed_file.write_text(json.dumps(SEED), encoding="utf-8")
    with serve_in_thread(SandboxOptions(seed=seed_file)) as sb, httpx.Client(base_url=sb.base_url) as http:
        api = _caller(sb, http)
        school = api.get(f"/institution/catalogue/schools/{SCHOOL_ID}").json()["data"]
        assert school["type"] == "SCHOOL"
        assert school["metadata"]["created"]["user"]["email_address"] == "seed@sandbox.invalid"
        assert [c["code"] for c in school["children"]] == ["BSC"]
        arrangement = api.get("/institution/articulation-arrangements/ART1").json()["data"]
        assert arrangement["status"] == "ACTIVE"
        assert arrangement["metadata"] == {"created": {"time": 1}, "updated": {"time": 2}}
        assert api.get("/institution/applicants/credentials").json()["total"] == 1
        assert _caller(sb, http, other=True).get("/institution/catalogue/schools/SCI").json()["data"]["name"] == (
            "B's science"
        )


def test_a_seed_is_not_applied_to_a_database_that_has_data(tmp_path: Path) -> None:
    data = str(tmp_path / "sandbox.sqlite3")
    with serve_in_thread(SandboxOptions(data=data, seed=SEED)) as sb, httpx.Client(base_url=sb.base_url) as http:
        _caller(sb, http).create("/institution/tags", {"name": "added later"})
    other_seed = {"institution-a": {"tags": [{"name": "from a second seed"}]}}
    with serve_in_thread(SandboxOptions(data=data, seed=other_seed)) as sb, httpx.Client(base_url=sb.base_url) as http:
        names = [t["name"] for t in _caller(sb, http).get("/institution/tags").json()["data"]]
    assert names == ["International", "added later"]


def test_a_file_database_keeps_its_records_across_restarts(tmp_path: Path) -> None:
    data = str(tmp_path / "sandbox.sqlite3")
    with serve_in_thread(SandboxOptions(data=data)) as sb, httpx.Client(base_url=sb.base_url) as http:
        created = _caller(sb, http).create("/institution/catalogue/schools", {"code": "KEEP", "name": "Kept"})
    with serve_in_thread(SandboxOptions(data=data)) as sb, httpx.Client(base_url=sb.base_url) as http:
        assert _caller(sb, http).get("/institution/catalogue/schools/KEEP").json()["data"]["id"] == created["id"]


@pytest.mark.parametrize(
    ("seed", "fragment"),
    [
        ({"institution-a": {"schools": [{"code": "X"}]}}, "institution-a.schools[0]: field 'name' is required"),
        ({"institution-a": {"planets": []}}, "unknown collection 'planets'"),
        ({"institution-a": {"courses": [{"code": "C", "name": "c", "parent": {"id": "later"}}]}}, "courses[0]"),
        ({"institution-a": {"schools": [{"code": "X", "name": "x"}, {"code": "X", "name": "y"}]}}, "schools[1]"),
        ({"institution-a": {"arrangements": [{"code": "A", "name": "a", "status": "LIVE"}]}}, "status"),
        ({"institution-a": {"schools": [{"id": "s", "code": "X", "name": "x"}, {"id": "s", "code": "Y", "name": "y"}]}},
         "schools[1]"),
    ],
)  # fmt: skip
def test_a_bad_seed_is_refused_naming_the_record(seed: dict[str, Any], fragment: str) -> None:
    with pytest.raises(SeedError, match=None) as caught:
        open_app(SandboxOptions(seed=seed))
    assert fragment in str(caught.value)


def test_a_bad_seed_leaves_a_file_database_empty(tmp_path: Path) -> None:
    data = str(tmp_path / "sandbox.sqlite3")
    bad = {"institution-a": {"schools": [{"code": "OK", "name": "ok"}, {"code": "BAD"}]}}
    with pytest.raises(SeedError):
        open_app(SandboxOptions(data=data, seed=bad))
    with serve_in_thread(SandboxOptions(data=data, seed=SEED)) as sb, httpx.Client(base_url=sb.base_url) as http:
        codes = [s["code"] for s in _caller(sb, http).get("/institution/catalogue/schools").json()["data"]]
    assert codes == ["SCI"]


def test_serve_in_thread_reports_a_seed_that_cannot_be_read(tmp_path: Path) -> None:
    with (
        pytest.raises(RuntimeError, match="cannot read seed"),
        serve_in_thread(SandboxOptions(seed=tmp_path / "missing.json")),
    ):
        pass
