"""Fixtures of the sources' tests: a real PostgreSQL server for the SQL kind."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers import postgres


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A SQLAlchemy URL of a throwaway PostgreSQL cluster (skipped, saying why, where none can start;
    failed under CI=true)."""
    with postgres.required_cluster() as url:
        yield url
