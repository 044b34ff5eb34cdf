"""Drafting a mapping file from a workbook's headers (`loader init`).

For each sheet (`loader.source.draft_sample`: its header row and a sample of its values): guess the
entity (unless given) from the headers and the sheet name, match columns to the entity's fields by
name (rapidfuzz over each field's name and a few words people use for it), propose `key` from the
entity profile (`loader.source.draft_key`: which column it reads), references for columns holding
codes of other entities, `pii: true` for personal data, value steps the sample rows call for
(`type: string` for codes stored as numbers, `split` for lists, `map` for status words), and list
the columns left unmatched as comments. `loader.source.draft_yaml.render_draft` writes the YAML text;
it validates as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from loader.profile import EntityProfile, Profile, Reference
from loader.source.draft_key import key_choice, repeated_values
from loader.source.draft_sample import Sample
from loader.source.draft_steps import is_number, reading_steps, separator
from loader.source.draft_words import (
    ENTITY_WORDS,
    PII_FIELDS,
    PII_WORDS,
    REF_WORDS,
    SYNONYMS,
)
from loader.source.entity_schemas import schema_of
from loader.words import plural

MATCH_THRESHOLD = 85.0  # rapidfuzz ratio (0-100) of normalised names; below it a column stays unmatched



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
    duplicates = _natural_key_duplicates(sample, fields, key)
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
    note = (f"no column matched {plural(len(missing), 'key field')} ({', '.join(missing)}); the key below is a "
            "stand-in: check it")
    return present or ((fields[0].name,) if fields else key), note


def _block_name(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_") or "block"


def _template_columns(f: DraftField) -> list[str]:
    template = f.spec.get("template")
    return re.findall(r"{([^{}]+)}", template) if isinstance(template, str) else []


def unique_key(
    sample: Sample, fields: list[DraftField], key: tuple[str, ...]
) -> tuple[list[DraftField], str | None, bool]:
    """The fields with the key field reading what `draft_key.key_choice` chooses, a note to show, and
    whether the user must choose the key (nothing is unique)."""
    by_name = {f.name: f for f in fields}
    if len(key) != 1 or key[0] not in by_name:
        return fields, None, False
    field_ = by_name[key[0]]
    choice = key_choice(sample, field_.column, field_.name)
    if choice is None:
        return fields, None, False
    if choice.template is not None:
        spec = {"template": choice.template, **{k: v for k, v in field_.spec.items() if k != "type"}}
    elif choice.column != field_.column:
        spec = {**field_.spec}
    else:
        return fields, choice.note, choice.unresolved
    chosen = DraftField(field_.name, choice.column, spec, field_.score, field_.note)
    return [chosen if f is field_ else f for f in fields], choice.note, choice.unresolved


def _natural_key_duplicates(sample: Sample, fields: list[DraftField], key: tuple[str, ...]) -> tuple[str, ...]:
    """The values the key's column repeats when the draft kept it as the natural key."""
    by_name = {f.name: f for f in fields}
    return repeated_values(sample, by_name[key[0]].column) if len(key) == 1 and key[0] in by_name else ()
