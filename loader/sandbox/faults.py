"""Injected faults: latency, errors before commit, answers lost after commit, rate limiting.

Every random draw comes from one `random.Random(seed)`, so a run with the same requests in the
same order meets the same faults. What each fault does:

- latency: every /institution request (and the token endpoint) waits `latency_ms` plus a uniform
  draw in `[0, jitter_ms]`. A write waits before anything is done (a client that gives up during the
  wait changed nothing); a read is answered that long after it arrived, its own work inside the wait.
- error_rate: with this probability an /institution request is answered 500 or 503 (even odds)
  before it is handled, so nothing is committed.
- lost_rate: with this probability a successful write (POST, PATCH) is committed and then answered
  500 instead of its result: the caller cannot tell it from a failure, which is the point.
- rate_limit: a token bucket of `rate_limit` requests per second (burst of the same size); an
  /institution request finding it empty is answered 429 with `Retry-After` in whole seconds.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from dataclasses import asdict, dataclass, field, fields
from functools import cache
from typing import Any, get_type_hints

MIN_RATE = 0.01  # requests per second; below it Retry-After would exceed a few minutes
MAX_DELAY_MS = 60_000  # a sandbox that sleeps longer than a minute per request helps no test


@dataclass(frozen=True)
class Setting:
    """How one fault option is set: its `loader sandbox serve` flag, help and bounds.

    The one declaration of a fault option is its field in FaultOptions (type, default) with a
    Setting as metadata; the CLI flags, `serve_args`, the checks and the OpenAPI schema of
    /q/sandbox/faults are all derived from it. A new fault is a new field here and its effect in
    FaultInjector.
    """

    flag: str
    help: str
    minimum: float | None = None
    maximum: float | None = None


def _setting(default: Any, flag: str, help: str, minimum: float | None = None, maximum: float | None = None) -> Any:
    return field(default=default, metadata={"setting": Setting(flag, help, minimum, maximum)})


@dataclass(frozen=True)
class FaultOptions:
    """Fault settings of a sandbox; all zero/None means a well-behaved service."""

    latency_ms: float = _setting(0.0, "--latency-ms", "added latency per request, ms", 0, MAX_DELAY_MS)
    jitter_ms: float = _setting(0.0, "--jitter-ms", "uniform random extra latency, up to this, ms", 0, MAX_DELAY_MS)
    error_rate: float = _setting(0.0, "--error-rate", "share of requests answered 500/503 untouched", 0, 1)
    lost_rate: float = _setting(0.0, "--lost-rate", "share of writes committed, then answered 500", 0, 1)
    rate_limit: float | None = _setting(None, "--rate-limit", "requests per second before 429 (default: none)",
                                        MIN_RATE)
    seed: int = _setting(0, "--fault-seed", "seed of the fault draws")

    def __post_init__(self) -> None:
        for option in fault_options():
            option.check(getattr(self, option.name))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FaultOptions:
        """Build from a JSON object; unknown keys and wrong types raise ValueError."""
        known = {option.name for option in fault_options()}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown field '{unknown[0]}'")
        return cls(**data)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> FaultOptions:
        """From the flags `add_fault_arguments` declared; ValueError for a value out of bounds."""
        return cls(**{option.name: getattr(args, option.dest) for option in fault_options()})

    def serve_args(self) -> list[str]:
        """The `loader sandbox serve` flags that reproduce these options."""
        args: list[str] = []
        for option in fault_options():
            value = getattr(self, option.name)
            if value is not None:
                args += [option.setting.flag, repr(value)]
        return args


@dataclass(frozen=True)
class FaultOption:
    """One field of FaultOptions with what is derived from its declaration."""

    name: str
    kind: type[int] | type[float]
    nullable: bool
    default: Any
    setting: Setting

    @property
    def dest(self) -> str:
        return "fault_" + self.name  # argparse's name; `--seed` (the seed file) is another option

    def check(self, value: Any) -> None:
        if value is None and self.nullable:
            return
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or (self.kind is int and not isinstance(value, int)):
            raise ValueError(f"field '{self.name}' must be {'an integer' if self.kind is int else 'a number'}")
        if not math.isfinite(value):
            raise ValueError(f"{self.name} must be a finite number")
        low, high = self.setting.minimum, self.setting.maximum
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f"between {low:g} and {high:g}" if high is not None else f">= {low:g}"
            off = " (or null for none)" if self.nullable else ""
            raise ValueError(f"{self.name} must be {bounds}{off}")

    def json_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "type": ["number", "null"] if self.nullable else ("integer" if self.kind is int else "number"),
            "description": self.setting.help + f" (`loader sandbox serve {self.setting.flag}`)",
        }
        if self.setting.minimum is not None:
            schema["minimum"] = self.setting.minimum
        if self.setting.maximum is not None:
            schema["maximum"] = self.setting.maximum
        return schema


@cache
def fault_options() -> tuple[FaultOption, ...]:
    """Every fault option, in declaration order."""
    hints = get_type_hints(FaultOptions)
    found = []
    for f in fields(FaultOptions):
        hint = hints[f.name]
        nullable = hint != (inner := _non_null(hint))
        found.append(FaultOption(f.name, inner, nullable, f.default, f.metadata["setting"]))
    return tuple(found)


def _non_null(hint: Any) -> type[int] | type[float]:
    args = [a for a in getattr(hint, "__args__", (hint,)) if a is not type(None)]
    return int if args == [int] else float


def add_fault_arguments(parser: argparse.ArgumentParser) -> None:
    """The fault flags of `loader sandbox serve`, one per FaultOptions field."""
    for option in fault_options():
        parser.add_argument(
            option.setting.flag,
            dest=option.dest,
            type=option.kind,  # nan, inf and bounds are refused by FaultOptions
            default=option.default,
            metavar="N",
            help=option.setting.help,
        )


def faults_schema() -> dict[str, Any]:
    """The JSON schema of the /q/sandbox/faults body (OpenAPI `Faults`)."""
    return {
        "type": "object",
        "properties": {option.name: option.json_schema() for option in fault_options()},
        "additionalProperties": False,
    }


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
