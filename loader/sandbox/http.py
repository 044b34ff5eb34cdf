"""Request bodies in, JSON envelopes out: the HTTP edge shared by every route."""

from __future__ import annotations

import json
import math
import time
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from loader.sandbox.service import invalid

MAX_BODY_BYTES = 1024 * 1024


def now_ms() -> int:
    return int(time.time() * 1000)


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def json_response(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(_dumps(value), status_code=status, media_type="application/json", headers=headers)


def error_response(environment: str, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """The spec's error body: environment, timestamp, message."""
    body = {"environment": environment, "timestamp": now_ms(), "message": message}
    return json_response(body, status, headers)


def record_response(environment: str, version: str, data: Any, status: int = 200) -> Response:
    body = {"environment": environment, "timestamp": now_ms(), "version": version, "data": data}
    return json_response(body, status)


def page_response(
    environment: str | None, version: str, bodies: list[str], total: int, page_token: str | None
) -> Response:
    """A collection page, splicing the stored JSON texts of the records instead of re-encoding them."""
    head: dict[str, Any] = {} if environment is None else {"environment": environment}
    head.update(timestamp=now_ms(), version=version, total=total, page_total=len(bodies), page_token=page_token)
    text = _dumps(head)[:-1] + ',"data":[' + ",".join(bodies) + "]}"
    return Response(text, media_type="application/json")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


async def read_raw(request: Request, limit: int = MAX_BODY_BYTES) -> bytes:
    """The request body, refusing (400) anything larger than `limit` without reading it all."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise invalid(f"request body larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise invalid(f"request body larger than {limit} bytes")
            chunks.append(chunk)
    except ClientDisconnect:
        # The caller went away mid-body (e.g. a run cancelled): an answer nobody reads, not a bug.
        raise invalid("the client disconnected before sending the whole body") from None
    return b"".join(chunks)


async def read_json(request: Request) -> Any:
    """The JSON body of a write; malformed JSON of any kind is a 400, never a 500."""
    raw = await read_raw(request)
    if not raw.strip():
        raise invalid("request body must be a JSON object")
    try:
        value = json.loads(raw, parse_constant=_refuse_constant)
        check_finite(value)
    except (ValueError, RecursionError):
        raise invalid("request body is not valid JSON") from None
    return value


def check_finite(value: Any) -> None:
    """Reject numbers JSON cannot carry back (huge floats parse to inf)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("numbers must be finite")
    if isinstance(value, list):
        for item in value:
            check_finite(item)
    elif isinstance(value, dict):
        for item in value.values():
            check_finite(item)
