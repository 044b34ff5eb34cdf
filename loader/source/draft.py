"""Drafting a mapping file from a workbook's headers (`loader init`).

For each sheet: find the header row, guess the entity (unless given) from the headers and the sheet
name, match columns to the entity's fields by name (rapidfuzz over each field's name and a few
words people use for it), propose `key` from the entity profile, references for columns holding
codes of other entities, `pii: true` for personal data, value steps the sample rows call for
(`type: string` for codes stored as numbers, `split` for lists, `map` for status words), and list
the columns left unmatched as comments. `loader.source.draft_yaml.render_draft` writes the YAML text;
it validates as written.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from loader.profile import EntityProfile, Profile, Reference
from loader.source.draft_steps import is_number, reading_steps, separator
from loader.source.draft_words import (
    ENTITY_WORDS,
    PII_FIELDS,
    PII_WORDS,
    REF_WORDS,
    SYNONYMS,
)
from loader.source.entity_schemas import schema_of
from loader.source.headers import find_header_row, folded
from loader.source.readers import WHITESPACE, SheetData, SheetRow, is_blank

MATCH_THRESHOLD = 85.0  # rapidfuzz ratio (0-100) of normalised names; below it a column stays unmatched
SAMPLE_ROWS = 200



def normalise(header: str) -> str:
    """`E-mail addr.` -> `email addr`, `Given name(s)` -> `given name`, `institutionCode` -> `institution code`."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", header)
    text = text.lower().replace("(s)", "")
    text = re.sub(r"[.\-'’]", "", text)
    text = re.sub(r"[^0-9a-z]+", " ", text)
    return text.strip()


@dataclass(frozen=True)
class ColumnMatch:
    column: str
    field: str
    score: float
    ref: str | None = None  # the entity a reference column names


@dataclass(frozen=True)
class DraftField:
    name: str
    column: str
    spec: Mapping[str, Any]  # the field spec besides `column`, in order
    score: float
    note: str | None = None


@dataclass(frozen=True)
class DraftBlock:
    name: str
    entity: str
    sheet: str | None
    header_row: int
    key: tuple[str, ...]
    fields: tuple[DraftField, ...]
    unmatched: tuple[str, ...]  # column names, in sheet order
    pii_unmatched: frozenset[str] = frozenset()
    numeric_unmatched: frozenset[str] = frozenset()  # columns holding numbers: `type: string` keeps them as typed
    notes: tuple[str, ...] = ()
    entity_guessed: bool = False
    custom_attributes: bool = False  # the entity takes custom attributes (unmatched columns could be some)
    custom: tuple[tuple[str, str], ...] = ()  # (label, column) of custom attributes a pulled sheet holds
    key_unresolved: bool = False  # no column nor pair of columns is unique: the user must choose the key
    duplicates: tuple[str, ...] = ()  # the natural key's few repeated values, each with its rows: errors to fix


@dataclass(frozen=True)
class Sample:
    """A sheet read for drafting: its header names and the values below them."""

    sheet: str | None
    header_row: int
    headers: tuple[str, ...]
    columns: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    unique: frozenset[str] = frozenset()  # the columns whose values are filled and distinct on every row
    rows: int = 0  # rows below the header
    filled: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # every row's text of the filled columns
    row_numbers: tuple[int, ...] = ()  # the sheet's row number of each row below the header


def sample_of(data: SheetData) -> Sample | None:
    """The header row (found as `header_row: auto` finds it) and up to SAMPLE_ROWS values per column."""
    header = find_header_row(data.rows)
    if header is None:
        return None
    names: list[tuple[int, str]] = [
        (i, folded(str(v))) for i, v in enumerate(header.values) if not is_blank(v)
    ]
    rows = [r for r in data.rows if r.number > header.number]
    below = rows[:SAMPLE_ROWS]
    columns = {
        name: tuple(r.values[i] for r in below if i < len(r.values) and not is_blank(r.values[i])) for i, name in names
    }
    filled = _filled_columns(rows, names)
    unique = frozenset(name for name, texts in filled.items() if len(set(texts)) == len(texts))
    return Sample(data.sheet, header.number, tuple(n for _, n in names), columns, unique, len(rows), filled,
                  tuple(r.number for r in rows))


def _filled_columns(rows: Sequence[SheetRow], names: Sequence[tuple[int, str]]) -> dict[str, tuple[str, ...]]:
    """The text of every row of each column filled on every row (the candidates for a key)."""
    filled = {}
    for i, name in names:
        texts = tuple(_text(r.values[i]) if i < len(r.values) and not is_blank(r.values[i]) else "" for r in rows)
        if rows and all(texts):
            filled[name] = texts
    return filled


def _text(value: Any) -> str:
    return str(value).strip(WHITESPACE)


def _vocabulary(entity: str, profile: EntityProfile) -> dict[str, list[tuple[str, str | None]]]:
    """field -> [(normalised phrase, referenced entity or None)]."""
    schema = schema_of(profile) or {}
    skip = set(profile.read_only) | set(profile.forbidden) | {"custom_attributes", "mapping"}
    references = dict(profile.references)
    words: dict[str, list[tuple[str, str | None]]] = {}
    for name in schema.get("properties", {}):
        if name in skip and name != "type":
            continue
        if name == "type" and entity != "credential":
            continue
        reference = references.get(name)
        if reference is not None:
            targets = list(reference.entities)
            phrases: list[tuple[str, str | None]] = [
                (normalise(w.format(target=t)), t) for t in targets for w in REF_WORDS
            ]
            if name not in ("parent",):
                phrases.insert(0, (normalise(name), targets[0] if targets else None))
            if name == "applicant_id":
                phrases += [(normalise(w), "applicant") for w in SYNONYMS["applicant"]["external_id"] if w != "id"]
            if name == "tags":
                phrases += [("tags", "tag"), ("tag", "tag")]
            words[name] = phrases
            continue
        synonyms = (*SYNONYMS.get(entity, {}).get(name, ()), *SYNONYMS["*"].get(name, ()))
        own: list[tuple[str, str | None]] = [(normalise(name), None)]
        words[name] = own + [(normalise(s.format(entity=entity)), None) for s in synonyms]
    return words


def match_columns(headers: Sequence[str], entity: str, profile: EntityProfile) -> list[ColumnMatch]:
    """Each column to at most one field and each field to at most one column, best scores first."""
    vocabulary = _vocabulary(entity, profile)
    candidates: list[ColumnMatch] = []
    for column in headers:
        wanted = normalise(column)
        if not wanted:
            continue
        for name, phrases in vocabulary.items():
            best, target = max(((fuzz.ratio(wanted, p), t) for p, t in phrases), key=lambda x: x[0])
            if best >= MATCH_THRESHOLD:
                candidates.append(ColumnMatch(column, name, best, target))
    order = {c: i for i, c in enumerate(headers)}
    candidates.sort(key=lambda m: (-m.score, order[m.column], m.field))
    used_columns: set[str] = set()
    used_fields: set[str] = set()
    chosen: list[ColumnMatch] = []
    for match in candidates:
        if match.column in used_columns or match.field in used_fields:
            continue
        used_columns.add(match.column)
        used_fields.add(match.field)
        chosen.append(match)
    return sorted(chosen, key=lambda m: order[m.column])


def draftable_entities(profile: Profile) -> list[str]:
    return [name for name, e in profile.entities.items() if e.schema and e.writable]


# A guess is taken only when the best entity scores at least GUESS_RATIO times the second and
# GUESS_MARGIN more (a score is the sum of the column matches, 1 for each full match, plus 1 when
# the entity's key is matched and 1.5 when the sheet is named after the entity).
GUESS_RATIO = 1.5
GUESS_MARGIN = 1.0


def rank_entities(sample: Sample, profile: Profile) -> list[tuple[str, float]]:
    """Every draftable entity with its score, best first (`guess_entity` says how it is scored)."""
    sheet = normalise(sample.sheet or "")
    scored: list[tuple[float, int, str]] = []
    for position, name in enumerate(draftable_entities(profile)):
        entity = profile.entities[name]
        matches = match_columns(sample.headers, name, entity)
        score = sum(m.score for m in matches) / 100
        matched = {m.field for m in matches}
        if set(entity.key) <= matched:
            score += 1.0
        if sheet and _names_entity(sheet, name):
            score += 1.5
        scored.append((score, -position, name))
    return [(name, score) for score, _, name in sorted(scored, reverse=True)]


def _names_entity(sheet: str, entity: str) -> bool:
    """True when the sheet's (normalised) name names the entity: its name, plural, or a word for it."""
    words = ENTITY_WORDS.get(entity, ())
    return max(fuzz.partial_ratio(entity, sheet), fuzz.ratio(entity + "s", sheet),
               *(fuzz.ratio(w, sheet) for w in words)) >= 85


def clear_guess(ranked: Sequence[tuple[str, float]]) -> str | None:
    """The best entity when it leads the second by a clear margin (GUESS_RATIO, GUESS_MARGIN), else None."""
    if not ranked or ranked[0][1] <= 0:
        return None
    best = ranked[0][1]
    second = ranked[1][1] if len(ranked) > 1 else 0.0
    return ranked[0][0] if best >= second * GUESS_RATIO and best - second >= GUESS_MARGIN else None


def guess_entity(sample: Sample, profile: Profile) -> str:
    """The entity whose fields the headers match best; the sheet's name and a matched key break ties."""
    return rank_entities(sample, profile)[0][0]


def _field_spec(
    name: str,
    match: ColumnMatch,
    schema: Mapping[str, Any],
    values: Sequence[Any],
    entity: str,
    references: Mapping[str, Reference],
    exact: bool = False,
) -> tuple[dict[str, Any] | None, str | None]:
    """The field's spec besides `column`; `exact` (a sheet `loader pull` wrote) adds no text steps,
    since its cells hold what the service holds, and reads `parent.id` by id."""
    prop: Mapping[str, Any] = schema.get("properties", {}).get(name, {})
    spec = _ref_spec(name, match, references, exact)
    if prop.get("type") == "array":
        spec["split"] = separator(values)
    steps, note = reading_steps(prop, values, exact, "ref" in spec)
    if steps is None:
        return None, note
    spec.update(steps)
    if name in PII_FIELDS.get(entity, ()):
        spec["pii"] = True
    return spec, note


def _ref_spec(name: str, match: ColumnMatch, references: Mapping[str, Reference], exact: bool) -> dict[str, Any]:
    """`ref` (and `by`) for a field naming another record: tags by name, a pulled `parent.id` by id."""
    if match.ref is None and name not in references:
        return {}
    target = match.ref or references[name].entities[0]
    if target == "tag":
        return {"ref": target, "by": "name"}
    if exact and match.column.endswith(".id"):
        return {"ref": target, "by": "id"}
    return {"ref": target}


CUSTOM_PREFIX = "custom_attributes."  # how `loader pull` heads a custom attribute's column


def is_pulled(sample: Sample, profile: Profile) -> bool:
    """True for a sheet `loader pull` wrote: named after an entity, with the service's `id` column."""
    return sample.sheet in profile.entities and "id" in sample.headers


def _looks_personal(column: str) -> bool:
    words = normalise(column).split()
    return any(w in PII_WORDS for w in words) or "name" in normalise(column)


def draft_block(sample: Sample, profile: Profile, entity: str | None = None, name: str | None = None) -> DraftBlock:
    guessed = entity is None
    entity = entity or guess_entity(sample, profile)
    entity_profile = profile.entities[entity]
    schema = schema_of(entity_profile) or {}
    pulled = is_pulled(sample, profile)
    headers = _own_headers(sample, entity, entity_profile, pulled)
    fields, notes = _draft_fields(sample, headers, entity, entity_profile, schema, pulled)
    key, key_stand_in = _stand_in_key(fields, tuple(entity_profile.key))
    notes += [key_stand_in] if key_stand_in else []
    fields, key_note, key_unresolved = unique_key(sample, fields, key)
    notes += [key_note] if key_note else []
    duplicates = natural_key_duplicates(sample, fields, key)
    has_custom = "custom_attributes" in schema.get("properties", {})
    unmatched = _unmatched(sample, headers, fields)
    return DraftBlock(
        name=name or _block_name(sample.sheet or entity),
        entity=entity,
        sheet=sample.sheet,
        header_row=sample.header_row,
        key=key,
        fields=tuple(fields),
        unmatched=unmatched,
        pii_unmatched=frozenset(c for c in unmatched if _looks_personal(c)),
        numeric_unmatched=frozenset(c for c in unmatched if any(is_number(v) for v in sample.columns.get(c, ()))),
        notes=tuple(notes),
        entity_guessed=guessed,
        custom_attributes=has_custom,
        custom=tuple((h[len(CUSTOM_PREFIX):], h) for h in sample.headers if h.startswith(CUSTOM_PREFIX))
        if pulled and has_custom else (),
        key_unresolved=key_unresolved,
        duplicates=duplicates,
    )


def _own_headers(sample: Sample, entity: str, entity_profile: EntityProfile, pulled: bool) -> list[str]:
    """The headers a block may map: all, but on a pulled sheet not the columns the service sets
    (read-only fields, custom attributes: those are drafted apart)."""
    if not pulled:
        return list(sample.headers)
    service_set = set(entity_profile.read_only) - ({"type"} if entity == "credential" else set())
    return [h for h in sample.headers
            if not (h.startswith(CUSTOM_PREFIX) or h in service_set or h.split(".")[0] in service_set)]


def _draft_fields(
    sample: Sample, headers: list[str], entity: str, entity_profile: EntityProfile, schema: Mapping[str, Any],
    pulled: bool,
) -> tuple[list[DraftField], list[str]]:
    """A drafted field per header matched to a field, and a note per match left out."""
    references = dict(entity_profile.references)
    fields: list[DraftField] = []
    notes: list[str] = []
    for match in match_columns(headers, entity, entity_profile):
        spec, note = _field_spec(match.field, match, schema, sample.columns.get(match.column, ()), entity, references,
                                 pulled)
        if spec is None:
            notes.append(f"{match.field} ← {match.column!r} left out: {note}")
            continue
        fields.append(DraftField(match.field, match.column, spec, match.score, note))
    return fields, notes


def _unmatched(sample: Sample, headers: list[str], fields: list[DraftField]) -> tuple[str, ...]:
    """The sheet's columns no field reads, but for those a pulled sheet leaves to the service."""
    used = {f.column for f in fields} | {c for f in fields for c in _template_columns(f)}
    left_out = set(sample.headers) - set(headers)
    return tuple(c for c in sample.headers if c not in used and c not in left_out)


def _stand_in_key(fields: list[DraftField], key: tuple[str, ...]) -> tuple[tuple[str, ...], str | None]:
    """The entity's key, or when no column matched part of it the mapped part of it (else the first
    field) and a note saying so: without its key a block does not validate."""
    mapped = {f.name for f in fields}
    missing = [k for k in key if k not in mapped]
    if not missing:
        return key, None
    present = tuple(k for k in key if k in mapped)
    note = f"no column matched key field(s) {', '.join(missing)}; the key below is a stand-in: check it"
    return present or ((fields[0].name,) if fields else key), note


def _block_name(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_") or "block"


def _template_columns(f: DraftField) -> list[str]:
    template = f.spec.get("template")
    return re.findall(r"{([^{}]+)}", template) if isinstance(template, str) else []


def unique_key(
    sample: Sample, fields: list[DraftField], key: tuple[str, ...]
) -> tuple[list[DraftField], str | None, bool]:
    """The fields with the key's column made unique: kept when its values are unique on every row;
    else the key field reads a unique column, or a template of two columns whose pairs are; else
    nothing is unique and the user must choose (the third value is True). Returns a note to show."""
    by_name = {f.name: f for f in fields}
    if len(key) != 1 or key[0] not in by_name or sample.rows < 2:
        return fields, None, False
    field_ = by_name[key[0]]
    column = field_.column
    if column in sample.unique:
        return fields, None, False
    texts = sample.filled.get(column)
    if texts is not None and not most_repeat(texts):
        few = f"the column {column!r} of key field {field_.name} repeats only a few values"
        return fields, f"{few}: keyed on it, the natural key; fix the repeated values (init names them)", False
    repeats = f"the column {column!r} of key field {field_.name} repeats"
    if texts is not None:
        repeats += f" most of its values ({len(set(texts))} values on {len(texts)} rows, one row per offering?)"
    singles = [c for c in sample.headers if c in sample.unique]
    pairs = [(column, other) for other, others in sample.filled.items() if texts is not None and other != column
             and len(set(zip(texts, others, strict=True))) == sample.rows]
    if singles:
        spec: dict[str, Any] = {**field_.spec}
        chosen = DraftField(field_.name, singles[0], spec, field_.score, field_.note)
        note = f"{repeats}; keyed on {singles[0]!r}, whose values are unique: check it"
    elif pairs:
        first, second = pairs[0]
        spec = {"template": f"{{{first}}}-{{{second}}}",
                **{k: v for k, v in field_.spec.items() if k != "type"}}
        chosen = DraftField(field_.name, "", spec, field_.score, field_.note)
        note = f"{repeats}; keyed on the template {{{first}}}-{{{second}}}, whose values are unique: check it"
    else:
        return fields, f"CHOOSE THE KEY: {repeats} and no column or pair of columns is unique", True
    return [chosen if f is field_ else f for f in fields], note, False


# A key column keeps the natural key unless most of its values repeat (a catalogue of one row per
# offering): then a few repeats are mistakes in the data, not a sign of another key.
MOST_REPEAT = 0.5


def most_repeat(texts: Sequence[str]) -> bool:
    """True when more than MOST_REPEAT of the distinct values occur on several rows."""
    counts = Counter(texts)
    repeated = sum(1 for n in counts.values() if n > 1)
    return bool(counts) and repeated > MOST_REPEAT * len(counts)


SHOWN_DUPLICATES = 5  # repeated values named one by one; the rest are counted


def natural_key_duplicates(sample: Sample, fields: list[DraftField], key: tuple[str, ...]) -> tuple[str, ...]:
    """The values the key's column repeats when the draft kept it as the natural key (few repeat):
    each as "'CODE' on rows 5 and 41", the first SHOWN_DUPLICATES and a count of the rest."""
    by_name = {f.name: f for f in fields}
    if len(key) != 1 or key[0] not in by_name:
        return ()
    texts = sample.filled.get(by_name[key[0]].column)
    if texts is None or most_repeat(texts) or len(sample.row_numbers) != len(texts):
        return ()
    rows: dict[str, list[int]] = {}
    for text, number in zip(texts, sample.row_numbers, strict=True):
        rows.setdefault(text, []).append(number)
    repeated = [(text, numbers) for text, numbers in rows.items() if len(numbers) > 1]
    shown = [f"{text!r} on rows {', '.join(map(str, numbers[:-1]))} and {numbers[-1]}"
             for text, numbers in repeated[:SHOWN_DUPLICATES]]
    rest = len(repeated) - len(shown)
    return (*shown, f"and {rest} more") if rest else tuple(shown)
