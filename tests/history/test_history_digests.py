"""Digests: bound to entity, key and field; keyed ones change with the key."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.history.digests import DIGEST_BYTES, Digester, _value_text, compact_id, expand_id
from loader.source.equality import normalise

PLAIN = Digester()
KEYED = Digester(frozenset({"applicants"}), b"k" * 32)


def test_a_digest_is_bound_to_entity_key_and_field() -> None:
    base = PLAIN.value("programs", ("P1",), "name", "Law")
    assert PLAIN.value("programs", ("P1",), "name", "Law") == base
    assert PLAIN.value("courses", ("P1",), "name", "Law") != base
    assert PLAIN.value("programs", ("P2",), "name", "Law") != base
    assert PLAIN.value("programs", ("P1",), "title", "Law") != base
    assert PLAIN.value("programs", ("P1",), "name", "Laws") != base


def test_a_digest_is_of_the_normalised_value() -> None:
    assert PLAIN.value("p", ("1",), "f", 6.0) == PLAIN.value("p", ("1",), "f", "6")
    assert PLAIN.value("p", ("1",), "f", "") == PLAIN.value("p", ("1",), "f", None)
    assert PLAIN.value("p", ("1",), "f", {"b": 1, "a": 2}) == PLAIN.value("p", ("1",), "f", {"a": 2, "b": 1})


def test_keyed_digests_change_with_the_key_and_cover_keys_and_ids() -> None:
    other = Digester(frozenset({"applicants"}), b"j" * 32)
    for digester in (KEYED, other):
        assert digester.key_token("applicants", ("ann@example.org",)) != '["ann@example.org"]'
    assert KEYED.value("applicants", ("A1",), "email", "ann@example.org") != other.value(
        "applicants", ("A1",), "email", "ann@example.org")
    assert KEYED.key_token("applicants", ("A1",)) != other.key_token("applicants", ("A1",))
    assert KEYED.id_token("applicants", "x-1") != other.id_token("applicants", "x-1")
    assert KEYED.value("applicants", ("A1",), "email", "a") != PLAIN.value("applicants", ("A1",), "email", "a")


def test_a_personal_entity_without_a_key_is_refused() -> None:
    with pytest.raises(ValueError, match="history key"):
        Digester(frozenset({"applicants"})).value("applicants", ("A1",), "email", "a")


def test_set_elements_are_digested_one_by_one() -> None:
    assert PLAIN.elements("p", ("1",), "tags", ["b", "a", "a", ""]) == {
        PLAIN.element("p", ("1",), "tags", "a"), PLAIN.element("p", ("1",), "tags", "b")}


@pytest.mark.parametrize(
    "live_id",
    ["3f2b8c4e-1d2a-4b5c-9e8f-0a1b2c3d4e5f", "plain-id", "3F2B8C4E-1D2A-4B5C-9E8F-0A1B2C3D4E5F", "tab\tand\nline"],
)
def test_ids_are_compacted_and_expanded_exactly(live_id: str) -> None:
    assert expand_id(compact_id(live_id)) == live_id
    assert "\t" not in compact_id(live_id) and "\n" not in compact_id(live_id)
    assert len(compact_id("3f2b8c4e-1d2a-4b5c-9e8f-0a1b2c3d4e5f")) == 22


@pytest.mark.parametrize("field", ["name", "custom_attributes.Campus", "odd\x1fname"])
def test_a_value_digest_is_the_documented_hash_each_time_its_field_comes_again(field: str) -> None:
    import base64
    import hashlib
    import json

    digester = Digester()
    name = json.dumps(field) if "\x1f" in field else field
    for code, value, text in (("P1", "Law", "sLaw"), ("P2", 6.0, "s6"), ("P3", None, "jnull"), ("P4", [1], 'j["1"]')):
        data = f'programs\x1f["{code}"]\x1fv\x1f{name}\x1f{text}'.encode()
        expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()[:9]).decode()
        assert digester.value("programs", (code,), field, value) == expected
        assert digester.record("programs", (code,)).value(field, value) == expected


@settings(max_examples=300, deadline=None)
@given(
    value=st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
    | st.sampled_from(("", "2024-05-01", "2024-05-01T00:00:00Z", "2024-05-01T10:00", "1234-", "12345-7890"))
    | st.lists(st.text(max_size=3), max_size=2) | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    field=st.sampled_from(("name", "odd\x1fname")),
    keyed=st.booleans(),
)
def test_a_value_digest_is_the_plain_digest_of_the_normalised_value(value: object, field: str, keyed: bool) -> None:
    digester, entity = (KEYED, "applicants") if keyed else (PLAIN, "programs")
    record = digester.record(entity, ("P1",))
    assert record.value(field, value) == record._digest("v", field, _value_text(normalise(value)), DIGEST_BYTES)
