"""The OpenAPI 3.1 description of the sandbox (filled in below)."""

from __future__ import annotations

from typing import Any


def build_openapi() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "Institution Data Service (sandbox)", "version": "5.1.0"},
        "paths": {},
    }
