"""Errors of the service and of the way to it, translated at one boundary (the client).

    LoaderError
    └── ApiError                  the service answered with an error, or could not be reached
        ├── Unreachable           connection refused / DNS / TLS: nothing was sent
        ├── NoAnswer              a read (GET) or idempotent write (PATCH) was sent and no answer
        │                         came after every retry (timeouts, dropped connections)
        ├── OutcomeUnknown        a non-idempotent write was sent and its answer was lost
        │                         (timeout, dropped connection, 5xx after sending): the write
        │                         may or may not have happened; the executor decides
        ├── MalformedAnswer       a 2xx answer whose body breaks the API (not JSON, wrong shapes)
        ├── TokenError            the identity provider refused (`invalid_client`, ...)
        ├── EnvironmentMismatch   the service reports another environment than expected
        └── HttpError             an HTTP error status; `.status`, `.service_message`
            ├── ValidationFailed  400
            ├── Unauthorized      401
            ├── Forbidden         403
            ├── NotFound          404
            ├── Conflict          409 (`.service_message` names the existing record)
            ├── RateLimited       429 (`.retry_after` seconds, if given)
            └── ServerError       5xx

Every error carries the method and path (never a token) and a `hint` from the spec's
diagnostic rules where one applies.
"""

from __future__ import annotations

from typing import Any

from loader.errors import LoaderError


class ApiError(LoaderError):
    """The service refused the request or could not be reached."""

    def __init__(
        self,
        message: str,
        *,
        method: str | None = None,
        path: str | None = None,
        hint: str | None = None,
    ):
        where = f"{method} {path}" if method and path else None
        super().__init__(message, where=where, hint=hint)
        self.method = method
        self.path = path


class Unreachable(ApiError):
    """Nothing could be sent: connection refused, name not found, TLS failure."""


class NoAnswer(ApiError):
    """An idempotent request was sent and no answer came, after every retry."""


class OutcomeUnknown(ApiError):
    """A write was sent and its answer lost; it may have been committed.

    `status` is the HTTP status when the service answered 5xx, None when no answer came at all.
    The executor decides what to do (typically: look the record up by its key).
    """

    def __init__(self, message: str, *, status: int | None = None, **kw: Any):
        super().__init__(message, **kw)
        self.status = status


class MalformedAnswer(ApiError):
    """The service answered 2xx with a body that breaks its own API (not JSON, wrong shapes)."""


class TokenError(ApiError):
    """The identity provider refused to issue a token."""


class EnvironmentMismatch(ApiError):
    """The service reports another environment than `expect_environment`."""


class HttpError(ApiError):
    """The service answered with an error status."""

    def __init__(
        self,
        status: int,
        service_message: str,
        *,
        method: str | None = None,
        path: str | None = None,
        hint: str | None = None,
    ):
        super().__init__(f"HTTP {status}: {service_message}", method=method, path=path, hint=hint)
        self.status = status
        self.service_message = service_message


class ValidationFailed(HttpError):
    """400: the request parameters are not valid."""


class Unauthorized(HttpError):
    """401: the token is missing, malformed or expired."""


class Forbidden(HttpError):
    """403: no access to the resource."""


class NotFound(HttpError):
    """404: the resource does not exist."""


class Conflict(HttpError):
    """409: the request conflicts with an existing record (e.g. a code in use)."""


class RateLimited(HttpError):
    """429: too many requests; `retry_after` in seconds when the service said."""

    def __init__(self, status: int, service_message: str, *, retry_after: float | None = None, **kw: Any):
        super().__init__(status, service_message, **kw)
        self.retry_after = retry_after


class ServerError(HttpError):
    """5xx: the service failed; `retry_after` in seconds when the service said (503)."""

    def __init__(self, status: int, service_message: str, *, retry_after: float | None = None, **kw: Any):
        super().__init__(status, service_message, **kw)
        self.retry_after = retry_after


_BY_STATUS: dict[int, type[HttpError]] = {
    400: ValidationFailed,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    429: RateLimited,
}


def error_class_for(status: int) -> type[HttpError]:
    if status >= 500:
        return ServerError
    return _BY_STATUS.get(status, HttpError)
