"""Fixtures of the report tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: the shared plan_support

from report_support import small_plan

from loader.plan_model import Plan


@pytest.fixture
def plan() -> Plan:
    return small_plan()
