"""Fixtures of the sandbox tests: a running sandbox and a plain httpx caller per institution."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import httpx
import pytest
from helpers.sandbox import Caller, caller_for

from loader.sandbox.server import RunningSandbox, SandboxOptions, serve_in_thread

_unique = itertools.count(1)


def _unique_code(prefix: str) -> str:
    return f"{prefix}-{next(_unique)}"


@pytest.fixture
def unique() -> Callable[[str], str]:
    """Makes codes no other test of the session uses."""
    return _unique_code


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
