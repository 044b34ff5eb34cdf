"""Value steps: transforms, types, split, map, default, pattern, max_length, and what they refuse."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.source.patterns import compile_pattern
from loader.source.steps import EMPTY, TRANSFORM_STEPS, TYPE_STEPS, StepError, Steps, apply_steps, text_of


@pytest.mark.parametrize(
    ("value", "expected"),
    [(101, "101"), (101.0, "101"), (1.5, "1.5"), ("00851", "00851"), (True, "TRUE"),
     (dt.date(2027, 2, 28), "2027-02-28"), (dt.datetime(2027, 2, 28, 9, 30), "2027-02-28T09:30:00")],
)
def test_text_of_a_value_never_gains_a_trailing_point_zero(value: object, expected: str) -> None:
    assert text_of(value) == expected


def test_transforms_apply_in_order_and_strip_removes_non_breaking_spaces() -> None:
    steps = Steps(transform=("strip", "collapse_spaces", "upper"))
    assert apply_steps("\u00a0 bsc   hons\u00a0 ", steps) == "BSC HONS"
    assert apply_steps("  keep  inner  ", Steps(transform=("strip",))) == "keep  inner"
    assert apply_steps("bachelor of arts", Steps(transform=("title",))) == "Bachelor Of Arts"
    assert apply_steps("ABC", Steps(transform=("lower",))) == "abc"


@pytest.mark.parametrize("value", [None, "", "   ", "\u00a0\t"])
def test_empty_and_whitespace_cells_are_empty_unless_a_default_is_given(value: object) -> None:
    assert apply_steps(value, Steps()) is EMPTY
    assert apply_steps(value, Steps(has_default=True, default="n/a")) == "n/a"
    assert apply_steps(value, Steps(type="integer", has_default=True, default=0)) == 0


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [
        ("12", "integer", 12), (12, "integer", 12), (" 12 ", "integer", 12), ("12.0", "integer", 12),
        ("1.25", "number", 1.25), (3, "number", 3), ("4.0", "number", 4),
        ("Yes", "boolean", True), ("n", "boolean", False), ("TRUE", "boolean", True), (0, "boolean", False),
        (True, "boolean", True),
        (dt.date(2027, 2, 28), "date", "2027-02-28"), ("2027-02-28", "date", "2027-02-28"),
        ("28/02/2027", "date", "2027-02-28"), ("1/3/2027", "date", "2027-03-01"),
        (dt.datetime(2027, 2, 28), "date", "2027-02-28"),
        (dt.date(1970, 1, 2), "epoch_ms", 86_400_000), ("1970-01-01T00:00:01", "epoch_ms", 1000),
        ("1970-01-01T10:00:00+10:00", "epoch_ms", 0), (1234, "epoch_ms", 1234), ("02/01/1970", "epoch_ms", 86_400_000),
        ("a, b,, c", "list", ["a", "b", "c"]),
    ],
)
def test_types_convert_what_users_write(value: object, kind: str, expected: object) -> None:
    assert apply_steps(value, Steps(type=kind)) == expected


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [
        ("next week", "date", "expected a date like 2027-02-28 or 28/02/2027 or a date cell, got 'next week'"),
        ("31/02/2027", "date", "that date does not exist: '31/02/2027'"),
        (dt.datetime(2027, 2, 28, 9, 30), "date", "expected a date, got a date and time '2027-02-28T09:30:00'"),
        ("12.5", "integer", "expected a whole number, got '12.5'"),
        ("twelve", "number", "expected a number, got 'twelve'"),
        ("nan", "number", "expected a finite number, got 'nan'"),
        ("maybe", "boolean", "expected yes/no, true/false, y/n or 1/0, got 'maybe'"),
        ("soon", "epoch_ms", "expected a date or date-time like 2027-02-28T09:30 or a date cell, got 'soon'"),
    ],
)
def test_a_failing_type_says_what_was_expected_and_what_was_found(value: object, kind: str, expected: str) -> None:
    with pytest.raises(StepError) as caught:
        apply_steps(value, Steps(type=kind))
    assert str(caught.value) == expected


def test_split_map_pattern_and_max_length_apply_to_each_item() -> None:
    steps = Steps(split=";", map={"M": "MATH101"}, pattern=compile_pattern(r"[A-Z]{4}\d{3}"), max_length=7)
    assert apply_steps("M; PHYS101 ;", steps) == ["MATH101", "PHYS101"]
    with pytest.raises(StepError, match="expected text matching pattern"):
        apply_steps("M;phys", steps)
    assert apply_steps(" ; ", steps) is EMPTY


def test_map_looks_up_the_source_text_then_the_type_converts_the_mapped_value() -> None:
    steps = Steps(type="boolean", map={"Oui": True, "Non": False})
    assert apply_steps("Oui", steps) is True
    assert apply_steps("yes", steps) is True  # not in the map: passes through to the type
    assert apply_steps("Live", Steps(map={"Live": "ACTIVE"})) == "ACTIVE"
    assert apply_steps("Other", Steps(map={"Live": "ACTIVE"})) == "Other"
    assert apply_steps(101, Steps(map={"101": "one-oh-one"})) == "one-oh-one"


def test_max_length_counts_characters() -> None:
    assert apply_steps("abcd", Steps(max_length=4)) == "abcd"
    with pytest.raises(StepError, match="expected at most 3 characters, got 4: 'abcd'"):
        apply_steps("abcd", Steps(max_length=3))


cell_values = st.one_of(
    st.none(),
    st.text(max_size=30),
    st.integers(min_value=-(2**62), max_value=2**62),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.dates(),
    st.datetimes(),
    st.times(),
)


@settings(max_examples=300, deadline=None)
@given(
    value=cell_values,
    kind=st.sampled_from(list(TYPE_STEPS)),
    transforms=st.lists(st.sampled_from(list(TRANSFORM_STEPS)), max_size=3),
    split=st.sampled_from([None, ";", ","]),
    pattern=st.sampled_from([None, ".*", r"\d+"]),
)
def test_any_cell_gives_a_value_empty_or_a_step_error_never_a_crash(
    value: object, kind: str, transforms: list[str], split: str | None, pattern: str | None
) -> None:
    steps = Steps(transform=tuple(transforms), type=kind, split=split,
                  pattern=compile_pattern(pattern) if pattern else None, max_length=20)
    try:
        result = apply_steps(value, steps)
    except StepError as error:
        assert str(error).startswith(("expected", "that date does not exist"))
        return
    if result is EMPTY:
        return
    if split or kind == "list":
        assert isinstance(result, list) and result
    elif kind in ("string", "date"):
        assert isinstance(result, str)
    elif kind == "boolean":
        assert isinstance(result, bool)
    else:
        assert isinstance(result, int | float) and not isinstance(result, bool)


@pytest.mark.parametrize(
    ("value", "steps", "expected"),
    [
        ("not-an-email", Steps(pattern=compile_pattern(r"[^@]+@[^@]+")),
         "expected text matching pattern '[^@]+@[^@]+', got (hidden)"),
        ("ann.lee@example.edu", Steps(max_length=5), "expected at most 5 characters, got 19: (hidden)"),
        ("1 January", Steps(type="date"), "expected a date like 2027-02-28 or 28/02/2027 or a date cell, got (hidden)"),
        ("x; ann.lee", Steps(split=";", max_length=5), "expected at most 5 characters, got 7: (hidden)"),
    ],
)
def test_a_pii_field_s_step_error_says_what_was_expected_without_the_value(
    value: str, steps: Steps, expected: str
) -> None:
    with pytest.raises(StepError) as caught:
        apply_steps(value, steps, pii=True)
    assert str(caught.value) == expected
    assert caught.value.__suppress_context__  # the error that names the value is not chained
    with pytest.raises(StepError) as shown:
        apply_steps(value, steps)
    assert str(shown.value).endswith("'")  # without pii the value is shown


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # Excel keeps times as fractions of a day: 09:30 may come back a microsecond short.
        (dt.datetime(2027, 2, 28, 9, 29, 59, 999_999), 1_803_807_000_000),
        ("2027-02-28T09:30:00.000600", 1_803_807_000_001),
        ("2027-02-28T09:30:00.000400", 1_803_807_000_000),
        (dt.datetime(1969, 12, 31, 23, 59, 59, 999_600), 0),
    ],
)
def test_epoch_ms_rounds_to_the_nearest_millisecond(value: object, expected: int) -> None:
    assert apply_steps(value, Steps(type="epoch_ms")) == expected


# ---- contract section 4.1: format, serial, pad, replace, pattern messages, bounded regexes ----

LOCAL = ("%d-%m-%Y", "%d %b %Y", "%d/%m/%y", "%d/%m/%Y %H:%M", "%d/%m/%Y", "serial")


@pytest.mark.parametrize(
    "value",
    ["03-07-2005", "3 Jul 2005", "03/07/05", "03/07/2005 00:00", "3/7/2005", 38536, 38536.0,
     dt.datetime(2005, 7, 3, 0, 0), dt.date(2005, 7, 3)],
)
def test_format_reads_the_local_date_forms_staff_send(value: object) -> None:
    assert apply_steps(value, Steps(type="date", formats=LOCAL)) == "2005-07-03"


def test_a_serial_with_a_time_of_day_is_a_date_time() -> None:
    assert apply_steps(38536.5, Steps(type="epoch_ms", formats=("serial",))) == 1120392000000
    with pytest.raises(StepError, match="expected a date, got a date and time"):
        apply_steps(38536.5, Steps(type="date", formats=("serial",)))


@pytest.mark.parametrize(
    ("value", "formats", "message"),
    [
        ("31/02/2005", (), "that date does not exist: '31/02/2005'"),
        ("31/02/2005", ("%d/%m/%Y",), "that date does not exist: '31/02/2005'"),
        ("29 Feb 2005", ("%d %b %Y",), "that date does not exist: '29 Feb 2005'"),
        ("2005-02-29", (), "that date does not exist: '2005-02-29'"),
        (60, ("serial",), "that date does not exist (Excel's serial 60 is 29 February 1900): '60'"),
        ("July 3", ("%d/%m/%Y", "%d %b %Y", "serial"),
         "expected a date like 28/02/2027, 28 Feb 2027 or an Excel serial number or a date cell, got 'July 3'"),
        (38536, ("%d/%m/%Y",), "expected a date like 28/02/2027 or a date cell, got '38536'"),
    ],
)
def test_impossible_and_unreadable_dates_say_which(value: object, formats: tuple[str, ...], message: str) -> None:
    with pytest.raises(StepError) as refused:
        apply_steps(value, Steps(type="date", formats=formats))
    assert str(refused.value) == message


def test_pad_left_pads_codes_stored_as_numbers_and_replace_rewrites_text() -> None:
    assert apply_steps(4101, Steps(pad=(5, "0"))) == "04101"
    assert apply_steps("04101", Steps(pad=(5, "0"))) == "04101"
    assert apply_steps("123456", Steps(pad=(5, "0"))) == "123456"
    dashes = Steps(replace=(compile_pattern(r"[\s-]+"), ""), pad=(6, "0"))
    assert apply_steps("12 - 34", dashes) == "001234"
    assert apply_steps("Dr  Ann Lee", Steps(replace=(compile_pattern(r"^(Dr|Mr|Ms)\s+"), ""))) == "Ann Lee"


def test_a_pattern_message_is_what_the_error_says() -> None:
    email = Steps(pattern=compile_pattern(r"[^@\s]+@[^@\s]+\.[^@\s]+"), pattern_message="a valid e-mail address")
    assert apply_steps("ann.lee@example.edu", email) == "ann.lee@example.edu"
    with pytest.raises(StepError) as refused:
        apply_steps("ann.lee at example", email)
    assert str(refused.value) == "expected a valid e-mail address, got 'ann.lee at example'"
    with pytest.raises(StepError) as hidden:
        apply_steps("ann.lee at example", email, pii=True)
    assert str(hidden.value) == "expected a valid e-mail address, got (hidden)"


def test_a_catastrophic_pattern_on_a_long_cell_is_stopped_with_an_error_not_a_hang() -> None:
    steps = Steps(pattern=compile_pattern(r"^(a|aa)+$"), pattern_message="only a's")
    with pytest.raises(StepError) as refused:
        apply_steps("a" * 5000 + "!", steps)
    assert "took over 0.25 s on this cell and was stopped" in str(refused.value)


def test_a_lookup_miss_suggests_the_closest_key_but_not_for_pii() -> None:
    steps = Steps(lookup={"SCI": "Faculty of Science", "851": "Engineering"}, lookup_name="a Code listed in c.xlsx")
    assert apply_steps(851, steps) == "Engineering"
    with pytest.raises(StepError) as refused:
        apply_steps("SIC", steps)
    assert str(refused.value) == "expected a Code listed in c.xlsx (did you mean 'SCI'?), got 'SIC'"
    with pytest.raises(StepError) as hidden:
        apply_steps("SIC", steps, pii=True)
    assert str(hidden.value) == "expected a Code listed in c.xlsx, got (hidden)"
    assert apply_steps("SIC", Steps(lookup={"SCI": "x"}, has_default=True, default="Unknown")) == "Unknown"
