"""Fixtures of the sandbox tests: a running sandbox and a plain httpx caller per institution."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from loader.sandbox.server import RunningSandbox, SandboxOptions, serve_in_thread

TOKEN_PATH = "/realms/sandbox/protocol/openid-connect/token"
_unique = itertools.count(1)


def _unique_code(prefix: str) -> str:
    return f"{prefix}-{next(_unique)}"


@pytest.fixture
def unique() -> Callable[[str], str]:
    """Makes codes no other test of the session uses."""
    return _unique_code


def fetch_token(base_url: str, client_id: str, secret: str) -> str:
    answer = httpx.post(
        base_url + TOKEN_PATH,
        data={"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret},
    )
    answer.raise_for_status()
    return str(answer.json()["access_token"])


@dataclass
class Caller:
    """Plain HTTP against the sandbox with one client's bearer token."""

    http: httpx.Client
    token: str

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.http.get(path, params=params or None, headers=self._headers())

    def post(self, path: str, body: Any) -> httpx.Response:
        return self.http.post(path, json=body, headers=self._headers())

    def patch(self, path: str, body: Any) -> httpx.Response:
        return self.http.patch(path, json=body, headers=self._headers())

    def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        answer = self.post(path, body)
        assert answer.status_code == 201, answer.text
        return answer.json()["data"]  # type: ignore[no-any-return]

    def all_pages(self, path: str, **params: Any) -> list[dict[str, Any]]:
        first = self.get(path, **params).json()
        records, token = list(first["data"]), first["page_token"]
        while token:
            page = self.get(path, page_token=token).json()
            records.extend(page["data"])
            token = page["page_token"]
        return records


def caller_for(sandbox: RunningSandbox, http: httpx.Client, other: bool = False) -> Caller:
    client_id = sandbox.other_client_id if other else sandbox.client_id
    secret = sandbox.other_client_secret if other else sandbox.client_secret
    return Caller(http, fetch_token(sandbox.base_url, client_id, secret))


@pytest.fixture(scope="module")
def sandbox() -> Iterator[RunningSandbox]:
    """One sandbox per test module; tests use unique codes so they do not see each other."""
    with serve_in_thread(SandboxOptions()) as running:
        yield running


@pytest.fixture(scope="module")
def http(sandbox: RunningSandbox) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sandbox.base_url, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def api(sandbox: RunningSandbox, http: httpx.Client) -> Caller:
    """Institution A's client."""
    return caller_for(sandbox, http)


@pytest.fixture(scope="module")
def other_api(sandbox: RunningSandbox, http: httpx.Client) -> Caller:
    """Institution B's client."""
    return caller_for(sandbox, http, other=True)
