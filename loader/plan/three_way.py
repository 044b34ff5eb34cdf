"""The three-way compare of one managed field: sheet S, live L, and W, the digest of the value the
loader last wrote (or last found equal to the sheet). Pure: values and digests in, a verdict out.

| case                         | keep (default)     | sheet  | platform           |
|------------------------------|--------------------|--------|--------------------|
| S = L                        | unchanged; W := L  | same   | same               |
| L = W, S != L                | update             | update | update             |
| L != W, S = W                | kept platform edit | update | kept platform edit |
| L != W, S != W, S != L       | conflict (held)    | update | kept platform edit |
| no W (no history), S != L    | update             | update | update             |

Set-like lists go element by element (an element is in S, in L, and in W or not; with three yes/no
answers a conflict cannot occur), so the sheet adding X while the platform added Y sends L + {X}
under `keep`. `custom_attributes` go label by label, each label with its own W.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from loader.source.equality import normalise, same, set_form


class Policy(StrEnum):
    """A mapping field's `on_platform_edit`: what wins when the platform changed the field."""

    KEEP = "keep"
    SHEET = "sheet"
    PLATFORM = "platform"


class Outcome(StrEnum):
    UPDATE = "update"
    KEPT = "kept platform edit"
    CONFLICT = "conflict"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class FieldVerdict:
    """What to do with one field. `send` is the value to write (UPDATE only); `written_after` is W
    once the plan is carried out (None: W stays as it is); `platform_edit` says L differs from W."""

    outcome: Outcome
    send: Any = None
    written_after: str | None = None
    platform_edit: bool = False


def compare_value(sheet: Any, live: Any, written: str | None, policy: Policy,
                  digest: Callable[[Any], str]) -> FieldVerdict:
    """The verdict for one scalar field; `digest(value)` is W's digest bound to this record and field."""
    if same(sheet, live):
        live_digest = digest(live)
        return FieldVerdict(Outcome.UNCHANGED, written_after=None if live_digest == written else live_digest,
                            platform_edit=written is not None and live_digest != written)
    if written is None or digest(live) == written:
        return FieldVerdict(Outcome.UPDATE, send=sheet, written_after=digest(sheet))
    if policy is Policy.SHEET:
        return FieldVerdict(Outcome.UPDATE, send=sheet, written_after=digest(sheet), platform_edit=True)
    if digest(sheet) == written or policy is Policy.PLATFORM:
        return FieldVerdict(Outcome.KEPT, platform_edit=True)
    return FieldVerdict(Outcome.CONFLICT, platform_edit=True)


@dataclass(frozen=True)
class SetVerdict:
    """What to do with a set-like list: the list to send (UPDATE), the elements added and removed by
    the sheet, the platform's element edits kept (added there, removed there), and W afterwards."""

    outcome: Outcome
    send: tuple[Any, ...] = ()
    added: tuple[Any, ...] = ()
    removed: tuple[Any, ...] = ()
    kept_added: tuple[Any, ...] = ()
    kept_removed: tuple[Any, ...] = ()
    written_after: frozenset[str] | None = None


def compare_set(sheet: Any, live: Any, written: frozenset[str] | None, policy: Policy,
                digest_element: Callable[[Any], str]) -> SetVerdict:
    """The verdict for a set-like list, element by element; `digest_element(item)` takes an item
    as `set_form` normalises it. Without W (no history) the sheet's set is sent as it is."""
    originals = {**_originals(live), **_originals(sheet)}
    in_sheet, in_live = set_form(sheet), set_form(live)
    final: set[Any] = set()
    kept_added: list[Any] = []
    kept_removed: list[Any] = []
    after: set[str] = set()
    for item in in_sheet | in_live:
        s, lv = item in in_sheet, item in in_live
        d = digest_element(item)
        w = lv if written is None else d in written  # no history: as if the loader wrote L
        if s == lv or lv == w or policy is Policy.SHEET:
            keep, mark = s, s  # the same, or the sheet changed, or the sheet wins: follow the sheet
        else:  # the platform changed this element since the loader wrote it: keep the platform's
            keep, mark = lv, w
            (kept_added if lv else kept_removed).append(originals[item])
        if keep:
            final.add(item)
        if mark:
            after.add(d)
    ordered = _ordered(final)
    outcome = Outcome.UNCHANGED if final == in_live else Outcome.UPDATE
    if outcome is Outcome.UNCHANGED and (kept_added or kept_removed):
        outcome = Outcome.KEPT
    return SetVerdict(outcome, tuple(originals[i] for i in ordered) if outcome is Outcome.UPDATE else (),
                      tuple(originals[i] for i in _ordered(final - in_live)),
                      tuple(originals[i] for i in _ordered(in_live - final)),
                      tuple(_sorted(kept_added)), tuple(_sorted(kept_removed)),
                      None if written is not None and frozenset(after) == written else frozenset(after))


@dataclass(frozen=True)
class LabelsVerdict:
    """What to do with `custom_attributes`: a verdict per label the sheet manages, and the map to
    send when any label is updated (labels not managed keep their live values; a label cleared in
    the sheet is removed)."""

    labels: Mapping[str, FieldVerdict] = field(default_factory=dict)
    send: Mapping[str, Any] | None = None


def compare_labels(sheet: Mapping[str, Any], live: Mapping[str, Any] | None, written: Mapping[str, str | None],
                   policy: Policy, digest_label: Callable[[str, Any], str]) -> LabelsVerdict:
    """The verdict per label; `written[label]` is that label's W (field `custom_attributes.<label>`)."""
    live = live or {}
    verdicts = {label: compare_value(value, live.get(label), written.get(label), policy,
                                     lambda v, label=label: digest_label(label, v))  # type: ignore[misc]
                for label, value in sorted(sheet.items())}
    updates = {label: v.send for label, v in verdicts.items() if v.outcome is Outcome.UPDATE}
    if not updates:
        return LabelsVerdict(verdicts, None)
    merged = dict(live)
    for label, value in updates.items():
        if normalise(value) is None:
            merged.pop(label, None)
        else:
            merged[label] = value
    return LabelsVerdict(verdicts, merged)


def history_is_behind(line_time: int | None, live_time: int | None, live_user: str | None,
                      own_users: frozenset[str]) -> bool:
    """Whether a live record shows a write of the loader that its history line does not know: the
    record was updated after the line's `metadata.updated`, by one of the loader's own service
    users. (An edit by anyone else is a platform edit, not a sign of a stale history.)"""
    if line_time is None or live_time is None or live_user is None:
        return False
    return live_time > line_time and live_user in own_users


ANOTHER_DATABASE_SHARE = 0.5
"""The service has no delete: a record the loader wrote stays live (retired at most). An id the
history recorded that a full fetch of its collection does not return means the records are not the
ones the history describes. More than half of them missing is not a few records moved out of
reach; it is a reset sandbox or a refreshed environment, and comparing against its W would report
every field as a platform edit. A minority missing is left to the plan to report record by record."""


def is_another_database(recorded: int, missing: int) -> bool:
    """Whether `missing` of `recorded` history ids absent live means the history is of another database."""
    return recorded > 0 and missing > recorded * ANOTHER_DATABASE_SHARE


def _originals(value: Any) -> dict[Any, Any]:
    if value is None:
        return {}
    items = value if isinstance(value, (list, tuple, set, frozenset)) else [value]
    return {normalise(v): v for v in items if normalise(v) is not None}


def _ordered(items: Iterable[Any]) -> list[Any]:
    return sorted(items, key=lambda i: str(i))


def _sorted(items: Iterable[Any]) -> list[Any]:
    return sorted(items, key=lambda i: str(normalise(i)))
