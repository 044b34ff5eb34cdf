"""An answer's status and body as the client's typed errors (loader.api.errors), with hints users
can act on: the one place an HTTP status becomes an error."""

from __future__ import annotations

from typing import Any

import httpx

from loader.api.errors import MalformedAnswer, OutcomeUnknown, RateLimited, ServerError, error_class_for
from loader.api.json_body import decoded
from loader.api.retry import IDEMPOTENT_METHODS, parse_retry_after

BEARER_HINT = (
    "a fresh token was refused: send the header `Authorization: Bearer <access_token>` with only the "
    "access_token value (not the whole token JSON body); if it persists, ask the platform operator "
    "whether this client may use this API"
)
_HINTS = {
    403: "this client has no access to this resource: ask the platform operator",
    404: "no record here: the `code` and `year` do not match a record, or it has not been created yet",
    409: "the service names the existing record in its message: match it by its key instead of creating it",
    429: "the service is limiting the request rate: lower --concurrency",
}


def answer_body(response: httpx.Response) -> Any:
    """The decoded JSON body of an answer, or None when it holds no JSON."""
    try:
        return decoded(response.content)
    except ValueError:
        return None


def checked_answer(response: httpx.Response, body: Any, method: str, path: str) -> dict[str, Any]:
    """The envelope of a 2xx answer; any other status raised as its typed error."""
    status = response.status_code
    if 200 <= status < 300:
        if not isinstance(body, dict):
            raise MalformedAnswer(
                f"the service answered HTTP {status} without a JSON envelope",
                method=method,
                path=path,
                hint="check base_url: it must end in the institution API prefix",
            )
        return body
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str) or not message:
        message = (response.text or response.reason_phrase or "").strip()[:300] or f"HTTP {status}"
    if status >= 500 and method not in IDEMPOTENT_METHODS:
        raise OutcomeUnknown(
            f"the service failed (HTTP {status}: {message}) after the request was sent; "
            "it may or may not have been applied",
            status=status,
            method=method,
            path=path,
        )
    cls = error_class_for(status)
    hint = BEARER_HINT if status == 401 else _HINTS.get(status)
    if 300 <= status < 400:
        hint = f"the service redirected to {response.headers.get('Location', '?')}: check base_url in loader.yaml"
    if cls in (RateLimited, ServerError):
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        raise cls(status, message, retry_after=retry_after, method=method, path=path, hint=hint)
    raise cls(status, message, method=method, path=path, hint=hint)
