"""Malformed requests are answered 400 (or 404/405), never 500."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Callable
from urllib.parse import quote

import pytest
from helpers.sandbox import Caller
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loader.sandbox.server import RunningSandbox

WRITE_PATHS = [
    "/institution/catalogue/schools",
    "/institution/catalogue/subjects",
    "/institution/applicants",
    "/institution/applicants/credentials",
    "/institution/articulation-arrangements",
    "/institution/applications",
    "/institution/suggestions",
    "/institution/tags",
    "/institution/users",
]


def _raw_post(api: Caller, path: str, content: bytes) -> tuple[int, dict[str, object]]:
    answer = api.http.post(
        path, content=content, headers={"Authorization": f"Bearer {api.token}", "Content-Type": "application/json"}
    )
    return answer.status_code, answer.json()


@pytest.mark.parametrize(
    "content",
    [b"", b"{", b"not json", b"[1, 2]", b'"a string"', b"null", b"42", b'{"code": NaN}', b"\xff\xfe", b"[" * 5000],
)
def test_a_body_that_is_not_a_json_object_is_a_validation_error(api: Caller, content: bytes) -> None:
    status, body = _raw_post(api, WRITE_PATHS[0], content)
    assert status == 400
    assert str(body["message"]).startswith("ValidationError: ")
    assert set(body) == {"environment", "timestamp", "message"}


def test_a_body_over_one_mebibyte_is_refused_unread(api: Caller) -> None:
    huge = json.dumps({"code": "X", "name": "x" * (1024 * 1024)}).encode()
    status, body = _raw_post(api, WRITE_PATHS[0], huge)
    assert status == 400
    assert "larger than" in str(body["message"])


def test_an_unknown_field_is_named(api: Caller, unique: Callable[[str], str]) -> None:
    status, body = _raw_post(api, WRITE_PATHS[0], json.dumps({"code": unique("U"), "name": "n", "x": 1}).encode())
    assert (status, body["message"]) == (400, "ValidationError: unknown field 'x'")


@pytest.mark.parametrize(
    ("field", "value"),
    [("code", 5), ("name", ["a"]), ("custom_attributes", {"a": 1}), ("custom_attributes", "x"), ("code", "")],
)
def test_a_wrong_type_is_a_validation_error_naming_the_field(
    api: Caller, unique: Callable[[str], str], field: str, value: object
) -> None:
    body = {"code": unique("T"), "name": "n", field: value}
    status, answer = _raw_post(api, WRITE_PATHS[0], json.dumps(body).encode())
    assert status == 400
    assert f"'{field}'" in str(answer["message"])


def test_infinite_numbers_and_lone_surrogates_are_refused(api: Caller, unique: Callable[[str], str]) -> None:
    status, _ = _raw_post(api, "/institution/catalogue/subjects", b'{"code": "X1", "name": "n", "year": 1e999}')
    assert status == 400
    status, _ = _raw_post(api, WRITE_PATHS[0], b'{"code": "\\ud800", "name": "n"}')
    assert status == 400


def test_a_wrong_method_is_405_with_an_error_body(api: Caller) -> None:
    answer = api.http.delete("/institution/tags", headers={"Authorization": f"Bearer {api.token}"})
    assert answer.status_code == 405
    assert set(answer.json()) == {"environment", "timestamp", "message"}


def test_an_unknown_route_is_404_with_an_error_body(api: Caller) -> None:
    answer = api.get("/institution/nothing-here")
    assert answer.status_code == 404
    assert set(answer.json()) == {"environment", "timestamp", "message"}


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
_field_names = st.sampled_from(
    ["code", "name", "parent", "custom_attributes", "external_id", "applicant_id", "type", "tags", "status",
     "subjects_awarded", "mapping", "send_email", "roles", "email_address", "date_of_birth", "access", "id"]
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.sampled_from(WRITE_PATHS),
    body=st.dictionaries(_field_names | st.text(max_size=8), _json_values, max_size=6) | _json_values,
)
def test_any_json_body_to_any_create_is_answered_without_a_server_error(api: Caller, path: str, body: object) -> None:
    answer = api.http.post(path, content=json.dumps(body), headers={"Authorization": f"Bearer {api.token}"})
    assert answer.status_code in (201, 400, 409), answer.text
    assert "message" in answer.json() or "data" in answer.json()


# "." and ".." are not ids: RFC 3986 removes dot segments (httpx sends `/schools/.` as `/schools`).
_segments = st.text(min_size=1, max_size=30).filter(lambda s: s not in (".", ".."))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.dictionaries(_field_names, _json_values, max_size=5), segment=_segments)
def test_any_patch_and_any_id_are_answered_without_a_server_error(api: Caller, body: object, segment: str) -> None:
    school = api.all_pages("/institution/catalogue/schools")[:1]
    target = school[0]["id"] if school and len(segment) % 2 else quote(segment, safe="")
    answer = api.patch(f"/institution/catalogue/schools/{target}", body)
    assert answer.status_code in (200, 400, 404, 409), answer.text
    assert api.get(f"/institution/catalogue/courses/{quote(segment, safe='')}").status_code in (200, 404)


def test_a_client_leaving_mid_body_is_not_logged_as_a_sandbox_bug(
    sandbox: RunningSandbox, caplog: pytest.LogCaptureFixture
) -> None:
    host, port = sandbox.base_url.removeprefix("http://").split(":")
    with caplog.at_level(logging.ERROR):
        with socket.create_connection((host, int(port))) as raw:
            raw.sendall(
                b"POST /realms/sandbox/protocol/openid-connect/token HTTP/1.1\r\n"
                b"Host: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 200\r\n\r\n"
                b"grant_type=client_credentials"
            )
        time.sleep(0.3)  # the server notices the closed connection while reading the body
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert sandbox.stats()["total"] >= 0  # and it still answers
