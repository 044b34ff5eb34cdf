"""The references of a drafted workbook that `loader pull` wrote, set from the ids it holds.

A pulled sheet's `parent.id` column holds the service's ids. The reference's first entity is only a
guess (a subject's parent may be a program, a course or a school); the pulled workbook's other
sheets say which records those ids are, so the draft names the entity they actually are, and
planning the draft against the environment it was pulled from proposes nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

from loader.profile import Profile
from loader.source.draft import DraftBlock, DraftField, is_pulled
from loader.source.draft_sample import Sample
from loader.source.readers import WHITESPACE


def pulled_ids_of(samples: Sequence[Sample], profile: Profile) -> dict[str, str]:
    """id -> entity over the sheets `loader pull` wrote (each named after its entity, with `id`)."""
    ids: dict[str, str] = {}
    for sample in samples:
        if sample.sheet is not None and is_pulled(sample, profile):
            ids.update((text, sample.sheet) for text in sample.filled.get("id", ()))
    return ids


def refs_by_pulled_ids(block: DraftBlock, sample: Sample, profile: Profile, ids: Mapping[str, str]) -> DraftBlock:
    """The block with each `ref ..., by: id` field pointed at the entity most of its ids are records
    of, and a note when its ids are records of several entities (one reference names one)."""
    references = dict(profile.entities[block.entity].references)
    fields: list[DraftField] = []
    notes = list(block.notes)
    for f in block.fields:
        allowed = references[f.name].entities if f.name in references else ()
        texts = (str(v).strip(WHITESPACE) for v in sample.columns.get(f.column, ()))
        found = Counter(ids[t] for t in texts if t in ids)
        kinds = [entity for entity, _ in found.most_common() if entity in allowed]
        if f.spec.get("by") != "id" or not kinds:
            fields.append(f)
            continue
        fields.append(replace(f, spec={**f.spec, "ref": kinds[0]}))
        if len(kinds) > 1:
            notes.append(f"{f.name} ← {f.column!r} holds ids of {', '.join(kinds)}; the reference names {kinds[0]}, "
                         "the most: map the rows of the others in a block of their own")
    return replace(block, fields=tuple(fields), notes=tuple(notes))
