"""Shared test guards. Fixtures of one area live in that area's conftest.py."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# Under CI=true every property test runs the same examples each time (derandomised), so a
# submission never fails on an example nobody has seen; locally the examples still vary. No
# example has a deadline: on a loaded machine a slow example is no failure (speed is measured by
# the benchmarks, never by a timed assert).
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
settings.register_profile("dev", print_blob=True, deadline=None)
settings.load_profile("ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "dev")


@pytest.fixture(autouse=True)
def _no_real_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach a real environment: clear every LOADER_* variable."""
    for name in list(os.environ):
        if name.startswith("LOADER_"):
            monkeypatch.delenv(name, raising=False)
