"""Options of one sandbox server (what `loader sandbox serve` and the test entry points take)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loader.sandbox.faults import FaultOptions
from loader.sandbox.tokens import DEFAULT_CLIENTS, Client

API_VERSION = "5.1.0"
REALM = "sandbox"


@dataclass(frozen=True)
class SandboxOptions:
    """Where the data lives, what to seed it with, and how the service behaves."""

    data: str = ":memory:"  # an SQLite file path, or ":memory:"
    seed: str | Path | dict[str, Any] | None = None  # applied only when the database is empty
    environment: str = "sandbox"
    token_ttl: float = 1800.0
    page_token_ttl: float = 60.0
    faults: FaultOptions = field(default_factory=FaultOptions)
    clients: tuple[tuple[str, str, str], ...] = ()  # extra (client_id, secret, institution)

    def __post_init__(self) -> None:
        for name in ("token_ttl", "page_token_ttl"):
            value = getattr(self, name)
            # nan passes every comparison and inf never expires: a token must die in finite time
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number of seconds > 0, not {value!r}")

    def all_clients(self) -> tuple[Client, ...]:
        extra = tuple(Client(*triple) for triple in self.clients)
        extra_ids = {c.client_id for c in extra}
        return tuple(c for c in DEFAULT_CLIENTS if c.client_id not in extra_ids) + extra
