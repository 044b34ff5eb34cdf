"""Injected faults: latency, errors before commit, answers lost after commit, rate limiting.

Every random draw comes from one `random.Random(seed)`, so a run with the same requests in the
same order meets the same faults. What each fault does:

- latency: every /institution request (and the token endpoint) waits `latency_ms` plus a uniform
  draw in `[0, jitter_ms]`.
- error_rate: with this probability an /institution request is answered 500 or 503 (even odds)
  before it is handled, so nothing is committed.
- lost_rate: with this probability a successful write (POST, PATCH) is committed and then answered
  500 instead of its result: the caller cannot tell it from a failure, which is the point.
- rate_limit: a token bucket of `rate_limit` requests per second (burst of the same size); an
  /institution request finding it empty is answered 429 with `Retry-After` in whole seconds.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import asdict, dataclass, fields
from typing import Any

MIN_RATE = 0.01  # requests per second; below it Retry-After would exceed a few minutes
MAX_DELAY_MS = 60_000  # a sandbox that sleeps longer than a minute per request helps no test


@dataclass(frozen=True)
class FaultOptions:
    """Fault settings of a sandbox; all zero/None means a well-behaved service."""

    latency_ms: float = 0
    jitter_ms: float = 0
    error_rate: float = 0.0
    lost_rate: float = 0.0
    rate_limit: float | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("latency_ms", "jitter_ms"):
            if not 0 <= getattr(self, name) <= MAX_DELAY_MS:
                raise ValueError(f"{name} must be between 0 and {MAX_DELAY_MS}")
        for name in ("error_rate", "lost_rate"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1")
        if self.rate_limit is not None and not MIN_RATE <= self.rate_limit:
            raise ValueError(f"rate_limit must be >= {MIN_RATE} requests per second (or None for no limit)")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FaultOptions:
        """Build from a JSON object; unknown keys and wrong types raise ValueError."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown field '{unknown[0]}'")
        for name, value in data.items():
            if isinstance(value, bool) or not (
                isinstance(value, int | float) or (value is None and name == "rate_limit")
            ):
                raise ValueError(f"field '{name}' must be a number")
        if "seed" in data and not isinstance(data["seed"], int):
            raise ValueError("field 'seed' must be an integer")
        return cls(**data)


@dataclass(frozen=True)
class Decision:
    """What the injector decided for one request before it is handled."""

    delay_s: float = 0.0
    status: int | None = None  # 429, 500 or 503: answer this instead of handling the request
    retry_after: int | None = None


class FaultInjector:
    """Draws faults for requests; owned by one app (one event loop), never shared across threads."""

    def __init__(self, options: FaultOptions) -> None:
        self.counts: dict[str, int] = {}
        self.reset(options)

    def reset(self, options: FaultOptions) -> None:
        self.options = options
        self._rng = random.Random(options.seed)
        self._bucket = max(1.0, options.rate_limit) if options.rate_limit else 0.0
        self._bucket_time = time.monotonic()

    def _count(self, name: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1

    def _delay(self) -> float:
        opts = self.options
        if not opts.latency_ms and not opts.jitter_ms:
            return 0.0
        self._count("latency")
        jitter = self._rng.uniform(0, opts.jitter_ms) if opts.jitter_ms else 0.0
        return (opts.latency_ms + jitter) / 1000.0

    def for_token_request(self) -> Decision:
        return Decision(delay_s=self._delay())

    def for_api_request(self) -> Decision:
        delay = self._delay()
        retry_after = self._take_from_bucket()
        if retry_after is not None:
            self._count("rate_limited")
            return Decision(delay_s=delay, status=429, retry_after=retry_after)
        if self.options.error_rate and self._rng.random() < self.options.error_rate:
            status = 500 if self._rng.random() < 0.5 else 503
            self._count(f"error_{status}")
            return Decision(delay_s=delay, status=status)
        return Decision(delay_s=delay)

    def answer_lost(self) -> bool:
        """Called after a write committed: True means answer 500 instead of the result."""
        if self.options.lost_rate and self._rng.random() < self.options.lost_rate:
            self._count("lost")
            return True
        return False

    def _take_from_bucket(self) -> int | None:
        rate = self.options.rate_limit
        if rate is None:
            return None
        now = time.monotonic()
        capacity = max(1.0, rate)
        self._bucket = min(capacity, self._bucket + (now - self._bucket_time) * rate)
        self._bucket_time = now
        if self._bucket >= 1.0:
            self._bucket -= 1.0
            return None
        return max(1, math.ceil((1.0 - self._bucket) / rate))
