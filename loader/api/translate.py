"""The one boundary where httpx's transport errors become the loader's API errors.

What matters is whether the request can have reached the service: a connection that could not be
made (or a token request that failed first) sent nothing, so any method may be retried
(Unreachable); after sending, a read or an idempotent update has simply had no answer (NoAnswer),
while a create may have been committed (OutcomeUnknown) and is left to the executor.
"""

from __future__ import annotations

import ssl

import httpx

from loader.api.auth import TOKEN_REQUEST
from loader.api.errors import ApiError, NoAnswer, OutcomeUnknown, Unreachable
from loader.api.retry import IDEMPOTENT_METHODS
from loader.config import Environment

_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.ProxyError, httpx.UnsupportedProtocol)


def _is_certificate_failure(error: BaseException) -> bool:
    """True when the TLS handshake failed because the peer's certificate was not trusted."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(current):
            return True
        current = current.__cause__ or current.__context__
    return False


def translate_transport_error(error: httpx.TransportError, method: str, path: str, env: Environment) -> ApiError:
    """The API error for a transport failure of `method path` (see the module docstring)."""
    kind = type(error).__name__
    try:
        is_token = bool(error.request.extensions.get(TOKEN_REQUEST))
    except RuntimeError:
        is_token = False
    if _is_certificate_failure(error):
        # Before anything else, the token request included: "did not answer" would send the user
        # looking at the network when the answer is a CA file.
        url = env.auth_url if is_token else env.base_url
        what = "identity provider" if is_token else "service"
        return Unreachable(
            f"the TLS certificate of the {what} at {url} is not trusted ({kind}: certificate verify failed)",
            method=method,
            path=path,
            hint="name the CA file that signed it with ca_bundle in loader.yaml (a PEM file), "
            "or check that the address is the right one",
        )
    if is_token:
        # The request itself was not sent yet: safe to retry whatever its method.
        return Unreachable(
            f"the identity provider at {env.auth_url} did not answer ({kind})",
            method=method,
            path=path,
            hint="check auth_url and the network",
        )
    if isinstance(error, _NOT_SENT):
        return Unreachable(
            f"the service at {env.base_url} could not be reached ({kind})",
            method=method,
            path=path,
            hint="check base_url and the network; is the service running?",
        )
    if method in IDEMPOTENT_METHODS:
        return NoAnswer(
            f"no answer from the service at {env.base_url} ({kind})",
            method=method,
            path=path,
            hint="the service may be slow or down: try again later, or raise `timeout` in loader.yaml",
        )
    return OutcomeUnknown(
        f"the answer was lost ({kind}) after the request was sent; it may or may not have been applied",
        method=method,
        path=path,
    )
