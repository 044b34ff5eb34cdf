"""Collection paging: 100 a page, page tokens (filters, expiry, forgery), keyset positions."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from helpers.sandbox import Caller, fetch_token
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.sandbox.server import RunningSandbox, SandboxOptions, serve_in_thread

SUBJECTS = "/institution/catalogue/subjects"
SCHOOLS = "/institution/catalogue/schools"


def _seed() -> dict[str, object]:
    subjects = [
        {"code": f"SUB{i:03d}", "name": f"Subject {i}", "access": "Open" if i % 2 else "Restricted"} for i in range(146)
    ]
    return {
        "institution-a": {"subjects": subjects, "schools": [{"code": "ONLY", "name": "Only school"}]},
        "institution-b": {"subjects": [{"code": "B-SUB", "name": "B's subject"}]},
    }


@pytest.fixture(scope="module")
def sandbox() -> Iterator[RunningSandbox]:
    with serve_in_thread(SandboxOptions(seed=_seed(), page_token_ttl=0.5)) as running:
        yield running


def test_146_records_page_as_100_then_46_then_an_empty_page(api: Caller) -> None:
    first = api.get(SUBJECTS).json()
    assert (first["total"], first["page_total"], len(first["data"])) == (146, 100, 100)
    second = api.get(SUBJECTS, page_token=first["page_token"]).json()
    assert (second["total"], second["page_total"], len(second["data"])) == (146, 46, 46)
    assert second["page_token"], "the last page still carries a page token"
    third = api.get(SUBJECTS, page_token=second["page_token"]).json()
    assert (third["page_total"], third["data"], third["page_token"]) == (0, [], None)
    codes = [r["code"] for r in first["data"] + second["data"]]
    assert codes == [f"SUB{i:03d}" for i in range(146)]


def test_later_pages_leave_out_environment(api: Caller) -> None:
    first = api.get(SUBJECTS).json()
    second = api.get(SUBJECTS, page_token=first["page_token"]).json()
    assert first["environment"] == "sandbox"
    assert "environment" not in second
    assert {"timestamp", "version", "total", "page_total", "page_token", "data"} <= set(second)


def test_lists_leave_out_sub_entity_details(api: Caller) -> None:
    assert all("children" not in record for record in api.get(SCHOOLS).json()["data"])


def test_a_page_token_used_after_its_lifetime_is_refused(api: Caller) -> None:
    token = api.get(SUBJECTS).json()["page_token"]
    time.sleep(0.6)
    answer = api.get(SUBJECTS, page_token=token)
    assert answer.status_code == 400
    assert answer.json()["message"] == "ValidationError: page token expired"


def test_filters_are_stored_with_the_page_token(api: Caller) -> None:
    first = api.get(SUBJECTS, access="Open").json()
    assert first["total"] == 73 and first["page_total"] == 73
    assert all(r["access"] == "Open" for r in first["data"])
    # later pages follow the token's filters, not the query string
    following = api.get(SUBJECTS, page_token=first["page_token"], access="Restricted").json()
    assert following["data"] == []


def test_an_equality_filter_on_the_code_finds_one_record(api: Caller) -> None:
    page = api.get(SUBJECTS, code="SUB007").json()
    assert page["total"] == 1 and page["data"][0]["name"] == "Subject 7"


def test_an_unknown_filter_is_a_validation_error(api: Caller) -> None:
    answer = api.get(SUBJECTS, colour="blue")
    assert answer.status_code == 400
    assert answer.json()["message"] == "ValidationError: unknown filter 'colour'"


def test_a_forged_page_token_is_refused(api: Caller) -> None:
    token = api.get(SUBJECTS).json()["page_token"]
    payload, _, signature = token.partition(".")
    for forged in ("garbage", f"{payload}.{'0' * len(signature)}", f"{payload[:-2]}AA.{signature}", ""):
        answer = api.get(SUBJECTS, page_token=forged)
        assert answer.status_code == 400, forged
        assert answer.json()["message"].startswith("ValidationError:")


def test_a_page_token_of_another_collection_is_refused(api: Caller) -> None:
    token = api.get(SUBJECTS).json()["page_token"]
    answer = api.get(SCHOOLS, page_token=token)
    assert answer.status_code == 400


def test_a_page_token_of_another_institution_is_refused(api: Caller, other_api: Caller) -> None:
    token = api.get(SUBJECTS).json()["page_token"]
    answer = other_api.get(SUBJECTS, page_token=token)
    assert answer.status_code == 400
    assert "SUB000" not in answer.text


def test_records_created_during_a_traversal_are_neither_skipped_nor_repeated(
    sandbox: RunningSandbox, http: httpx.Client
) -> None:
    caller = Caller(http, fetch_token(sandbox.base_url, sandbox.client_id, sandbox.client_secret))
    first = caller.get(SCHOOLS).json()
    caller.create(SCHOOLS, {"code": "LATE", "name": "Created mid-traversal"})
    rest = caller.get(SCHOOLS, page_token=first["page_token"]).json()
    codes = [r["code"] for r in first["data"] + rest["data"]]
    assert codes == ["ONLY", "LATE"]
    assert len(set(codes)) == len(codes)


@settings(max_examples=15, deadline=None)
@given(count=st.integers(min_value=0, max_value=250))
def test_any_collection_pages_into_full_pages_then_the_rest(count: int) -> None:
    seed = {"institution-a": {"tags": [{"name": f"t{i}"} for i in range(count)]}}
    with serve_in_thread(SandboxOptions(seed=seed)) as sb, httpx.Client(base_url=sb.base_url) as http:
        caller = Caller(http, fetch_token(sb.base_url, sb.client_id, sb.client_secret))
        sizes, token = [], None
        while True:
            page = caller.get("/institution/tags", **({"page_token": token} if token else {})).json()
            assert page["total"] == count
            sizes.append(page["page_total"])
            token = page["page_token"]
            if page["page_total"] < 100:
                break
        assert sum(sizes) == count
        assert all(size == 100 for size in sizes[:-1]) and sizes[-1] < 100
