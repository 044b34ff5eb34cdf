"""Probable duplicate people (contract section 11): which new rows look like a live person of another
key, or like an earlier row of the same source.

The rule, with `threshold` the block's (0-1): two people are the same when

    date of birth equal and (e-mail equal, or names similar >= threshold), or
    e-mail equal and names similar >= threshold;

a date of birth with day and month swapped counts as equal only with an equal e-mail. Names are
folded before they are compared (accents, case, hyphens and apostrophes, the order of the words) and
scored with rapidfuzz's normalised similarity, so a small typo still scores high. E-mails compare
case-folded.

Matching never looks at every pair: people are indexed by date of birth and by e-mail, and a row is
judged only against the people sharing its e-mail, and those sharing its date of birth whose names
score at the threshold (rapidfuzz scores a date's block in one call): the only ones the rule can call
the same. The result names fields and a score, never a value: reports show it.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import cache
from typing import Any, NamedTuple

from rapidfuzz import fuzz, process

DATE_OF_BIRTH = "date_of_birth"
EMAIL = "email_address"
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_PUNCTUATION = "-‐‑‒–—'’`.,_/"
_EPSILON = 1e-9  # below a threshold in percent: rapidfuzz's cutoff must not drop a score the threshold takes


class Person(NamedTuple):
    """One person as the rule reads them: folded names, e-mail (case-folded) and date of birth (ISO).
    A tuple: one is made per live record, and a tuple is the cheapest value to make."""

    names: str
    email: str | None
    born: str | None

    @property
    def swapped(self) -> str | None:
        """The date of birth with day and month swapped, None when that is no other valid date."""
        born = self.born
        if born is None or born[5:7] == born[8:10]:
            return None
        try:
            return date(int(born[:4]), int(born[8:10]), int(born[5:7])).isoformat()
        except ValueError:
            return None


@dataclass(frozen=True, slots=True)
class Resemblance:
    """A new row's best match: the other person's position, the fields that agreed and the name score."""

    other: int  # position in the live people, or in the new rows when `earlier`
    earlier: bool  # an earlier row of the source, not a live record
    agreed: tuple[str, ...]  # field names, "date_of_birth (day and month swapped)" for a swapped date
    score: float  # the names' similarity, 0-1


@cache
def _folding() -> dict[int, str | None]:
    """The translation that drops combining marks (accents, once decomposed) and makes punctuation a space."""
    table: dict[int, str | None] = {cp: None for cp in range(0x10000) if unicodedata.combining(chr(cp))}
    table.update({ord(c): " " for c in _PUNCTUATION})
    return table


def fold_names(parts: Iterable[Any]) -> str:
    """Names as compared: accents, case, hyphens and apostrophes folded, words sorted."""
    text = " ".join([str(p) for p in parts if p is not None]).casefold()
    # ASCII decomposes to itself and has no combining mark: only its punctuation needs the table
    text = (text if text.isascii() else unicodedata.normalize("NFKD", text)).translate(_folding())
    return " ".join(sorted(text.split()))


def _iso_date(value: Any) -> str | None:
    """A date of birth as compared: ISO YYYY-MM-DD (a text's first ten characters in that shape)."""
    if type(value) is str:  # the common case, first: one call per live record
        text = value.strip()[:10]
        return text if _ISO_DATE.fullmatch(text) else None
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if not isinstance(value, str):
        return None
    text = value.strip()[:10]
    return text if _ISO_DATE.fullmatch(text) else None


def person_of(record: Mapping[str, Any], name_fields: Sequence[str]) -> Person:
    """`record`'s fields as the rule reads them (`name_fields`: the match fields that are names)."""
    get = record.get
    email = get(EMAIL)
    return Person(
        fold_names([get(f) for f in name_fields]),
        email.strip().casefold() or None if isinstance(email, str) else None,
        _iso_date(record.get(DATE_OF_BIRTH)),
    )


def name_fields(match: Sequence[str]) -> tuple[str, ...]:
    """The fields of a `duplicates: match` list read as names: all but date of birth and e-mail."""
    return tuple(f for f in match if f not in (DATE_OF_BIRTH, EMAIL))


@dataclass(frozen=True)
class LivePeople:
    """The live records of an entity as the rule reads them, and what a plan needs of each beside:
    its id, key fields, metadata and match fields (kept while the collection itself is let go of)."""

    people: tuple[Person, ...]
    records: tuple[Mapping[str, Any], ...]


def live_people(records: Iterable[Mapping[str, Any]], match: Sequence[str], key_fields: Sequence[str]) -> LivePeople:
    """`records` as the rule reads them, each with its id, metadata, key and match fields kept."""
    names = name_fields(match)
    kept = ("id", "metadata", *key_fields, *match)
    listed = list(records)
    return LivePeople(tuple(person_of(r, names) for r in listed),
                      tuple({k: r[k] for k in kept if k in r} for r in listed))


def resemblance(new: Person, other: Person, threshold: float) -> tuple[tuple[str, ...], float] | None:
    """(the fields that agreed, the name score) when the rule calls `new` and `other` the same, else None.

    Without an equal e-mail or date of birth the rule cannot hold, so the names are not scored; with
    only the date equal, only a score at the threshold counts, so rapidfuzz may stop short of it."""
    email = new.email is not None and new.email == other.email
    born = new.born is not None and new.born == other.born
    if not (email or born):
        return None  # a swapped date counts only with an equal e-mail
    score = _score(new.names, other.names, 0.0 if email else threshold * 100 - _EPSILON)
    names = score >= threshold
    swapped = not born and email and other.born is not None and new.swapped == other.born
    if not ((born and (email or names)) or (email and names) or swapped):
        return None
    dates = (DATE_OF_BIRTH,) if born else (f"{DATE_OF_BIRTH} (day and month swapped)",) if swapped else ()
    return (*dates, *((EMAIL,) if email else ()), *(("names",) if names else ())), round(score, 2)


def _score(names: str, other: str, cutoff: float) -> float:
    """The names' similarity (0-1); 0 where either is empty or it falls below `cutoff` (in percent)."""
    return fuzz.ratio(names, other, score_cutoff=cutoff) / 100 if names and other else 0.0


class _Index:
    """People by date of birth and by e-mail: the only people the rule can call the same as a row.

    A row is compared one by one with the people of its e-mail (the rule may hold for them without
    similar names, or with a swapped date, which counts only with the e-mail); of the people of its
    date of birth only those whose names score at the threshold can be the same, and rapidfuzz finds
    them over the whole block in one call. Each candidate is then judged by `resemblance`.
    """

    def __init__(self, people: Sequence[Person] = ()) -> None:
        self.people: list[Person] = list(people)
        by_born: defaultdict[str | None, list[int]] = defaultdict(list)
        names: defaultdict[str | None, list[str]] = defaultdict(list)
        by_email: defaultdict[str | None, list[int]] = defaultdict(list)
        for at, (folded, email, born) in enumerate(self.people):  # `add`, without a call per person
            by_born[born].append(at)
            names[born].append(folded)
            by_email[email].append(at)
        for index in (by_born, names, by_email):
            index.pop(None, None)
        self._by_born: dict[str | None, list[int]] = dict(by_born)
        self._names: dict[str | None, list[str]] = dict(names)  # the names of `_by_born`'s people, in its order
        self._by_email: dict[str | None, list[int]] = dict(by_email)

    def add(self, person: Person) -> None:
        at = len(self.people)
        self.people.append(person)
        if person.born is not None:
            self._by_born.setdefault(person.born, []).append(at)
            self._names.setdefault(person.born, []).append(person.names)
        if person.email is not None:
            self._by_email.setdefault(person.email, []).append(at)

    def candidates(self, person: Person, threshold: float) -> list[int]:
        """The positions, in order, of the people the rule may call the same as `person`."""
        found = self._by_email.get(person.email, []) if person.email is not None else []
        block = self._names.get(person.born) if person.born is not None and person.names else None
        if block:
            born = self._by_born[person.born]
            hits = process.extract(person.names, block, scorer=fuzz.ratio, limit=None,
                                   score_cutoff=threshold * 100 - _EPSILON)
            if hits:
                return sorted({*found, *(born[index] for _, _, index in hits)})
        return found

    def best(self, person: Person, threshold: float, earlier: bool) -> Resemblance | None:
        best: tuple[int, tuple[str, ...], float] | None = None
        people = self.people
        for at in self.candidates(person, threshold):
            found = resemblance(person, people[at], threshold)
            if found is not None and (best is None or found[1] > best[2]):
                best = (at, *found)
        return None if best is None else Resemblance(best[0], earlier, best[1], best[2])


def find_duplicates(new: Sequence[Person], live: Sequence[Person], threshold: float) -> list[Resemblance | None]:
    """Per new row (in source order), its best match among `live`, else among the rows before it, else
    None. A live match wins over an earlier row: the live person is the one to decide about."""
    live_index = _Index(live)
    rows = _Index()
    found: list[Resemblance | None] = []
    for person in new:
        found.append(live_index.best(person, threshold, False) or rows.best(person, threshold, True))
        rows.add(person)
    return found
