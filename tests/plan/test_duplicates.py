"""The probable-duplicate rule (`loader.plan.duplicates`): each clause of the contract's rule, name
folding, and the index held equal to scoring every pair (the plain definition)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loader.plan.duplicates import Person, find_duplicates, fold_names, person_of, resemblance

NAMES = ("first_name", "last_name")


def _person(first: str, last: str, email: str | None = None, born: str | None = None) -> Person:
    return person_of({"first_name": first, "last_name": last, "email_address": email, "date_of_birth": born}, NAMES)


def test_names_fold_accents_case_hyphens_and_order() -> None:
    assert fold_names(["Zoë", "Smith-Jones"]) == fold_names(["smith jones", "ZOE"]) == "jones smith zoe"
    assert fold_names(["O'Brien", None]) == "brien o"


def test_birth_date_and_e_mail_agree_without_similar_names() -> None:
    found = resemblance(_person("Ana", "Lee", "a@x.invalid", "2001-02-03"),
                        _person("Bo", "Kim", "A@X.invalid", "2001-02-03"), 0.9)
    assert found is not None and found[0] == ("date_of_birth", "email_address")


def test_birth_date_and_similar_names_agree_with_a_typo_and_swapped_names() -> None:
    found = resemblance(_person("Marlo", "Kaixmi", None, "2001-02-03"), _person("Kaismi", "Marlo", None, "2001-02-03"),
                        0.9)
    assert found is not None and found[0] == ("date_of_birth", "names") and 0.9 <= found[1] < 1


def test_e_mail_and_similar_names_agree_without_a_birth_date() -> None:
    found = resemblance(_person("Ana", "Lee", "Ana.Lee@x.invalid"), _person("ana", "lee", "ana.lee@x.invalid"), 0.9)
    assert found is not None and found[0] == ("email_address", "names")


def test_a_swapped_day_and_month_counts_only_with_an_equal_e_mail() -> None:
    row = _person("Ana", "Lee", "a@x.invalid", "2001-03-04")
    assert resemblance(row, _person("Ana", "Lee", "b@x.invalid", "2001-04-03"), 0.9) is None
    found = resemblance(row, _person("Bo", "Kim", "a@x.invalid", "2001-04-03"), 0.9)
    assert found is not None and found[0] == ("date_of_birth (day and month swapped)", "email_address")


def test_similar_names_alone_or_a_birth_date_alone_are_not_the_same_person() -> None:
    assert resemblance(_person("Ana", "Lee", "a@x.invalid", "2001-02-03"),
                       _person("Ana", "Lee", "b@x.invalid", "1999-02-03"), 0.9) is None
    assert resemblance(_person("Ana", "Lee", "a@x.invalid", "2001-02-03"),
                       _person("Bo", "Kim", "b@x.invalid", "2001-02-03"), 0.9) is None


def test_an_earlier_row_is_found_when_no_live_person_is() -> None:
    rows = [_person("Ana", "Lee", "a@x.invalid", "2001-02-03"), _person("Ana", "Lée", "b@x.invalid", "2001-02-03")]
    first, second = find_duplicates(rows, [], 0.9)
    assert first is None and second is not None and second.earlier and second.other == 0


_people = st.builds(
    lambda first, last, email, born: {"first_name": first, "last_name": last, "email_address": email,
                                      "date_of_birth": born},
    st.sampled_from(["Ana", "Ána", "Bo", "Kim", "Lee"]), st.sampled_from(["Lee", "Lée", "Kim", "Smith-Jones"]),
    st.sampled_from([None, "a@x.invalid", "A@x.invalid", "b@x.invalid"]),
    st.sampled_from([None, "2001-03-04", "2001-04-03", "2001-03-03", "1999-12-31"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_people, max_size=8), st.lists(_people, max_size=8))
def test_the_index_finds_what_scoring_every_pair_finds(new: list[dict[str, Any]], live: list[dict[str, Any]]) -> None:
    rows, lives = [person_of(p, NAMES) for p in new], [person_of(p, NAMES) for p in live]
    found = find_duplicates(rows, lives, 0.9)
    for at, row in enumerate(rows):
        every = [(i, r) for i, other in enumerate(lives) if (r := resemblance(row, other, 0.9)) is not None]
        earlier = [(i, r) for i, other in enumerate(rows[:at]) if (r := resemblance(row, other, 0.9)) is not None]
        best = max(every or earlier, key=lambda pair: (pair[1][1], -pair[0]), default=None)
        if best is None:
            assert found[at] is None
        else:
            result = found[at]
            assert result is not None and (result.other, result.earlier) == (best[0], not every)
            assert (result.agreed, result.score) == best[1]
