"""Shared test guards. Fixtures of one area live in that area's conftest.py."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _no_real_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach a real environment: clear every LOADER_* variable."""
    for name in list(os.environ):
        if name.startswith("LOADER_"):
            monkeypatch.delenv(name, raising=False)
