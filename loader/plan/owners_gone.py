"""Records whose mapping file is gone: loaded by a block of a file the project no longer has, and
named by no block of the plan.

Renaming `handbook-2026.yaml` to `handbook-2027.yaml` without `formerly:` leaves the records the
old file loaded with an owner nobody plans: the records its sheet still names come up as an
ownership error, and those it dropped would vanish from every report. One warning per gone block
names them and the `formerly:` line that hands them to the block it became (which then lists them
as dropped).

Judged once over the whole plan, after every part is planned, so a plan made part by part says
the same as one made at once. Cheap when nothing is gone: only the owners each entity's snapshot
lists are looked at, and a line is read only for an entity with a gone owner.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from loader.findings import Finding
from loader.history.lines import Owner
from loader.history.store import History
from loader.plan.model import Plan
from loader.words import plural

SHOWN = 5  # the records named in a warning, at most


def owners_gone(plan: Plan, history: History, exists: Callable[[str], bool]) -> tuple[Finding, ...]:
    """One `owner-gone` warning per block of a mapping file that is neither in the plan nor on disk
    (`exists`: whether a mapping file is there), for the records of `history` only it loaded that no
    record of `plan` matches."""
    ours = _owners_planned(plan, history)
    files = {owner.file for owner in ours}
    found: list[Finding] = []
    for entity in history.snapshot.entities():
        tables, _ = history.snapshot.raw_items(entity)
        listed = tables.owners if tables is not None else _owners_of_lines(history, entity)
        gone = {o for o in listed if o not in ours and o.file not in files and not exists(o.file)}
        if gone:
            found += _warnings(plan, history, entity, frozenset(gone), ours)
    return tuple(found)


def _owners_planned(plan: Plan, history: History) -> frozenset[Owner]:
    """Every block of the plan under each name it had (its `formerly:` and the renames recorded)."""
    named: set[Owner] = set()
    for block in plan.blocks:
        named.add(Owner(block.mapping_file or block.source_file, block.name))
        if block.formerly is not None:
            named.add(Owner(*block.formerly))
    return history.head.former_names(frozenset(named))


def _owners_of_lines(history: History, entity: str) -> set[Owner]:
    return {mark.owner for line in history.snapshot.lines(entity) for mark in line.fields.values()}


def _warnings(plan: Plan, history: History, entity: str, gone: frozenset[Owner],
              ours: frozenset[Owner]) -> list[Finding]:
    """The warnings of `entity`'s records whose every owner is `gone` and that no record matches."""
    digester = history.digester
    matched = {digester.id_token(entity, r.live_id) for b in plan.blocks if b.entity == entity
               for r in b.records if r.live_id}
    by_owner: dict[Owner, list[str]] = {}
    for line in history.snapshot.lines(entity):
        owners = {mark.owner for mark in line.fields.values()}
        if not owners or not owners <= gone or owners & ours or line.live_id in matched:
            continue
        by_owner.setdefault(min(owners), []).append(_shown_key(line.key))
    return [_warning(entity, owner, names, digester.is_personal(entity)) for owner, names in sorted(by_owner.items())]


def _shown_key(token: str) -> str:
    """A key token as text: `K2`, `MATH / 2027` (a personal entity's token, a digest, is never shown)."""
    try:
        parts = json.loads(token)
    except ValueError:
        return token
    return " / ".join(str(part) for part in parts) if isinstance(parts, list) else str(parts)


def _warning(entity: str, owner: Owner, names: Iterable[str], personal: bool) -> Finding:
    listed = list(names)
    shown = "" if personal else f" ({', '.join(listed[:SHOWN])}{', …' if len(listed) > SHOWN else ''})"
    return Finding(
        "warning", "owner-gone",
        f"{plural(len(listed), f'{entity} record')}{shown} loaded by block {owner.block!r} of {owner.file}, a "
        f"mapping file this project no longer has, {'is' if len(listed) == 1 else 'are'} named by no block here: "
        f"if a block here is that block renamed or moved, add `formerly: {{file: {owner.file}, block: "
        f"{owner.block}}}` to it (it then lists {'it' if len(listed) == 1 else 'them'} as dropped)", None)
