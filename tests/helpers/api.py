"""Helpers of the client tests: environments pointing at sandboxes, seeds, stats look-ups."""

from __future__ import annotations

from typing import Any

from loader.config import Environment, RetrySettings
from loader.environments import sandbox_environment
from loader.sandbox.server import RunningSandbox

# Quick waits so retry tests take milliseconds; attempts stay bounded.
FAST_RETRY = RetrySettings(attempts=8, wait_initial=0.01, wait_max=0.05, wait_jitter=0.01, timeout=60.0)
TOKEN_ROUTE = "POST /realms/{realm}/protocol/openid-connect/token"


def schools_seed(count: int, prefix: str = "S") -> dict[str, Any]:
    return {
        "institution-a": {"schools": [{"code": f"{prefix}{i:05d}", "name": f"School {i}"} for i in range(count)]},
        "institution-b": {"schools": [{"code": "B-ONLY", "name": "Other institution's school"}]},
    }


def environment_for(sb: RunningSandbox, **changes: Any) -> Environment:
    return sandbox_environment(sb, **{"name": "test", "timeout": 10.0, "retry": FAST_RETRY, **changes})


def requests_to(stats: dict[str, Any], route: str) -> int:
    return int(stats["requests"].get(route, 0))


def writes_answered(sandbox: Any) -> int:
    """The writes (POST, PATCH, PUT) the sandbox has answered since its counters were reset, the
    requests for a token left out."""
    return sum(n for route, n in sandbox.stats()["requests"].items()
               if route.split()[0] in ("POST", "PATCH", "PUT") and "/realms/" not in route)
