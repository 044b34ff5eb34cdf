"""The retry policy and the redaction of logs: pure rules, checked without a server."""

from __future__ import annotations

import logging
import string
from email.utils import formatdate
from time import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.api.auth import TokenUnavailable
from loader.api.errors import (
    Conflict,
    NoAnswer,
    NotFound,
    OutcomeUnknown,
    RateLimited,
    ServerError,
    Unauthorized,
    Unreachable,
    ValidationFailed,
)
from loader.api.requestlog import HTTP_LOGGER, REDACTED, log_request, redact
from loader.api.retry import MAX_RETRY_AFTER_S, parse_retry_after, retry_hook
from loader.redaction import RedactionFilter

TOKEN_CHARS = string.ascii_letters + string.digits + "-_."


@pytest.mark.parametrize(
    ("error", "get", "patch", "post"),
    [
        (RateLimited(429, "slow down"), True, True, True),
        (Unreachable("refused"), True, True, True),
        (TokenUnavailable("idp down"), True, True, True),
        (ServerError(503, "unavailable"), True, True, False),
        (ServerError(500, "boom"), True, True, False),
        (ServerError(502, "bad gateway"), True, True, False),
        (ServerError(501, "not implemented"), False, False, False),
        (NoAnswer("timeout"), True, True, False),
        (OutcomeUnknown("lost"), False, False, False),
        (ValidationFailed(400, "ValidationError: x"), False, False, False),
        (Unauthorized(401, "no"), False, False, False),
        (NotFound(404, "none"), False, False, False),
        (Conflict(409, "exists"), False, False, False),
    ],
)
def test_reads_and_updates_are_retried_on_transient_failures_and_creates_only_when_nothing_was_sent(
    error, get, patch, post
):
    assert [bool(retry_hook(method)(error)) for method in ("GET", "PATCH", "POST")] == [get, patch, post]


def test_retry_after_replaces_the_computed_wait_and_is_capped():
    assert retry_hook("POST")(RateLimited(429, "slow", retry_after=2.0)) == 2.0
    assert retry_hook("GET")(ServerError(503, "later", retry_after=3.0)) == 3.0
    assert retry_hook("GET")(RateLimited(429, "slow", retry_after=3600.0)) == MAX_RETRY_AFTER_S
    assert retry_hook("GET")(RateLimited(429, "slow", retry_after=None)) is True


def test_retry_after_is_read_as_seconds_or_as_an_http_date():
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after("-3") == 0.0
    assert 8.0 <= (parse_retry_after(formatdate(time() + 10, usegmt=True)) or 0) <= 10.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
    assert parse_retry_after("nan") is None


@settings(max_examples=80)
@given(token=st.text(alphabet=TOKEN_CHARS, min_size=8, max_size=60), prefix=st.text(alphabet=" :;,\t\n", max_size=20))
def test_bearer_tokens_and_secret_fields_never_survive_redaction(token, prefix):
    for text in (
        f"{prefix}Authorization: Bearer {token}",
        f'{prefix}{{"access_token": "{token}", "expires_in": 60}}',
        f"{prefix}grant_type=client_credentials&client_secret={token}&client_id=x",
    ):
        # A token that is part of the surrounding words ("access_t") would be found there, not leaked.
        assert redact(text).count(token) == text.replace(token, "", 1).count(token)


@settings(max_examples=50)
@given(
    secret=st.text(alphabet=string.ascii_letters + string.digits, min_size=4, max_size=40),
    around=st.text(alphabet=" :=,;\"'{}()[]\n", max_size=30),
)
def test_known_values_are_removed_wherever_they_appear(secret, around):
    cleaned = redact(f"{around}{secret}{around}{secret}", [secret])
    assert secret not in cleaned
    assert cleaned.count(REDACTED) >= 2


def test_the_redaction_filter_scrubs_messages_arguments_and_exceptions(caplog):
    logger = logging.getLogger(HTTP_LOGGER)
    held = RedactionFilter(lambda: ["tok-1234567890", "the-client-secret"])
    logger.addFilter(held)
    try:
        with caplog.at_level(logging.INFO, logger=HTTP_LOGGER):
            logger.info("sent %s with %s", "tok-1234567890", "the-client-secret")
            try:
                raise RuntimeError("failed with Bearer tok-1234567890")
            except RuntimeError:
                logger.exception("request failed")
    finally:
        logger.removeFilter(held)
    text = caplog.text
    assert "tok-1234567890" not in text and "the-client-secret" not in text
    assert "sent *** with ***" in text
    assert "request failed (RuntimeError: failed with Bearer ***)" in text


def test_a_request_line_holds_method_path_status_time_and_attempt(caplog):
    logger = logging.getLogger(HTTP_LOGGER)
    with caplog.at_level(logging.INFO, logger=HTTP_LOGGER):
        log_request(logger, "GET", "/institution/catalogue/subjects", "200", 0.0123, 1)
        log_request(logger, "POST", "/realms/sandbox/protocol/openid-connect/token", "200", 0.002, None)
    assert caplog.messages == [
        "GET /institution/catalogue/subjects 200 12 ms attempt 1",
        "POST /realms/sandbox/protocol/openid-connect/token 200 2 ms",
    ]
