"""Fixtures of the client tests: real sandboxes on loopback ports, stopped after each test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from loader.profile import Profile, load_profile
from loader.sandbox.server import RunningSandbox, SandboxOptions, serve_in_thread


@pytest.fixture
def profile() -> Profile:
    return load_profile()


@pytest.fixture
def start_sandbox() -> Iterator[Callable[..., RunningSandbox]]:
    """start_sandbox(**SandboxOptions fields) -> a running sandbox, stopped after the test."""
    with ExitStack() as stack:

        def start(**options: Any) -> RunningSandbox:
            return stack.enter_context(serve_in_thread(SandboxOptions(**options)))

        yield start
