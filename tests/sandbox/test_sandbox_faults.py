"""Fault options (latency, errors before commit, lost answers after commit, rate limit) and counters."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import httpx
import pytest
from helpers.sandbox import TOKEN_PATH, Caller, fetch_token
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.sandbox.server import FaultOptions, RunningSandbox, SandboxOptions, serve_in_thread

TAGS = "/institution/tags"


@pytest.fixture
def sandbox() -> Iterator[RunningSandbox]:
    """A fresh sandbox per test: faults and counters are per server."""
    with serve_in_thread(SandboxOptions()) as running:
        yield running


@pytest.fixture
def http(sandbox: RunningSandbox) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sandbox.base_url, timeout=30) as client:
        yield client


@pytest.fixture
def api(sandbox: RunningSandbox, http: httpx.Client) -> Caller:
    return Caller(http, fetch_token(sandbox.base_url, sandbox.client_id, sandbox.client_secret))


def _timed(call: Callable[[], httpx.Response]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def test_latency_delays_api_and_token_requests_but_not_q_routes(
    sandbox: RunningSandbox, api: Caller, http: httpx.Client
) -> None:
    sandbox.set_faults(FaultOptions(latency_ms=150))
    assert _timed(lambda: api.get(TAGS)) >= 0.15
    head = http.head(TAGS, headers={"Authorization": f"Bearer {api.token}"})  # Starlette's HEAD of a GET route
    assert head.status_code == 200
    assert _timed(lambda: http.head(TAGS, headers={"Authorization": f"Bearer {api.token}"})) >= 0.15
    form = {"grant_type": "client_credentials", "client_id": sandbox.client_id, "client_secret": sandbox.client_secret}
    assert _timed(lambda: http.post(TOKEN_PATH, data=form)) >= 0.15
    assert _timed(lambda: http.get("/q/sandbox/stats")) < 0.1


def test_a_write_waits_before_it_is_done_and_a_read_after(
    sandbox: RunningSandbox, api: Caller, http: httpx.Client
) -> None:
    # A client that gives up during a write's wait changed nothing; a read (which changes nothing)
    # is worked out on arrival and answered the latency after, refused or not.
    sandbox.set_faults(FaultOptions(latency_ms=400))
    bearer = {"Authorization": f"Bearer {api.token}"}
    with pytest.raises(httpx.ReadTimeout):
        http.post("/institution/catalogue/schools", json={"code": "GAVE-UP", "name": "Gave up"}, headers=bearer,
                  timeout=0.1)
    assert _timed(lambda: http.get("/institution/tags", headers={"Authorization": "Bearer nonsense"})) >= 0.4
    time.sleep(0.5)  # past the write's wait
    sandbox.set_faults(FaultOptions())
    assert api.get("/institution/catalogue/schools/GAVE-UP").status_code == 404


def test_jitter_adds_a_bounded_random_delay(sandbox: RunningSandbox, api: Caller) -> None:
    sandbox.set_faults(FaultOptions(latency_ms=20, jitter_ms=60, seed=3))
    delays = [_timed(lambda: api.get(TAGS)) for _ in range(6)]
    assert all(0.02 <= d < 0.5 for d in delays)
    assert max(delays) - min(delays) > 0.005


def test_error_rate_answers_500_or_503_and_commits_nothing(
    sandbox: RunningSandbox, api: Caller, unique: Callable[[str], str]
) -> None:
    before = api.get(TAGS).json()["total"]  # the default tags every sandbox starts with
    sandbox.set_faults(FaultOptions(error_rate=1.0, seed=1))
    statuses = {api.post(TAGS, {"name": unique("never")}).status_code for _ in range(12)}
    assert statuses == {500, 503}
    sandbox.set_faults(FaultOptions())
    assert api.get(TAGS).json()["total"] == before
    assert sandbox.stats()["faults"]["error_500"] + sandbox.stats()["faults"]["error_503"] == 12


def test_the_token_endpoint_gets_no_errors(sandbox: RunningSandbox) -> None:
    sandbox.set_faults(FaultOptions(error_rate=1.0, rate_limit=0.01))
    assert fetch_token(sandbox.base_url, sandbox.client_id, sandbox.client_secret)


def test_a_lost_answer_still_commits_the_write(sandbox: RunningSandbox, api: Caller) -> None:
    sandbox.set_faults(FaultOptions(lost_rate=1.0))
    answer = api.post(TAGS, {"name": "committed anyway"})
    assert answer.status_code == 500
    assert "committed" in answer.json()["message"]
    assert api.get(TAGS).status_code == 200  # reads are never lost
    sandbox.set_faults(FaultOptions())
    assert "committed anyway" in [t["name"] for t in api.get(TAGS).json()["data"]]
    assert sandbox.stats()["faults"]["lost"] == 1


def test_a_lost_update_is_committed_too(sandbox: RunningSandbox, api: Caller) -> None:
    tag = api.create(TAGS, {"name": "before"})
    sandbox.set_faults(FaultOptions(lost_rate=1.0))
    assert api.patch(f"{TAGS}/{tag['id']}", {"name": "after"}).status_code == 500
    sandbox.set_faults(FaultOptions())
    assert api.get(f"{TAGS}/{tag['id']}").json()["data"]["name"] == "after"


def test_a_rate_limit_answers_429_with_retry_after(sandbox: RunningSandbox, api: Caller) -> None:
    sandbox.set_faults(FaultOptions(rate_limit=2))
    answers = [api.get(TAGS) for _ in range(4)]
    assert [a.status_code for a in answers[:2]] == [200, 200]
    limited = [a for a in answers if a.status_code == 429]
    assert limited
    assert int(limited[0].headers["Retry-After"]) >= 1
    time.sleep(1.0)
    assert api.get(TAGS).status_code == 200  # the bucket refills


def _statuses(seed: int) -> list[int]:
    faults = FaultOptions(error_rate=0.5, seed=seed)
    with serve_in_thread(SandboxOptions(faults=faults)) as sb, httpx.Client(base_url=sb.base_url) as http:
        caller = Caller(http, fetch_token(sb.base_url, sb.client_id, sb.client_secret))
        return [caller.get(TAGS).status_code for _ in range(30)]


def test_faults_with_the_same_seed_repeat_exactly() -> None:
    first, again, other = _statuses(7), _statuses(7), _statuses(8)
    assert first == again
    assert set(first) == {200, 500, 503}
    assert first != other


def test_faults_change_at_run_time_and_can_be_read_back(sandbox: RunningSandbox, http: httpx.Client) -> None:
    assert http.get("/q/sandbox/faults").json() == FaultOptions().to_dict()
    sandbox.set_faults(FaultOptions(latency_ms=5, rate_limit=50.0, seed=4))
    assert http.get("/q/sandbox/faults").json()["rate_limit"] == 50.0


@pytest.mark.parametrize(
    "body",
    [
        {"error_rate": 2},
        {"latency_ms": -1},
        {"jitter_ms": 60001},
        {"rate_limit": 0},
        {"colour": 1},
        {"seed": 1.5},
        {"error_rate": "x"},
        [1],
    ],
)
def test_invalid_fault_options_are_refused(http: httpx.Client, body: object) -> None:
    answer = http.post("/q/sandbox/faults", json=body)
    assert answer.status_code == 400
    assert answer.json()["message"].startswith("ValidationError:")


def test_stats_count_requests_by_method_and_route_and_reset(sandbox: RunningSandbox, api: Caller) -> None:
    sandbox.reset_stats()
    api.get("/institution/catalogue/subjects")
    api.get("/institution/catalogue/subjects")
    tag = api.create(TAGS, {"name": "counted"})
    api.get(f"{TAGS}/{tag['id']}")
    api.get("/institution/catalogue/subjects/unknown")
    fetch_token(sandbox.base_url, sandbox.client_id, sandbox.client_secret)
    stats = sandbox.stats()
    assert stats["requests"] == {
        "GET /institution/catalogue/subjects": 2,
        "GET /institution/catalogue/subjects/{id}": 1,
        "GET /institution/tags/{id}": 1,
        "POST /institution/tags": 1,
        "POST /realms/{realm}/protocol/openid-connect/token": 1,
    }
    assert stats["total"] == 6
    sandbox.reset_stats()
    assert sandbox.stats() == {"requests": {}, "faults": {}, "total": 0}


_json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
_fault_keys = st.sampled_from(["latency_ms", "jitter_ms", "error_rate", "lost_rate", "rate_limit", "seed", "other"])


@settings(max_examples=60, deadline=None)
@given(body=st.dictionaries(_fault_keys, _json_scalars, max_size=6))
def test_any_fault_options_body_is_either_taken_whole_or_refused(body: dict[str, object]) -> None:
    try:
        options = FaultOptions.from_dict(body)
    except ValueError:
        return
    assert {k: options.to_dict()[k] for k in body} == body
