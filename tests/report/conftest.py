"""Fixtures of the report tests."""

from __future__ import annotations

import pytest
from helpers.report import small_plan

from loader.plan.model import Plan


@pytest.fixture
def plan() -> Plan:
    return small_plan()
