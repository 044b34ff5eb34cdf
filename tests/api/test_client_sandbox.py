"""ApiClient against a real sandbox on a loopback port: reads, writes, envelopes, errors."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

import pytest
from helpers.api import FAST_RETRY, TOKEN_ROUTE, environment_for, requests_to, schools_seed

from loader.api.answers import BEARER_HINT
from loader.api.auth import INVALID_CLIENT_HINT
from loader.api.client import ApiClient
from loader.api.errors import (
    Conflict,
    EnvironmentMismatch,
    NoAnswer,
    OutcomeUnknown,
    ServerError,
    TokenError,
    Unauthorized,
    Unreachable,
)
from loader.config import RetrySettings, Secret
from loader.sandbox.server import FaultOptions

SCHOOLS = "GET /institution/catalogue/schools"
SCHOOL_ITEM = "GET /institution/catalogue/schools/{id}"
CREATE_COURSE = "POST /institution/catalogue/courses"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_fetch_collection_yields_every_record_once_in_service_order(start_sandbox, profile):
    sb = start_sandbox(seed=schools_seed(250))

    async def go() -> tuple[list[dict[str, Any]], dict[str, int]]:
        async with ApiClient(environment_for(sb), profile) as client:
            return await client.fetch_collection("school"), client.request_counts

    records, counts = run(go())
    assert [r["code"] for r in records] == [f"S{i:05d}" for i in range(250)]
    assert "B-ONLY" not in {r["code"] for r in records}
    assert counts == {"GET": 3, "POST": 0, "PATCH": 0, "token": 1}
    assert requests_to(sb.stats(), SCHOOLS) == 3


def test_filters_select_records_and_are_not_repeated_on_later_pages(start_sandbox, profile):
    sb = start_sandbox(seed=schools_seed(30))

    async def go() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with ApiClient(environment_for(sb), profile) as client:
            return (
                await client.fetch_collection("school", {"code": "S00007"}),
                await client.fetch_collection("school", {"code": "NO-SUCH"}),
            )

    found, none = run(go())
    assert [r["code"] for r in found] == ["S00007"]
    assert none == []


def test_get_finds_a_record_by_id_and_by_code_and_returns_none_when_absent(start_sandbox, profile):
    sb = start_sandbox(seed=schools_seed(3))

    async def go() -> tuple[Any, ...]:
        async with ApiClient(environment_for(sb), profile) as client:
            by_code = await client.get("school", "S00001")
            assert by_code is not None
            by_id = await client.get("school", by_code["id"])
            absent = await client.get("school", "NOPE")
            # A code is one path segment: a slash in it must not walk to another record.
            traversal = await client.get("school", "NOPE/../S00001")
            return by_code, by_id, absent, traversal

    by_code, by_id, absent, traversal = run(go())
    assert by_code["name"] == "School 1"
    assert by_id == by_code
    assert absent is None and traversal is None
    assert requests_to(sb.stats(), SCHOOL_ITEM) == 3


def test_create_and_update_return_the_records_and_are_counted(start_sandbox, profile):
    sb = start_sandbox(seed=schools_seed(1))

    async def go() -> tuple[Any, ...]:
        async with ApiClient(environment_for(sb), profile) as client:
            school = (await client.fetch_collection("school"))[0]
            created = await client.create("course", {"code": "BSC", "name": "Science", "parent": {"id": school["id"]}})
            updated = await client.update("course", created["id"], {"name": "Bachelor of Science"})
            return created, updated, client.request_counts

    created, updated, counts = run(go())
    assert created["code"] == "BSC" and created["type"] == "COURSE"
    assert updated["id"] == created["id"] and updated["name"] == "Bachelor of Science"
    assert counts == {"GET": 1, "POST": 1, "PATCH": 1, "token": 1}


def test_a_used_code_raises_conflict_carrying_the_services_message_and_a_hint(start_sandbox, profile):
    sb = start_sandbox(seed=schools_seed(1))

    async def go() -> None:
        async with ApiClient(environment_for(sb), profile) as client:
            await client.create("course", {"code": "S00000", "name": "Clash"})

    with pytest.raises(Conflict) as caught:
        run(go())
    assert caught.value.status == 409
    assert "S00000" in caught.value.service_message
    assert "existing record" in (caught.value.hint or "")
    assert caught.value.where == "POST /institution/catalogue/courses"


def test_version_and_environment_are_captured_from_the_first_response(start_sandbox, profile):
    sb = start_sandbox(environment="test-env")

    async def go() -> tuple[str | None, str | None, float | None]:
        async with ApiClient(environment_for(sb, expect_environment="test-env"), profile) as client:
            await client.first_page("tag")
            return client.environment, client.api_version, client.token_lifetime

    assert run(go()) == ("test-env", "5.1.0", 1800.0)


def test_environment_mismatch_stops_before_any_write(start_sandbox, profile):
    sb = start_sandbox(environment="dev", seed=schools_seed(1))
    sb.reset_stats()

    async def go() -> list[BaseException]:
        errors: list[BaseException] = []
        async with ApiClient(environment_for(sb, expect_environment="test"), profile) as client:
            for attempt in (
                client.create("course", {"code": "X1", "name": "Must not exist"}),
                client.update("school", "any-id", {"name": "Must not change"}),
                client.fetch_collection("school"),
            ):
                try:
                    await attempt
                except EnvironmentMismatch as error:
                    errors.append(error)
        return errors

    errors = run(go())
    assert len(errors) == 3
    assert "'dev'" in str(errors[0]) and "'test'" in str(errors[0])
    stats = sb.stats()["requests"]
    assert not [route for route in stats if route.startswith(("POST /institution", "PATCH"))]
    assert stats == {"GET /institution/catalogue/courses": 1, TOKEN_ROUTE: 1}


def test_a_one_second_token_is_renewed_mid_run_with_one_token_request_per_renewal(start_sandbox, profile):
    sb = start_sandbox(token_ttl=1.0, seed=schools_seed(20))

    async def go() -> list[int]:
        tokens_after_each_burst = []
        async with ApiClient(environment_for(sb), profile, concurrency=8) as client:
            for _ in range(4):
                await asyncio.gather(*(client.get("school", f"S{i:05d}") for i in range(16)))
                tokens_after_each_burst.append(client.request_counts["token"])
                await asyncio.sleep(0.6)  # past the renewal point (ttl / 2) but inside the lifetime
        return tokens_after_each_burst

    assert run(go()) == [1, 2, 3, 4]
    stats = sb.stats()
    assert requests_to(stats, TOKEN_ROUTE) == 4
    # No request was refused and re-sent: every GET was sent once.
    assert requests_to(stats, SCHOOL_ITEM) == 64


def test_a_401_right_after_a_fresh_token_renews_once_then_explains_the_bearer_rule(start_sandbox, profile):
    identity = start_sandbox()
    api = start_sandbox()  # tokens are per server: the API refuses the other server's tokens

    async def go() -> dict[str, int]:
        env = environment_for(api, auth_url=identity.auth_url)
        async with ApiClient(env, profile) as client:
            with pytest.raises(Unauthorized) as caught:
                await client.fetch_collection("tag")
            assert caught.value.hint == BEARER_HINT
            return client.request_counts

    counts = run(go())
    assert counts["token"] == 2  # the first token, and exactly one renewal on the 401
    assert counts["GET"] == 2
    assert requests_to(identity.stats(), TOKEN_ROUTE) == 2


def test_a_wrong_secret_gives_the_invalid_client_hint_and_sends_nothing_else(start_sandbox, profile):
    sb = start_sandbox()

    async def go() -> None:
        env = environment_for(sb, client_secret=Secret("not-the-secret-123"))
        async with ApiClient(env, profile) as client:
            await client.fetch_collection("school")

    with pytest.raises(TokenError) as caught:
        run(go())
    assert caught.value.hint == INVALID_CLIENT_HINT
    assert "invalid_client" in str(caught.value)
    assert "not-the-secret-123" not in str(caught.value)
    assert sb.stats()["requests"] == {TOKEN_ROUTE: 1}


def test_a_create_whose_answer_is_lost_raises_outcome_unknown_and_is_not_sent_twice(start_sandbox, profile):
    sb = start_sandbox(seed=schools_seed(1))

    async def go() -> dict[str, Any] | None:
        async with ApiClient(environment_for(sb), profile) as client:
            await client.first_page("course")
            sb.set_faults(FaultOptions(lost_rate=1.0))
            with pytest.raises(OutcomeUnknown) as caught:
                await client.create("course", {"code": "LOST", "name": "Committed, answer lost"})
            assert caught.value.status == 500
            sb.set_faults(FaultOptions())
            return await client.get("course", "LOST")

    found = run(go())
    assert found is not None and found["name"] == "Committed, answer lost"
    assert requests_to(sb.stats(), CREATE_COURSE) == 1


def test_server_errors_on_reads_are_retried_until_the_attempts_run_out(start_sandbox, profile):
    sb = start_sandbox(faults=FaultOptions(error_rate=1.0))

    async def go() -> None:
        async with ApiClient(environment_for(sb, retry=RetrySettings(4, 0.01, 0.02, 0.01, 30.0)), profile) as client:
            await client.fetch_collection("school")

    with pytest.raises(ServerError) as caught:
        run(go())
    assert caught.value.status in (500, 503)
    assert requests_to(sb.stats(), SCHOOLS) == 4


def test_twenty_percent_503s_and_429s_still_yield_complete_lists(start_sandbox, profile):
    sb = start_sandbox(seed=schools_seed(450), faults=FaultOptions(error_rate=0.2, rate_limit=15, seed=7))

    async def go() -> list[dict[str, list[dict[str, Any]]]]:
        async with ApiClient(environment_for(sb), profile, concurrency=8) as client:
            return await asyncio.gather(*(client.fetch_collections(["school", "tag", "role"]) for _ in range(3)))

    results = run(go())
    for collections in results:
        assert [r["code"] for r in collections["school"]] == [f"S{i:05d}" for i in range(450)]
    faults = sb.stats()["faults"]
    assert faults.get("rate_limited", 0) > 0
    assert faults.get("error_503", 0) + faults.get("error_500", 0) > 0


def test_read_timeouts_are_retried_then_raise_no_answer(start_sandbox, profile):
    sb = start_sandbox()

    async def go() -> None:
        env = environment_for(sb, timeout=0.2, retry=RetrySettings(3, 0.01, 0.02, 0.01, 30.0))
        async with ApiClient(env, profile) as client:
            await client.first_page("tag")
            sb.set_faults(FaultOptions(latency_ms=600))
            await client.first_page("school")

    with pytest.raises(NoAnswer):
        run(go())
    assert requests_to(sb.stats(), SCHOOLS) == 3


def test_a_create_that_times_out_raises_outcome_unknown_after_one_send(start_sandbox, profile):
    sb = start_sandbox()

    async def go() -> None:
        async with ApiClient(environment_for(sb, timeout=0.2), profile) as client:
            await client.first_page("course")
            sb.set_faults(FaultOptions(latency_ms=600))
            await client.create("course", {"code": "SLOW", "name": "Slow"})

    with pytest.raises(OutcomeUnknown) as caught:
        run(go())
    assert caught.value.status is None
    assert requests_to(sb.stats(), CREATE_COURSE) == 1


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_create_is_retried_when_the_connection_cannot_be_made(start_sandbox, profile):
    sb = start_sandbox()
    env = environment_for(
        sb,
        base_url=f"http://127.0.0.1:{_closed_port()}",
        expect_environment=None,
        retry=RetrySettings(3, 0.01, 0.02, 0.01, 30.0),
    )

    async def go() -> dict[str, int]:
        async with ApiClient(env, profile) as client:
            with pytest.raises(Unreachable) as caught:
                await client.create("course", {"code": "NEVER", "name": "Never sent"})
            assert "could not be reached" in str(caught.value)
            return client.request_counts

    assert run(go())["POST"] == 3


def test_concurrency_is_bounded_per_client(start_sandbox, profile):
    sb = start_sandbox(seed=schools_seed(8))

    async def elapsed_with(concurrency: int) -> float:
        async with ApiClient(environment_for(sb), profile, concurrency=concurrency) as client:
            await client.get("school", "S00000")  # token and environment check out of the way
            sb.set_faults(FaultOptions(latency_ms=100))
            started = asyncio.get_running_loop().time()
            await asyncio.gather(*(client.get("school", f"S{i:05d}") for i in range(8)))
            sb.set_faults(FaultOptions())
            return asyncio.get_running_loop().time() - started

    slow = run(elapsed_with(2))
    fast = run(elapsed_with(8))
    assert slow >= 0.39  # four rounds of two, at least
    assert fast < slow / 2  # one round


def test_fetch_collections_returns_each_entity_once(start_sandbox, profile):
    sb = start_sandbox(seed=schools_seed(120))

    async def go() -> dict[str, list[dict[str, Any]]]:
        async with ApiClient(environment_for(sb, retry=FAST_RETRY), profile) as client:
            return await client.fetch_collections(["school", "tag", "school", "course"])

    collections = run(go())
    assert list(collections) == ["school", "tag", "course"]
    assert len(collections["school"]) == 120 and collections["course"] == []


def test_retries_are_logged_as_info_lines_of_the_request_log_not_as_warnings(start_sandbox, profile, caplog):
    sb = start_sandbox(faults=FaultOptions(error_rate=0.6, seed=3))

    async def go() -> None:
        async with ApiClient(environment_for(sb), profile) as client:
            await client.first_page("school")

    with caplog.at_level(logging.INFO):
        run(go())
    retries = [r for r in caplog.records if r.getMessage().startswith("  retry ")]
    assert retries and all(r.name == "loader.http" and r.levelno == logging.INFO for r in retries)
    assert "ServerError" in retries[0].getMessage()
    assert not [r for r in caplog.records if r.name == "stamina"]
    attempts = [r.getMessage() for r in caplog.records if r.getMessage().startswith("GET /institution")]
    assert attempts[-1].endswith(f"200 {attempts[-1].split()[3]} ms attempt {len(attempts)}")
