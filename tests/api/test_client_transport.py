"""Transport faults the sandbox cannot produce (dropped connections, an identity provider that is
down, a body that is not an envelope), served by plain handler functions through httpx.MockTransport."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from helpers.api import FAST_RETRY

from loader.api.client import ApiClient
from loader.api.errors import ApiError, EnvironmentMismatch, MalformedAnswer, OutcomeUnknown, Unreachable
from loader.config import Environment, RetrySettings, Secret
from loader.errors import ConfigError
from loader.profile import load_profile

BASE = "http://127.0.0.1:9"
ENVELOPE = {"environment": "sandbox", "version": "5.1.0", "timestamp": 0}
SCHOOL = {"id": "s-1", "code": "SCI", "name": "Science"}


def _env(**changes: Any) -> Environment:
    values: dict[str, Any] = {
        "name": "mock",
        "base_url": BASE,
        "auth_url": BASE,
        "realm": "sandbox",
        "expect_environment": "sandbox",
        "client_id": "c",
        "client_secret": Secret("s3cret"),
        "retry": FAST_RETRY,
    }
    values.update(changes)
    return Environment(**values)


def _service(failures: dict[str, list[Exception]], body: dict[str, Any] | None = None) -> Callable[..., Any]:
    """A fake service: each request first pops a failure queued for its method, if any."""

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/token"):
            return httpx.Response(200, json={"access_token": "tok", "expires_in": 300, "token_type": "Bearer"})
        queued = failures.get(request.method) or []
        if queued:
            raise queued.pop(0)
        assert request.headers["Authorization"] == "Bearer tok"
        if body is not None:
            return httpx.Response(200, json=body)
        if request.method == "GET":
            return httpx.Response(
                200, json={**ENVELOPE, "total": 1, "page_total": 1, "page_token": "x", "data": [SCHOOL]}
            )
        return httpx.Response(200, json={**ENVELOPE, "data": SCHOOL})

    return handle


def _run(handler: Callable[..., Any], action: Callable[[ApiClient], Any], **env: Any) -> tuple[Any, dict[str, int]]:
    async def go() -> tuple[Any, dict[str, int]]:
        async with ApiClient(_env(**env), load_profile(), transport=httpx.MockTransport(handler)) as client:
            try:
                return await action(client), client.request_counts
            except ApiError as error:
                return error, client.request_counts

    return asyncio.run(go())


def _dropped() -> Exception:
    return httpx.RemoteProtocolError("Server disconnected without sending a response.")


def test_reads_survive_dropped_connections():
    handler = _service({"GET": [_dropped(), httpx.ReadError("reset by peer")]})
    records, counts = _run(handler, lambda c: c.fetch_collection("school"))
    assert records == [SCHOOL]
    assert counts["GET"] == 3


def test_updates_survive_a_dropped_connection():
    handler = _service({"PATCH": [_dropped()]})
    record, counts = _run(handler, lambda c: c.update("school", "s-1", {"name": "Science"}))
    assert record == SCHOOL
    assert counts["PATCH"] == 2


def test_a_create_whose_connection_drops_after_sending_is_reported_not_replayed():
    handler = _service({"POST": [_dropped()]})
    error, counts = _run(handler, lambda c: c.create("school", {"code": "SCI", "name": "Science"}))
    assert isinstance(error, OutcomeUnknown)
    assert "may or may not have been applied" in str(error)
    assert counts["POST"] == 1


def test_a_create_is_retried_when_its_connection_was_refused():
    handler = _service({"POST": [httpx.ConnectError("refused")]})
    record, counts = _run(handler, lambda c: c.create("school", {"code": "SCI", "name": "Science"}))
    assert record == SCHOOL
    assert counts["POST"] == 2


def test_an_identity_provider_that_cannot_be_reached_is_retried_then_named():
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    error, counts = _run(
        handler, lambda c: c.create("school", {"code": "SCI"}), retry=RetrySettings(3, 0.01, 0.01, 0.0)
    )
    assert isinstance(error, Unreachable)
    assert "identity provider" in str(error)
    assert counts == {"GET": 0, "POST": 0, "PATCH": 0, "token": 3}


def test_an_answer_that_is_not_an_envelope_is_an_api_error():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/token"):
            return httpx.Response(200, json={"access_token": "tok", "expires_in": 300})
        return httpx.Response(200, text="<html>login page</html>")

    error, _ = _run(handler, lambda c: c.fetch_collection("school"))
    assert type(error) is MalformedAnswer and isinstance(error, ApiError)
    assert "without a JSON envelope" in str(error) and "base_url" in (error.hint or "")


def test_a_write_is_refused_when_the_service_never_names_its_environment():
    handler = _service({}, body={"version": "5.1.0", "data": [], "total": 0, "page_total": 0})
    error, counts = _run(handler, lambda c: c.create("school", {"code": "SCI"}))
    assert isinstance(error, EnvironmentMismatch)
    assert counts["POST"] == 0


@pytest.mark.parametrize("expires_in", [None, 0, "soon"])
def test_a_token_without_a_usable_lifetime_is_kept_until_refused(expires_in):
    answers = {"token": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/token"):
            answers["token"] += 1
            return httpx.Response(200, json={"access_token": "tok", "expires_in": expires_in})
        return httpx.Response(200, json={**ENVELOPE, "data": SCHOOL})

    async def go() -> float | None:
        async with ApiClient(_env(), load_profile(), transport=httpx.MockTransport(handler)) as client:
            for _ in range(3):
                await client.get("school", "SCI")
            return client.token_lifetime

    assert asyncio.run(go()) is None
    assert answers["token"] == 1


def test_a_ca_bundle_that_is_not_pem_is_a_config_error(tmp_path):
    bundle = tmp_path / "ca.pem"
    bundle.write_text("not a certificate\n", encoding="utf-8")

    async def go() -> None:
        async with ApiClient(_env(ca_bundle=bundle), load_profile()):
            pass

    with pytest.raises(ConfigError, match="ca_bundle"):
        asyncio.run(go())


def test_a_redirect_is_an_error_that_points_at_base_url():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/token"):
            return httpx.Response(200, json={"access_token": "tok", "expires_in": 300})
        return httpx.Response(302, headers={"Location": "https://login.example/sso"})

    error, _ = _run(handler, lambda c: c.fetch_collection("school"))
    assert isinstance(error, ApiError) and "https://login.example/sso" in (error.hint or "")


def test_a_revoked_token_is_renewed_once_for_all_the_requests_it_failed():
    issued: list[str] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/token"):
            issued.append(f"tok{len(issued) + 1}")
            return httpx.Response(200, json={"access_token": issued[-1], "expires_in": 300})
        await asyncio.sleep(0.02)  # all eight requests are in flight together
        # The service forgot the first token (say, it restarted): only the latest one is good.
        if request.headers["Authorization"] != f"Bearer {issued[-1]}" or len(issued) < 2:
            return httpx.Response(401, json={**ENVELOPE, "message": "Unauthorized: unknown access token"})
        return httpx.Response(200, json={**ENVELOPE, "data": SCHOOL})

    async def go() -> tuple[list[dict[str, Any] | None], dict[str, int]]:
        # No environment to check first, so all eight go out at once with the first token.
        env = _env(expect_environment=None)
        async with ApiClient(env, load_profile(), transport=httpx.MockTransport(handler)) as client:
            found = await asyncio.gather(*(client.get("school", f"S{i}") for i in range(8)))
            return list(found), client.request_counts

    found, counts = asyncio.run(go())
    assert found == [SCHOOL] * 8
    assert issued == ["tok1", "tok2"]
    assert counts == {"GET": 16, "POST": 0, "PATCH": 0, "token": 2}


def test_cookies_an_answer_sets_are_sent_back_until_replaced():
    sent: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/token"):
            return httpx.Response(200, json={"access_token": "tok", "expires_in": 300})
        sent.append(request.headers.get("Cookie"))
        page = {**ENVELOPE, "total": 1, "page_total": 1, "data": [SCHOOL]}
        if len(sent) == 1:
            return httpx.Response(200, json=page, headers={"Set-Cookie": "lb=node-2; Path=/"})
        if len(sent) == 3:
            return httpx.Response(200, json=page, headers={"Set-Cookie": "lb=node-3; Path=/"})
        return httpx.Response(200, json=page)

    async def four_reads(client: ApiClient) -> None:
        for _ in range(4):
            await client.first_page("school")

    _run(handler, four_reads)
    assert sent == [None, "lb=node-2", "lb=node-2", "lb=node-3"]


@pytest.mark.parametrize(("budget", "reads"), [(0.2, 1), (30.0, 2)])
def test_the_retry_time_budget_counts_the_first_attempt(budget, reads):
    answered: list[int] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/token"):
            return httpx.Response(200, json={"access_token": "tok", "expires_in": 300})
        answered.append(1)
        if len(answered) == 1:
            await asyncio.sleep(0.3)  # longer than the smaller budget
            raise httpx.ReadTimeout("timed out")
        return httpx.Response(200, json={**ENVELOPE, "total": 1, "page_total": 1, "data": [SCHOOL]})

    retry = RetrySettings(attempts=4, wait_initial=0.01, wait_max=0.01, wait_jitter=0.0, timeout=budget)
    result, counts = _run(handler, lambda c: c.fetch_collection("school"), retry=retry)
    assert counts["GET"] == reads
    if reads == 1:
        assert isinstance(result, ApiError)
    else:
        assert result == [SCHOOL]
